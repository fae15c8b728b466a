//! The `ai-tools` gateway end to end, driven by the official Python MCP SDK
//! over stdio (`gateway/driver.py`): against a tonic server with
//! `tonic-reflection`, and against an independent stack, a Python `grpcio`
//! server with `grpcio-reflection` serving googleapis' unedited
//! `operations.proto`, annotated by an overlay. Each run lists the tools,
//! makes a call, gets an id aliased, resolves the alias in a second call and
//! has an invented alias refused.
//!
//! Needs a Python with the MCP SDK, grpcio and grpcio-reflection:
//! `AI_TOOLS_PYTHON`, else `target/py-venv/bin/python` (`.ci/run` makes it).
//! Without one the tests say why and pass, unless `AI_TOOLS_REQUIRE_MCP` is
//! set, as in CI, which makes them fail.

// An integration test: its helpers are not `#[test]` functions, so
// `clippy.toml`'s `allow-*-in-tests` does not reach them, and they fail
// the test by panicking as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use support::{links_server, workspace};

/// Runs the driver against the gateway started with `gateway_args`.
fn drive(python: &Path, driver_args: &[&str], gateway_args: &[&str]) {
    let output = Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gateway/driver.py"))
        .args(driver_args)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_ai-tools"))
        .args(gateway_args)
        .output()
        .expect("the driver runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    eprintln!("{}", String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "the driver failed:\n{stdout}");
    assert!(stdout.contains("4 passed, 0 failed"), "{stdout}");
}

#[test]
fn over_a_tonic_servers_reflection() {
    let Some(python) = support::python_importing("mcp, grpc, grpc_reflection") else {
        return;
    };
    let (runtime, server) = links_server();
    let url = server.url();
    drive(
        &python,
        &[
            "links_create",
            r#"{"destination": "https://example.com/gateway"}"#,
            "link.id",
            "links_update",
            "link_id",
        ],
        &["mcp", "--grpc", &url, "--reflection", "--stdio"],
    );
    assert_eq!(server.backend.links().len(), 1, "one link, created once");
    runtime.block_on(server.shutdown());
}

#[test]
fn over_a_python_grpcio_servers_reflection_with_an_overlay() {
    let Some(python) = support::python_importing("mcp, grpc, grpc_reflection") else {
        return;
    };
    // The unedited googleapis file and its imports, as the server loads them.
    let mut compiler = protox::Compiler::new([workspace().join("proto/third_party/googleapis")])
        .expect("a compiler");
    compiler
        .include_imports(true)
        .include_source_info(true)
        .open_file("google/longrunning/operations_proto.proto")
        .expect("compiles");
    let set = std::env::temp_dir().join(format!("ai-tools-gateway-{}.binpb", std::process::id()));
    std::fs::write(&set, compiler.encode_file_descriptor_set()).expect("written");

    let mut server = Command::new(&python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gateway/operations_server.py"))
        .arg(&set)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the Python server starts");
    let mut first = String::new();
    BufReader::new(server.stdout.take().expect("piped"))
        .read_line(&mut first)
        .expect("the server prints its port");
    let port = first
        .trim()
        .strip_prefix("PORT ")
        .expect("`PORT n`")
        .to_owned();
    let overlay = workspace().join("tests/overlays/operations.tools.toml");
    drive(
        &python,
        &[
            "lro_list",
            r#"{"name": "", "filter": "", "page_size": 10, "page_token": ""}"#,
            "operations.0.name",
            "lro_get",
            "name",
        ],
        &[
            "mcp",
            "--grpc",
            &format!("http://127.0.0.1:{port}"),
            "--reflection",
            "--overlay",
            &overlay.display().to_string(),
            "--stdio",
        ],
    );
    drop(server.stdin.take());
    let _ = server.wait();
    let _ = std::fs::remove_file(&set);
}
