//! A person's consent before destructive calls, end to end: `ai-tools mcp`
//! over stdio on a copy of `links.proto` whose `links_update` says
//! `consent: BLOCK`, calling a tonic links server, driven by the official
//! Python MCP SDK (`consent/driver.py`). The backend's log of requests says
//! what reached the service; the gateway's log holds one `consent` event per
//! decision.
//!
//! Needs a Python with the MCP SDK: `AI_TOOLS_PYTHON`, else
//! `target/py-venv/bin/python`. Without one the tests say why and pass,
//! unless `AI_TOOLS_REQUIRE_MCP` is set, as in CI.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use proto_ai_tools_tests::Received;
use serde_json::Value;
use support::{links_server, workspace};

/// A copy of `links.proto` in a directory of its own (its include root):
/// `links_update` blocked, `workflow_steps_delete` with a title, the
/// `destination` of `links_create` sensitive.
fn consent_protos(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("ai-tools-consent-{name}-{}", std::process::id()));
    let dir = root.join("links/v1");
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(workspace().join("proto/links/v1/links.proto")).unwrap();
    let blocked = text.replacen(
        "      name: \"links_update\"\n",
        "      name: \"links_update\"\n      consent: BLOCK\n",
        1,
    );
    let titled = blocked.replacen(
        "      name: \"workflow_steps_delete\"\n",
        "      name: \"workflow_steps_delete\"\n      title: \"Delete a workflow step\"\n",
        1,
    );
    let titled = titled.replacen(
        "  string destination = 1;\n",
        "  string destination = 1 [(ai.tools.v1.tool_field).sensitive = true];\n",
        1,
    );
    assert_ne!(titled, text, "the copy differs");
    assert!(
        titled.contains("consent: BLOCK") && titled.contains("title: \"Delete a workflow step\"")
    );
    std::fs::write(dir.join("links.proto"), titled).unwrap();
    root
}

/// What the driver printed, and the gateway's log.
struct Run {
    out: Value,
    log: String,
}

/// Runs the driver in `mode` (and `driver_flags`) against the gateway on
/// `grpc` with `flags`.
fn drive(
    python: &Path,
    name: &str,
    grpc: &str,
    mode: &str,
    driver_flags: &[&str],
    flags: &[&str],
) -> Run {
    let root = consent_protos(name);
    let log = root.join("gateway.log");
    let output = Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/consent/driver.py"))
        .arg(mode)
        .args(driver_flags)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_ai-tools"))
        .args(["mcp", "--grpc", grpc, "--stdio", "--proto"])
        .arg(root.join("links/v1/links.proto"))
        .arg("-I")
        .arg(&root)
        .arg("-I")
        .arg(workspace().join("proto"))
        .args(flags)
        .env("CONSENT_GATEWAY_LOG", &log)
        .output()
        .expect("the driver runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the driver failed:\n{stdout}\n{stderr}"
    );
    let out: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&root);
    Run { out, log }
}

/// How many `DeleteWorkflowStep` and `UpdateLink` requests reached the service.
fn deletes_and_updates(received: &[Received]) -> (usize, usize) {
    let deletes = received
        .iter()
        .filter(|r| matches!(r, Received::DeleteWorkflowStep(_)))
        .count();
    let updates = received
        .iter()
        .filter(|r| matches!(r, Received::UpdateLink(_)))
        .count();
    (deletes, updates)
}

/// The log's `consent` events, each line as written.
fn consent_events(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|line| line.contains("\"target\":\"proto_ai_tools::consent\""))
        .collect()
}

fn call<'a>(out: &'a Value, name: &str) -> (bool, &'a str) {
    (
        out[name]["is_error"].as_bool().unwrap(),
        out[name]["text"].as_str().unwrap(),
    )
}

