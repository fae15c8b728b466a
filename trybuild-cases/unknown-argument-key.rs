mod gentools {
    proto_ai_tools::ai_tools!("syntax-error.proto", include_dirs = ["proto"]);
}

fn main() {}
