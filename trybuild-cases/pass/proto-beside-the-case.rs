// A proto next to the invoking file is found even though trybuild builds the
// case in a generated crate whose manifest directory holds no proto.
mod gentools {
    proto_ai_tools::ai_tools!("beside.proto");
}

fn main() {
    let tools = gentools::all_tools();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "ping");
    assert!(tools[0].parameters().contains("\"text\""));
}
