mod gentools {
    proto_ai_tools::ai_tools!("request-too-deep.proto");
}

fn main() {}
