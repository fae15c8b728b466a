//! The `ai-tools` gateway end to end, driven by the official Python MCP SDK
//! over stdio (`gateway/driver.py`): against a tonic server with
//! `tonic-reflection`, and against an independent stack, a Python `grpcio`
//! server with `grpcio-reflection` serving googleapis' unedited
//! `operations.proto`, annotated by an overlay. Each run lists the tools,
//! makes a call, gets an id aliased, resolves the alias in a second call and
//! has an invented alias refused.
//!
//! And one trace from an MCP client to that grpcio server: the gateway's
//! spans, as a receiver on the official OTLP protos (`gateway/
//! otlp_receiver.py`, PyPI's `opentelemetry-proto`) gets them, join the
//! trace the request carried, and the server logs the gateway's gRPC span
//! as the `traceparent` it received.
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
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{links_server, open_session, post, spawn_gateway, workspace};

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

/// `tests/gateway/SCRIPT ARGS` started with `python`, once it has printed
/// `PORT n`: the process (stdin piped: closing it stops the server) and n.
fn python_server(python: &Path, script: &str, args: &[&Path]) -> (Child, u16) {
    let mut server = Command::new(python)
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/gateway")
                .join(script),
        )
        .args(args)
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
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("{script} printed {first:?}, not `PORT n`"));
    (server, port)
}

/// googleapis' unedited operations.proto and its imports, as the grpcio
/// server loads them, written to a file of this run.
fn operations_descriptor_set() -> std::path::PathBuf {
    let mut compiler = protox::Compiler::new([workspace().join("proto/third_party/googleapis")])
        .expect("a compiler");
    compiler
        .include_imports(true)
        .include_source_info(true)
        .open_file("google/longrunning/operations_proto.proto")
        .expect("compiles");
    let set = std::env::temp_dir().join(format!(
        "ai-tools-gateway-{}-{}.binpb",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default()
    ));
    std::fs::write(&set, compiler.encode_file_descriptor_set()).expect("written");
    set
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
    let set = operations_descriptor_set();

    let (mut server, port) = python_server(&python, "operations_server.py", &[&set]);
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

/// The spans the receiver wrote to `out` so far.
fn spans_in(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).expect("a span as JSON"))
        .collect()
}

#[test]
fn one_trace_runs_from_the_mcp_client_through_the_gateway_to_the_grpcio_server() {
    let Some(python) = support::python_importing("grpc, grpc_reflection, opentelemetry.proto")
    else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("ai-tools-traces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (spans, sent) = (dir.join("spans.jsonl"), dir.join("traceparents.log"));
    let (mut receiver, collector) = python_server(&python, "otlp_receiver.py", &[&spans]);
    let set = operations_descriptor_set();
    let (mut server, port) = python_server(&python, "operations_server.py", &[&set, &sent]);
    let overlay = workspace().join("tests/overlays/operations.tools.toml");
    let mut gateway = spawn_gateway(
        Command::new(env!("CARGO_BIN_EXE_ai-tools"))
            .args([
                "mcp",
                "--grpc",
                &format!("http://127.0.0.1:{port}"),
                "--reflection",
            ])
            .arg("--overlay")
            .arg(&overlay)
            .args(["--http", "127.0.0.1:0"])
            .args(["--otlp-endpoint", &format!("http://127.0.0.1:{collector}")]),
    );
    let session = open_session(&gateway.addr);
    // The caller's trace: in `_meta` for one call, in the HTTP headers for
    // the other. The filter's value is a marker that must reach no span.
    let (trace, parent) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let (header_trace, header_parent) = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331");
    let call = |id: u32, meta: &str, headers: &str| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"lro_list","arguments":{{"name":"","filter":"marker-not-in-any-span","page_size":10,"page_token":""}}{meta}}}}}"#
        );
        let answer = post(
            &gateway.addr,
            &format!("Mcp-Session-Id: {session}\r\n{headers}"),
            &body,
        );
        assert!(answer.contains(r#""isError":false"#), "{answer}");
    };
    call(
        2,
        &format!(r#","_meta":{{"traceparent":"00-{trace}-{parent}-01","tracestate":"vendor=1"}}"#),
        "",
    );
    call(
        3,
        "",
        &format!("traceparent: 00-{header_trace}-{header_parent}-01\r\n"),
    );

    // SIGTERM: the gateway sends what it has batched before it exits.
    let stopped = Command::new("kill")
        .args(["-TERM", &gateway.child.id().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    assert!(gateway.child.wait().unwrap().success());
    let began = Instant::now();
    let mut seen = spans_in(&spans);
    while seen.len() < 4 && began.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
        seen = spans_in(&spans);
    }
    let text = std::fs::read_to_string(&spans).unwrap_or_default();
    println!("{} spans received: {text}", seen.len());
    assert!(
        !text.contains("marker-not-in-any-span"),
        "an argument in a span: {text}"
    );

    // Each call's request span is a server span under the caller's, named
    // as the conventions say; its gRPC call a client span in the same trace,
    // which is the parent the server was sent.
    let received = std::fs::read_to_string(&sent).unwrap();
    // The requests' spans and the gRPC calls', as the conventions name
    // them: no inner step's (`ai_tools.call`, its arguments, its answer).
    assert!(
        seen.iter().all(|s| s["kind"] == "SPAN_KIND_SERVER"
            || s["name"] == "google.longrunning.Operations/ListOperations"),
        "{text}"
    );
    for (trace, parent) in [(trace, parent), (header_trace, header_parent)] {
        let request = seen
            .iter()
            .find(|s| s["trace_id"] == trace && s["name"] == "tools/call lro_list")
            .unwrap_or_else(|| panic!("no request span in trace {trace}: {text}"));
        assert_eq!(request["parent_span_id"], parent, "{request}");
        assert_eq!(request["kind"], "SPAN_KIND_SERVER", "{request}");
        assert_eq!(request["service"], "ai-tools", "{request}");
        let attributes = &request["attributes"];
        assert_eq!(attributes["mcp.method.name"], "tools/call", "{request}");
        assert_eq!(attributes["gen_ai.tool.name"], "lro_list", "{request}");
        assert_eq!(
            attributes["gen_ai.operation.name"], "execute_tool",
            "{request}"
        );
        let grpc = seen
            .iter()
            .find(|s| {
                s["trace_id"] == trace
                    && s["name"] == "google.longrunning.Operations/ListOperations"
            })
            .unwrap_or_else(|| panic!("no gRPC span in trace {trace}: {text}"));
        assert_eq!(grpc["kind"], "SPAN_KIND_CLIENT", "{grpc}");
        assert_eq!(grpc["attributes"]["rpc.grpc.status_code"], 0, "{grpc}");
        // Under the request span: its direct child (the tool call's inner
        // spans are not exported).
        assert_eq!(grpc["parent_span_id"], request["span_id"], "{text}");
        let expected = format!(
            "ListOperations 00-{trace}-{}-01",
            grpc["span_id"].as_str().unwrap()
        );
        assert!(
            received.lines().any(|line| line == expected),
            "{expected} not in {received}"
        );
    }

    for child in [&mut receiver, &mut server] {
        drop(child.stdin.take());
        let _ = child.wait();
    }
    let _ = std::fs::remove_file(&set);
    let _ = std::fs::remove_dir_all(&dir);
}
