//! Handshake-era MCP sessions (protocol 2025-11-25, `Mcp-Session-Id`) that
//! roam: two `ai-tools mcp --http --redis …` gateways behind a round-robin
//! TCP proxy that does not stick (each connection goes to the next
//! gateway), driven by the official Python MCP SDK (`roaming/driver.py`),
//! whose HTTP client opens a connection per request. A session started on
//! one gateway is served by both: an alias given on one resolves on the
//! other, a toolset enabled on one is listed on the other, and once both
//! gateways have been killed and started again on their ports the session
//! goes on, with its aliases and toolsets. The client's `DELETE` ends it on
//! both. With OAuth, another user's token naming the session is answered
//! as for a session that does not exist, on the gateway that holds it and
//! on one that would restore it.
//!
//! Needs a `redis-server` (`AI_TOOLS_REDIS_URL`, else one started here),
//! a Python with the MCP SDK (`AI_TOOLS_PYTHON`, else
//! `target/py-venv/bin/python`), and for OAuth Node.js with `npm ci` run in
//! `tests/node`. Without them the tests say why and pass, unless
//! `AI_TOOLS_REQUIRE_REDIS`, `AI_TOOLS_REQUIRE_MCP`, `AI_TOOLS_REQUIRE_NODE`
//! or `AI_TOOLS_REQUIRE_PYTHON` is set (`.ci/run` sets them): then they fail.

// An integration test: its helpers are not `#[test]` functions, so
// `clippy.toml`'s `allow-*-in-tests` does not reach them, and they fail
// the test by panicking as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use proto_ai_tools_tests::redis_suite::RedisServer;
use support::{Gateway, free_loopback_addr, links_mcp_command, links_server, spawn_gateway};

/// The Redis of the test: `AI_TOOLS_REDIS_URL`, else one started here;
/// `None` (the test skips) without either, unless `AI_TOOLS_REQUIRE_REDIS`
/// is set.
fn redis(runtime: &tokio::runtime::Runtime, test: &str) -> Option<RedisServer> {
    if let Some(server) = RedisServer::from_env() {
        return Some(server);
    }
    if let Some(server) = runtime.block_on(RedisServer::own(test, false)) {
        return Some(server);
    }
    let reason = "neither AI_TOOLS_REDIS_URL is set nor is `redis-server` on the PATH";
    assert!(
        std::env::var_os("AI_TOOLS_REQUIRE_REDIS").is_none(),
        "{test}: AI_TOOLS_REQUIRE_REDIS is set: {reason}"
    );
    eprintln!("SKIPPED {test}: {reason}");
    None
}

/// The seed URLs of the Redis Cluster at `AI_TOOLS_REDIS_CLUSTER_URLS`
/// (`scripts/redis-cluster.sh start DIR` prints them; `.ci/run` sets it);
/// `None` (the test skips) without it, unless
/// `AI_TOOLS_REQUIRE_REDIS_CLUSTER` is set.
fn cluster(test: &str) -> Option<Vec<String>> {
    match std::env::var("AI_TOOLS_REDIS_CLUSTER_URLS") {
        Ok(urls) if !urls.trim().is_empty() => {
            Some(urls.split(',').map(|u| u.trim().to_owned()).collect())
        }
        _ => {
            let reason = "AI_TOOLS_REDIS_CLUSTER_URLS is not set (scripts/redis-cluster.sh start DIR prints it; .ci/run does)";
            assert!(
                std::env::var_os("AI_TOOLS_REQUIRE_REDIS_CLUSTER").is_none(),
                "{test}: AI_TOOLS_REQUIRE_REDIS_CLUSTER is set: {reason}"
            );
            eprintln!("SKIPPED {test}: {reason}");
            None
        }
    }
}

