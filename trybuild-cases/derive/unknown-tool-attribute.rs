use proto_ai_tools::ToolInput;

#[derive(serde::Deserialize, ToolInput)]
struct Search {
    #[tool(descripton = "What to look for.")]
    query: String,
    #[tool(usage_notes = "a", usage_notes = "b")]
    page: u32,
}

fn main() {}
