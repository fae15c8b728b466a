use proto_ai_tools::ToolInput;

#[derive(serde::Deserialize, ToolInput)]
enum Target {
    Nowhere,
    Point(f64, f64),
    Named { name: String },
}

fn main() {}
