//! The alias store on a real Redis Cluster on 127.0.0.1 (`RedisStore::connect_cluster`,
//! feature `redis-cluster`): conversations on every master, two `Sessions`
//! standing for two replicas, a restart, concurrent registration, a slot
//! migrated mid-conversation (whole, and with one conversation's keys split
//! between two nodes), concurrent registration during a migration, the
//! empty hash tag, `wait_for_replicas`, a master crashing and its replica taking
//! over, the whole cluster going down mid-call, round trips per call, and the
//! latency beside a single node's. The scenarios a single server shares are
//! written once in `proto_ai_tools_tests::redis_suite` (and run on one server by
//! `redis_store.rs`); this file runs them on the cluster, and holds what
//! only a cluster does.
//!
//! The cluster: `AI_TOOLS_REDIS_CLUSTER_URLS` (comma-separated masters' URLs;
//! `.ci/run` starts one with `scripts/redis-cluster.sh`), else one this test
//! starts with that script when `redis-server` and `redis-cli` are on the
//! PATH, else each test says why it is skipped. Tests that stop nodes start a
//! cluster of their own (they need the binaries). The tests on the shared
//! cluster take turns (one migrates slots, one counts the servers' commands).
//! With `AI_TOOLS_REQUIRE_REDIS_CLUSTER` set (`.ci/run` sets it), a test that
//! cannot have a cluster fails instead of skipping.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use proto_ai_tools::{
    Sessions,
    store::{AliasStore, Floor, RedisStore, RedisStoreOptions},
    transport::TonicTransport,
};
use proto_ai_tools_tests::redis_suite::{
    self, Backend, CommandStats, Exec, Outage, RedisServer, assert_one_alias_per_uuid,
    assert_replicas_agree, assert_round_trips, bare_sessions, create_link,
    create_links_alternating, create_step, delta, free_port, has_binaries, held, join_all,
    parse_commandstats, register_concurrently, time_store_requests, time_updates,
};
use proto_ai_tools_tests::support::{
    error_text, ok_json, sessions_with_store, step_link_ids, unique_prefix,
};
use proto_ai_tools_tests::{LinksBackend, serve};
use redis::aio::MultiplexedConnection;

/// The tests on the shared cluster take turns.
static SHARED: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Says why `test` is skipped, or fails it when a cluster is required.
fn skip<T>(test: &str, reason: &str) -> Option<T> {
    redis_suite::skip(
        "AI_TOOLS_REQUIRE_REDIS_CLUSTER",
        test,
        &format!(
            "{reason} (install Debian's `redis-server`, which has `redis-cli` too; `.ci/run` does)"
        ),
    )
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/redis-cluster.sh")
}

