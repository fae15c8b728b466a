//! MCP over HTTP under load, with the limits of issue 27 at their defaults
//! and lifted: 200 calls in flight at once, across 20 MCP sessions, through
//! `McpServer::serve_http_until` on loopback to a real tonic service.
//!
//! Two servers run side by side on the same service: one with every limit
//! at its default (body size, sessions, connections, header-read and idle
//! timeouts, the 50 s call deadline, cancellation on disconnect), one with
//! each lifted as far as it goes (very large caps and timeouts, no deadline,
//! no cancellation on disconnect). Both forward an `authorization` header,
//! so the fail-closed check of forwarded headers runs on every call; the
//! edge's own checks (the session before the body, the JSON scan) run in
//! both, since they are not limits one can lift. Rounds alternate between
//! the two, and each round is 200 clients (10 per session, each on its own
//! keep-alive connection) calling `links_list` back to back. The latency of
//! a call is from its first byte sent to its last byte read. Prints the
//! p50 and p99 of each and their ratio, defaults / lifted.
//!
//! `cargo bench -p proto-ai-tools-benches --bench mcp_load`; in quick mode
//! (`cargo test -p proto-ai-tools-benches --benches`) one round of one call per
//! client.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use proto_ai_tools_benches::http::Client;
use proto_ai_tools_benches::loopback::{serve_grpc, serve_mcp};
use proto_ai_tools_benches::{quantile, quick_mode};
use proto_ai_tools_mcp::McpServer;
use proto_ai_tools_tests::{LinksBackend, links_mcp_server};

/// MCP sessions.
const SESSIONS: usize = 20;
/// Calls in flight at once, spread evenly over the sessions.
const IN_FLIGHT: usize = 200;
/// Links the service holds: each `links_list` answers with all of them.
const LINKS: usize = 5;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcp-load","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A `tools/call` of `links_list` with JSON-RPC id `id`: ids must differ
/// among a session's requests in flight.
fn list(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"links_list","arguments":{{}}}}}}"#
    )
}

/// The links tools over MCP, calling `grpc`.
fn mcp_server(grpc: SocketAddr) -> McpServer {
    let channel = {
        tonic::transport::Endpoint::from_shared(format!("http://{grpc}"))
            .expect("endpoint")
            .connect_lazy()
    };
    links_mcp_server(channel)
        .forward_headers(["authorization"])
        .expect("forwardable")
}

/// Every limit of issue 27 as far as it goes.
fn lifted(server: McpServer) -> McpServer {
    let day = Duration::from_secs(24 * 3600);
    server
        .with_max_request_body_bytes(1 << 30)
        .with_max_sessions(1_000_000)
        .with_session_idle_timeout(day)
        .with_max_connections(1_000_000)
        .with_header_timeout(day)
        .with_idle_timeout(day)
        .with_call_timeout(None)
        .with_cancel_on_disconnect(false)
}

/// The header lines of every request: the forwarded `authorization`, and
/// the session's id once there is one.
fn headers(session: Option<&str>) -> String {
    let mut headers = String::from("Authorization: Bearer load-test\r\n");
    if let Some(id) = session {
        headers.push_str("Mcp-Session-Id: ");
        headers.push_str(id);
        headers.push_str("\r\n");
    }
    headers
}

/// A new initialized session on `addr`; its id.
async fn session(addr: SocketAddr) -> String {
    let mut client = Client::connect(addr).await;
    let (status, session) = client.post(&headers(None), INITIALIZE).await;
    assert_eq!(status, 200, "{}", client.body());
    let id = session.expect("a session id");
    let (status, _) = client.post(&headers(Some(&id)), INITIALIZED).await;
    assert_eq!(status, 202, "{}", client.body());
    id
}

