//! What a method's options give its tool: hints, deadline, examples,
//! aliases, output schema, sensitive fields and consent.

use super::*;

#[test]
fn tool_hints_from_the_proto() {
    let body = r#"
message Req {}
message Resp {}
service S {
  rpc Get(Req) returns (Resp) {
    option idempotency_level = NO_SIDE_EFFECTS;
    option (ai.context.v1.rpc_tool) = { name: "get" description: "Get it." title: "Get a thing" };
  }
  rpc Put(Req) returns (Resp) {
    option idempotency_level = IDEMPOTENT;
    option (ai.context.v1.rpc_tool) = { name: "put" description: "Put it." destructive: true };
  }
  rpc Add(Req) returns (Resp) {
    option (ai.context.v1.rpc_tool) = { name: "add" description: "Add it." destructive: false };
  }
  rpc Old(Req) returns (Resp) {
    option deprecated = true;
    option (ai.context.v1.rpc_tool) = { name: "old" description: "Still a tool: it is annotated." };
  }
}
"#;
    let tools = tools(body);
    let hints: Vec<_> = tools.iter().map(|t| (t.name.as_str(), t.hints)).collect();
    let h = |read_only, idempotent, destructive| ToolHints {
        read_only,
        idempotent,
        destructive,
    };
    assert_eq!(
        hints,
        [
            ("get", h(true, true, None)),
            ("put", h(false, true, Some(true))),
            ("add", h(false, false, Some(false))),
            ("old", h(false, false, None)),
        ]
    );
    assert_eq!(tools[0].title.as_deref(), Some("Get a thing"));
    assert_eq!(tools[1].title, None);
}

#[test]
fn diagnostic_read_only_and_destructive() {
    let diags = diagnostics(
        r#"
message Req {}
service S {
  rpc Get(Req) returns (Req) {
    option idempotency_level = NO_SIDE_EFFECTS;
    option (ai.context.v1.rpc_tool) = { name: "get" description: "Get it." destructive: true };
  }
}
"#,
    );
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(
        diags[0].contains("`idempotency_level = NO_SIDE_EFFECTS` and `destructive: true`"),
        "{diags:?}"
    );
    assert!(diags[0].starts_with("test.proto:"), "{diags:?}");
}

#[test]
fn rpc_tool_timeout_is_the_tools_deadline() {
    let tools = tools(
        r#"
message Req {}
service S {
  rpc Slow(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = { name: "slow" description: "Slow." timeout: { seconds: 300 } };
  }
  rpc Quick(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = { name: "quick" description: "Quick." timeout: { nanos: 300000000 } };
  }
  rpc Plain(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = { name: "plain" description: "Plain." };
  }
}
"#,
    );
    let timeouts: Vec<_> = tools.iter().map(|t| (t.name.as_str(), t.timeout)).collect();
    assert_eq!(
        timeouts,
        [
            ("slow", Some(std::time::Duration::from_secs(300))),
            ("quick", Some(std::time::Duration::from_millis(300))),
            ("plain", None),
        ]
    );
}

#[test]
fn diagnostic_timeout_that_is_no_deadline() {
    for (timeout, why) in [
        ("{}", "`timeout` 0s is not a deadline"),
        ("{ seconds: -5 }", "`timeout` -5s is not a deadline"),
        ("{ nanos: -1 }", "`timeout` -0.000000001s is not a deadline"),
        (
            "{ seconds: 86401 }",
            "`timeout` 86401s is longer than a tool's deadline may be, 86400s (one day)",
        ),
        (
            "{ seconds: 1 nanos: 1000000000 }",
            "nanos 1000000000, out of range",
        ),
    ] {
        let diags = diagnostics(&format!(
            r#"
message Req {{}}
service S {{
  rpc Get(Req) returns (Req) {{
    option (ai.context.v1.rpc_tool) = {{ name: "get" description: "Get it." timeout: {timeout} }};
  }}
}}
"#
        ));
        assert_eq!(diags.len(), 1, "{timeout}: {diags:?}");
        assert!(diags[0].contains(why), "{timeout}: {diags:?}");
        assert!(diags[0].starts_with("test.proto:"), "{diags:?}");
        // Located on the option's line.
        let line: u32 = diags[0]
            .split(':')
            .nth(1)
            .and_then(|l| l.parse().ok())
            .expect("located");
        assert!(line >= 5, "{diags:?}");
    }
}

