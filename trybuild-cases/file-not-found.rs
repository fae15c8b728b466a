mod gentools {
    proto_ai_tools::ai_tools!("missing/service.proto");
}

fn main() {}
