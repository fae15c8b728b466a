mod gentools {
    ai_tools::ai_tools!("/service.proto");
}

fn main() {}
