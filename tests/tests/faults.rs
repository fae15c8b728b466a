//! Faults from the server (issue 7), against a real tonic server on
//! loopback: every gRPC status code, a server that stops and comes back on
//! the same port, a server that never listened, a user-set timeout, a
//! response that does not decode, and calls cancelled mid-flight. Each test
//! prints its figure (`cargo test -p proto-ai-tools-tests --test faults --
//! --nocapture`); RELIABILITY.md lists them.

use std::collections::HashSet;
use std::future::Future as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use proto_ai_tools::{
    CallOptions,
    executor::{ExecutorOptions, ProtoExecutor},
    transport::InProcessTransport,
};
use proto_ai_tools_tests::pb::links_service_server::{LinksService, LinksServiceServer};
use proto_ai_tools_tests::support::{assert_consistent, dynamic, error_text, ok_json, tonic_exec};
use proto_ai_tools_tests::{
    LINKS_POOL, LinksBackend, new_uuid, pb, serve, serve_at, serve_router, tools,
};
use serde_json::json;
use tonic::{Request, Response};

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
    let server = serve_router("127.0.0.1:0".parse().expect("addr"), router)
        .await
        .expect("bind");
    let exec = tonic_exec(server.addr);
    ok_json(
        &exec
            .execute("links_create", r#"{"destination":"https://x"}"#)
            .await,
    );

    let mut texts = Vec::new();
    for n in 1..=16 {
        let code = proto_ai_tools::transport::Code::from_i32(n);
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

/// Each call tells the observer of its options how it ended
/// (`CallOptions::observe`): the outcome, the service's status, and the
/// time in the gRPC call within the whole; nothing sent, no status.
#[tokio::test]
async fn a_call_tells_its_observer_its_outcome_status_and_backend_time() {
    use proto_ai_tools::transport::Code;
    let backend = FaultyLinks::default();
    let router = tonic::transport::Server::builder().add_service(LinksServiceServer::new(backend));
    let server = serve_router("127.0.0.1:0".parse().expect("addr"), router)
        .await
        .expect("bind");
    let exec = tonic_exec(server.addr);
    type Seen = (
        String,
        &'static str,
        Option<Code>,
        Duration,
        Option<Duration>,
    );
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let kept = seen.clone();
    let options = CallOptions::new().observe(move |record| {
        kept.lock().unwrap().push((
            record.tool.to_owned(),
            record.outcome,
            record.grpc_status,
            record.duration,
            record.backend,
        ));
    });
    ok_json(
        &exec
            .execute_with("links_create", r#"{"destination":"https://x"}"#, &options)
            .await,
    );
    let failed = exec
        .execute_with(
            "links_list",
            json!({ "page_size": 5 }).to_string().as_str(),
            &options,
        )
        .await;
    assert!(failed.is_error);
    let refused = exec
        .execute_with("links_create", r#"{"destination":7}"#, &options)
        .await;
    assert!(refused.is_error);

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "{seen:?}");
    let (tool, outcome, status, duration, backend) = &seen[0];
    assert_eq!(
        (tool.as_str(), *outcome, *status),
        ("links_create", "ok", Some(Code::Ok))
    );
    assert!(backend.is_some_and(|b| b <= *duration), "{seen:?}");
    let (tool, outcome, status, duration, backend) = &seen[1];
    assert_eq!(
        (tool.as_str(), *outcome, *status),
        ("links_list", "status", Some(Code::NotFound))
    );
    assert!(backend.is_some_and(|b| b <= *duration), "{seen:?}");
    let (_, outcome, status, _, backend) = &seen[2];
    assert_eq!(
        (*outcome, *status, *backend),
        ("arguments", None, None),
        "{seen:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_server_that_stops_mid_conversation_and_comes_back_on_the_same_port() {
    let backend = LinksBackend::with_links(0);
    let server = serve(backend.clone()).await.expect("bind");
    let addr = server.addr;
    let exec = tonic_exec(addr);
    ok_json(
        &exec
            .execute("links_create", r#"{"destination":"https://a"}"#)
            .await,
    );
    server.shutdown().await;

    for _ in 0..3 {
        let started = Instant::now();
        let text = error_text(
            &exec
                .execute("links_update", r#"{"link_id":"link-1","name":"x"}"#)
                .await,
        )
        .to_owned();
        assert!(
            text.contains("could not reach its service") && text.contains("a retry may help"),
            "{text}"
        );
        assert!(
            !text.contains("127.0.0.1") && !text.contains("os error"),
            "{text}"
        );
        assert!(started.elapsed() < Duration::from_secs(5), "hung");
        assert!(!text.contains("/home") && !text.contains(".rs:"), "{text}");
    }
    assert_eq!(exec.alias_manager().len(), 2, "aliases survive the outage");

    let server = serve_at(addr, backend.clone()).await.expect("bind");
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
    server.shutdown().await;
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
        text.contains("could not reach its service")
            && text.contains("nothing was sent")
            && text.contains("a retry may help"),
        "{text}"
    );
    assert!(
        !text.contains("127.0.0.1") && !text.contains("os error"),
        "{text}"
    );
}

#[tokio::test]
async fn a_user_set_timeout_bounds_every_call_and_the_conversation_continues() {
    let backend = LinksBackend::with_links(1);
    let server = serve(backend.clone()).await.expect("bind");
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
    server.shutdown().await;
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
async fn a_response_that_does_not_decode_is_an_error_that_says_the_call_took_effect_and_registers_nothing()
 {
    // field 1 (`links`/`link`, a message) sent with wire type 0, then a truncated varint
    static BAD: &[u8] = &[0x08, 0xff, 0xff];
    let router = tonic::transport::Server::builder().add_service(Garbage(BAD));
    let server = serve_router("127.0.0.1:0".parse().expect("addr"), router)
        .await
        .expect("bind");
    let exec = tonic_exec(server.addr);
    for (tool, expected) in [
        ("links_list", "links.v1.ListLinksResponse"),
        ("links_create", "links.v1.CreateLinkResponse"),
    ] {
        let args = r#"{"destination":"https://x"}"#;
        let args = if tool == "links_list" { "{}" } else { args };
        let text = error_text(&exec.execute(tool, args).await).to_owned();
        assert!(
            text.starts_with(&format!("{tool} ran and the service answered"))
                && text.contains("does not decode")
                && text.contains(expected),
            "{text}"
        );
        // The service did the work: the model must not be told it failed,
        // nor be invited to send a create again.
        assert!(
            text.contains("the call took effect") && text.contains("do not repeat it"),
            "{text}"
        );
        assert!(!text.contains("INTERNAL"), "{text}");
    }
    assert!(exec.alias_manager().is_empty());
    server.stop().await;
}

#[tokio::test]
async fn a_cancelled_call_leaves_the_alias_state_consistent() {
    // over loopback: drop the future while the server holds the call
    let backend = LinksBackend::with_links(2);
    let server = serve(backend.clone()).await.expect("bind");
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
    server.shutdown().await;

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
