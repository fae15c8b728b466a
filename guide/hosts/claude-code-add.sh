# over stdio: Claude Code starts the gateway itself (everything after -- is its command line)
claude mcp add --transport stdio --scope project links -- ai-tools mcp --grpc http://127.0.0.1:50051 --proto /path/to/project/proto/links/v1/links.proto -I /path/to/project/proto --stdio
# over HTTP: the gateway runs on its own (gateway-http.sh)
claude mcp add --transport http --scope project links http://127.0.0.1:8080/mcp
