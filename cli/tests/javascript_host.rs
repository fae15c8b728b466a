//! The `ai-tools` gateway behind a JavaScript MCP host: 64-bit integers reach
//! the gRPC service exactly under the default host profile, and the exact
//! profile visibly does not survive such a host.
//!
//! A host written in JavaScript parses the model's tool-call arguments with
//! `JSON.parse`, whose numbers are doubles, so `9007199254740993` becomes
//! `…992` before any MCP server sees it. The stand-in host is
//! `tests/node/javascript_host.mjs`: the official TypeScript MCP SDK's
//! `Client` over `StdioClientTransport`, starting the real `ai-tools` binary
//! (`ai-tools mcp --proto tests/proto/integers/v1/integers.proto --service
//! integers.v1.IntegersService --stdio`) in front of a tonic server on
//! loopback that answers each call with the bytes it received, and keeps
//! them. The script
//!
//! - lists the tools and checks that, under the default (javascript)
//!   profile, every int64/uint64/sint64/fixed64/sfixed64 field (top level,
//!   repeated, map key, nested, recursive) is a string with the digits
//!   pattern and that the listing has no `$ref`/`$defs`;
//! - `JSON.parse`s a model's text holding values no double holds
//!   (`"9007199254740993"`, `"18446744073709551615"`, …), checks the
//!   arguments against the listed `inputSchema` with the SDK's own ajv
//!   validator (the SDK's client does not validate arguments itself), calls
//!   the tool and compares the echo;
//! - sends the same int64 as a bare number (parsed to `…992`) and expects a
//!   tool error asking for a string of digits, not a rounded call;
//! - as a control that shows the harness can fail, starts the gateway with
//!   `--host-profile exact`, whose schema says `integer`, and expects the
//!   bare number to arrive rounded.
//!
//! This test then decodes the bytes the service received, independently of
//! the gateway's output, and checks the same values on the wire: the exact
//! ones for the digits, no call at all for the refused number, `…992` for
//! the exact-profile control.
//!
//! A second host, `tests/node/stateless_host.mjs`, is the TypeScript MCP
//! client of the next generation (`@modelcontextprotocol/client`, which
//! speaks protocol 2026-07-28) over streamable HTTP to the gateway started
//! with `--alias-scope-header x-principal`: no `initialize`, no session,
//! the caller named by that header on every request. Aliases that `alice`'s
//! results give out resolve in a later client of hers and never for `bob`,
//! and a request without the header is refused, naming it.
//!
//! Needs Node.js 20 or later (`node`, or `AI_TOOLS_NODE`) and the packages
//! installed in `tests/node` (`npm ci` there; the versions are pinned in
//! `tests/node/package.json` and `package-lock.json`). `.ci/run` installs
//! them and sets `AI_TOOLS_REQUIRE_NODE=1`, which turns a missing `node` or
//! package into a failure; without it a test says why and passes.

// An integration test: its helpers are not `#[test]` functions, so
// `clippy.toml`'s `allow-*-in-tests` does not reach them, and they fail
// the test by panicking as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::convert::Infallible;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use proto_ai_tools::prost_reflect::bytes::{Buf, BufMut, Bytes};
use proto_ai_tools::prost_reflect::{DescriptorPool, DynamicMessage, MapKey, Value};
use proto_ai_tools_tests::support::{node_at_least, node_required};
use tonic::body::Body;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::codegen::{BoxFuture, Service, StdError, http};
use tonic::server::{Grpc, NamedService, UnaryService};
use tonic::{Request, Response, Status};

use support::{links_server, start_gateway, workspace};

/// A script's time limit: the integers one starts the gateway three times
/// and makes four calls, the stateless one makes a dozen requests.
const LIMIT: Duration = Duration::from_secs(60);

/// The oldest Node.js the locked SDK and its dependencies support
/// (`engines` in `tests/node/package.json`).
const NODE_MIN: u32 = 20;

const SERVICE: &str = "integers.v1.IntegersService";
const ECHO_PATH: &str = "/integers.v1.IntegersService/Echo";
const PROTO: &str = "tests/proto/integers/v1/integers.proto";

fn node_dir() -> PathBuf {
    workspace().join("tests/node")
}

/// A `node` of version 20 or later with `package` installed in `tests/node`
/// at the version `tests/node/package.json` pins, or why not.
fn node(package: &str) -> Result<PathBuf, String> {
    let node = node_at_least(NODE_MIN)?;
    let read_json = |path: PathBuf| -> Result<serde_json::Value, String> {
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    };
    let pinned = read_json(node_dir().join("package.json"))?["dependencies"][package]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("tests/node/package.json pins no {package}"))?;
    let installed = read_json(
        node_dir()
            .join("node_modules")
            .join(package)
            .join("package.json"),
    )
    .map_err(|e| format!("{package} is not installed (run `npm ci` in tests/node): {e}"))?;
    let installed = installed["version"].as_str().unwrap_or("?");
    if installed != pinned {
        return Err(format!(
            "tests/node has {package} {installed}, not the pinned {pinned} (run `npm ci` in tests/node)"
        ));
    }
    Ok(node)
}

