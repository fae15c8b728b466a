// Each example of a tool is checked against the tool's schema: a width
// below zero does not fit a `uint32`.
mod gentools {
    proto_ai_tools::ai_tools!("tool-example-does-not-fit.proto");
}

fn main() {}
