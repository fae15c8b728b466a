use proto_ai_tools::ToolInput;

#[derive(serde::Deserialize, ToolInput)]
#[serde(tag = "type")]
enum Action {
    Webhook { url: String },
    Email { to: String },
}

fn main() {}
