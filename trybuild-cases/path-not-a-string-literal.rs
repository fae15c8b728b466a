mod gentools {
    ai_tools::ai_tools!(proto_path);
}

fn main() {}
