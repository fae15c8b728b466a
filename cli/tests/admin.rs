//! `ai-tools mcp --admin ADDR`: the metrics a real Prometheus (Debian's
//! `prometheus` package, which `.ci/run` installs) scrapes from the admin
//! listener hold the calls, the errors and the latencies this test made,
//! by the names and labels of OpenTelemetry's MCP conventions; `/healthz`
//! and `/readyz` say what a load balancer needs, the backend's loss
//! included; and the MCP port serves none of it. Without `prometheus` on
//! the PATH the test says why it skips, unless `AI_TOOLS_REQUIRE_PROMETHEUS`
//! is set (`.ci/run` sets it): then it fails.
//!
//! And the drain at `SIGTERM`, against the backend's own log: readiness
//! off, new requests `503` with `Retry-After`, the calls in flight
//! answered, the one that outlives the drain told it did not finish, none
//! run twice, and the process exits 0.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

// The fault suite's backend: it logs each call it runs, and holds the ones
// named `hold:cN` (until released) and `stuck:cN` (past any drain).
#[allow(dead_code)]
#[path = "fault_suite/backend.rs"]
mod backend;

use std::io::Write as _;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{
    free_loopback_addr, get, initialize, links_server, open_session, post, start_gateway, status,
};

/// A `prometheus` server of this test, killed when dropped.
struct Prometheus {
    child: Child,
    addr: SocketAddr,
    dir: std::path::PathBuf,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Prometheus {
    /// Prometheus scraping `target` every second, once it is ready; `None`
    /// (the test skips, saying why) without the binary.
    fn scraping(test: &str, target: SocketAddr) -> Option<Self> {
        let found = Command::new("prometheus")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            let reason =
                "prometheus is not on the PATH (Debian's prometheus package; .ci/run installs it)";
            assert!(
                std::env::var_os("AI_TOOLS_REQUIRE_PROMETHEUS").is_none(),
                "AI_TOOLS_REQUIRE_PROMETHEUS is set, but {reason}"
            );
            eprintln!("skipped {test}: {reason}");
            return None;
        }
        let dir = std::env::temp_dir().join(format!(
            "ai-tools-prometheus-{}-{}",
            std::process::id(),
            target.port()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: ai-tools\n    static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .unwrap();
        let addr = free_loopback_addr();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("prometheus.log")).unwrap())
            .spawn()
            .expect("prometheus starts");
        let prometheus = Self { child, addr, dir };
        let began = Instant::now();
        while get(addr, "/-/ready").0 != 200 {
            assert!(
                began.elapsed() < Duration::from_secs(30),
                "prometheus was not ready within 30 s: {}",
                prometheus.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(prometheus)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("prometheus.log")).unwrap_or_default()
    }

    /// The value of an instant PromQL `query` that yields one number, or
    /// `None` while it yields nothing.
    fn number(&self, query: &str) -> Option<f64> {
        let (code, body) = get(
            self.addr,
            &format!("/api/v1/query?query={}", encoded(query)),
        );
        assert_eq!(code, 200, "{query}: {body}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        let result = answer["data"]["result"].as_array().unwrap();
        assert!(result.len() <= 1, "{query} yields several series: {body}");
        result
            .first()
            .map(|series| series["value"][1].as_str().unwrap().parse().unwrap())
    }

    /// [`number`](Self::number), once it is `expected` (Prometheus scrapes
    /// every second); what it was last, after 30 s.
    fn number_once(&self, query: &str, expected: f64) -> Option<f64> {
        let began = Instant::now();
        loop {
            let value = self.number(query);
            if value == Some(expected) || began.elapsed() > Duration::from_secs(30) {
                return value;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

/// `query` as a URL's query value.
fn encoded(query: &str) -> String {
    query
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// The aliases (`link-3`, `theme-1`, ...) a tool's answer shows, as JSON
/// strings.
fn aliases_shown(answer: &str) -> Vec<String> {
    let mut found = Vec::new();
    for prefix in ["link", "theme", "step"] {
        let quoted = format!("\"{prefix}-");
        for (at, _) in answer.match_indices(&quoted) {
            let digits: String = answer[at + quoted.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if !digits.is_empty() {
                found.push(format!("{prefix}-{digits}"));
            }
        }
    }
    found
}

/// A `tools/call` of `tool` in `session`; the answer, and how long the
/// client waited for it.
fn call(addr: &str, session: &str, id: usize, tool: &str) -> (String, Duration) {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"destination":"https://example.com/{id}"}}}}}}"#
    );
    let started = Instant::now();
    let response = post(addr, &format!("Mcp-Session-Id: {session}\r\n"), &body);
    (response, started.elapsed())
}

#[test]
fn prometheus_scrapes_the_calls_errors_and_latencies_made_and_readiness_follows_the_backend() {
    let test = "prometheus_scrapes_the_calls_errors_and_latencies_made";
    let (runtime, server) = links_server();
    let admin = free_loopback_addr();
    let gateway = start_gateway(&server.url(), &["--admin", &admin.to_string()]);
    let Some(prometheus) = Prometheus::scraping(test, admin) else {
        return;
    };

    // Alive and ready, and each check said.
    assert_eq!(get(admin, "/healthz"), (200, "ok\n".to_owned()));
    let (code, verbose) = get(admin, "/readyz?verbose");
    assert_eq!(code, 200, "{verbose}");
    assert!(
        verbose.contains("[+]serving ok") && verbose.contains("[+]backend ok"),
        "{verbose}"
    );
    // And what the gateway is, as its ready line says it.
    assert!(
        verbose.contains(&format!("[=]admin: http://{admin}\n"))
            && verbose.contains("[=]otlp_endpoint: none\n")
            && verbose.contains("[=]drain_timeout_s: 25\n"),
        "{verbose}"
    );
    // The MCP port serves none of it.
    let mcp: SocketAddr = gateway.addr.parse().unwrap();
    let (_, on_mcp) = get(mcp, "/metrics");
    assert!(
        !on_mcp.contains("mcp_server_operation_duration"),
        "{on_mcp}"
    );

    const OK_CALLS: usize = 20;
    const UNKNOWN_TOOL_CALLS: usize = 3;
    const UNREACHABLE_CALLS: usize = 4;
    let session = open_session(&gateway.addr);
    let mut latencies = Vec::new();
    let mut shown = std::collections::BTreeSet::new();
    for id in 0..OK_CALLS {
        let (answer, took) = call(&gateway.addr, &session, 10 + id, "links_create");
        assert!(
            answer.contains(r#""isError":false"#) || !answer.contains("isError"),
            "{answer}"
        );
        latencies.push(took.as_secs_f64());
        shown.extend(aliases_shown(&answer));
    }
    // One alias sent back, which resolves.
    let update = r#"{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"links_update","arguments":{"link_id":"link-1","destination":"https://example.com/moved"}}}"#;
    let updated = post(
        &gateway.addr,
        &format!("Mcp-Session-Id: {session}\r\n"),
        update,
    );
    assert!(
        updated.contains("link-1") && !updated.contains(r#""isError":true"#),
        "{updated}"
    );
    for id in 0..UNKNOWN_TOOL_CALLS {
        let (answer, _) = call(&gateway.addr, &session, 100 + id, "no_such_tool");
        assert!(answer.contains("-32602"), "{answer}");
    }
    // Refused by the edge, by the limit that did: a session it does not
    // hold, twice, and a body that is not JSON.
    for _ in 0..2 {
        let (answer, _) = call(&gateway.addr, "no-such-session", 300, "links_create");
        assert_eq!(status(&answer), "404", "{answer}");
    }
    let not_json = post(
        &gateway.addr,
        &format!("Mcp-Session-Id: {session}\r\n"),
        "{not json",
    );
    assert_eq!(status(&not_json), "400", "{not_json}");
    // A destructive tool needs a person's approval, which this client
    // cannot ask for: refused, and the decision counted.
    let (refused, _) = call(&gateway.addr, &session, 400, "workflow_steps_delete");
    assert!(refused.contains("needs a person's approval"), "{refused}");
    // The backend goes away: its calls are errors the model is told of,
    // with the transport's UNAVAILABLE, and readiness says so.
    runtime.block_on(server.shutdown());
    for id in 0..UNREACHABLE_CALLS {
        let (answer, _) = call(&gateway.addr, &session, 200 + id, "links_create");
        assert!(answer.contains(r#""isError":true"#), "{answer}");
    }
    let (code, verbose) = get(admin, "/readyz?verbose");
    assert_eq!(code, 503, "{verbose}");
    assert!(verbose.contains("[-]backend failed"), "{verbose}");
    assert_eq!(get(admin, "/readyz").1, "not ready\n");

    // Counted as made, by how each ended.
    let tool_calls = r#"sum(ai_tools_tool_calls_total{gen_ai_tool_name="links_create"})"#;
    let all = (OK_CALLS + UNREACHABLE_CALLS) as f64;
    assert_eq!(
        prometheus.number_once(tool_calls, all),
        Some(all),
        "{}",
        prometheus.log()
    );
    let expect = |query: &str, expected: usize| {
        assert_eq!(prometheus.number(query), Some(expected as f64), "{query}");
    };
    expect(
        r#"sum(ai_tools_tool_calls_total{gen_ai_tool_name="links_create",outcome="ok"})"#,
        OK_CALLS,
    );
    expect(
        r#"sum(ai_tools_tool_calls_total{gen_ai_tool_name="links_create",outcome="unreachable"})"#,
        UNREACHABLE_CALLS,
    );
    expect(
        r#"sum(mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="links_create",gen_ai_operation_name="execute_tool",error_type="tool_error",rpc_grpc_status_code="14"})"#,
        UNREACHABLE_CALLS,
    );
    expect(
        r#"sum(mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="_OTHER",error_type="-32602",rpc_response_status_code="-32602"})"#,
        UNKNOWN_TOOL_CALLS,
    );
    expect(
        r#"sum(mcp_server_operation_duration_seconds_count{mcp_method_name="initialize"})"#,
        1,
    );
    expect(
        r#"sum(ai_tools_backend_duration_seconds_count{gen_ai_tool_name="links_create",rpc_grpc_status_code="0"})"#,
        OK_CALLS,
    );
    expect(
        r#"sum(ai_tools_gateway_duration_seconds_count{gen_ai_tool_name="links_create"})"#,
        OK_CALLS + UNREACHABLE_CALLS,
    );
    expect(
        r#"sum(ai_tools_http_refusals_total{limit="unknown_session"})"#,
        2,
    );
    expect(r#"sum(ai_tools_http_refusals_total{limit="not_json"})"#, 1);
    expect(
        r#"sum(ai_tools_consent_decisions_total{gen_ai_tool_name="workflow_steps_delete",decision="unsupported"})"#,
        1,
    );
    // Read at the scrape: the one session this test opened, and its scope.
    expect("ai_tools_mcp_sessions", 1);
    expect("ai_tools_alias_scopes", 1);
    // Each alias the answers showed was given once, and the one sent back
    // resolved; none expired or was lost.
    assert!(shown.len() >= OK_CALLS, "{shown:?}");
    expect("ai_tools_aliases_given_total", shown.len());
    expect("ai_tools_aliases_resolved_total", 1);
    expect("ai_tools_aliases_expired_total", 0);
    expect("ai_tools_aliases_lost_total", 0);

    // The buckets hold the latencies measured here: the server's time for
    // a call is within the client's, so each bucket counts at least the
    // calls the client saw end within its bound, and all of them at +Inf.
    let ok_calls = r#"mcp_server_operation_duration_seconds_bucket{mcp_method_name="tools/call",gen_ai_tool_name="links_create",error_type="",rpc_grpc_status_code="0"}"#;
    let (code, body) = get(
        prometheus.addr,
        &format!(
            "/api/v1/query?query={}",
            encoded(&format!("sum by (le) ({ok_calls})"))
        ),
    );
    assert_eq!(code, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    let buckets: Vec<(String, f64)> = answer["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|series| {
            (
                series["metric"]["le"].as_str().unwrap().to_owned(),
                series["value"][1].as_str().unwrap().parse().unwrap(),
            )
        })
        .collect();
    assert!(buckets.len() > 10, "{body}");
    for (le, count) in &buckets {
        let bound: f64 = if le == "+Inf" {
            f64::INFINITY
        } else {
            le.parse().unwrap()
        };
        let within = latencies.iter().filter(|took| **took <= bound).count() as f64;
        assert!(
            *count >= within,
            "bucket le={le} counts {count} calls, but {within} ended within it as the client saw them ({latencies:?})"
        );
        if le == "+Inf" {
            assert_eq!(*count, OK_CALLS as f64, "{body}");
        }
    }
    drop(gateway);
}

/// A `links_create` named `name` (`cN`, `hold:cN` or `stuck:cN`: the
/// backend logs it as call N) in `session`; the whole response.
fn create(addr: &str, session: &str, id: usize, name: &str) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"links_create","arguments":{{"destination":"https://example.com/{id}","name":"{name}"}}}}}}"#
    );
    post(addr, &format!("Mcp-Session-Id: {session}\r\n"), &body)
}

