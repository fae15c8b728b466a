// An overlay's `timeout` is protojson Duration text; anything else is
// reported at the value in the overlay.
mod gentools {
    proto_ai_tools::ai_tools!("pass/unannotated.proto", overlay = "overlay-timeout-invalid.toml");
}

fn main() {}
