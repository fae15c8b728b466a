//! Two `ai-tools mcp --http` gateways that share nothing but a Redis
//! Cluster, with no sticky routing: stateless requests (MCP 2026-07-28) of
//! four callers, each named by the header a trusted proxy would set, go to
//! either gateway in turn, and each caller sees one alias namespace of its
//! own, across both; when one gateway is killed, the other serves every
//! caller and every alias given out before.
//!
//! The cluster is the one at `AI_TOOLS_REDIS_CLUSTER_URLS` (`.ci/run` starts
//! it with `scripts/redis-cluster.sh`). Without it the test is skipped,
//! saying why, unless `AI_TOOLS_REQUIRE_REDIS_CLUSTER` is set: then it fails.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use serde_json::{Value, json};
use support::{links_server, post, start_gateway, status};

/// The cluster's seed URLs, or why there are none.
fn cluster_urls(test: &str) -> Option<Vec<String>> {
    match std::env::var("AI_TOOLS_REDIS_CLUSTER_URLS") {
        Ok(urls) if !urls.trim().is_empty() => {
            Some(urls.split(',').map(|u| u.trim().to_owned()).collect())
        }
        _ => {
            let reason = "AI_TOOLS_REDIS_CLUSTER_URLS is not set (scripts/redis-cluster.sh start DIR prints it; .ci/run does)";
            assert!(
                std::env::var_os("AI_TOOLS_REQUIRE_REDIS_CLUSTER").is_none(),
                "{test}: {reason}"
            );
            eprintln!("skipped {test}: {reason}");
            None
        }
    }
}

/// The scope header the gateways read.
const SCOPE_HEADER: &str = "x-principal";

/// A stateless `tools/call` of `tool` as `principal` at `addr`: the tool's
/// result (`isError` and all), or the protocol error.
fn stateless_call(addr: &str, principal: &str, tool: &str, arguments: Value) -> Value {
    let body = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": tool,
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    });
    let headers = format!(
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {tool}\r\n{SCOPE_HEADER}: {principal}\r\n"
    );
    let response = post(addr, &headers, &body.to_string());
    assert_eq!(status(&response), "200", "{response}");
    // A JSON body, or an event stream whose `data:` line with an id is the
    // JSON-RPC answer.
    let body = response.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    serde_json::from_str::<Value>(body.trim())
        .ok()
        .into_iter()
        .chain(
            response
                .lines()
                .filter_map(|line| line.strip_prefix("data: "))
                .filter_map(|data| serde_json::from_str::<Value>(data).ok()),
        )
        .find(|message| message.get("id").is_some())
        .unwrap_or_else(|| panic!("no answer in {response}"))
}

/// The text of a tool result.
fn text(answer: &Value) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn is_error(answer: &Value) -> bool {
    answer["result"]["isError"] == json!(true)
}

/// One caller's view: the links it created, by alias, with the destination
/// that makes each one recognisable in a later answer.
struct Caller {
    name: String,
    links: Vec<(String, String)>,
}

