mod gentools {
    proto_ai_tools::ai_tools!("empty-tool-description.proto");
}

fn main() {}
