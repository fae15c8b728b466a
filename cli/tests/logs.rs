//! What a tool call writes to the gateway's logs (README "Logs"): one INFO
//! line per call with the tool, method, duration and outcome and nothing of
//! the arguments or the answer, and one audit event (target
//! `ai_tools::audit`); the arguments at DEBUG only, with every
//! `tool_field.sensitive` field's value `"[redacted]"` (here marked by an
//! overlay). `ai-tools mcp --stdio --log-format json` runs against the links
//! server; each stderr line must parse with Python's `json`, a parser this
//! project did not write.

// The shared helpers in `support/` are not `#[test]` code, so clippy.toml's
// `allow-*-in-tests` does not reach them; they fail the test by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::Write as _;
use std::process::{Command, Stdio};

use proto_ai_tools_tests::support::{python_importing, python_required};
use support::{links_mcp_command, links_server};

/// Values the model sends: the name is marked sensitive, the destination not.
const SECRET_NAME: &str = "Quarterly payroll of Alice Example";
const DESTINATION: &str = "https://example.com/payroll";

/// `ai-tools mcp --stdio --log-format json` over links.proto with `name`
/// marked sensitive, under `rust_log`: one `links_create` call over MCP,
/// then stdin closes. Returns stderr.
fn one_call_logged(grpc: &str, rust_log: &str) -> String {
    let dir = std::env::temp_dir().join(format!("ai-tools-logs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let overlay = dir.join("sensitive.tools.toml");
    std::fs::write(
        &overlay,
        "[fields.\"links.v1.CreateLinkRequest.name\"]\nsensitive = true\n",
    )
    .unwrap();
    let mut child = links_mcp_command(grpc)
        .args(["--stdio", "--log-format", "json", "--overlay"])
        .arg(&overlay)
        .env("RUST_LOG", rust_log)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let call = serde_json::json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "links_create", "arguments": {"destination": DESTINATION, "name": SECRET_NAME}},
    });
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "logs-test", "version": "1"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        call,
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    // Read until the call's answer, then close stdin so the gateway stops.
    let stdout = child.stdout.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stdout));
    let answered = lines.any(|line| line.is_ok_and(|l| l.contains("\"id\":2")));
    assert!(answered, "the gateway did not answer the call");
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(output.stderr).unwrap()
}

