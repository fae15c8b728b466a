//! The derive's decode: arbitrary bytes as the arguments of a native tool
//! whose input is a `#[derive(ToolInput)]` struct with an alias field, an
//! enum, nesting, a map and optional values. No panic; a bounded result.
#![no_main]

use std::collections::BTreeMap;
use std::sync::Arc;

use proto_ai_tools::{AliasManager, CallOptions, NativeTool, ToolInput};
use proto_ai_tools_fuzz::{KNOWN, run};
use libfuzzer_sys::fuzz_target;

#[allow(dead_code)] // fields are read through Debug only
#[derive(Debug, serde::Deserialize, ToolInput)]
#[serde(rename_all = "snake_case")]
enum Colour {
    Red,
    Green,
}

/// A node.
#[allow(dead_code)] // fields are read through Debug only
#[derive(Debug, serde::Deserialize, ToolInput)]
struct Node {
    name: String,
    children: Vec<Node>,
}

/// The input.
#[allow(dead_code)] // fields are read through Debug only
#[derive(Debug, serde::Deserialize, ToolInput)]
struct Input {
    #[tool(alias_prefix = "link")]
    link_id: String,
    count: Option<u32>,
    colour: Option<Colour>,
    labels: BTreeMap<String, String>,
    root: Option<Node>,
    big: Option<i64>,
    ratio: Option<f64>,
}

fuzz_target!(|data: &[u8]| {
    let args = String::from_utf8_lossy(data);
    let tool = NativeTool::new::<Input, _, _>("probe", "Probe.", |_, input| async move {
        format!("{input:?}")
    });
    let aliases = Arc::new(AliasManager::new());
    let _ = run(aliases.register("link", KNOWN[0]));
    let result = run(tool.call(aliases, &*args, &CallOptions::new())).expect("a native call finishes");
    let _ = result.is_error;
});
