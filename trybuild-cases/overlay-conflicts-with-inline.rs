// An annotation given inline and in the overlay: one place only.
mod gentools {
    proto_ai_tools::ai_tools!("pass/beside.proto", overlay = "overlay-conflicts-with-inline.toml");
}

fn main() {}
