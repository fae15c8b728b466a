// `ai.context.v1.rpc_tool` and `ai.tools.v1.rpc_tool` are one annotation
// under two names (and numbers): a method carries one of them.
mod gentools {
    proto_ai_tools::ai_tools!("both-rpc-tool-options.proto");
}

fn main() {}
