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

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use support::{links_server, workspace};

fn python() -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = std::env::var_os("AI_TOOLS_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([workspace().join("target/py-venv/bin/python")])
        .collect();
    let found = candidates.into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import mcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    if found.is_none() {
        let reason = "no Python with the MCP SDK (set AI_TOOLS_PYTHON or run .ci/run)";
        assert!(
            std::env::var_os("AI_TOOLS_REQUIRE_MCP").is_none(),
            "AI_TOOLS_REQUIRE_MCP is set: {reason}"
        );
        eprintln!("SKIPPED: {reason}");
    }
    found
}

#[test]
fn a_python_mcp_client_searches_calls_and_enables_a_toolset() {
    let Some(python) = python() else { return };
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
    assert!(stdout.contains("14 passed, 0 failed"), "{stdout}");
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
