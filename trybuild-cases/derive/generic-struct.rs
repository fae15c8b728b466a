use proto_ai_tools::ToolInput;

#[derive(serde::Deserialize, ToolInput)]
struct Page<T> {
    items: Vec<T>,
}

fn main() {}
