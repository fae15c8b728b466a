//! What waiting for a replica costs (`RedisStoreOptions::wait_for_replicas`,
//! `ai-tools mcp --redis-wait-replicas`): a registration of one new id
//! (`AliasStore::assign`, one round trip) and a whole tool call
//! (`links_create` over tonic on loopback: one lookup, the service, one
//! registration of two new ids) with `WAIT 0` (no wait, the baseline) and
//! `WAIT 1`, against a real master with one real replica on loopback, both
//! started here. Printed first: the two in alternating pairs, medians per
//! round and their ratio (the figure BENCHMARKS.md reports); then
//! criterion's own measurement of each.
//!
//! Needs `redis-server` on the PATH; without it the bench says why and
//! measures nothing (CI runs the benches in quick mode after its Redis is
//! stopped, and this bench starts its own).

use std::hint::black_box;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use proto_ai_tools::Sessions;
use proto_ai_tools::store::{AliasStore, Floor, RedisStore, RedisStoreOptions};
use proto_ai_tools::transport::TonicTransport;
use proto_ai_tools_benches::{quick_mode, runtime, uuid};
use proto_ai_tools_tests::{LinksBackend, serve, tools::links};

/// A `redis-server` of the bench, killed and its directory removed when
/// dropped.
struct Server {
    port: u16,
    child: Child,
    dir: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A server without persistence on a free loopback port, the replica of
/// `master` when given; returns once it accepts connections.
fn start(master: Option<u16>) -> Server {
    let port = free_port();
    let dir =
        std::env::temp_dir().join(format!("ai-tools-bench-wait-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let mut command = Command::new("redis-server");
    command
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        // a replica's first sync at once, not after the default 5 s
        .args(["--repl-diskless-sync-delay", "0", "--dir"])
        .arg(&dir);
    if let Some(master) = master {
        command.args(["--replicaof", "127.0.0.1", &master.to_string()]);
    }
    let child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server starts");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "redis-server did not come up");
        std::thread::sleep(Duration::from_millis(20));
    }
    Server { port, child, dir }
}

fn has_redis_server() -> bool {
    Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// New UUIDs, never the same twice in a run.
static NEXT: AtomicU64 = AtomicU64::new(1);

/// One registration of a new id in `store`, in a conversation of its own
/// every 1,000 ids (so that both variants' conversations stay alike).
async fn register(store: &RedisStore, variant: &str) -> Duration {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let conversation = format!("bench-wait-{variant}-{}", n / 1000);
    let ids = [("link".to_owned(), uuid(n))];
    let started = Instant::now();
    let assigned = store
        .assign(&conversation, &ids, 1_000_000, &Floor::default())
        .await
        .expect("registered");
    let took = started.elapsed();
    black_box(assigned);
    took
}

/// One `links_create` (two new ids registered) in a conversation of
/// `sessions`, a new one every 500 calls.
async fn tool_call(sessions: &Sessions<TonicTransport>, variant: &str) -> Duration {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let conversation = format!("bench-call-{variant}-{}", n / 500);
    let exec = sessions.for_conversation::<links::Executor<TonicTransport>>(&conversation);
    let started = Instant::now();
    let result = exec
        .execute("links_create", r#"{"destination":"https://x.example"}"#)
        .await;
    let took = started.elapsed();
    assert!(!result.is_error, "{}", result.output);
    took
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    if !has_redis_server() {
        println!(
            "redis wait: skipped: redis-server is not on the PATH (Debian's redis-server package); this bench starts a master and a replica of its own"
        );
        return;
    }
    let quick = quick_mode();
    let rt = runtime();
    let master = start(None);
    let _replica = start(Some(master.port));
    let url = format!("redis://127.0.0.1:{}", master.port);

    let (no_wait, wait_one, server) = rt.block_on(async {
        let no_wait = RedisStore::connect_with(&url, RedisStoreOptions::default())
            .await
            .expect("connects");
        // The replica acknowledges a WAIT once the master has it in sync.
        let deadline = Instant::now() + Duration::from_secs(10);
        while no_wait
            .replication()
            .await
            .expect("replication")
            .fewest_replicas()
            < 1
        {
            assert!(Instant::now() < deadline, "the replica did not connect");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let wait_one = no_wait.clone().with_wait_for_replicas(1);
        let server = serve(LinksBackend::with_links(0)).await.expect("bind");
        (no_wait, wait_one, server)
    });
    let sessions = |store: &RedisStore| {
        let _guard = rt.enter();
        Arc::new(
            Sessions::new(
                TonicTransport::new(server.channel().expect("url")),
                Duration::from_secs(600),
            )
            .with_store(Arc::new(store.clone())),
        )
    };
    let (calls_no_wait, calls_wait_one) = (sessions(&no_wait), sessions(&wait_one));

    // Alternating pairs: drift and the other sessions' load fall on both.
    let (rounds, per_round) = if quick { (1, 5) } else { (5, 300) };
    println!("redis wait: {rounds} rounds x {per_round} alternating pairs, medians");
    println!(
        "| round | register WAIT 0 | register WAIT 1 | ratio | tool call WAIT 0 | tool call WAIT 1 | ratio |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for round in 1..=rounds {
        let (mut r0, mut r1, mut c0, mut c1) = (vec![], vec![], vec![], vec![]);
        rt.block_on(async {
            for _ in 0..per_round {
                r0.push(register(&no_wait, "0").await);
                r1.push(register(&wait_one, "1").await);
                c0.push(tool_call(&calls_no_wait, "0").await);
                c1.push(tool_call(&calls_wait_one, "1").await);
            }
        });
        let (r0, r1, c0, c1) = (median(r0), median(r1), median(c0), median(c1));
        println!(
            "| {round} | {:.1} µs | {:.1} µs | {:.2}× | {:.1} µs | {:.1} µs | {:.2}× |",
            r0.as_secs_f64() * 1e6,
            r1.as_secs_f64() * 1e6,
            r1.as_secs_f64() / r0.as_secs_f64(),
            c0.as_secs_f64() * 1e6,
            c1.as_secs_f64() * 1e6,
            c1.as_secs_f64() / c0.as_secs_f64(),
        );
    }

    let mut c = Criterion::default().configure_from_args();
    {
        let mut group = c.benchmark_group("redis_wait/register");
        group
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3));
        for (name, store) in [("wait0", &no_wait), ("wait1", &wait_one)] {
            group.bench_function(BenchmarkId::from_parameter(name), |b| {
                b.iter(|| rt.block_on(register(store, name)));
            });
        }
        group.finish();
    }
    {
        let mut group = c.benchmark_group("redis_wait/tool_call");
        group
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3));
        for (name, sessions) in [("wait0", &calls_no_wait), ("wait1", &calls_wait_one)] {
            group.bench_function(BenchmarkId::from_parameter(name), |b| {
                b.iter(|| rt.block_on(tool_call(sessions, name)));
            });
        }
        group.finish();
    }
    c.final_summary();
    rt.block_on(server.shutdown());
}
