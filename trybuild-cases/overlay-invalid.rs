// A key the overlay does not know is an error at its line.
mod gentools {
    proto_ai_tools::ai_tools!("pass/unannotated.proto", overlay = "overlay-invalid.toml");
}

fn main() {}