/// [`node`] with `package`, or `None` after saying why the test is skipped;
/// a panic instead when `AI_TOOLS_REQUIRE_NODE` is set.
fn node_or_skip(package: &str) -> Option<PathBuf> {
    match node(package) {
        Ok(node) => Some(node),
        Err(reason) if !node_required() => {
            // Past the harness's capture of `eprintln!`, so a skip is seen.
            use std::io::Write;
            let _ = writeln!(std::io::stderr().lock(), "SKIPPED: {reason}");
            None
        }
        Err(reason) => panic!("AI_TOOLS_REQUIRE_NODE is set: {reason}"),
    }
}

/// Passes bytes through untouched, both ways.
#[derive(Debug, Clone, Copy, Default)]
struct Raw;

impl Codec for Raw {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = Raw;
    type Decoder = Raw;

    fn encoder(&mut self) -> Raw {
        Raw
    }

    fn decoder(&mut self) -> Raw {
        Raw
    }
}

impl Encoder for Raw {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put(item);
        Ok(())
    }
}

impl Decoder for Raw {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

/// `integers.v1.IntegersService`: `Echo` answers with the very bytes of the
/// request (its response type is its request type) and keeps them.
#[derive(Debug, Clone, Default)]
struct EchoService {
    received: Arc<Mutex<Vec<Bytes>>>,
}

impl NamedService for EchoService {
    const NAME: &'static str = SERVICE;
}

impl UnaryService<Bytes> for EchoService {
    type Response = Bytes;
    type Future = BoxFuture<Response<Bytes>, Status>;

    fn call(&mut self, request: Request<Bytes>) -> Self::Future {
        let bytes = request.into_inner();
        self.received
            .lock()
            .expect("not poisoned")
            .push(bytes.clone());
        Box::pin(async move { Ok(Response::new(bytes)) })
    }
}

impl<B> Service<http::Request<B>> for EchoService
where
    B: tonic::codegen::Body + Send + 'static,
    B::Error: Into<StdError> + Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let echo = self.clone();
        Box::pin(async move {
            if request.uri().path() != ECHO_PATH {
                return Ok(Status::unimplemented(request.uri().path().to_owned()).into_http());
            }
            Ok(Grpc::new(Raw).unary(echo, request).await)
        })
    }
}