/// Runs `scripts/redis-cluster.sh ACTION DIR` with `env`; its stdout.
async fn cluster_script(action: &str, dir: &Path, env: &[(&str, String)]) -> String {
    let mut cmd = Command::new("bash");
    cmd.arg(script()).arg(action).arg(dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("the script's thread")
        .expect("bash runs scripts/redis-cluster.sh");
    assert!(
        out.status.success(),
        "scripts/redis-cluster.sh {action} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A cluster node as `CLUSTER NODES` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Node {
    id: String,
    port: u16,
    master: bool,
    failed: bool,
    slots: Vec<(u16, u16)>,
}

impl Node {
    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn owns(&self, slot: u16) -> bool {
        self.slots.iter().any(|&(a, b)| a <= slot && slot <= b)
    }
}

/// The cluster at `AI_TOOLS_REDIS_CLUSTER_URLS`, or one this test started
/// (stopped and removed when dropped).
struct Cluster {
    urls: Vec<String>,
    dir: Option<PathBuf>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = Command::new("bash")
                .arg(script())
                .arg("stop")
                .arg(dir)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Cluster {
    /// The shared cluster when `AI_TOOLS_REDIS_CLUSTER_URLS` is set, else one of our own.
    async fn shared_or_own(test: &str) -> Option<Self> {
        match std::env::var("AI_TOOLS_REDIS_CLUSTER_URLS") {
            Ok(urls) if !urls.trim().is_empty() => Some(Self {
                urls: urls.split(',').map(|u| u.trim().to_owned()).collect(),
                dir: None,
            }),
            _ => {
                Self::start_own(
                    test,
                    0,
                    false,
                    "neither AI_TOOLS_REDIS_CLUSTER_URLS is set nor are `redis-server` and `redis-cli` on the PATH to start a cluster",
                )
                .await
            }
        }
    }

    /// The shared cluster or one of our own, for a test that must have it
    /// to itself (it migrates slots or counts commands): its turn is held
    /// as long as the guard lives.
    async fn turn(test: &str) -> Option<(Self, tokio::sync::MutexGuard<'static, ()>)> {
        let cluster = Self::shared_or_own(test).await?;
        Some((cluster, SHARED.lock().await))
    }

    /// A cluster of our own: 3 masters with `replicas` each; with
    /// `persist`, nodes keep their data across a stop and restart.
    async fn own(test: &str, replicas: u8, persist: bool) -> Option<Self> {
        Self::start_own(
            test,
            replicas,
            persist,
            "`redis-server` or `redis-cli` is not on the PATH: this test stops nodes of a cluster of its own, so AI_TOOLS_REDIS_CLUSTER_URLS is not enough",
        )
        .await
    }

    async fn start_own(test: &str, replicas: u8, persist: bool, why_not: &str) -> Option<Self> {
        if !has_binaries(&["redis-server", "redis-cli"]) {
            return skip(test, why_not);
        }
        let dir = std::env::temp_dir().join(format!(
            "ai-tools-redis-cluster-{test}-{}-{}",
            std::process::id(),
            free_port()
        ));
        let mut cluster = Self {
            urls: Vec::new(),
            dir: Some(dir.clone()),
        };
        let urls = cluster_script("start", &dir, &cluster.env(replicas, persist)).await;
        cluster.urls = urls.split(',').map(str::to_owned).collect();
        assert_eq!(cluster.urls.len(), 3, "three masters: {urls}");
        Some(cluster)
    }

    fn env(&self, replicas: u8, persist: bool) -> Vec<(&'static str, String)> {
        vec![
            ("REDIS_CLUSTER_REPLICAS", replicas.to_string()),
            ("REDIS_CLUSTER_PERSIST", u8::from(persist).to_string()),
            // a crashed master is declared failed (and replaced) within ~2 s
            ("REDIS_CLUSTER_NODE_TIMEOUT", "1000".to_owned()),
        ]
    }

    fn dir(&self) -> &Path {
        self.dir.as_deref().expect("a cluster of our own")
    }

    /// Crashes the node on `port` (SIGKILL, no shutdown).
    fn crash(&self, port: u16) {
        let pid = std::fs::read_to_string(self.dir().join(format!("node-{port}/redis.pid")))
            .expect("the node's pid file");
        let status = Command::new("kill")
            .args(["-9", pid.trim()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -9 {pid}");
    }

    fn options(&self, key_prefix: &str) -> RedisStoreOptions {
        let mut options = RedisStoreOptions::default();
        options.key_prefix = key_prefix.to_owned();
        options.ttl = Duration::from_secs(600);
        options.response_timeout = Duration::from_secs(2);
        options.connection_timeout = Duration::from_millis(500);
        options
    }

    /// [`options`](Self::options) that wait for a replica's acknowledgement
    /// of every registration.
    fn options_waiting_for_a_replica(&self, key_prefix: &str) -> RedisStoreOptions {
        let mut options = self.options(key_prefix);
        options.wait_for_replicas = 1;
        options
    }

    async fn store_with(&self, options: RedisStoreOptions) -> RedisStore {
        let store = RedisStore::connect_cluster(&self.urls, options)
            .await
            .expect("connect to the cluster");
        assert!(store.is_cluster());
        store
    }

    /// Every node as a reachable node sees them.
    async fn topology(&self) -> Vec<Node> {
        let mut urls = self.urls.clone();
        // the nodes a reachable one knows, in case the given ones are gone
        if let Some(dir) = &self.dir
            && let Ok(entries) = std::fs::read_dir(dir)
        {
            for entry in entries.flatten() {
                if let Some(port) = entry.file_name().to_string_lossy().strip_prefix("node-") {
                    urls.push(format!("redis://127.0.0.1:{port}"));
                }
            }
        }
        for url in &urls {
            let Some(mut c) = try_node(url).await else {
                continue;
            };
            if let Ok(nodes) = cluster_nodes(&mut c).await {
                return nodes;
            }
        }
        panic!("no node of the cluster answers CLUSTER NODES ({urls:?})");
    }

    async fn masters(&self) -> Vec<Node> {
        self.topology()
            .await
            .into_iter()
            .filter(|n| n.master && !n.failed && !n.slots.is_empty())
            .collect()
    }

    async fn owner(&self, slot: u16) -> Node {
        self.try_owner(slot)
            .await
            .unwrap_or_else(|| panic!("no live master owns slot {slot}"))
    }

    async fn try_owner(&self, slot: u16) -> Option<Node> {
        self.masters().await.into_iter().find(|n| n.owns(slot))
    }

    /// A live master other than `than`.
    async fn other_master(&self, than: &Node) -> Node {
        self.masters()
            .await
            .into_iter()
            .find(|m| m.id != than.id)
            .expect("another master")
    }

    /// Waits until every live master agrees that `slot` is `owner`'s.
    async fn wait_for_owner(&self, slot: u16, owner: &Node) {
        within(
            Duration::from_secs(10),
            Duration::from_millis(50),
            &format!("the masters disagree on slot {slot}"),
            async || {
                for master in self.masters().await {
                    let seen = cluster_nodes(&mut node(&master.url()).await)
                        .await
                        .expect("cluster nodes");
                    if !seen.iter().any(|n| n.id == owner.id && n.owns(slot)) {
                        return None;
                    }
                }
                Some(())
            },
        )
        .await;
    }

    /// `CLUSTER SETSLOT IMPORTING` on `to`, `MIGRATING` on `from`.
    async fn begin_migration(&self, slot: u16, from: &Node, to: &Node) {
        setslot(to, slot, "IMPORTING", &from.id).await;
        setslot(from, slot, "MIGRATING", &to.id).await;
    }

    /// `MIGRATE` of `keys` (all of the slot's when `None`) from `from` to `to`.
    async fn move_keys(&self, slot: u16, from: &Node, to: &Node, keys: Option<&[String]>) {
        let mut f = node(&from.url()).await;
        let keys: Vec<String> = match keys {
            Some(keys) => keys.to_vec(),
            None => redis::cmd("CLUSTER")
                .arg("GETKEYSINSLOT")
                .arg(slot)
                .arg(10_000)
                .query_async(&mut f)
                .await
                .expect("getkeysinslot"),
        };
        if keys.is_empty() {
            return;
        }
        let answer: String = redis::cmd("MIGRATE")
            .arg("127.0.0.1")
            .arg(to.port)
            .arg("")
            .arg(0)
            .arg(5000)
            .arg("KEYS")
            .arg(&keys)
            .query_async(&mut f)
            .await
            .expect("migrate");
        assert!(answer == "OK" || answer == "NOKEY", "{answer}");
    }

    /// `CLUSTER SETSLOT NODE` on the target, the source, then every other master.
    async fn end_migration(&self, slot: u16, from: &Node, to: &Node) {
        let mut order = vec![to.clone(), from.clone()];
        for m in self.masters().await {
            if m.id != to.id && m.id != from.id {
                order.push(m);
            }
        }
        for m in order {
            setslot(&m, slot, "NODE", &to.id).await;
        }
        self.wait_for_owner(slot, to).await;
    }

    /// The whole migration of `slot` from its owner to `to`.
    async fn migrate(&self, slot: u16, to: &Node) {
        let from = self.owner(slot).await;
        self.begin_migration(slot, &from, to).await;
        self.move_keys(slot, &from, to, None).await;
        self.end_migration(slot, &from, to).await;
    }

    /// All three of `store`'s keys of `conversation` are on `owner`.
    async fn assert_keys_on(&self, owner: &Node, store: &RedisStore, conversation: &str) {
        let here: i64 = redis::cmd("EXISTS")
            .arg(&store.keys(conversation)[..])
            .query_async(&mut node(&owner.url()).await)
            .await
            .expect("exists");
        assert_eq!(here, 3, "{conversation} on {}", owner.url());
    }
}

impl Backend for Cluster {
    type Store = RedisStore;

    async fn store(&self, key_prefix: &str) -> RedisStore {
        self.store_with(self.options(key_prefix)).await
    }

    fn round_trips(store: &RedisStore) -> u64 {
        store.round_trips()
    }

    fn keys(store: &RedisStore, conversation: &str) -> [String; 4] {
        store.keys(conversation)
    }

    /// On the master that owns the conversation's slot.
    async fn hgetall(&self, conversation: &str, key: &str) -> BTreeMap<String, String> {
        let owner = self.owner(slot_of(conversation)).await;
        redis::cmd("HGETALL")
            .arg(key)
            .query_async(&mut node(&owner.url()).await)
            .await
            .expect("hgetall")
    }

    async fn commandstats(&self) -> CommandStats {
        let mut sum = CommandStats::new();
        for m in self.masters().await {
            let info: String = redis::cmd("INFO")
                .arg("commandstats")
                .query_async(&mut node(&m.url()).await)
                .await
                .expect("info");
            for (name, (calls, rejected)) in parse_commandstats(&info) {
                let entry = sum.entry(name).or_default();
                entry.0 += calls;
                entry.1 += rejected;
            }
        }
        sum
    }

    async fn stop(&self) {
        cluster_script("stop", self.dir(), &[]).await;
    }

    async fn restart(&self) {
        cluster_script("restart", self.dir(), &[]).await;
    }
}

/// Tries `attempt` every `every` until it gives a value; fails saying
/// `what` after `limit`.
async fn within<T>(
    limit: Duration,
    every: Duration,
    what: &str,
    mut attempt: impl AsyncFnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = attempt().await {
            return value;
        }
        assert!(Instant::now() < deadline, "{what}");
        tokio::time::sleep(every).await;
    }
}

fn parse_node(line: &str) -> Option<Node> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.len() < 8 {
        return None;
    }
    let addr = fields[1].split('@').next()?;
    let port = addr.rsplit(':').next()?.parse().ok()?;
    let flags: Vec<&str> = fields[2].split(',').collect();
    let slots = fields[8..]
        .iter()
        .filter(|s| !s.starts_with('['))
        .filter_map(|s| match s.split_once('-') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => s.parse().ok().map(|n| (n, n)),
        })
        .collect();
    Some(Node {
        id: fields[0].to_owned(),
        port,
        master: flags.contains(&"master"),
        failed: flags.contains(&"fail") || flags.contains(&"fail?"),
        slots,
    })
}

/// `CLUSTER NODES` as a node sees them.
async fn cluster_nodes(c: &mut MultiplexedConnection) -> redis::RedisResult<Vec<Node>> {
    let text: String = redis::cmd("CLUSTER").arg("NODES").query_async(c).await?;
    Ok(text.lines().filter_map(parse_node).collect())
}

/// `CLUSTER SETSLOT slot what id` on `on`.
async fn setslot(on: &Node, slot: u16, what: &str, id: &str) {
    let () = redis::cmd("CLUSTER")
        .arg("SETSLOT")
        .arg(slot)
        .arg(what)
        .arg(id)
        .query_async(&mut node(&on.url()).await)
        .await
        .unwrap_or_else(|e| panic!("CLUSTER SETSLOT {slot} {what} {id}: {e}"));
}

async fn try_node(url: &str) -> Option<MultiplexedConnection> {
    let client = redis::Client::open(url).ok()?;
    tokio::time::timeout(
        Duration::from_secs(1),
        client.get_multiplexed_async_connection(),
    )
    .await
    .ok()?
    .ok()
}

async fn node(url: &str) -> MultiplexedConnection {
    try_node(url)
        .await
        .unwrap_or_else(|| panic!("connect to {url}"))
}

/// CRC16/XMODEM, Redis Cluster's key hash.
fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &byte in data {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// The slot of a conversation's keys: its hash tag's.
fn slot_of(conversation: &str) -> u16 {
    crc16(conversation.as_bytes()) % 16384
}

/// One conversation id (starting with `stem`) on each master, each on a
/// slot of its own.
async fn conversation_per_master(cluster: &Cluster, stem: &str) -> Vec<(String, Node)> {
    let masters = cluster.masters().await;
    let mut found: Vec<(String, Node)> = Vec::new();
    for i in 0.. {
        let id = format!("{stem}-{i}");
        let slot = slot_of(&id);
        let Some(owner) = masters.iter().find(|m| m.owns(slot)) else {
            continue;
        };
        if found
            .iter()
            .all(|(c, n)| n.id != owner.id && slot_of(c) != slot)
        {
            found.push((id, owner.clone()));
        }
        if found.len() == masters.len() {
            break;
        }
    }
    found
}

/// A single `redis-server` beside the cluster: `AI_TOOLS_REDIS_URL`, or one
/// started here; `None` without the binary.
async fn single_node(test: &str) -> Option<RedisServer> {
    match RedisServer::from_env() {
        Some(server) => Some(server),
        None => RedisServer::own(test, false).await,
    }
}

/// Every alias of `before` still names its UUID in `now`.
fn assert_kept(before: &BTreeMap<String, String>, now: &BTreeMap<String, String>, through: &str) {
    for (alias, uuid) in before {
        assert_eq!(now.get(alias), Some(uuid), "{alias} survived {through}");
    }
}

#[tokio::test]
async fn conversations_on_every_master_are_shared_by_two_replicas() {
    let Some((cluster, _turn)) = Cluster::turn("every_master").await else {
        return;
    };
    let keys = unique_prefix("every-master");
    let server = serve(LinksBackend::with_links(0)).await.expect("bind");
    let a = sessions_with_store(&server, Arc::new(cluster.store(&keys).await));
    let b = sessions_with_store(&server, Arc::new(cluster.store(&keys).await));
    let placed = conversation_per_master(&cluster, "every-master").await;
    assert_eq!(placed.len(), 3, "a conversation on each of the 3 masters");

    // the hash tag puts a conversation's three keys on one slot, the one
    // computed here (the server agrees)
    let store = cluster.store(&keys).await;
    for (conversation, owner) in &placed {
        let mut c = node(&owner.url()).await;
        for key in store.keys(conversation) {
            let slot: u16 = redis::cmd("CLUSTER")
                .arg("KEYSLOT")
                .arg(&key)
                .query_async(&mut c)
                .await
                .expect("keyslot");
            assert_eq!(slot, slot_of(conversation), "{key}");
        }
    }

    for (conversation, owner) in &placed {
        let before = server.backend.links().len();
        // turns alternate between the replicas
        create_links_alternating(&a, &b, conversation, 3).await;
        assert_replicas_agree(&server, [&a, &b], conversation, before).await;

        // the keys live on the master that owns the slot
        let held = held(&cluster, &store, conversation).await;
        assert_eq!(held.aliases.len(), 3 + 3 + 6, "links, themes, steps");
        held.assert_consistent();
        cluster.assert_keys_on(owner, &store, conversation).await;
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_conversation_id_with_an_empty_hash_tag_is_refused_clearly() {
    let Some((cluster, _turn)) = Cluster::turn("empty_tag").await else {
        return;
    };
    let keys = unique_prefix("empty-tag");
    let store = cluster.store(&keys).await;
    let sessions = bare_sessions(store.clone());
    let uuid = proto_ai_tools_tests::new_uuid();
    let err = sessions
        .alias_manager("}x")
        .register_all(&[("link", &uuid)])
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("non-empty hash tag"), "{err}");
    // (`Sessions` keeps the empty id's conversation private; the store refuses it too)
    let err = store
        .assign(
            "",
            &[("link".to_owned(), uuid.clone())],
            10,
            &Floor::default(),
        )
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("non-empty hash tag"), "{err}");
    let err = store
        .lookup("", &[], &[uuid], &Floor::default())
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("non-empty hash tag"), "{err}");
    let mut options = cluster.options(&keys);
    options.key_prefix = "my{app}".into();
    let err = RedisStore::connect_cluster(&cluster.urls, options)
        .await
        .expect_err("a brace in the prefix");
    assert!(err.to_string().contains("contains a brace"), "{err}");
    let err = RedisStore::connect_cluster(Vec::<String>::new(), RedisStoreOptions::default())
        .await
        .expect_err("no URL");
    assert!(
        err.to_string().contains("no Redis Cluster node URL"),
        "{err}"
    );
    let mut options = RedisStoreOptions::default();
    options.connection_timeout = Duration::from_millis(300);
    let started = Instant::now();
    let nobody = format!("redis://127.0.0.1:{}", free_port());
    let err = RedisStore::connect_cluster([nobody.as_str()], options)
        .await
        .expect_err("nobody listens");
    assert!(started.elapsed() < Duration::from_secs(5), "no hang");
    assert!(
        err.to_string()
            .starts_with("the alias store is unavailable"),
        "{err}"
    );
}

/// [`redis_suite::restart_continues_the_conversation`], on the cluster.
#[tokio::test]
async fn a_restart_continues_the_conversation_with_its_aliases_and_counter() {
    let Some((cluster, _turn)) = Cluster::turn("restart").await else {
        return;
    };
    redis_suite::restart_continues_the_conversation(&cluster).await;
}

/// [`redis_suite::concurrent_registration`], on the cluster (without a
/// migration).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_registration_from_two_replicas_gives_one_alias_per_uuid() {
    let Some((cluster, _turn)) = Cluster::turn("concurrent_replicas").await else {
        return;
    };
    redis_suite::concurrent_registration(&cluster).await;
}

/// A live conversation's slot moves to another master between two calls
/// (whole), then back with its keys split between the two nodes while a
/// call is under way (`TRYAGAIN` until the move ends); the target never saw
/// the scripts (`NOSCRIPT`, then `EVAL`). Every alias keeps its UUID, the
/// counters go on, and no UUID gets a second alias.
#[tokio::test]
async fn a_slot_migrated_mid_conversation_keeps_every_alias_and_counter() {
    let Some((cluster, _turn)) = Cluster::turn("migrate").await else {
        return;
    };
    let keys = unique_prefix("migrate");
    let server = serve(LinksBackend::with_links(0)).await.expect("bind");
    let a = sessions_with_store(&server, Arc::new(cluster.store(&keys).await));
    let store_b = cluster.store(&keys).await;
    let b = sessions_with_store(&server, Arc::new(store_b.clone()));
    let conversation = format!("migrate-{}", proto_ai_tools_tests::new_uuid());
    let slot = slot_of(&conversation);
    let on = |s: &Sessions<TonicTransport>| s.for_conversation::<Exec>(&conversation);

    create_links_alternating(&a, &b, &conversation, 3).await;
    let before = held(&cluster, &store_b, &conversation).await.aliases;
    assert_eq!(before.len(), 6);

    // 1. the whole slot moves to another master, which never saw the scripts
    let source = cluster.owner(slot).await;
    let target = cluster.other_master(&source).await;
    let () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut node(&target.url()).await)
        .await
        .expect("script flush");
    let stats = cluster.commandstats().await;
    cluster.migrate(slot, &target).await;
    assert_eq!(cluster.owner(slot).await.id, target.id);

    // the next turn, on the other replica: link-2 is the same link
    let second = server.backend.links()[1].id.clone();
    let trips = store_b.round_trips();
    let out = ok_json(&create_step(&on(&b), "link-2").await);
    assert_eq!(out["step"]["link_id"], "link-2");
    assert_eq!(step_link_ids(&server.backend), [second]);
    let after = cluster.commandstats().await;
    // resolution: EVALSHA to the old owner (MOVED), to the new (NOSCRIPT),
    // then EVAL; registration: EVALSHA to the new owner (the client learnt
    // it from MOVED), NOSCRIPT, then EVAL (which leaves the script cached)
    let (evalsha_calls, evalsha_rejected) = delta(&stats, &after, "evalsha");
    let (eval_calls, _) = delta(&stats, &after, "eval");
    assert_eq!(eval_calls, 2, "one EVAL after NOSCRIPT for each script");
    assert!(evalsha_rejected >= 1, "the old owner said MOVED");
    assert!(evalsha_calls >= 2, "{evalsha_calls}");
    assert_eq!(
        store_b.round_trips() - trips,
        4,
        "lookup and registration, each with its EVAL after NOSCRIPT"
    );

    // the counters go on, on either replica
    create_link(&a, &conversation, 4).await;

    // 2. back to the first master, the conversation's keys split between
    // the two nodes while a call is under way: the nodes say TRYAGAIN until
    // the last key has moved, and the call waits that long
    let keys_of = store_b.keys(&conversation).to_vec();
    cluster.begin_migration(slot, &target, &source).await;
    cluster
        .move_keys(slot, &target, &source, Some(&keys_of[..1]))
        .await;
    let stats = cluster.commandstats().await;
    let exec = on(&b);
    let call = exec.execute("links_create", r#"{"destination":"https://z.example"}"#);
    let finish = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cluster.move_keys(slot, &target, &source, None).await;
        cluster.end_migration(slot, &target, &source).await;
    };
    let started = Instant::now();
    let (result, ()) = tokio::join!(call, finish);
    let waited = started.elapsed();
    let out = ok_json(&result);
    assert_eq!(out["link"]["id"], "link-5", "the counter went on");
    assert!(waited >= Duration::from_millis(300), "{waited:?}");
    let (_, rejected) = delta(&stats, &cluster.commandstats().await, "evalsha");
    assert!(rejected >= 1, "TRYAGAIN (or ASK) was answered and retried");
    println!(
        "split keys: the call waited {waited:?} through {rejected} rejected EVALSHA(s) (TRYAGAIN, ASK, MOVED)"
    );

    // every alias still names the UUID it named before either move, on a
    // replica that learnt nothing yet
    let fresh = bare_sessions(cluster.store(&keys).await);
    let aliases = fresh.alias_manager(&conversation);
    let names: Vec<&str> = before.keys().map(String::as_str).collect();
    aliases.fetch(&names).await.expect("fetch");
    for (alias, uuid) in &before {
        assert_eq!(
            aliases.resolve(alias).as_deref(),
            Some(uuid.as_str()),
            "{alias}"
        );
    }
    let now = held(&cluster, &store_b, &conversation).await;
    now.assert_consistent();
    assert_kept(&before, &now.aliases, "both moves");
    assert_eq!(
        now.aliases.len(),
        6 + 1 + 2 + 2,
        "step-1, links and themes 4 and 5"
    );
    server.shutdown().await;
}

