mod gentools {
    ai_tools::ai_tools!("unannotated.proto", overlay = "overlay-located-diagnostics.toml");
}

fn main() {}
