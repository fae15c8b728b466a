//! Drives built `ai-tools` binaries side by side: each serves `links.proto`
//! over MCP (`ai-tools mcp --http 127.0.0.1:0 --single-user`) against one
//! links service in this process, with its logs at the default filter
//! (the INFO `tool call` line of every call kept) on a pipe this program
//! drains, as a log collector would. Rounds alternate between the
//! binaries and the direct tonic call, the order rotating each round; each
//! round makes `--calls` sequential calls and `--calls` calls on each of
//! `--in-flight` connections at once. Prints each one's p50 and p99, and
//! the p50 over the direct call's.
//!
//! `cargo run --release -p proto-ai-tools-benches --bin gateway-load --
//! [--stateless] [--rounds N] [--calls N] [--in-flight N]
//! [--flags NAME="FLAG ..."]... NAME=PATH...`
//! (a session per connection by default; `--stateless` sends protocol
//! 2026-07-28 requests without one, all in the single user's scope;
//! `--flags` gives the binary named NAME more flags, split at spaces, so
//! that one binary runs as two variants, e.g. with `--admin` and
//! `--otlp-endpoint` and without).
//!
//! `NAME=rmcp-floor` is no binary but the minimal rmcp forwarder of
//! `proto_ai_tools_benches::floors` (BENCHMARKS.md §15), run in a process
//! of its own (this program again, with `--serve-rmcp-floor GRPC`), so that
//! the gateway, the floor and the load are separate processes, as an
//! operator deploys them. `--otlp-sink` serves an OTLP/gRPC trace collector
//! in this process that counts the spans it receives and drops them; a
//! `{otlp}` in a `--flags` value is its URL.

use std::io::BufRead as _;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use proto_ai_tools_benches::http::Client;
use proto_ai_tools_benches::loopback::serve_grpc;
use proto_ai_tools_benches::{quantile, workspace_root};
use proto_ai_tools_tests::LinksBackend;
use proto_ai_tools_tests::pb::ListLinksRequest;
use proto_ai_tools_tests::pb::links_service_client::LinksServiceClient;
use tonic::transport::Channel;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"gateway-load","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const STATELESS: &str =
    "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: links_list\r\n";

/// The name that runs the rmcp floor instead of a binary.
const RMCP_FLOOR: &str = "rmcp-floor";

struct Options {
    stateless: bool,
    otlp_sink: bool,
    rounds: usize,
    calls: usize,
    in_flight: usize,
    binaries: Vec<(String, String)>,
    /// More flags of the binary of that name.
    flags: Vec<(String, Vec<String>)>,
}

fn options() -> Options {
    let mut options = Options {
        stateless: false,
        otlp_sink: false,
        rounds: 20,
        calls: 200,
        in_flight: 16,
        binaries: Vec::new(),
        flags: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = |what: &str| -> usize {
            args.next()
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{what} takes a number"))
        };
        match arg.as_str() {
            "--stateless" => options.stateless = true,
            "--otlp-sink" => options.otlp_sink = true,
            "--rounds" => options.rounds = number("--rounds"),
            "--calls" => options.calls = number("--calls"),
            "--in-flight" => options.in_flight = number("--in-flight"),
            "--bench" => {}
            "--flags" => {
                let given = args.next().expect("--flags takes NAME=\"FLAG ...\"");
                let (name, flags) = given
                    .split_once('=')
                    .unwrap_or_else(|| panic!("`--flags {given}`: give NAME=\"FLAG ...\""));
                options.flags.push((
                    name.to_owned(),
                    flags.split_whitespace().map(str::to_owned).collect(),
                ));
            }
            named => {
                let (name, path) = named
                    .split_once('=')
                    .unwrap_or_else(|| panic!("`{named}`: give NAME=PATH of an ai-tools binary"));
                options.binaries.push((name.to_owned(), path.to_owned()));
            }
        }
    }
    assert!(
        !options.binaries.is_empty(),
        "give NAME=PATH of an ai-tools binary"
    );
    options
}

/// `ai-tools mcp --http` over links.proto calling `grpc` (or the rmcp
/// floor, for [`RMCP_FLOOR`]), started; the process and where it serves.
/// Its stderr is read to its end by a thread of its own (the lines
/// counted, then dropped).
fn start(path: &str, flags: &[String], grpc: SocketAddr) -> (Child, SocketAddr) {
    let root = workspace_root();
    let mut command = if path == RMCP_FLOOR {
        let mut floor = Command::new(std::env::current_exe().expect("this program"));
        floor.args(["--serve-rmcp-floor", &grpc.to_string()]);
        floor
    } else {
        let mut gateway = Command::new(path);
        gateway
            .args(["mcp", "--grpc", &format!("http://{grpc}"), "--proto"])
            .arg(root.join("proto/links/v1/links.proto"))
            .arg("-I")
            .arg(root.join("proto"))
            .args(["--http", "127.0.0.1:0", "--single-user"]);
        gateway
    };
    let mut child = command
        .args(flags)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gateway starts");
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("piped"));
    let addr = loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).expect("stderr") > 0,
            "the gateway ended before it said where it serves"
        );
        if let Some(rest) = line.trim().split("at http://").nth(1) {
            break rest
                .strip_suffix("/mcp")
                .expect("an address")
                .parse()
                .expect("an address");
        }
    };
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (child, addr)
}

