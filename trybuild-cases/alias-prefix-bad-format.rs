mod gentools {
    proto_ai_tools::ai_tools!("alias-prefix-bad-format.proto");
}

fn main() {}
