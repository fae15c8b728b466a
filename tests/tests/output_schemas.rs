//! Output schemas as an MCP server lists them: off unless asked for, the
//! tool's own [`Tool::output_schema`] when on, left out past the size cap,
//! and a tool's own `rpc_tool.output_schema` (here from an overlay) over
//! both. That every result validates against its schema is shown with real
//! checkers by `cli/tests/output_schemas.rs`.
//!
//! [`Tool::output_schema`]: proto_ai_tools::toolkit::Tool::output_schema

use std::sync::Arc;

use proto_ai_tools::transport::InProcessTransport;
use proto_ai_tools::{AliasManager, NativeTool, ToolInput, Toolkit};
use proto_ai_tools_mcp::{DEFAULT_MAX_OUTPUT_SCHEMA_BYTES, McpServer};
use proto_ai_tools_tests::tools::{feed, links};
use serde_json::Value;

/// Shout it.
#[derive(serde::Deserialize, ToolInput)]
struct ShoutInput {
    /// What to shout.
    text: String,
}

fn toolkit() -> Toolkit {
    let shout =
        NativeTool::new::<ShoutInput, _, _>("shout", "Shout.", |_, input: ShoutInput| async move {
            input.text.to_uppercase()
        });
    let aliases = Arc::new(AliasManager::new());
    Toolkit::builder()
        .alias_manager(aliases.clone())
        .generated(links::Executor::with_alias_manager(
            InProcessTransport::new(),
            aliases.clone(),
        ))
        .generated(feed::Executor::with_alias_manager(
            InProcessTransport::new(),
            aliases,
        ))
        .native(shout)
        .build()
        .unwrap()
}

/// The bytes of `tool`'s output schema as a server of the default host
/// profile lists it.
fn schema_bytes(tool: &proto_ai_tools::toolkit::Tool) -> usize {
    let schema = tool.output_schema_for_host(proto_ai_tools::schema::HostProfile::default());
    serde_json::to_string(&schema.unwrap()).unwrap().len()
}

#[test]
fn no_tool_lists_an_output_schema_unless_the_server_asks() {
    let tools = McpServer::from_toolkit(toolkit()).tools().unwrap();
    assert!(tools.iter().all(|t| t.output_schema.is_none()));
}

#[test]
fn each_generated_tool_lists_its_own_output_schema_and_a_native_tool_none() {
    let toolkit = toolkit();
    let listed = McpServer::from_toolkit(toolkit)
        .with_output_schemas(true)
        .tools()
        .unwrap();
    let toolkit = self::toolkit();
    for tool in toolkit.tools() {
        let entry = listed.iter().find(|t| t.name == tool.name()).unwrap();
        let listed_schema = entry
            .output_schema
            .as_ref()
            .map(|s| Value::Object((**s).clone()));
        // As the server's host profile (JavaScript by default) takes it.
        let own = tool.output_schema_for_host(proto_ai_tools::schema::HostProfile::default());
        assert_eq!(listed_schema, own, "{}", tool.name());
        if tool.native().is_some() {
            assert!(listed_schema.is_none());
        } else {
            let schema = listed_schema.unwrap();
            assert_eq!(schema["type"], "object", "{}", tool.name());
            assert!(schema_bytes(tool) <= DEFAULT_MAX_OUTPUT_SCHEMA_BYTES);
        }
    }
    // A server-streaming method's result collects its messages.
    let stream = toolkit
        .tools()
        .iter()
        .find(|t| {
            t.agent_tool()
                .is_some_and(|a| feed::all_tools().contains(&a))
        })
        .unwrap();
    let schema = stream.output_schema().unwrap();
    assert_eq!(
        schema["required"],
        serde_json::json!(["messages"]),
        "{}",
        stream.name()
    );
}

#[test]
fn a_schema_longer_than_the_cap_is_left_out_and_one_at_the_cap_is_listed() {
    let toolkit = toolkit();
    let create = toolkit.get("links_create").unwrap();
    let at_cap = schema_bytes(create);
    let listed = |max: usize| {
        McpServer::from_toolkit(self::toolkit())
            .with_output_schemas(true)
            .with_max_output_schema_bytes(max)
            .tools()
            .unwrap()
            .into_iter()
            .find(|t| t.name == "links_create")
            .unwrap()
    };
    assert!(listed(at_cap).output_schema.is_some());
    let cut = listed(at_cap - 1);
    assert!(cut.output_schema.is_none());
    // The tool itself is still listed, input schema and all.
    assert_eq!(cut.input_schema["type"], "object");
}

/// googleapis' operations.proto as published (unannotated), with an overlay
/// that names its tools and says, for two of them, whether to list an
/// output schema.
fn operations_server() -> McpServer {
    let googleapis =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../proto/third_party/googleapis");
    let mut compiler = protox::Compiler::new([&googleapis]).unwrap();
    compiler.include_imports(true);
    compiler
        .open_file(googleapis.join("google/longrunning/operations_proto.proto"))
        .unwrap();
    let overlay = proto_ai_tools::schema::overlay::Overlay::parse(
        "operations.tools.toml",
        r#"
[methods."google.longrunning.Operations.ListOperations"]
name = "lro_list"
description = "List the operations."
output_schema = false

[methods."google.longrunning.Operations.GetOperation"]
name = "lro_get"
description = "Get an operation."
output_schema = true

[methods."google.longrunning.Operations.CancelOperation"]
name = "lro_cancel"
description = "Cancel an operation."
"#,
    )
    .unwrap();
    let set = proto_ai_tools::tool_set::ToolSet::from_descriptor_set(
        &compiler.encode_file_descriptor_set(),
        &proto_ai_tools::tool_set::ToolSetOptions::new().overlay(overlay),
    )
    .unwrap();
    let toolkit = Toolkit::builder()
        .generated(set.executor(InProcessTransport::new()))
        .build()
        .unwrap();
    McpServer::from_toolkit(toolkit)
}

/// The names of the tools `server` lists with an output schema.
fn with_schema(server: McpServer) -> Vec<String> {
    let mut names: Vec<String> = server
        .tools()
        .unwrap()
        .into_iter()
        .filter(|t| t.output_schema.is_some())
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn a_tools_own_output_schema_choice_wins_over_the_servers() {
    // Off by default: only the tool that asks is listed with one.
    assert_eq!(with_schema(operations_server()), ["lro_get"]);
    // On: every tool but the one that declines.
    assert_eq!(
        with_schema(operations_server().with_output_schemas(true)),
        ["lro_cancel", "lro_get"]
    );
    // The cap bounds the server's default, not what a tool asks for.
    assert_eq!(
        with_schema(
            operations_server()
                .with_output_schemas(true)
                .with_max_output_schema_bytes(1)
        ),
        ["lro_get"]
    );
}
