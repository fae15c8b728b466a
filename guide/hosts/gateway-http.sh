ai-tools mcp --grpc http://127.0.0.1:50051 \
  --proto /path/to/project/proto/links/v1/links.proto -I /path/to/project/proto \
  --http 127.0.0.1:8080