#[test]
fn rpc_tool_examples_are_checked_and_kept() {
    let body = r#"
message Req {
  string name = 1;
  optional int64 size = 2;
  map<string, string> labels = 3;
}
service S {
  rpc Put(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = {
      name: "put"
      description: "Put it."
      strict: true
      examples: '{"name": "a", "labels": {}}'
      examples: '{"name": "b", "size": 9007199254740993, "labels": {"team": "web"}}'
    };
  }
  rpc Get(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = { name: "get" description: "Get it." };
  }
}
"#;
    let tools = tools(body);
    assert_eq!(
        tools[0].examples,
        [
            json!({"name": "a", "labels": {}}),
            json!({"name": "b", "size": 9_007_199_254_740_993_i64, "labels": {"team": "web"}}),
        ]
    );
    assert!(tools[1].examples.is_empty());
    // Anthropic strict gives the map as entries: so do its examples.
    assert_eq!(
        tools[0].input_examples(),
        Some(json!([
            {"name": "a", "labels": []},
            {"name": "b", "size": 9_007_199_254_740_993_i64, "labels": [{"key": "team", "value": "web"}]}
        ]))
    );
    assert_eq!(tools[0].violations(), Vec::<String>::new());
    assert_eq!(tools[1].input_examples(), None);
    let (rendered, _) = tools[0].render_checked();
    assert_eq!(
        rendered.input_examples.as_deref(),
        Some(
            r#"[{"name":"a","labels":[]},{"name":"b","size":9007199254740993,"labels":[{"key":"team","value":"web"}]}]"#
        )
    );
}

#[test]
fn diagnostic_example_that_does_not_fit() {
    let diags = diagnostics(
        r#"
message Req {
  string name = 1;
  repeated int32 sizes = 2;
}
service S {
  rpc Put(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = {
      name: "put"
      description: "Put it."
      examples: '{"name": "a", "sizes": [1, "two"]}'
      examples: '{"name": "b", "sizes": []}'
      examples: 'name=c'
    };
  }
}
"#,
    );
    assert_eq!(
        diags,
        [
            "test.proto:13:5: rpc `Put`: example 1 (`{\"name\": \"a\", \"sizes\": [1, \"two\"]}`) does not fit the tool: `sizes[1]` is `two`, which is not a whole number in digits; send a whole number",
            "test.proto:13:5: rpc `Put`: example 3 (`name=c`) does not fit the tool: the example is not JSON (expected ident at line 1 column 2); write the tool's arguments as one JSON object, e.g. `{\"name\": \"value\"}`",
        ]
    );
}

#[test]
fn aliases_and_output_prefix() {
    let body = r#"
message Item {
  string id = 1 [(ai.tools.v1.tool_field).alias_prefix = "item"];
  repeated string tag_ids = 2 [(ai.tools.v1.tool_field).alias_prefix = "tag"];
  repeated Item children = 3;
}
message Req {
  string item_id = 1 [(ai.tools.v1.tool_field).alias_prefix = "item"];
  Item item = 2;
  Item other = 3;
}
message Resp { string note = 1; repeated Item items = 2; }
message Wrapped { string id = 1 [(ai.tools.v1.tool_field).alias_prefix = "wrap"]; Item item = 2; }
service S {
  rpc A(Req) returns (Resp) { option (ai.tools.v1.rpc_tool) = { name: "a" description: "A." }; }
  rpc B(Req) returns (Wrapped) { option (ai.tools.v1.rpc_tool) = { name: "b" description: "B." }; }
}"#;
    let source = format!(
        "syntax = \"proto3\";\npackage t;\nimport \"ai/tools/v1/rpc_tool.proto\";\nimport \"ai/tools/v1/annotations.proto\";\n{body}"
    );
    let pool = compile(&source);
    let tools = tools_in_file(&pool, "test.proto").expect("valid");
    let alias = |m: &str, f: &str, p: &str| FieldAlias {
        message: m.into(),
        field: f.into(),
        prefix: p.into(),
    };
    assert_eq!(
        tools[0].request_aliases,
        [
            alias("t.Req", "item_id", "item"),
            alias("t.Item", "id", "item"),
            alias("t.Item", "tag_ids", "tag"),
        ]
    );
    assert_eq!(
        tools[0].response_aliases,
        [
            alias("t.Item", "id", "item"),
            alias("t.Item", "tag_ids", "tag")
        ]
    );
    assert_eq!(tools[0].output_prefix.as_deref(), Some("item"));
    assert_eq!(tools[1].output_prefix.as_deref(), Some("wrap"));
    assert_eq!(tools[1].service, "t.S");
    assert_eq!(tools[1].method, "B");
    assert_eq!(tools[1].request, "t.Req");
    assert_eq!(tools[1].response, "t.Wrapped");
}

