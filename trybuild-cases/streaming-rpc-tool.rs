mod gentools {
    proto_ai_tools::ai_tools!("streaming-rpc-tool.proto");
}

fn main() {}
