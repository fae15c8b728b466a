//! The executor that `ai_tools!` generates, against the real links service:
//! the expansion and the runtime agree on the contract.

use std::time::Duration;

use proto_ai_tools::{Sessions, transport::TonicTransport};
use proto_ai_tools_tests::{LinksBackend, Received, serve};
use serde_json::json;

use proto_ai_tools_tests::tools::links as gentools;

type Prefixes = &'static [(&'static str, &'static str, &'static str)];

/// One tool of `links.proto`, written out by hand from the proto.
struct Expected {
    name: &'static str,
    /// Service, method, request, response.
    rpc: [&'static str; 4],
    /// `(message, field, prefix)`, sorted.
    request_aliases: Prefixes,
    response_aliases: Prefixes,
    output_prefix: Option<&'static str>,
}

const LINK_RESPONSE: Prefixes = &[
    ("links.v1.Link", "id", "link"),
    ("links.v1.Link", "page_theme_id", "theme"),
];
const STEP_RESPONSE: Prefixes = &[
    ("links.v1.WorkflowStep", "id", "step"),
    ("links.v1.WorkflowStep", "link_id", "link"),
];

const EXPECTED: &[Expected] = &[
    Expected {
        name: "links_create",
        rpc: [
            "links.v1.LinksService",
            "CreateLink",
            "links.v1.CreateLinkRequest",
            "links.v1.CreateLinkResponse",
        ],
        request_aliases: &[],
        response_aliases: LINK_RESPONSE,
        output_prefix: Some("link"),
    },
    Expected {
        name: "links_update",
        rpc: [
            "links.v1.LinksService",
            "UpdateLink",
            "links.v1.UpdateLinkRequest",
            "links.v1.UpdateLinkResponse",
        ],
        request_aliases: &[("links.v1.UpdateLinkRequest", "link_id", "link")],
        response_aliases: LINK_RESPONSE,
        output_prefix: Some("link"),
    },
    Expected {
        name: "links_list",
        rpc: [
            "links.v1.LinksService",
            "ListLinks",
            "links.v1.ListLinksRequest",
            "links.v1.ListLinksResponse",
        ],
        request_aliases: &[],
        response_aliases: LINK_RESPONSE,
        output_prefix: Some("link"),
    },
    Expected {
        name: "workflow_steps_create",
        rpc: [
            "links.v1.WorkflowStepsService",
            "CreateWorkflowStep",
            "links.v1.CreateWorkflowStepRequest",
            "links.v1.CreateWorkflowStepResponse",
        ],
        request_aliases: &[("links.v1.CreateWorkflowStepRequest", "link_id", "link")],
        response_aliases: STEP_RESPONSE,
        output_prefix: Some("step"),
    },
    Expected {
        name: "workflow_steps_delete",
        rpc: [
            "links.v1.WorkflowStepsService",
            "DeleteWorkflowStep",
            "links.v1.DeleteWorkflowStepRequest",
            "links.v1.DeleteWorkflowStepResponse",
        ],
        request_aliases: &[("links.v1.DeleteWorkflowStepRequest", "step_id", "step")],
        response_aliases: &[],
        output_prefix: None,
    },
];

#[test]
fn generated_alias_maps_match_the_proto() {
    let generated = gentools::all_tools();
    assert_eq!(generated.len(), EXPECTED.len());
    let sorted = |list: &[proto_ai_tools::alias::FieldPrefix]| {
        let mut v: Vec<_> = list
            .iter()
            .map(|f| (f.message, f.field, f.prefix))
            .collect();
        v.sort_unstable();
        v
    };
    for (g, expected) in generated.iter().zip(EXPECTED) {
        assert_eq!(g.name, expected.name);
        let m = &g.method;
        assert_eq!(
            [m.service, m.method, m.request, m.response],
            expected.rpc,
            "{}",
            g.name
        );
        assert_eq!(
            sorted(g.request_aliases),
            expected.request_aliases,
            "request aliases of {}",
            g.name
        );
        assert_eq!(
            sorted(g.response_aliases),
            expected.response_aliases,
            "response aliases of {}",
            g.name
        );
        assert_eq!(g.output_prefix, expected.output_prefix, "{}", g.name);
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
