mod gentools {
    proto_ai_tools::ai_tools!(proto_path);
}

fn main() {}
