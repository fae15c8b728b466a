mod gentools {
    proto_ai_tools::ai_tools!("unresolved-import.proto");
}

fn main() {}
