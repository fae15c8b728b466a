mod gentools {
    proto_ai_tools::ai_tools!("option-field-typo.proto");
}

fn main() {}
