"""A Python grpcio backend that logs the metadata of every call it receives:
the gRPC server behind the gateway in tests/tests/oauth.rs, an independent
gRPC stack that reports what reached it.

Usage: backend.py DESCRIPTOR_SET SERVICE [SERVICE ...]

Loads the encoded FileDescriptorSet (the services' files and their imports)
and serves every unary method of each named service on 127.0.0.1: each call
is answered with its response message's defaults (an empty message, which is
a valid answer to every method). Prints `PORT <n>` on stdout once it
listens, then one JSON line per call received, before the call is answered:

    {"method": "/links.v1.LinksService/ListLinks",
     "metadata": [["authorization", "Bearer ..."], ["x-user-id", "alice"], ...],
     "request": {...the request as proto JSON...}}

Metadata is every entry the call carried, in order, as grpcio hands it to
the server (lowercase keys; a `-bin` value base64-encoded). Runs until stdin
closes.
"""

import base64
import json
import sys
import threading
from concurrent import futures

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

_print_lock = threading.Lock()


def say(value: object) -> None:
    line = json.dumps(value, separators=(",", ":"))
    with _print_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def metadata_of(context: grpc.ServicerContext) -> list[list[str]]:
    entries = []
    for key, value in context.invocation_metadata():
        if isinstance(value, bytes):
            value = base64.b64encode(value).decode("ascii")
        entries.append([key, value])
    return entries


def handler_for(full_name: str, request_class, response_class):
    def answer(request, context):
        say(
            {
                "method": full_name,
                "metadata": metadata_of(context),
                "request": json_format.MessageToDict(request, preserving_proto_field_name=True),
            }
        )
        return response_class()

    return grpc.unary_unary_rpc_method_handler(
        answer,
        request_deserializer=request_class.FromString,
        response_serializer=response_class.SerializeToString,
    )


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], "rb") as f:
        files = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    generic = []
    for name in sys.argv[2:]:
        service = pool.FindServiceByName(name)
        handlers = {}
        for method in service.methods:
            if method.client_streaming or method.server_streaming:
                continue
            handlers[method.name] = handler_for(
                f"/{service.full_name}/{method.name}",
                message_factory.GetMessageClass(method.input_type),
                message_factory.GetMessageClass(method.output_type),
            )
        generic.append(grpc.method_handlers_generic_handler(service.full_name, handlers))
    server.add_generic_rpc_handlers(tuple(generic))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    say_port = f"PORT {port}"
    with _print_lock:
        print(say_port, flush=True)
    try:
        sys.stdin.read()
    except KeyboardInterrupt:
        pass
    server.stop(grace=None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
