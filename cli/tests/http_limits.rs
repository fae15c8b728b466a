//! `ai-tools mcp --http` with the HTTP limits and the call deadlines set by
//! flags: the binary serves with them (the limits themselves are tested
//! against the library in `tests/tests/http_edge.rs`). No gRPC server is
//! needed: the channel connects lazily, and the one the deadlines are tried
//! against accepts connections and never answers.

// An integration test: its helpers are not `#[test]` functions, so
// `clippy.toml`'s `allow-*-in-tests` does not reach them, and they fail
// the test by panicking as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::Duration;

use support::{Gateway, gateway_command, initialize, open_session, post, start_gateway, status};

fn start(flags: &[&str]) -> Gateway {
    start_gateway("http://127.0.0.1:1", flags)
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

/// The header line that places a request in MCP session `id`.
fn in_session(id: &str) -> String {
    format!("Mcp-Session-Id: {id}\r\n")
}

/// A gRPC "server" that accepts connections and never says a word.
fn mute_server() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    format!("http://{addr}")
}

#[test]
fn the_deadline_flags_reach_the_calls() {
    let grpc = mute_server();
    let typo = gateway_command(&grpc)
        .args(["--tool-timeout", "links_lsit=5"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&typo.stderr);
    assert_eq!(typo.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("`links_lsit`") && stderr.contains("links_list"),
        "{stderr}"
    );

    let gateway = start_gateway(
        &grpc,
        &["--call-timeout", "0.4", "--tool-timeout", "links_list=1.5"],
    );
    let session = open_session(&gateway.addr);
    for (tool, arguments, deadline) in [
        ("links_create", r#"{"destination":"https://x"}"#, "0.4 s"),
        ("links_list", "{}", "1.5 s"),
    ] {
        meets_deadline(&gateway.addr, &session, tool, arguments, deadline);
    }
}

/// Calls `tool` against a mute service: the call ends with
/// `DEADLINE_EXCEEDED` after `deadline` (as the error result words it),
/// well within the server's default of 50 s; how long it took.
fn meets_deadline(
    addr: &str,
    session: &str,
    tool: &str,
    arguments: &str,
    deadline: &str,
) -> Duration {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
    );
    let started = std::time::Instant::now();
    let response = post(addr, &in_session(session), &body);
    let took = started.elapsed();
    assert!(
        response.contains("DEADLINE_EXCEEDED")
            && response.contains(&format!("deadline of {deadline}"))
            && response.contains(r#""isError":true"#),
        "{tool}: {response}"
    );
    assert!(took < Duration::from_secs(5), "{tool}: {took:?}");
    took
}

#[test]
fn an_overlay_timeout_is_the_tools_deadline() {
    // A proto of two unannotated methods, made tools by an overlay that
    // gives one of them a deadline of its own.
    let dir = std::env::temp_dir().join(format!("ai-tools-overlay-timeout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let proto = dir.join("slow.proto");
    std::fs::write(
        &proto,
        "syntax = \"proto3\";\npackage slow.v1;\nmessage Req {}\nservice Slow {\n  rpc Wait(Req) returns (Req);\n  rpc Other(Req) returns (Req);\n}\n",
    )
    .expect("written");
    let overlay = dir.join("tools.toml");
    std::fs::write(
        &overlay,
        "[methods.\"slow.v1.Slow.Wait\"]\nname = \"slow_wait\"\ndescription = \"Wait.\"\ntimeout = \"0.3s\"\n\n\
         [methods.\"slow.v1.Slow.Other\"]\nname = \"slow_other\"\ndescription = \"Other.\"\n",
    )
    .expect("written");
    let (proto, include, overlay) = (
        proto.to_str().expect("UTF-8"),
        dir.to_str().expect("UTF-8"),
        overlay.to_str().expect("UTF-8"),
    );
    let grpc = mute_server();
    // `--proto` given again replaces the links proto `start_gateway` names.
    let served = ["--proto", proto, "-I", include, "--overlay", overlay];

    // Over the server's default: 0.3 s, not 50 s (nor `--call-timeout`'s
    // 0.8 s, which the other tool gets).
    let gateway = start_gateway(&grpc, &served);
    let session = open_session(&gateway.addr);
    let took = meets_deadline(&gateway.addr, &session, "slow_wait", "{}", "0.3 s");
    println!("figure: the overlay's 0.3 s deadline, the call answered after {took:?}");
    drop(gateway);
    let gateway = start_gateway(&grpc, &[&served[..], &["--call-timeout", "0.8"]].concat());
    let session = open_session(&gateway.addr);
    meets_deadline(&gateway.addr, &session, "slow_wait", "{}", "0.3 s");
    meets_deadline(&gateway.addr, &session, "slow_other", "{}", "0.8 s");
    drop(gateway);

    // `--tool-timeout` comes first.
    let gateway = start_gateway(
        &grpc,
        &[&served[..], &["--tool-timeout", "slow_wait=0.5"]].concat(),
    );
    let session = open_session(&gateway.addr);
    meets_deadline(&gateway.addr, &session, "slow_wait", "{}", "0.5 s");
    drop(gateway);
    let _ = std::fs::remove_dir_all(&dir);
}
