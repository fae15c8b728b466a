"""A Python grpcio server (gRPC C-core) that requires a client certificate:
the server behind the TLS error tests of tests/tests/tls.rs and
cli/tests/tls.rs. C-core ends a connection whose client certificate is
missing or untrusted without a TLS alert, unlike rustls.

Usage: grpcio_mtls_server.py DIR

DIR holds server.pem and server.key (its certificate for localhost) and
ca.pem (the CA whose client certificates it accepts). Serves reflection
only, on 127.0.0.1; prints `PORT <n>` on stdout once it listens; runs until
stdin closes.
"""

import sys
from concurrent import futures
from pathlib import Path

import grpc
from grpc_reflection.v1alpha import reflection


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    folder = Path(sys.argv[1])
    credentials = grpc.ssl_server_credentials(
        [((folder / "server.key").read_bytes(), (folder / "server.pem").read_bytes())],
        root_certificates=(folder / "ca.pem").read_bytes(),
        require_client_auth=True,
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    reflection.enable_server_reflection([reflection.SERVICE_NAME], server)
    port = server.add_secure_port("127.0.0.1:0", credentials)
    server.start()
    print(f"PORT {port}", flush=True)
    sys.stdin.read()
    server.stop(None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
