//! The alias store in Redis, against a real `redis-server` on 127.0.0.1:
//! two `Sessions` standing for two replicas, concurrent registration,
//! restarts, Redis going down mid-call, TTL expiry, and round trips per call.
//!
//! The server: `AI_TOOLS_REDIS_URL` when set (CI starts one), else a
//! `redis-server` started here on a free port when the binary is on the
//! PATH, else each test says why it is skipped. Tests that stop, restart or
//! count the commands of a server start their own one (they need the binary).
//! Every test keeps its keys under a key prefix of its own. With
//! `AI_TOOLS_REQUIRE_REDIS` set (`.ci/run` sets it), a test that cannot
//! have a server fails instead of skipping.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ai_tools::{
    Sessions, TonicTransport,
    store::{AliasStore, RedisStore, RedisStoreOptions},
};
use ai_tools_tests::support::{
    error_text, ok_json, recovers_after_store_outage, sessions_with_store, step_link_ids,
    store_down_mid_call, unique_prefix,
};
use ai_tools_tests::{LinksBackend, serve};

/// The generated executor of links.proto.
type Exec = ai_tools_tests::tools::links::Executor<TonicTransport>;

/// A `redis-server` this test started (stopped when dropped), or the one at
/// `AI_TOOLS_REDIS_URL`.
struct Redis {
    url: String,
    port: u16,
    child: Option<Child>,
    dir: Option<PathBuf>,
    /// An append-only file fsynced on every write, so that the data
    /// survives a stop (slow: every request that refreshes a TTL is a write).
    persist: bool,
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn has_redis_server() -> bool {
    Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

impl Redis {
    /// The shared server when `AI_TOOLS_REDIS_URL` is set, else one of our own.
    async fn shared_or_own(test: &str) -> Option<Self> {
        match std::env::var("AI_TOOLS_REDIS_URL") {
            Ok(url) if !url.is_empty() => Some(Self {
                url,
                port: 0,
                child: None,
                dir: None,
                persist: false,
            }),
            _ => Self::start_own(
                test,
                false,
                "neither AI_TOOLS_REDIS_URL is set nor is `redis-server` on the PATH to start one",
            )
            .await,
        }
    }

    /// A server of our own, if the binary exists; with `persist`, it can be
    /// stopped and started again with its data.
    async fn own(test: &str, persist: bool) -> Option<Self> {
        Self::start_own(
            test,
            persist,
            "no `redis-server` on the PATH: this test stops, restarts or counts the commands of a server of its own, so AI_TOOLS_REDIS_URL is not enough",
        )
        .await
    }

    async fn start_own(test: &str, persist: bool, why_not: &str) -> Option<Self> {
        if !has_redis_server() {
            let reason = format!("{why_not} (install Debian's `redis-server`; `.ci/run` does)");
            assert!(
                std::env::var_os("AI_TOOLS_REQUIRE_REDIS").is_none(),
                "AI_TOOLS_REQUIRE_REDIS is set, but {reason}"
            );
            println!("skipped {test}: {reason}");
            return None;
        }
        let dir = std::env::temp_dir().join(format!(
            "ai-tools-redis-{test}-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let mut redis = Self {
            url: String::new(),
            port: free_port(),
            child: None,
            dir: Some(dir),
            persist,
        };
        redis.url = format!("redis://127.0.0.1:{}", redis.port);
        redis.start().await;
        Some(redis)
    }

    async fn start(&mut self) {
        let dir = self.dir.clone().expect("an own server");
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", ""])
            .args(if self.persist {
                ["--appendonly", "yes", "--appendfsync", "always"]
            } else {
                ["--appendonly", "no", "--appendfsync", "no"]
            })
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(client) = redis::Client::open(self.url.as_str())
                && let Ok(mut c) = client.get_multiplexed_async_connection().await
                && redis::cmd("PING")
                    .query_async::<String>(&mut c)
                    .await
                    .is_ok()
            {
                return;
            }
            assert!(Instant::now() < deadline, "redis-server did not come up");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    async fn store(&self, key_prefix: &str) -> RedisStore {
        self.store_with(key_prefix, Duration::from_secs(600)).await
    }

    async fn store_with(&self, key_prefix: &str, ttl: Duration) -> RedisStore {
        let mut options = RedisStoreOptions::default();
        options.key_prefix = key_prefix.to_owned();
        options.ttl = ttl;
        options.response_timeout = Duration::from_secs(1);
        options.connection_timeout = Duration::from_millis(500);
        options.reconnect_retries = 1;
        RedisStore::connect_with(&self.url, options)
            .await
            .expect("connect to redis")
    }

    async fn raw(&self) -> redis::aio::MultiplexedConnection {
        redis::Client::open(self.url.as_str())
            .expect("url")
            .get_multiplexed_async_connection()
            .await
            .expect("connect to redis")
    }
}

#[tokio::test]
async fn two_replicas_alternate_on_one_conversation_and_agree() {
    let Some(redis) = Redis::shared_or_own("two_replicas").await else {
        return;
    };
    let keys = unique_prefix("replicas");
    let server = serve(LinksBackend::with_links(0)).await.expect("bind");
    let a = sessions_with_store(&server, Arc::new(redis.store(&keys).await));
    let b = sessions_with_store(&server, Arc::new(redis.store(&keys).await));
    let on = |s: &Sessions<TonicTransport>| s.for_conversation::<Exec>("conversation-1");

    let out = ok_json(
        &on(&a)
            .execute("links_create", r#"{"destination":"https://a.example"}"#)
            .await,
    );
    assert_eq!(out["link"]["id"], "link-1");
    assert_eq!(out["link"]["pageThemeId"], "theme-1");
    let first = server.backend.links()[0].clone();

    // the next turn lands on the other replica
    let out = ok_json(
        &on(&b)
            .execute(
                "workflow_steps_create",
                r#"{"link_id":"link-1","action":"ACTION_EMAIL"}"#,
            )
            .await,
    );
    assert_eq!(out["step"]["id"], "step-1");
    assert_eq!(out["step"]["linkId"], "link-1");
    assert_eq!(step_link_ids(&server.backend), [first.id]);

    // counters are the conversation's, not the replica's
    let out = ok_json(
        &on(&a)
            .execute("links_create", r#"{"destination":"https://b.example"}"#)
            .await,
    );
    assert_eq!(out["link"]["id"], "link-2");
    let out = ok_json(
        &on(&b)
            .execute("links_create", r#"{"destination":"https://c.example"}"#)
            .await,
    );
    assert_eq!(out["link"]["id"], "link-3");
    assert_eq!(out["link"]["pageThemeId"], "theme-3");

    // every alias resolves to the same UUID on both replicas
    let ids: Vec<String> = server
        .backend
        .links()
        .iter()
        .rev()
        .map(|l| l.id.clone())
        .collect();
    for replica in [&a, &b] {
        let exec = on(replica);
        for (n, id) in ids.iter().enumerate() {
            exec.execute(
                "workflow_steps_create",
                &format!(r#"{{"link_id":"link-{}","action":"ACTION_EMAIL"}}"#, n + 1),
            )
            .await;
            assert_eq!(step_link_ids(&server.backend).last(), Some(id));
        }
    }

    // an invented alias is refused on either replica, naming every alias
    // either replica gave out
    for replica in [&a, &b] {
        let result = on(replica)
            .execute("links_update", r#"{"link_id":"link-9","name":"x"}"#)
            .await;
        let text = error_text(&result);
        assert!(
            text.contains("use one of: link-1, link-2, link-3"),
            "{text}"
        );
    }
    // a list reaches the model aliased with the conversation's aliases, on
    // either replica
    let out = ok_json(&on(&b).execute("links_list", "{}").await);
    let listed: Vec<&str> = out["links"]
        .as_array()
        .expect("links")
        .iter()
        .filter_map(|l| l["id"].as_str())
        .collect();
    assert_eq!(listed, ["link-3", "link-2", "link-1"]);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_registration_from_two_replicas_gives_one_alias_per_uuid() {
    let Some(redis) = Redis::shared_or_own("concurrent").await else {
        return;
    };
    let keys = unique_prefix("concurrent");
    let a = Arc::new(
        Sessions::new((), Duration::from_secs(600)).with_store(Arc::new(redis.store(&keys).await)),
    );
    let b = Arc::new(
        Sessions::new((), Duration::from_secs(600)).with_store(Arc::new(redis.store(&keys).await)),
    );
    let uuids: Vec<String> = (0..60).map(|_| ai_tools_tests::new_uuid()).collect();

    // 8 tasks, 4 per replica, register the same 60 UUIDs in batches of 6,
    // each starting at another place, so the same ids race everywhere
    let mut tasks = Vec::new();
    for t in 0..8 {
        let sessions = if t % 2 == 0 { a.clone() } else { b.clone() };
        let mut order = uuids.clone();
        order.rotate_left(t * 7);
        tasks.push(tokio::spawn(async move {
            let aliases = sessions.alias_manager("conversation-1");
            let mut got = Vec::new();
            for batch in order.chunks(6) {
                let ids: Vec<(&str, &str)> = batch.iter().map(|u| ("link", u.as_str())).collect();
                let aliases = aliases.assign(&ids).await.expect("assign");
                got.extend(batch.iter().cloned().zip(aliases));
            }
            got
        }));
    }
    let mut seen: std::collections::HashMap<String, String> = Default::default();
    for task in tasks {
        for (uuid, alias) in task.await.expect("task") {
            let first = seen.entry(uuid.clone()).or_insert_with(|| alias.clone());
            assert_eq!(*first, alias, "{uuid} got two aliases");
        }
    }
    let mut aliases: Vec<&String> = seen.values().collect();
    aliases.sort_by_key(|a| a[5..].parse::<u32>().unwrap_or(0));
    aliases.dedup();
    let expected: Vec<String> = (1..=60).map(|n| format!("link-{n}")).collect();
    assert_eq!(
        aliases.into_iter().cloned().collect::<Vec<_>>(),
        expected,
        "60 UUIDs, 60 distinct aliases, none skipped"
    );
    assert_eq!(
        a.alias_manager("conversation-1")
            .list("link")
            .await
            .expect("list"),
        expected
    );
}

#[tokio::test]
async fn a_restart_continues_the_conversation_with_its_aliases_and_counter() {
    let Some(redis) = Redis::shared_or_own("restart").await else {
        return;
    };
    let keys = unique_prefix("restart");
    let server = serve(LinksBackend::with_links(0)).await.expect("bind");
    {
        let before = sessions_with_store(&server, Arc::new(redis.store(&keys).await));
        let exec = before.for_conversation::<Exec>("conversation-1");
        for n in 1..=3 {
            let out = ok_json(
                &exec
                    .execute("links_create", r#"{"destination":"https://x.example"}"#)
                    .await,
            );
            assert_eq!(out["link"]["id"], format!("link-{n}"));
        }
        // everything dropped: the process is gone
    }
    let after = sessions_with_store(&server, Arc::new(redis.store(&keys).await));
    let exec = after.for_conversation::<Exec>("conversation-1");
    let second = server.backend.links()[1].id.clone();
    let out = ok_json(
        &exec
            .execute(
                "workflow_steps_create",
                r#"{"link_id":"link-2","action":"ACTION_EMAIL"}"#,
            )
            .await,
    );
    assert_eq!(out["step"]["linkId"], "link-2");
    assert_eq!(step_link_ids(&server.backend), [second]);
    let out = ok_json(
        &exec
            .execute("links_create", r#"{"destination":"https://y.example"}"#)
            .await,
    );
    assert_eq!(out["link"]["id"], "link-4", "the counter went on");
    assert_eq!(out["link"]["pageThemeId"], "theme-4");
    server.shutdown().await;
}

#[tokio::test]
async fn redis_down_mid_call_is_an_error_result_and_nothing_is_half_written() {
    let Some(mut redis) = Redis::own("down", true).await else {
        return;
    };
    let keys = unique_prefix("down");
    let server = serve(LinksBackend::with_links(0)).await.expect("bind");
    let replica = sessions_with_store(&server, Arc::new(redis.store(&keys).await));
    let exec = replica.for_conversation::<Exec>("conversation-1");
    ok_json(
        &exec
            .execute("links_create", r#"{"destination":"https://x.example"}"#)
            .await,
    );

    // Redis goes away while the service is answering, and stays away for
    // the next call
    let stop = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        redis.stop();
    };
    let links = store_down_mid_call(
        &exec,
        &server.backend,
        Duration::from_millis(400),
        stop,
        Duration::from_secs(5),
    )
    .await;

    // Redis comes back with its data: nothing of the failed call was
    // written, the counter did not move, the conversation goes on
    server.backend.set_delay(Duration::ZERO);
    redis.start().await;
    let mut raw = redis.raw().await;
    let store_keys = [
        format!("{keys}:{{conversation-1}}:aliases"),
        format!("{keys}:{{conversation-1}}:uuids"),
        format!("{keys}:{{conversation-1}}:meta"),
    ];
    let mut held: Vec<String> = redis::cmd("HKEYS")
        .arg(&store_keys[0])
        .query_async(&mut raw)
        .await
        .expect("hkeys");
    held.sort();
    assert_eq!(held, ["link-1", "theme-1"], "nothing half-written");
    let len: String = redis::cmd("HGET")
        .arg(&store_keys[2])
        .arg("#len")
        .query_async(&mut raw)
        .await
        .expect("hget");
    assert_eq!(len, "2");
    let withheld = &links[0];
    let known: Option<String> = redis::cmd("HGET")
        .arg(&store_keys[1])
        .arg(&withheld.id)
        .query_async(&mut raw)
        .await
        .expect("hget");
    assert_eq!(known, None, "the withheld link's id was not registered");

    recovers_after_store_outage(&exec, Duration::from_secs(10)).await;
    server.shutdown().await;
}

#[tokio::test]
async fn idle_conversations_expire_after_the_ttl_and_use_refreshes_it() {
    let Some(redis) = Redis::shared_or_own("ttl").await else {
        return;
    };
    let keys = unique_prefix("ttl");
    let ttl = Duration::from_millis(400);
    let store = Arc::new(redis.store_with(&keys, ttl).await);
    let a = Sessions::new((), Duration::from_secs(600)).with_store(store.clone());
    let b = Sessions::new((), Duration::from_secs(600))
        .with_store(Arc::new(redis.store_with(&keys, ttl).await));
    let first = ai_tools_tests::new_uuid();
    let aliases = a.alias_manager("conversation-1");
    assert_eq!(
        aliases.assign(&[("link", &first)]).await.unwrap(),
        ["link-1"]
    );
    let mut raw = redis.raw().await;
    for key in store.keys("conversation-1") {
        let pttl: i64 = redis::cmd("PTTL")
            .arg(&key)
            .query_async(&mut raw)
            .await
            .unwrap();
        assert!(pttl > 0 && pttl <= 400, "{key}: {pttl}");
    }

    // used every 200 ms (on the other replica): kept past the TTL
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let on_b = b.alias_manager("conversation-1");
        on_b.fetch(&["link-1"]).await.unwrap();
        assert_eq!(on_b.resolve("link-1").as_deref(), Some(first.as_str()));
    }

    // idle past the TTL: gone from Redis, and from the replicas' copies
    tokio::time::sleep(Duration::from_millis(600)).await;
    let exists: i64 = redis::cmd("EXISTS")
        .arg(&store.keys("conversation-1")[..])
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(exists, 0);
    assert_eq!(
        aliases.resolve("link-1").as_deref(),
        Some(first.as_str()),
        "the stale copy"
    );
    aliases.fetch(&["link-1"]).await.unwrap();
    assert_eq!(aliases.resolve("link-1"), None, "the stale copy is dropped");
    let second = ai_tools_tests::new_uuid();
    assert_eq!(
        aliases.assign(&[("link", &second)]).await.unwrap(),
        ["link-1"]
    );
    let on_b = b.alias_manager("conversation-1");
    on_b.fetch(&["link-1"]).await.unwrap();
    assert_eq!(on_b.resolve("link-1").as_deref(), Some(second.as_str()));
}

#[tokio::test]
async fn one_round_trip_to_resolve_and_one_to_register_per_tool_call() {
    let Some(redis) = Redis::own("round_trips", false).await else {
        return;
    };
    let keys = unique_prefix("round-trips");
    let server = serve(LinksBackend::with_links(0)).await.expect("bind");
    let store = redis.store(&keys).await;
    let counter = store.clone();
    let replica = sessions_with_store(&server, Arc::new(store));
    let exec = replica.for_conversation::<Exec>("conversation-1");
    let mut raw = redis.raw().await;
    async fn evalsha(raw: &mut redis::aio::MultiplexedConnection) -> u64 {
        let info: String = redis::cmd("INFO")
            .arg("commandstats")
            .query_async(raw)
            .await
            .expect("info");
        info.lines()
            .find_map(|l| l.strip_prefix("cmdstat_evalsha:calls="))
            .and_then(|rest| rest.split(',').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }

    // (tool, arguments, round trips expected: resolution + registration)
    let calls: &[(&str, &str, u64)] = &[
        ("links_create", r#"{"destination":"https://x.example"}"#, 1),
        ("links_create", r#"{"destination":"https://y.example"}"#, 1),
        ("links_update", r#"{"link_id":"link-1","name":"n"}"#, 2),
        (
            "workflow_steps_create",
            r#"{"link_id":"link-2","action":"ACTION_EMAIL"}"#,
            2,
        ),
        ("links_list", r#"{"page_size":10}"#, 1),
        ("workflow_steps_delete", r#"{"step_id":"step-1"}"#, 1),
    ];
    let mut report = Vec::new();
    for (tool, args, expected) in calls {
        let (trips, evals) = (counter.round_trips(), evalsha(&mut raw).await);
        let started = Instant::now();
        ok_json(&exec.execute(tool, args).await);
        let elapsed = started.elapsed();
        let trips = counter.round_trips() - trips;
        let evals = evalsha(&mut raw).await - evals;
        assert_eq!(trips, *expected, "{tool}: round trips");
        assert_eq!(evals, *expected, "{tool}: EVALSHA seen by the server");
        report.push(format!("{tool}: {trips} round trip(s), {elapsed:?}"));
    }
    // 200 ids in one answer are still one round trip
    let big = serve(LinksBackend::with_links(100)).await.expect("bind");
    let replica = sessions_with_store(&big, Arc::new(counter.clone()));
    let exec = replica.for_conversation::<Exec>("conversation-2");
    let trips = counter.round_trips();
    let out = ok_json(&exec.execute("links_list", r#"{"page_size":100}"#).await);
    assert_eq!(out["links"].as_array().map(Vec::len), Some(100));
    assert_eq!(
        counter.round_trips() - trips,
        1,
        "a list of 100 links (200 ids)"
    );
    println!("round trips per tool call: {}", report.join("; "));
    big.shutdown().await;
    server.shutdown().await;
}

/// Latency of the store's requests and of whole tool calls on loopback, with
/// and without Redis; printed for BENCHMARKS.md (debug build unless run with
/// `--release`), checked only loosely.
#[tokio::test]
async fn latency_per_tool_call_on_loopback() {
    let Some(redis) = Redis::shared_or_own("latency").await else {
        return;
    };
    let keys = unique_prefix("latency");
    let server = serve(LinksBackend::with_links(0)).await.expect("bind");
    let store = redis.store(&keys).await;
    let with_redis = sessions_with_store(&server, Arc::new(store.clone()));
    let in_memory = Sessions::new(
        TonicTransport::new(server.channel().expect("url")),
        Duration::from_secs(600),
    );
    const N: u32 = 200;
    let mut lines = Vec::new();
    for (name, sessions) in [("in memory", &in_memory), ("redis", &with_redis)] {
        let exec = sessions.for_conversation::<Exec>("conversation-1");
        ok_json(
            &exec
                .execute("links_create", r#"{"destination":"https://x.example"}"#)
                .await,
        );
        let started = Instant::now();
        for _ in 0..N {
            ok_json(
                &exec
                    .execute("links_update", r#"{"link_id":"link-1","name":"n"}"#)
                    .await,
            );
        }
        lines.push(format!(
            "links_update ({name}): {:?} per call",
            started.elapsed() / N
        ));
    }
    let ids = [("link".to_owned(), ai_tools_tests::new_uuid())];
    let aliases = ["link-1".to_owned()];
    let started = Instant::now();
    for _ in 0..N {
        store.assign("bench", &ids, 10).await.expect("assign");
    }
    lines.push(format!("assign of a known id: {:?}", started.elapsed() / N));
    let started = Instant::now();
    for _ in 0..N {
        store.lookup("bench", &aliases, &[]).await.expect("lookup");
    }
    lines.push(format!("lookup of one alias: {:?}", started.elapsed() / N));
    println!("latency on loopback: {}", lines.join("; "));
    server.shutdown().await;
}
