// Selectors that match nothing: each is an error naming the closest match.
mod gentools {
    proto_ai_tools::ai_tools!("pass/unannotated.proto", overlay = "overlay-selector-not-found.toml");
}

fn main() {}
