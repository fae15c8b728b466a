// An overlay that is not TOML: the error is at its line and column.
mod gentools {
    proto_ai_tools::ai_tools!("pass/unannotated.proto", overlay = "overlay-syntax-error.toml");
}

fn main() {}
