//! Our tools and results as rmcp's types: a [`Tool`] or an [`AgentTool`] as
//! an MCP tool, a [`ToolResult`] as an MCP tool result.

use std::sync::Arc;

use proto_ai_tools_schema::{Dialect, HostProfile};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde_json::Value;

use proto_ai_tools::ToolResult;
use proto_ai_tools::tool::AgentTool;
use proto_ai_tools::toolkit::Tool;

/// The dialect of the tools' `inputSchema` unless
/// [`McpServer::with_dialect`](super::McpServer::with_dialect) says otherwise:
/// Anthropic's, the provider behind most MCP hosts, and a plain JSON Schema
/// every host accepts (see the [module docs](super)).
pub const MCP_DIALECT: Dialect = Dialect::Anthropic;

/// `tool` as an MCP tool, its `inputSchema` in `dialect`'s rendering for a
/// client that changes nothing ([`HostProfile::Exact`]); an [`McpServer`](super::McpServer)
/// lists [`to_mcp_tool_for_host`] for its host profile.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::{NativeTool, Toolkit, ToolInput};
/// use proto_ai_tools::schema::Dialect;
/// #[derive(serde::Deserialize, ToolInput)]
/// struct Input { text: String }
/// let shout = NativeTool::new::<Input, _, _>("shout", "Shout.", |_, i: Input| async move { i.text + "!" });
/// let toolkit = Toolkit::builder().native(shout).build().unwrap();
///
/// let tool = proto_ai_tools_mcp::to_mcp_tool(&toolkit.tools()[0], Dialect::Anthropic);
/// assert_eq!(tool.name, "shout");
/// assert_eq!(tool.input_schema["properties"]["text"]["type"], "string");
/// let same = proto_ai_tools_mcp::to_mcp_tool(&toolkit.tools()[0], proto_ai_tools_mcp::MCP_DIALECT);
/// assert_eq!(same, tool);
/// ```
pub fn to_mcp_tool(tool: &Tool, dialect: Dialect) -> rmcp::model::Tool {
    with_annotations(
        rmcp::model::Tool::new(
            tool.name().to_owned(),
            tool.description().to_owned(),
            schema_object(tool.parameters(dialect)),
        ),
        tool.title(),
        tool.hints(),
    )
}

/// `tool` as an MCP tool, its `inputSchema` in `dialect`'s rendering for
/// hosts of profile `host` (see [`Tool::parameters_for_host`]); what an
/// [`McpServer`](super::McpServer) lists.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::{NativeTool, Toolkit, ToolInput};
/// use proto_ai_tools::schema::{Dialect, HostProfile};
/// #[derive(serde::Deserialize, ToolInput)]
/// struct Input { order_id: u64 }
/// let cancel = NativeTool::new::<Input, _, _>("cancel", "Cancel.", |_, i: Input| async move { i.order_id.to_string() });
/// let toolkit = Toolkit::builder().native(cancel).build().unwrap();
///
/// let tool = proto_ai_tools_mcp::to_mcp_tool_for_host(&toolkit.tools()[0], Dialect::Anthropic, HostProfile::JavaScript);
/// assert_eq!(tool.input_schema["properties"]["order_id"]["type"], "string");
/// ```
pub fn to_mcp_tool_for_host(tool: &Tool, dialect: Dialect, host: HostProfile) -> rmcp::model::Tool {
    with_annotations(
        rmcp::model::Tool::new(
            tool.name().to_owned(),
            tool.description().to_owned(),
            schema_object(tool.parameters_for_host(dialect, host)),
        ),
        tool.title(),
        tool.hints(),
    )
}

/// The title and hints as MCP tool annotations: `readOnlyHint`, and, for a
/// tool that is not read-only (where MCP gives them meaning),
/// `idempotentHint` and `destructiveHint`; no annotations when nothing is
/// known.
fn with_annotations(
    mut tool: rmcp::model::Tool,
    title: Option<&str>,
    hints: proto_ai_tools_schema::ToolHints,
) -> rmcp::model::Tool {
    let known =
        title.is_some() || hints.read_only || hints.idempotent || hints.destructive.is_some();
    if known {
        tool.title = title.map(str::to_owned);
        tool.annotations = Some(rmcp::model::ToolAnnotations::from_raw(
            title.map(str::to_owned),
            Some(hints.read_only),
            (!hints.read_only).then_some(hints.destructive).flatten(),
            (!hints.read_only).then_some(hints.idempotent),
            None,
        ));
    }
    tool
}

/// A generated tool (an [`AgentTool`] of `ai_tools!`) as an MCP tool, its
/// `inputSchema` in `dialect`'s rendering (the texts `ai_tools!` checked at
/// compile time).
///
/// # Examples
///
/// ```
/// mod gentools {
///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
/// }
/// let tool = proto_ai_tools_mcp::agent_tool_to_mcp(&gentools::LINKS_LIST, proto_ai_tools_mcp::MCP_DIALECT);
/// assert_eq!(tool.input_schema["properties"]["page_size"]["type"], "integer");
/// ```
pub fn agent_tool_to_mcp(tool: &AgentTool, dialect: Dialect) -> rmcp::model::Tool {
    with_annotations(
        rmcp::model::Tool::new(
            tool.name,
            tool.description,
            schema_object(tool.parameters_value(dialect)),
        ),
        tool.title,
        tool.hints,
    )
}

/// A tool's parameters are always an object; anything else (never produced)
/// becomes the empty object schema rather than a panic.
fn schema_object(schema: Value) -> Arc<JsonObject> {
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => {
            let mut map = JsonObject::new();
            map.insert("type".to_owned(), Value::String("object".to_owned()));
            Arc::new(map)
        }
    }
}

/// A [`ToolResult`] as an MCP tool result: the text as
/// content, `isError` as is, and a JSON object output also as `structuredContent`.
pub(super) fn to_call_tool_result(result: ToolResult) -> CallToolResult {
    if result.is_error {
        return CallToolResult::error(vec![ContentBlock::text(result.output)]);
    }
    let structured = match serde_json::from_str::<Value>(&result.output) {
        Ok(value @ Value::Object(_)) => Some(value),
        _ => None,
    };
    let mut ok = CallToolResult::success(vec![ContentBlock::text(result.output)]);
    ok.structured_content = structured;
    ok
}