#[test]
fn rpc_tool_output_schema_is_read_as_written() {
    let body = r#"
message Req { string name = 1; }
service S {
  rpc On(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = { name: "on" description: "On." output_schema: true };
  }
  rpc Off(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = { name: "off" description: "Off." output_schema: false };
  }
  rpc Unset(Req) returns (Req) {
    option (ai.context.v1.rpc_tool) = { name: "unset" description: "Unset." };
  }
}
"#;
    let chosen: Vec<Option<bool>> = tools(body).iter().map(|t| t.output_schema).collect();
    assert_eq!(chosen, [Some(true), Some(false), None]);
}

#[test]
fn sensitive_fields_are_redacted_at_any_depth_in_either_naming() {
    let pool = crate::test_support::compile(
        r#"
syntax = "proto3";
package t;
import "ai/tools/v1/annotations.proto";
message Card { string number = 1 [(ai.tools.v1.tool_field).sensitive = true]; string holder_name = 2; }
message Req {
  string api_key = 1 [(ai.tools.v1.tool_field).sensitive = true];
  Card card = 2;
  repeated Card cards = 3;
  map<string, Card> by_name = 4;
  string note = 5;
}
"#,
    );
    let req = pool.get_message_by_name("t.Req").unwrap();
    assert!(super::is_sensitive(
        &req.get_field_by_name("api_key").unwrap()
    ));
    assert!(!super::is_sensitive(
        &req.get_field_by_name("note").unwrap()
    ));
    let mut value = json!({
        "apiKey": "k-1",
        "card": {"number": "4111", "holderName": "A"},
        "cards": [{"number": "4222"}],
        "by_name": {"a": {"number": "4333"}},
        "note": "hello",
    });
    super::redact(&mut value, &req);
    assert_eq!(
        value,
        json!({
            "apiKey": "[redacted]",
            "card": {"number": "[redacted]", "holderName": "A"},
            "cards": [{"number": "[redacted]"}],
            "by_name": {"a": {"number": "[redacted]"}},
            "note": "hello",
        })
    );
    // A map as `{key, value}` entries, as strict dialects send it.
    let mut entries = json!({"by_name": [{"key": "a", "value": {"number": "4444"}}]});
    super::redact(&mut entries, &req);
    assert_eq!(entries["by_name"][0]["value"]["number"], "[redacted]");
}