/// Runs `node tests/node/SCRIPT args…` within [`LIMIT`]; returns its exit
/// status (`None` past the limit) and stdout, printing both streams.
fn run_node(
    node: &Path,
    script: &str,
    args: &[String],
) -> (Option<std::process::ExitStatus>, String) {
    let mut child = Command::new(node)
        .arg(node_dir().join(script))
        .args(args)
        .current_dir(node_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node starts");
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    println!("{out}");
    eprintln!("{err}");
    println!("node ran for {:.1?}", started.elapsed());
    (status, out)
}

/// The requests the service received, decoded, by their `label`.
fn received_by_label(pool: &DescriptorPool, received: &[Bytes]) -> Vec<(String, DynamicMessage)> {
    let message = pool
        .get_message_by_name("integers.v1.Integers")
        .expect("integers.v1.Integers");
    received
        .iter()
        .map(|bytes| {
            let decoded = DynamicMessage::decode(message.clone(), bytes.clone()).expect("decodes");
            let label = decoded
                .get_field_by_name("label")
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            (label, decoded)
        })
        .collect()
}

fn field(message: &DynamicMessage, name: &str) -> Value {
    message
        .get_field_by_name(name)
        .unwrap_or_else(|| panic!("no field {name}"))
        .into_owned()
}

fn message_field(message: &DynamicMessage, name: &str) -> DynamicMessage {
    field(message, name)
        .as_message()
        .unwrap_or_else(|| panic!("{name} is no message"))
        .clone()
}

/// The script finished in time, exited 0, and its summary says no check
/// failed.
fn assert_passed(status: Option<std::process::ExitStatus>, out: &str) {
    let status = status.unwrap_or_else(|| panic!("the script ran past {LIMIT:?}"));
    let summary = out
        .lines()
        .rev()
        .find(|l| l.contains(" passed, "))
        .unwrap_or("no summary");
    assert!(status.success(), "the script failed ({status}): {summary}");
    assert!(summary.ends_with(" 0 failed"), "{summary}");
}

#[test]
fn the_typescript_sdk_as_a_javascript_host_gets_64_bit_integers_through_exactly() {
    let Some(node) = node_or_skip("@modelcontextprotocol/sdk") else {
        return;
    };
    let mut compiler =
        protox::Compiler::new([workspace().join("tests/proto")]).expect("a compiler");
    compiler
        .include_imports(true)
        .open_file("integers/v1/integers.proto")
        .expect("compiles");
    let pool = DescriptorPool::decode(compiler.encode_file_descriptor_set().as_slice())
        .expect("a descriptor pool");

    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let echo = EchoService::default();
    let router = tonic::transport::Server::builder().add_service(echo.clone());
    let server = runtime
        .block_on(proto_ai_tools_tests::serve_router(
            "127.0.0.1:0".parse().expect("an address"),
            router,
        ))
        .expect("the echo server");

    let gateway: Vec<String> = [
        "--",
        env!("CARGO_BIN_EXE_ai-tools"),
        "mcp",
        "--grpc",
        &server.url(),
        "--proto",
        &workspace().join(PROTO).display().to_string(),
        "-I",
        &workspace().join("tests/proto").display().to_string(),
        "--service",
        SERVICE,
        "--stdio",
    ]
    .map(str::to_owned)
    .to_vec();
    let (status, out) = run_node(&node, "javascript_host.mjs", &gateway);
    runtime.block_on(server.stop());

    assert_passed(status, &out);

    // What reached the service, read from the wire, not from the gateway.
    let received = received_by_label(&pool, &echo.received.lock().expect("not poisoned"));
    let labels: Vec<&str> = received.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(
        labels,
        ["digits", "small number", "exact profile"],
        "the calls that reached the service (the refused bare number must not)"
    );
    let digits = &received[0].1;
    assert_eq!(field(digits, "signed"), Value::I64(9_007_199_254_740_993));
    assert_eq!(field(digits, "unsigned"), Value::U64(u64::MAX));
    assert_eq!(field(digits, "zigzag"), Value::I64(i64::MIN));
    assert_eq!(field(digits, "fixed"), Value::U64(u64::MAX));
    assert_eq!(field(digits, "sfixed"), Value::I64(-i64::MAX));
    assert_eq!(
        field(digits, "many"),
        Value::List(vec![
            Value::I64(9_007_199_254_740_993),
            Value::I64(-9_007_199_254_740_995),
            Value::I64(i64::MAX),
        ])
    );
    let by_id = field(digits, "by_id");
    let by_id = by_id.as_map().expect("a map");
    assert_eq!(by_id.len(), 2);
    assert_eq!(
        by_id[&MapKey::I64(i64::MIN)],
        Value::String("lowest".into())
    );
    assert_eq!(
        by_id[&MapKey::I64(9_007_199_254_740_993)],
        Value::String("past 2^53".into())
    );
    let range = message_field(digits, "range");
    assert_eq!(field(&range, "low"), Value::I64(-9_007_199_254_740_993));
    assert_eq!(field(&range, "high"), Value::I64(9_007_199_254_740_993));
    let other = message_field(digits, "other_range");
    assert_eq!(field(&other, "low"), Value::I64(1));
    assert_eq!(field(&other, "high"), Value::I64(i64::MAX - 1));
    let tree = message_field(digits, "tree");
    assert_eq!(field(&tree, "id"), Value::I64(9_007_199_254_740_995));
    let children = field(&tree, "children");
    let children = children.as_list().expect("a list");
    assert_eq!(children.len(), 1);
    let child = children[0].as_message().expect("a message");
    assert_eq!(field(child, "id"), Value::I64(9_007_199_254_740_997));

    let small = &received[1].1;
    assert_eq!(field(small, "signed"), Value::I64(42));
    assert_eq!(field(small, "unsigned"), Value::U64(9_007_199_254_740_991));

    // The control: through the exact profile the host's rounding arrives.
    assert_eq!(
        field(&received[2].1, "signed"),
        Value::I64(9_007_199_254_740_992)
    );
}

/// `tests/node/stateless_host.mjs`: the TypeScript MCP client of the
/// 2026-07-28 generation over streamable HTTP, statelessly, as callers
/// `alice` and `bob` named by `x-principal` (what a trusted front proxy
/// sets): a caller's aliases resolve across client instances and never for
/// the other caller, and a request without the header is refused.
#[test]
fn the_typescript_client_speaks_2026_07_28_a_callers_aliases_across_clients_never_anothers() {
    let Some(node) = node_or_skip("@modelcontextprotocol/client") else {
        return;
    };
    let (runtime, server) = links_server();
    let gateway = start_gateway(&server.url(), &["--alias-scope-header", "x-principal"]);
    let url = format!("http://{}/mcp", gateway.addr);
    let (status, out) = run_node(&node, "stateless_host.mjs", &[url]);
    drop(gateway);
    runtime.block_on(server.shutdown());
    assert_passed(status, &out);
}
