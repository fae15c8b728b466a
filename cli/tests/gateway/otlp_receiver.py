"""An OTLP/gRPC trace receiver on the official protos (PyPI's
opentelemetry-proto) and grpcio: what a collector receives from the
`ai-tools` gateway.

Usage: otlp_receiver.py OUT
Serves opentelemetry.proto.collector.trace.v1.TraceService on 127.0.0.1,
prints `PORT <n>` on stdout, and appends one JSON line per span received
to OUT: its trace id, span id and parent span id (hex), name, kind and
attributes. Runs until stdin closes.
"""

import json
import sys
from concurrent import futures

import grpc
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.trace.v1 import trace_pb2


def value_of(any_value):
    """An AnyValue as plain JSON."""
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind in ("array_value", "kvlist_value"):
        return json_format.MessageToDict(getattr(any_value, kind))
    return getattr(any_value, kind)


class Receiver(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, out):
        self.out = out

    def Export(self, request, context):
        with open(self.out, "a", encoding="utf-8") as out:
            for resource_spans in request.resource_spans:
                resource = {a.key: value_of(a.value) for a in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        out.write(json.dumps({
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent_span_id": span.parent_span_id.hex(),
                            "name": span.name,
                            "kind": trace_pb2.Span.SpanKind.Name(span.kind),
                            "status": trace_pb2.Status.StatusCode.Name(span.status.code),
                            "attributes": {a.key: value_of(a.value) for a in span.attributes},
                            "service": resource.get("service.name"),
                        }) + "\n")
        return trace_service_pb2.ExportTraceServiceResponse()


def main() -> int:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Receiver(sys.argv[1]), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(f"PORT {port}", flush=True)
    sys.stdin.read()
    server.stop(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
