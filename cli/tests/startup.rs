//! What `ai-tools mcp` says of itself when it starts (README "Logs"): one
//! INFO event, `gateway ready`, naming the alias store (without its
//! password), the replication wait in force and whether `auto` chose it,
//! whose aliases a request uses and the limits in force; and the WARN of
//! `--redis-wait-replicas auto` when a master has no replica. Real
//! `redis-server`s on loopback: a master with a replica, a master alone,
//! and a Redis Cluster of three masters with a replica each
//! (`scripts/redis-cluster.sh`). Without `redis-server` the tests say why
//! they skip, unless `AI_TOOLS_REQUIRE_REDIS` is set.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{BufRead as _, BufReader};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{links_mcp_command, links_server, workspace};

const PASSWORD: &str = "s3cret-of-the-store";

/// A `redis-server` of this test, killed and its directory removed when
/// dropped.
struct Redis {
    port: u16,
    child: Child,
    dir: PathBuf,
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn has_redis(test: &str) -> bool {
    let found = Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        let reason =
            "redis-server is not on the PATH (Debian's redis-server package; .ci/run installs it)";
        assert!(
            std::env::var_os("AI_TOOLS_REQUIRE_REDIS").is_none(),
            "AI_TOOLS_REQUIRE_REDIS is set, but {reason}"
        );
        eprintln!("skipped {test}: {reason}");
    }
    found
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap()
}