/// Eight tasks on two replicas register the same 60 UUIDs in batches while
/// the conversation's slot migrates (the `ASK` window included): one alias
/// per UUID, 60 distinct aliases, none skipped.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_registration_during_a_migration_gives_one_alias_per_uuid() {
    let Some((cluster, _turn)) = Cluster::turn("concurrent").await else {
        return;
    };
    let keys = unique_prefix("concurrent");
    let a = Arc::new(bare_sessions(cluster.store(&keys).await));
    let b = Arc::new(bare_sessions(cluster.store(&keys).await));
    let conversation = format!("concurrent-{}", proto_ai_tools_tests::new_uuid());
    let slot = slot_of(&conversation);
    let uuids: Vec<String> = (0..60).map(|_| proto_ai_tools_tests::new_uuid()).collect();
    // the conversation exists before the move begins
    a.alias_manager(&conversation)
        .register_all(&[("link", uuids[0].as_str())])
        .await
        .expect("first");

    let pause = Duration::from_millis(5);
    let tasks = register_concurrently([&a, &b], &conversation, &uuids, 3, pause);
    let from = cluster.owner(slot).await;
    let to = cluster.other_master(&from).await;
    let stats = cluster.commandstats().await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    cluster.begin_migration(slot, &from, &to).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    cluster.move_keys(slot, &from, &to, None).await;
    // the ASK window: the keys are on the target, the slot still the source's
    tokio::time::sleep(Duration::from_millis(50)).await;
    cluster.end_migration(slot, &from, &to).await;

    let done = join_all(tasks).await;
    let after = cluster.commandstats().await;
    println!(
        "concurrent registration during a migration: {} rejected EVALSHA(s) and {} EVAL(s) (ASK, MOVED, TRYAGAIN), all retried",
        delta(&stats, &after, "evalsha").1,
        delta(&stats, &after, "eval").1
    );
    assert_eq!(assert_one_alias_per_uuid(done).len(), 60);
    let store = cluster.store(&keys).await;
    let held = held(&cluster, &store, &conversation).await;
    held.assert_consistent();
    assert_eq!(held.aliases.len(), 60);
    assert_eq!(cluster.owner(slot).await.id, to.id);
}

