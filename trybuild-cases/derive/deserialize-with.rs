use proto_ai_tools::ToolInput;

fn parse<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    <u32 as serde::Deserialize>::deserialize(d)
}

#[derive(serde::Deserialize, ToolInput)]
struct Input {
    #[serde(deserialize_with = "parse")]
    count: u32,
}

fn main() {}
