//! Nothing internal reaches the model (README "Logs"): when the backend
//! cannot be reached or the alias store stops answering, the model's text
//! says what happened and what to do, with no address, port or system
//! error, and the gateway's JSON logs carry one WARN `tool call failed`
//! with the stable `outcome` and the cause, beside the INFO `tool call`
//! with the same outcome. Real failures: a backend port nothing listens
//! on, and a `redis-server` killed between two calls.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{BufRead as _, BufReader, Lines, Write as _};
use std::net::TcpListener;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{links_mcp_command, links_server};

/// A gateway over stdio with JSON logs, driven one call at a time.
struct Gateway {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

impl Gateway {
    fn start(grpc: &str, flags: &[&str]) -> Self {
        let mut child = links_mcp_command(grpc)
            .args(["--stdio", "--log-format", "json"])
            .args(flags)
            .env("RUST_LOG", "warn,ai_tools=info,proto_ai_tools=info")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the gateway starts");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut gateway = Self {
            child,
            stdin,
            stdout,
            next_id: 1,
        };
        gateway.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "failure-logs-test", "version": "1"}}),
        );
        gateway.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        gateway
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        for line in self.stdout.by_ref() {
            let message: Value = serde_json::from_str(&line.unwrap()).unwrap();
            if message["id"] == id {
                return message;
            }
        }
        panic!("the gateway ended before answering {method}");
    }

    /// A `tools/call`: its text, and whether it is an error.
    fn call(&mut self, tool: &str, arguments: Value) -> (String, bool) {
        let answer = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let result = &answer["result"];
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no text: {answer}"))
            .to_owned();
        (text, result["isError"] == true)
    }

    /// Closes stdin; the log events the gateway wrote.
    fn stop(mut self) -> Vec<Value> {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = self.child.kill();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut self.child.stderr.take().unwrap(), &mut stderr).unwrap();
        stderr
            .lines()
            .map(|line| {
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("a log line is not JSON ({e}): {line}"))
            })
            .collect()
    }
}

/// Asserts that `text`, told to the model, holds nothing internal.
fn assert_nothing_internal(text: &str, port: u16) {
    for internal in [
        "127.0.0.1",
        &port.to_string(),
        "os error",
        "refused",
        "Connection",
        "broken pipe",
        "Moved",
    ] {
        assert!(
            !text.contains(internal),
            "the model is told `{internal}`: {text}"
        );
    }
}

/// The WARN `tool call failed` events and the INFO `tool call` events of `tool`.
fn failure_events<'a>(events: &'a [Value], tool: &str) -> (Vec<&'a Value>, Vec<&'a Value>) {
    let of = |message: &str, level: &str| -> Vec<&'a Value> {
        events
            .iter()
            .filter(|e| {
                e["level"] == level
                    && e["fields"]["message"] == message
                    && e["fields"]["tool"] == tool
            })
            .collect()
    };
    (of("tool call failed", "WARN"), of("tool call", "INFO"))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap()
}

#[test]
fn a_backend_nothing_listens_on_is_told_without_its_address_and_logged_at_warn() {
    let port = free_port();
    let mut gateway = Gateway::start(&format!("http://127.0.0.1:{port}"), &[]);
    let (text, is_error) =
        gateway.call("links_create", json!({"destination": "https://x.example"}));
    let events = gateway.stop();
    assert!(is_error, "{text}");
    assert!(
        text.contains("could not reach its service") && text.contains("nothing was sent"),
        "{text}"
    );
    assert_nothing_internal(&text, port);

    let (warned, info) = failure_events(&events, "links_create");
    assert_eq!(warned.len(), 1, "one WARN a failure: {events:#?}");
    assert_eq!(warned[0]["fields"]["outcome"], "unreachable");
    let cause = warned[0]["fields"]["cause"].as_str().unwrap();
    assert!(
        cause.contains(&format!("127.0.0.1:{port}")) && cause.contains("refused"),
        "the cause says where and why: {cause}"
    );
    assert_eq!(info.len(), 1, "{events:#?}");
    assert_eq!(info[0]["fields"]["outcome"], "unreachable");
}

/// A `redis-server` of this test, killed when dropped.
struct Redis(Child, std::path::PathBuf);

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
        let _ = std::fs::remove_dir_all(&self.1);
    }
}

#[test]
fn a_store_stopped_mid_run_is_told_without_its_cause_and_logged_at_warn() {
    let found = Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        let reason = "redis-server is not on the PATH (.ci/run installs it)";
        assert!(
            std::env::var_os("AI_TOOLS_REQUIRE_REDIS").is_none(),
            "AI_TOOLS_REQUIRE_REDIS is set, but {reason}"
        );
        eprintln!("skipped: {reason}");
        return;
    }
    let port = free_port();
    let dir = std::env::temp_dir().join(format!("ai-tools-failure-logs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no", "--dir"])
        .arg(&dir)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut redis = Redis(child, dir);
    let url = format!("redis://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "redis-server did not come up");
        std::thread::sleep(Duration::from_millis(20));
    }

    let (runtime, server) = links_server();
    let admin = support::free_loopback_addr();
    let mut gateway = Gateway::start(
        &format!("http://{}", server.addr),
        &["--redis", &url, "--admin", &admin.to_string()],
    );
    let (text, is_error) =
        gateway.call("links_create", json!({"destination": "https://x.example"}));
    assert!(!is_error && text.contains("link-1"), "{text}");

    // The store dies between two calls.
    let _ = redis.0.kill();
    let _ = redis.0.wait();
    let (before, before_error) = gateway.call(
        "links_update",
        json!({"link_id": "link-1", "name": "renamed"}),
    );
    let (after, after_error) =
        gateway.call("links_create", json!({"destination": "https://y.example"}));
    // The metrics count the store's round trips, and each call the store
    // failed by its outcome.
    let (code, metrics) = support::get(admin, "/metrics");
    assert_eq!(code, 200, "{metrics}");
    let value = |series: &str| -> f64 {
        metrics
            .lines()
            .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {series} in {metrics}"))
    };
    assert!(
        value("ai_tools_store_round_trips_total ") >= 2.0,
        "{metrics}"
    );
    for outcome in ["store_before_call", "store_after_call"] {
        let series = format!(
            "ai_tools_tool_calls_total{{gen_ai_tool_name=\"{}\",outcome=\"{outcome}\"}} ",
            if outcome == "store_before_call" {
                "links_update"
            } else {
                "links_create"
            }
        );
        assert_eq!(value(&series), 1.0, "{metrics}");
    }
    let events = gateway.stop();
    runtime.block_on(server.shutdown());

    assert!(before_error, "{before}");
    assert!(
        before.contains("the alias store is unavailable") && before.contains("nothing was sent"),
        "{before}"
    );
    assert_nothing_internal(&before, port);
    assert!(after_error, "{after}");
    assert!(
        after.contains("the answer is withheld") && after.contains("do not repeat it blindly"),
        "{after}"
    );
    assert_nothing_internal(&after, port);

    for (tool, outcome) in [
        ("links_update", "store_before_call"),
        ("links_create", "store_after_call"),
    ] {
        let (warned, info) = failure_events(&events, tool);
        assert_eq!(warned.len(), 1, "one WARN for {tool}: {events:#?}");
        assert_eq!(warned[0]["fields"]["outcome"], outcome);
        let cause = warned[0]["fields"]["cause"].as_str().unwrap();
        assert!(!cause.is_empty(), "{cause}");
        assert!(
            info.iter().any(|e| e["fields"]["outcome"] == outcome),
            "{events:#?}"
        );
    }
}
