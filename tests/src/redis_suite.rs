//! The alias store's scenarios on Redis, written once for every Redis back
//! end: a single `redis-server` (`tests/redis_store.rs`) and a Redis Cluster
//! (`tests/redis_cluster.rs`). A test file implements [`Backend`] for its
//! servers and runs these with its own names, keys and timings; what only a
//! cluster does (slot migration, failover) stays in its file.
//!
//! Also here: a `redis-server` process of a test's own ([`RedisServer`]), the
//! skip-or-fail rule of the Redis tests ([`skip`]), and `INFO commandstats`
//! read as numbers ([`parse_commandstats`]). Nothing here links the `redis`
//! crate: the test files talk to the servers.

use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use proto_ai_tools::{
    Sessions, ToolResult,
    store::{AliasStore, Floor},
    transport::TonicTransport,
};
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::support::{
    error_text, ok_json, recovers_after_store_outage, sessions_with_store, step_link_ids,
    store_down_mid_call, unique_prefix,
};
use crate::{LinksBackend, RunningServer, serve};

/// The generated executor of links.proto.
pub type Exec = crate::tools::links::Executor<TonicTransport>;

/// Per command, summed over the servers asked: (calls, rejected calls).
pub type CommandStats = HashMap<String, (u64, u64)>;

/// A Redis back end of the alias store, as the scenarios use it.
// The scenarios await these in place and never spawn them, so the futures
// need no `Send` bound.
#[allow(async_fn_in_trait)]
pub trait Backend {
    /// The store (`RedisStore`).
    type Store: AliasStore + Clone + 'static;

    /// A store, as one replica has it, keeping its keys under `key_prefix`
    /// (with the back end's test timeouts and a TTL of 10 minutes).
    async fn store(&self, key_prefix: &str) -> Self::Store;

    /// The requests `store` has made so far (`RedisStore::round_trips`).
    fn round_trips(store: &Self::Store) -> u64;

    /// `store`'s keys of `conversation`: aliases, UUIDs, meta
    /// (`RedisStore::keys`).
    fn keys(store: &Self::Store, conversation: &str) -> [String; 4];

    /// `HGETALL key` on the server that holds `conversation`'s keys.
    async fn hgetall(&self, conversation: &str, key: &str) -> BTreeMap<String, String>;

    /// `INFO commandstats` of every server (every live master of a cluster),
    /// summed.
    async fn commandstats(&self) -> CommandStats;

    /// Stops every server (a back end of the test's own), keeping the data.
    async fn stop(&self);

    /// Starts the stopped servers again with their data.
    async fn restart(&self);
}

/// What the store holds for a conversation, read straight from the server.
#[derive(Debug, Clone, Default)]
pub struct Held {
    /// Alias → UUID.
    pub aliases: BTreeMap<String, String>,
    /// UUID → its aliases, space-separated.
    pub uuids: BTreeMap<String, String>,
    /// Counters (`prefix` → last number) and `#len`.
    pub meta: BTreeMap<String, String>,
}

impl Held {
    /// Every alias names one UUID, every UUID has one alias per prefix, and
    /// the two hashes agree.
    pub fn assert_consistent(&self) {
        for (uuid, list) in &self.uuids {
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
                assert_eq!(self.aliases.get(alias), Some(uuid), "{alias} of {uuid}");
            }
        }
        let listed: usize = self
            .uuids
            .values()
            .map(|l| l.split_whitespace().count())
            .sum();
        assert_eq!(
            listed,
            self.aliases.len(),
            "every alias is listed under its UUID"
        );
    }
}

/// What `store` holds for `conversation` on `backend`.
pub async fn held<B: Backend>(backend: &B, store: &B::Store, conversation: &str) -> Held {
    let [aliases, uuids, meta, _used] = B::keys(store, conversation);
    Held {
        aliases: backend.hgetall(conversation, &aliases).await,
        uuids: backend.hgetall(conversation, &uuids).await,
        meta: backend.hgetall(conversation, &meta).await,
    }
}

