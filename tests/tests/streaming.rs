//! Server-streaming methods as tools, against a real tonic server: the
//! stream is collected into one result within its bounds, every id aliased;
//! the result says when and why it stopped early; stopping cancels the
//! stream at the server; per-call metadata, deadlines and progress reach
//! the call; a stream gives each message decoded or as its bytes, and a
//! message that does not decode ends the collection, keeping what came.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use prost::Message as _;
use prost_reflect::{DynamicMessage, MethodDescriptor};
use proto_ai_tools::{
    CallOptions, Toolkit, Transport,
    executor::ExecutorOptions,
    transport::{BoxFuture, MessageStream, Status, TonicTransport},
};
use proto_ai_tools_tests::feed_pb::{Event, FollowRequest};
use proto_ai_tools_tests::support::{error_text, ok_json};
use proto_ai_tools_tests::{LinksBackend, RunningServer, serve};
use serde_json::{Value, json};

use proto_ai_tools_tests::tools::feed;

fn executor(server: &RunningServer, options: ExecutorOptions) -> feed::Executor<TonicTransport> {
    let transport = TonicTransport::new(server.channel().expect("a channel"));
    feed::Executor::new(transport).with_options(options)
}

fn limits(max_messages: usize, max_bytes: usize, max_time: Duration) -> ExecutorOptions {
    let mut options = ExecutorOptions::default();
    options.stream.max_messages = max_messages;
    options.stream.max_bytes = max_bytes;
    options.stream.max_time = max_time;
    options
}

/// The texts of the collected events.
fn texts(output: &Value) -> Vec<String> {
    output["messages"]
        .as_array()
        .expect("a list of messages")
        .iter()
        .map(|m| m["text"].as_str().expect("text").to_owned())
        .collect()
}