/// `ai-tools mcp` over `links.proto` at `addr`, with the alias store of
/// `store` (`--redis URL` or `--redis-cluster URL`…) and `flags`, started;
/// returns once it listens.
fn gateway(grpc: &str, addr: SocketAddr, store: &[String], flags: &[&str]) -> Gateway {
    spawn_gateway(
        links_mcp_command(grpc)
            .args(["--http", &addr.to_string()])
            .args(store)
            .args(flags),
    )
}

/// Stops `gateway` with SIGTERM and waits until it has exited.
fn terminate(gateway: &mut Gateway) {
    let sent = Command::new("kill")
        .args(["-TERM", &gateway.child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success(), "SIGTERM sent");
    let exited = gateway.child.wait().expect("the gateway exits");
    assert!(
        exited.success(),
        "a SIGTERM ends the gateway cleanly: {exited}"
    );
}

/// A TCP proxy on loopback that sends each connection to the next of two
/// upstreams in turn (to the other when that one does not answer: a
/// gateway restarting), counting the connections each served.
struct Proxy {
    addr: SocketAddr,
    served: Arc<[AtomicUsize; 2]>,
}

impl Proxy {
    fn start(upstreams: [SocketAddr; 2]) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let addr = listener.local_addr().expect("its address");
        let served: Arc<[AtomicUsize; 2]> = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
        let counts = served.clone();
        std::thread::spawn(move || {
            let mut turn = 0usize;
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let first = turn % 2;
                turn += 1;
                let connected = [first, 1 - first].into_iter().find_map(|i| {
                    TcpStream::connect_timeout(&upstreams[i], Duration::from_secs(1))
                        .ok()
                        .map(|upstream| (i, upstream))
                });
                let Some((index, upstream)) = connected else {
                    continue;
                };
                counts[index].fetch_add(1, Ordering::SeqCst);
                pipe(client, upstream);
            }
        });
        Self { addr, served }
    }

    /// The connections each upstream has served so far.
    fn served(&self) -> [usize; 2] {
        [
            self.served[0].load(Ordering::SeqCst),
            self.served[1].load(Ordering::SeqCst),
        ]
    }
}

/// Copies bytes both ways until either side closes.
fn pipe(client: TcpStream, upstream: TcpStream) {
    let _ = client.set_nodelay(true);
    let _ = upstream.set_nodelay(true);
    let (Ok(client_read), Ok(upstream_read)) = (client.try_clone(), upstream.try_clone()) else {
        return;
    };
    let one_way = |mut from: TcpStream, mut to: TcpStream| {
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut from, &mut to);
            let _ = to.shutdown(std::net::Shutdown::Write);
        });
    };
    one_way(client_read, upstream);
    one_way(upstream_read, client);
}