#[test]
fn without_elicitation_destructive_calls_are_refused_and_blocked_tools_never_run() {
    let Some(python) = support::python_importing("mcp") else {
        return;
    };
    let (runtime, server) = links_server();
    let run = drive(
        &python,
        "refuse",
        &server.url(),
        "none",
        &[],
        &["--log-format", "json"],
    );
    let (is_error, text) = call(&run.out, "delete");
    assert!(is_error, "{text}");
    assert!(
        text.contains("needs a person's approval") && text.contains("client that can ask"),
        "{text}"
    );
    // A model-set argument is no approval.
    let (is_error, text) = call(&run.out, "delete_confirm");
    assert!(
        is_error && text.contains("needs a person's approval"),
        "{text}"
    );
    let (is_error, text) = call(&run.out, "update");
    assert!(
        is_error && text.contains("blocked by this server's policy"),
        "{text}"
    );
    assert_eq!(run.out["asked"], serde_json::json!([]), "nothing was asked");
    assert_eq!(
        deletes_and_updates(&server.backend.received()),
        (0, 0),
        "nothing refused reached the service"
    );
    // One audit event per decision, without the arguments' values.
    let events = consent_events(&run.log);
    assert_eq!(events.len(), 3, "{}", run.log);
    let unsupported = events
        .iter()
        .filter(|e| e.contains("\"outcome\":\"unsupported\""))
        .count();
    let blocked = events
        .iter()
        .filter(|e| e.contains("\"outcome\":\"refused-by-policy\""))
        .count();
    assert_eq!((unsupported, blocked), (2, 1), "{events:?}");
    for event in &events {
        assert!(event.contains("\"service_called\":false"), "{event}");
        for value in ["step-", "link-", "example.com"] {
            assert!(!event.contains(value), "an argument's value in {event}");
        }
    }
    // Each of those calls' audit event carries its decision, as an error
    // that called no gRPC method.
    let audited: Vec<Value> = run
        .log
        .lines()
        .filter(|line| line.contains("\"target\":\"ai_tools::audit\""))
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["fields"].clone())
        .filter(|fields| fields["consent"] != "none")
        .collect();
    let decisions: Vec<&str> = audited
        .iter()
        .map(|fields| fields["consent"].as_str().unwrap())
        .collect();
    assert_eq!(
        decisions.iter().filter(|d| **d == "unsupported").count(),
        2,
        "{audited:?}"
    );
    assert_eq!(decisions.len(), 3, "{audited:?}");
    assert!(decisions.contains(&"refused-by-policy"), "{audited:?}");
    for fields in &audited {
        assert_eq!(fields["error"], true, "{fields}");
        assert!(fields.get("rpc.method").is_none(), "{fields}");
        for value in ["step-", "link-", "example.com"] {
            assert!(
                !fields.to_string().contains(value),
                "an argument's value in {fields}"
            );
        }
    }
    runtime.block_on(server.shutdown());
}

#[test]
fn the_operator_may_allow_calls_no_one_can_approve() {
    let Some(python) = support::python_importing("mcp") else {
        return;
    };
    let (runtime, server) = links_server();
    let run = drive(
        &python,
        "allow",
        &server.url(),
        "none",
        &[],
        &["--confirm-unsupported", "allow", "--log-format", "json"],
    );
    assert_eq!(call(&run.out, "delete"), (false, "{}"));
    // The explicit `consent: BLOCK` still wins.
    let (is_error, text) = call(&run.out, "update");
    assert!(is_error && text.contains("blocked"), "{text}");
    // The call with a stray `confirm` argument is run, and refused by the
    // tool's schema before the service: only the first delete reaches it.
    let (is_error, text) = call(&run.out, "delete_confirm");
    assert!(is_error && text.contains("confirm"), "{text}");
    let (deletes, updates) = deletes_and_updates(&server.backend.received());
    assert_eq!((deletes, updates), (1, 0));
    let events = consent_events(&run.log);
    let allowed = events
        .iter()
        .filter(|e| {
            e.contains("\"outcome\":\"unsupported\"") && e.contains("\"service_called\":true")
        })
        .count();
    assert_eq!(allowed, 2, "{events:?}");
    runtime.block_on(server.shutdown());
}

