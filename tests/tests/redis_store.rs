//! The alias store in Redis, against a real `redis-server` on 127.0.0.1:
//! two `Sessions` standing for two replicas, concurrent registration,
//! restarts, Redis going down mid-call, TTL expiry, and round trips per call.
//! The scenarios a Redis Cluster shares are written once in
//! `proto_ai_tools_tests::redis_suite` (and run on a cluster by `redis_cluster.rs`);
//! this file runs them on a single server.
//!
//! The server: `AI_TOOLS_REDIS_URL` when set (CI starts one), else a
//! `redis-server` started here on a free port when the binary is on the
//! PATH, else each test says why it is skipped. Tests that stop, restart or
//! count the commands of a server start their own one (they need the binary).
//! Every test keeps its keys under a key prefix of its own. With
//! `AI_TOOLS_REQUIRE_REDIS` set (`.ci/run` sets it), a test that cannot
//! have a server fails instead of skipping.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use proto_ai_tools::{
    Sessions,
    alias::Resolution,
    store::{RedisStore, RedisStoreOptions},
    transport::TonicTransport,
};
use proto_ai_tools_tests::redis_suite::{
    self, Backend, CommandStats, Exec, Outage, RedisServer, assert_replicas_agree,
    assert_round_trips, bare_sessions, create_link, create_step, parse_commandstats, skip,
    time_store_requests, time_updates,
};
use proto_ai_tools_tests::support::{ok_json, sessions_with_store, step_link_ids, unique_prefix};
use proto_ai_tools_tests::{LinksBackend, serve};

/// The server a test uses.
struct Redis(RedisServer);