/// A request in session `session` at `addr`, as the status of its answer.
fn status_in_session(addr: &str, session: &str, method: &str) -> String {
    let body = format!(r#"{{"jsonrpc":"2.0","id":9,"method":"{method}"}}"#);
    let response = support::post(
        addr,
        &format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n"),
        &body,
    );
    support::status(&response).to_owned()
}

#[test]
fn a_session_roams_between_two_gateways_and_outlives_their_restarts() {
    let test = "roaming_sessions";
    let Some(python) = support::python_importing("mcp") else {
        return;
    };
    let (runtime, server) = links_server();
    let Some(redis) = redis(&runtime, test) else {
        return;
    };
    roams(&python, &server, &["--redis".to_owned(), redis.url.clone()]);
    runtime.block_on(server.shutdown());
}

/// The same on a Redis Cluster: a session's record and its aliases share
/// the session id as their hash tag, on whichever master owns its slot.
#[test]
fn a_session_roams_between_two_gateways_on_a_redis_cluster() {
    let test = "roaming_sessions_cluster";
    let Some(python) = support::python_importing("mcp") else {
        return;
    };
    let Some(urls) = cluster(test) else {
        return;
    };
    let (runtime, server) = links_server();
    let store: Vec<String> = urls
        .iter()
        .flat_map(|url| ["--redis-cluster".to_owned(), url.clone()])
        .collect();
    roams(&python, &server, &store);
    runtime.block_on(server.shutdown());
}

/// The driver's session through the proxy in front of two gateways on
/// `store`, both restarted at its pause; what reached `server`, and the
/// session's end on both.
fn roams(python: &Path, server: &proto_ai_tools_tests::RunningServer, store: &[String]) {
    // Session ids (and so the keys of sessions and their aliases) are
    // UUIDs: a shared Redis holds nothing of another run's under them.
    let grpc = server.url();
    let addrs = [free_loopback_addr(), free_loopback_addr()];
    let flags = ["--tool-search"];
    let mut gateways = [
        Some(gateway(&grpc, addrs[0], store, &flags)),
        Some(gateway(&grpc, addrs[1], store, &flags)),
    ];
    let proxy = Proxy::start(addrs);

    let mut driver = Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/roaming/driver.py"))
        .arg(format!("http://{}/mcp", proxy.addr))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the driver runs");
    let mut to_driver = driver.stdin.take().expect("piped");
    let stderr = driver.stderr.take().expect("piped");
    let errors = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let mut transcript = String::new();
    let mut session = String::new();
    let mut before_restart = [0; 2];
    for line in BufReader::new(driver.stdout.take().expect("piped")).lines() {
        let line = line.expect("a line");
        println!("{line}");
        transcript.push_str(&line);
        transcript.push('\n');
        if let Some(id) = line.strip_prefix("SESSION ") {
            session = id.to_owned();
        }
        if line == "PAUSE" {
            before_restart = proxy.served();
            // Stopped and started again on its port, one after the other:
            // the first as a rolling restart does (SIGTERM: it ends its
            // sessions here, and must not end them in the store), the
            // second killed (SIGKILL: nothing is written on the way out).
            for (n, (slot, addr)) in gateways.iter_mut().zip(addrs).enumerate() {
                if let Some(mut old) = slot.take()
                    && n == 0
                {
                    terminate(&mut old);
                }
                *slot = Some(gateway(&grpc, addr, store, &flags));
            }
            writeln!(to_driver, "go").expect("the driver goes on");
            to_driver.flush().expect("flushed");
        }
    }
    let status = driver.wait().expect("the driver ends");
    let errors = errors.join().unwrap_or_default();
    assert!(
        status.success() && transcript.contains(" passed, 0 failed"),
        "the driver failed:\n{transcript}\n{errors}"
    );
    assert!(!session.is_empty(), "the driver named its session");

    let served = proxy.served();
    for (n, (before, all)) in before_restart.iter().zip(served).enumerate() {
        assert!(
            *before >= 4,
            "gateway {n} served {before} connections of the session before the restarts"
        );
        assert!(
            all - before >= 2,
            "gateway {n} served {} connections after its restart",
            all - before
        );
    }
    // What the tools did reached the service once each.
    let links = server.backend.links();
    let mut destinations: Vec<&str> = links.iter().map(|l| l.destination.as_str()).collect();
    destinations.sort_unstable();
    assert_eq!(
        destinations,
        ["https://roam.example/2", "https://roam.example/moved-2"],
        "link-1 was moved through both gateways after the restarts, and link-2 created"
    );

    // The client's DELETE, on whichever gateway it reached, ended the
    // session on both.
    for gateway in gateways.iter().flatten() {
        assert_eq!(
            status_in_session(&gateway.addr, &session, "tools/list"),
            "404",
            "the deleted session at {}",
            gateway.addr
        );
    }
}

/// A session that roams is still its initializer's: the gateways check
/// tokens (`--oauth-issuer`, one audience, as behind one load balancer),
/// alice starts a session on gateway A, and bob's valid token naming it is
/// answered `404` as for a session that does not exist, on A (which holds
/// it) and on B (which would restore it), for a call and for a `DELETE`,
/// and B does not take it over for him: alice's own call on B then restores
/// it and works, and counts toward her sessions on B
/// (`--max-sessions-per-caller`), and bob's own session works. A gateway of
/// the same Redis that checks no tokens does not serve it either: the
/// owner is on one side only.
#[test]
fn another_users_token_cannot_use_a_roaming_session_on_any_gateway() {
    use proto_ai_tools_tests::oauth::{
        AuthorizationServer, assert_called, list_links, post, session, tool_call, tools_or_skip,
    };
    let test = "roaming_sessions_oauth";
    // The authorization server runs on Node.js (any Python will do: no
    // backend of Python's is started here).
    let Some((node, _)) = tools_or_skip("json") else {
        return;
    };
    let (runtime, server) = links_server();
    let Some(redis) = redis(&runtime, test) else {
        return;
    };
    let grpc = server.url();
    let authorization = AuthorizationServer::start(&node, &[]);
    let resource = format!("http://{}/mcp", free_loopback_addr());
    let oauth = [
        "--oauth-issuer",
        authorization.issuer.as_str(),
        "--oauth-audience",
        resource.as_str(),
    ];
    let addrs = [free_loopback_addr(), free_loopback_addr()];
    let store = ["--redis".to_owned(), redis.url.clone()];
    // B holds at most two sessions of one user: a restored one counts.
    let gateways = [
        gateway(&grpc, addrs[0], &store, &oauth),
        gateway(
            &grpc,
            addrs[1],
            &store,
            &[&oauth[..], &["--max-sessions-per-caller", "2"]].concat(),
        ),
    ];
    let without_oauth = gateway(&grpc, free_loopback_addr(), &store, &[]);
    let [a, b] = addrs;

    runtime.block_on(async {
        let alice = authorization
            .token(&[("sub", "alice"), ("resource", resource.as_str())])
            .await;
        let bob = authorization
            .token(&[("sub", "bob"), ("resource", resource.as_str())])
            .await;
        let id = session(a, &alice).await;

        let assert_unknown = |response: &proto_ai_tools_tests::http::Response, case: &str| {
            assert_eq!(response.status, 404, "{case}: {response:?}");
            assert!(
                response
                    .body
                    .contains("holds no session with that Mcp-Session-Id"),
                "{case}: {response:?}"
            );
        };
        for (addr, held) in [(a, "A, which holds it"), (b, "B, which would restore it")] {
            let call = post(addr, Some(&bob), Some(&id), &list_links()).await;
            assert_unknown(&call, &format!("bob's call on alice's session at {held}"));
        }
        let deleted = proto_ai_tools_tests::http::exchange(
            b,
            &proto_ai_tools_tests::http::http_request(
                "DELETE",
                "/mcp",
                &[
                    ("Authorization", &format!("Bearer {bob}")),
                    ("Mcp-Session-Id", &id),
                ],
                "",
            ),
            Duration::from_secs(10),
        )
        .await;
        assert_unknown(&deleted, "bob's DELETE of alice's session at B");
        assert!(
            server.backend.links().is_empty(),
            "nothing of bob's reached the service"
        );

        // Alice's call on B restores her session there: bob's attempts
        // neither ended it nor made it his.
        let created = post(
            b,
            Some(&alice),
            Some(&id),
            &tool_call(
                2,
                "links_create",
                &serde_json::json!({"destination": "https://alice.example/"}),
            ),
        )
        .await;
        assert_called(&created, "alice's call on her session at B");
        assert_eq!(
            created.message()["result"]["structuredContent"]["link"]["id"],
            "link-1",
            "{created:?}"
        );
        let again = post(b, Some(&bob), Some(&id), &list_links()).await;
        assert_unknown(&again, "bob's call on alice's session once B holds it");
        let listed = post(a, Some(&alice), Some(&id), &list_links()).await;
        assert_called(&listed, "alice's call on her session at A");

        let plain = support::post(
            &without_oauth.addr,
            &format!("Mcp-Session-Id: {id}\r\n"),
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
        );
        assert_eq!(
            support::status(&plain),
            "404",
            "a gateway without OAuth does not serve an OAuth user's session: {plain}"
        );

        // Alice's restored session is one of her two on B.
        let _second = session(b, &alice).await;
        let third = post(
            b,
            Some(&alice),
            None,
            proto_ai_tools_tests::oauth::INITIALIZE,
        )
        .await;
        assert_eq!(
            third.status, 429,
            "alice's third session on B, one of them restored: {third:?}"
        );

        let own = session(b, &bob).await;
        assert_called(
            &post(a, Some(&bob), Some(&own), &list_links()).await,
            "bob's own session, started on B, at A",
        );
    });
    drop((gateways, without_oauth));
    runtime.block_on(server.shutdown());
}

/// A `DELETE` of session `session` at `addr`; the whole response.
fn delete(addr: &str, session: &str) -> String {
    use std::io::Read;
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a timeout");
    write!(
        stream,
        "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: {session}\r\n\
         MCP-Protocol-Version: 2025-06-18\r\nConnection: close\r\n\r\n"
    )
    .expect("sent");
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response
}

/// The session id in an `initialize`'s `response`.
fn session_of(response: &str) -> String {
    response
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .unwrap_or_else(|| panic!("a session id in {response}"))
        .trim()
        .to_owned()
}

/// A restored session takes a slot of the restoring gateway's
/// `--max-sessions`, as a new one does: a gateway at its cap refuses to
/// restore (`503` with `Retry-After`, as it refuses an `initialize`), and
/// once it has restored a session it is at the cap for new ones.
#[test]
fn a_restored_session_takes_a_slot_of_the_session_cap() {
    let test = "roaming_sessions_cap";
    let (runtime, server) = links_server();
    let Some(redis) = redis(&runtime, test) else {
        return;
    };
    let grpc = server.url();
    let store = ["--redis".to_owned(), redis.url.clone()];
    let a = gateway(&grpc, free_loopback_addr(), &store, &[]);
    let b = gateway(
        &grpc,
        free_loopback_addr(),
        &store,
        &["--max-sessions", "1"],
    );
    let on_a = session_of(&support::initialize(&a.addr, ""));
    let on_b = session_of(&support::initialize(&b.addr, ""));

    let full = support::post(
        &b.addr,
        &format!("Mcp-Session-Id: {on_a}\r\nMCP-Protocol-Version: 2025-06-18\r\n"),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    );
    assert_eq!(support::status(&full), "503", "{full}");
    assert!(
        full.to_ascii_lowercase().contains("retry-after: ")
            && full.contains("maximum of 1 MCP sessions"),
        "{full}"
    );

    assert_eq!(
        support::status(&delete(&b.addr, &on_b)),
        "204",
        "B's own session is deleted"
    );
    assert_eq!(
        status_in_session(&b.addr, &on_a, "tools/list"),
        "200",
        "with a free slot, B restores A's session"
    );
    let refused = support::initialize(&b.addr, "");
    assert_eq!(
        support::status(&refused),
        "503",
        "the restored session holds B's one slot: {refused}"
    );
    drop((a, b));
    runtime.block_on(server.shutdown());
}

/// One command to the Redis at `url` (`redis://HOST:PORT`), in RESP; the
/// first line of its answer.
fn redis_command(url: &str, args: &[&str]) -> String {
    let addr = url
        .strip_prefix("redis://")
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("a redis:// URL: {url}"));
    let mut stream = TcpStream::connect(addr).expect("connect to Redis");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("a timeout");
    let mut command = format!("*{}\r\n", args.len());
    for arg in args {
        command.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
    }
    stream.write_all(command.as_bytes()).expect("sent");
    let mut line = String::new();
    BufReader::new(stream)
        .read_line(&mut line)
        .expect("an answer");
    line.trim_end().to_owned()
}

