mod gentools {
    proto_ai_tools::ai_tools!("bad-tool-name.proto");
}

fn main() {}