#[test]
fn two_gateways_on_one_redis_cluster_keep_one_namespace_per_caller_and_lose_nothing_when_one_dies()
{
    let test = "two_gateways_on_one_redis_cluster";
    let Some(urls) = cluster_urls(test) else {
        return;
    };
    let (_runtime, server) = links_server();
    let grpc = server.url();
    let mut flags = vec!["--alias-scope-header", SCOPE_HEADER];
    for url in &urls {
        flags.extend(["--redis-cluster", url.as_str()]);
    }
    let a = start_gateway(&grpc, &flags);
    let mut b = Some(start_gateway(&grpc, &flags));
    let gateway_a = a.addr.clone();
    let gateway_b = b.as_ref().map(|g| g.addr.clone()).unwrap_or_default();

    // Callers of this run only: the cluster outlives it.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let mut callers: Vec<Caller> = (0..4)
        .map(|n| Caller {
            name: format!("user-{n}-{}-{nanos}", std::process::id()),
            links: Vec::new(),
        })
        .collect();

    let (mut cross_attempts, mut resolutions, mut served_by_b) = (0, 0, 0usize);
    for call in 0..200usize {
        let who = call % 4;
        // Round robin over the gateways, each caller alternating between
        // them; from call 100 on gateway B is dead and A serves everyone.
        if call == 100 {
            drop(b.take());
        }
        let to_b = (call / 4) % 2 == 1 && b.is_some();
        let addr = if to_b { &gateway_b } else { &gateway_a };
        served_by_b += usize::from(to_b);
        let step = call / 4;
        let name = callers[who].name.clone();
        let held = callers[who].links.len();
        if step % 2 == 0 || held == 0 {
            // Caller 0 creates two at a time, so that the others' next
            // numbers exist, as caller 0's, when they try them below.
            for extra in 0..if who == 0 { 2 } else { 1 } {
                let destination = format!("https://{name}.example/{step}/{extra}");
                let answer = stateless_call(
                    addr,
                    &name,
                    "links_create",
                    json!({"destination": destination, "name": format!("call {call}")}),
                );
                let alias = answer["result"]["structuredContent"]["link"]["id"]
                    .as_str()
                    .unwrap_or_else(|| panic!("call {call}: no link id in {answer}"))
                    .to_owned();
                let links = &mut callers[who].links;
                assert_eq!(
                    alias,
                    format!("link-{}", links.len() + 1),
                    "call {call}: the caller's numbering goes on across both gateways"
                );
                links.push((alias, destination));
            }
        } else if who != 0 && step % 4 == 3 {
            // An alias this caller never got, which caller 0 holds.
            let foreign = format!("link-{}", held + 1);
            assert!(callers[0].links.len() > held, "caller 0 holds {foreign}");
            let answer = stateless_call(
                addr,
                &name,
                "links_update",
                json!({"link_id": foreign, "name": "stolen"}),
            );
            cross_attempts += 1;
            assert!(
                is_error(&answer) && text(&answer).contains(&foreign),
                "call {call}: {name} resolved {foreign}, which only caller 0 holds: {answer}"
            );
        } else {
            // An alias the caller got earlier, maybe from the other gateway.
            let (alias, destination) = callers[who].links[step % held].clone();
            let answer = stateless_call(
                addr,
                &name,
                "links_update",
                json!({"link_id": alias, "name": format!("renamed at call {call}")}),
            );
            assert!(!is_error(&answer), "call {call}: {alias}: {answer}");
            assert_eq!(
                answer["result"]["structuredContent"]["link"]["destination"],
                json!(destination),
                "call {call}: {alias} resolves to the link it was given out for"
            );
            resolutions += 1;
        }
    }
    assert!(b.is_none(), "gateway B was killed mid-run");
    assert!(served_by_b >= 40, "gateway B served {served_by_b} calls");
    assert!(
        cross_attempts >= 10,
        "{cross_attempts} cross-caller attempts"
    );
    assert!(resolutions >= 50, "{resolutions} resolutions");

    // After B's death every alias of every caller, given by either gateway,
    // still resolves through A.
    for caller in &callers {
        for (alias, destination) in &caller.links {
            let answer = stateless_call(
                &gateway_a,
                &caller.name,
                "links_update",
                json!({"link_id": alias, "name": "final"}),
            );
            assert_eq!(
                answer["result"]["structuredContent"]["link"]["destination"],
                json!(destination),
                "{}'s {alias} after gateway B died: {answer}",
                caller.name
            );
        }
    }
    drop(a);
    let _runtime_guard = server;
}

