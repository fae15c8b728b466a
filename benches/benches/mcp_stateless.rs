//! MCP without sessions: what a `tools/call` through `McpServer` costs per
//! call over the same RPC made directly with the tonic client, on loopback,
//! for the handshake-era path (an MCP session) and for stateless requests of
//! protocol `2026-07-28` whose alias scope is the caller named by a header,
//! kept in memory or in Redis; and the memory an idle stateless scope with
//! 10 aliases holds.
//!
//! Variants, all calling `ListLinks` on one tonic service holding
//! [`LINKS`] links (each answer registers 10 aliases: a link and its theme
//! per link):
//!
//! - `direct`: the tonic-generated client (the baseline);
//! - `handshake`: `tools/call` of `links_list` in an initialized MCP
//!   session;
//! - `stateless-memory`: the same call without a session, the scope read
//!   from `x-principal`, aliases in the server's own `Sessions`;
//! - `stateless-redis`: the same with `Sessions::with_store(RedisStore)`,
//!   when `AI_TOOLS_REDIS_URL` names a Redis (skipped, with the reason
//!   printed, when it does not);
//!
//! and the floors the gateway is measured against (issue 43,
//! `proto_ai_tools_benches::floors`), each forwarding the same call to the
//! same service over tonic and answering the links as a tool result,
//! without aliases:
//!
//! - `hyper-floor`: bare hyper 1.x HTTP/1.1, the JSON-RPC body parsed with
//!   serde_json, a JSON-RPC result written back (no MCP library);
//! - `rmcp-floor`: a minimal rmcp server of one tool, served by rmcp's
//!   streamable HTTP service configured as the gateway's, in a session;
//! - `rmcp-floor-stateless`: the same, stateless requests of `2026-07-28`;
//! - `rmcp-floor-stateless-json`: the same, rmcp answering one JSON body
//!   rather than an event stream (`with_json_response`);
//! - `rmcp-floor-no-backend`: the same in a session, answering the same
//!   bytes without calling the backend (rmcp's own cost per request).
//!
//! Each variant runs sequentially (one client, calls back to back) and with
//! 16 and [`IN_FLIGHT`] clients at once ([`MODES`]), each on a keep-alive
//! connection of its own (a tonic channel each for `direct`), in a session
//! or under a principal of its own. Rounds alternate between the variants,
//! the order rotating each round, so the machine's drift reaches all of
//! them. A call's latency is from its first byte sent to its last byte read
//! (the whole event stream). Prints p50 and p99 per variant and mode, their
//! ratios to the direct call's and to the hyper floor's, calls per second,
//! and context switches per call (of the whole process: clients, server
//! and backend share its two worker threads); with `stateless-redis` the
//! Redis round trips per call.
//!
//! Then where a sequential call's time goes, interleaved call by call: the
//! direct call, the toolkit the gateway builds called in process (no MCP,
//! no HTTP), a `ping` in an MCP session (MCP over HTTP, no tool call), and
//! the `tools/call`s.
//!
//! And the memory of idle stateless scopes, counted by a global allocator
//! that counts only while a measurement is on: [`SCOPES`] scopes of 10
//! aliases each in a `Sessions` directly (what a stateless scope holds),
//! and through the gateway (one `links_list` for each of [`SCOPES`] new
//! principals, less the same number of calls by principals it already
//! knows: everything the server keeps per caller).
//!
//! `cargo bench -p proto-ai-tools-benches --bench mcp_stateless`; in quick mode
//! (`cargo test -p proto-ai-tools-benches --benches`) one round of one call per
//! client and 100 scopes. With the argument `handshake`
//! (`cargo bench -p proto-ai-tools-benches --bench mcp_stateless -- handshake`)
//! only `direct` and `handshake` run, no memory: the measurement that also
//! builds on the commit before stateless serving, with
//! `RUSTFLAGS="--cfg ai_tools_bench_before_stateless"`, which leaves out
//! what that commit lacks (the floors too).
//!
//! With the arguments `only <variant> [seconds]` (e.g.
//! `cargo bench -p proto-ai-tools-benches --bench mcp_stateless -- only handshake 20`)
//! only that variant is built, and its sequential client calls back to
//! back for that long (default 10 s): the load to profile under.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use proto_ai_tools::Sessions;
use proto_ai_tools_benches::alloc::{Counting, Usage, counted};
use proto_ai_tools_benches::http::Client;
use proto_ai_tools_benches::loopback::{serve_grpc, serve_mcp};
use proto_ai_tools_benches::{quantile, quick_mode, register_links_and_themes};
use proto_ai_tools_mcp::McpServer;
use proto_ai_tools_tests::pb::ListLinksRequest;
use proto_ai_tools_tests::pb::links_service_client::LinksServiceClient;
use proto_ai_tools_tests::{LinksBackend, links_mcp_server};
use tonic::transport::Channel;

