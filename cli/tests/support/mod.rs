//! What the tests of the `ai-tools` binary share: the workspace root, the
//! links test server, the binary started as an HTTP gateway on a free
//! loopback port (killed when dropped), and requests to its `/mcp`.

// Each test binary uses a part of this module.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use proto_ai_tools_tests::{LinksBackend, Reflection, RunningServer, serve_with_reflection};

/// The workspace root (the protos live under it).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A Python that imports `modules` (`"mcp, grpc"`): `AI_TOOLS_PYTHON`, else
/// `target/py-venv/bin/python` (`.ci/run` makes it). Without one the caller
/// is told why and skips, unless `AI_TOOLS_REQUIRE_MCP` is set, as in CI:
/// then this fails.
pub fn python_importing(modules: &str) -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = std::env::var_os("AI_TOOLS_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([workspace().join("target/py-venv/bin/python")])
        .collect();
    let found = candidates.into_iter().find(|p| {
        Command::new(p)
            .args(["-c", &format!("import {modules}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    if found.is_none() {
        let reason =
            format!("no Python that imports {modules} (set AI_TOOLS_PYTHON or run .ci/run)");
        assert!(
            std::env::var_os("AI_TOOLS_REQUIRE_MCP").is_none(),
            "AI_TOOLS_REQUIRE_MCP is set: {reason}"
        );
        eprintln!("SKIPPED: {reason}");
    }
    found
}

/// The tree of npm's `google-proto-files` (installed in `tests/node` by
/// `npm ci`), if it holds `file`; else the caller is told why and skips,
/// unless `AI_TOOLS_REQUIRE_NODE` is set (`.ci/run` sets it): then this
/// fails.
pub fn published_tree(file: &str) -> Option<PathBuf> {
    let tree = workspace().join("tests/node/node_modules/google-proto-files");
    if tree.join(file).is_file() {
        return Some(tree);
    }
    let reason =
        "tests/node/node_modules/google-proto-files is not installed (run `npm ci` in tests/node)";
    assert!(
        std::env::var_os("AI_TOOLS_REQUIRE_NODE").is_none(),
        "{reason}"
    );
    eprintln!("skipped: {reason}");
    None
}

/// The links service, with `grpc.reflection.v1`, on loopback, and the
/// runtime it runs on (`runtime.block_on(server.shutdown())` stops it).
pub fn links_server() -> (tokio::runtime::Runtime, RunningServer) {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let server = runtime
        .block_on(serve_with_reflection(
            LinksBackend::default(),
            Reflection::V1,
        ))
        .expect("the server");
    (runtime, server)
}

/// The gateway, killed when dropped.
pub struct Gateway {
    pub child: Child,
    /// `127.0.0.1:PORT`, where it listens.
    pub addr: String,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `ai-tools mcp` over `links.proto`, calling `grpc`; the transport
/// (`--stdio` or `--http ADDR`) and more flags follow.
pub fn links_mcp_command(grpc: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ai-tools"));
    command
        .args(["mcp", "--grpc", grpc, "--proto"])
        .arg(workspace().join("proto/links/v1/links.proto"))
        .arg("-I")
        .arg(workspace().join("proto"));
    command
}

/// `ai-tools mcp --http 127.0.0.1:0` over `links.proto`, calling `grpc`;
/// more flags may follow.
pub fn gateway_command(grpc: &str) -> Command {
    let mut command = links_mcp_command(grpc);
    command.args(["--http", "127.0.0.1:0"]);
    command
}

/// [`gateway_command`] with `flags`, started; returns once it says where
/// it listens.
pub fn start_gateway(grpc: &str, flags: &[&str]) -> Gateway {
    spawn_gateway(gateway_command(grpc).args(flags))
}

/// `command`, an `ai-tools mcp --http`, started; returns once it says where
/// it listens.
pub fn spawn_gateway(command: &mut Command) -> Gateway {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gateway starts");
    let mut stderr = BufReader::new(child.stderr.take().expect("piped"));
    let mut addr = None;
    for _ in 0..20 {
        let mut line = String::new();
        if stderr.read_line(&mut line).expect("stderr") == 0 {
            break;
        }
        if let Some(rest) = line.trim().split("at http://").nth(1) {
            addr = rest.strip_suffix("/mcp").map(str::to_owned);
            break;
        }
    }
    let addr = addr.expect("the gateway says where it listens");
    // Keep draining stderr so the gateway never blocks on it.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    Gateway { child, addr }
}

/// A loopback address with a port free when asked: for a gateway whose
/// flags name its address before it starts (`--oauth-audience`). Another
/// process could take the port meanwhile; the gateway then fails to listen.
pub fn free_loopback_addr() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("an address")
}

/// A `POST` of `body` to `/mcp` on a new connection, with `headers` (lines,
/// each ending in `\r\n`) besides the usual ones, closed after the
/// response; the whole response, head and body.
pub fn post(addr: &str, headers: &str, body: &str) -> String {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a timeout");
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n{body}",
        body.len()
    )
    .expect("sent");
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response
}

/// `initialize` on a new connection, with `headers` as for [`post`]; the
/// whole response.
pub fn initialize(addr: &str, headers: &str) -> String {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cli-test","version":"1"}}}"#;
    post(addr, headers, body)
}

/// An MCP session opened over HTTP (`initialize`, then
/// `notifications/initialized`); its id.
pub fn open_session(addr: &str) -> String {
    let init = initialize(addr, "");
    let session = init
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .expect("a session");
    let initialized = post(
        addr,
        &format!("Mcp-Session-Id: {session}\r\n"),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(status(&initialized), "202", "{initialized}");
    session
}

/// A `GET` over HTTP/1.0 (no chunked answer): the status and the body.
pub fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let Ok(mut stream) = TcpStream::connect(addr) else {
        return (0, String::new());
    };
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let code = response
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (code, body)
}

/// The status code of an HTTP `response`.
pub fn status(response: &str) -> &str {
    response.split_whitespace().nth(1).unwrap_or_default()
}