/// Each line of `stderr` parsed by Python's `json`, printed back one JSON
/// document a line, read here.
fn parsed_by_python(python: &std::path::Path, stderr: &str) -> Vec<serde_json::Value> {
    let mut child = Command::new(python)
        .args([
            "-c",
            "import json, sys\nfor line in sys.stdin:\n    print(json.dumps(json.loads(line)))",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stderr.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "a log line is not JSON: {}\n{stderr}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn a_call_is_one_info_line_and_its_arguments_are_debug_with_sensitive_fields_redacted() {
    let python = match python_importing("json") {
        Ok(python) => python,
        Err(reason) if python_required() => panic!("AI_TOOLS_REQUIRE_PYTHON is set: {reason}"),
        Err(reason) => {
            let _ = writeln!(std::io::stderr().lock(), "SKIPPED: {reason}");
            return;
        }
    };
    let (_runtime, server) = links_server();
    let grpc = format!("http://{}", server.addr);

    let info = one_call_logged(&grpc, "warn,ai_tools=info,proto_ai_tools=info");
    let lines = parsed_by_python(&python, &info);
    let calls: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["fields"]["message"] == "tool call")
        .collect();
    assert_eq!(calls.len(), 1, "{info}");
    let call = &calls[0]["fields"];
    assert_eq!(calls[0]["level"], "INFO");
    assert_eq!(call["tool"], "links_create");
    assert_eq!(call["rpc.method"], "CreateLink");
    assert_eq!(call["outcome"], "ok");
    assert!(
        call["duration_ms"].as_f64().is_some_and(|ms| ms > 0.0),
        "{call}"
    );
    // And one audit event, on a target of its own, with what the call was
    // and how it ended.
    let audits: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["target"] == "ai_tools::audit")
        .collect();
    assert_eq!(audits.len(), 1, "{info}");
    let audit = &audits[0]["fields"];
    assert_eq!(audits[0]["level"], "INFO");
    assert_eq!(audit["message"], "tools/call");
    assert_eq!(audit["tool"], "links_create");
    assert_eq!(audit["rpc.method"], "links.v1.LinksService/CreateLink");
    assert_eq!(audit["grpc_status"], "OK");
    assert_eq!(audit["rpc.grpc.status_code"], 0);
    assert_eq!(audit["error"], false);
    assert_eq!(audit["outcome"], "ok");
    assert_eq!(audit["consent"], "none");
    assert!(audit["scope"].is_string(), "{audit}");
    assert!(
        audit["duration_ms"].as_f64().is_some_and(|ms| ms > 0.0),
        "{audit}"
    );
    // Nothing the model sent, nor the answer, at INFO.
    assert!(
        !info.contains(SECRET_NAME) && !info.contains(DESTINATION),
        "{info}"
    );
    assert!(!info.contains("tool call arguments"), "{info}");

    let debug = one_call_logged(&grpc, "warn,ai_tools=info,proto_ai_tools=debug");
    let lines = parsed_by_python(&python, &debug);
    let arguments: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["fields"]["message"] == "tool call arguments")
        .collect();
    assert_eq!(arguments.len(), 1, "{debug}");
    let text = arguments[0]["fields"]["arguments"].as_str().unwrap();
    let sent: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(sent["destination"], DESTINATION, "{text}");
    assert_eq!(sent["name"], "[redacted]", "{text}");
    assert!(!debug.contains(SECRET_NAME), "{debug}");
}

/// A failure at start still prints the log lines logged before it, and
/// first: the lines go through a writer thread (`logs` in main.rs), which
/// `main` drains before it says why it failed.
#[test]
fn a_failure_at_start_prints_its_log_lines_before_the_reason() {
    // The gateway's address is taken, so it fails to listen, after the
    // warning about RUST_LOG.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let output = links_mcp_command("http://127.0.0.1:9")
        .args(["--http", &addr])
        .env("RUST_LOG", "[nope")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let warned = stderr.find("RUST_LOG is not a filter ([nope");
    let failed = stderr.find(&format!("ai-tools: cannot listen on {addr}"));
    assert!(
        warned.is_some() && failed.is_some() && warned < failed,
        "the warning, then the reason:\n{stderr}"
    );
}

/// On SIGTERM the gateway logs that it stops, ends, and the last line,
/// logged just before the process exits, is on stderr with the call's.
#[cfg(unix)]
#[test]
fn on_sigterm_every_line_is_written_before_the_gateway_exits() {
    use std::io::BufRead as _;
    let (_runtime, server) = links_server();
    let grpc = format!("http://{}", server.addr);
    let mut child = links_mcp_command(&grpc)
        .args(["--http", "127.0.0.1:0", "--single-user"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    let addr = loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "{seen}");
        seen.push_str(&line);
        if let Some(rest) = line.trim().split("at http://").nth(1) {
            break rest.strip_suffix("/mcp").unwrap().to_owned();
        }
    };
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "links_list", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }},
    });
    let response = support::post(
        &addr,
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: links_list\r\n",
        &body.to_string(),
    );
    assert_eq!(support::status(&response), "200", "{response}");
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    std::io::Read::read_to_string(&mut stderr, &mut seen).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}: {seen}");
    let position = |text: &str| {
        seen.find(text)
            .unwrap_or_else(|| panic!("no `{text}` in:\n{seen}"))
    };
    assert!(position("tool call") < position("stopping (ctrl-c or SIGTERM)"));
    assert!(position("stopping (ctrl-c or SIGTERM)") < position("stopped"));
}
