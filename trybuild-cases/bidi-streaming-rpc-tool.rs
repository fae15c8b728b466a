// A bidirectional-streaming RPC cannot be a tool: a model sends one request.
mod gentools {
    proto_ai_tools::ai_tools!("bidi-streaming-rpc-tool.proto");
}

fn main() {}
