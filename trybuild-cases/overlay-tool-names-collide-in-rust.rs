// Two tools that become the same Rust name, the second named by the overlay:
// the error is at the overlay's line.
mod gentools {
    proto_ai_tools::ai_tools!(
        "overlay-tool-names-collide-in-rust.proto",
        overlay = "overlay-tool-names-collide-in-rust.toml"
    );
}

fn main() {}