/// `Sessions` without a transport whose conversations live in `store`.
pub fn bare_sessions(store: impl AliasStore + 'static) -> Sessions<()> {
    Sessions::new((), Duration::from_secs(600)).with_store(Arc::new(store))
}

/// `links_create` on `replica`'s `conversation`, whose `n`th link (and
/// theme) this is: both get alias `n`. The answer.
pub async fn create_link(
    replica: &Sessions<TonicTransport>,
    conversation: &str,
    n: usize,
) -> Value {
    let out = ok_json(
        &replica
            .for_conversation::<Exec>(conversation)
            .execute("links_create", r#"{"destination":"https://x.example"}"#)
            .await,
    );
    assert_eq!(out["link"]["id"], format!("link-{n}"), "{conversation}");
    assert_eq!(out["link"]["page_theme_id"], format!("theme-{n}"));
    out
}

/// Links 1 to `count` of a new `conversation`, turns alternating between
/// replica `a` (the odd ones) and `b`.
pub async fn create_links_alternating(
    a: &Sessions<TonicTransport>,
    b: &Sessions<TonicTransport>,
    conversation: &str,
    count: usize,
) {
    for n in 1..=count {
        create_link(if n % 2 == 1 { a } else { b }, conversation, n).await;
    }
}

/// `workflow_steps_create` on `exec` for the link whose alias is `link`.
pub async fn create_step(exec: &Exec, link: &str) -> ToolResult {
    let args = format!(r#"{{"link_id":"{link}","action":"ACTION_EMAIL"}}"#);
    exec.execute("workflow_steps_create", &args).await
}

/// After links 1 to 3 of `conversation` were made (the service held
/// `links_before` links until then): on each replica, every alias names
/// its own link in a new workflow step, and an invented alias is refused,
/// naming every alias either replica gave out.
pub async fn assert_replicas_agree(
    server: &RunningServer,
    replicas: [&Sessions<TonicTransport>; 2],
    conversation: &str,
    links_before: usize,
) {
    let links = server.backend.links();
    let created: Vec<String> = links[..links.len() - links_before]
        .iter()
        .rev()
        .map(|l| l.id.clone())
        .collect();
    for replica in replicas {
        let exec = replica.for_conversation::<Exec>(conversation);
        for (n, id) in created.iter().enumerate() {
            ok_json(&create_step(&exec, &format!("link-{}", n + 1)).await);
            assert_eq!(step_link_ids(&server.backend).last(), Some(id));
        }
    }
    for replica in replicas {
        let result = replica
            .for_conversation::<Exec>(conversation)
            .execute("links_update", r#"{"link_id":"link-9","name":"x"}"#)
            .await;
        let text = error_text(&result);
        assert!(
            text.contains("use one of: link-1, link-2, link-3"),
            "{text}"
        );
    }
}

/// What each task of [`register_concurrently`] got: (UUID, alias).
pub type Registered = Vec<(String, String)>;

/// 8 tasks, 4 on each replica, register the same `uuids` in
/// `conversation`, in batches of `batch`, each starting at another place
/// (so the same ids race everywhere), pausing `pause` after each batch.
pub fn register_concurrently(
    [a, b]: [&Arc<Sessions<()>>; 2],
    conversation: &str,
    uuids: &[String],
    batch: usize,
    pause: Duration,
) -> Vec<JoinHandle<Registered>> {
    (0..8)
        .map(|t| {
            let sessions = if t % 2 == 0 { a.clone() } else { b.clone() };
            let mut order = uuids.to_vec();
            order.rotate_left(t * 7);
            let conversation = conversation.to_owned();
            tokio::spawn(async move {
                let aliases = sessions.alias_manager(&conversation);
                let mut got = Vec::new();
                for batch in order.chunks(batch) {
                    let ids: Vec<(&str, &str)> =
                        batch.iter().map(|u| ("link", u.as_str())).collect();
                    let aliases = aliases.register_all(&ids).await.expect("assign");
                    got.extend(batch.iter().cloned().zip(aliases));
                    if !pause.is_zero() {
                        tokio::time::sleep(pause).await;
                    }
                }
                got
            })
        })
        .collect()
}

/// What every task got.
pub async fn join_all(tasks: Vec<JoinHandle<Registered>>) -> Vec<Registered> {
    let mut done = Vec::new();
    for task in tasks {
        done.push(task.await.expect("task"));
    }
    done
}

/// Every UUID got one alias, whichever task asked: `link-1` to `link-N`
/// for N UUIDs, none skipped. Returns those aliases, in order.
pub fn assert_one_alias_per_uuid(done: Vec<Registered>) -> Vec<String> {
    let mut seen: HashMap<String, String> = HashMap::new();
    for got in done {
        for (uuid, alias) in got {
            let first = seen.entry(uuid.clone()).or_insert_with(|| alias.clone());
            assert_eq!(*first, alias, "{uuid} got two aliases");
        }
    }
    let mut aliases: Vec<&String> = seen.values().collect();
    aliases.sort_by_key(|a| a[5..].parse::<u32>().unwrap_or(0));
    aliases.dedup();
    let expected: Vec<String> = (1..=seen.len()).map(|n| format!("link-{n}")).collect();
    assert_eq!(
        aliases.into_iter().cloned().collect::<Vec<_>>(),
        expected,
        "{} UUIDs, {} distinct aliases, none skipped",
        seen.len(),
        seen.len()
    );
    expected
}

/// Two replicas register 60 UUIDs at once on one conversation: one alias
/// per UUID, 60 distinct aliases, none skipped, and the store lists them.
pub async fn concurrent_registration<B: Backend>(backend: &B) {
    let keys = unique_prefix("concurrent");
    let a = Arc::new(bare_sessions(backend.store(&keys).await));
    let b = Arc::new(bare_sessions(backend.store(&keys).await));
    let uuids: Vec<String> = (0..60).map(|_| crate::new_uuid()).collect();
    let tasks = register_concurrently([&a, &b], "conversation-1", &uuids, 6, Duration::ZERO);
    let expected = assert_one_alias_per_uuid(join_all(tasks).await);
    assert_eq!(expected.len(), 60);
    assert_eq!(
        a.alias_manager("conversation-1")
            .list("link")
            .await
            .expect("list"),
        expected
    );
}

/// A replica's process ends and a new one takes the conversation on: its
/// aliases and counters are where they were.
pub async fn restart_continues_the_conversation<B: Backend>(backend: &B) {
    let keys = unique_prefix("restart");
    let server = serve(LinksBackend::with_links(0)).await.expect("bind");
    {
        let before = sessions_with_store(&server, Arc::new(backend.store(&keys).await));
        for n in 1..=3 {
            create_link(&before, "conversation-1", n).await;
        }
        // everything dropped: the process is gone
    }
    let after = sessions_with_store(&server, Arc::new(backend.store(&keys).await));
    let exec = after.for_conversation::<Exec>("conversation-1");
    let second = server.backend.links()[1].id.clone();
    let out = ok_json(&create_step(&exec, "link-2").await);
    assert_eq!(out["step"]["link_id"], "link-2");
    assert_eq!(step_link_ids(&server.backend), [second]);
    let out = ok_json(
        &exec
            .execute("links_create", r#"{"destination":"https://y.example"}"#)
            .await,
    );
    assert_eq!(out["link"]["id"], "link-4", "the counter went on");
    assert_eq!(out["link"]["page_theme_id"], "theme-4");
    server.shutdown().await;
}

/// The timings of [`down_mid_call`].
#[derive(Debug, Clone, Copy)]
pub struct Outage {
    /// How long the service takes to answer the call the store goes down in.
    pub service_delay: Duration,
    /// The next call is refused within this.
    pub refused_within: Duration,
    /// Once the servers are back, the conversation goes on within this.
    pub recovers_within: Duration,
}

/// The servers go down while the service answers a call on `store` (which
/// has their response timeout) and stay down for the next call
/// ([`store_down_mid_call`]); they come back with their data: nothing of
/// the failed call was written, the counter did not move, and the
/// conversation goes on ([`recovers_after_store_outage`]).
pub async fn down_mid_call<B: Backend>(
    backend: &B,
    store: B::Store,
    conversation: &str,
    outage: Outage,
) {
    let server = serve(LinksBackend::with_links(0)).await.expect("bind");
    let replica = sessions_with_store(&server, Arc::new(store.clone()));
    create_link(&replica, conversation, 1).await;
    let exec = replica.for_conversation::<Exec>(conversation);

    let stop = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        backend.stop().await;
    };
    let links = store_down_mid_call(
        &exec,
        &server.backend,
        outage.service_delay,
        stop,
        outage.refused_within,
    )
    .await;

    server.backend.set_delay(Duration::ZERO);
    backend.restart().await;
    let held = held(backend, &store, conversation).await;
    assert_eq!(
        held.aliases.keys().collect::<Vec<_>>(),
        ["link-1", "theme-1"],
        "nothing half-written"
    );
    assert_eq!(held.meta.get("#len").map(String::as_str), Some("2"));
    assert!(
        !held.uuids.contains_key(&links[0].id),
        "the withheld link's id was not registered"
    );
    recovers_after_store_outage(&exec, outage.recovers_within).await;
    server.shutdown().await;
}

/// `after - before` of `command`: (calls, rejected calls).
pub fn delta(before: &CommandStats, after: &CommandStats, command: &str) -> (u64, u64) {
    let (c0, r0) = before.get(command).copied().unwrap_or_default();
    let (c1, r1) = after.get(command).copied().unwrap_or_default();
    (c1 - c0, r1 - r0)
}

/// Tool calls on a new conversation, each with the requests it takes:
/// resolution of its aliases, registration of its answer's ids.
pub const CALLS: &[(&str, &str, u64)] = &[
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

/// [`CALLS`] on `exec`, whose conversation is new and lives in `store`:
/// each makes the requests listed, each one `EVALSHA` the servers saw
/// (none redirected, no `EVAL`). One line per call, with its time.
pub async fn assert_round_trips<B: Backend>(
    backend: &B,
    store: &B::Store,
    exec: &Exec,
) -> Vec<String> {
    let mut report = Vec::new();
    for (tool, args, expected) in CALLS {
        let trips = B::round_trips(store);
        let stats = backend.commandstats().await;
        let started = Instant::now();
        ok_json(&exec.execute(tool, args).await);
        let elapsed = started.elapsed();
        let after = backend.commandstats().await;
        let trips = B::round_trips(store) - trips;
        let (evalsha, rejected) = delta(&stats, &after, "evalsha");
        assert_eq!(trips, *expected, "{tool}: round trips");
        assert_eq!(evalsha, *expected, "{tool}: EVALSHA seen by the server");
        assert_eq!(rejected, 0, "{tool}: nothing redirected");
        assert_eq!(delta(&stats, &after, "eval").0, 0, "{tool}: no EVAL");
        report.push(format!("{tool}: {trips} round trip(s), {elapsed:?}"));
    }
    report
}

/// The time per call of `n` renames of `link-1` on `exec`.
pub async fn time_updates(exec: &Exec, n: u32) -> Duration {
    let started = Instant::now();
    for _ in 0..n {
        ok_json(
            &exec
                .execute("links_update", r#"{"link_id":"link-1","name":"n"}"#)
                .await,
        );
    }
    started.elapsed() / n
}

/// The time per request of `n` assignments of `uuid` (known after the
/// first) and of `n` lookups of `link-1`, in `conversation`.
pub async fn time_store_requests(
    store: &impl AliasStore,
    conversation: &str,
    uuid: &str,
    n: u32,
) -> (Duration, Duration) {
    let ids = [("link".to_owned(), uuid.to_owned())];
    let aliases = ["link-1".to_owned()];
    let started = Instant::now();
    for _ in 0..n {
        store
            .assign(conversation, &ids, 10, &Floor::default())
            .await
            .expect("assign");
    }
    let assign = started.elapsed() / n;
    let started = Instant::now();
    for _ in 0..n {
        store
            .lookup(conversation, &aliases, &[], &Floor::default())
            .await
            .expect("lookup");
    }
    (assign, started.elapsed() / n)
}

/// Per command of an `INFO commandstats` answer: (calls, rejected calls).
pub fn parse_commandstats(info: &str) -> CommandStats {
    let mut stats = CommandStats::new();
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
        let entry = stats.entry(name.to_owned()).or_default();
        entry.0 += field("calls=");
        entry.1 += field("rejected_calls=");
    }
    stats
}

/// Says why `test` is skipped, or fails it when the environment variable
/// `require` is set (`.ci/run` sets them). `reason` says what is missing
/// and how to get it.
pub fn skip<T>(require: &str, test: &str, reason: &str) -> Option<T> {
    assert!(
        std::env::var_os(require).is_none(),
        "{require} is set, but {reason}"
    );
    println!("skipped {test}: {reason}");
    None
}

/// Whether every one of `tools` runs (`TOOL --version`).
pub fn has_binaries(tools: &[&str]) -> bool {
    tools.iter().all(|tool| {
        Command::new(tool)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// A loopback port nothing listens on.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// A single `redis-server`: the one at `AI_TOOLS_REDIS_URL`, or one started
/// here (stopped, and its files removed, when dropped).
#[derive(Debug)]
pub struct RedisServer {
    /// `redis://127.0.0.1:PORT`.
    pub url: String,
    port: u16,
    child: Mutex<Option<Child>>,
    dir: Option<PathBuf>,
    persist: bool,
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl RedisServer {
    /// The server at `AI_TOOLS_REDIS_URL`, when that is set.
    pub fn from_env() -> Option<Self> {
        let url = std::env::var("AI_TOOLS_REDIS_URL").ok()?;
        (!url.is_empty()).then(|| Self {
            url,
            port: 0,
            child: Mutex::new(None),
            dir: None,
            persist: false,
        })
    }

    /// A server of our own on a free port, if `redis-server` is on the
    /// PATH. With `persist`, an append-only file fsynced on every write, so
    /// that the data survives [`stop`](Self::stop) and
    /// [`start`](Self::start) (slow: every request that refreshes a TTL is
    /// a write).
    pub async fn own(test: &str, persist: bool) -> Option<Self> {
        if !has_binaries(&["redis-server"]) {
            return None;
        }
        let port = free_port();
        let dir = std::env::temp_dir().join(format!(
            "ai-tools-redis-{test}-{}-{port}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let server = Self {
            url: format!("redis://127.0.0.1:{port}"),
            port,
            child: Mutex::new(None),
            dir: Some(dir),
            persist,
        };
        server.start().await;
        Some(server)
    }

    /// Starts our own server (again, with its data when it persists) and
    /// waits until it answers `PING`.
    pub async fn start(&self) {
        let dir = self.dir.clone().expect("a server of our own");
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
        *self.child.lock().unwrap_or_else(PoisonError::into_inner) = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !answers_ping(self.port) {
            assert!(Instant::now() < deadline, "redis-server did not come up");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Kills our own server, if it runs.
    pub fn stop(&self) {
        let child = self
            .child
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(mut child) = child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Whether the server on `port` answers `PING` with `PONG` (not `LOADING`).
fn answers_ping(port: u16) -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else {
        return false;
    };
    let mut answer = [0u8; 7];
    stream
        .set_read_timeout(Some(Duration::from_millis(500)))
        .is_ok()
        && stream.write_all(b"PING\r\n").is_ok()
        && stream.read_exact(&mut answer).is_ok()
        && &answer == b"+PONG\r\n"
}
