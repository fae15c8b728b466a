// A key the overlay does not know is an error at its line.
mod gentools {
    ai_tools::ai_tools!("pass/unannotated.proto", overlay = "overlay-invalid.toml");
}

fn main() {}
