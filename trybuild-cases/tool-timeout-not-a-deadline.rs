// A tool's own deadline is more than zero and at most a day.
mod gentools {
    proto_ai_tools::ai_tools!("tool-timeout-not-a-deadline.proto");
}

fn main() {}
