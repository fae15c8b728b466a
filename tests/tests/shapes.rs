//! Inbound shaping undone by descriptor, over the in-process transport: the
//! echo service returns the request it decoded, so the output shows exactly
//! what would have reached a real service.

use proto_ai_tools::{
    executor::ProtoExecutor,
    transport::{Code, InProcessTransport, Status},
};
use proto_ai_tools_tests::support::ok_json;
use proto_ai_tools_tests::{new_uuid, tools};
use serde_json::json;

fn echo() -> ProtoExecutor<InProcessTransport> {
    let transport = InProcessTransport::new()
        .with_handler("/shapes.v1.ShapesService/Echo", |request, _| async move {
            Ok(request)
        });
    ProtoExecutor::new(tools::SHAPES, tools::shapes::descriptor_pool(), transport)
}

#[tokio::test]
async fn provider_shaping_is_undone() {
    let exec = echo();
    let args = json!({
        // OpenAI strict / Gemini: a map as an array of entries
        "labels": [{"key": "env", "value": "prod"}, {"key": "tier", "value": "1"}],
        // entries whose values are messages, themselves sent as JSON strings
        "nodes": [{"key": "a", "value": "{\"name\":\"A\"}"}],
        // a Struct as a JSON-encoded string
        "extra": "{\"k\": [1, 2]}",
        // a Value holding plain text stays text, even when it looks like JSON-ish prose
        "any_value": "{not json",
        // past a dialect's recursion cut, a nested message arrives as a JSON string
        "root": {"name": "r", "children": ["{\"name\":\"deep\"}"]},
        // strict-mode null for an optional field
        "note": null,
        // 64-bit integers as strings or numbers
        "big": "9007199254740993",
    });
    let out = ok_json(&exec.execute("shapes_echo", args).await);
    assert_eq!(
        out,
        json!({
            "labels": {"env": "prod", "tier": "1"},
            "nodes": {"a": {"name": "A"}},
            "extra": {"k": [1.0, 2.0]},
            "any_value": "{not json",
            "root": {"name": "r", "children": [{"name": "deep"}]},
            "big": "9007199254740993",
        })
    );
    // the names of the output are accepted back in (camelCase too), as are JSON objects
    let out = ok_json(
        &exec
            .execute(
                "shapes_echo",
                r#"{"anyValue": "[1]", "labels": {"x": "y"}}"#,
            )
            .await,
    );
    assert_eq!(out, json!({"labels": {"x": "y"}, "any_value": [1.0]}));
}

#[tokio::test]
async fn aliases_resolve_in_nested_and_repeated_fields() {
    let exec = echo();
    let aliases = exec.alias_manager();
    let (u1, u2) = (new_uuid(), new_uuid());
    assert_eq!(aliases.register("user", &u1).await.expect("uuid"), "user-1");
    assert_eq!(aliases.register("user", &u2).await.expect("uuid"), "user-2");

    let args = json!({
        "member_ids": ["user-2", "user-1"],
        "nodes": {"n": {"owner_id": "user-1", "children": [{"owner_id": "user-2", "name": "user-1"}]}},
    });
    // the echo returns the UUIDs, which are aliased again on the way out
    let out = ok_json(&exec.execute("shapes_echo", args).await);
    assert_eq!(
        out,
        json!({
            "member_ids": ["user-2", "user-1"],
            "nodes": {"n": {"owner_id": "user-1", "children": [{"owner_id": "user-2", "name": "user-1"}]}},
        })
    );

    let r = exec
        .execute(
            "shapes_echo",
            json!({"root": {"children": [{"owner_id": "user-3"}]}}),
        )
        .await;
    assert!(
        r.is_error
            && r.output
                .contains("`root.children[0].owner_id` got `user-3`")
            && r.output.contains("user-1, user-2"),
        "{}",
        r.output
    );
}

#[tokio::test]
async fn unknown_hidden_and_nested_fields_are_named() {
    let exec = echo();
    let r = exec.execute("shapes_echo", json!({"secret": "x"})).await;
    assert!(
        r.is_error && r.output.contains("unknown argument `secret`"),
        "{}",
        r.output
    );
    assert!(
        !r.output.contains("`secret`,") && r.output.contains("`labels`"),
        "{}",
        r.output
    );

    let r = exec
        .execute(
            "shapes_echo",
            json!({"root": {"children": [{"colour": "red"}]}}),
        )
        .await;
    assert!(
        r.is_error
            && r.output
                .contains("unknown field `colour` in `root.children[0]`"),
        "{}",
        r.output
    );

    let r = exec.execute("shapes_echo", json!({"big": 1.5})).await;
    assert_eq!(r.output, "shapes_echo: `big` is 1.5; send a whole number");
    // a oneof sent in its rendered shape is lifted to protojson's flat form
    let out = ok_json(
        &exec
            .execute("shapes_echo", json!({"destination": {"email": "a@b.c"}}))
            .await,
    );
    assert_eq!(out, json!({"email": "a@b.c"}));
    let r = exec
        .execute(
            "shapes_echo",
            json!({"destination": {"email": "a@b.c"}, "url": "https://x.y"}),
        )
        .await;
    assert_eq!(
        r.output,
        "shapes_echo: `url` and `destination.email` are alternatives (oneof `destination`): send only one of them"
    );
}

#[tokio::test]
async fn in_process_failures_are_actionable() {
    let transport = InProcessTransport::new().with_handler(
        "/shapes.v1.ShapesService/Echo",
        |_, _| async move {
            Err::<prost_reflect::DynamicMessage, _>(Status::new(
                Code::PermissionDenied,
                "not your shapes",
            ))
        },
    );
    let exec = ProtoExecutor::new(tools::SHAPES, tools::shapes::descriptor_pool(), transport);
    let r = exec.execute("shapes_echo", "{}").await;
    assert!(
        r.is_error && r.output.contains("PERMISSION_DENIED: not your shapes"),
        "{}",
        r.output
    );

    let exec = ProtoExecutor::new(
        tools::SHAPES,
        tools::shapes::descriptor_pool(),
        InProcessTransport::new(),
    );
    let r = exec.execute("shapes_echo", "{}").await;
    assert!(
        r.is_error && r.output.contains("UNIMPLEMENTED"),
        "{}",
        r.output
    );
}

#[tokio::test]
async fn one_member_of_a_oneof_is_accepted_and_two_are_refused_by_name() {
    let exec = echo();
    let out = ok_json(
        &exec
            .execute("shapes_echo", json!({"url": "https://x.y", "email": null}))
            .await,
    );
    assert_eq!(out, json!({"url": "https://x.y"}));
    let result = exec
        .execute(
            "shapes_echo",
            json!({"url": "https://x.y", "email": "a@b.c"}),
        )
        .await;
    assert!(result.is_error, "{}", result.output);
    assert!(
        result.output.contains("url") && result.output.contains("email"),
        "the error names both members: {}",
        result.output
    );
}
