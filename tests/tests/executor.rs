//! The executor end to end: model arguments → real gRPC call over loopback →
//! aliased JSON, against the in-memory links service of `proto_ai_tools_tests`.

use std::sync::Arc;
use std::time::Duration;

use proto_ai_tools::{
    AliasManager, CallOptions, Sessions,
    executor::{ExecutorOptions, GeneratedExecutor, ProtoExecutor},
    transport::TonicTransport,
};
use proto_ai_tools_tests::support::{error_text, ok_json};
use proto_ai_tools_tests::{LINKS_POOL, LinksBackend, Received, RunningServer, serve, tools};
use serde_json::{Value, json};

type Exec = ProtoExecutor<TonicTransport>;

/// What the macro's `Executor<T>` is, minus the typed methods.
struct LinksExecutor(ProtoExecutor<TonicTransport>);

impl From<LinksExecutor> for ProtoExecutor<TonicTransport> {
    fn from(executor: LinksExecutor) -> Self {
        executor.0
    }
}

impl GeneratedExecutor for LinksExecutor {
    type Transport = TonicTransport;

    fn with_alias_manager(transport: TonicTransport, aliases: Arc<AliasManager>) -> Self {
        Self(ProtoExecutor::with_alias_manager(
            tools::ALL,
            &LINKS_POOL,
            transport,
            aliases,
        ))
    }
}

async fn start(existing_links: usize) -> (RunningServer, Exec) {
    let server = serve(LinksBackend::with_links(existing_links))
        .await
        .expect("bind loopback");
    let exec = ProtoExecutor::new(
        tools::ALL,
        &LINKS_POOL,
        TonicTransport::new(server.channel().expect("url")),
    );
    (server, exec)
}

/// The JSON answer of `tool` called with `args`; panics naming the error.
async fn call(exec: &Exec, tool: &str, args: &str) -> Value {
    ok_json(&exec.execute(tool, args).await)
}

/// The error text of `tool` called with `args`; panics if it succeeds.
async fn refused(exec: &Exec, tool: &str, args: &str) -> String {
    error_text(&exec.execute(tool, args).await).to_owned()
}

fn is_uuid(s: &str) -> bool {
    s.len() == 36 && s.chars().filter(|c| *c == '-').count() == 4
}

#[tokio::test]
async fn create_aliases_ids_and_leaves_the_workspace_raw() {
    let (server, exec) = start(0).await;
    let out = call(
        &exec,
        "links_create",
        r#"{"destination":"https://x.y","name":null,"tags":["a"]}"#,
    )
    .await;
    let link = &out["link"];
    assert_eq!(link["id"], "link-1");
    assert_eq!(link["page_theme_id"], "theme-1");
    assert_eq!(link["workspace_id"], server.backend.workspace_id());
    assert!(is_uuid(link["workspace_id"].as_str().unwrap_or_default()));
    assert_eq!(link["destination"], "https://x.y");
    let stored = &server.backend.links()[0];
    assert_eq!(
        exec.alias_manager().resolve("link-1").as_deref(),
        Some(stored.id.as_str())
    );
    assert_eq!(
        exec.alias_manager().resolve("theme-1").as_deref(),
        Some(stored.page_theme_id.as_str())
    );
    assert_eq!(exec.alias_manager().alias_for(&stored.workspace_id), None);
    // strict-mode `null` for an optional field means absent
    assert!(matches!(&server.backend.received()[0], Received::CreateLink(r) if r.name.is_none()));
    server.shutdown().await;
}

