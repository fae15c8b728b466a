use proto_ai_tools::ToolInput;

#[derive(serde::Deserialize, ToolInput)]
struct Open {
    #[tool(alias_prefix = "Link-Id")]
    link_id: String,
}

fn main() {}
