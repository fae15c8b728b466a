//! The alias store on a real Redis Cluster on 127.0.0.1 (`RedisStore::connect_cluster`,
//! feature `redis-cluster`): conversations on every master, two `Sessions`
//! standing for two replicas, a slot migrated mid-conversation (whole, and
//! with one conversation's keys split between two nodes), concurrent
//! registration during a migration, a master crashing and its replica taking
//! over, the whole cluster going down mid-call, round trips per call, and the
//! latency beside a single node's.
//!
//! The cluster: `AI_TOOLS_REDIS_CLUSTER_URLS` (comma-separated masters' URLs;
//! `.ci/run` starts one with `scripts/redis-cluster.sh`), else one this test
//! starts with that script when `redis-server` and `redis-cli` are on the
//! PATH, else each test says why it is skipped. Tests that stop nodes start a
//! cluster of their own (they need the binaries). The tests on the shared
//! cluster take turns (one migrates slots, one counts the servers' commands).
//! With `AI_TOOLS_REQUIRE_REDIS_CLUSTER` set (`.ci/run` sets it), a test that
//! cannot have a cluster fails instead of skipping.

use std::collections::{BTreeMap, HashMap};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
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
use redis::aio::MultiplexedConnection;

/// The generated executor of links.proto.
type Exec = ai_tools_tests::tools::links::Executor<TonicTransport>;

/// The tests on the shared cluster take turns.
static SHARED: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const REQUIRE: &str = "AI_TOOLS_REQUIRE_REDIS_CLUSTER";

/// Says why `test` is skipped, or fails it when a cluster is required.
fn skip<T>(test: &str, reason: &str) -> Option<T> {
    let reason = format!(
        "{reason} (install Debian's `redis-server`, which has `redis-cli` too; `.ci/run` does)"
    );
    assert!(
        std::env::var_os(REQUIRE).is_none(),
        "{REQUIRE} is set, but {reason}"
    );
    println!("skipped {test}: {reason}");
    None
}