/// A channel to the links service at `grpc`, `TCP_NODELAY` as the gateway sets it.
async fn connect(grpc: SocketAddr) -> Channel {
    tonic::transport::Endpoint::from_shared(format!("http://{grpc}"))
        .expect("endpoint")
        .tcp_nodelay(true)
        .connect()
        .await
        .expect("connect")
}

enum Caller {
    Direct(LinksServiceClient<Channel>),
    Mcp { client: Client, headers: String },
}

impl Caller {
    async fn direct(grpc: SocketAddr) -> Self {
        Self::Direct(LinksServiceClient::new(connect(grpc).await))
    }

    async fn mcp(addr: SocketAddr, stateless: bool) -> Self {
        let mut client = Client::connect(addr).await;
        let headers = if stateless {
            STATELESS.to_owned()
        } else {
            let (status, session) = client.post("", INITIALIZE).await;
            assert_eq!(status, 200, "{}", client.body());
            let headers = format!("Mcp-Session-Id: {}\r\n", session.expect("a session"));
            let (status, _) = client.post(&headers, INITIALIZED).await;
            assert_eq!(status, 202, "{}", client.body());
            headers
        };
        Self::Mcp { client, headers }
    }

    async fn call(&mut self, id: u64) -> Duration {
        match self {
            Self::Direct(client) => {
                let started = Instant::now();
                client
                    .list_links(ListLinksRequest { page_size: 0 })
                    .await
                    .expect("list");
                started.elapsed()
            }
            Self::Mcp { client, headers } => {
                let meta = if headers.starts_with("MCP-Protocol-Version: 2026") {
                    r#","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#
                } else {
                    ""
                };
                let body = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"links_list","arguments":{{}}{meta}}}}}"#
                );
                let started = Instant::now();
                let (status, _) = client.post(headers, &body).await;
                let took = started.elapsed();
                let body = client.body();
                assert!(
                    status == 200 && body.contains(r#""isError":false"#),
                    "{status} {body}"
                );
                took
            }
        }
    }
}

struct Variant {
    name: String,
    sequential: Caller,
    concurrent: Vec<Caller>,
    sequential_took: Vec<Duration>,
    concurrent_took: Vec<Duration>,
}