/// Waits (up to 5 s) until the server has seen `n` streams cancelled.
async fn cancelled(server: &RunningServer, n: u64) -> bool {
    for _ in 0..500 {
        if server.feed.cancelled() >= n {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

#[tokio::test]
async fn a_whole_stream_is_one_result_with_every_id_aliased() {
    let server = serve(LinksBackend::default()).await.expect("server");
    let exec = executor(&server, ExecutorOptions::default());
    let result = exec.execute("feed_follow", r#"{"count": 3}"#).await;
    let output = ok_json(&result);
    assert_eq!(texts(&output), ["event 1", "event 2", "event 3"]);
    assert!(output.get("stopped_early").is_none(), "{output}");
    let ids: Vec<&str> = output["messages"]
        .as_array()
        .expect("list")
        .iter()
        .map(|m| m["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, ["event-1", "event-2", "event-3"]);
    // The aliases resolve to the UUIDs the server sent.
    let uuid = exec
        .alias_manager()
        .resolve("event-2")
        .expect("a known alias");
    assert_eq!(uuid.len(), 36, "{uuid}");
    server.shutdown().await;
}

#[tokio::test]
async fn the_message_bound_stops_the_stream_and_cancels_it_at_the_server() {
    let server = serve(LinksBackend::default()).await.expect("server");
    let exec = executor(&server, limits(2, 1 << 20, Duration::from_secs(30)));
    // An endless stream.
    let result = exec
        .execute("feed_follow", r#"{"count": 0, "interval_ms": 5}"#)
        .await;
    let output = ok_json(&result);
    assert_eq!(texts(&output), ["event 1", "event 2"]);
    let reason = output["stopped_early"].as_str().expect("a reason");
    assert!(reason.contains("after 2 messages"), "{reason}");
    assert!(
        cancelled(&server, 1).await,
        "the server never saw the call cancelled"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn the_byte_and_time_bounds_say_so() {
    let server = serve(LinksBackend::default()).await.expect("server");
    // One event is about 50 bytes on the wire.
    let exec = executor(&server, limits(100, 120, Duration::from_secs(30)));
    let output = ok_json(&exec.execute("feed_follow", r#"{"count": 10}"#).await);
    assert_eq!(texts(&output).len(), 2, "{output}");
    let reason = output["stopped_early"].as_str().expect("a reason");
    assert!(reason.contains("would pass 120 bytes"), "{reason}");

    let exec = executor(&server, limits(100, 1 << 20, Duration::from_millis(300)));
    let output = ok_json(
        &exec
            .execute("feed_follow", r#"{"count": 0, "interval_ms": 100}"#)
            .await,
    );
    let got = texts(&output).len();
    assert!((1..=4).contains(&got), "{got} events in 300 ms: {output}");
    let reason = output["stopped_early"].as_str().expect("a reason");
    assert!(reason.contains("after 0.3 s"), "{reason}");
    // (The ten events of the first call may all be on the wire already; the
    // endless one must be cancelled.)
    assert!(cancelled(&server, 1).await);
    server.shutdown().await;
}

#[tokio::test]
async fn a_failure_mid_stream_keeps_what_arrived_and_a_failure_first_is_an_error() {
    let server = serve(LinksBackend::default()).await.expect("server");
    let exec = executor(&server, ExecutorOptions::default());
    let output = ok_json(
        &exec
            .execute("feed_follow", r#"{"count": 2, "fail_with": "feed closed"}"#)
            .await,
    );
    assert_eq!(texts(&output), ["event 1", "event 2"]);
    let reason = output["stopped_early"].as_str().expect("a reason");
    assert!(
        reason.contains("UNAVAILABLE") && reason.contains("feed closed"),
        "{reason}"
    );

    let result = exec
        .execute("feed_follow", r#"{"count": 0, "fail_with": "feed closed"}"#)
        .await;
    let text = error_text(&result);
    assert!(
        text.contains("UNAVAILABLE") && text.contains("feed closed"),
        "{text}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_server_slow_to_open_the_stream_is_held_no_longer_than_the_bound() {
    let server = serve(LinksBackend::default()).await.expect("server");
    let exec = executor(&server, limits(100, 1 << 20, Duration::from_millis(200)));
    let started = std::time::Instant::now();
    let result = exec
        .execute("feed_follow", r#"{"count": 1, "open_delay_ms": 3000}"#)
        .await;
    let text = error_text(&result);
    assert!(text.contains("DEADLINE_EXCEEDED"), "{text}");
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "held {:?} by a server that had not answered",
        started.elapsed()
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_deadline_before_the_first_message_is_deadline_exceeded_in_words() {
    let server = serve(LinksBackend::default()).await.expect("server");
    let exec = executor(&server, ExecutorOptions::default());
    let options = CallOptions::new().timeout(Duration::from_millis(150));
    let result = exec
        .execute_with(
            "feed_follow",
            r#"{"count": 1, "interval_ms": 2000}"#,
            &options,
        )
        .await;
    let text = error_text(&result);
    assert!(text.contains("DEADLINE_EXCEEDED"), "{text}");
    assert!(
        cancelled(&server, 1).await,
        "the stream outlived its deadline"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn per_call_metadata_and_progress_reach_a_streaming_call_through_a_toolkit() {
    let server = serve(LinksBackend::default()).await.expect("server");
    let transport = TonicTransport::new(server.channel().expect("a channel"));
    let toolkit = Toolkit::builder()
        .generated(feed::Executor::new(transport))
        .call_options(CallOptions::new().metadata("x-tenant", "acme"))
        .build()
        .expect("a toolkit");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let counter = seen.clone();
    let options = CallOptions::new()
        .metadata("x-user", "42")
        .progress(move |n| counter.lock().expect("lock").push(n));
    let result = toolkit
        .execute_with("feed_follow", r#"{"count": 3}"#, &options)
        .await;
    assert_eq!(texts(&ok_json(&result)).len(), 3);
    assert_eq!(*seen.lock().expect("lock"), [1, 2, 3]);
    let metadata = server.feed.metadata();
    assert_eq!(
        metadata.last().expect("one call"),
        &[
            ("x-tenant".to_owned(), "acme".to_owned()),
            ("x-user".to_owned(), "42".to_owned())
        ]
    );
    // The model sees a list of messages; nothing else changed shape.
    let tool = feed::all_tools()[0];
    assert_eq!(tool.name, "feed_follow");
    assert_eq!(
        serde_json::from_str::<Value>(tool.parameters()).expect("JSON")["type"],
        json!("object")
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_caller_that_drops_the_call_mid_stream_cancels_it_at_the_server() {
    let server = serve(LinksBackend::default()).await.expect("server");
    // No bound that would end it: only the caller can.
    let exec = Arc::new(executor(
        &server,
        limits(1_000_000, 1 << 30, Duration::from_secs(600)),
    ));
    let call = {
        let exec = exec.clone();
        tokio::spawn(async move {
            exec.execute("feed_follow", r#"{"count": 0, "interval_ms": 5}"#)
                .await
        })
    };
    // The stream is under way: the server has sent some events.
    let mut waited = 0;
    while server.feed.sent() < 3 {
        assert!(waited < 500, "the stream never started");
        waited += 1;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(server.feed.cancelled(), 0);
    call.abort();
    assert!(call.await.expect_err("aborted").is_cancelled());
    assert!(
        cancelled(&server, 1).await,
        "the server kept streaming to a caller that had gone"
    );
    // And it stopped sending: nothing more goes out once it saw that.
    let sent = server.feed.sent();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(server.feed.sent(), sent);
    server.shutdown().await;
}

/// The messages of a `Follow` call, read straight from `TonicTransport`.
async fn follow_stream<'a>(
    transport: &'a TonicTransport,
    method: &'a MethodDescriptor,
    options: &'a CallOptions,
    count: u32,
) -> Box<dyn MessageStream + 'a> {
    let request = DynamicMessage::decode(
        method.input(),
        FollowRequest {
            count,
            ..FollowRequest::default()
        }
        .encode_to_vec()
        .as_slice(),
    )
    .expect("request");
    transport
        .server_streaming(method, request, options)
        .await
        .expect("stream")
}

fn follow_method() -> MethodDescriptor {
    feed::descriptor_pool()
        .get_service_by_name("feed.v1.FeedService")
        .and_then(|service| service.methods().find(|m| m.name() == "Follow"))
        .expect("Follow")
}

#[tokio::test]
async fn a_tonic_stream_gives_each_message_decoded_or_as_the_bytes_that_came() {
    let server = serve(LinksBackend::default()).await.expect("server");
    let transport = TonicTransport::new(server.channel().expect("a channel"));
    let method = follow_method();
    let options = CallOptions::new();
    let mut stream = follow_stream(&transport, &method, &options, 3).await;
    let first = stream.next().await.expect("a first").expect("ok");
    let first = first.transcode_to::<Event>().expect("an Event");
    assert_eq!(first.text, "event 1");
    let second = stream.next_encoded().await.expect("a second").expect("ok");
    let second = Event::decode(second.as_slice()).expect("an Event's bytes");
    assert_eq!(second.text, "event 2");
    let third = stream.next().await.expect("a third").expect("ok");
    assert_eq!(
        third.transcode_to::<Event>().expect("an Event").text,
        "event 3"
    );
    assert!(stream.next_encoded().await.is_none(), "the stream ended");
    drop(stream);
    server.shutdown().await;
}

/// A stream that only decodes, as a transport written outside this crate
/// may give.
struct Decoded(std::vec::IntoIter<DynamicMessage>);

impl MessageStream for Decoded {
    fn next(&mut self) -> BoxFuture<'_, Option<Result<DynamicMessage, Status>>> {
        let next = self.0.next().map(Ok);
        Box::pin(async move { next })
    }
}

#[tokio::test]
async fn a_stream_that_only_decodes_gives_bytes_by_encoding_each_message() {
    let event = |text: &str| Event {
        id: "e".into(),
        text: text.into(),
    };
    let output = follow_method().output();
    let messages = ["a", "b"].map(|text| {
        DynamicMessage::decode(output.clone(), event(text).encode_to_vec().as_slice())
            .expect("decoded")
    });
    let mut stream = Decoded(Vec::from(messages).into_iter());
    for text in ["a", "b"] {
        let bytes = stream.next_encoded().await.expect("a message").expect("ok");
        assert_eq!(bytes, event(text).encode_to_vec());
    }
    assert!(stream.next_encoded().await.is_none());
}

/// A transport whose every stream brings one good event, then bytes that are
/// no `Event`: as a service sending the wrong type would.
struct GoodThenGarbled;

struct GoodThenGarbledStream(Vec<Vec<u8>>);

impl MessageStream for GoodThenGarbledStream {
    fn next(&mut self) -> BoxFuture<'_, Option<Result<DynamicMessage, Status>>> {
        unreachable!("the executor reads a stream's bytes")
    }

    fn next_encoded(&mut self) -> BoxFuture<'_, Option<Result<Vec<u8>, Status>>> {
        let next = (!self.0.is_empty()).then(|| Ok(self.0.remove(0)));
        Box::pin(async move { next })
    }
}

impl Transport for GoodThenGarbled {
    fn unary<'a>(
        &'a self,
        _: &'a MethodDescriptor,
        _: DynamicMessage,
        _: &'a CallOptions,
    ) -> BoxFuture<'a, Result<DynamicMessage, Status>> {
        unreachable!("feed_follow is a stream")
    }

    fn server_streaming<'a>(
        &'a self,
        _: &'a MethodDescriptor,
        _: DynamicMessage,
        _: &'a CallOptions,
    ) -> BoxFuture<'a, Result<Box<dyn MessageStream + 'a>, Status>> {
        let good = Event {
            id: "0b4e7a52-5c1f-4d6e-9a3b-2f8c1d7e6a90".into(),
            text: "fine".into(),
        }
        .encode_to_vec();
        // Field 1, length 5, and one byte: cut short.
        let garbled = vec![0x0a, 0x05, b'a'];
        Box::pin(async move {
            Ok(Box::new(GoodThenGarbledStream(vec![good, garbled])) as Box<dyn MessageStream>)
        })
    }
}

#[tokio::test]
async fn a_message_that_does_not_decode_ends_the_stream_keeping_what_came_before() {
    let exec = feed::Executor::new(GoodThenGarbled);
    let result = exec.execute("feed_follow", r#"{"count": 2}"#).await;
    let output = ok_json(&result);
    assert_eq!(texts(&output), ["fine"]);
    assert_eq!(output["messages"][0]["id"], "event-1");
    let stopped = output["stopped_early"].as_str().expect("stopped_early");
    assert!(
        stopped.starts_with("after 1 message: the next one cannot be read")
            && stopped.contains("feed.v1.Event"),
        "{stopped}"
    );
}
