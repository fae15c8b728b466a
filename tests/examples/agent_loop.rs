//! A scripted model plays tool calls through the generated executor against a
//! real gRPC server started in-process on loopback, and we print what the
//! model would see. Run with `cargo run -p proto-ai-tools-tests --example agent_loop`.

use std::time::Duration;

use proto_ai_tools::{Sessions, transport::TonicTransport};
use proto_ai_tools_tests::{LinksBackend, serve};

mod gentools {
    proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = serve(LinksBackend::with_links(0)).await?;
    let channel = tonic::transport::Channel::from_shared(server.url())?
        .connect()
        .await?;
    // One Sessions per process, one alias namespace per conversation.
    let sessions = Sessions::new(TonicTransport::new(channel), Duration::from_secs(1800));

    // What a model might send, turn by turn (name, arguments JSON).
    let script = [
        (
            "links_create",
            r#"{"destination":"https://example.com/spring","name":"Spring sale","shortlink":null,"tags":[]}"#,
        ),
        (
            "links_update",
            r#"{"link_id":"link-1","name":"Spring sale 2027","destination":null}"#,
        ),
        (
            "workflow_steps_create",
            r#"{"link_id":"link-1","action":"ACTION_WEBHOOK"}"#,
        ),
        // The model invents an id: refused before any call, with the valid ones.
        ("workflow_steps_delete", r#"{"step_id":"step-0"}"#),
        ("workflow_steps_delete", r#"{"step_id":"step-1"}"#),
        // A wrong argument name.
        ("links_list", r#"{"limit":5}"#),
        ("links_list", r#"{"page_size":5}"#),
    ];

    let exec = sessions.for_conversation::<gentools::Executor<_>>("conversation-42");
    for (tool, args) in script {
        println!("model → {tool} {args}");
        let result = exec.execute(tool, args).await;
        let tag = if result.is_error { "error" } else { "ok" };
        println!("model ← [{tag}] {}\n", result.output);
    }

    let aliases = exec.alias_manager();
    println!(
        "aliases of this conversation: {:?}",
        aliases
            .snapshot()
            .entries
            .iter()
            .map(|e| &e.alias)
            .collect::<Vec<_>>()
    );
    let prompt = format!(
        "The user is looking at link {}.",
        server.backend.links()[0].id
    );
    println!(
        "prompt context, aliasified: {}",
        aliases.aliasify_text(&prompt)
    );

    server.shutdown().await;
    Ok(())
}