#[tokio::test]
async fn an_alias_reaches_the_server_as_its_uuid() {
    let (server, exec) = start(0).await;
    call(&exec, "links_create", r#"{"destination":"https://x.y"}"#).await;
    let id = server.backend.links()[0].id.clone();

    let out = call(
        &exec,
        "links_update",
        r#"{"link_id":"link-1","name":"Promo"}"#,
    )
    .await;
    assert_eq!(out["link"]["id"], "link-1");
    assert_eq!(out["link"]["name"], "Promo");
    let out = call(
        &exec,
        "workflow_steps_create",
        r#"{"linkId":"link-1","action":"ACTION_EMAIL"}"#,
    )
    .await;
    assert_eq!(
        out,
        json!({"step": {"id": "step-1", "link_id": "link-1", "action": "ACTION_EMAIL"}})
    );

    let received = server.backend.received();
    assert!(
        matches!(&received[1], Received::UpdateLink(r) if r.link_id == id && r.name.as_deref() == Some("Promo"))
    );
    assert!(
        matches!(&received[2], Received::CreateWorkflowStep(r) if r.link_id == id && r.action == 2)
    );
    // a raw UUID the conversation has seen is accepted too
    let upper = id.to_uppercase();
    call(
        &exec,
        "links_update",
        &json!({"link_id": upper}).to_string(),
    )
    .await;
    assert!(matches!(&server.backend.received()[3], Received::UpdateLink(r) if r.link_id == id));
    server.shutdown().await;
}

#[tokio::test]
async fn invented_and_wrong_prefix_aliases_never_reach_the_server() {
    let (server, exec) = start(0).await;
    call(&exec, "links_create", r#"{"destination":"https://x.y"}"#).await;
    call(
        &exec,
        "workflow_steps_create",
        r#"{"link_id":"link-1","action":"ACTION_WEBHOOK"}"#,
    )
    .await;
    let calls = server.backend.received().len();

    let text = refused(&exec, "workflow_steps_delete", r#"{"step_id":"step-0"}"#).await;
    assert!(
        text.contains("`step_id`") && text.contains("`step-0`") && text.contains("step-1"),
        "{text}"
    );

    let text = refused(&exec, "links_update", r#"{"link_id":"step-1"}"#).await;
    assert!(
        text.contains("takes a link id") && text.contains("step id") && text.contains("link-1"),
        "{text}"
    );

    let text = refused(&exec, "links_update", r#"{"link_id":"theme-7"}"#).await;
    assert!(text.contains("use one of: link-1"), "{text}");

    let unseen = proto_ai_tools_tests::new_uuid();
    let text = refused(
        &exec,
        "links_update",
        &json!({"link_id": unseen}).to_string(),
    )
    .await;
    assert!(
        text.contains("raw UUID") && text.contains("never seen"),
        "{text}"
    );

    assert_eq!(
        server.backend.received().len(),
        calls,
        "the server was called"
    );

    // in a fresh conversation no link ids exist yet
    let fresh = ProtoExecutor::new(tools::ALL, &LINKS_POOL, exec.transport().clone());
    let text = refused(&fresh, "links_update", r#"{"link_id":"link-1"}"#).await;
    assert!(text.contains("no link ids are known yet"), "{text}");

    // the lenient mode passes unseen raw UUIDs through (the server then says NOT_FOUND)
    let mut options = ExecutorOptions::default();
    options.pass_unknown_uuids = true;
    let lenient =
        ProtoExecutor::new(tools::ALL, &LINKS_POOL, exec.transport().clone()).with_options(options);
    let text = refused(
        &lenient,
        "links_update",
        &json!({"link_id": unseen}).to_string(),
    )
    .await;
    assert!(text.contains("NOT_FOUND"), "{text}");
    server.shutdown().await;
}

#[tokio::test]
async fn link_1_and_link_10_are_never_confused() {
    let (server, exec) = start(12).await;
    let out = call(&exec, "links_list", "{}").await;
    let ids: Vec<&str> = out["links"]
        .as_array()
        .expect("links")
        .iter()
        .filter_map(|l| l["id"].as_str())
        .collect();
    let expected: Vec<String> = (1..=12).map(|n| format!("link-{n}")).collect();
    assert_eq!(ids, expected);
    let listed = server.backend.links();

    for (alias, index) in [("link-10", 9), ("link-1", 0), ("link-12", 11)] {
        let args = json!({"link_id": alias, "name": format!("renamed {alias}")}).to_string();
        let out = call(&exec, "links_update", &args).await;
        assert_eq!(out["link"]["id"], alias);
        let Some(Received::UpdateLink(r)) = server.backend.received().last().cloned() else {
            panic!("no update received");
        };
        assert_eq!(r.link_id, listed[index].id, "{alias}");
    }
    // free text that mentions an alias is passed on unchanged
    call(
        &exec,
        "links_update",
        r#"{"link_id":"link-2","name":"same as link-1"}"#,
    )
    .await;
    assert!(
        matches!(server.backend.received().last(), Some(Received::UpdateLink(r)) if r.name.as_deref() == Some("same as link-1"))
    );
    server.shutdown().await;
}

#[tokio::test]
async fn argument_errors_name_the_argument() {
    let (server, exec) = start(0).await;
    let text = refused(
        &exec,
        "links_create",
        r#"{"destination":"https://x.y","colour":"red"}"#,
    )
    .await;
    assert!(
        text.contains("unknown argument `colour`") && text.contains("`destination`"),
        "{text}"
    );
    // a skipped field is hidden from the model, so it is unknown too
    let text = refused(
        &exec,
        "links_create",
        r#"{"destination":"https://x.y","metadata":{}}"#,
    )
    .await;
    assert!(
        text.contains("`metadata`") && !text.contains("`metadata`, "),
        "{text}"
    );
    let text = refused(&exec, "links_list", r#"{"page_size":"many"}"#).await;
    assert!(text.contains("`page_size`"), "{text}");
    let text = refused(&exec, "links_list", "{not json").await;
    assert!(text.contains("not valid JSON"), "{text}");
    let text = refused(&exec, "links_list", "[1]").await;
    assert!(text.contains("must be a JSON object"), "{text}");
    let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
    let text = refused(&exec, "links_list", &format!(r#"{{"page_size":{deep}}}"#)).await;
    assert!(text.contains("nested deeper"), "{text}");
    let text = refused(&exec, "links_delete", "{}").await;
    assert!(
        text.contains("unknown tool `links_delete`") && text.contains("links_create, links_update"),
        "{text}"
    );
    assert!(server.backend.received().is_empty());
    // empty arguments mean `{}`
    call(&exec, "links_list", "").await;
    server.shutdown().await;
}

#[tokio::test]
async fn status_errors_are_actionable_and_aliased() {
    let (server, exec) = start(0).await;
    call(&exec, "links_create", r#"{"destination":"https://x.y"}"#).await;
    let id = server.backend.links()[0].id.clone();
    server.backend.remove_link(&id);
    let text = refused(&exec, "links_update", r#"{"link_id":"link-1"}"#).await;
    assert!(
        text.contains("NOT_FOUND") && text.contains("link link-1 not found"),
        "{text}"
    );
    assert!(!text.contains(&id), "{text}");
    let text = refused(&exec, "links_create", "{}").await;
    assert!(
        text.contains("INVALID_ARGUMENT") && text.contains("destination is required"),
        "{text}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn server_down_is_an_actionable_error() {
    let (server, exec) = start(0).await;
    server.shutdown().await;
    let text = refused(&exec, "links_list", "{}").await;
    // Nothing left the process: the model is told so, and to retry, with
    // no address or transport text.
    assert!(
        text.contains("could not reach its service")
            && text.contains("nothing was sent")
            && text.contains("a retry may help"),
        "{text}"
    );
    assert!(
        !text.contains("127.0.0.1") && !text.contains("os error"),
        "{text}"
    );
}

#[tokio::test]
async fn deadline_and_metadata_pass_through() {
    let (server, exec) = start(1).await;
    let options = CallOptions::new().metadata("x-tenant", "acme");
    ok_json(&exec.execute_with("links_list", "{}", &options).await);
    assert_eq!(
        server.backend.last_metadata(),
        [("x-tenant".to_owned(), "acme".to_owned())]
    );

    server.backend.set_delay(Duration::from_millis(500));
    let options = CallOptions::new().timeout(Duration::from_millis(50));
    let text = error_text(&exec.execute_with("links_list", "{}", &options).await).to_owned();
    assert!(text.contains("DEADLINE_EXCEEDED"), "{text}");
    server.shutdown().await;
}

#[tokio::test]
async fn sessions_isolate_conversations_and_share_the_transport() {
    let server = serve(LinksBackend::with_links(0)).await.expect("bind");
    let sessions = Sessions::new(
        TonicTransport::new(server.channel().expect("url")),
        Duration::from_secs(60),
    );

    let a: LinksExecutor = sessions.for_conversation("a");
    call(&a.0, "links_create", r#"{"destination":"https://a"}"#).await;
    let b: LinksExecutor = sessions.for_conversation("b");
    let out = call(&b.0, "links_create", r#"{"destination":"https://b"}"#).await;
    assert_eq!(out["link"]["id"], "link-1", "b has its own counter");
    let [newest, oldest] = [&server.backend.links()[0], &server.backend.links()[1]];
    assert_eq!(
        sessions.alias_manager("a").resolve("link-1").as_deref(),
        Some(oldest.id.as_str())
    );
    assert_eq!(
        sessions.alias_manager("b").resolve("link-1").as_deref(),
        Some(newest.id.as_str())
    );

    // a's alias means a's link, later too, through a new executor of the same conversation
    let a_again: LinksExecutor = sessions.for_conversation("a");
    ok_json(
        &a_again
            .0
            .execute("links_update", r#"{"link_id":"link-1","name":"A"}"#)
            .await,
    );
    assert!(
        matches!(server.backend.received().last(), Some(Received::UpdateLink(r)) if r.link_id == oldest.id)
    );
    // b cannot use a link only a has seen
    let raw_a = oldest.id.clone();
    let text = refused(&b.0, "links_update", &json!({"link_id": raw_a}).to_string()).await;
    assert!(text.contains("never seen"), "{text}");

    // an empty conversation id is a throwaway namespace
    let throwaway: LinksExecutor = sessions.for_conversation("");
    let text = error_text(
        &throwaway
            .0
            .execute("links_update", r#"{"link_id":"link-1"}"#)
            .await,
    )
    .to_owned();
    assert!(text.contains("no link ids are known yet"), "{text}");
    assert_eq!(sessions.len(), 2);
    server.shutdown().await;
}

#[tokio::test]
async fn sessions_evict_idle_and_least_recently_used_conversations() {
    let server = serve(LinksBackend::with_links(0)).await.expect("bind");
    let transport = TonicTransport::new(server.channel().expect("url"));
    let sessions = Sessions::new(transport.clone(), Duration::from_millis(100));
    let a: LinksExecutor = sessions.for_conversation("a");
    call(&a.0, "links_create", r#"{"destination":"https://a"}"#).await;
    assert!(sessions.alias_manager("a").resolve("link-1").is_some());
    drop(a); // a conversation in use is never forgotten
    // Sessions read tokio's clock: paused and moved past the TTL, no real wait.
    tokio::time::pause();
    tokio::time::advance(Duration::from_millis(250)).await;
    assert!(
        sessions.alias_manager("a").resolve("link-1").is_none(),
        "expired conversation kept its aliases"
    );
    tokio::time::resume();

    let bounded = Sessions::new(transport, Duration::from_secs(60)).with_capacity(2);
    bounded
        .alias_manager("x")
        .register("link", &proto_ai_tools_tests::new_uuid())
        .await
        .expect("uuid");
    bounded.alias_manager("y");
    bounded.alias_manager("x"); // x is now more recent than y
    bounded.alias_manager("z");
    assert_eq!(bounded.len(), 2);
    assert!(
        bounded.alias_manager("x").resolve("link-1").is_some(),
        "the recently used conversation was evicted"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn snapshot_restores_a_conversation_across_restarts() {
    let (server, exec) = start(3).await;
    call(&exec, "links_list", "{}").await;
    let snapshot = serde_json::to_string(&exec.alias_manager().snapshot()).expect("serialise");

    let sessions = Sessions::new(exec.transport().clone(), Duration::from_secs(60));
    sessions
        .restore("c", serde_json::from_str(&snapshot).expect("deserialise"))
        .expect("restore");
    let restored: LinksExecutor = sessions.for_conversation("c");
    ok_json(
        &restored
            .0
            .execute("links_update", r#"{"link_id":"link-3","name":"third"}"#)
            .await,
    );
    assert!(
        matches!(server.backend.received().last(), Some(Received::UpdateLink(r)) if r.link_id == server.backend.links()[2].id)
    );
    let out = ok_json(
        &restored
            .0
            .execute("links_create", r#"{"destination":"https://new"}"#)
            .await,
    );
    assert_eq!(out["link"]["id"], "link-4");
    server.shutdown().await;
}

/// A namespace that expires (an MCP caller's, say) tells the model an
/// alias it gave out and no longer holds has expired, and how to get the id
/// again, never that it was invented; its numbers never come back.
#[tokio::test]
async fn an_expired_alias_is_told_apart_from_an_invented_one() {
    let (server, exec) = start(0).await;
    let aliases = Arc::new(
        AliasManager::new()
            .with_limit(2)
            .with_expiry(Duration::from_secs(3600)),
    );
    let exec = ProtoExecutor::with_alias_manager(
        tools::ALL,
        &LINKS_POOL,
        exec.transport().clone(),
        aliases,
    );
    let first = call(
        &exec,
        "links_create",
        r#"{"destination":"https://a.example/","name":"a"}"#,
    )
    .await;
    // a link and its page theme: the namespace is full
    assert_eq!(first["link"]["id"], "link-1");
    assert_eq!(first["link"]["page_theme_id"], "theme-1");
    // link-1, the least recently used (the theme is shown again), makes room
    let second = call(
        &exec,
        "links_create",
        r#"{"destination":"https://b.example/","name":"b"}"#,
    )
    .await;
    assert_eq!(second["link"]["id"], "link-2");
    let calls = server.backend.received().len();

    let text = refused(&exec, "links_update", r#"{"link_id":"link-1"}"#).await;
    assert!(
        text.contains("`link-1`, a link id that has expired")
            && text.contains("get it again")
            && text.contains("held now are: link-2"),
        "{text}"
    );
    assert!(!text.contains("invent"), "{text}");
    let text = refused(&exec, "links_update", r#"{"link_id":"link-3"}"#).await;
    assert!(
        text.contains("not a link id this conversation has seen"),
        "an alias never given out is not expired: {text}"
    );
    assert_eq!(server.backend.received().len(), calls, "nothing was sent");

    let updated = call(&exec, "links_update", r#"{"link_id":"link-2","name":"b2"}"#).await;
    assert_eq!(updated["link"]["destination"], "https://b.example/");
}

/// Issue 39: an alias the conversation's store lost (here the whole
/// conversation, as a failover to a replica that never had it would) is
/// told to the model as lost, with how to get the id again, and nothing is
/// sent; the numbers the model saw are never given to a new object.
#[tokio::test]
async fn an_alias_the_store_lost_is_told_as_lost_and_never_given_again() {
    use proto_ai_tools::store::{AliasStore, MemoryStore};
    let (server, exec) = start(0).await;
    let store = Arc::new(MemoryStore::new(Duration::from_secs(3600)));
    let aliases = Arc::new(AliasManager::with_store(store.clone(), "conversation"));
    let exec = ProtoExecutor::with_alias_manager(
        tools::ALL,
        &LINKS_POOL,
        exec.transport().clone(),
        aliases,
    );
    let first = call(
        &exec,
        "links_create",
        r#"{"destination":"https://a.example/","name":"a"}"#,
    )
    .await;
    assert_eq!(first["link"]["id"], "link-1");
    store.remove("conversation").await.unwrap();
    let calls = server.backend.received().len();

    let text = refused(&exec, "links_update", r#"{"link_id":"link-1"}"#).await;
    assert!(
        text.contains("`link-1`, a link id this conversation was given but has lost")
            && text.contains("get it again"),
        "{text}"
    );
    assert!(
        !text.contains("expired") && !text.contains("invent"),
        "{text}"
    );
    assert_eq!(server.backend.received().len(), calls, "nothing was sent");
    let second = call(
        &exec,
        "links_create",
        r#"{"destination":"https://b.example/","name":"b"}"#,
    )
    .await;
    assert_eq!(
        second["link"]["id"], "link-2",
        "link-1 is never given again"
    );
    assert_eq!(second["link"]["page_theme_id"], "theme-2");
}
