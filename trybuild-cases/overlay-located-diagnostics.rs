mod gentools {
    proto_ai_tools::ai_tools!("pass/unannotated.proto", overlay = "overlay-located-diagnostics.toml");
}

fn main() {}