/// Clients in flight at once in the concurrent runs.
const IN_FLIGHT: usize = 64;
/// Links the service holds: each `links_list` answers with all of them and
/// registers two aliases per link.
const LINKS: usize = 5;
/// The header a trusted proxy would set to the caller's identity.
#[cfg_attr(ai_tools_bench_before_stateless, allow(dead_code))]
const SCOPE_HEADER: &str = "x-principal";
/// Idle scopes created for the memory measurement (full mode).
const SCOPES: usize = 2_000;
/// Aliases per scope in the memory measurement: what one `links_list`
/// of [`LINKS`] links registers.
const ALIASES_PER_SCOPE: u64 = 10;

// ---------------------------------------------------------------------------
// The counting allocator (`proto_ai_tools_benches::alloc`), on only while a memory
// measurement runs (so the latency runs pay one relaxed load per
// allocation, nothing else).

#[global_allocator]
static GLOBAL: Counting = Counting::WHEN_ON;

fn report(what: &str, per: usize, unit: &str, u: Usage) {
    proto_ai_tools_benches::alloc::report("mcp stateless memory", what, per, unit, u);
}

/// A stateless scope's key as the server makes it for a header value:
/// `header-` and 64 hex digits (a SHA-256).
fn scope_key(n: usize) -> String {
    format!("header-{:064x}", n as u128 * 0x9e37_79b9_7f4a_7c15)
}

/// `scopes` idle scopes of `aliases` aliases each, in a `Sessions` as
/// `McpServer` keeps them by default (no store): what one scope holds.
async fn scopes_in_sessions(scopes: usize, aliases_per_scope: u64) -> Usage {
    let sessions = Sessions::new((), Duration::from_secs(30 * 60)).with_capacity(scopes + 1);
    let usage = counted(async {
        for n in 0..scopes {
            let aliases = sessions.alias_manager(&scope_key(n));
            register_links_and_themes(&aliases, n as u64 * 100, aliases_per_scope);
        }
    })
    .await;
    assert_eq!(sessions.len(), scopes);
    drop(sessions);
    usage
}

// ---------------------------------------------------------------------------
// Servers.

fn endpoint(grpc: SocketAddr) -> tonic::transport::Endpoint {
    tonic::transport::Endpoint::from_shared(format!("http://{grpc}"))
        .expect("endpoint")
        .tcp_nodelay(true)
}

/// The links tools over MCP, calling `grpc` on a channel of their own, the
/// limits at their defaults.
fn mcp_server(grpc: SocketAddr) -> McpServer {
    links_mcp_server(endpoint(grpc).connect_lazy())
}

/// The same, serving stateless requests too, their scope read from
/// [`SCOPE_HEADER`].
#[cfg(not(ai_tools_bench_before_stateless))]
fn stateless_server(grpc: SocketAddr) -> McpServer {
    mcp_server(grpc)
        .with_alias_scope_header(SCOPE_HEADER)
        .expect("a scope header")
}

// ---------------------------------------------------------------------------
// Clients.

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcp-stateless","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A `tools/call` of `links_list` with JSON-RPC id `id`, in a session
/// (handshake era) or stateless (protocol `2026-07-28`, which carries its
/// version and capabilities in `_meta`).
fn list(id: u64, stateless: bool) -> String {
    let meta = if stateless {
        r#","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#
    } else {
        ""
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"links_list","arguments":{{}}{meta}}}}}"#
    )
}

/// The headers of a stateless `tools/call` of `links_list` by `principal`.
#[cfg_attr(ai_tools_bench_before_stateless, allow(dead_code))]
fn stateless_headers(principal: &str) -> String {
    format!(
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: links_list\r\n{SCOPE_HEADER}: {principal}\r\n"
    )
}

/// What a gateway's `links_list` answer holds: the first link's alias.
const GATEWAY_ANSWER: &str = "link-1";
/// What a floor's answer holds (the floors register no aliases): the
/// second link's name.
#[cfg(not(ai_tools_bench_before_stateless))]
const FLOOR_ANSWER: &str = "Link 1";

