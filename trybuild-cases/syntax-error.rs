mod gentools {
    proto_ai_tools::ai_tools!("syntax-error.proto");
}

fn main() {}