#[test]
fn confirm_none_asks_for_nothing_but_the_tools_own_policy() {
    let Some(python) = support::python_importing("mcp") else {
        return;
    };
    let (runtime, server) = links_server();
    let run = drive(
        &python,
        "none",
        &server.url(),
        "none",
        &[],
        &["--confirm", "none", "--log-format", "json"],
    );
    assert_eq!(call(&run.out, "delete"), (false, "{}"));
    let (is_error, text) = call(&run.out, "update");
    assert!(is_error && text.contains("blocked"), "{text}");
    assert_eq!(deletes_and_updates(&server.backend.received()), (1, 0));
    let events = consent_events(&run.log);
    assert_eq!(
        events.len(),
        1,
        "only the blocked call is a decision: {events:?}"
    );
    runtime.block_on(server.shutdown());
}

/// The elicitation requests the server sent, as the driver recorded them.
fn asked(out: &Value) -> Vec<&Value> {
    out["asked"].as_array().unwrap().iter().collect()
}

#[test]
fn a_client_with_elicitation_is_asked_and_only_accepted_calls_reach_the_service() {
    let Some(python) = support::python_importing("mcp") else {
        return;
    };
    for (mode, sentence, deletes) in [
        ("accept", None, 1),
        (
            "decline",
            Some("The user declined this call of `workflow_steps_delete`"),
            0,
        ),
        (
            "cancel",
            Some("dismissed the request to approve this call of `workflow_steps_delete`"),
            0,
        ),
    ] {
        let (runtime, server) = links_server();
        let run = drive(
            &python,
            mode,
            &server.url(),
            mode,
            &[],
            &["--log-format", "json"],
        );
        let (is_error, text) = call(&run.out, "delete");
        match sentence {
            None => assert_eq!((is_error, text), (false, "{}"), "{mode}"),
            Some(sentence) => {
                assert!(is_error && text.contains(sentence), "{mode}: {text}");
                assert!(
                    text.contains("the service was not called"),
                    "{mode}: {text}"
                );
            }
        }
        // Asked twice: for each delete; never for the blocked update.
        let asked = asked(&run.out);
        assert_eq!(asked.len(), 2, "{mode}: {asked:?}");
        let message = asked[0]["message"].as_str().unwrap();
        assert!(
            message.contains("\u{201c}Delete a workflow step\u{201d} (workflow_steps_delete)"),
            "{message}"
        );
        // The step as the model knows it, an alias, never the id behind it.
        assert!(message.contains("step_id: step-1"), "{message}");
        assert!(!message.contains('{'), "{message}");
        let schema = &asked[0]["schema"];
        assert_eq!(
            schema["properties"]["confirm"]["type"], "boolean",
            "{schema}"
        );
        assert_eq!(
            schema["required"],
            serde_json::json!(["confirm"]),
            "{schema}"
        );
        let (is_error, text) = call(&run.out, "update");
        assert!(is_error && text.contains("blocked"), "{text}");
        let received = server.backend.received();
        assert_eq!(deletes_and_updates(&received), (deletes, 0), "{mode}");
        if let Some(Received::DeleteWorkflowStep(request)) = received
            .iter()
            .find(|r| matches!(r, Received::DeleteWorkflowStep(_)))
        {
            assert!(
                !message.contains(&request.step_id),
                "the id behind the alias: {message}"
            );
        }
        let outcome = match mode {
            "accept" => "accepted",
            "decline" => "declined",
            _ => "cancelled",
        };
        let events = consent_events(&run.log);
        let of_mode = events
            .iter()
            .filter(|e| e.contains(&format!("\"outcome\":\"{outcome}\"")))
            .count();
        assert_eq!(of_mode, 2, "{mode}: {events:?}");
        runtime.block_on(server.shutdown());
    }
}