/// A stored session that does not parse is refused as one that does not
/// exist (`404`, the client starts anew) with a WARN in the log of the
/// gateway that would have restored it, which goes on serving.
#[test]
fn a_corrupt_stored_session_is_refused_with_a_warning() {
    let test = "roaming_sessions_corrupt";
    let (runtime, server) = links_server();
    let Some(redis) = redis(&runtime, test) else {
        return;
    };
    let grpc = server.url();
    let store = ["--redis".to_owned(), redis.url.clone()];
    let a = gateway(&grpc, free_loopback_addr(), &store, &[]);
    let id = session_of(&support::initialize(&a.addr, ""));
    let key = format!("ai-tools:{{{id}}}:mcp-session");
    assert_eq!(
        redis_command(&redis.url, &["HSET", &key, "rmcp", "{not json"]),
        ":0",
        "the record was there, its state now overwritten"
    );

    // B's log, kept: the warning is what an operator sees.
    let mut command = links_mcp_command(&grpc);
    command
        .args(["--http", "127.0.0.1:0"])
        .args(&store)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("gateway B starts");
    let mut log = BufReader::new(child.stderr.take().expect("piped"));
    let mut addr = None;
    for _ in 0..40 {
        let mut line = String::new();
        if log.read_line(&mut line).expect("stderr") == 0 {
            break;
        }
        if let Some(rest) = line.trim().split("at http://").nth(1) {
            addr = rest.strip_suffix("/mcp").map(str::to_owned);
            break;
        }
    }
    let b = Gateway {
        child,
        addr: addr.expect("gateway B says where it listens"),
    };
    let (lines, received) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in log.lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });

    assert_eq!(
        status_in_session(&b.addr, &id, "tools/list"),
        "404",
        "a corrupt session is refused"
    );
    let warned = std::iter::from_fn(|| received.recv_timeout(Duration::from_secs(5)).ok())
        .find(|line| line.contains("WARN") && line.contains("unreadable"));
    assert!(warned.is_some(), "B warns of the unreadable session");
    assert_eq!(
        support::status(&support::initialize(&b.addr, "")),
        "200",
        "B goes on serving"
    );
    drop((a, b));
    runtime.block_on(server.shutdown());
}