impl Redis {
    /// The shared server when `AI_TOOLS_REDIS_URL` is set, else one of our own.
    async fn shared_or_own(test: &str) -> Option<Self> {
        match RedisServer::from_env() {
            Some(server) => Some(Self(server)),
            None => Self::own_or_skip(
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
        Self::own_or_skip(
            test,
            persist,
            "no `redis-server` on the PATH: this test stops, restarts or counts the commands of a server of its own, so AI_TOOLS_REDIS_URL is not enough",
        )
        .await
    }

    async fn own_or_skip(test: &str, persist: bool, why_not: &str) -> Option<Self> {
        match RedisServer::own(test, persist).await {
            Some(server) => Some(Self(server)),
            None => skip(
                "AI_TOOLS_REQUIRE_REDIS",
                test,
                &format!("{why_not} (install Debian's `redis-server`; `.ci/run` does)"),
            ),
        }
    }

    async fn store_with(&self, key_prefix: &str, ttl: Duration) -> RedisStore {
        let mut options = RedisStoreOptions::default();
        options.key_prefix = key_prefix.to_owned();
        options.ttl = ttl;
        options.response_timeout = Duration::from_secs(1);
        options.connection_timeout = Duration::from_millis(500);
        options.reconnect_retries = 1;
        RedisStore::connect_with(&self.0.url, options)
            .await
            .expect("connect to redis")
    }

    async fn raw(&self) -> redis::aio::MultiplexedConnection {
        redis::Client::open(self.0.url.as_str())
            .expect("url")
            .get_multiplexed_async_connection()
            .await
            .expect("connect to redis")
    }
}

impl Backend for Redis {
    type Store = RedisStore;

    async fn store(&self, key_prefix: &str) -> RedisStore {
        self.store_with(key_prefix, Duration::from_secs(600)).await
    }

    fn round_trips(store: &RedisStore) -> u64 {
        store.round_trips()
    }

    fn keys(store: &RedisStore, conversation: &str) -> [String; 4] {
        store.keys(conversation)
    }

    async fn hgetall(&self, _conversation: &str, key: &str) -> BTreeMap<String, String> {
        redis::cmd("HGETALL")
            .arg(key)
            .query_async(&mut self.raw().await)
            .await
            .expect("hgetall")
    }

    async fn commandstats(&self) -> CommandStats {
        let info: String = redis::cmd("INFO")
            .arg("commandstats")
            .query_async(&mut self.raw().await)
            .await
            .expect("info");
        parse_commandstats(&info)
    }

    async fn stop(&self) {
        self.0.stop();
    }

    async fn restart(&self) {
        self.0.start().await;
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
    let conversation = "conversation-1";
    let on = |s: &Sessions<TonicTransport>| s.for_conversation::<Exec>(conversation);

    create_link(&a, conversation, 1).await;
    let first = server.backend.links()[0].clone();

    // the next turn lands on the other replica
    let out = ok_json(&create_step(&on(&b), "link-1").await);
    assert_eq!(out["step"]["id"], "step-1");
    assert_eq!(out["step"]["link_id"], "link-1");
    assert_eq!(step_link_ids(&server.backend), [first.id]);

    // counters are the conversation's, not the replica's
    create_link(&a, conversation, 2).await;
    create_link(&b, conversation, 3).await;

    // every alias resolves to the same UUID on both replicas; an invented
    // alias is refused on either, naming every alias either gave out
    assert_replicas_agree(&server, [&a, &b], conversation, 0).await;

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
    redis_suite::concurrent_registration(&redis).await;
}

#[tokio::test]
async fn a_restart_continues_the_conversation_with_its_aliases_and_counter() {
    let Some(redis) = Redis::shared_or_own("restart").await else {
        return;
    };
    redis_suite::restart_continues_the_conversation(&redis).await;
}

#[tokio::test]
async fn redis_down_mid_call_is_an_error_result_and_nothing_is_half_written() {
    let Some(redis) = Redis::own("down", true).await else {
        return;
    };
    let keys = unique_prefix("down");
    let store = redis.store(&keys).await;
    assert_eq!(
        store.keys("conversation-1"),
        [
            format!("{keys}:{{conversation-1}}:aliases"),
            format!("{keys}:{{conversation-1}}:uuids"),
            format!("{keys}:{{conversation-1}}:meta"),
            format!("{keys}:{{conversation-1}}:used"),
        ]
    );
    let outage = Outage {
        service_delay: Duration::from_millis(400),
        refused_within: Duration::from_secs(5),
        recovers_within: Duration::from_secs(10),
    };
    redis_suite::down_mid_call(&redis, store, "conversation-1", outage).await;
}

#[tokio::test]
async fn idle_conversations_expire_after_the_ttl_and_use_refreshes_it() {
    let Some(redis) = Redis::shared_or_own("ttl").await else {
        return;
    };
    let keys = unique_prefix("ttl");
    let ttl = Duration::from_millis(400);
    let store = redis.store_with(&keys, ttl).await;
    let a = bare_sessions(store.clone());
    let b = bare_sessions(redis.store_with(&keys, ttl).await);
    let first = proto_ai_tools_tests::new_uuid();
    let aliases = a.alias_manager("conversation-1");
    assert_eq!(
        aliases.register_all(&[("link", &first)]).await.unwrap(),
        ["link-1"]
    );
    let mut raw = redis.raw().await;
    // The fourth key, the aliases' last uses, exists only with an alias
    // idle time.
    for key in &store.keys("conversation-1")[..3] {
        let pttl: i64 = redis::cmd("PTTL")
            .arg(key)
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
    let second = proto_ai_tools_tests::new_uuid();
    assert_eq!(
        aliases.register_all(&[("link", &second)]).await.unwrap(),
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
    let counter = redis.store(&keys).await;
    let replica = sessions_with_store(&server, Arc::new(counter.clone()));
    let exec = replica.for_conversation::<Exec>("conversation-1");
    let report = assert_round_trips(&redis, &counter, &exec).await;

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
        create_link(sessions, "conversation-1", 1).await;
        let exec = sessions.for_conversation::<Exec>("conversation-1");
        let per_call = time_updates(&exec, N).await;
        lines.push(format!("links_update ({name}): {per_call:?} per call"));
    }
    let uuid = proto_ai_tools_tests::new_uuid();
    let (assign, lookup) = time_store_requests(&store, "bench", &uuid, N).await;
    lines.push(format!("assign of a known id: {assign:?}"));
    lines.push(format!("lookup of one alias: {lookup:?}"));
    println!("latency on loopback: {}", lines.join("; "));
    server.shutdown().await;
}

/// With an alias idle time, a conversation that lives long never stops
/// working: at the limit the least recently used alias (across replicas)
/// is evicted, an alias unused too long expires, each is then known as
/// expired rather than invented, and no number is given out twice.
#[tokio::test]
async fn with_an_alias_idle_time_aliases_expire_least_recently_used_first_and_numbers_go_on() {
    let Some(redis) = Redis::shared_or_own("alias-idle").await else {
        return;
    };
    let keys = unique_prefix("alias-idle");
    let store_with_idle = || async {
        let mut options = RedisStoreOptions::default();
        options.key_prefix = keys.clone();
        options.alias_idle = Some(Duration::from_secs(1));
        Arc::new(
            RedisStore::connect_with(&redis.0.url, options)
                .await
                .expect("connect to redis"),
        )
    };
    let replica = |store: Arc<RedisStore>| {
        Sessions::new((), Duration::from_secs(600))
            .with_store(store)
            .with_alias_limit(3)
    };
    let store = store_with_idle().await;
    let a = replica(store.clone());
    let b = replica(store_with_idle().await);
    let uuids: Vec<String> = (0..6).map(|_| proto_ai_tools_tests::new_uuid()).collect();
    let on_a = a.alias_manager("scope");
    let on_b = b.alias_manager("scope");
    let pause = || tokio::time::sleep(Duration::from_millis(20));
    for (n, uuid) in uuids[..3].iter().enumerate() {
        let got = on_a.register_all(&[("link", uuid)]).await.unwrap();
        assert_eq!(got, [format!("link-{}", n + 1)]);
        pause().await;
    }
    // link-1 used on the other replica: link-2 is now the least recent
    on_b.fetch(&["link-1"]).await.unwrap();
    assert_eq!(on_b.resolve("link-1").as_deref(), Some(uuids[0].as_str()));
    pause().await;
    assert_eq!(
        on_a.register_all(&[("link", &uuids[3])]).await.unwrap(),
        ["link-4"]
    );
    on_b.fetch(&["link-2", "link-9"]).await.unwrap();
    assert_eq!(
        on_b.resolve_for_field("link", "link-2"),
        Resolution::Expired
    );
    assert_eq!(
        on_b.resolve_for_field("link", "link-9"),
        Resolution::UnknownAlias
    );
    let mut raw = redis.raw().await;
    let [aliases, _, meta, used] = store.keys("scope");
    let held: usize = redis::cmd("HLEN")
        .arg(&aliases)
        .query_async(&mut raw)
        .await
        .unwrap();
    let ranked: usize = redis::cmd("ZCARD")
        .arg(&used)
        .query_async(&mut raw)
        .await
        .unwrap();
    let len: String = redis::cmd("HGET")
        .arg(&meta)
        .arg("#len")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!((held, ranked, len.as_str()), (3, 3, "3"));

    // unused past the idle time: all expire, on either replica, and the
    // numbering goes on
    tokio::time::sleep(Duration::from_millis(1300)).await;
    on_b.fetch(&["link-1", "link-3", "link-4"]).await.unwrap();
    for alias in ["link-1", "link-3", "link-4"] {
        assert_eq!(
            on_b.resolve_for_field("link", alias),
            Resolution::Expired,
            "{alias}"
        );
    }
    let held: usize = redis::cmd("HLEN")
        .arg(&aliases)
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(held, 0);
    assert_eq!(
        on_a.register_all(&[("link", &uuids[0])]).await.unwrap(),
        ["link-5"],
        "an expired UUID comes back under a new number"
    );
    // a batch of more new ids than the limit is refused whole
    let batch: Vec<(&str, &str)> = uuids[1..5].iter().map(|u| ("link", u.as_str())).collect();
    assert!(matches!(
        on_a.register_all(&batch).await,
        Err(proto_ai_tools::alias::AliasError::LimitReached { limit: 3 })
    ));
    assert_eq!(
        on_b.resolve_for_field("link", "link-5"),
        Resolution::UnknownAlias,
        "not fetched yet"
    );
    on_b.fetch(&["link-5"]).await.unwrap();
    assert_eq!(on_b.resolve("link-5").as_deref(), Some(uuids[0].as_str()));
    // three held and a batch of those three plus one new: evicting one of
    // the batch would answer with an alias already gone, so it is refused
    let two_more: Vec<(&str, &str)> = uuids[1..3].iter().map(|u| ("link", u.as_str())).collect();
    assert_eq!(
        on_a.register_all(&two_more).await.unwrap(),
        ["link-6", "link-7"]
    );
    let four: Vec<(&str, &str)> = [&uuids[0], &uuids[1], &uuids[2], &uuids[5]]
        .iter()
        .map(|u| ("link", u.as_str()))
        .collect();
    assert!(matches!(
        on_a.register_all(&four).await,
        Err(proto_ai_tools::alias::AliasError::LimitReached { limit: 3 })
    ));
    on_b.fetch(&["link-5", "link-6", "link-7"]).await.unwrap();
    for alias in ["link-5", "link-6", "link-7"] {
        assert!(on_b.resolve(alias).is_some(), "{alias} was kept");
    }
}

/// The keys of `conversation` as they are now (`DUMP`), to be put back
/// later: what a replica that lagged behind holds when it is promoted.
async fn dump_keys(
    raw: &mut redis::aio::MultiplexedConnection,
    keys: &[String; 4],
) -> Vec<(String, Option<Vec<u8>>)> {
    let mut dumped = Vec::new();
    for key in keys {
        let payload: Option<Vec<u8>> = redis::cmd("DUMP")
            .arg(key)
            .query_async(raw)
            .await
            .expect("DUMP");
        dumped.push((key.clone(), payload));
    }
    dumped
}

/// Puts the keys back as [`dump_keys`] found them: the writes since are lost.
async fn restore_keys(
    raw: &mut redis::aio::MultiplexedConnection,
    dumped: &[(String, Option<Vec<u8>>)],
) {
    for (key, payload) in dumped {
        let _: () = redis::cmd("DEL")
            .arg(key)
            .query_async(raw)
            .await
            .expect("DEL");
        if let Some(payload) = payload {
            let _: () = redis::cmd("RESTORE")
                .arg(key)
                .arg(600_000)
                .arg(payload)
                .query_async(raw)
                .await
                .expect("RESTORE");
        }
    }
}

/// Issue 39: a store that loses its last writes — a master killed while its
/// replica lagged behind, the replica promoted — must never make one alias
/// stand for two objects, and an alias it lost is told as lost, not as
/// expired. The loss is made exactly: the conversation's keys are dumped
/// after `book-3` and put back after `book-6`, which is what the promoted
/// replica holds. Before the fix, the gateway that had shown `book-4..6`
/// called `book-4` expired and gave it to the next new book.
#[tokio::test]
async fn a_store_that_lost_writes_never_gives_an_alias_twice_and_says_lost() {
    let Some(redis) = Redis::shared_or_own("a_store_that_lost_writes").await else {
        return;
    };
    let prefix = unique_prefix("lost-writes");
    let gateway =
        |store: RedisStore| Sessions::new((), Duration::from_secs(600)).with_store(Arc::new(store));
    let store = redis.store(&prefix).await;
    let keys = store.keys("scope");
    let first = gateway(store);
    let second = gateway(redis.store(&prefix).await);
    let on_first = first.alias_manager("scope");
    let books: Vec<String> = (0..9).map(|_| proto_ai_tools_tests::new_uuid()).collect();
    let mut raw = redis.raw().await;

    for (n, uuid) in books[..3].iter().enumerate() {
        assert_eq!(
            on_first.register_all(&[("book", uuid)]).await.unwrap(),
            [format!("book-{}", n + 1)]
        );
    }
    let lagging_replica = dump_keys(&mut raw, &keys).await;
    for (n, uuid) in books[3..6].iter().enumerate() {
        assert_eq!(
            on_first.register_all(&[("book", uuid)]).await.unwrap(),
            [format!("book-{}", n + 4)]
        );
    }
    restore_keys(&mut raw, &lagging_replica).await;

    // the gateway that showed book-4 tells it as lost, and its floor makes
    // the store keep 4..6 as lost for every gateway
    on_first.fetch(&["book-4", "book-2"]).await.unwrap();
    assert_eq!(
        on_first.resolve_for_field("book", "book-4"),
        Resolution::Lost
    );
    assert_eq!(
        on_first.resolve("book-2").as_deref(),
        Some(books[1].as_str())
    );
    assert_eq!(
        on_first.register_all(&[("book", &books[6])]).await.unwrap(),
        ["book-7"],
        "a new book must not get a number the model has seen"
    );
    // the book whose alias was lost gets a new one, never its old number
    assert_eq!(
        on_first.register_all(&[("book", &books[3])]).await.unwrap(),
        ["book-8"]
    );

    let on_second = second.alias_manager("scope");
    on_second.fetch(&["book-5", "book-9"]).await.unwrap();
    assert_eq!(
        on_second.resolve_for_field("book", "book-5"),
        Resolution::Lost
    );
    assert_eq!(
        on_second.resolve_for_field("book", "book-9"),
        Resolution::UnknownAlias
    );
    assert_eq!(
        on_second
            .register_all(&[("book", &books[8])])
            .await
            .unwrap(),
        ["book-9"]
    );
}

/// The same when the store lost the whole conversation (it was created on
/// the master after the replica's last copy): the gateway that holds a
/// fresh copy gives the store its epoch and counters back, so its aliases
/// keep their meaning to it and are told as lost elsewhere, and numbering
/// goes on past them.
#[tokio::test]
async fn a_store_that_lost_a_whole_conversation_takes_the_gateways_floor() {
    let Some(redis) = Redis::shared_or_own("a_store_that_lost_a_whole_conversation").await else {
        return;
    };
    let prefix = unique_prefix("lost-all");
    let store = redis.store(&prefix).await;
    let keys = store.keys("scope");
    let first = Sessions::new((), Duration::from_secs(600)).with_store(Arc::new(store));
    let second = Sessions::new((), Duration::from_secs(600))
        .with_store(Arc::new(redis.store(&prefix).await));
    let on_first = first.alias_manager("scope");
    let books: Vec<String> = (0..4).map(|_| proto_ai_tools_tests::new_uuid()).collect();
    let mut raw = redis.raw().await;
    let nothing = dump_keys(&mut raw, &keys).await;
    on_first
        .register_all(&[("book", &books[0]), ("book", &books[1])])
        .await
        .unwrap();
    restore_keys(&mut raw, &nothing).await;

    assert_eq!(
        on_first.register_all(&[("book", &books[2])]).await.unwrap(),
        ["book-3"]
    );
    on_first.fetch(&["book-1"]).await.unwrap();
    assert_eq!(
        on_first.resolve_for_field("book", "book-1"),
        Resolution::Lost
    );
    let on_second = second.alias_manager("scope");
    on_second.fetch(&["book-2", "book-3"]).await.unwrap();
    assert_eq!(
        on_second.resolve_for_field("book", "book-2"),
        Resolution::Lost
    );
    assert_eq!(
        on_second.resolve("book-3").as_deref(),
        Some(books[2].as_str())
    );
}
