//! Reliability under bad input, faults and load (issue 7): bounds, every gRPC
//! status code, a server that stops and comes back on the same port, a
//! response that does not decode, cancelled calls, tenant isolation on many
//! threads and a 64-conversation stress run. Each test prints its figure
//! (`cargo test --test reliability -- --nocapture`); RELIABILITY.md lists them.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use ai_tools::{
    AliasManager, CallOptions, ExecutorOptions, InProcessTransport, ProtoExecutor, Sessions,
    TonicTransport, Transport,
};
use ai_tools_tests::pb::links_service_server::{LinksService, LinksServiceServer};
use ai_tools_tests::pb::workflow_steps_service_server::WorkflowStepsServiceServer;
use ai_tools_tests::support::{error_text, ok_json};
use ai_tools_tests::{LINKS_POOL, LinksBackend, new_uuid, pb, tools};
use prost_reflect::DynamicMessage;
use serde_json::{Value, json};
use tonic::{Request, Response};

/// A prost message as the `DynamicMessage` of the same proto type.
fn dynamic<M: prost::Message>(message: &M, full_name: &str) -> DynamicMessage {
    let desc = LINKS_POOL
        .get_message_by_name(full_name)
        .expect("message in pool");
    DynamicMessage::decode(desc, message.encode_to_vec().as_slice()).expect("same type")
}

/// Checks the invariants of a manager: per prefix, aliases are `prefix-1..n`
/// without gaps (no snapshot was edited here), each resolves to one UUID, and
/// no UUID has two aliases of one prefix.
fn assert_consistent(aliases: &AliasManager) {
    let snapshot = aliases.snapshot();
    let mut per_prefix: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut seen = HashSet::new();
    for e in &snapshot.entries {
        per_prefix.entry(&e.prefix).or_default().push(&e.alias);
        assert!(
            seen.insert((e.prefix.clone(), e.uuid.clone())),
            "two aliases for one id: {e:?}"
        );
        assert_eq!(aliases.resolve(&e.alias).as_deref(), Some(e.uuid.as_str()));
    }
    for (prefix, list) in per_prefix {
        let expected: Vec<String> = (1..=list.len()).map(|n| format!("{prefix}-{n}")).collect();
        assert_eq!(list, expected, "aliases of {prefix}");
        assert_eq!(snapshot.counters[prefix], list.len() as u64);
    }
}

// ---------------------------------------------------------------------------
// Servers on loopback
// ---------------------------------------------------------------------------

struct Server {
    addr: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}

/// Serves `router` on `addr` (port 0 for any) until stopped.
async fn serve_router(addr: SocketAddr, router: tonic::transport::server::Router) -> Server {
    // The port of a just-stopped server may linger briefly; retry the bind.
    let mut tries = 0;
    let listener = loop {
        match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => break l,
            Err(e) if tries < 50 => {
                tries += 1;
                let _ = e;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => panic!("bind {addr}: {e}"),
        }
    };
    let addr = listener.local_addr().expect("local addr");
    let (stop, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        // Without TCP_NODELAY, Nagle and delayed ACKs stall larger responses by ~40 ms.
        let incoming =
            tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
        let _ = router
            .serve_with_incoming_shutdown(incoming, async {
                let _ = rx.await;
            })
            .await;
    });
    Server { addr, stop, task }
}

async fn serve_links(addr: SocketAddr, backend: LinksBackend) -> Server {
    let router = tonic::transport::Server::builder()
        .add_service(LinksServiceServer::new(backend.clone()))
        .add_service(WorkflowStepsServiceServer::new(backend));
    serve_router(addr, router).await
}

fn tonic_exec(addr: SocketAddr) -> ProtoExecutor<TonicTransport> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .expect("url")
        .connect_lazy();
    ProtoExecutor::new(tools::ALL, &LINKS_POOL, TonicTransport::new(channel))
}

/// `CreateLink` answers normally; `ListLinks` fails with the status code
/// given as `page_size`, its message naming the last link created (by raw
/// UUID, upper case) with a stack trace and a source path appended.
#[derive(Default, Clone)]
struct FaultyLinks {
    last: Arc<Mutex<String>>,
}

#[tonic::async_trait]
impl LinksService for FaultyLinks {
    async fn create_link(
        &self,
        _request: Request<pb::CreateLinkRequest>,
    ) -> Result<Response<pb::CreateLinkResponse>, tonic::Status> {
        let link = pb::Link {
            id: new_uuid(),
            page_theme_id: new_uuid(),
            ..Default::default()
        };
        *self.last.lock().expect("lock") = link.id.clone();
        Ok(Response::new(pb::CreateLinkResponse { link: Some(link) }))
    }

