"""A Python grpcio server of googleapis' google.longrunning.Operations, with
grpcio-reflection: an independent gRPC stack for the `ai-tools` gateway.

Usage: operations_server.py DESCRIPTOR_SET [TRACEPARENT_LOG]
Loads the encoded FileDescriptorSet (operations.proto and its imports),
serves ListOperations (one operation, named by a fresh UUID) and
GetOperation (that operation, else NOT_FOUND) on 127.0.0.1, prints
`PORT <n>` on stdout, and runs until stdin closes. With TRACEPARENT_LOG,
appends a line per call to it: the method and the `traceparent` metadata
the call carried (`-` without one).
"""

import sys
import uuid
from concurrent import futures

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from grpc_reflection.v1alpha import reflection

SERVICE = "google.longrunning.Operations"


def main() -> int:
    with open(sys.argv[1], "rb") as f:
        files = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    cls = lambda name: message_factory.GetMessageClass(pool.FindMessageTypeByName(name))
    Operation = cls("google.longrunning.Operation")
    ListRequest = cls("google.longrunning.ListOperationsRequest")
    ListResponse = cls("google.longrunning.ListOperationsResponse")
    GetRequest = cls("google.longrunning.GetOperationRequest")
    name = str(uuid.uuid4())

    def logged(method, context):
        if len(sys.argv) > 2:
            sent = dict(context.invocation_metadata()).get("traceparent", "-")
            with open(sys.argv[2], "a", encoding="utf-8") as log:
                log.write(f"{method} {sent}\n")

    def list_operations(request, context):
        logged("ListOperations", context)
        return ListResponse(operations=[Operation(name=name, done=False)])

    def get_operation(request, context):
        logged("GetOperation", context)
        if request.name != name:
            context.abort(grpc.StatusCode.NOT_FOUND, f"no operation {request.name}")
        return Operation(name=name, done=True)

    handlers = {
        "ListOperations": grpc.unary_unary_rpc_method_handler(
            list_operations,
            request_deserializer=ListRequest.FromString,
            response_serializer=ListResponse.SerializeToString,
        ),
        "GetOperation": grpc.unary_unary_rpc_method_handler(
            get_operation,
            request_deserializer=GetRequest.FromString,
            response_serializer=Operation.SerializeToString,
        ),
    }
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    reflection.enable_server_reflection((SERVICE, reflection.SERVICE_NAME), server, pool=pool)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(f"PORT {port}", flush=True)
    sys.stdin.read()
    server.stop(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
