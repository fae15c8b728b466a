mod gentools {
    ai_tools::ai_tools!("unresolved-import.proto");
}

fn main() {}