#[test]
fn a_gateway_that_cannot_tell_callers_apart_refuses_to_listen_beyond_loopback() {
    let (_runtime, server) = links_server();
    let grpc = server.url();
    for (flags, expected) in [
        (&[][..], "--alias-scope-header"),
        (&["--single-user"][..], "loopback"),
    ] {
        let output = support::links_mcp_command(&grpc)
            .args(["--http", "0.0.0.0:0"])
            .args(flags)
            .output()
            .expect("the gateway runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(stderr.contains(expected), "{flags:?}: {stderr}");
        assert!(!stderr.contains("serving"), "{flags:?}: {stderr}");
    }
    // With a scope header it may: the proxy in front tells callers apart.
    let mut gateway = support::links_mcp_command(&grpc)
        .args(["--http", "0.0.0.0:0", "--alias-scope-header", SCOPE_HEADER])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the gateway runs");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let still_serving = gateway.try_wait().expect("a status").is_none();
    let _ = gateway.kill();
    let _ = gateway.wait();
    assert!(
        still_serving,
        "the gateway with a scope header keeps serving"
    );
}

#[test]
fn stateless_requests_without_a_configured_scope_header_are_refused_whatever_they_send() {
    let (_runtime, server) = links_server();
    let grpc = server.url();
    // No --alias-scope-header: the header a client sends is not trusted.
    let gateway = start_gateway(&grpc, &[]);
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/list",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }},
    });
    let response = post(
        &gateway.addr,
        &format!(
            "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n{SCOPE_HEADER}: alice\r\n"
        ),
        &body.to_string(),
    );
    assert_eq!(status(&response), "400", "{response}");
    assert!(response.contains("initialize"), "{response}");
    assert!(
        response.contains(r#""id":1"#),
        "the refusal answers the request's id: {response}"
    );

    // A session id with the stateless protocol's header is refused: rmcp
    // would serve it outside the session while the id named its aliases.
    let started = support::initialize(&gateway.addr, "");
    let session = started
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .unwrap_or_else(|| panic!("a session id in {started}"))
        .trim()
        .to_owned();
    let mixed = post(
        &gateway.addr,
        &format!(
            "Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n"
        ),
        &body.to_string(),
    );
    assert_eq!(status(&mixed), "400", "{mixed}");
    assert!(
        mixed.contains("stateless and carries no Mcp-Session-Id"),
        "{mixed}"
    );

    // A scope value is hashed, never spliced into a store key: values with
    // a store's delimiters and hash-tag braces are callers like any other.
    let scoped = start_gateway(&grpc, &["--alias-scope-header", SCOPE_HEADER]);
    let forger = "alice}:{bob";
    let created = stateless_call(
        &scoped.addr,
        forger,
        "links_create",
        json!({"destination": "https://forger.example/", "name": "f"}),
    );
    assert_eq!(
        created["result"]["structuredContent"]["link"]["id"],
        json!("link-1")
    );
    for other in ["alice", "bob", "alice}", "{bob", "Alice}:{bob"] {
        let answer = stateless_call(
            &scoped.addr,
            other,
            "links_update",
            json!({"link_id": "link-1", "name": "x"}),
        );
        assert!(
            is_error(&answer),
            "{other:?} reached {forger:?}'s link-1: {answer}"
        );
    }
    // A value past the bound is refused, not cut.
    let long = "x".repeat(proto_ai_tools_mcp::MAX_SCOPE_HEADER_BYTES + 1);
    let response = post(
        &scoped.addr,
        &format!(
            "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n{SCOPE_HEADER}: {long}\r\n"
        ),
        &body.to_string(),
    );
    assert_eq!(status(&response), "400", "{response}");
    assert!(response.contains("too long"), "{response}");
    // --single-user on loopback: one local scope, kept across requests.
    let single = start_gateway(&grpc, &["--single-user"]);
    let created = stateless_call(
        &single.addr,
        "ignored",
        "links_create",
        json!({"destination": "https://local.example/", "name": "mine"}),
    );
    assert_eq!(
        created["result"]["structuredContent"]["link"]["id"],
        json!("link-1")
    );
    let again = stateless_call(
        &single.addr,
        "someone-else",
        "links_update",
        json!({"link_id": "link-1", "name": "still mine"}),
    );
    assert_eq!(
        again["result"]["structuredContent"]["link"]["destination"],
        json!("https://local.example/"),
        "{again}"
    );
}