#[test]
fn tool_searchs_call_tool_asks_as_a_direct_call_does() {
    let Some(python) = support::python_importing("mcp") else {
        return;
    };
    for (mode, deletes) in [("accept", 1), ("decline", 0)] {
        let (runtime, server) = links_server();
        let run = drive(
            &python,
            &format!("search-{mode}"),
            &server.url(),
            mode,
            &["--call-tool"],
            &["--tool-search"],
        );
        let (is_error, text) = call(&run.out, "delete");
        assert_eq!(is_error, mode == "decline", "{mode}: {text}");
        assert_eq!(asked(&run.out).len(), 2, "{mode}: {:?}", run.out["asked"]);
        assert_eq!(
            deletes_and_updates(&server.backend.received()),
            (deletes, 0),
            "{mode}"
        );
        runtime.block_on(server.shutdown());
    }
}

/// The stateless protocol (2026-07-28): the question goes back with the
/// result, and the approval comes back with a signed state that opens
/// only for the call it was asked about, by the caller who was asked, once.
#[test]
fn a_stateless_client_approves_by_return_and_forged_approvals_are_refused() {
    let Some(python) = support::python_importing("mcp, httpx2") else {
        return;
    };
    let (runtime, server) = links_server();
    // A key of the operator's: the one every replica would share.
    let key = std::env::temp_dir().join(format!("ai-tools-consent-key-{}", std::process::id()));
    std::fs::write(&key, "a key of forty bytes, shared by replicas\n").unwrap();
    let key_flag = key.display().to_string();
    let gateway = support::start_gateway(
        &server.url(),
        &[
            "--alias-scope-header",
            "x-user",
            "--consent-key-file",
            &key_flag,
        ],
    );
    let output = Command::new(&python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/consent/stateless.py"))
        .arg(format!("http://{}/mcp", gateway.addr))
        .output()
        .expect("the driver runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the driver failed:\n{stdout}\n{stderr}"
    );
    let out: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(out["protocol"], "2026-07-28");
    // The SDK's own loop: asked, accepted, run.
    assert_eq!(out["sdk_loop"]["is_error"], false, "{out}");
    let first = &out["first_leg"];
    assert_eq!(first["input_required"], true, "{out}");
    assert_eq!(first["keys"], serde_json::json!(["consent"]));
    assert_eq!(first["has_state"], true);
    let message = first["message"].as_str().unwrap();
    assert!(
        message.contains("run workflow_steps_delete?") && message.contains("step_id: step-2"),
        "{message}"
    );
    for (leg, why) in [
        ("changed_arguments", "was not given for this call"),
        ("made_up_state", "was not given for this call"),
        ("another_caller", "was not given for this call"),
        ("replayed", "was used already"),
    ] {
        let text = out[leg]["text"].as_str().unwrap_or_default();
        assert_eq!(out[leg]["is_error"], true, "{leg}: {out}");
        assert!(
            text.contains(why) && text.contains("the service was not called"),
            "{leg}: {text}"
        );
    }
    assert_eq!(out["redeemed"]["is_error"], false, "{out}");
    let declined = out["declined"]["text"].as_str().unwrap();
    assert!(declined.contains("The user declined"), "{declined}");
    // Asked by the SDK's loop twice (the accepted and the declined call).
    assert_eq!(out["asked"].as_array().unwrap().len(), 2, "{out}");
    // Only step 1 (the SDK's loop) and step 2 (its own state, once) reached
    // the service.
    assert_eq!(deletes_and_updates(&server.backend.received()), (2, 0));
    drop(gateway);
    let _ = std::fs::remove_file(&key);
    runtime.block_on(server.shutdown());
}

/// A key too short to sign with stops the gateway at start, saying so.
#[test]
fn a_short_consent_key_stops_the_gateway() {
    let key = std::env::temp_dir().join(format!("ai-tools-short-key-{}", std::process::id()));
    std::fs::write(&key, "too short").unwrap();
    let output = support::links_mcp_command("http://127.0.0.1:1")
        .arg("--stdio")
        .arg("--consent-key-file")
        .arg(&key)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the gateway runs");
    let _ = std::fs::remove_file(&key);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the consent key cannot sign approvals"),
        "{stderr}"
    );
}

