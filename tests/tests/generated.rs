//! The executor that `ai_tools!` generates, against the real links service:
//! the expansion and the runtime agree on the contract.

use std::time::Duration;

use ai_tools::{Sessions, TonicTransport};
use ai_tools_tests::{LinksBackend, Received, serve, tools};
use serde_json::json;

mod gentools {
    ai_tools::ai_tools!("proto/links/v1/links.proto");
}

#[test]
fn generated_alias_maps_match_the_proto() {
    let generated = gentools::all_tools();
    assert_eq!(generated.len(), tools::ALL.len());
    for (g, hand) in generated.iter().zip(tools::ALL) {
        assert_eq!(g.name, hand.name);
        assert_eq!(g.method, hand.method, "{}", g.name);
        let sorted = |list: &[ai_tools::FieldPrefix]| {
            let mut v: Vec<_> = list
                .iter()
                .map(|f| (f.message, f.field, f.prefix))
                .collect();
            v.sort();
            v
        };
        assert_eq!(
            sorted(g.request_aliases),
            sorted(hand.request_aliases),
            "request aliases of {}",
            g.name
        );
        assert_eq!(
            sorted(g.response_aliases),
            sorted(hand.response_aliases),
            "response aliases of {}",
            g.name
        );
        assert_eq!(g.output_prefix, hand.output_prefix, "{}", g.name);
    }
}

#[tokio::test]
async fn generated_executor_runs_a_conversation() {
    let server = serve(LinksBackend::with_links(0))
        .await
        .expect("bind loopback");
    let sessions = Sessions::new(
        TonicTransport::new(server.channel().expect("url")),
        Duration::from_secs(60),
    );
    let exec = sessions.for_conversation::<gentools::Executor<_>>("conversation-1");
    assert!(exec.can_execute("links_create") && !exec.can_execute("links_delete"));

    let created = exec
        .links_create(json!({"destination": "https://x.y"}))
        .await;
    assert!(!created.is_error, "{}", created.output);
    assert!(
        created.output.contains(r#""id":"link-1""#),
        "{}",
        created.output
    );

    let again = sessions.for_conversation::<gentools::Executor<_>>("conversation-1");
    let step = again
        .execute(
            "workflow_steps_create",
            r#"{"link_id":"link-1","action":"ACTION_WEBHOOK"}"#,
        )
        .await;
    assert!(!step.is_error, "{}", step.output);
    let id = server.backend.links()[0].id.clone();
    assert!(
        matches!(server.backend.received().last(), Some(Received::CreateWorkflowStep(r)) if r.link_id == id)
    );

    let invented = again
        .execute("workflow_steps_delete", r#"{"step_id":"step-0"}"#)
        .await;
    assert!(
        invented.is_error && invented.output.contains("step-1"),
        "{}",
        invented.output
    );
    server.shutdown().await;
}
