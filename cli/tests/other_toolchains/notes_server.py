"""The notes service in Python, on the code grpcio-tools generated from
proto/notes/v1/notes.proto and the annotation protos that
`ai-tools protos --out` wrote (cli/tests/other_toolchains.rs).

Usage: notes_server.py GENERATED_DIR
Prints `TOOL <name>` (the method's rpc_tool, read through the generated
annotation module) and `PORT <n>` on stdout, then serves CreateNote on
127.0.0.1 until stdin closes: the note gets a fresh UUID and the text
back with what the server saw of the skipped `trace` field.
"""

import sys
import uuid
from concurrent import futures

sys.path.insert(0, sys.argv[1])

import grpc  # noqa: E402
from ai.context.v1 import annotations_pb2  # noqa: E402
from notes.v1 import notes_pb2, notes_pb2_grpc  # noqa: E402


class Notes(notes_pb2_grpc.NotesServiceServicer):
    def CreateNote(self, request, context):
        return notes_pb2.Note(
            id=str(uuid.uuid4()),
            text=f"{request.text} (stored by grpcio; trace={request.trace!r})",
        )


def main() -> int:
    method = notes_pb2.DESCRIPTOR.services_by_name["NotesService"].methods_by_name["CreateNote"]
    print(f"TOOL {method.GetOptions().Extensions[annotations_pb2.rpc_tool].name}", flush=True)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    notes_pb2_grpc.add_NotesServiceServicer_to_server(Notes(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(f"PORT {port}", flush=True)
    sys.stdin.read()
    server.stop(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
