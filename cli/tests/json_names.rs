//! One name per field, end to end through `ai-tools mcp --stdio` against
//! the links service: a field read in one tool's result is sent, under the
//! name the result gave it, as an argument of another tool.
//!
//! By default (`--json-names proto`) a result's fields are the proto names
//! the arguments use: `workflow_steps_create` answers with `link_id`, and
//! `links_update` takes `link_id`, which its input schema lists. With
//! `--json-names camel` the result says `linkId`, protojson's name, which
//! the input schema does not list (the executor still accepts it). Either
//! way each result holds only the properties its `outputSchema` names.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{BufRead as _, BufReader, Lines, Write as _};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use serde_json::{Value, json};
use support::{links_mcp_command, links_server};

/// `ai-tools mcp --stdio --output-schemas` over links.proto with `flags`,
/// initialized.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
    id: u64,
}

impl Session {
    fn start(grpc: &str, flags: &[&str]) -> Self {
        let mut child = links_mcp_command(grpc)
            .args(["--stdio", "--output-schemas"])
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut session = Session {
            child,
            stdin,
            stdout,
            id: 0,
        };
        session.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "json-names-test", "version": "1"}}),
        );
        session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        session
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// The `result` of request `method` with `params`.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        for line in self.stdout.by_ref() {
            let message: Value = serde_json::from_str(&line.unwrap()).unwrap();
            if message["id"] == id {
                assert!(message.get("error").is_none(), "{method}: {message}");
                return message["result"].clone();
            }
        }
        panic!("the gateway closed without answering {method}");
    }

    /// The structured content of a successful call of `tool`.
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert_ne!(result["isError"], true, "{tool}: {result}");
        result["structuredContent"].clone()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// Every key of `value`'s objects, at any depth, is a property its schema
/// (`schema`, a result schema of this proto: no `$ref` for the default
/// host) names there.
fn keys_are_named(value: &Value, schema: &Value, at: &str) {
    if let (Value::Object(object), Some(properties)) = (value, schema["properties"].as_object()) {
        for (key, inner) in object {
            let named = properties
                .get(key)
                .unwrap_or_else(|| panic!("{at}.{key} is not in the output schema: {schema}"));
            keys_are_named(inner, named, &format!("{at}.{key}"));
        }
    }
}

/// One session under `flags`: the link's id read from a workflow step's
/// result under `link_key`, then sent to `links_update` under that key.
fn a_result_field_feeds_the_next_call(flags: &[&str], link_key: &str, listed: bool) {
    let (_runtime, server) = links_server();
    let grpc = format!("http://{}", server.addr);
    let mut session = Session::start(&grpc, flags);
    let tools = session.request("tools/list", json!({}))["tools"].clone();
    let tool = |name: &str| {
        tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {tools}"))
            .clone()
    };

    let created = session.call(
        "links_create",
        json!({"destination": "https://example.com/a", "name": "A", "tags": []}),
    );
    keys_are_named(
        &created,
        &tool("links_create")["outputSchema"],
        "links_create",
    );
    let link = created["link"]["id"].as_str().unwrap().to_owned();

    let step = session.call(
        "workflow_steps_create",
        json!({"link_id": link, "action": "ACTION_WEBHOOK"}),
    );
    let schema = tool("workflow_steps_create")["outputSchema"].clone();
    keys_are_named(&step, &schema, "workflow_steps_create");
    assert_eq!(step["step"][link_key], link, "{step}");

    // The field as the result named it, sent on.
    let update = tool("links_update");
    assert_eq!(
        update["inputSchema"]["properties"].get(link_key).is_some(),
        listed,
        "{link_key} in {}",
        update["inputSchema"]
    );
    let mut arguments = json!({"name": "renamed"});
    arguments[link_key] = step["step"][link_key].clone();
    let updated = session.call("links_update", arguments);
    keys_are_named(&updated, &update["outputSchema"], "links_update");
    assert_eq!(updated["link"]["id"], link, "{updated}");
    assert_eq!(updated["link"]["name"], "renamed", "{updated}");
}

#[test]
fn by_default_a_result_says_the_names_the_arguments_take() {
    a_result_field_feeds_the_next_call(&[], "link_id", true);
    a_result_field_feeds_the_next_call(&["--json-names", "proto"], "link_id", true);
}

#[test]
fn with_camel_names_a_result_says_protojson_names() {
    a_result_field_feeds_the_next_call(&["--json-names", "camel"], "linkId", false);
}
