//! Assertions and setup the integration tests share.

use std::sync::Arc;
use std::time::Duration;

use ai_tools::schema::Dialect;
use ai_tools::{AgentTool, Sessions, TonicTransport, ToolResult, store::AliasStore};
use serde_json::Value;

use crate::{LinksBackend, Received, RunningServer};

/// The output of a successful result, as JSON; panics naming the error otherwise.
pub fn ok_json(result: &ToolResult) -> Value {
    assert!(!result.is_error, "unexpected error: {}", result.output);
    serde_json::from_str(&result.output).expect("output is JSON")
}

/// The text of an error result; panics naming the output otherwise.
pub fn error_text(result: &ToolResult) -> &str {
    assert!(result.is_error, "expected an error, got: {}", result.output);
    &result.output
}

/// The `link_id` of every `CreateWorkflowStep` the service received, in order.
pub fn step_link_ids(backend: &LinksBackend) -> Vec<String> {
    backend
        .received()
        .into_iter()
        .filter_map(|r| match r {
            Received::CreateWorkflowStep(s) => Some(s.link_id),
            _ => None,
        })
        .collect()
}

/// Every static rendering of `tool`, parsed, with the dialect it is for.
pub fn renderings(tool: &AgentTool) -> Vec<(Dialect, Value)> {
    Dialect::ALL
        .into_iter()
        .map(|dialect| {
            let text = tool.parameters_for(dialect);
            let parsed = serde_json::from_str(text)
                .unwrap_or_else(|e| panic!("{} {dialect}: not JSON ({e})", tool.name));
            (dialect, parsed)
        })
        .collect()
}

/// The alias store goes away while the service answers a
/// `links_create` (the service is slowed by `service_delay`, and `stop`
/// takes the store down meanwhile): the call took effect, its answer is
/// withheld, and no raw UUID reaches the model. Then, with the store
/// still down, a call with an alias is refused within `refused_within`
/// before anything is sent. Returns the links the service holds.
pub async fn store_down_mid_call(
    exec: &crate::tools::links::Executor<TonicTransport>,
    backend: &LinksBackend,
    service_delay: Duration,
    stop: impl std::future::Future<Output = ()>,
    refused_within: Duration,
) -> Vec<crate::pb::Link> {
    let links_before = backend.links().len();
    backend.set_delay(service_delay);
    let call = exec.execute("links_create", r#"{"destination":"https://y.example"}"#);
    let (result, ()) = tokio::join!(call, stop);
    let text = error_text(&result).to_owned();
    assert!(text.contains("the alias store is unavailable"), "{text}");
    assert!(text.contains("the answer is withheld"), "{text}");
    assert!(text.contains("do not repeat it blindly"), "{text}");
    let links = backend.links();
    assert_eq!(
        links.len(),
        links_before + 1,
        "the call reached the service"
    );
    for link in &links {
        assert!(
            !text.contains(&link.id) && !text.contains(&link.page_theme_id),
            "{text}"
        );
    }

    let received = backend.received().len();
    let started = std::time::Instant::now();
    let result = exec
        .execute("links_update", r#"{"link_id":"link-1","name":"x"}"#)
        .await;
    let text = error_text(&result);
    assert!(text.contains("the alias store is unavailable"), "{text}");
    assert!(text.contains("nothing was sent to the service"), "{text}");
    assert!(text.contains("A retry may help"), "{text}");
    assert_eq!(backend.received().len(), received, "nothing sent");
    assert!(
        started.elapsed() < refused_within,
        "no hang: {:?}",
        started.elapsed()
    );
    links
}

/// After the alias store came back from an outage that failed a
/// `links_create`: retries renaming `link-1` until the store answers
/// again (every failure meanwhile says the store is unavailable), then
/// checks that the failed call used up no alias (the next link is `link-2`).
pub async fn recovers_after_store_outage(
    exec: &crate::tools::links::Executor<TonicTransport>,
    within: Duration,
) {
    let rename = || exec.execute("links_update", r#"{"link_id":"link-1","name":"back"}"#);
    let mut result = rename().await;
    // the connection may take a moment to come back
    let deadline = std::time::Instant::now() + within;
    while result.is_error && std::time::Instant::now() < deadline {
        assert!(
            result.output.contains("alias store is unavailable"),
            "{}",
            result.output
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        result = rename().await;
    }
    assert_eq!(ok_json(&result)["link"]["name"], "back");
    let out = ok_json(
        &exec
            .execute("links_create", r#"{"destination":"https://z.example"}"#)
            .await,
    );
    assert_eq!(
        out["link"]["id"], "link-2",
        "no alias was used up by the failed call"
    );
}

/// A store key prefix no other test (or run) uses.
pub fn unique_prefix(test: &str) -> String {
    format!("test-{test}-{}", crate::new_uuid())
}

/// `Sessions` over the server's channel whose conversations live in `store`.
pub fn sessions_with_store(
    server: &RunningServer,
    store: Arc<dyn AliasStore>,
) -> Sessions<TonicTransport> {
    Sessions::new(
        TonicTransport::new(server.channel().expect("url")),
        Duration::from_secs(600),
    )
    .with_store(store)
}
