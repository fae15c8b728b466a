ai-tools mcp --grpc http://127.0.0.1:50051 \
  --proto /path/to/project/proto/links/v1/links.proto -I /path/to/project/proto \
  --http 0.0.0.0:8080 \
  --oauth-issuer https://auth.example.com \
  --oauth-audience https://tools.example.com/mcp \
  --required-scope mcp:use