/// `redis-cli` against the server on `port`, with the password.
fn cli(port: u16, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .args(["-p", &port.to_string(), "--no-auth-warning", "-a", PASSWORD])
        .args(args)
        .output()
        .expect("redis-cli runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A password-protected server on a free port, a replica of `master`'s
/// when given; returns once it answers (and, a replica, once its master
/// has it in sync).
fn redis(test: &str, master: Option<&Redis>) -> Redis {
    let port = free_port();
    let dir = std::env::temp_dir().join(format!(
        "ai-tools-startup-{test}-{}-{port}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let mut command = Command::new("redis-server");
    command
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        // a replica's first sync at once, not after the default 5 s
        .args(["--repl-diskless-sync-delay", "0"])
        .args(["--requirepass", PASSWORD, "--masterauth", PASSWORD])
        .arg("--dir")
        .arg(&dir);
    if let Some(master) = master {
        command.args(["--replicaof", "127.0.0.1", &master.port.to_string()]);
    }
    let child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server starts");
    let server = Redis { port, child, dir };
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cli(port, &["PING"]).contains("PONG") {
        assert!(Instant::now() < deadline, "redis-server did not come up");
        std::thread::sleep(Duration::from_millis(20));
    }
    if let Some(master) = master {
        while !cli(master.port, &["INFO", "replication"]).contains("state=online") {
            assert!(Instant::now() < deadline, "the replica did not connect");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    server
}

/// `ai-tools mcp --http 127.0.0.1:0 --log-format json` with `flags` and
/// `env`: its log events up to `gateway ready` (the gateway is then
/// stopped).
fn startup_events(flags: &[&str], env: &[(&str, &str)]) -> Vec<Value> {
    let (runtime, server) = links_server();
    let grpc = format!("http://{}", server.addr);
    let mut child = links_mcp_command(&grpc)
        .args(["--http", "127.0.0.1:0", "--log-format", "json"])
        .args(flags)
        .envs(env.iter().copied())
        .env("RUST_LOG", "warn,ai_tools=info,proto_ai_tools=info")
        .current_dir(workspace())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gateway starts");
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut events = Vec::new();
    for line in stderr.lines() {
        let line = line.unwrap();
        let event: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("a log line is not JSON ({e}): {line}"));
        let ready = event["fields"]["message"] == "gateway ready";
        events.push(event);
        if ready {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    runtime.block_on(server.shutdown());
    events
}

fn ready_event(events: &[Value]) -> &Value {
    let ready: Vec<&Value> = events
        .iter()
        .filter(|e| e["fields"]["message"] == "gateway ready")
        .collect();
    assert_eq!(ready.len(), 1, "{events:#?}");
    assert_eq!(ready[0]["level"], "INFO");
    &ready[0]["fields"]
}

fn warnings(events: &[Value]) -> Vec<&Value> {
    events.iter().filter(|e| e["level"] == "WARN").collect()
}

#[test]
fn a_master_with_a_replica_waits_for_it_and_the_start_says_what_the_gateway_is() {
    let test = "master_with_replica";
    if !has_redis(test) {
        return;
    }
    let master = redis(test, None);
    let _replica = redis(test, Some(&master));
    let url = format!("redis://:{PASSWORD}@127.0.0.1:{}/0", master.port);
    // The URL from the environment, as a deployment passes a secret.
    let events = startup_events(
        &["--alias-scope-header", "X-User", "--max-sessions", "7"],
        &[("AI_TOOLS_REDIS", &url)],
    );
    let text = serde_json::to_string(&events).unwrap();
    assert!(!text.contains(PASSWORD), "the password is logged: {text}");
    assert!(warnings(&events).is_empty(), "{events:#?}");
    let ready = ready_event(&events);
    assert_eq!(ready["transport"], "http");
    assert!(
        ready["address"]
            .as_str()
            .is_some_and(|a| a.starts_with("http://127.0.0.1:") && a.ends_with("/mcp")),
        "{ready}"
    );
    assert_eq!(ready["alias_store"], "redis");
    assert_eq!(
        ready["alias_store_urls"],
        format!("redis://127.0.0.1:{}/0", master.port)
    );
    assert_eq!(ready["redis_wait_replicas"], 1);
    assert_eq!(ready["redis_wait_auto"], true);
    assert_eq!(ready["redis_wait_timeout_s"], 1.0);
    assert_eq!(ready["redis_fewest_replicas"], 1);
    assert_eq!(ready["sessions_roam"], true);
    assert_eq!(
        ready["alias_scope"], "session; stateless: header x-user",
        "{ready}"
    );
    assert_eq!(ready["max_sessions"], 7);
    assert_eq!(ready["max_body_bytes"], 327_680);
    assert_eq!(ready["max_connections"], 1024);
    assert_eq!(ready["session_idle_timeout_s"], 300.0);
    assert_eq!(ready["header_timeout_s"], 10.0);
    assert_eq!(ready["idle_timeout_s"], 60.0);
    assert_eq!(ready["call_timeout_s"], 50.0);
    assert_eq!(ready["max_aliases_per_scope"], 10_000);
    assert_eq!(ready["alias_idle_s"], 1800.0);
    assert_eq!(ready["cancel_on_disconnect"], true);
    assert_eq!(ready["drain_timeout_s"], 25.0);
    // Neither admin endpoints nor traces unless asked for.
    assert!(
        ready.get("admin").is_none() && ready.get("otlp_endpoint").is_none(),
        "{ready}"
    );

    // Told to wait for 2, of which the master has 1: said at start.
    // And the admin listener on port 0, as the MCP one (`--http
    // 127.0.0.1:0`): each gets a port of its own.
    let events = startup_events(
        &[
            "--redis-wait-replicas",
            "2",
            "--redis-wait-timeout",
            "0.25",
            "--admin",
            "127.0.0.1:0",
        ],
        &[("AI_TOOLS_REDIS", &url)],
    );
    let ready_fields = ready_event(&events);
    let admin = ready_fields["admin"].as_str().unwrap_or_default();
    assert!(
        admin.starts_with("http://127.0.0.1:") && !admin.ends_with(":0"),
        "{ready_fields}"
    );
    assert_eq!(ready_fields["redis_wait_replicas"], 2);
    assert_eq!(ready_fields["redis_wait_auto"], false);
    assert_eq!(ready_fields["redis_wait_timeout_s"], 0.25);
    let warned = warnings(&events);
    assert_eq!(warned.len(), 1, "{events:#?}");
    assert_eq!(
        warned[0]["fields"]["masters"],
        format!("redis://127.0.0.1:{}/0", master.port)
    );
}

#[test]
fn a_master_alone_waits_for_none_and_auto_says_what_a_crash_costs() {
    let test = "master_alone";
    if !has_redis(test) {
        return;
    }
    let master = redis(test, None);
    let url = format!("redis://:{PASSWORD}@127.0.0.1:{}", master.port);
    let events = startup_events(&["--single-user", "--redis", &url], &[]);
    let text = serde_json::to_string(&events).unwrap();
    assert!(!text.contains(PASSWORD), "the password is logged: {text}");
    let warned = warnings(&events);
    assert_eq!(warned.len(), 1, "{events:#?}");
    let warning = &warned[0]["fields"];
    assert_eq!(
        warning["masters"],
        format!("redis://127.0.0.1:{}", master.port)
    );
    let message = warning["message"].as_str().unwrap();
    assert!(
        message.contains("have no replica") && message.contains("lost"),
        "{message}"
    );
    let ready = ready_event(&events);
    assert_eq!(ready["redis_wait_replicas"], 0);
    assert_eq!(ready["redis_wait_auto"], true);
    assert_eq!(ready["redis_fewest_replicas"], 0);
    assert_eq!(ready["alias_scope"], "session; stateless: single user");
}

#[test]
fn in_memory_the_start_says_so_and_no_wait() {
    let events = startup_events(&[], &[]);
    let ready = ready_event(&events);
    assert_eq!(ready["alias_store"], "memory");
    assert!(ready.get("redis_wait_replicas").is_none(), "{ready}");
    assert!(ready.get("alias_store_urls").is_none(), "{ready}");
    assert_eq!(ready["sessions_roam"], false);
    assert_eq!(ready["alias_scope"], "session; stateless: none (refused)");
}

/// `scripts/redis-cluster.sh ACTION DIR` with `env`; its stdout.
fn cluster_script(action: &str, dir: &std::path::Path, env: &[(&str, &str)]) -> String {
    let out = Command::new("bash")
        .arg(workspace().join("scripts/redis-cluster.sh"))
        .arg(action)
        .arg(dir)
        .envs(env.iter().copied())
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "redis-cluster.sh {action}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn a_cluster_whose_masters_all_have_a_replica_waits_for_one() {
    let test = "cluster_with_replicas";
    if !has_redis(test) {
        return;
    }
    let dir = std::env::temp_dir().join(format!("ai-tools-startup-{test}-{}", std::process::id()));
    let urls = cluster_script("start", &dir, &[("REDIS_CLUSTER_REPLICAS", "1")]);
    let seeds: Vec<&str> = urls.split(',').collect();
    let events = startup_events(&["--redis-cluster", seeds[0]], &[]);
    cluster_script("stop", &dir, &[]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(warnings(&events).is_empty(), "{events:#?}");
    let ready = ready_event(&events);
    assert_eq!(ready["alias_store"], "redis-cluster");
    assert_eq!(ready["alias_store_urls"], seeds[0]);
    assert_eq!(ready["redis_wait_replicas"], 1);
    assert_eq!(ready["redis_wait_auto"], true);
    assert_eq!(ready["redis_fewest_replicas"], 1);
}
