use super::*;
use crate::ir::{self, Kind};
use crate::test_support::{HEADER, compile, compile_files};
use crate::{Dialect, FieldAlias, ToolHints};
use serde_json::json;

mod bounds;
mod discovery;
mod options;
mod schemas;

fn tools(body: &str) -> Vec<ToolSpec> {
    let pool = compile(&format!("{HEADER}{body}"));
    match tools_in_file(&pool, "test.proto") {
        Ok(tools) => tools,
        Err(diags) => panic!("unexpected diagnostics: {diags:#?}"),
    }
}

fn diagnostics(body: &str) -> Vec<String> {
    let pool = compile(&format!("{HEADER}{body}"));
    match tools_in_file(&pool, "test.proto") {
        Ok(_) => panic!("expected diagnostics"),
        Err(diags) => diags.iter().map(ToString::to_string).collect(),
    }
}

/// A service with one tool `t` taking `Req`.
fn with_tool(messages: &str, strict: bool) -> String {
    format!(
        "{messages}\nmessage Resp {{}}\nservice S {{\n  rpc M(Req) returns (Resp) {{\n    option (ai.context.v1.rpc_tool) = {{ name: \"t\" description: \"Do it.\" strict: {strict} }};\n  }}\n}}\n"
    )
}

fn params(messages: &str, dialect: Dialect, strict: bool) -> serde_json::Value {
    tools(&with_tool(messages, strict))[0].render(dialect)
}
