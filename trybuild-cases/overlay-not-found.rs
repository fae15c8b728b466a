// The overlay file is looked for beside Cargo.toml (and the invoking file).
mod gentools {
    proto_ai_tools::ai_tools!("pass/unannotated.proto", overlay = "no-such.tools.toml");
}

fn main() {}
