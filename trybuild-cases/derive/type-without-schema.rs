use proto_ai_tools::ToolInput;

#[derive(serde::Deserialize, ToolInput)]
struct Wait {
    how_long: std::time::Duration,
}

fn main() {}