/// Waits up to 10 s for `done`.
fn wait_until(what: &str, done: impl Fn() -> bool) {
    let began = Instant::now();
    while !done() {
        assert!(began.elapsed() < Duration::from_secs(10), "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sigterm_drains_calls_in_flight_refuses_new_ones_and_tells_a_call_past_the_drain_it_did_not_finish()
 {
    let served = backend::serve().unwrap();
    let admin = free_loopback_addr();
    let mut gateway = start_gateway(
        &served.url,
        &["--admin", &admin.to_string(), "--drain-timeout", "2"],
    );
    let session = open_session(&gateway.addr);
    // Two calls in flight: one the backend answers during the drain, one
    // it holds past it.
    let in_flight = [(1, "hold:c1"), (2, "stuck:c2")].map(|(id, name)| {
        let (addr, session) = (gateway.addr.clone(), session.clone());
        std::thread::spawn(move || create(&addr, &session, id, name))
    });
    wait_until("the backend holds both calls", || {
        served.backend.held() == 2
    });
    let sent = Command::new("kill")
        .args(["-TERM", &gateway.child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let stopping = Instant::now();
    wait_until("readiness turns off", || get(admin, "/readyz").0 == 503);
    let (_, verbose) = get(admin, "/readyz?verbose");
    assert!(verbose.contains("[-]draining"), "{verbose}");

    // A new request, in the session or out of it, is refused and told when
    // to come back; it never reaches the backend.
    let refused = create(&gateway.addr, &session, 3, "c3");
    assert_eq!(status(&refused), "503", "{refused}");
    assert!(
        refused.to_ascii_lowercase().contains("retry-after: 1\r\n"),
        "{refused}"
    );
    assert!(refused.contains("is stopping"), "{refused}");
    assert_eq!(status(&initialize(&gateway.addr, "")), "503");

    // The call the backend answers now is answered in full.
    served.backend.release();
    let [answered, stuck] = in_flight.map(|call| call.join().unwrap());
    assert_eq!(status(&answered), "200", "{answered}");
    assert!(
        answered.contains("link-1") && !answered.contains(r#""isError":true"#),
        "{answered}"
    );
    // The one past the drain is told it did not finish, after the drain's
    // 2 s, as a tool error the model can act on.
    assert!(
        stuck.contains(r#""isError":true"#) && stuck.contains("did not finish"),
        "{stuck}"
    );
    assert!(
        stuck.contains("may or may not have taken effect"),
        "{stuck}"
    );
    let exit = gateway.child.wait().unwrap();
    let took = stopping.elapsed();
    assert!(exit.success(), "the gateway exited with {exit}");
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(6),
        "the stop took {took:?}, for a drain timeout of 2 s"
    );

    // The backend ran each call once, and never the refused one.
    let mut calls: Vec<u64> = served.backend.log().iter().map(|e| e.call).collect();
    calls.sort_unstable();
    assert_eq!(calls, vec![1, 2]);
}

/// Runs `host` (an SDK client script, given the gateway's MCP URL last)
/// through a drain: it starts `held` calls the backend holds and prints
/// `started`; the gateway is sent SIGTERM; once readiness is off the host
/// is told to go on (a line on its stdin) and calls again; then the
/// backend answers the held calls. Returns what the host printed (JSON)
/// and the calls the backend ran, in order.
fn through_a_drain(host: &mut Command, flags: &[&str], held: usize) -> (Value, Vec<u64>) {
    let served = backend::serve().unwrap();
    let admin = free_loopback_addr();
    let mut all = vec!["--admin".to_owned(), admin.to_string()];
    all.extend(flags.iter().map(|f| (*f).to_owned()));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let mut gateway = start_gateway(&served.url, &all);
    let mut host = host
        .arg(format!("http://{}/mcp", gateway.addr))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(host.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    assert_eq!(line.trim(), "started");
    wait_until("the backend holds the hosts' calls", || {
        served.backend.held() == held
    });
    let sent = Command::new("kill")
        .args(["-TERM", &gateway.child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    wait_until("readiness turns off", || get(admin, "/readyz").0 == 503);
    writeln!(host.stdin.as_mut().unwrap()).unwrap();
    // The late calls are answered before the held ones end.
    std::thread::sleep(Duration::from_millis(300));
    served.backend.release();
    line.clear();
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    let answers: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
    assert!(host.wait().unwrap().success(), "{answers}");
    assert!(gateway.child.wait().unwrap().success(), "{answers}");
    let calls = served.backend.log().iter().map(|e| e.call).collect();
    (answers, calls)
}

/// A host's call in flight at the SIGTERM was answered in full; the one it
/// sent during the drain was refused at once with the 503's sentence.
fn assert_drained(answers: &Value) {
    let in_flight = &answers["in_flight"];
    assert_eq!(
        in_flight["is_error"]
            .as_bool()
            .or(in_flight["isError"].as_bool()),
        Some(false),
        "{answers}"
    );
    assert!(
        in_flight["text"]
            .as_str()
            .unwrap_or_default()
            .contains("link-"),
        "{answers}"
    );
    let late = answers["during_drain"].to_string();
    assert!(late.contains("is stopping"), "{answers}");
}

/// The official Python SDK's client calling while the gateway drains: the
/// call it had in flight is answered in full, the one it sends after the
/// SIGTERM fails at once with the 503's sentence (it never hangs), and
/// only the first reaches the backend.
#[test]
fn the_python_sdk_keeps_its_call_in_flight_and_hears_the_refusal_while_the_gateway_drains() {
    let Some(python) = support::python_importing("mcp") else {
        return;
    };
    let mut host = Command::new(python);
    host.arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/drain/client.py"));
    let (answers, calls) = through_a_drain(&mut host, &[], 1);
    assert_drained(&answers);
    assert_eq!(
        calls,
        vec![1],
        "only the call in flight reached the backend"
    );
}

/// The same with the official TypeScript SDKs, in both eras at once: a
/// session (`@modelcontextprotocol/sdk`) and stateless requests
/// (`@modelcontextprotocol/client`).
#[test]
fn the_typescript_sdks_keep_their_calls_in_flight_and_hear_the_refusal_in_both_eras() {
    let node = match proto_ai_tools_tests::support::node_at_least(20) {
        Ok(node) => node,
        Err(reason) if !proto_ai_tools_tests::support::node_required() => {
            eprintln!("SKIPPED: {reason}");
            return;
        }
        Err(reason) => panic!("AI_TOOLS_REQUIRE_NODE is set: {reason}"),
    };
    let node_dir = support::workspace().join("tests/node");
    if !node_dir
        .join("node_modules/@modelcontextprotocol/client")
        .is_dir()
    {
        assert!(
            !proto_ai_tools_tests::support::node_required(),
            "tests/node is not installed (npm ci)"
        );
        eprintln!("SKIPPED: tests/node is not installed (npm ci)");
        return;
    }
    let mut host = Command::new(node);
    host.arg(node_dir.join("drain_host.mjs"))
        .current_dir(&node_dir);
    let (answers, mut calls) =
        through_a_drain(&mut host, &["--alias-scope-header", "x-principal"], 2);
    for era in ["handshake", "stateless"] {
        assert_drained(&answers[era]);
    }
    calls.sort_unstable();
    assert_eq!(
        calls,
        vec![1, 2],
        "only the calls in flight reached the backend"
    );
}
