// A method without side effects cannot be destructive: the hints would
// contradict each other in every MCP host.
mod gentools {
    proto_ai_tools::ai_tools!("read-only-and-destructive.proto");
}

fn main() {}