#[tokio::test]
async fn one_round_trip_to_resolve_and_one_to_register_per_tool_call() {
    let Some((cluster, _turn)) = Cluster::turn("round_trips").await else {
        return;
    };
    let keys = unique_prefix("round-trips");
    let server = serve(LinksBackend::with_links(0)).await.expect("bind");
    let counter = cluster.store(&keys).await;
    let replica = sessions_with_store(&server, Arc::new(counter.clone()));
    for (conversation, owner) in conversation_per_master(&cluster, "round-trips").await {
        let exec = replica.for_conversation::<Exec>(&conversation);
        assert_round_trips(&cluster, &counter, &exec).await;
        cluster
            .assert_keys_on(&owner, &counter, &conversation)
            .await;
    }
    server.shutdown().await;
}

/// With `wait_for_replicas` and no replica to acknowledge, new aliases are
/// not given out: the registration is an error.
#[tokio::test]
async fn without_the_replicas_to_wait_for_no_alias_is_given_out() {
    let Some((cluster, _turn)) = Cluster::turn("wait").await else {
        return;
    };
    let keys = unique_prefix("wait");
    let mut replicas = 0;
    for m in &cluster.masters().await {
        let info: String = redis::cmd("INFO")
            .arg("replication")
            .query_async(&mut node(&m.url()).await)
            .await
            .expect("info");
        replicas += info
            .lines()
            .find_map(|l| l.strip_prefix("connected_slaves:"))
            .and_then(|n| n.trim().parse::<usize>().ok())
            .unwrap_or(0);
    }
    if replicas > 0 {
        println!("skipped without_the_replicas_to_wait_for: this cluster has replicas");
        return;
    }
    let options = || {
        let mut options = cluster.options_waiting_for_a_replica(&keys);
        options.response_timeout = Duration::from_millis(400);
        options
    };
    let sessions = bare_sessions(cluster.store_with(options()).await);
    let uuid = proto_ai_tools_tests::new_uuid();
    let started = Instant::now();
    let err = sessions
        .alias_manager("wait-1")
        .register_all(&[("link", &uuid)])
        .await
        .expect_err("no replica acknowledges");
    let text = err.to_string();
    assert!(text.contains("reached 0 of the 1 replica(s)"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(2), "bounded");

    // the same on a single server without replicas
    let Some(single) = single_node("wait").await else {
        return;
    };
    let store = RedisStore::connect_with(&single.url, options())
        .await
        .expect("connect to redis");
    let err = store
        .assign(
            "wait-1",
            &[("link".to_owned(), uuid)],
            10,
            &Floor::default(),
        )
        .await
        .expect_err("no replica acknowledges");
    assert!(
        err.to_string().contains("reached 0 of the 1 replica(s)"),
        "{err}"
    );
}

/// A master crashes (SIGKILL) mid-conversation; its replica takes over. With
/// `wait_for_replicas = 1`, every alias the model was shown survives and the
/// counters go on.
#[tokio::test]
async fn a_master_crash_and_failover_lose_no_alias() {
    let Some(cluster) = Cluster::own("failover", 1, false).await else {
        return;
    };
    let keys = unique_prefix("failover");
    let server = serve(LinksBackend::with_links(0)).await.expect("bind");
    let options = cluster.options_waiting_for_a_replica(&keys);
    let a = sessions_with_store(&server, Arc::new(cluster.store_with(options.clone()).await));
    let b = sessions_with_store(&server, Arc::new(cluster.store_with(options).await));
    let conversation = "failover-1";
    let on = |s: &Sessions<TonicTransport>| s.for_conversation::<Exec>(conversation);
    create_links_alternating(&a, &b, conversation, 3).await;
    let store = cluster.store(&keys).await;
    let before = held(&cluster, &store, conversation).await.aliases;
    assert_eq!(before.len(), 6);

    let slot = slot_of(conversation);
    let master = cluster.owner(slot).await;
    cluster.crash(master.port);
    let crashed = Instant::now();
    // the owner is gone, and once its replica takes over no replica is left
    // to acknowledge: either way a call is an error saying the store is
    // unavailable, and nothing reaches the model unconfirmed
    let result = on(&b)
        .execute("links_update", r#"{"link_id":"link-1","name":"during"}"#)
        .await;
    let text = error_text(&result);
    assert!(text.contains("the alias store is unavailable"), "{text}");
    let limit = Duration::from_secs(30);
    let deadline = Instant::now() + limit;
    let promoted = within(
        limit,
        Duration::from_millis(100),
        "no failover within 30 s",
        async || {
            let owner = cluster.try_owner(slot).await?;
            (owner.id != master.id).then_some(owner)
        },
    )
    .await;
    let failover = crashed.elapsed();
    // the crashed node comes back, as the new master's replica
    cluster.restart().await;
    let back = crashed.elapsed();
    let second = server.backend.links()[1].id.clone();
    let mut failures = 0;
    within(
        deadline.saturating_duration_since(Instant::now()),
        Duration::from_millis(200),
        "the conversation did not go on within 30 s",
        async || {
            let result = create_step(&on(&b), "link-2").await;
            if !result.is_error {
                assert_eq!(ok_json(&result)["step"]["link_id"], "link-2");
                return Some(());
            }
            assert!(
                result.output.contains("alias store is unavailable"),
                "{}",
                result.output
            );
            failures += 1;
            None
        },
    )
    .await;
    assert_eq!(cluster.owner(slot).await.id, promoted.id);
    println!(
        "failover: replica promoted {failover:?} after the crash, replica back {back:?} after it, the conversation went on after {:?} ({failures} more failed call(s))",
        crashed.elapsed()
    );
    assert!(
        step_link_ids(&server.backend).contains(&second),
        "link-2 is still the second link"
    );

    // the counter went on
    create_link(&a, conversation, 4).await;
    let now = held(&cluster, &store, conversation).await;
    now.assert_consistent();
    assert_kept(&before, &now.aliases, "the failover");
    server.shutdown().await;
}

#[tokio::test]
async fn the_cluster_down_mid_call_is_an_error_result_and_nothing_is_half_written() {
    let Some(cluster) = Cluster::own("down", 0, true).await else {
        return;
    };
    let keys = unique_prefix("down");
    let mut options = cluster.options(&keys);
    options.response_timeout = Duration::from_secs(1);
    let store = cluster.store_with(options).await;
    let outage = Outage {
        service_delay: Duration::from_millis(600),
        refused_within: Duration::from_secs(3),
        recovers_within: Duration::from_secs(20),
    };
    redis_suite::down_mid_call(&cluster, store, "down-1", outage).await;
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Latency of whole tool calls and of the store's requests on loopback: in
/// memory, one Redis server, the cluster, in the same run (rounds
/// interleaved); printed for BENCHMARKS.md (debug build unless run with
/// `--release`), checked only loosely.
#[tokio::test]
async fn latency_per_tool_call_single_node_and_cluster() {
    let Some(cluster) = Cluster::shared_or_own("latency").await else {
        return;
    };
    let Some(single) = single_node("latency").await else {
        skip::<()>(
            "latency",
            "neither AI_TOOLS_REDIS_URL is set nor is `redis-server` on the PATH to compare a single node with",
        );
        return;
    };
    let _turn = SHARED.lock().await;
    let keys = unique_prefix("latency");
    let server = serve(LinksBackend::with_links(0)).await.expect("bind");
    let options = cluster.options(&keys);
    let node_store = RedisStore::connect_with(&single.url, options.clone())
        .await
        .expect("connect to redis");
    let cluster_store = cluster.store_with(options).await;
    let in_memory = Sessions::new(
        TonicTransport::new(server.channel().expect("url")),
        Duration::from_secs(600),
    );
    let with_node = sessions_with_store(&server, Arc::new(node_store.clone()));
    let with_cluster = sessions_with_store(&server, Arc::new(cluster_store.clone()));
    let variants = [&in_memory, &with_node, &with_cluster];
    for s in variants {
        create_link(s, "latency-1", 1).await;
    }
    const N: u32 = 200;
    const ROUNDS: usize = 5;
    let mut calls: Vec<Vec<Duration>> = vec![Vec::new(); 3];
    for _ in 0..ROUNDS {
        for (i, s) in variants.into_iter().enumerate() {
            let exec = s.for_conversation::<Exec>("latency-1");
            calls[i].push(time_updates(&exec, N).await);
        }
    }
    let uuid = proto_ai_tools_tests::new_uuid();
    let mut lookups: Vec<Vec<Duration>> = vec![Vec::new(); 2];
    let mut assigns: Vec<Vec<Duration>> = vec![Vec::new(); 2];
    for _ in 0..ROUNDS {
        for (i, store) in [&node_store, &cluster_store].into_iter().enumerate() {
            let (assign, lookup) = time_store_requests(store, "latency-2", &uuid, N).await;
            assigns[i].push(assign);
            lookups[i].push(lookup);
        }
    }
    let [memory, one, many] = [0, 1, 2].map(|i| median(calls[i].clone()));
    let [lookup_one, lookup_many] = [0, 1].map(|i| median(lookups[i].clone()));
    let [assign_one, assign_many] = [0, 1].map(|i| median(assigns[i].clone()));
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    println!(
        "latency on loopback (medians of {ROUNDS} rounds × {N}): links_update in memory {memory:?}, one node {one:?}, cluster {many:?} per call (cluster/one node {:.2}×; store's share: one node {:?}, cluster {:?}); lookup of one alias: one node {lookup_one:?}, cluster {lookup_many:?} ({:.2}×); assign of a known id: one node {assign_one:?}, cluster {assign_many:?} ({:.2}×)",
        ratio(many, one),
        one.saturating_sub(memory),
        many.saturating_sub(memory),
        ratio(lookup_many, lookup_one),
        ratio(assign_many, assign_one),
    );
    assert!(many < Duration::from_millis(200), "{many:?}");
    server.shutdown().await;
}
