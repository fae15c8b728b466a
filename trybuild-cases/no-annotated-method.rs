mod gentools {
    proto_ai_tools::ai_tools!("no-annotated-method.proto");
}

fn main() {}
