//! Many conversations at once (issue 7): `Sessions` never evicts a
//! conversation in use, two tenants never resolve each other's aliases on
//! many threads, and 64 conversations run side by side in process and over
//! loopback tonic with no alias lost, duplicated or crossed. Each test
//! prints its figure (`cargo test -p proto-ai-tools-tests --test concurrency --
//! --nocapture`); RELIABILITY.md lists them.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use proto_ai_tools::{
    CallOptions, Sessions, Transport, executor::ProtoExecutor, transport::TonicTransport,
};
use proto_ai_tools_tests::support::{
    assert_consistent, error_text, links_recording_transport, ok_json,
};
use proto_ai_tools_tests::{LINKS_POOL, LinksBackend, pb, serve, tools};
use serde_json::{Value, json};

/// An executor of every links.proto tool on conversation `id` of `sessions`.
fn links_exec<T: Transport + Clone>(sessions: &Sessions<T>, id: &str) -> ProtoExecutor<T> {
    ProtoExecutor::with_alias_manager(
        tools::ALL,
        &LINKS_POOL,
        sessions.transport().clone(),
        sessions.alias_manager(id),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sessions_never_evict_a_conversation_in_use() {
    let (transport, _) = links_recording_transport();
    let sessions =
        Arc::new(Sessions::new(transport.clone(), Duration::from_millis(50)).with_capacity(4));
    let mut tasks = Vec::new();
    for c in 0..16 {
        let sessions = sessions.clone();
        tasks.push(tokio::spawn(async move {
            let id = format!("conversation-{c}");
            let exec = links_exec(&sessions, &id);
            for _ in 0..20 {
                ok_json(
                    &exec
                        .execute("links_create", r#"{"destination":"https://x"}"#)
                        .await,
                );
                // longer than the TTL between calls, with many other conversations arriving
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            // the namespace the executor holds is still the one Sessions hands out
            let again = sessions.alias_manager(&id);
            assert!(Arc::ptr_eq(exec.alias_manager(), &again), "{id} was split");
            assert_eq!(again.aliases_of("link").len(), 20, "{id} lost aliases");
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
    assert_eq!(sessions.in_use(), 0);
    sessions.alias_manager("newcomer");
    assert!(
        sessions.len() <= 4,
        "{} kept past the capacity",
        sessions.len()
    );
    println!(
        "figure: 16 conversations in use at once, capacity 4, TTL 50 ms: none evicted while in use"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn two_tenants_never_resolve_each_others_aliases() {
    const PER_TENANT: usize = 8;
    const ROUNDS: usize = 150;
    let (transport, recording) = links_recording_transport();
    let sessions = Arc::new(Sessions::new(Arc::new(transport), Duration::from_secs(600)));
    // every id issued, for the other tenant to try
    let issued: Arc<Mutex<HashMap<&'static str, Vec<String>>>> = Arc::default();
    let calls = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for tenant in ["acme", "globex"] {
        for c in 0..PER_TENANT {
            let (sessions, issued, calls) = (sessions.clone(), issued.clone(), calls.clone());
            tasks.push(tokio::spawn(async move {
                let id = format!("{tenant}/{c}");
                let exec = links_exec(&sessions, &id);
                let options = CallOptions::new().metadata("x-conversation", id.clone());
                let other = if tenant == "acme" { "globex" } else { "acme" };
                for round in 0..ROUNDS {
                    let out = ok_json(
                        &exec
                            .execute_with(
                                "links_create",
                                r#"{"destination":"https://x"}"#,
                                &options,
                            )
                            .await,
                    );
                    let raw = out["link"]["name"].as_str().expect("raw id").to_owned();
                    assert_eq!(out["link"]["id"], format!("link-{}", round + 1));
                    issued
                        .lock()
                        .expect("lock")
                        .entry(tenant)
                        .or_default()
                        .push(raw);
                    // use an alias of our own: it reaches the service as our id
                    let alias = format!("link-{}", round / 2 + 1);
                    let out = ok_json(
                        &exec
                            .execute_with(
                                "links_update",
                                &json!({"link_id": alias}).to_string(),
                                &options,
                            )
                            .await,
                    );
                    assert_eq!(out["link"]["id"], alias);
                    // try an id of the other tenant, raw: refused before any call
                    let theirs = issued
                        .lock()
                        .expect("lock")
                        .get(other)
                        .and_then(|v| v.get(round).cloned());
                    if let Some(theirs) = theirs {
                        let r = exec
                            .execute_with(
                                "links_update",
                                &json!({"link_id": theirs}).to_string(),
                                &options,
                            )
                            .await;
                        assert!(error_text(&r).contains("never seen"), "{}", r.output);
                        assert!(exec.alias_manager().alias_for(&theirs).is_none());
                    }
                    calls.fetch_add(3, Ordering::Relaxed);
                    if round % 16 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
            }));
        }
    }
    for t in tasks {
        t.await.expect("task");
    }
    // every alias of every conversation resolves to an id made for that conversation only
    // who asked for each id (the service's record of its calls)
    let mut owners = HashMap::new();
    for call in recording.calls() {
        if call.path == "/links.v1.LinksService/CreateLink" {
            let owner = call.metadata_value("x-conversation").unwrap_or_default();
            let response: pb::CreateLinkResponse = call.response.transcode_to().expect("a link");
            let link = response.link.expect("a link");
            owners.insert(link.id, owner.to_owned());
            owners.insert(link.page_theme_id, owner.to_owned());
        }
    }
    for tenant in ["acme", "globex"] {
        for c in 0..PER_TENANT {
            let id = format!("{tenant}/{c}");
            let aliases = sessions.alias_manager(&id);
            assert_eq!(aliases.len(), ROUNDS * 2);
            for entry in aliases.snapshot().entries {
                assert_eq!(owners.get(&entry.uuid), Some(&id), "{entry:?}");
            }
        }
    }
    let issued = issued.lock().expect("lock");
    for (tenant, other) in [("acme", "globex"), ("globex", "acme")] {
        for c in 0..PER_TENANT {
            let mine = sessions.alias_manager(&format!("{tenant}/{c}"));
            for theirs in &issued[other] {
                assert!(
                    mine.alias_for(theirs).is_none(),
                    "{tenant}/{c} knows {theirs}"
                );
            }
        }
    }
    let n = calls.load(Ordering::Relaxed);
    assert!(n >= 2 * PER_TENANT * ROUNDS * 2);
    println!(
        "figure: 2 tenants x {PER_TENANT} conversations, {n} interleaved calls on 8 threads, 0 cross-resolutions"
    );
}

/// Runs `conversations` × `calls` creates through one shared transport; checks
/// that every alias issued resolves afterwards in its own conversation, none
/// lost, none duplicated. Returns calls per second.
async fn stress<T: Transport + Clone>(
    transport: T,
    conversations: usize,
    calls: usize,
    raw_of: impl Fn(&Value) -> String,
) -> f64 {
    let sessions = Arc::new(Sessions::new(transport, Duration::from_secs(600)));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..conversations {
        let sessions = sessions.clone();
        tasks.push(tokio::spawn(async move {
            let id = format!("conversation-{c}");
            let exec = links_exec(&sessions, &id);
            let options = CallOptions::new().metadata("x-conversation", id.clone());
            let mut seen = Vec::with_capacity(calls);
            for n in 0..calls {
                let args = json!({"destination": "https://x", "name": format!("{id}/{n}")});
                let out = ok_json(
                    &exec
                        .execute_with("links_create", &args.to_string(), &options)
                        .await,
                );
                let alias = out["link"]["id"].as_str().expect("alias").to_owned();
                seen.push((alias, out["link"].clone()));
            }
            (id, seen)
        }));
    }
    let mut results = Vec::new();
    for t in tasks {
        results.push(t.await.expect("task"));
    }
    let elapsed = started.elapsed();
    let mut all_ids = HashSet::new();
    for (id, seen) in results {
        let aliases = sessions.alias_manager(&id);
        let expected: Vec<String> = (1..=calls).map(|n| format!("link-{n}")).collect();
        let got: Vec<&str> = seen.iter().map(|(a, _)| a.as_str()).collect();
        assert_eq!(got, expected, "{id}: aliases lost or duplicated");
        for (alias, link) in &seen {
            let raw = raw_of(link);
            assert_eq!(
                aliases.resolve(alias).as_deref(),
                Some(raw.as_str()),
                "{id} {alias}"
            );
            assert!(all_ids.insert(raw.clone()), "{raw} issued twice");
            assert_eq!(raw.len(), 36, "{id} {alias}: no raw id");
        }
        assert_eq!(aliases.len(), calls * 2, "{id}");
        assert_consistent(&aliases);
    }
    let total = conversations * calls;
    total as f64 / elapsed.as_secs_f64()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stress_64_conversations_by_1000_calls_in_process() {
    let (transport, _) = links_recording_transport();
    let per_second = stress(Arc::new(transport), 64, 1_000, |link| {
        link["name"].as_str().unwrap_or_default().to_owned()
    })
    .await;
    println!("figure: 64 x 1,000 calls in process through one transport: {per_second:.0} calls/s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stress_64_conversations_by_50_calls_over_loopback_tonic() {
    let backend = LinksBackend::with_links(0);
    let server = serve(backend.clone()).await.expect("bind");
    let channel = server.channel().expect("url");
    // the backend keeps the name we sent; map it back to the raw id afterwards
    let names: Arc<Mutex<HashMap<String, String>>> = Arc::default();
    let per_second = {
        let names = names.clone();
        let backend = backend.clone();
        stress(TonicTransport::new(channel), 64, 50, move |link| {
            let name = link["name"].as_str().unwrap_or_default();
            let mut names = names.lock().expect("lock");
            if !names.contains_key(name) {
                for l in backend.links() {
                    names.insert(l.name.clone(), l.id.clone());
                }
            }
            names.get(name).cloned().unwrap_or_default()
        })
        .await
    };
    assert_eq!(backend.links().len(), 3_200);
    println!(
        "figure: 64 x 50 calls over loopback tonic through one channel: {per_second:.0} calls/s"
    );
    server.shutdown().await;
}
