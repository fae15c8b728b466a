mod gentools {
    ai_tools::ai_tools!("streaming-rpc-tool.proto");
}

fn main() {}