/// `--confirm writes` asks before every tool that may change something; a
/// field marked `tool_field.sensitive` is shown redacted.
#[test]
fn confirm_writes_asks_before_every_change_and_redacts_sensitive_fields() {
    let Some(python) = support::python_importing("mcp") else {
        return;
    };
    let (runtime, server) = links_server();
    let run = drive(
        &python,
        "writes",
        &server.url(),
        "accept",
        &[],
        &["--confirm", "writes"],
    );
    let asked: Vec<&str> = asked(&run.out)
        .iter()
        .map(|a| a["message"].as_str().unwrap())
        .collect();
    // links_create, two workflow_steps_create, two workflow_steps_delete.
    assert_eq!(asked.len(), 5, "{asked:?}");
    assert!(asked[0].contains("run links_create?"), "{}", asked[0]);
    assert!(asked[0].contains("destination: [redacted]"), "{}", asked[0]);
    assert!(
        asked.iter().all(|a| !a.contains("example.com/consent")),
        "{asked:?}"
    );
    assert!(
        asked[1].contains("run workflow_steps_create?") && asked[1].contains("link_id: link-1"),
        "{}",
        asked[1]
    );
    assert_eq!(call(&run.out, "delete"), (false, "{}"));
    assert_eq!(deletes_and_updates(&server.backend.received()), (1, 0));
    runtime.block_on(server.shutdown());
}

/// The official TypeScript SDKs as hosts (`tests/node/consent_host.mjs`):
/// `@modelcontextprotocol/sdk` in the handshake era, asked during the
/// call, and `@modelcontextprotocol/client` in the stateless era, asked by
/// return; each handler accepts, declines or cancels, and only the
/// accepted deletes reach the service.
#[test]
fn the_typescript_sdks_are_asked_in_both_eras() {
    let node = match proto_ai_tools_tests::support::node_at_least(20) {
        Ok(node) => node,
        Err(reason) if !proto_ai_tools_tests::support::node_required() => {
            eprintln!("SKIPPED: {reason}");
            return;
        }
        Err(reason) => panic!("AI_TOOLS_REQUIRE_NODE is set: {reason}"),
    };
    let node_dir = workspace().join("tests/node");
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
    for (mode, sentence, deletes) in [
        ("accept", None, 2),
        ("decline", Some("The user declined"), 0),
        ("cancel", Some("dismissed the request to approve"), 0),
    ] {
        let (runtime, server) = links_server();
        let gateway =
            support::start_gateway(&server.url(), &["--alias-scope-header", "x-principal"]);
        let output = Command::new(&node)
            .arg(node_dir.join("consent_host.mjs"))
            .arg(format!("http://{}/mcp", gateway.addr))
            .arg(mode)
            .current_dir(&node_dir)
            .output()
            .expect("node runs");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "{mode}: the host failed:\n{stdout}\n{stderr}"
        );
        let out: Value =
            serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
        for era in ["handshake", "stateless"] {
            let result = &out[era]["delete"];
            let text = result["text"].as_str().unwrap();
            match sentence {
                None => assert_eq!(result["isError"], false, "{mode} {era}: {text}"),
                Some(sentence) => {
                    assert_eq!(result["isError"], true, "{mode} {era}: {text}");
                    assert!(text.contains(sentence), "{mode} {era}: {text}");
                }
            }
            let asked = out[era]["asked"].as_array().unwrap();
            assert_eq!(asked.len(), 1, "{mode} {era}: {out}");
            assert!(
                asked[0].as_str().unwrap().contains("step_id: step-1"),
                "{mode} {era}: {out}"
            );
        }
        assert_eq!(out["stateless"]["protocol"], "2026-07-28", "{out}");
        assert_eq!(
            deletes_and_updates(&server.backend.received()),
            (deletes, 0),
            "{mode}"
        );
        drop(gateway);
        runtime.block_on(server.shutdown());
    }
}
