mod gentools {
    proto_ai_tools::ai_tools!("duplicate-tool-name.proto");
}

fn main() {}
