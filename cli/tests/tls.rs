//! `ai-tools` over TLS and mTLS: `--grpc https://…` with `--ca-cert`,
//! `--client-cert` and `--client-key`, against the links service served by
//! tonic with certificates made at test time.

// An integration test: its helpers are not `#[test]` functions, so
// `clippy.toml`'s `allow-*-in-tests` does not reach them, and they fail
// the test by panicking as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use proto_ai_tools_tests::tls::{Ca, GrpcioMtls, Pem, serve_tls};
use proto_ai_tools_tests::{LinksBackend, Reflection, RunningServer};
use serde_json::{Value, json};
use support::links_mcp_command;

/// `text` in a file of this test run, named `name`; its path.
fn file(name: &str, text: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("tls-{}-{name}", std::process::id()));
    std::fs::write(&path, text).expect("written");
    path
}

/// The links service over TLS (mTLS with `client_ca`), with reflection.
fn server(identity: &Pem, client_ca: Option<&str>) -> (tokio::runtime::Runtime, RunningServer) {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let server = runtime
        .block_on(serve_tls(
            LinksBackend::default(),
            identity,
            client_ca,
            Some(Reflection::V1),
        ))
        .expect("the TLS server");
    (runtime, server)
}

fn ai_tools(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ai-tools"))
        .args(args)
        .output()
        .expect("ai-tools runs")
}

#[test]
fn tools_by_reflection_over_tls_with_a_private_ca() {
    let ca = Ca::new("test ca");
    let (runtime, server) = server(&ca.server(), None);
    let url = server.url();
    // `ai-tools tools --reflection` trusting the CA `pem`, kept in `name`.
    let tools_trusting = |name: &str, pem: &str| {
        let ca_file = file(name, pem);
        let ca_path = ca_file.to_str().expect("utf-8");
        ai_tools(&[
            "tools",
            "--grpc",
            &url,
            "--reflection",
            "--ca-cert",
            ca_path,
        ])
    };
    let output = tools_trusting("reflection-ca.pem", &ca.pem);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let tools: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert!(
        tools
            .as_array()
            .expect("a list")
            .iter()
            .any(|t| t["name"] == "links_create"),
        "{tools}"
    );

    // Another CA: a quick, clear failure naming the host.
    let started = Instant::now();
    let output = tools_trusting("reflection-other.pem", &Ca::new("another ca").pem);
    assert!(started.elapsed() < Duration::from_secs(8));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "ai-tools: TLS handshake with {} failed: the server's certificate is not trusted for {}",
            server.addr, server.addr
        )),
        "{stderr}"
    );
    runtime.block_on(server.shutdown());
}

/// `ai-tools mcp --stdio` calling `url` with `flags`: `initialize`, then
/// one `tools/call` of `links_create`; its result, and the gateway's logs.
fn create_a_link_over_stdio(url: &str, flags: &[String]) -> (Value, String) {
    let mut child = links_mcp_command(url)
        .arg("--stdio")
        .args(flags)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gateway starts");
    let mut stdin = child.stdin.take().expect("piped");
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "cli-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "links_create", "arguments": {"destination": "https://x.y"}}}),
    ];
    for message in messages {
        writeln!(stdin, "{message}").expect("sent");
    }
    let stdout = BufReader::new(child.stdout.take().expect("piped"));
    let mut result = Value::Null;
    for line in stdout.lines() {
        let message: Value = serde_json::from_str(&line.expect("a line")).expect("JSON");
        if message["id"] == 2 {
            result = message["result"].clone();
            break;
        }
    }
    // Closing stdin ends the gateway, which leaves its logs complete.
    drop(stdin);
    let mut logs = String::new();
    let _ = std::io::Read::read_to_string(&mut child.stderr.take().expect("piped"), &mut logs);
    let _ = child.wait();
    (result, logs)
}