/// A session's record lives as long as the session may go without a
/// message (`--session-idle-timeout`), counted from its last request on
/// any gateway: used on the two gateways in turn for longer than the
/// timeout, it lives; left alone past it, it is gone from the store and
/// from both gateways.
#[test]
fn a_session_lives_as_long_as_it_is_used_on_any_gateway() {
    let test = "roaming_sessions_idle";
    let (runtime, server) = links_server();
    let Some(redis) = redis(&runtime, test) else {
        return;
    };
    let grpc = server.url();
    let store = ["--redis".to_owned(), redis.url.clone()];
    let idle = ["--session-idle-timeout", "2"];
    let a = gateway(&grpc, free_loopback_addr(), &store, &idle);
    let b = gateway(&grpc, free_loopback_addr(), &store, &idle);
    let id = session_of(&support::initialize(&a.addr, ""));
    let key = format!("ai-tools:{{{id}}}:mcp-session");

    for turn in 0..5 {
        std::thread::sleep(Duration::from_millis(800));
        let at = if turn % 2 == 0 { &b.addr } else { &a.addr };
        assert_eq!(
            status_in_session(at, &id, "tools/list"),
            "200",
            "turn {turn}, {:.1} s after the start",
            0.8 * f64::from(turn + 1)
        );
    }
    let ttl: i64 = redis_command(&redis.url, &["PTTL", &key])
        .trim_start_matches(':')
        .parse()
        .expect("a TTL");
    assert!(
        (1..=2000).contains(&ttl),
        "the record's TTL is the idle timeout, set again by the last request: {ttl} ms"
    );

    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(
        redis_command(&redis.url, &["EXISTS", &key]),
        ":0",
        "the record expired"
    );
    for at in [&a.addr, &b.addr] {
        assert_eq!(
            status_in_session(at, &id, "tools/list"),
            "404",
            "the idle session at {at}"
        );
    }
    drop((a, b));
    runtime.block_on(server.shutdown());
}
