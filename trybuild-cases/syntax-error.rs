mod gentools {
    ai_tools::ai_tools!("syntax-error.proto");
}

fn main() {}
