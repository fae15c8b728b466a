//! `ai-tools mcp --http` with the HTTP limits set by flags: the binary
//! serves with them (the limits themselves are tested against the library
//! in `tests/tests/http_edge.rs`). No gRPC server is needed: the channel
//! connects lazily and no tool is called.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The gateway, killed when dropped.
struct Gateway {
    child: Child,
    addr: String,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(flags: &[&str]) -> Gateway {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ai-tools"))
        .args(["mcp", "--grpc", "http://127.0.0.1:1", "--proto"])
        .arg(workspace().join("proto/links/v1/links.proto"))
        .arg("-I")
        .arg(workspace().join("proto"))
        .args(["--http", "127.0.0.1:0"])
        .args(flags)
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

/// `initialize` on a new connection, with `extra` header lines; the status
/// line and head of the response.
fn initialize(addr: &str, extra: &str) -> String {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cli-test","version":"1"}}}"#;
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a timeout");
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{body}",
        body.len()
    )
    .expect("sent");
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response
}

fn status(response: &str) -> &str {
    response.split_whitespace().nth(1).unwrap_or_default()
}

#[test]
fn the_http_limits_flags_reach_the_server() {
    let gateway = start(&[
        "--max-sessions",
        "1",
        "--allowed-origin",
        "https://app.example.com:443",
        "--max-body-bytes",
        "100000",
        "--header-timeout",
        "5",
        "--idle-timeout",
        "5",
        "--max-connections",
        "8",
        "--session-idle-timeout",
        "60",
    ]);
    let first = initialize(&gateway.addr, "Origin: https://app.example.com\r\n");
    assert_eq!(status(&first), "200", "the added origin passes: {first}");
    let second = initialize(&gateway.addr, "");
    assert_eq!(status(&second), "503", "one session at most: {second}");
    assert!(
        second.to_ascii_lowercase().contains("retry-after: 5"),
        "{second}"
    );
    let foreign = initialize(&gateway.addr, "Origin: https://elsewhere.example\r\n");
    assert_eq!(status(&foreign), "403", "{foreign}");
}
