//! Prints the tool definitions that `ai_tools!` generates from the bundled
//! example proto, `proto/links/v1/links.proto`.
//!
//! Run with `cargo run -p proto-ai-tools --example quickstart` (the proto is the
//! workspace's `proto/`, which the macro finds from this crate up).

mod gentools {
    proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
}

fn main() {
    for tool in gentools::all_tools() {
        println!("{} (strict: {})", tool.name, tool.strict);
        println!("  {}", tool.description);
        println!(
            "  rpc:        /{}/{}",
            tool.method.service, tool.method.method
        );
        println!("  parameters: {}", tool.parameters());
        if let Some(prefix) = tool.output_prefix {
            println!("  returns ids aliased as `{prefix}-N`");
        }
        println!();
    }
}
