mod gentools {
    proto_ai_tools::ai_tools!("alias-prefix-on-non-string-field.proto");
}

fn main() {}