async fn round(callers: &mut [Caller], calls: usize, first_id: u64) -> Vec<Duration> {
    let tasks = callers
        .iter_mut()
        .enumerate()
        .map(|(n, caller)| async move {
            let mut took = Vec::with_capacity(calls);
            for k in 0..calls {
                took.push(caller.call(first_id + (n * calls + k) as u64).await);
            }
            took
        });
    futures_join_all(tasks)
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// Every future of `futures`, run at once on this task; their outputs.
async fn futures_join_all<F: std::future::Future>(
    futures: impl Iterator<Item = F>,
) -> Vec<F::Output> {
    let mut set = Vec::new();
    for future in futures {
        set.push(Box::pin(future));
    }
    let mut outputs: Vec<Option<F::Output>> = set.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, output) in set.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(value) => *output = Some(value),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().map(|o| o.expect("ready")).collect()
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The started processes, killed when dropped: at the end, and when a
/// panic unwinds the run, so that none outlives it.
struct Children(Vec<Child>);

impl Drop for Children {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `--serve-rmcp-floor GRPC`: the rmcp floor forwarding to the links
/// service at `GRPC`, its address said on stderr as the gateway says its
/// own, served until the process is killed.
fn serve_rmcp_floor(grpc: SocketAddr) {
    let rt = proto_ai_tools_benches::runtime();
    rt.block_on(async {
        let channel = connect(grpc).await;
        let addr =
            proto_ai_tools_benches::floors::serve_rmcp_floor(Some(channel), String::new(), false)
                .await;
        eprintln!("rmcp floor serving at http://{addr}/mcp");
        std::future::pending::<()>().await;
    });
}

/// An OTLP/gRPC trace collector that counts the spans it is sent.
struct TraceSink(Arc<AtomicU64>);

#[tonic::async_trait]
impl TraceService for TraceSink {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let spans: usize = request
            .get_ref()
            .resource_spans
            .iter()
            .flat_map(|resource| &resource.scope_spans)
            .map(|scope| scope.spans.len())
            .sum();
        self.0.fetch_add(spans as u64, Ordering::Relaxed);
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

/// Serves a [`TraceSink`] on loopback; its address and its count.
async fn serve_trace_sink() -> (SocketAddr, Arc<AtomicU64>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let spans = Arc::new(AtomicU64::new(0));
    let server = tonic::transport::Server::builder()
        .add_service(TraceServiceServer::new(TraceSink(spans.clone())));
    let incoming = tonic::transport::server::TcpIncoming::from(listener);
    tokio::spawn(async move {
        let _ = server.serve_with_incoming(incoming).await;
    });
    (addr, spans)
}

fn main() {
    let mut args = std::env::args().skip(1);
    if args.next().as_deref() == Some("--serve-rmcp-floor") {
        let grpc = args
            .next()
            .and_then(|addr| addr.parse().ok())
            .expect("--serve-rmcp-floor takes GRPC, an address");
        return serve_rmcp_floor(grpc);
    }
    let mut options = options();
    let rt = proto_ai_tools_benches::runtime();
    rt.block_on(async {
        let grpc = serve_grpc(LinksBackend::with_links(5)).await;
        let sink = if options.otlp_sink {
            let (addr, spans) = serve_trace_sink().await;
            for (_, flags) in &mut options.flags {
                for flag in flags.iter_mut() {
                    *flag = flag.replace("{otlp}", &format!("http://{addr}"));
                }
            }
            Some(spans)
        } else {
            None
        };
        let mut children = Children(Vec::new());
        let mut variants = Vec::new();
        let mut concurrent = Vec::new();
        for _ in 0..options.in_flight {
            concurrent.push(Caller::direct(grpc).await);
        }
        variants.push(Variant {
            name: "direct".to_owned(),
            sequential: Caller::direct(grpc).await,
            concurrent,
            sequential_took: Vec::new(),
            concurrent_took: Vec::new(),
        });
        for (name, path) in &options.binaries {
            let flags = options
                .flags
                .iter()
                .find(|(of, _)| of == name)
                .map(|(_, flags)| flags.as_slice())
                .unwrap_or_default();
            let (child, addr) = start(path, flags, grpc);
            children.0.push(child);
            let mut concurrent = Vec::new();
            for _ in 0..options.in_flight {
                concurrent.push(Caller::mcp(addr, options.stateless).await);
            }
            variants.push(Variant {
                name: name.clone(),
                sequential: Caller::mcp(addr, options.stateless).await,
                concurrent,
                sequential_took: Vec::new(),
                concurrent_took: Vec::new(),
            });
        }
        // Warm up: every connection used.
        let mut next_id = 10;
        for variant in &mut variants {
            round(std::slice::from_mut(&mut variant.sequential), 20, next_id).await;
            round(&mut variant.concurrent, 5, next_id).await;
            next_id += 100_000;
        }
        let count = variants.len();
        let started = Instant::now();
        for r in 0..options.rounds {
            for k in 0..count {
                let variant = &mut variants[(r + k) % count];
                let took = round(
                    std::slice::from_mut(&mut variant.sequential),
                    options.calls,
                    next_id,
                )
                .await;
                variant.sequential_took.extend(took);
                next_id += 100_000;
            }
            for k in 0..count {
                let variant = &mut variants[(r + k) % count];
                let took = round(&mut variant.concurrent, options.calls / 4, next_id).await;
                variant.concurrent_took.extend(took);
                next_id += 100_000;
            }
        }
        println!(
            "gateway-load: {} rounds, {}; per round {} sequential calls and {} x {} in flight per variant; {:.1} s",
            options.rounds,
            if options.stateless {
                "stateless (2026-07-28, single user)"
            } else {
                "a session per connection"
            },
            options.calls,
            options.in_flight,
            options.calls / 4,
            started.elapsed().as_secs_f64()
        );
        println!("gateway-load: | variant | mode | calls | p50 (us) | p99 (us) | p50 / direct |");
        println!("gateway-load: |---|---|---:|---:|---:|---:|");
        let in_flight = format!("{} in flight", options.in_flight);
        for (mode, sequential) in [("sequential", true), (in_flight.as_str(), false)] {
            let mut direct = Duration::ZERO;
            for variant in &mut variants {
                let took = if sequential {
                    &mut variant.sequential_took
                } else {
                    &mut variant.concurrent_took
                };
                took.sort();
                let (p50, p99) = (quantile(took, 0.50), quantile(took, 0.99));
                if variant.name == "direct" {
                    direct = p50;
                }
                println!(
                    "gateway-load: | {} | {mode} | {} | {:.0} | {:.0} | {:.2} |",
                    variant.name,
                    took.len(),
                    us(p50),
                    us(p99),
                    us(p50) / us(direct)
                );
            }
        }
        if let Some(spans) = sink {
            println!(
                "gateway-load: the trace sink received {} spans",
                spans.load(Ordering::Relaxed)
            );
        }
        drop(children);
    });
}
