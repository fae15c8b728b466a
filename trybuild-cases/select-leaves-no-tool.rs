// A selection that leaves no tool is an error: here the include keeps the
// workflow steps, and none of them is read-only.
mod links {
    proto_ai_tools::ai_tools!(
        "proto/links/v1/links.proto",
        include = ["workflow_steps_*"],
        read_only = true
    );
}

fn main() {}