    async fn update_link(
        &self,
        _request: Request<pb::UpdateLinkRequest>,
    ) -> Result<Response<pb::UpdateLinkResponse>, tonic::Status> {
        Err(tonic::Status::unimplemented("not here"))
    }

    async fn list_links(
        &self,
        request: Request<pb::ListLinksRequest>,
    ) -> Result<Response<pb::ListLinksResponse>, tonic::Status> {
        let code = tonic::Code::from_i32(request.get_ref().page_size);
        let last = self.last.lock().expect("lock").to_uppercase();
        Err(tonic::Status::new(
            code,
            format!(
                "injected fault for link {last}: panicked at /home/svc/src/links/handler.rs:42:7\nstack backtrace:\n   0: links::handler\n             at ./src/handler.rs:42"
            ),
        ))
    }
}

#[tokio::test]
async fn every_grpc_status_code_says_what_happened_and_whether_a_retry_may_help() {
    let backend = FaultyLinks::default();
    let router = tonic::transport::Server::builder().add_service(LinksServiceServer::new(backend));
    let server = serve_router("127.0.0.1:0".parse().expect("addr"), router).await;
    let exec = tonic_exec(server.addr);
    ok_json(
        &exec
            .execute("links_create", r#"{"destination":"https://x"}"#)
            .await,
    );

    let mut texts = Vec::new();
    for n in 1..=16 {
        let code = ai_tools::Code::from_i32(n);
        let args = json!({ "page_size": n }).to_string();
        let result = exec.execute("links_list", &args).await;
        let text = error_text(&result).to_owned();
        assert!(text.contains(code.name()), "{code}: {text}");
        assert!(
            text.contains(&format!("injected fault for link link-{n}:")),
            "{code}: the message is passed on, its id aliased: {text}"
        );
        assert!(
            text.contains("retry") || text.contains("try again"),
            "{code}: does not say whether to retry: {text}"
        );
        for leak in ["/home", "handler.rs", "backtrace", "\n"] {
            assert!(!text.contains(leak), "{code}: leaks `{leak}`: {text}");
        }
        let last = exec
            .alias_manager()
            .resolve(&format!("link-{n}"))
            .expect("the last link");
        assert!(
            !text.to_lowercase().contains(&last),
            "{code}: raw UUID: {text}"
        );
        texts.push(text);
        // the conversation continues after every failure
        ok_json(
            &exec
                .execute("links_create", r#"{"destination":"https://x"}"#)
                .await,
        );
    }
    let distinct: HashSet<_> = texts.iter().collect();
    assert_eq!(distinct.len(), 16);
    println!("figure: 16 status codes, each an actionable error, conversation continued");
    server.stop().await;
}

#[tokio::test]
async fn a_server_that_stops_mid_conversation_and_comes_back_on_the_same_port() {
    let backend = LinksBackend::with_links(0);
    let server = serve_links("127.0.0.1:0".parse().expect("addr"), backend.clone()).await;
    let addr = server.addr;
    let exec = tonic_exec(addr);
    ok_json(
        &exec
            .execute("links_create", r#"{"destination":"https://a"}"#)
            .await,
    );
    server.stop().await;

    for _ in 0..3 {
        let started = Instant::now();
        let text = error_text(
            &exec
                .execute("links_update", r#"{"link_id":"link-1","name":"x"}"#)
                .await,
        )
        .to_owned();
        assert!(
            text.contains("UNAVAILABLE") && text.contains("try again later"),
            "{text}"
        );
        assert!(started.elapsed() < Duration::from_secs(5), "hung");
        assert!(!text.contains("/home") && !text.contains(".rs:"), "{text}");
    }
    assert_eq!(exec.alias_manager().len(), 2, "aliases survive the outage");

    let server = serve_links(addr, backend.clone()).await;
    assert_eq!(server.addr, addr);
    // the same channel reconnects; link-1 still means the same link
    let mut out = None;
    for _ in 0..50 {
        let r = exec
            .execute("links_update", r#"{"link_id":"link-1","name":"back"}"#)
            .await;
        if !r.is_error {
            out = Some(ok_json(&r));
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let out = out.expect("the conversation continues once the server is back");
    assert_eq!(out["link"]["id"], "link-1");
    assert_eq!(backend.links()[0].name, "back");
    let out = ok_json(
        &exec
            .execute("links_create", r#"{"destination":"https://b"}"#)
            .await,
    );
    assert_eq!(out["link"]["id"], "link-2");
    server.stop().await;
}

#[tokio::test]
async fn a_server_that_never_listened_is_unavailable() {
    // a port that was free a moment ago
    let addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr")
    };
    let exec = tonic_exec(addr);
    let text = error_text(&exec.execute("links_list", "{}").await).to_owned();
    assert!(
        text.contains("UNAVAILABLE") && text.contains("a retry may help"),
        "{text}"
    );
}

#[tokio::test]
async fn a_user_set_timeout_bounds_every_call_and_the_conversation_continues() {
    let backend = LinksBackend::with_links(1);
    let server = serve_links("127.0.0.1:0".parse().expect("addr"), backend.clone()).await;
    let mut options = ExecutorOptions::default();
    options.call = CallOptions::new().timeout(Duration::from_millis(100));
    let exec = tonic_exec(server.addr).with_options(options);
    ok_json(&exec.execute("links_list", "{}").await);

    backend.set_delay(Duration::from_secs(3));
    let started = Instant::now();
    let text = error_text(&exec.execute("links_list", "{}").await).to_owned();
    let took = started.elapsed();
    assert!(
        text.contains("DEADLINE_EXCEEDED") && text.contains("try again later"),
        "{text}"
    );
    assert!(
        took < Duration::from_secs(1),
        "the timeout was not kept: {took:?}"
    );
    // a longer per-call timeout overrides the default
    backend.set_delay(Duration::from_millis(150));
    let long = CallOptions::new().timeout(Duration::from_secs(5));
    let out = ok_json(&exec.execute_with("links_list", "{}", &long).await);
    assert_eq!(out["links"][0]["id"], "link-1");
    println!("figure: 100 ms user timeout held, call returned after {took:?}");
    server.stop().await;
}

// A service that answers every call of one path with bytes that are not its
// response type.
#[derive(Clone)]
struct Garbage(&'static [u8]);

struct RawCodec;
struct RawEncoder;
struct RawDecoder;

impl tonic::codec::Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = RawEncoder;
    type Decoder = RawDecoder;
    fn encoder(&mut self) -> RawEncoder {
        RawEncoder
    }
    fn decoder(&mut self) -> RawDecoder {
        RawDecoder
    }
}

impl tonic::codec::Encoder for RawEncoder {
    type Item = Vec<u8>;
    type Error = tonic::Status;
    fn encode(
        &mut self,
        item: Vec<u8>,
        buf: &mut tonic::codec::EncodeBuf<'_>,
    ) -> Result<(), tonic::Status> {
        use prost::bytes::BufMut as _;
        buf.put_slice(&item);
        Ok(())
    }
}

impl tonic::codec::Decoder for RawDecoder {
    type Item = Vec<u8>;
    type Error = tonic::Status;
    fn decode(
        &mut self,
        buf: &mut tonic::codec::DecodeBuf<'_>,
    ) -> Result<Option<Vec<u8>>, tonic::Status> {
        use prost::bytes::Buf as _;
        Ok(Some(buf.copy_to_bytes(buf.remaining()).to_vec()))
    }
}

struct GarbageUnary(&'static [u8]);

impl tonic::server::UnaryService<Vec<u8>> for GarbageUnary {
    type Response = Vec<u8>;
    type Future = std::future::Ready<Result<Response<Vec<u8>>, tonic::Status>>;
    fn call(&mut self, _request: Request<Vec<u8>>) -> Self::Future {
        std::future::ready(Ok(Response::new(self.0.to_vec())))
    }
}

impl<B> tonic::codegen::Service<tonic::codegen::http::Request<B>> for Garbage
where
    B: tonic::codegen::Body + Send + 'static,
    B::Error: Into<tonic::codegen::StdError> + Send + 'static,
{
    type Response = tonic::codegen::http::Response<tonic::body::Body>;
    type Error = std::convert::Infallible;
    type Future = tonic::codegen::BoxFuture<Self::Response, Self::Error>;
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }
    fn call(&mut self, request: tonic::codegen::http::Request<B>) -> Self::Future {
        let bytes = self.0;
        Box::pin(async move {
            let mut grpc = tonic::server::Grpc::new(RawCodec);
            Ok(grpc.unary(GarbageUnary(bytes), request).await)
        })
    }
}

impl tonic::server::NamedService for Garbage {
    const NAME: &'static str = "links.v1.LinksService";
}

#[tokio::test]
async fn a_response_that_does_not_decode_is_an_error_and_registers_nothing() {
    // field 1 (`links`/`link`, a message) sent with wire type 0, then a truncated varint
    static BAD: &[u8] = &[0x08, 0xff, 0xff];
    let router = tonic::transport::Server::builder().add_service(Garbage(BAD));
    let server = serve_router("127.0.0.1:0".parse().expect("addr"), router).await;
    let exec = tonic_exec(server.addr);
    for (tool, expected) in [
        ("links_list", "links.v1.ListLinksResponse"),
        ("links_create", "links.v1.CreateLinkResponse"),
    ] {
        let args = r#"{"destination":"https://x"}"#;
        let args = if tool == "links_list" { "{}" } else { args };
        let text = error_text(&exec.execute(tool, args).await).to_owned();
        assert!(
            text.contains("INTERNAL")
                && text.contains("does not decode")
                && text.contains(expected),
            "{text}"
        );
        assert!(text.contains("retry is unlikely to help"), "{text}");
    }
    assert!(exec.alias_manager().is_empty());
    server.stop().await;
}

#[tokio::test]
async fn a_cancelled_call_leaves_the_alias_state_consistent() {
    // over loopback: drop the future while the server holds the call
    let backend = LinksBackend::with_links(2);
    let server = serve_links("127.0.0.1:0".parse().expect("addr"), backend.clone()).await;
    let exec = tonic_exec(server.addr);
    ok_json(&exec.execute("links_list", "{}").await);
    let before = exec.alias_manager().snapshot();
    backend.set_delay(Duration::from_millis(300));
    let dropped = tokio::time::timeout(
        Duration::from_millis(50),
        exec.execute("links_create", r#"{"destination":"https://c"}"#),
    )
    .await;
    assert!(dropped.is_err(), "the call finished before it was dropped");
    assert_eq!(exec.alias_manager().snapshot(), before);
    // tonic cancels the handler when the client resets the stream; had the
    // server finished it, the next listing would register the new link once
    tokio::time::sleep(Duration::from_millis(400)).await;
    backend.set_delay(Duration::ZERO);
    let out = ok_json(&exec.execute("links_list", "{}").await);
    let listed = out["links"].as_array().map_or(0, Vec::len);
    assert!(listed == 2 || listed == 3, "{out}");
    // newest first: a link the cancelled call made would be new, link-3
    let newest = if listed == 3 { "link-3" } else { "link-1" };
    assert_eq!(out["links"][0]["id"], newest);
    assert_consistent(exec.alias_manager());
    assert_eq!(exec.alias_manager().len(), listed * 2);
    server.stop().await;

    // in process: cancel at every point of a call, 2,000 times, racing the registration
    let counter = Arc::new(AtomicUsize::new(0));
    let c = counter.clone();
    let transport =
        InProcessTransport::new().with_handler("/links.v1.LinksService/ListLinks", move |_, _| {
            let n = c.fetch_add(1, Ordering::Relaxed);
            async move {
                for _ in 0..(n % 4) {
                    tokio::task::yield_now().await;
                }
                let links = (0..3)
                    .map(|_| pb::Link {
                        id: new_uuid(),
                        page_theme_id: new_uuid(),
                        ..Default::default()
                    })
                    .collect();
                Ok(dynamic(
                    &pb::ListLinksResponse { links },
                    "links.v1.ListLinksResponse",
                ))
            }
        });
    let exec = ProtoExecutor::new(tools::ALL, &LINKS_POOL, transport);
    let mut completed = 0usize;
    for i in 0..2_000usize {
        let call = exec.execute("links_list", "{}");
        let mut call = std::pin::pin!(call);
        // poll a few times, then drop the future mid-flight
        let polls = i % 6;
        let mut done = false;
        for _ in 0..polls {
            let waker = std::task::Waker::noop();
            if let Poll::Ready(r) = call.as_mut().poll(&mut Context::from_waker(waker)) {
                ok_json(&r);
                done = true;
                break;
            }
        }
        completed += usize::from(done);
        if i % 100 == 0 {
            assert_consistent(exec.alias_manager());
        }
    }
    assert_consistent(exec.alias_manager());
    assert_eq!(
        exec.alias_manager().len(),
        completed * 6,
        "3 links, 2 ids each"
    );
    println!(
        "figure: 2,000 in-process calls dropped at poll 0-5, {completed} completed, state consistent"
    );
}

use std::future::Future as _;

// ---------------------------------------------------------------------------
// Bounds
// ---------------------------------------------------------------------------

fn counting_transport() -> (InProcessTransport, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let transport =
        InProcessTransport::new().with_handler("/links.v1.LinksService/CreateLink", move |_, _| {
            c.fetch_add(1, Ordering::Relaxed);
            async move {
                let link = pb::Link {
                    id: new_uuid(),
                    page_theme_id: new_uuid(),
                    ..Default::default()
                };
                Ok(dynamic(
                    &pb::CreateLinkResponse { link: Some(link) },
                    "links.v1.CreateLinkResponse",
                ))
            }
        });
    (transport, calls)
}

#[tokio::test]
async fn each_bound_gives_a_clear_error_before_any_call() {
    let (transport, calls) = counting_transport();
    let exec = ProtoExecutor::new(tools::ALL, &LINKS_POOL, transport);
    let o = ExecutorOptions::default();
    let cases: Vec<(String, String)> = vec![
        (
            json!({"destination": "x".repeat(o.max_argument_bytes)}).to_string(),
            format!("more than the limit of {}", o.max_argument_bytes),
        ),
        (
            format!(
                r#"{{"destination":"https://x","tags":{}1{}}}"#,
                "[".repeat(40),
                "]".repeat(40)
            ),
            "nested deeper than 32 levels".to_owned(),
        ),
        (
            // deeper than serde_json's own limit of 128: still our message
            format!(r#"{{"tags":{}{}}}"#, "[".repeat(5000), "]".repeat(5000)),
            "nested deeper than 32 levels".to_owned(),
        ),
        (
            json!({"destination": "https://x", "name": "n".repeat(o.max_string_bytes + 1)})
                .to_string(),
            format!(
                "`name` is a string of {} bytes, more than the limit of {}",
                o.max_string_bytes + 1,
                o.max_string_bytes
            ),
        ),
        (
            json!({"destination": "https://x", "tags": vec!["t"; o.max_array_items + 1]})
                .to_string(),
            format!(
                "`tags` has {} items, more than the limit of {}",
                o.max_array_items + 1,
                o.max_array_items
            ),
        ),
        (
            json!({ "k".repeat(o.max_string_bytes + 1): 1 }).to_string(),
            "a key of 65537 bytes".to_owned(),
        ),
    ];
    for (args, expected) in &cases {
        let text = error_text(&exec.execute("links_create", args).await).to_owned();
        assert!(text.contains(expected), "{expected}: {text}");
        assert!(text.len() < 4_200, "error text of {} bytes", text.len());
    }
    // the same bounds hold for already-parsed arguments
    let text = error_text(
        &exec
            .execute_value("links_create", json!({"tags": vec!["t"; 1001]}))
            .await,
    )
    .to_owned();
    assert!(text.contains("`tags` has 1001 items"), "{text}");
    assert_eq!(calls.load(Ordering::Relaxed), 0, "the service was called");

    // just under every bound is accepted
    let fits = json!({
        "destination": "https://x",
        "name": "n".repeat(o.max_string_bytes),
        "tags": vec!["t"; o.max_array_items],
    });
    ok_json(&exec.execute("links_create", &fits.to_string()).await);
    assert_eq!(calls.load(Ordering::Relaxed), 1);
}

#[tokio::test]
async fn echoed_values_are_bounded_and_never_a_raw_uuid() {
    let (transport, _) = counting_transport();
    let exec = ProtoExecutor::new(tools::ALL, &LINKS_POOL, transport);
    ok_json(
        &exec
            .execute("links_create", r#"{"destination":"https://x"}"#)
            .await,
    );
    let long = "z".repeat(10_000);
    let many: serde_json::Map<String, Value> = (0..500)
        .map(|i| (format!("bogus_{i}_{}", &long[..80]), json!(1)))
        .collect();
    let results = [
        exec.execute("links_update", &json!({ "link_id": long }).to_string())
            .await,
        exec.execute(&long, "{}").await,
        exec.execute("links_create", &Value::Object(many).to_string())
            .await,
    ];
    for r in &results {
        let text = error_text(r);
        assert!(text.len() < 4_200, "{} bytes", text.len());
        assert!(!text.contains(&"z".repeat(70)), "echoes the whole value");
    }
    assert!(
        results[2].output.contains("(and 490 more)"),
        "{}",
        results[2].output
    );
}

#[tokio::test]
async fn at_the_alias_limit_the_model_gets_an_error_and_nothing_is_half_registered() {
    let backend = LinksBackend::with_links(3);
    let server = serve_links("127.0.0.1:0".parse().expect("addr"), backend).await;
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{}", server.addr))
        .expect("url")
        .connect_lazy();
    let sessions =
        Sessions::new(TonicTransport::new(channel), Duration::from_secs(60)).with_alias_limit(5);
    let aliases = sessions.alias_manager("c");
    let exec = ProtoExecutor::with_alias_manager(
        tools::ALL,
        &LINKS_POOL,
        sessions.transport().clone(),
        aliases.clone(),
    );
    // three links carry six ids: over the limit of five, so none is registered
    let text = error_text(&exec.execute("links_list", "{}").await).to_owned();
    assert!(
        text.contains("maximum of 5 ids") && text.contains("tell the user"),
        "{text}"
    );
    assert!(
        aliases.is_empty(),
        "half-registered: {:?}",
        aliases.snapshot()
    );
    // two links (four ids) fit; then the same ones again are no new ids
    let out = ok_json(&exec.execute("links_list", r#"{"page_size":2}"#).await);
    assert_eq!(out["links"][1]["id"], "link-2");
    ok_json(&exec.execute("links_list", r#"{"page_size":2}"#).await);
    assert_eq!(aliases.len(), 4);
    let text = error_text(&exec.execute("links_list", "{}").await).to_owned();
    assert!(text.contains("maximum of 5 ids"), "{text}");
    assert_eq!(aliases.len(), 4);
    assert_consistent(&aliases);
    server.stop().await;
}

// ---------------------------------------------------------------------------
// Sessions: conversations in use
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sessions_never_evict_a_conversation_in_use() {
    let (transport, _) = counting_transport();
    let sessions =
        Arc::new(Sessions::new(transport.clone(), Duration::from_millis(50)).with_capacity(4));
    let mut tasks = Vec::new();
    for c in 0..16 {
        let sessions = sessions.clone();
        tasks.push(tokio::spawn(async move {
            let id = format!("conversation-{c}");
            let exec = ProtoExecutor::with_alias_manager(
                tools::ALL,
                &LINKS_POOL,
                sessions.transport().clone(),
                sessions.alias_manager(&id),
            );
            for _ in 0..20 {
                ok_json(
                    &exec
                        .execute("links_create", r#"{"destination":"https://x"}"#)
                        .await,
                );
                // longer than the TTL between calls, with many other conversations arriving
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            // the namespace the executor holds is still the one Sessions hands out
            let again = sessions.alias_manager(&id);
            assert!(Arc::ptr_eq(exec.alias_manager(), &again), "{id} was split");
            assert_eq!(again.aliases_of("link").len(), 20, "{id} lost aliases");
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
    assert_eq!(sessions.in_use(), 0);
    sessions.alias_manager("newcomer");
    assert!(
        sessions.len() <= 4,
        "{} kept past the capacity",
        sessions.len()
    );
    println!(
        "figure: 16 conversations in use at once, capacity 4, TTL 50 ms: none evicted while in use"
    );
}

// ---------------------------------------------------------------------------
// Isolation and load
// ---------------------------------------------------------------------------

/// An in-process links service that records which conversation (metadata
/// `x-conversation`) each id was made for, and returns the raw link id in
/// `name` (an unaliased field) so that callers can check their alias.
fn recording_transport() -> (InProcessTransport, Arc<Mutex<HashMap<String, String>>>) {
    let owners: Arc<Mutex<HashMap<String, String>>> = Arc::default();
    let o = owners.clone();
    let transport = InProcessTransport::new()
        .with_handler("/links.v1.LinksService/CreateLink", move |_, options| {
            let owner = options
                .metadata
                .iter()
                .find(|(k, _)| k == "x-conversation")
                .map(|(_, v)| v.clone())
                .unwrap_or_default();
            let link = pb::Link {
                id: new_uuid(),
                page_theme_id: new_uuid(),
                ..Default::default()
            };
            {
                let mut owners = o.lock().expect("lock");
                owners.insert(link.id.clone(), owner.clone());
                owners.insert(link.page_theme_id.clone(), owner);
            }
            async move {
                let link = pb::Link {
                    name: link.id.clone(),
                    ..link
                };
                Ok(dynamic(
                    &pb::CreateLinkResponse { link: Some(link) },
                    "links.v1.CreateLinkResponse",
                ))
            }
        })
        .with_handler(
            "/links.v1.LinksService/UpdateLink",
            |request, _| async move {
                let id = request
                    .get_field_by_name("link_id")
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                let link = pb::Link {
                    name: id.clone(),
                    id,
                    ..Default::default()
                };
                Ok(dynamic(
                    &pb::UpdateLinkResponse { link: Some(link) },
                    "links.v1.UpdateLinkResponse",
                ))
            },
        );
    (transport, owners)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn two_tenants_never_resolve_each_others_aliases() {
    const PER_TENANT: usize = 8;
    const ROUNDS: usize = 150;
    let (transport, owners) = recording_transport();
    let sessions = Arc::new(Sessions::new(Arc::new(transport), Duration::from_secs(600)));
    // every id issued, for the other tenant to try
    let issued: Arc<Mutex<HashMap<&'static str, Vec<String>>>> = Arc::default();
    let calls = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for tenant in ["acme", "globex"] {
        for c in 0..PER_TENANT {
            let (sessions, issued, calls) = (sessions.clone(), issued.clone(), calls.clone());
            tasks.push(tokio::spawn(async move {
                let id = format!("{tenant}/{c}");
                let exec = ProtoExecutor::with_alias_manager(
                    tools::ALL,
                    &LINKS_POOL,
                    sessions.transport().clone(),
                    sessions.alias_manager(&id),
                );
                let options = CallOptions::new().metadata("x-conversation", id.clone());
                let other = if tenant == "acme" { "globex" } else { "acme" };
                for round in 0..ROUNDS {
                    let out = ok_json(
                        &exec
                            .execute_with(
                                "links_create",
                                r#"{"destination":"https://x"}"#,
                                &options,
                            )
                            .await,
                    );
                    let raw = out["link"]["name"].as_str().expect("raw id").to_owned();
                    assert_eq!(out["link"]["id"], format!("link-{}", round + 1));
                    issued
                        .lock()
                        .expect("lock")
                        .entry(tenant)
                        .or_default()
                        .push(raw);
                    // use an alias of our own: it reaches the service as our id
                    let alias = format!("link-{}", round / 2 + 1);
                    let out = ok_json(
                        &exec
                            .execute_with(
                                "links_update",
                                &json!({"link_id": alias}).to_string(),
                                &options,
                            )
                            .await,
                    );
                    assert_eq!(out["link"]["id"], alias);
                    // try an id of the other tenant, raw: refused before any call
                    let theirs = issued
                        .lock()
                        .expect("lock")
                        .get(other)
                        .and_then(|v| v.get(round).cloned());
                    if let Some(theirs) = theirs {
                        let r = exec
                            .execute_with(
                                "links_update",
                                &json!({"link_id": theirs}).to_string(),
                                &options,
                            )
                            .await;
                        assert!(error_text(&r).contains("never seen"), "{}", r.output);
                        assert!(exec.alias_manager().alias_for(&theirs).is_none());
                    }
                    calls.fetch_add(3, Ordering::Relaxed);
                    if round % 16 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
            }));
        }
    }
    for t in tasks {
        t.await.expect("task");
    }
    // every alias of every conversation resolves to an id made for that conversation only
    let owners = owners.lock().expect("lock");
    for tenant in ["acme", "globex"] {
        for c in 0..PER_TENANT {
            let id = format!("{tenant}/{c}");
            let aliases = sessions.alias_manager(&id);
            assert_eq!(aliases.len(), ROUNDS * 2);
            for entry in aliases.snapshot().entries {
                assert_eq!(owners.get(&entry.uuid), Some(&id), "{entry:?}");
            }
        }
    }
    let issued = issued.lock().expect("lock");
    for (tenant, other) in [("acme", "globex"), ("globex", "acme")] {
        for c in 0..PER_TENANT {
            let mine = sessions.alias_manager(&format!("{tenant}/{c}"));
            for theirs in &issued[other] {
                assert!(
                    mine.alias_for(theirs).is_none(),
                    "{tenant}/{c} knows {theirs}"
                );
            }
        }
    }
    let n = calls.load(Ordering::Relaxed);
    assert!(n >= 2 * PER_TENANT * ROUNDS * 2);
    println!(
        "figure: 2 tenants x {PER_TENANT} conversations, {n} interleaved calls on 8 threads, 0 cross-resolutions"
    );
}

/// Runs `conversations` × `calls` creates through one shared transport; checks
/// that every alias issued resolves afterwards in its own conversation, none
/// lost, none duplicated. Returns calls per second.
async fn stress<T: Transport + Clone>(
    transport: T,
    conversations: usize,
    calls: usize,
    raw_of: impl Fn(&Value) -> String,
) -> f64 {
    let sessions = Arc::new(Sessions::new(transport, Duration::from_secs(600)));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..conversations {
        let sessions = sessions.clone();
        tasks.push(tokio::spawn(async move {
            let id = format!("conversation-{c}");
            let exec = ProtoExecutor::with_alias_manager(
                tools::ALL,
                &LINKS_POOL,
                sessions.transport().clone(),
                sessions.alias_manager(&id),
            );
            let options = CallOptions::new().metadata("x-conversation", id.clone());
            let mut seen = Vec::with_capacity(calls);
            for n in 0..calls {
                let args = json!({"destination": "https://x", "name": format!("{id}/{n}")});
                let out = ok_json(
                    &exec
                        .execute_with("links_create", &args.to_string(), &options)
                        .await,
                );
                let alias = out["link"]["id"].as_str().expect("alias").to_owned();
                seen.push((alias, out["link"].clone()));
            }
            (id, seen)
        }));
    }
    let mut results = Vec::new();
    for t in tasks {
        results.push(t.await.expect("task"));
    }
    let elapsed = started.elapsed();
    let mut all_ids = HashSet::new();
    for (id, seen) in results {
        let aliases = sessions.alias_manager(&id);
        let expected: Vec<String> = (1..=calls).map(|n| format!("link-{n}")).collect();
        let got: Vec<&str> = seen.iter().map(|(a, _)| a.as_str()).collect();
        assert_eq!(got, expected, "{id}: aliases lost or duplicated");
        for (alias, link) in &seen {
            let raw = raw_of(link);
            assert_eq!(
                aliases.resolve(alias).as_deref(),
                Some(raw.as_str()),
                "{id} {alias}"
            );
            assert!(all_ids.insert(raw.clone()), "{raw} issued twice");
            assert_eq!(raw.len(), 36, "{id} {alias}: no raw id");
        }
        assert_eq!(aliases.len(), calls * 2, "{id}");
        assert_consistent(&aliases);
    }
    let total = conversations * calls;
    total as f64 / elapsed.as_secs_f64()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stress_64_conversations_by_1000_calls_in_process() {
    let (transport, _) = recording_transport();
    let per_second = stress(Arc::new(transport), 64, 1_000, |link| {
        link["name"].as_str().unwrap_or_default().to_owned()
    })
    .await;
    println!("figure: 64 x 1,000 calls in process through one transport: {per_second:.0} calls/s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stress_64_conversations_by_50_calls_over_loopback_tonic() {
    let backend = LinksBackend::with_links(0);
    let server = serve_links("127.0.0.1:0".parse().expect("addr"), backend.clone()).await;
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{}", server.addr))
        .expect("url")
        .connect_lazy();
    // the backend keeps the name we sent; map it back to the raw id afterwards
    let names: Arc<Mutex<HashMap<String, String>>> = Arc::default();
    let per_second = {
        let names = names.clone();
        let backend = backend.clone();
        stress(TonicTransport::new(channel), 64, 50, move |link| {
            let name = link["name"].as_str().unwrap_or_default();
            let mut names = names.lock().expect("lock");
            if !names.contains_key(name) {
                for l in backend.links() {
                    names.insert(l.name.clone(), l.id.clone());
                }
            }
            names.get(name).cloned().unwrap_or_default()
        })
        .await
    };
    assert_eq!(backend.links().len(), 3_200);
    println!(
        "figure: 64 x 50 calls over loopback tonic through one channel: {per_second:.0} calls/s"
    );
    server.stop().await;
}

// ---------------------------------------------------------------------------
// Fuzz inputs as regression tests
// ---------------------------------------------------------------------------

/// Replays the fuzz seeds and kept crash inputs (`fuzz/seeds/TARGET/`)
/// through the same invariants as the fuzz targets, in every `cargo test`.
#[tokio::test]
async fn fuzz_seeds_and_crash_inputs_replay_cleanly() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds");
    let read = |target: &str| -> Vec<Vec<u8>> {
        let mut files: Vec<_> = std::fs::read_dir(root.join(target))
            .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        files.iter().filter_map(|p| std::fs::read(p).ok()).collect()
    };
    let (transport, _) = recording_transport();
    let inbound = read("inbound");
    assert!(!inbound.is_empty(), "no seeds under {}", root.display());
    for data in &inbound {
        let Some((&selector, rest)) = data.split_first() else {
            continue;
        };
        let exec = ProtoExecutor::new(tools::ALL, &LINKS_POOL, transport.clone());
        exec.alias_manager()
            .register("link", &new_uuid())
            .expect("uuid");
        let tool = tools::ALL[usize::from(selector) % tools::ALL.len()].name;
        let r = exec.execute(tool, &String::from_utf8_lossy(rest)).await;
        assert!(r.is_error || serde_json::from_str::<Value>(&r.output).is_ok());
        assert!(r.output.len() <= 4_100);
    }
    for data in read("aliases") {
        let text = String::from_utf8_lossy(&data);
        let aliases = AliasManager::new();
        aliases
            .register("link", "d290f1ee-6c54-4b01-90e6-d701748f0851")
            .expect("uuid");
        let _ = aliases.register_new_uuids("other", &text);
        let _ = aliases.aliasify_text(&text);
        if let Ok(x) = serde_json::from_str::<Value>(&text) {
            let mut y = x.clone();
            aliases.aliasify_json(&mut y);
            aliases.resolve_json(&mut y);
            let mut yy = y.clone();
            aliases.aliasify_json(&mut yy);
            aliases.resolve_json(&mut yy);
            assert_eq!(yy, y, "aliasify/resolve is not stable on {text}");
        }
    }
}
