mod gentools {
    proto_ai_tools::ai_tools!("unknown-type.proto");
}

fn main() {}
