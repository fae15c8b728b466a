//! Bounds on what a model sends and what it is sent back (issue 7): every
//! argument bound gives a clear error before any call, values the model sent
//! are echoed only cut short and never as a raw UUID, and at the alias limit
//! the model gets an error and nothing is half registered. Run with
//! `cargo test -p proto-ai-tools-tests --test bounds`; RELIABILITY.md lists the
//! bounds and their defaults.

use std::time::Duration;

use proto_ai_tools::{
    Sessions,
    executor::{ExecutorOptions, ProtoExecutor},
    transport::TonicTransport,
};
use proto_ai_tools_tests::support::{
    assert_consistent, error_text, links_recording_transport, ok_json,
};
use proto_ai_tools_tests::{LINKS_POOL, LinksBackend, serve, tools};
use serde_json::{Value, json};

#[tokio::test]
async fn each_bound_gives_a_clear_error_before_any_call() {
    let (transport, calls) = links_recording_transport();
    let exec = ProtoExecutor::new(tools::ALL, &LINKS_POOL, transport);
    let o = ExecutorOptions::default();
    let cases: Vec<(String, String)> = vec![
        (
            json!({"destination": "x".repeat(o.max_argument_bytes)}).to_string(),
            format!("more than the limit of {}", o.max_argument_bytes),
        ),
        (
            format!(
                r#"{{"destination":"https://x","tags":{}1{}}}"#,
                "[".repeat(40),
                "]".repeat(40)
            ),
            "nested deeper than 32 levels".to_owned(),
        ),
        (
            // deeper than serde_json's own limit of 128: still our message
            format!(r#"{{"tags":{}{}}}"#, "[".repeat(5000), "]".repeat(5000)),
            "nested deeper than 32 levels".to_owned(),
        ),
        (
            json!({"destination": "https://x", "name": "n".repeat(o.max_string_bytes + 1)})
                .to_string(),
            format!(
                "`name` is a string of {} bytes, more than the limit of {}",
                o.max_string_bytes + 1,
                o.max_string_bytes
            ),
        ),
        (
            json!({"destination": "https://x", "tags": vec!["t"; o.max_array_items + 1]})
                .to_string(),
            format!(
                "`tags` has {} items, more than the limit of {}",
                o.max_array_items + 1,
                o.max_array_items
            ),
        ),
        (
            json!({ "k".repeat(o.max_string_bytes + 1): 1 }).to_string(),
            "a key of 65537 bytes".to_owned(),
        ),
    ];
    for (args, expected) in &cases {
        let text = error_text(&exec.execute("links_create", args).await).to_owned();
        assert!(text.contains(expected), "{expected}: {text}");
        assert!(text.len() < 4_200, "error text of {} bytes", text.len());
    }
    // the same bounds hold for already-parsed arguments
    let text = error_text(
        &exec
            .execute("links_create", json!({"tags": vec!["t"; 1001]}))
            .await,
    )
    .to_owned();
    assert!(text.contains("`tags` has 1001 items"), "{text}");
    assert_eq!(calls.len(), 0, "the service was called");

    // just under every bound is accepted
    let fits = json!({
        "destination": "https://x",
        "name": "n".repeat(o.max_string_bytes),
        "tags": vec!["t"; o.max_array_items],
    });
    ok_json(&exec.execute("links_create", &fits.to_string()).await);
    assert_eq!(calls.len(), 1);
}

#[tokio::test]
async fn echoed_values_are_bounded_and_never_a_raw_uuid() {
    let (transport, _) = links_recording_transport();
    let exec = ProtoExecutor::new(tools::ALL, &LINKS_POOL, transport);
    ok_json(
        &exec
            .execute("links_create", r#"{"destination":"https://x"}"#)
            .await,
    );
    let long = "z".repeat(10_000);
    let many: serde_json::Map<String, Value> = (0..500)
        .map(|i| (format!("bogus_{i}_{}", &long[..80]), json!(1)))
        .collect();
    let results = [
        exec.execute("links_update", &json!({ "link_id": long }).to_string())
            .await,
        exec.execute(&long, "{}").await,
        exec.execute("links_create", &Value::Object(many).to_string())
            .await,
    ];
    for r in &results {
        let text = error_text(r);
        assert!(text.len() < 4_200, "{} bytes", text.len());
        assert!(!text.contains(&"z".repeat(70)), "echoes the whole value");
    }
    assert!(
        results[2].output.contains("(and 490 more)"),
        "{}",
        results[2].output
    );
}

#[tokio::test]
async fn at_the_alias_limit_the_model_gets_an_error_and_nothing_is_half_registered() {
    let backend = LinksBackend::with_links(3);
    let server = serve(backend).await.expect("bind");
    let channel = server.channel().expect("url");
    let sessions =
        Sessions::new(TonicTransport::new(channel), Duration::from_secs(60)).with_alias_limit(5);
    let aliases = sessions.alias_manager("c");
    let exec = ProtoExecutor::with_alias_manager(
        tools::ALL,
        &LINKS_POOL,
        sessions.transport().clone(),
        aliases.clone(),
    );
    // three links carry six ids: over the limit of five, so none is registered
    let text = error_text(&exec.execute("links_list", "{}").await).to_owned();
    assert!(
        text.contains("maximum of 5 ids") && text.contains("tell the user"),
        "{text}"
    );
    assert!(
        aliases.is_empty(),
        "half-registered: {:?}",
        aliases.snapshot()
    );
    // two links (four ids) fit; then the same ones again are no new ids
    let out = ok_json(&exec.execute("links_list", r#"{"page_size":2}"#).await);
    assert_eq!(out["links"][1]["id"], "link-2");
    ok_json(&exec.execute("links_list", r#"{"page_size":2}"#).await);
    assert_eq!(aliases.len(), 4);
    let text = error_text(&exec.execute("links_list", "{}").await).to_owned();
    assert!(text.contains("maximum of 5 ids"), "{text}");
    assert_eq!(aliases.len(), 4);
    assert_consistent(&aliases);
    server.shutdown().await;
}
