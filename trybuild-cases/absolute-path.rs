mod gentools {
    proto_ai_tools::ai_tools!("/service.proto");
}

fn main() {}
