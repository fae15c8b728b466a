//! `ai-tools mcp --tool-search` end to end, driven by the official Python
//! MCP SDK over stdio (`tool_search/driver.py`) in front of a tonic server
//! with reflection: `tools/list` → `search_tools` → a call of a found tool
//! through `call_tool`, then `enable_toolset`, heard as
//! `notifications/tools/list_changed`, and the toolset's tools listed and
//! called directly.
//!
//! Needs a Python with the MCP SDK: `AI_TOOLS_PYTHON`, else
//! `target/py-venv/bin/python` (`.ci/run` makes it). Without one the test
//! says why and passes, unless `AI_TOOLS_REQUIRE_MCP` is set, as in CI.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::Path;
use std::process::{Command, Stdio};

use support::links_server;

#[test]
fn a_python_mcp_client_searches_calls_and_enables_a_toolset() {
    let Some(python) = support::python_importing("mcp") else {
        return;
    };
    let (runtime, server) = links_server();
    let url = server.url();
    let output = Command::new(&python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tool_search/driver.py"))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_ai-tools"))
        .args([
            "mcp",
            "--grpc",
            &url,
            "--reflection",
            "--tool-search",
            "--stdio",
        ])
        .output()
        .expect("the driver runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    eprintln!("{}", String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "the driver failed:\n{stdout}");
    assert!(stdout.contains("16 passed, 0 failed"), "{stdout}");
    let links = server.backend.links();
    assert_eq!(links.len(), 1, "one link, created once through call_tool");
    assert_eq!(
        links[0].destination, "https://example.com/moved",
        "the direct call after enabling reached the service"
    );
    runtime.block_on(server.shutdown());
}

#[test]
fn a_toolset_that_is_not_there_stops_the_gateway_naming_the_toolsets() {
    let (runtime, server) = links_server();
    let output = Command::new(env!("CARGO_BIN_EXE_ai-tools"))
        .args([
            "mcp",
            "--grpc",
            &server.url(),
            "--reflection",
            "--tool-search",
        ])
        .args(["--toolset", "links.v1.Links", "--stdio"])
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("there is no toolset `links.v1.Links`; the toolsets are: feed.v1.FeedService, links.v1.LinksService, links.v1.WorkflowStepsService"),
        "{stderr}"
    );
    runtime.block_on(server.shutdown());
}

/// A toolset of the operator's own (`--define-toolset`), listed from the
/// start (`--toolset`): the first `tools/list` holds the meta-tools and its
/// tools, and no other; a definition whose glob matches nothing stops the
/// gateway naming it.
#[test]
fn a_defined_toolset_is_listed_from_the_start() {
    use std::io::{BufRead, BufReader, Write};
    let (runtime, server) = links_server();
    let url = server.url();
    let mut gateway = Command::new(env!("CARGO_BIN_EXE_ai-tools"))
        .args(["mcp", "--grpc", &url, "--reflection", "--tool-search"])
        .args([
            "--define-toolset",
            "reading=links_list,workflow_steps_delete",
        ])
        .args(["--toolset", "reading", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the gateway starts");
    let mut stdin = gateway.stdin.take().expect("piped");
    let mut stdout = BufReader::new(gateway.stdout.take().expect("piped"));
    for message in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    ] {
        writeln!(stdin, "{message}").expect("written");
    }
    let mut listed = None;
    for _ in 0..10 {
        let mut line = String::new();
        if stdout.read_line(&mut line).expect("read") == 0 {
            break;
        }
        let reply: serde_json::Value = serde_json::from_str(&line).expect("JSON-RPC");
        if reply["id"] == 2 {
            listed = Some(reply);
            break;
        }
    }
    drop(stdin);
    let _ = gateway.kill();
    let _ = gateway.wait();
    let listed = listed.expect("an answer to tools/list");
    let mut names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "call_tool",
            "enable_toolset",
            "links_list",
            "list_toolsets",
            "search_tools",
            "workflow_steps_delete"
        ]
    );

    let output = Command::new(env!("CARGO_BIN_EXE_ai-tools"))
        .args(["mcp", "--grpc", &url, "--reflection", "--tool-search"])
        .args(["--define-toolset", "reading=link_*", "--stdio"])
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("toolset `reading`: include pattern `link_*` matches no tool name"),
        "{stderr}"
    );
    runtime.block_on(server.shutdown());
}