/// Panics unless the last answer on `client` was a successful `links_list`
/// holding `expect`.
fn check_listed_with(client: &Client, status: u16, expect: &str) {
    let body = client.body();
    assert!(
        status == 200 && body.contains(r#""isError":false"#) && body.contains(expect),
        "{status} {body}"
    );
}

/// Panics unless the last answer on `client` was a successful `links_list`
/// of the gateway.
fn check_listed(client: &Client, status: u16) {
    check_listed_with(client, status, GATEWAY_ANSWER);
}

/// One client of one variant, with its own connection and its own session
/// or principal.
enum Caller {
    Direct(LinksServiceClient<Channel>),
    Mcp {
        client: Client,
        /// The session header, or the stateless headers with the principal.
        headers: String,
        stateless: bool,
        /// What a successful answer holds.
        expect: &'static str,
    },
}

impl Caller {
    /// A direct client on a channel (one HTTP/2 connection) of its own.
    async fn direct(grpc: SocketAddr) -> Self {
        Self::Direct(LinksServiceClient::new(
            endpoint(grpc).connect().await.expect("connect"),
        ))
    }

    /// A client in a new initialized session on `addr`.
    async fn handshake(addr: SocketAddr) -> Self {
        let mut client = Client::connect(addr).await;
        let (status, session) = client.post("", INITIALIZE).await;
        assert_eq!(status, 200, "{}", client.body());
        let id = session.expect("a session id");
        let headers = format!("Mcp-Session-Id: {id}\r\n");
        let (status, _) = client.post(&headers, INITIALIZED).await;
        assert_eq!(status, 202, "{}", client.body());
        Self::Mcp {
            client,
            headers,
            stateless: false,
            expect: GATEWAY_ANSWER,
        }
    }

    /// A client of the bare hyper floor (no session, no MCP headers).
    #[cfg(not(ai_tools_bench_before_stateless))]
    async fn plain(addr: SocketAddr) -> Self {
        Self::Mcp {
            client: Client::connect(addr).await,
            headers: String::new(),
            stateless: false,
            expect: FLOOR_ANSWER,
        }
    }

    /// The same caller, expecting a floor's answer.
    #[cfg(not(ai_tools_bench_before_stateless))]
    fn of_floor(mut self) -> Self {
        if let Self::Mcp { expect, .. } = &mut self {
            *expect = FLOOR_ANSWER;
        }
        self
    }

    /// A stateless client on `addr`, calling as `principal`.
    #[cfg_attr(ai_tools_bench_before_stateless, allow(dead_code))]
    async fn stateless(addr: SocketAddr, principal: &str) -> Self {
        Self::Mcp {
            client: Client::connect(addr).await,
            headers: stateless_headers(principal),
            stateless: true,
            expect: GATEWAY_ANSWER,
        }
    }

    /// One `ListLinks` / `links_list`; its latency.
    async fn call(&mut self, id: u64) -> Duration {
        match self {
            Self::Direct(client) => {
                let request = ListLinksRequest { page_size: 0 };
                let started = Instant::now();
                let response = client.list_links(request).await.expect("list");
                let took = started.elapsed();
                assert_eq!(response.get_ref().links.len(), LINKS);
                took
            }
            Self::Mcp {
                client,
                headers,
                stateless,
                expect,
            } => {
                let body = list(id, *stateless);
                let started = Instant::now();
                let (status, _) = client.post(headers, &body).await;
                let took = started.elapsed();
                check_listed_with(client, status, expect);
                took
            }
        }
    }
}

/// Every client makes `calls` calls back to back, all clients at once; the
/// clients, and every call's latency.
async fn round(callers: Vec<Caller>, calls: usize, first_id: u64) -> (Vec<Caller>, Vec<Duration>) {
    let tasks: Vec<_> = callers
        .into_iter()
        .enumerate()
        .map(|(n, mut caller)| {
            tokio::spawn(async move {
                let mut took = Vec::with_capacity(calls);
                for call in 0..calls {
                    took.push(caller.call(first_id + (n * calls + call) as u64).await);
                }
                (caller, took)
            })
        })
        .collect();
    let mut callers = Vec::new();
    let mut all = Vec::new();
    for task in tasks {
        let (caller, took) = task.await.expect("client");
        callers.push(caller);
        all.extend(took);
    }
    (callers, all)
}

/// The modes each variant runs in: its name, the clients in flight, and
/// the calls each client makes back to back per round (full mode; about
/// the same number of calls per round at 16 and 64 in flight).
const MODES: [(&str, usize, usize); 3] = [
    ("sequential", 1, 50),
    ("16 in flight", 16, 20),
    ("64 in flight", IN_FLIGHT, 5),
];

/// One variant: its clients, sequential (one) and concurrent
/// ([`IN_FLIGHT`], of which the first 16 make the 16-in-flight runs), and
/// what was measured per mode ([`MODES`]).
struct Variant {
    name: &'static str,
    sequential: Option<Vec<Caller>>,
    concurrent: Option<Vec<Caller>>,
    took: [Vec<Duration>; 3],
    /// Wall time of the rounds, per mode: calls per second.
    wall: [Duration; 3],
    /// Context switches of the whole process (clients, server, backend)
    /// during the rounds, per mode.
    switches: [u64; 3],
}

impl Variant {
    fn new(name: &'static str, sequential: Caller, concurrent: Vec<Caller>) -> Self {
        Self {
            name,
            sequential: Some(vec![sequential]),
            concurrent: Some(concurrent),
            took: Default::default(),
            wall: [Duration::ZERO; 3],
            switches: [0; 3],
        }
    }

    /// Forgets what was measured (after a warm-up).
    fn reset(&mut self) {
        self.took = Default::default();
        self.wall = [Duration::ZERO; 3];
        self.switches = [0; 3];
    }

    /// One round of mode `mode` ([`MODES`]): its clients make `calls`
    /// calls each, all at once; their latencies, wall time and context
    /// switches kept.
    async fn run(&mut self, mode: usize, calls: usize, first_id: u64) {
        let clients = MODES[mode].1;
        let (callers, rest) = if clients == 1 {
            (self.sequential.take().expect("clients"), Vec::new())
        } else {
            let mut callers = self.concurrent.take().expect("clients");
            let rest = callers.split_off(clients);
            (callers, rest)
        };
        let switched = context_switches();
        let started = Instant::now();
        let (mut back, took) = round(callers, calls, first_id).await;
        self.wall[mode] += started.elapsed();
        self.switches[mode] += context_switches().saturating_sub(switched);
        self.took[mode].extend(took);
        if clients == 1 {
            self.sequential = Some(back);
        } else {
            back.extend(rest);
            self.concurrent = Some(back);
        }
    }
}

/// Context switches so far of every thread of this process, voluntary and
/// not (`/proc/self/task/*/status`; 0 where there is no `/proc`).
fn context_switches() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    let mut total = 0;
    for task in tasks.flatten() {
        let Ok(status) = std::fs::read_to_string(task.path().join("status")) else {
            continue;
        };
        for line in status.lines() {
            if let Some(("voluntary_ctxt_switches" | "nonvoluntary_ctxt_switches", n)) =
                line.split_once(':')
            {
                total += n.trim().parse::<u64>().unwrap_or(0);
            }
        }
    }
    total
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The variants of the stateless path: in-memory scopes, and Redis scopes
/// when `AI_TOOLS_REDIS_URL` is set.
#[cfg(not(ai_tools_bench_before_stateless))]
async fn stateless_variants(
    grpc: SocketAddr,
    want: &dyn Fn(&str) -> bool,
) -> (Vec<Variant>, Option<Arc<proto_ai_tools::store::RedisStore>>) {
    // This run's principals are its own (a Redis may hold an earlier run's).
    let run = format!(
        "bench-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis())
    );
    let run = run.as_str();
    let mut variants = Vec::new();
    let mut kept = None;
    if want("stateless-memory") {
        let memory = serve_mcp(stateless_server(grpc)).await;
        variants.push(stateless_variant("stateless-memory", memory, run).await);
    }
    if !want("stateless-redis") {
        return (variants, kept);
    }
    match std::env::var("AI_TOOLS_REDIS_URL") {
        Err(_) => println!(
            "mcp stateless: stateless-redis skipped: AI_TOOLS_REDIS_URL is not set (e.g. redis://127.0.0.1:6399)"
        ),
        Ok(url) => match proto_ai_tools::store::RedisStore::connect(&url).await {
            Err(e) => println!("mcp stateless: stateless-redis skipped: {url}: {e}"),
            Ok(store) => {
                let store = Arc::new(store);
                kept = Some(store.clone());
                let sessions = Sessions::new((), Duration::from_secs(30 * 60)).with_store(store);
                let redis =
                    serve_mcp(stateless_server(grpc).with_sessions(Arc::new(sessions))).await;
                variants.push(stateless_variant("stateless-redis", redis, run).await);
            }
        },
    }
    (variants, kept)
}

#[cfg(not(ai_tools_bench_before_stateless))]
async fn stateless_variant(name: &'static str, addr: SocketAddr, run: &str) -> Variant {
    variant_of(name, |n| {
        let principal = n.map_or_else(|| format!("{run}-solo"), |n| format!("{run}-{n}"));
        async move { Caller::stateless(addr, &principal).await }
    })
    .await
}

/// A variant of one sequential caller and [`IN_FLIGHT`] concurrent ones,
/// each made by `make` (given `None` for the sequential one, else its
/// index).
async fn variant_of<F, Fut>(name: &'static str, mut make: F) -> Variant
where
    F: FnMut(Option<usize>) -> Fut,
    Fut: Future<Output = Caller>,
{
    let sequential = make(None).await;
    let mut concurrent = Vec::with_capacity(IN_FLIGHT);
    for n in 0..IN_FLIGHT {
        concurrent.push(make(Some(n)).await);
    }
    Variant::new(name, sequential, concurrent)
}

/// A variant of handshake-era clients on `addr`, each in a session of its
/// own.
async fn handshake_variant(name: &'static str, addr: SocketAddr) -> Variant {
    variant_of(name, |_| Caller::handshake(addr)).await
}

/// The same variant, its clients expecting a floor's answer.
#[cfg(not(ai_tools_bench_before_stateless))]
fn of_floor(mut variant: Variant) -> Variant {
    for callers in [&mut variant.sequential, &mut variant.concurrent] {
        let floor = callers
            .take()
            .map(|c| c.into_iter().map(Caller::of_floor).collect());
        *callers = floor;
    }
    variant
}

/// The floors (`proto_ai_tools_benches::floors`) over the same backend,
/// each a server of its own with a channel of its own, as each gateway
/// variant is: `hyper-floor` (bare hyper forwarding over tonic),
/// `rmcp-floor` (a minimal rmcp server forwarding, clients in sessions),
/// `rmcp-floor-stateless` (the same server kind, stateless requests of
/// `2026-07-28`) and `rmcp-floor-no-backend` (clients in sessions, the
/// server answering the same bytes without the backend).
#[cfg(not(ai_tools_bench_before_stateless))]
async fn floor_variants(grpc: SocketAddr, want: &dyn Fn(&str) -> bool) -> Vec<Variant> {
    use proto_ai_tools_benches::floors::{links_json, serve_hyper_floor, serve_rmcp_floor};
    let mut variants = Vec::new();
    if want("hyper-floor") {
        let addr = serve_hyper_floor(endpoint(grpc).connect_lazy()).await;
        variants.push(variant_of("hyper-floor", |_| Caller::plain(addr)).await);
    }
    if want("rmcp-floor") {
        let addr =
            serve_rmcp_floor(Some(endpoint(grpc).connect_lazy()), String::new(), false).await;
        variants.push(of_floor(handshake_variant("rmcp-floor", addr).await));
    }
    if want("rmcp-floor-stateless") {
        let addr =
            serve_rmcp_floor(Some(endpoint(grpc).connect_lazy()), String::new(), false).await;
        variants.push(of_floor(
            stateless_variant("rmcp-floor-stateless", addr, "floor").await,
        ));
    }
    if want("rmcp-floor-stateless-json") {
        let addr = serve_rmcp_floor(Some(endpoint(grpc).connect_lazy()), String::new(), true).await;
        variants.push(of_floor(
            stateless_variant("rmcp-floor-stateless-json", addr, "floor-json").await,
        ));
    }
    if want("rmcp-floor-no-backend") {
        // The bytes the forwarding floors answer, asked once.
        let mut client = LinksServiceClient::new(endpoint(grpc).connect().await.expect("connect"));
        let listed = client
            .list_links(ListLinksRequest { page_size: 0 })
            .await
            .expect("list");
        let addr = serve_rmcp_floor(None, links_json(listed.get_ref()), false).await;
        variants.push(of_floor(
            handshake_variant("rmcp-floor-no-backend", addr).await,
        ));
    }
    variants
}

/// Memory per idle scope through the gateway: one `links_list` for each of
/// `scopes` new principals, less `scopes` calls of principals the server
/// already knows (the same work but the new scopes).
#[cfg(not(ai_tools_bench_before_stateless))]
async fn scopes_through_gateway(grpc: SocketAddr, scopes: usize) -> (Usage, Usage, Usage) {
    let addr = serve_mcp(stateless_server(grpc)).await;
    let mut client = Client::connect(addr).await;
    let known: Vec<String> = (0..IN_FLIGHT)
        .map(|n| stateless_headers(&format!("known-{n}")))
        .collect();
    // Headers built before counting, as the known ones are: two passes of
    // `scopes` new principals each.
    let fresh: Vec<String> = (0..2 * scopes)
        .map(|n| stateless_headers(&format!("fresh-{n}")))
        .collect();
    let bodies: Vec<String> = (0..scopes as u64).map(|n| list(n + 1, true)).collect();
    // Warm up: the known scopes made, the connection's buffers grown.
    for (n, headers) in known.iter().cycle().take(4 * IN_FLIGHT).enumerate() {
        let (status, _) = client.post(headers, &bodies[n % scopes]).await;
        check_listed(&client, status);
    }
    let settle = || tokio::time::sleep(Duration::from_millis(50));
    let mut none = Usage::default();
    let mut new = Usage::default();
    // Twice each, alternating: the second of each is the one kept (the
    // first may still grow a buffer the second finds grown).
    for pass in 0..2 {
        none = counted(async {
            for (n, body) in bodies.iter().enumerate() {
                let (status, _) = client.post(&known[n % known.len()], body).await;
                check_listed(&client, status);
            }
            settle().await;
        })
        .await;
        new = counted(async {
            for (n, body) in bodies.iter().enumerate() {
                let (status, _) = client.post(&fresh[pass * scopes + n], body).await;
                check_listed(&client, status);
            }
            settle().await;
        })
        .await;
    }
    // The same number of direct calls: what the test service itself keeps
    // per call (it logs every request it receives).
    let mut direct = Caller::direct(grpc).await;
    direct.call(0).await;
    let service = counted(async {
        for n in 0..scopes {
            direct.call(n as u64).await;
        }
        settle().await;
    })
    .await;
    (new, none, service)
}

/// Where a sequential call's time goes: per iteration, in an order that
/// rotates, one each of the direct call, the same tool call through the
/// toolkit the gateway builds but in process (no MCP, no HTTP), a `ping`
/// in an MCP session (MCP over HTTP, no tool call), the `tools/call` in a
/// session, and the stateless one (when built); each on a connection and
/// server of its own. The p50 of each.
async fn breakdown(grpc: SocketAddr, iterations: usize, stateless: bool) {
    let transport = proto_ai_tools::transport::TonicTransport::new(
        endpoint(grpc).connect().await.expect("connect"),
    );
    let aliases = Arc::new(proto_ai_tools::AliasManager::new());
    let toolkit = proto_ai_tools::Toolkit::builder()
        .alias_manager(aliases.clone())
        .generated(
            proto_ai_tools_tests::tools::links::Executor::with_alias_manager(transport, aliases),
        )
        .build()
        .expect("toolkit");
    let mut direct = Caller::direct(grpc).await;
    let mut session = Caller::handshake(serve_mcp(mcp_server(grpc)).await).await;
    let mut pinger = Caller::handshake(serve_mcp(mcp_server(grpc)).await).await;
    #[cfg(not(ai_tools_bench_before_stateless))]
    let mut sessionless = if stateless {
        Some(Caller::stateless(serve_mcp(stateless_server(grpc)).await, "breakdown").await)
    } else {
        None
    };
    #[cfg(ai_tools_bench_before_stateless)]
    let mut sessionless: Option<Caller> = {
        let _ = stateless;
        None
    };
    let names = [
        "direct",
        "toolkit.execute in process",
        "handshake ping",
        "handshake tools/call",
        "stateless tools/call",
    ];
    let kinds = if sessionless.is_some() { 5 } else { 4 };
    let mut took: Vec<Vec<Duration>> = vec![Vec::with_capacity(iterations); kinds];
    // The first tenth warms up and is not kept.
    let warm = iterations / 10;
    for i in 0..warm + iterations {
        for k in 0..kinds {
            let kind = (i + k) % kinds;
            let id = (i * kinds + k + 10) as u64;
            let latency = match kind {
                0 => direct.call(id).await,
                1 => {
                    let started = Instant::now();
                    let result = toolkit.execute("links_list", "{}").await;
                    let latency = started.elapsed();
                    assert!(!result.is_error, "{}", result.output);
                    latency
                }
                2 => {
                    let Caller::Mcp {
                        client, headers, ..
                    } = &mut pinger
                    else {
                        unreachable!("a session")
                    };
                    let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
                    let started = Instant::now();
                    let (status, _) = client.post(headers, &body).await;
                    let latency = started.elapsed();
                    assert!(
                        status == 200 && client.body().contains(r#""result":{}"#),
                        "{status} {}",
                        client.body()
                    );
                    latency
                }
                3 => session.call(id).await,
                _ => sessionless.as_mut().expect("stateless").call(id).await,
            };
            if i >= warm {
                took[kind].push(latency);
            }
        }
    }
    let mut direct_p50 = Duration::ZERO;
    for (kind, latencies) in took.iter_mut().enumerate() {
        latencies.sort();
        let p50 = quantile(latencies, 0.50);
        if kind == 0 {
            direct_p50 = p50;
        }
        println!(
            "mcp stateless: where the time goes, sequential, {iterations} each, interleaved: {}: p50 {:.0} us ({:.2} x direct)",
            names[kind],
            us(p50),
            us(p50) / us(direct_p50)
        );
    }
}

/// The statistics of one variant in one mode.
#[derive(Clone, Copy, Default)]
struct Stats {
    calls: usize,
    p50: Duration,
    p99: Duration,
    per_second: f64,
    switches_per_call: f64,
}

fn stats(variant: &mut Variant, mode: usize) -> Stats {
    let took = &mut variant.took[mode];
    took.sort();
    let calls = took.len();
    Stats {
        calls,
        p50: quantile(took, 0.50),
        p99: quantile(took, 0.99),
        per_second: calls as f64 / variant.wall[mode].as_secs_f64(),
        switches_per_call: variant.switches[mode] as f64 / calls as f64,
    }
}

/// `a / b`, two decimals, or `-` without `b`.
fn ratio(a: Duration, b: Option<Duration>) -> String {
    b.map_or_else(|| "-".to_owned(), |b| format!("{:.2}", us(a) / us(b)))
}

/// `only <variant> [seconds]` (default 10): the named variant alone, its
/// sequential client calling back to back for that long, for a profiler
/// attached to the process.
fn only_argument() -> Option<(String, f64)> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == "only")?;
    let name = args.get(at + 1).cloned().expect("only <variant> [seconds]");
    let seconds = args
        .get(at + 2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10.0);
    Some((name, seconds))
}

/// The `only` mode: `variant`'s sequential client alone for `seconds`
/// (after a warm-up); calls, p50, mean and context switches per call.
async fn only(variant: &mut Variant, seconds: f64, quick: bool) {
    let mut next_id = 10;
    variant.run(0, if quick { 1 } else { 500 }, next_id).await;
    variant.reset();
    let started = Instant::now();
    loop {
        next_id += 1_000;
        variant.run(0, if quick { 1 } else { 200 }, next_id).await;
        if quick || started.elapsed().as_secs_f64() >= seconds {
            break;
        }
    }
    let s = stats(variant, 0);
    println!(
        "mcp stateless: only {}: {} sequential calls in {:.1} s: p50 {:.0} us, mean {:.1} us, {:.2} context switches per call",
        variant.name,
        s.calls,
        variant.wall[0].as_secs_f64(),
        us(s.p50),
        us(variant.wall[0]) / s.calls as f64,
        s.switches_per_call
    );
}

fn main() {
    let quick = quick_mode();
    let handshake_only =
        cfg!(ai_tools_bench_before_stateless) || std::env::args().any(|a| a == "handshake");
    let only_one = only_argument();
    // Which variants are built: all but those a mode leaves out.
    let want = |name: &str| match &only_one {
        Some((only, _)) => only == name,
        None => !handshake_only || name == "direct" || name == "handshake",
    };
    let (rounds, scopes) = if quick { (1, 100) } else { (60, SCOPES) };
    let calls = |mode: usize| if quick { 1 } else { MODES[mode].2 };
    let rt = proto_ai_tools_benches::runtime();
    rt.block_on(async {
        // What a scope holds, before any server runs (nothing else allocates).
        if !handshake_only && only_one.is_none() {
            for aliases in [ALIASES_PER_SCOPE, 0] {
                report(
                    &format!("Sessions, {scopes} idle scopes x {aliases} aliases (no store)"),
                    scopes,
                    "scope",
                    scopes_in_sessions(scopes, aliases).await,
                );
            }
        }

        let grpc = serve_grpc(LinksBackend::with_links(LINKS)).await;
        let mut variants = Vec::new();
        if want("direct") {
            variants.push(variant_of("direct", |_| Caller::direct(grpc)).await);
        }
        #[cfg(not(ai_tools_bench_before_stateless))]
        variants.extend(floor_variants(grpc, &want).await);
        if want("handshake") {
            let addr = serve_mcp(mcp_server(grpc)).await;
            variants.push(handshake_variant("handshake", addr).await);
        }
        #[cfg(not(ai_tools_bench_before_stateless))]
        let redis: Option<Arc<proto_ai_tools::store::RedisStore>> = {
            let (stateless, store) = stateless_variants(grpc, &want).await;
            variants.extend(stateless);
            store
        };
        #[cfg(ai_tools_bench_before_stateless)]
        let redis: Option<Arc<proto_ai_tools::store::RedisStore>> = None;

        if let Some((name, seconds)) = &only_one {
            let variant = variants
                .iter_mut()
                .find(|v| v.name == name)
                .unwrap_or_else(|| panic!("no variant {name}"));
            only(variant, *seconds, quick).await;
            return;
        }

        // Warm up: every connection used, every scope and toolkit made;
        // then the measurements start afresh.
        let mut next_id = 10;
        for variant in &mut variants {
            for _ in 0..2 {
                variant.run(0, 2, next_id).await;
                variant.run(MODES.len() - 1, 2, next_id + 1_000).await;
                next_id += 1_000_000;
            }
            variant.reset();
        }

        let round_trips = redis.as_ref().map(|store| store.round_trips());
        let started = Instant::now();
        let count = variants.len();
        for r in 0..rounds {
            for mode in 0..MODES.len() {
                // Rotate which goes first, so none always meets a warmer machine.
                for k in 0..count {
                    variants[(r + k) % count]
                        .run(mode, calls(mode), next_id)
                        .await;
                    next_id += 1_000_000;
                }
            }
        }
        let elapsed = started.elapsed();

        println!(
            "mcp stateless: {rounds} rounds, alternating; per round and variant {} sequential calls, 16 x {} and {IN_FLIGHT} x {} in flight; {:.1} s",
            calls(0),
            calls(1),
            calls(2),
            elapsed.as_secs_f64()
        );
        let table: Vec<[Stats; 3]> = variants
            .iter_mut()
            .map(|v| [stats(v, 0), stats(v, 1), stats(v, 2)])
            .collect();
        let of = |name: &str| variants.iter().position(|v| v.name == name);
        let (direct, hyper) = (of("direct"), of("hyper-floor"));
        println!(
            "mcp stateless: | variant | mode | calls | p50 (us) | p99 (us) | p50 / direct | p99 / direct | p50 / hyper floor | p99 / hyper floor | calls/s | context switches per call |"
        );
        println!("mcp stateless: |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (mode, (mode_name, _, _)) in MODES.iter().enumerate() {
            let base = |at: Option<usize>| at.map(|at| table[at][mode]);
            let (d, h) = (base(direct), base(hyper));
            for (variant, row) in variants.iter().zip(&table) {
                let s = row[mode];
                println!(
                    "mcp stateless: | {} | {mode_name} | {} | {:.0} | {:.0} | {} | {} | {} | {} | {:.0} | {:.1} |",
                    variant.name,
                    s.calls,
                    us(s.p50),
                    us(s.p99),
                    ratio(s.p50, d.map(|d| d.p50)),
                    ratio(s.p99, d.map(|d| d.p99)),
                    ratio(s.p50, h.map(|h| h.p50)),
                    ratio(s.p99, h.map(|h| h.p99)),
                    s.per_second,
                    s.switches_per_call
                );
            }
        }
        // The same, one line a variant: p50 as multiples of the direct call
        // and of the hyper floor.
        println!(
            "mcp stateless: summary: | variant | sequential p50 (us) | sequential x direct / x hyper | 16 in flight | 64 in flight | calls/s at 64 |"
        );
        println!("mcp stateless: summary: |---|---:|---|---|---|---:|");
        for (variant, row) in variants.iter().zip(&table) {
            let cell = |mode: usize| {
                format!(
                    "{} / {}",
                    ratio(row[mode].p50, direct.map(|d| table[d][mode].p50)),
                    ratio(row[mode].p50, hyper.map(|h| table[h][mode].p50))
                )
            };
            println!(
                "mcp stateless: summary: | {} | {:.0} | {} | {} | {} | {:.0} |",
                variant.name,
                us(row[0].p50),
                cell(0),
                cell(1),
                cell(2),
                row[2].per_second
            );
        }

        if let (Some(store), Some(before), Some(variant)) = (
            &redis,
            round_trips,
            variants.iter().find(|v| v.name == "stateless-redis"),
        ) {
            let calls: usize = variant.took.iter().map(Vec::len).sum();
            println!(
                "mcp stateless: stateless-redis: {:.2} Redis round trips per call",
                (store.round_trips() - before) as f64 / calls as f64
            );
        }

        breakdown(grpc, if quick { 1 } else { 2_000 }, !handshake_only).await;

        #[cfg(not(ai_tools_bench_before_stateless))]
        if !handshake_only {
            let (new, none, service) = scopes_through_gateway(grpc, scopes).await;
            let scoped = new - none;
            report(
                &format!(
                    "gateway, {scopes} new principals x 1 links_list ({ALIASES_PER_SCOPE} aliases) less {scopes} calls of known ones"
                ),
                scopes,
                "scope",
                scoped,
            );
            report(
                &format!("gateway, what {scopes} calls of known principals left"),
                scopes,
                "call",
                none,
            );
            report(
                &format!("direct, what {scopes} calls left (the test service logs every request)"),
                scopes,
                "call",
                service,
            );
        }
    });
}