fn has_binaries() -> bool {
    ["redis-server", "redis-cli"].iter().all(|tool| {
        Command::new(tool)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
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

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
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
        if !has_binaries() {
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

    async fn stop(&self) {
        cluster_script("stop", self.dir(), &[]).await;
    }

    async fn restart(&self) {
        cluster_script("restart", self.dir(), &[]).await;
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

    async fn options(&self, key_prefix: &str) -> RedisStoreOptions {
        let mut options = RedisStoreOptions::default();
        options.key_prefix = key_prefix.to_owned();
        options.ttl = Duration::from_secs(600);
        options.response_timeout = Duration::from_secs(2);
        options.connection_timeout = Duration::from_millis(500);
        options
    }

    async fn store(&self, key_prefix: &str) -> RedisStore {
        let options = self.options(key_prefix).await;
        self.store_with(options).await
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
            let Ok(text) = redis::cmd("CLUSTER")
                .arg("NODES")
                .query_async::<String>(&mut c)
                .await
            else {
                continue;
            };
            return text.lines().filter_map(parse_node).collect();
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

    /// Waits until every live master agrees that `slot` is `owner`'s.
    async fn wait_for_owner(&self, slot: u16, owner: &Node) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let mut agreed = true;
            for master in self.masters().await {
                let mut c = node(&master.url()).await;
                let text: String = redis::cmd("CLUSTER")
                    .arg("NODES")
                    .query_async(&mut c)
                    .await
                    .expect("cluster nodes");
                let seen: Vec<Node> = text.lines().filter_map(parse_node).collect();
                agreed &= seen.iter().any(|n| n.id == owner.id && n.owns(slot));
            }
            if agreed {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the masters disagree on slot {slot}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// `CLUSTER SETSLOT IMPORTING` on `to`, `MIGRATING` on `from`.
    async fn begin_migration(&self, slot: u16, from: &Node, to: &Node) {
        let mut t = node(&to.url()).await;
        setslot(&mut t, slot, "IMPORTING", &from.id).await;
        let mut f = node(&from.url()).await;
        setslot(&mut f, slot, "MIGRATING", &to.id).await;
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
            let mut c = node(&m.url()).await;
            setslot(&mut c, slot, "NODE", &to.id).await;
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

    /// Per command, summed over the live masters: (calls, rejected calls).
    async fn commandstats(&self) -> HashMap<String, (u64, u64)> {
        let mut sum: HashMap<String, (u64, u64)> = HashMap::new();
        for m in self.masters().await {
            let mut c = node(&m.url()).await;
            let info: String = redis::cmd("INFO")
                .arg("commandstats")
                .query_async(&mut c)
                .await
                .expect("info");
            for line in info.lines() {
                let Some((name, rest)) = line
                    .strip_prefix("cmdstat_")
                    .and_then(|l| l.split_once(':'))
                else {
                    continue;
                };
                let field = |key: &str| -> u64 {
                    rest.split(',')
                        .find_map(|kv| kv.strip_prefix(key))
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0)
                };
                let entry = sum.entry(name.to_owned()).or_default();
                entry.0 += field("calls=");
                entry.1 += field("rejected_calls=");
            }
        }
        sum
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

async fn setslot(c: &mut MultiplexedConnection, slot: u16, what: &str, id: &str) {
    let () = redis::cmd("CLUSTER")
        .arg("SETSLOT")
        .arg(slot)
        .arg(what)
        .arg(id)
        .query_async(c)
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

/// What the store holds for `conversation`, read straight from the node
/// that owns it: alias → UUID, and UUID → its aliases.
async fn held(
    cluster: &Cluster,
    store: &RedisStore,
    conversation: &str,
) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let owner = cluster.owner(slot_of(conversation)).await;
    let mut c = node(&owner.url()).await;
    let [aliases, uuids, _] = store.keys(conversation);
    let aliases: BTreeMap<String, String> = redis::cmd("HGETALL")
        .arg(&aliases)
        .query_async(&mut c)
        .await
        .expect("hgetall aliases");
    let uuids: BTreeMap<String, String> = redis::cmd("HGETALL")
        .arg(&uuids)
        .query_async(&mut c)
        .await
        .expect("hgetall uuids");
    (aliases, uuids)
}

/// Every alias names one UUID, every UUID has one alias per prefix, and the
/// two hashes agree.
fn assert_consistent(aliases: &BTreeMap<String, String>, uuids: &BTreeMap<String, String>) {
    for (uuid, list) in uuids {
        let mut prefixes: Vec<&str> = list
            .split_whitespace()
            .map(|a| a.rsplit_once('-').map_or(a, |(p, _)| p))
            .collect();
        let n = prefixes.len();
        prefixes.dedup();
        assert_eq!(
            prefixes.len(),
            n,
            "{uuid} has two aliases of one prefix: {list}"
        );
        for alias in list.split_whitespace() {
            assert_eq!(aliases.get(alias), Some(uuid), "{alias} of {uuid}");
        }
    }
    let listed: usize = uuids.values().map(|l| l.split_whitespace().count()).sum();
    assert_eq!(
        listed,
        aliases.len(),
        "every alias is listed under its UUID"
    );
}

#[tokio::test]
async fn conversations_on_every_master_are_shared_by_two_replicas() {
    let Some(cluster) = Cluster::shared_or_own("every_master").await else {
        return;
    };
    let _turn = SHARED.lock().await;
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
        let on = |s: &Sessions<TonicTransport>| s.for_conversation::<Exec>(conversation);
        let before = server.backend.links().len();
        for n in 1..=3 {
            // turns alternate between the replicas
            let replica = if n % 2 == 1 { &a } else { &b };
            let out = ok_json(
                &on(replica)
                    .execute("links_create", r#"{"destination":"https://a.example"}"#)
                    .await,
            );
            assert_eq!(out["link"]["id"], format!("link-{n}"), "{conversation}");
            assert_eq!(out["link"]["pageThemeId"], format!("theme-{n}"));
        }
        let links = server.backend.links();
        let created: Vec<String> = links[..links.len() - before]
            .iter()
            .rev()
            .map(|l| l.id.clone())
            .collect();
        for replica in [&a, &b] {
            for (n, id) in created.iter().enumerate() {
                ok_json(
                    &on(replica)
                        .execute(
                            "workflow_steps_create",
                            &format!(r#"{{"link_id":"link-{}","action":"ACTION_EMAIL"}}"#, n + 1),
                        )
                        .await,
                );
                assert_eq!(step_link_ids(&server.backend).last(), Some(id));
            }
        }
        let result = on(&b)
            .execute("links_update", r#"{"link_id":"link-9","name":"x"}"#)
            .await;
        let text = error_text(&result);
        assert!(
            text.contains("use one of: link-1, link-2, link-3"),
            "{text}"
        );

        // the keys live on the master that owns the slot
        let (aliases, uuids) = held(&cluster, &store, conversation).await;
        assert_eq!(aliases.len(), 3 + 3 + 6, "links, themes, steps");
        assert_consistent(&aliases, &uuids);
        let mut c = node(&owner.url()).await;
        let here: i64 = redis::cmd("EXISTS")
            .arg(&store.keys(conversation)[..])
            .query_async(&mut c)
            .await
            .expect("exists");
        assert_eq!(here, 3, "{conversation} on {}", owner.url());
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_conversation_id_with_an_empty_hash_tag_is_refused_clearly() {
    let Some(cluster) = Cluster::shared_or_own("empty_tag").await else {
        return;
    };
    let _turn = SHARED.lock().await;
    let keys = unique_prefix("empty-tag");
    let store = cluster.store(&keys).await;
    let sessions = Sessions::new((), Duration::from_secs(600)).with_store(Arc::new(store.clone()));
    let uuid = ai_tools_tests::new_uuid();
    let err = sessions
        .alias_manager("}x")
        .assign(&[("link", &uuid)])
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("non-empty hash tag"), "{err}");
    // (`Sessions` keeps the empty id's conversation private; the store refuses it too)
    let err = store
        .assign("", &[("link".to_owned(), uuid.clone())], 10)
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("non-empty hash tag"), "{err}");
    let err = store.lookup("", &[], &[uuid]).await.expect_err("refused");
    assert!(err.to_string().contains("non-empty hash tag"), "{err}");
    let mut options = cluster.options(&keys).await;
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

/// A live conversation's slot moves to another master between two calls
/// (whole), then back with its keys split between the two nodes while a
/// call is under way (`TRYAGAIN` until the move ends); the target never saw
/// the scripts (`NOSCRIPT`, then `EVAL`). Every alias keeps its UUID, the
/// counters go on, and no UUID gets a second alias.
#[tokio::test]
async fn a_slot_migrated_mid_conversation_keeps_every_alias_and_counter() {
    let Some(cluster) = Cluster::shared_or_own("migrate").await else {
        return;
    };
    let _turn = SHARED.lock().await;
    let keys = unique_prefix("migrate");
    let server = serve(LinksBackend::with_links(0)).await.expect("bind");
    let a = sessions_with_store(&server, Arc::new(cluster.store(&keys).await));
    let store_b = cluster.store(&keys).await;
    let b = sessions_with_store(&server, Arc::new(store_b.clone()));
    let conversation = format!("migrate-{}", ai_tools_tests::new_uuid());
    let slot = slot_of(&conversation);
    let on = |s: &Sessions<TonicTransport>| s.for_conversation::<Exec>(&conversation);

    for n in 1..=3 {
        let replica = if n % 2 == 1 { &a } else { &b };
        let out = ok_json(
            &on(replica)
                .execute("links_create", r#"{"destination":"https://x.example"}"#)
                .await,
        );
        assert_eq!(out["link"]["id"], format!("link-{n}"));
    }
    let (before, _) = held(&cluster, &store_b, &conversation).await;
    assert_eq!(before.len(), 6);

    // 1. the whole slot moves to another master, which never saw the scripts
    let source = cluster.owner(slot).await;
    let target = cluster
        .masters()
        .await
        .into_iter()
        .find(|m| m.id != source.id)
        .expect("another master");
    let mut t = node(&target.url()).await;
    let () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut t)
        .await
        .expect("script flush");
    let stats = cluster.commandstats().await;
    cluster.migrate(slot, &target).await;
    assert_eq!(cluster.owner(slot).await.id, target.id);

    // the next turn, on the other replica: link-2 is the same link
    let second = server.backend.links()[1].id.clone();
    let trips = store_b.round_trips();
    let out = ok_json(
        &on(&b)
            .execute(
                "workflow_steps_create",
                r#"{"link_id":"link-2","action":"ACTION_EMAIL"}"#,
            )
            .await,
    );
    assert_eq!(out["step"]["linkId"], "link-2");
    assert_eq!(step_link_ids(&server.backend), [second]);
    let after = cluster.commandstats().await;
    let delta = |cmd: &str| {
        let (c0, r0) = stats.get(cmd).copied().unwrap_or_default();
        let (c1, r1) = after.get(cmd).copied().unwrap_or_default();
        (c1 - c0, r1 - r0)
    };
    // resolution: EVALSHA to the old owner (MOVED), to the new (NOSCRIPT),
    // then EVAL; registration: EVALSHA to the new owner (the client learnt
    // it from MOVED), NOSCRIPT, then EVAL (which leaves the script cached)
    let (evalsha_calls, evalsha_rejected) = delta("evalsha");
    let (eval_calls, _) = delta("eval");
    assert_eq!(eval_calls, 2, "one EVAL after NOSCRIPT for each script");
    assert!(evalsha_rejected >= 1, "the old owner said MOVED");
    assert!(evalsha_calls >= 2, "{evalsha_calls}");
    assert_eq!(
        store_b.round_trips() - trips,
        4,
        "lookup and registration, each with its EVAL after NOSCRIPT"
    );

    // the counters go on, on either replica
    let out = ok_json(
        &on(&a)
            .execute("links_create", r#"{"destination":"https://y.example"}"#)
            .await,
    );
    assert_eq!(out["link"]["id"], "link-4");
    assert_eq!(out["link"]["pageThemeId"], "theme-4");

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
    let after = cluster.commandstats().await;
    let (_, rejected) = {
        let (c0, r0) = stats.get("evalsha").copied().unwrap_or_default();
        let (c1, r1) = after.get("evalsha").copied().unwrap_or_default();
        (c1 - c0, r1 - r0)
    };
    assert!(rejected >= 1, "TRYAGAIN (or ASK) was answered and retried");
    println!(
        "split keys: the call waited {waited:?} through {rejected} rejected EVALSHA(s) (TRYAGAIN, ASK, MOVED)"
    );

    // every alias still names the UUID it named before either move, on a
    // replica that learnt nothing yet
    let fresh = Sessions::new((), Duration::from_secs(600))
        .with_store(Arc::new(cluster.store(&keys).await));
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
    let (now, uuids) = held(&cluster, &store_b, &conversation).await;
    assert_consistent(&now, &uuids);
    for (alias, uuid) in &before {
        assert_eq!(now.get(alias), Some(uuid), "{alias}");
    }
    assert_eq!(now.len(), 6 + 1 + 2 + 2, "step-1, links and themes 4 and 5");
    server.shutdown().await;
}

/// Eight tasks on two replicas register the same 60 UUIDs in batches while
/// the conversation's slot migrates (the `ASK` window included): one alias
/// per UUID, 60 distinct aliases, none skipped.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_registration_during_a_migration_gives_one_alias_per_uuid() {
    let Some(cluster) = Cluster::shared_or_own("concurrent").await else {
        return;
    };
    let _turn = SHARED.lock().await;
    let keys = unique_prefix("concurrent");
    let a = Arc::new(
        Sessions::new((), Duration::from_secs(600))
            .with_store(Arc::new(cluster.store(&keys).await)),
    );
    let b = Arc::new(
        Sessions::new((), Duration::from_secs(600))
            .with_store(Arc::new(cluster.store(&keys).await)),
    );
    let conversation = format!("concurrent-{}", ai_tools_tests::new_uuid());
    let slot = slot_of(&conversation);
    let uuids: Vec<String> = (0..60).map(|_| ai_tools_tests::new_uuid()).collect();
    // the conversation exists before the move begins
    a.alias_manager(&conversation)
        .assign(&[("link", uuids[0].as_str())])
        .await
        .expect("first");

    let mut tasks = Vec::new();
    for t in 0..8 {
        let sessions = if t % 2 == 0 { a.clone() } else { b.clone() };
        let mut order = uuids.clone();
        order.rotate_left(t * 7);
        let conversation = conversation.clone();
        tasks.push(tokio::spawn(async move {
            let aliases = sessions.alias_manager(&conversation);
            let mut got = Vec::new();
            for batch in order.chunks(3) {
                let ids: Vec<(&str, &str)> = batch.iter().map(|u| ("link", u.as_str())).collect();
                let aliases = aliases.assign(&ids).await.expect("assign");
                got.extend(batch.iter().cloned().zip(aliases));
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            got
        }));
    }
    let from = cluster.owner(slot).await;
    let to = cluster
        .masters()
        .await
        .into_iter()
        .find(|m| m.id != from.id)
        .expect("another master");
    let stats = cluster.commandstats().await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    cluster.begin_migration(slot, &from, &to).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    cluster.move_keys(slot, &from, &to, None).await;
    // the ASK window: the keys are on the target, the slot still the source's
    tokio::time::sleep(Duration::from_millis(50)).await;
    cluster.end_migration(slot, &from, &to).await;

    let mut seen: HashMap<String, String> = HashMap::new();
    let mut done = Vec::new();
    for task in tasks {
        done.push(task.await.expect("task"));
    }
    let after = cluster.commandstats().await;
    let rejected = |cmd: &str| {
        after.get(cmd).copied().unwrap_or_default().1
            - stats.get(cmd).copied().unwrap_or_default().1
    };
    println!(
        "concurrent registration during a migration: {} rejected EVALSHA(s) and {} EVAL(s) (ASK, MOVED, TRYAGAIN), all retried",
        rejected("evalsha"),
        rejected("eval")
    );
    for got in done {
        for (uuid, alias) in got {
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
    let store = cluster.store(&keys).await;
    let (held_aliases, held_uuids) = held(&cluster, &store, &conversation).await;
    assert_consistent(&held_aliases, &held_uuids);
    assert_eq!(held_aliases.len(), 60);
    assert_eq!(cluster.owner(slot).await.id, to.id);
}

#[tokio::test]
async fn one_round_trip_to_resolve_and_one_to_register_per_tool_call() {
    let Some(cluster) = Cluster::shared_or_own("round_trips").await else {
        return;
    };
    let _turn = SHARED.lock().await;
    let keys = unique_prefix("round-trips");
    let server = serve(LinksBackend::with_links(0)).await.expect("bind");
    let store = cluster.store(&keys).await;
    let counter = store.clone();
    let replica = sessions_with_store(&server, Arc::new(store));
    for (conversation, owner) in conversation_per_master(&cluster, "round-trips").await {
        let exec = replica.for_conversation::<Exec>(&conversation);
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
        ];
        for (tool, args, expected) in calls {
            let trips = counter.round_trips();
            let stats = cluster.commandstats().await;
            ok_json(&exec.execute(tool, args).await);
            let after = cluster.commandstats().await;
            let (c0, r0) = stats.get("evalsha").copied().unwrap_or_default();
            let (c1, r1) = after.get("evalsha").copied().unwrap_or_default();
            assert_eq!(
                counter.round_trips() - trips,
                *expected,
                "{tool}: round trips"
            );
            assert_eq!(c1 - c0, *expected, "{tool}: EVALSHA seen by the masters");
            assert_eq!(r1 - r0, 0, "{tool}: nothing redirected");
            let (e0, _) = stats.get("eval").copied().unwrap_or_default();
            let (e1, _) = after.get("eval").copied().unwrap_or_default();
            assert_eq!(e1, e0, "{tool}: no EVAL");
        }
        let mut c = node(&owner.url()).await;
        let here: i64 = redis::cmd("EXISTS")
            .arg(&counter.keys(&conversation)[..])
            .query_async(&mut c)
            .await
            .expect("exists");
        assert_eq!(here, 3, "{conversation} on {}", owner.url());
    }
    server.shutdown().await;
}

/// With `wait_for_replicas` and no replica to acknowledge, new aliases are
/// not given out: the registration is an error.
#[tokio::test]
async fn without_the_replicas_to_wait_for_no_alias_is_given_out() {
    let Some(cluster) = Cluster::shared_or_own("wait").await else {
        return;
    };
    let _turn = SHARED.lock().await;
    let keys = unique_prefix("wait");
    let masters = cluster.masters().await;
    let mut replicas = 0;
    for m in &masters {
        let mut c = node(&m.url()).await;
        let info: String = redis::cmd("INFO")
            .arg("replication")
            .query_async(&mut c)
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
    let mut options = cluster.options(&keys).await;
    options.wait_for_replicas = 1;
    options.response_timeout = Duration::from_millis(400);
    let sessions = Sessions::new((), Duration::from_secs(600))
        .with_store(Arc::new(cluster.store_with(options).await));
    let uuid = ai_tools_tests::new_uuid();
    let started = Instant::now();
    let err = sessions
        .alias_manager("wait-1")
        .assign(&[("link", &uuid)])
        .await
        .expect_err("no replica acknowledges");
    let text = err.to_string();
    assert!(text.contains("reached 0 of the 1 replica(s)"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(2), "bounded");

    // the same on a single server without replicas
    let Some(single) = SingleNode::get().await else {
        return;
    };
    let mut options = cluster.options(&keys).await;
    options.wait_for_replicas = 1;
    options.response_timeout = Duration::from_millis(400);
    let store = RedisStore::connect_with(&single.url, options)
        .await
        .expect("connect to redis");
    let err = store
        .assign("wait-1", &[("link".to_owned(), uuid)], 10)
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
    let mut options = cluster.options(&keys).await;
    options.wait_for_replicas = 1;
    let a = sessions_with_store(&server, Arc::new(cluster.store_with(options.clone()).await));
    let b = sessions_with_store(&server, Arc::new(cluster.store_with(options).await));
    let conversation = "failover-1";
    let on = |s: &Sessions<TonicTransport>| s.for_conversation::<Exec>(conversation);
    for n in 1..=3 {
        let replica = if n % 2 == 1 { &a } else { &b };
        let out = ok_json(
            &on(replica)
                .execute("links_create", r#"{"destination":"https://x.example"}"#)
                .await,
        );
        assert_eq!(out["link"]["id"], format!("link-{n}"));
    }
    let store = cluster.store(&keys).await;
    let (before, _) = held(&cluster, &store, conversation).await;
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
    let deadline = Instant::now() + Duration::from_secs(30);
    let promoted = loop {
        if let Some(owner) = cluster.try_owner(slot).await
            && owner.id != master.id
        {
            break owner;
        }
        assert!(Instant::now() < deadline, "no failover within 30 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let failover = crashed.elapsed();
    // the crashed node comes back, as the new master's replica
    cluster.restart().await;
    let back = crashed.elapsed();
    let second = server.backend.links()[1].id.clone();
    let mut failures = 0;
    loop {
        let result = on(&b)
            .execute(
                "workflow_steps_create",
                r#"{"link_id":"link-2","action":"ACTION_EMAIL"}"#,
            )
            .await;
        if !result.is_error {
            assert_eq!(ok_json(&result)["step"]["linkId"], "link-2");
            break;
        }
        assert!(
            result.output.contains("alias store is unavailable"),
            "{}",
            result.output
        );
        failures += 1;
        assert!(
            Instant::now() < deadline,
            "the conversation did not go on within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(cluster.owner(slot).await.id, promoted.id);
    println!(
        "failover: replica promoted {failover:?} after the crash, replica back {back:?} after it, the conversation went on after {:?} ({failures} more failed call(s))",
        crashed.elapsed()
    );
    assert!(
        step_link_ids(&server.backend).contains(&second),
        "link-2 is still the second link"
    );

    let out = ok_json(
        &on(&a)
            .execute("links_create", r#"{"destination":"https://y.example"}"#)
            .await,
    );
    assert_eq!(out["link"]["id"], "link-4", "the counter went on");
    let (now, uuids) = held(&cluster, &store, conversation).await;
    assert_consistent(&now, &uuids);
    for (alias, uuid) in &before {
        assert_eq!(now.get(alias), Some(uuid), "{alias} survived the failover");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn the_cluster_down_mid_call_is_an_error_result_and_nothing_is_half_written() {
    let Some(cluster) = Cluster::own("down", 0, true).await else {
        return;
    };
    let keys = unique_prefix("down");
    let server = serve(LinksBackend::with_links(0)).await.expect("bind");
    let mut options = cluster.options(&keys).await;
    options.response_timeout = Duration::from_secs(1);
    let store = cluster.store_with(options).await;
    let replica = sessions_with_store(&server, Arc::new(store.clone()));
    let conversation = "down-1";
    let exec = replica.for_conversation::<Exec>(conversation);
    ok_json(
        &exec
            .execute("links_create", r#"{"destination":"https://x.example"}"#)
            .await,
    );

    // the cluster goes away while the service is answering, and stays away
    // for the next call, which is refused within the response timeout
    let stop = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cluster.stop().await;
    };
    let links = store_down_mid_call(
        &exec,
        &server.backend,
        Duration::from_millis(600),
        stop,
        Duration::from_secs(3),
    )
    .await;

    // it comes back with its data: nothing of the failed call was written,
    // the counter did not move, the conversation goes on
    server.backend.set_delay(Duration::ZERO);
    cluster.restart().await;
    let (aliases, uuids) = held(&cluster, &store, conversation).await;
    assert_eq!(
        aliases.keys().collect::<Vec<_>>(),
        ["link-1", "theme-1"],
        "nothing half-written"
    );
    assert!(
        !uuids.contains_key(&links[0].id),
        "the withheld link's id was not registered"
    );
    recovers_after_store_outage(&exec, Duration::from_secs(20)).await;
    server.shutdown().await;
}

/// A single `redis-server` for the latency comparison: `AI_TOOLS_REDIS_URL`,
/// or one started here (killed when dropped).
struct SingleNode {
    url: String,
    child: Option<Child>,
    dir: Option<PathBuf>,
}

impl Drop for SingleNode {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl SingleNode {
    async fn get() -> Option<Self> {
        if let Ok(url) = std::env::var("AI_TOOLS_REDIS_URL")
            && !url.is_empty()
        {
            return Some(Self {
                url,
                child: None,
                dir: None,
            });
        }
        if !has_binaries() {
            return None;
        }
        let port = free_port();
        let dir = std::env::temp_dir().join(format!(
            "ai-tools-redis-latency-{}-{port}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        let node = Self {
            url: format!("redis://127.0.0.1:{port}"),
            child: Some(child),
            dir: Some(dir),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while try_node(&node.url).await.is_none() {
            assert!(Instant::now() < deadline, "redis-server did not come up");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Some(node)
    }
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
    let Some(single) = SingleNode::get().await else {
        skip::<()>(
            "latency",
            "neither AI_TOOLS_REDIS_URL is set nor is `redis-server` on the PATH to compare a single node with",
        );
        return;
    };
    let _turn = SHARED.lock().await;
    let keys = unique_prefix("latency");
    let server = serve(LinksBackend::with_links(0)).await.expect("bind");
    let mut options = cluster.options(&keys).await;
    options.response_timeout = Duration::from_secs(2);
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
    let variants: [(&str, &Sessions<TonicTransport>); 3] = [
        ("in memory", &in_memory),
        ("one node", &with_node),
        ("cluster", &with_cluster),
    ];
    for (_, s) in &variants {
        ok_json(
            &s.for_conversation::<Exec>("latency-1")
                .execute("links_create", r#"{"destination":"https://x.example"}"#)
                .await,
        );
    }
    const N: u32 = 200;
    const ROUNDS: usize = 5;
    let mut calls: Vec<Vec<Duration>> = vec![Vec::new(); 3];
    for _ in 0..ROUNDS {
        for (i, (_, s)) in variants.iter().enumerate() {
            let exec = s.for_conversation::<Exec>("latency-1");
            let started = Instant::now();
            for _ in 0..N {
                ok_json(
                    &exec
                        .execute("links_update", r#"{"link_id":"link-1","name":"n"}"#)
                        .await,
                );
            }
            calls[i].push(started.elapsed() / N);
        }
    }
    let ids = [("link".to_owned(), ai_tools_tests::new_uuid())];
    let aliases = ["link-1".to_owned()];
    let mut lookups: Vec<Vec<Duration>> = vec![Vec::new(); 2];
    let mut assigns: Vec<Vec<Duration>> = vec![Vec::new(); 2];
    for _ in 0..ROUNDS {
        for (i, store) in [&node_store, &cluster_store].into_iter().enumerate() {
            let started = Instant::now();
            for _ in 0..N {
                store.assign("latency-2", &ids, 10).await.expect("assign");
            }
            assigns[i].push(started.elapsed() / N);
            let started = Instant::now();
            for _ in 0..N {
                store
                    .lookup("latency-2", &aliases, &[])
                    .await
                    .expect("lookup");
            }
            lookups[i].push(started.elapsed() / N);
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
