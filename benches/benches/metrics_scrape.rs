//! What a Prometheus scrape of the gateway's metrics costs with 10,000 live
//! alias scopes (issue 51's bar: `/metrics` within 10 ms), against the same
//! scrape of a gateway with one scope, in the same run.
//!
//! Two gateways (`McpServer::with_metrics`, stateless requests scoped by a
//! header) in front of one links service on loopback: the baseline, whose
//! one caller makes [`SCOPES`] calls, and the one under test, where each of
//! [`SCOPES`] callers makes one call (so both have answered as many calls
//! and hold the same series). Then their `Metrics::encode` (what `/metrics`
//! answers) alternates, [`SCRAPES`] times each; prints p50 and p99 of each,
//! their ratio, the bytes written, and the scopes each says it holds.
//!
//! `cargo bench -p proto-ai-tools-benches --bench metrics_scrape`; in quick
//! mode (`cargo test -p proto-ai-tools-benches --benches`) 50 scopes and
//! 3 scrapes.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use proto_ai_tools_benches::http::Client;
use proto_ai_tools_benches::loopback::{serve_grpc, serve_mcp};
use proto_ai_tools_benches::{quantile, quick_mode};
use proto_ai_tools_mcp::admin::Metrics;
use proto_ai_tools_tests::{LinksBackend, links_mcp_server};

/// Live scopes under test: `Sessions`' default capacity.
const SCOPES: usize = 10_000;
/// Scrapes timed of each gateway.
const SCRAPES: usize = 200;
/// The header that names a stateless request's caller.
const SCOPE_HEADER: &str = "x-principal";

/// A gateway with metrics on `grpc`, after `calls` calls spread over
/// `callers` callers; its metrics.
async fn called(grpc: SocketAddr, callers: usize, calls: usize) -> Metrics {
    let metrics = Metrics::new();
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{grpc}"))
        .expect("endpoint")
        .connect_lazy();
    let server = links_mcp_server(channel)
        .with_alias_scope_header(SCOPE_HEADER)
        .expect("a scope header")
        .with_metrics(metrics.clone());
    let mut client = Client::connect(serve_mcp(server).await).await;
    for n in 0..calls {
        let headers = format!(
            "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: links_list\r\n{SCOPE_HEADER}: caller-{}\r\n",
            n % callers
        );
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"links_list","arguments":{{}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
        );
        let (status, _) = client.post(&headers, &body).await;
        assert!(
            status == 200 && client.body().contains(r#""isError":false"#),
            "{status} {}",
            client.body()
        );
    }
    metrics
}

/// The gauge `name` in a scrape's `text`.
fn gauge(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in the scrape"))
}

fn main() {
    let quick = quick_mode();
    let (scopes, scrapes) = if quick { (50, 3) } else { (SCOPES, SCRAPES) };
    proto_ai_tools_benches::runtime().block_on(async {
        let grpc = serve_grpc(LinksBackend::with_links(2)).await;
        let one = called(grpc, 1, scopes).await;
        let many = called(grpc, scopes, scopes).await;
        let (mut one_took, mut many_took) = (Vec::new(), Vec::new());
        let (mut one_bytes, mut many_bytes) = (0, 0);
        for k in 0..scrapes {
            // Alternating which goes first, so neither always meets a
            // warmer cache.
            let order: [(&Metrics, &mut Vec<Duration>, &mut usize); 2] = if k % 2 == 0 {
                [(&one, &mut one_took, &mut one_bytes), (&many, &mut many_took, &mut many_bytes)]
            } else {
                [(&many, &mut many_took, &mut many_bytes), (&one, &mut one_took, &mut one_bytes)]
            };
            for (metrics, took, bytes) in order {
                let started = Instant::now();
                let text = metrics.encode();
                took.push(started.elapsed());
                *bytes = text.len();
            }
        }
        let scopes_held = |metrics: &Metrics| gauge(&metrics.encode(), "ai_tools_alias_scopes ");
        let (held_one, held_many) = (scopes_held(&one), scopes_held(&many));
        assert!(held_many >= scopes as f64, "{held_many} scopes held, {scopes} made");
        one_took.sort_unstable();
        many_took.sort_unstable();
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        let (p50_one, p50_many) = (quantile(&one_took, 0.5), quantile(&many_took, 0.5));
        println!(
            "metrics scrape: | gateway | scopes held | bytes | p50 (us) | p99 (us) |\nmetrics scrape: |---|---:|---:|---:|---:|"
        );
        for (name, held, bytes, took) in [
            ("one caller", held_one, one_bytes, &one_took),
            ("one scope per caller", held_many, many_bytes, &many_took),
        ] {
            println!(
                "metrics scrape: | {name} | {held} | {bytes} | {:.0} | {:.0} |",
                us(quantile(took, 0.5)),
                us(quantile(took, 0.99))
            );
        }
        println!(
            "metrics scrape: {scopes} scopes / 1 scope, p50: {:.2}x; {scrapes} scrapes each, alternating",
            p50_many.as_secs_f64() / p50_one.as_secs_f64()
        );
    });
}