/// Issue 40: where a method sets no `idempotency_level` and no
/// `destructive`, its `google.api.http` verb speaks for it: `get` is
/// read-only, `delete` destructive. What is written explicitly wins.
#[test]
fn tool_hints_from_the_http_binding_where_nothing_else_is_said() {
    const HTTP: &str =
        include_str!("../../../../proto/third_party/googleapis/google/api/http.proto");
    const ANNOTATIONS: &str =
        include_str!("../../../../proto/third_party/googleapis/google/api/annotations.proto");
    let body = r#"
import "google/api/annotations.proto";
message Req {}
message Resp {}
service S {
  rpc Get(Req) returns (Resp) {
    option (google.api.http) = { get: "/v1/things/{name}" };
    option (ai.context.v1.rpc_tool) = { name: "get" description: "Get it." };
  }
  rpc Delete(Req) returns (Resp) {
    option (google.api.http) = { delete: "/v1/things/{name}" };
    option (ai.context.v1.rpc_tool) = { name: "delete" description: "Delete it." };
  }
  rpc Create(Req) returns (Resp) {
    option (google.api.http) = { post: "/v1/things" body: "*" };
    option (ai.context.v1.rpc_tool) = { name: "create" description: "Create it." };
  }
  rpc Fetch(Req) returns (Resp) {
    option idempotency_level = IDEMPOTENT;
    option (google.api.http) = { get: "/v1/things:fetch" };
    option (ai.context.v1.rpc_tool) = { name: "fetch" description: "Fetch it." };
  }
  rpc Touch(Req) returns (Resp) {
    option (google.api.http) = { get: "/v1/things:touch" };
    option (ai.context.v1.rpc_tool) = { name: "touch" description: "Touch it." destructive: true };
  }
  rpc Forget(Req) returns (Resp) {
    option (google.api.http) = { delete: "/v1/cache/{name}" };
    option (ai.context.v1.rpc_tool) = { name: "forget" description: "Forget it." destructive: false };
  }
  rpc Peek(Req) returns (Resp) {
    option idempotency_level = NO_SIDE_EFFECTS;
    option (google.api.http) = { delete: "/v1/odd/{name}" };
    option (ai.context.v1.rpc_tool) = { name: "peek" description: "Peek." };
  }
}
"#;
    let source = format!("{HEADER}{body}");
    let pool = compile_files(
        &[
            ("test.proto", &source),
            ("google/api/http.proto", HTTP),
            ("google/api/annotations.proto", ANNOTATIONS),
        ],
        "test.proto",
    );
    let tools = tools_in_file(&pool, "test.proto").expect("valid");
    let hints: Vec<_> = tools.iter().map(|t| (t.name.as_str(), t.hints)).collect();
    let h = |read_only, idempotent, destructive| ToolHints {
        read_only,
        idempotent,
        destructive,
    };
    assert_eq!(
        hints,
        [
            ("get", h(true, true, None)),
            ("delete", h(false, false, Some(true))),
            ("create", h(false, false, None)),
            ("fetch", h(false, true, None)),
            ("touch", h(false, false, Some(true))),
            ("forget", h(false, false, Some(false))),
            ("peek", h(true, true, None)),
        ]
    );
}

/// `rpc_tool.consent` is the tool's own consent policy; unset (and the
/// unspecified value) leaves it to the server.
#[test]
fn consent_from_the_proto() {
    let body = r#"
message Req {}
message Resp {}
service S {
  rpc A(Req) returns (Resp) { option (ai.context.v1.rpc_tool) = { name: "a" description: "A." consent: ALLOW }; }
  rpc C(Req) returns (Resp) { option (ai.context.v1.rpc_tool) = { name: "c" description: "C." consent: CONFIRM }; }
  rpc B(Req) returns (Resp) { option (ai.context.v1.rpc_tool) = { name: "b" description: "B." consent: BLOCK }; }
  rpc U(Req) returns (Resp) { option (ai.context.v1.rpc_tool) = { name: "u" description: "U." consent: CONSENT_UNSPECIFIED }; }
  rpc N(Req) returns (Resp) { option (ai.context.v1.rpc_tool) = { name: "n" description: "N." }; }
}
"#;
    let consent: Vec<_> = tools(body)
        .into_iter()
        .map(|t| (t.name, t.consent))
        .collect();
    use crate::ConsentPolicy::*;
    assert_eq!(
        consent,
        [
            ("a".to_owned(), Some(Allow)),
            ("c".to_owned(), Some(Confirm)),
            ("b".to_owned(), Some(Block)),
            ("u".to_owned(), None),
            ("n".to_owned(), None),
        ]
    );
}
