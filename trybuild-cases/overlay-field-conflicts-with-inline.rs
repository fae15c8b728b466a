// A field annotated inline (`tool_field`) and in the overlay: one place only.
mod gentools {
    proto_ai_tools::ai_tools!(
        "overlay-field-conflicts-with-inline.proto",
        overlay = "overlay-field-conflicts-with-inline.toml"
    );
}

fn main() {}
