# the web UI, starting the gateway over stdio itself (Inspector flags before --, the gateway's command line after)
npx @modelcontextprotocol/inspector -- ai-tools mcp --grpc http://127.0.0.1:50051 --proto /path/to/project/proto/links/v1/links.proto -I /path/to/project/proto --stdio
# the CLI mode: each invocation starts a new gateway process
npx @modelcontextprotocol/inspector --cli --method tools/list -- ai-tools mcp --grpc http://127.0.0.1:50051 --proto /path/to/project/proto/links/v1/links.proto -I /path/to/project/proto --stdio
# aliases that outlive the process: both invocations keep them in the same Redis
npx @modelcontextprotocol/inspector --cli --method tools/call --tool-arg destination=https://example.com/spring --tool-name links_create -- ai-tools mcp --grpc http://127.0.0.1:50051 --proto /path/to/project/proto/links/v1/links.proto -I /path/to/project/proto --stdio --redis redis://127.0.0.1:6379
npx @modelcontextprotocol/inspector --cli --method tools/call --tool-arg link_id=link-1 name=Spring --tool-name links_update -- ai-tools mcp --grpc http://127.0.0.1:50051 --proto /path/to/project/proto/links/v1/links.proto -I /path/to/project/proto --stdio --redis redis://127.0.0.1:6379