#[test]
fn mcp_calls_a_tool_over_mtls_and_says_when_the_client_certificate_is_refused() {
    let ca = Ca::new("test ca");
    let (runtime, server) = server(&ca.server(), Some(&ca.pem));
    let url = server.url();
    let ca_file = file("mtls-ca.pem", &ca.pem);
    // The flags of mTLS with `client`'s certificate and key, in files named
    // for `name`.
    let flags = |client: &Pem, name: &str| -> Vec<String> {
        let cert = file(&format!("{name}.pem"), &client.cert);
        let key = file(&format!("{name}.key"), &client.key);
        [
            ("--ca-cert", &ca_file),
            ("--client-cert", &cert),
            ("--client-key", &key),
        ]
        .into_iter()
        .flat_map(|(flag, path)| [flag.to_owned(), path.display().to_string()])
        .collect()
    };
    let (result, _) = create_a_link_over_stdio(&url, &flags(&ca.client("gateway"), "mtls-client"));
    assert_ne!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("link-1"), "{result}");
    assert_eq!(server.backend.links().len(), 1);

    // A client certificate another CA signed: the model is told the
    // service could not be reached, without its address; the log says why
    // at WARN; nothing reaches the service.
    let stranger = Ca::new("another ca").client("gateway");
    let (result, logs) = create_a_link_over_stdio(&url, &flags(&stranger, "mtls-stranger"));
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("could not reach its service"), "{result}");
    assert!(!text.contains(&server.addr.to_string()), "{result}");
    assert!(!text.contains("TLS"), "{result}");
    let warned = logs
        .lines()
        .find(|line| line.contains("WARN") && line.contains("tool call failed"))
        .unwrap_or_else(|| panic!("no WARN: {logs}"));
    assert!(
        warned.contains(&format!(
            "TLS handshake with {} failed: the server did not accept the client certificate",
            server.addr
        )) && warned.contains("outcome=\"unreachable\""),
        "{warned}"
    );
    assert_eq!(server.backend.links().len(), 1);
    runtime.block_on(server.shutdown());
}

#[test]
fn tls_flags_without_https_are_usage_errors() {
    let output = ai_tools(&[
        "tools",
        "--grpc",
        "http://127.0.0.1:1",
        "--reflection",
        "--ca-cert",
        "ca.pem",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("use an https:// URL"));
}

/// Against a Python grpcio server requiring a client certificate, which
/// ends a refused connection without a TLS alert, `ai-tools` says the
/// likely cause: no client certificate (and the flags that give one), one
/// from a CA the server does not trust, or an X.509 version 1 one; and
/// with the server's CA's own, it reads the descriptors.
#[test]
fn against_a_grpcio_server_the_likely_cause_of_a_refusal_is_said() {
    let Some(server) = GrpcioMtls::start() else {
        return;
    };
    let host = &server.host;
    let ca_file = file("grpcio-ca.pem", &server.ca.pem);
    // `ai-tools tools --reflection` with the CA and `client`, if any, in
    // files named for `name`; its exit status and the last line of stderr.
    let tools = |client: Option<(&Pem, &str)>| -> (Option<i32>, String) {
        let mut args = vec![
            "tools".to_owned(),
            "--grpc".to_owned(),
            server.url.clone(),
            "--reflection".to_owned(),
            "--ca-cert".to_owned(),
            ca_file.display().to_string(),
        ];
        if let Some((pem, name)) = client {
            let cert = file(&format!("{name}.pem"), &pem.cert);
            let key = file(&format!("{name}.key"), &pem.key);
            args.extend([
                "--client-cert".to_owned(),
                cert.display().to_string(),
                "--client-key".to_owned(),
                key.display().to_string(),
            ]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = ai_tools(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr.lines().last().unwrap_or_default().to_owned();
        (output.status.code(), last)
    };

    // Its CA's client certificate: reflection answers (and nothing is
    // annotated).
    let (code, said) = tools(Some((&server.ca.client("gateway"), "grpcio-client")));
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("no method is annotated"), "{said}");

    let (code, said) = tools(None);
    assert_eq!(code, Some(1), "{said}");
    assert_eq!(
        said,
        format!(
            "ai-tools: TLS handshake with {host} failed: the server closed the connection \
             during the handshake; it may require a client certificate (give one with \
             --client-cert and --client-key)"
        )
    );

    let stranger = Ca::new("another ca").client("gateway");
    let (code, said) = tools(Some((&stranger, "grpcio-stranger")));
    assert_eq!(code, Some(1), "{said}");
    assert_eq!(
        said,
        format!(
            "ai-tools: TLS handshake with {host} failed: the server closed the connection \
             during the handshake; it may not trust the client certificate's issuer (give a \
             client certificate signed by a CA the server trusts)"
        )
    );

    let (code, said) = tools(Some((&GrpcioMtls::version_1_client(), "grpcio-v1")));
    assert_eq!(code, Some(1), "{said}");
    assert_eq!(
        said,
        format!(
            "ai-tools: the client certificate for {host} cannot be used: it is an X.509 \
             version 1 certificate, which rustls does not accept; make a version 3 \
             certificate (e.g. `openssl x509 -req … -extfile FILE`, FILE with an extension \
             such as `extendedKeyUsage = clientAuth`)"
        )
    );
}