/// [`IN_FLIGHT`] clients of `addr`, each on its own keep-alive
/// connection in one of `sessions`, in turn; each with its header lines.
async fn clients(addr: SocketAddr, sessions: &[String]) -> Vec<(Client, String)> {
    let mut clients = Vec::with_capacity(IN_FLIGHT);
    for n in 0..IN_FLIGHT {
        clients.push((
            Client::connect(addr).await,
            headers(Some(&sessions[n % sessions.len()])),
        ));
    }
    clients
}

/// One round: every client makes `calls` calls back to back, all clients
/// at once; the clients, and every call's latency.
async fn round(
    clients: Vec<(Client, String)>,
    calls: usize,
    first_id: u64,
) -> (Vec<(Client, String)>, Vec<Duration>) {
    let tasks: Vec<_> = clients
        .into_iter()
        .enumerate()
        .map(|(n, (mut client, headers))| {
            tokio::spawn(async move {
                let mut took = Vec::with_capacity(calls);
                for call in 0..calls {
                    let body = list(first_id + (n * calls + call) as u64);
                    let started = Instant::now();
                    let (status, _) = client.post(&headers, &body).await;
                    took.push(started.elapsed());
                    let answer = client.body();
                    assert_eq!(status, 200, "{answer}");
                    assert!(
                        answer.contains(r#""isError":false"#) && answer.contains("link-1"),
                        "{answer}"
                    );
                }
                ((client, headers), took)
            })
        })
        .collect();
    let mut clients = Vec::with_capacity(IN_FLIGHT);
    let mut all = Vec::with_capacity(IN_FLIGHT * calls);
    for task in tasks {
        let (client, took) = task.await.expect("client");
        clients.push(client);
        all.extend(took);
    }
    (clients, all)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let quick = quick_mode();
    let (rounds, calls) = if quick { (1, 1) } else { (40, 6) };
    let rt = proto_ai_tools_benches::runtime();
    rt.block_on(async {
        let grpc = serve_grpc(LinksBackend::with_links(LINKS)).await;
        let defaults = serve_mcp(mcp_server(grpc)).await;
        let unlimited = serve_mcp(lifted(mcp_server(grpc))).await;
        let mut configs = Vec::new();
        for (name, addr) in [("defaults", defaults), ("lifted", unlimited)] {
            let mut sessions = Vec::new();
            for _ in 0..SESSIONS {
                sessions.push(session(addr).await);
            }
            // Warm up: every session's toolkit built, every connection used.
            let (clients, _) = round(clients(addr, &sessions).await, 2, 10).await;
            configs.push((name, Some(clients), Vec::new()));
        }
        let mut next_id = 1_000;
        let started = Instant::now();
        for r in 0..rounds {
            // Alternate which goes first, so neither always meets a warmer machine.
            let order: [usize; 2] = if r % 2 == 0 { [0, 1] } else { [1, 0] };
            for i in order {
                let (_, clients, took) = &mut configs[i];
                let (back, latencies) =
                    round(clients.take().expect("clients"), calls, next_id).await;
                next_id += (IN_FLIGHT * calls) as u64;
                *clients = Some(back);
                took.extend(latencies);
            }
        }
        let elapsed = started.elapsed();
        let mut summary = Vec::new();
        for (name, _, took) in &mut configs {
            took.sort();
            let (p50, p99) = (quantile(took, 0.50), quantile(took, 0.99));
            println!(
                "mcp load: {name}: {} calls, {IN_FLIGHT} in flight over {SESSIONS} sessions: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
                took.len(),
                ms(p50),
                ms(p99),
                ms(*took.last().expect("calls"))
            );
            summary.push((p50, p99));
        }
        let total: usize = configs.iter().map(|c| c.2.len()).sum();
        println!(
            "mcp load: defaults / lifted: p50 {:.2}, p99 {:.2} ({rounds} rounds each, alternating; {total} calls in {:.1} s, {:.0} calls/s)",
            ms(summary[0].0) / ms(summary[1].0),
            ms(summary[0].1) / ms(summary[1].1),
            elapsed.as_secs_f64(),
            total as f64 / elapsed.as_secs_f64()
        );
    });
}
