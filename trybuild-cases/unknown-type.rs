mod gentools {
    ai_tools::ai_tools!("unknown-type.proto");
}

fn main() {}
