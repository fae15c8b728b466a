use proto_ai_tools::ToolInput;

#[derive(serde::Deserialize, ToolInput)]
struct Open {
    #[tool(alias_prefix = "link")]
    link_id: u64,
}

fn main() {}
