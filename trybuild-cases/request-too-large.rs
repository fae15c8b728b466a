mod gentools {
    proto_ai_tools::ai_tools!("request-too-large.proto");
}

fn main() {}
