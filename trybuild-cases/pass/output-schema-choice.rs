// `rpc_tool.output_schema` reaches the generated tools as written.
mod gentools {
    proto_ai_tools::ai_tools!("output-schema-choice.proto");
}

fn main() {
    assert_eq!(gentools::ALWAYS.output_schema, Some(true));
    assert_eq!(gentools::NEVER.output_schema, Some(false));
    assert_eq!(gentools::DEFAULT.output_schema, None);
}
