//! Executor overhead: a tool call through the `ai_tools!`-generated
//! `Executor::execute` over `TonicTransport` on loopback, against the same
//! RPC through the tonic-generated client of the same proto, on the same
//! server, with a small (one link) and a ~100 KB (a list of links) response:
//! sequential latency (also measured in alternating pairs, printed first)
//! and 64-way concurrent throughput. Then a server stream of
//! [`STREAM_EVENTS`] messages collected by the executor against the same
//! stream read through the generated client. Then where the executor's time
//! goes, stage by stage, without the network.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput};
use prost::Message as _;
use prost_reflect::{DeserializeOptions, DynamicMessage, SerializeOptions};
use proto_ai_tools::{
    AliasManager, CallOptions, Transport,
    executor::ExecutorOptions,
    transport::{InProcessTransport, TonicTransport},
};
use proto_ai_tools_benches::{links, ready};
use proto_ai_tools_tests::feed_pb::FollowRequest;
use proto_ai_tools_tests::feed_pb::feed_service_client::FeedServiceClient;
use proto_ai_tools_tests::feed_pb::feed_service_server::FeedServiceServer;
use proto_ai_tools_tests::pb::links_service_client::LinksServiceClient;
use proto_ai_tools_tests::pb::links_service_server::LinksServiceServer;
use proto_ai_tools_tests::pb::workflow_steps_service_server::WorkflowStepsServiceServer;
use proto_ai_tools_tests::pb::{ListLinksRequest, ListLinksResponse, UpdateLinkRequest};
use proto_ai_tools_tests::tools::feed;
use proto_ai_tools_tests::{FeedBackend, LinksBackend};
use tonic::transport::Channel;

/// Links the server holds: the list response is ~100 KB of protojson.
const LINKS: usize = 560;
/// Messages in the server stream the streaming benchmark collects (past the
/// 100 one call collects by default: the executor is given room for them).
const STREAM_EVENTS: u32 = 200;
/// Tasks in flight at once in the throughput benchmarks.
const CONCURRENCY: usize = 64;

const UPDATE_ARGS: &str = r#"{"link_id":"link-1","name":"Renamed"}"#;
const LIST_ARGS: &str = r#"{}"#;

fn typed_update(uuid: &str) -> UpdateLinkRequest {
    UpdateLinkRequest {
        link_id: uuid.to_owned(),
        name: Some("Renamed".to_owned()),
        destination: None,
    }
}

/// Serves the tests crate's links and feed services on loopback, as
/// `proto_ai_tools_tests::serve` does but with `TCP_NODELAY` on the accepted
/// sockets: without it (a `TcpIncoming` built from a listener leaves Nagle
/// on) responses wait on delayed ACKs and both clients measure the stall.
async fn serve(backend: LinksBackend) -> std::io::Result<std::net::SocketAddr> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
    let server = tonic::transport::Server::builder()
        .add_service(LinksServiceServer::new(backend.clone()))
        .add_service(WorkflowStepsServiceServer::new(backend))
        .add_service(FeedServiceServer::new(FeedBackend::default()));
    tokio::spawn(async move {
        let _ = server.serve_with_incoming(incoming).await;
    });
    Ok(addr)
}

/// Runs `iters` calls of `call` spread over [`CONCURRENCY`] tasks; the time they all took.
async fn concurrent<F, Fut>(iters: u64, call: F) -> Duration
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: Future<Output = ()> + Send,
{
    let started = Instant::now();
    let tasks: Vec<_> = (0..CONCURRENCY as u64)
        .map(|t| {
            let n = iters / CONCURRENCY as u64 + u64::from(t < iters % CONCURRENCY as u64);
            let call = call.clone();
            tokio::spawn(async move {
                for _ in 0..n {
                    call().await;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("task");
    }
    started.elapsed()
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let addr = rt
        .block_on(serve(LinksBackend::with_links(LINKS)))
        .expect("server");
    let channel: Channel = {
        let _guard = rt.enter();
        tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
            .expect("endpoint")
            .connect_lazy()
    };
    let exec = links::Executor::new(TonicTransport::new(channel.clone()));
    let client = LinksServiceClient::new(channel.clone());

    // The model lists first, so that `link-1` is an alias this conversation issued.
    let listed = rt.block_on(exec.execute("links_list", LIST_ARGS));
    assert!(!listed.is_error, "{}", listed.output);
    let target_uuid = exec.alias_manager().resolve("link-1").expect("link-1");
    let updated = rt.block_on(exec.execute("links_update", UPDATE_ARGS));
    assert!(!updated.is_error, "{}", updated.output);
    let list_proto = rt
        .block_on(client.clone().list_links(ListLinksRequest { page_size: 0 }))
        .expect("list")
        .into_inner();
    println!(
        "executor bench: list response {} bytes protobuf, {} bytes JSON to the model; update response {} bytes JSON",
        list_proto.encoded_len(),
        listed.output.len(),
        updated.output.len()
    );

    let in_process = in_process_executor(exec.alias_manager(), &list_proto);
    paired(&rt, &exec, &client, &channel, &in_process, &target_uuid);

    let mut c = Criterion::default().configure_from_args();
    {
        let mut group = c.benchmark_group("executor/sequential");
        group
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3));
        group.bench_function(BenchmarkId::new("generated_client", "small"), |b| {
            b.iter(|| {
                rt.block_on(client.clone().update_link(typed_update(&target_uuid)))
                    .expect("update")
            });
        });
        group.bench_function(BenchmarkId::new("ai_tools_execute", "small"), |b| {
            b.iter(|| {
                let r = rt.block_on(exec.execute("links_update", black_box(UPDATE_ARGS)));
                debug_assert!(!r.is_error);
                r
            });
        });
        group.bench_function(BenchmarkId::new("generated_client", "100KB"), |b| {
            b.iter(|| {
                rt.block_on(client.clone().list_links(ListLinksRequest { page_size: 0 }))
                    .expect("list")
            });
        });
        group.bench_function(BenchmarkId::new("ai_tools_execute", "100KB"), |b| {
            b.iter(|| rt.block_on(exec.execute("links_list", black_box(LIST_ARGS))));
        });
        group.finish();
    }
    {
        let mut group = c.benchmark_group("executor/concurrent64");
        group
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3))
            .throughput(Throughput::Elements(1));
        let uuid = Arc::new(target_uuid.clone());
        let make_client = {
            let client = client.clone();
            let uuid = uuid.clone();
            move || {
                let mut client = client.clone();
                let uuid = uuid.clone();
                async move {
                    client
                        .update_link(typed_update(&uuid))
                        .await
                        .expect("update");
                }
            }
        };
        group.bench_function(BenchmarkId::new("generated_client", "small"), |b| {
            b.iter_custom(|iters| rt.block_on(concurrent(iters, make_client.clone())));
        });
        let make_exec = {
            let exec = exec.clone();
            move || {
                let exec = exec.clone();
                async move {
                    black_box(exec.execute("links_update", UPDATE_ARGS).await);
                }
            }
        };
        group.bench_function(BenchmarkId::new("ai_tools_execute", "small"), |b| {
            b.iter_custom(|iters| rt.block_on(concurrent(iters, make_exec.clone())));
        });
        let list_client = {
            let client = client.clone();
            move || {
                let mut client = client.clone();
                async move {
                    client
                        .list_links(ListLinksRequest { page_size: 0 })
                        .await
                        .expect("list");
                }
            }
        };
        group.bench_function(BenchmarkId::new("generated_client", "100KB"), |b| {
            b.iter_custom(|iters| rt.block_on(concurrent(iters, list_client.clone())));
        });
        let list_exec = {
            let exec = exec.clone();
            move || {
                let exec = exec.clone();
                async move {
                    black_box(exec.execute("links_list", LIST_ARGS).await);
                }
            }
        };
        group.bench_function(BenchmarkId::new("ai_tools_execute", "100KB"), |b| {
            b.iter_custom(|iters| rt.block_on(concurrent(iters, list_exec.clone())));
        });
        group.finish();
    }
    stream(&mut c, &rt, &channel);
    breakdown(&mut c, &rt, &exec, &list_proto, &target_uuid);
    c.final_summary();
}

/// A server stream of [`STREAM_EVENTS`] events, each with a new id: the
/// generated client reading every message, against the executor collecting
/// them into one result with every id aliased. Each executor call has a
/// conversation of its own (made outside the timing), since the ids are new
/// every time and one conversation would fill up.
fn stream(c: &mut Criterion, rt: &tokio::runtime::Runtime, channel: &Channel) {
    let client = FeedServiceClient::new(channel.clone());
    let transport = TonicTransport::new(channel.clone());
    let args = format!(r#"{{"count":{STREAM_EVENTS}}}"#);
    let mut options = ExecutorOptions::default();
    options.stream.max_messages = STREAM_EVENTS as usize + 1;
    let conversation = || {
        feed::Executor::with_alias_manager(transport.clone(), Arc::new(AliasManager::new()))
            .with_options(options.clone())
    };
    let collected = rt.block_on(conversation().execute("feed_follow", &args));
    assert!(!collected.is_error, "{}", collected.output);
    assert!(
        !collected.output.contains("stopped_early"),
        "the stream was cut: {}",
        collected.output
    );
    let generated = || {
        rt.block_on(async {
            let mut client = client.clone();
            let request = FollowRequest {
                count: STREAM_EVENTS,
                ..FollowRequest::default()
            };
            let mut events = client.follow(request).await.expect("follow").into_inner();
            let mut read = Vec::new();
            while let Some(event) = events.message().await.expect("event") {
                read.push(event);
            }
            assert_eq!(read.len(), STREAM_EVENTS as usize);
            read
        })
    };
    let ours = |exec: feed::Executor<TonicTransport>| {
        let result = rt.block_on(exec.execute("feed_follow", black_box(&args)));
        debug_assert!(!result.is_error);
        result
    };

    // In pairs, alternating, as `paired` measures unary calls: the server's
    // own work per event swamps criterion's window-to-window drift.
    let rounds = paired_rounds(400);
    let (mut theirs_times, mut ours_times) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let exec = conversation();
        if round % 2 == 0 {
            theirs_times.push(timed(generated));
            ours_times.push(timed(|| ours(exec)));
        } else {
            ours_times.push(timed(|| ours(exec)));
            theirs_times.push(timed(generated));
        }
    }
    let (theirs, ours_median) = (median_micros(theirs_times), median_micros(ours_times));
    println!(
        "executor paired: stream of {STREAM_EVENTS}: {rounds} rounds, generated client median {theirs:.1} us, Executor::execute median {ours_median:.1} us, ratio {:.2}",
        ours_median / theirs
    );

    let mut group = c.benchmark_group("executor/stream");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(u64::from(STREAM_EVENTS)));
    let label = format!("{STREAM_EVENTS}_events");
    group.bench_function(BenchmarkId::new("generated_client", &label), |b| {
        b.iter(generated);
    });
    group.bench_function(BenchmarkId::new("ai_tools_execute", &label), |b| {
        b.iter_batched(conversation, ours, BatchSize::SmallInput);
    });
    group.finish();
}

/// Sequential latency measured in pairs: each round makes one call through
/// the generated client and one through `Executor::execute`, back to back,
/// in alternating order, and times each. Criterion measures the two in
/// separate windows seconds apart, and on a shared machine the loopback round
/// trip drifts between windows by more than the executor adds to a small
/// call; paired calls see the same conditions. Prints each side's median
/// and their ratio.
///
/// Two more measures split the difference: `TonicTransport` alone, given the
/// request as a `DynamicMessage` (the network leg without the JSON work), in
/// the same rotation; and, for the small call, the executor's own work over
/// an in-process transport, timed right after a generated-client call
/// (caches as a real call finds them) and again right after itself (as a
/// criterion loop finds them).
fn paired(
    rt: &tokio::runtime::Runtime,
    exec: &links::Executor<TonicTransport>,
    client: &LinksServiceClient<Channel>,
    channel: &Channel,
    in_process: &links::Executor<InProcessTransport>,
    target_uuid: &str,
) {
    for (label, rounds, tool, args) in [
        ("small", paired_rounds(4_000), "links_update", UPDATE_ARGS),
        ("100KB", paired_rounds(1_000), "links_list", LIST_ARGS),
    ] {
        let generated = || {
            let mut client = client.clone();
            if tool == "links_update" {
                rt.block_on(client.update_link(typed_update(target_uuid)))
                    .map(drop)
            } else {
                rt.block_on(client.list_links(ListLinksRequest { page_size: 0 }))
                    .map(drop)
            }
            .expect("generated client call");
        };
        let ours = || {
            let result = rt.block_on(exec.execute(tool, black_box(args)));
            assert!(!result.is_error, "{}", result.output);
        };
        let (method_name, request) = if tool == "links_update" {
            ("UpdateLink", typed_update(target_uuid).encode_to_vec())
        } else {
            (
                "ListLinks",
                ListLinksRequest { page_size: 0 }.encode_to_vec(),
            )
        };
        let method = links::descriptor_pool()
            .get_service_by_name("links.v1.LinksService")
            .and_then(|service| service.methods().find(|m| m.name() == method_name))
            .expect("method");
        let request = DynamicMessage::decode(method.input(), request.as_slice()).expect("request");
        let transport = TonicTransport::new(channel.clone());
        let no_options = CallOptions::default();
        let transport_alone = || {
            rt.block_on(transport.unary_encoded(&method, request.clone(), &no_options))
                .expect("transport call");
        };
        let (mut theirs_times, mut ours_times, mut transport_times) =
            (Vec::new(), Vec::new(), Vec::new());
        for round in 0..rounds {
            for turn in 0..3 {
                match (round + turn) % 3 {
                    0 => theirs_times.push(timed(generated)),
                    1 => ours_times.push(timed(ours)),
                    _ => transport_times.push(timed(transport_alone)),
                }
            }
        }
        let (theirs, ours) = (median_micros(theirs_times), median_micros(ours_times));
        println!(
            "executor paired: {label}: {rounds} rounds, generated client median {theirs:.1} us, Executor::execute median {ours:.1} us, ratio {:.2}; TonicTransport alone {:.1} us",
            ours / theirs,
            median_micros(transport_times),
        );
        // The small call only: for the large one the in-process transport's
        // own work (cloning and encoding 560 links) would swamp the measure.
        if tool == "links_update" {
            let own_work = || {
                let result = rt.block_on(in_process.execute(tool, black_box(args)));
                assert!(!result.is_error, "{}", result.output);
            };
            let (mut cold_times, mut hot_times) = (Vec::new(), Vec::new());
            for _ in 0..rounds {
                generated();
                cold_times.push(timed(own_work));
                hot_times.push(timed(own_work));
            }
            println!(
                "executor paired: {label}: the executor's own work (in process) {:.1} us right after a generated-client call, {:.1} us right after itself",
                median_micros(cold_times),
                median_micros(hot_times),
            );
        }
    }
}

/// Rounds of a paired measure: `full`, or 20 in quick mode.
fn paired_rounds(full: usize) -> usize {
    if proto_ai_tools_benches::quick_mode() {
        20
    } else {
        full
    }
}

/// How long `f` takes (its result kept from the optimiser).
fn timed<T>(f: impl FnOnce() -> T) -> Duration {
    let started = Instant::now();
    black_box(f());
    started.elapsed()
}

/// The median of `times`, in microseconds.
fn median_micros(mut times: Vec<Duration>) -> f64 {
    times.sort_unstable();
    times[times.len() / 2].as_secs_f64() * 1e6
}

/// An executor over an in-process transport that answers `links_list` and
/// `links_update` with the responses the server gives, already decoded: the
/// executor's own work with the network taken out.
fn in_process_executor(
    aliases: &Arc<proto_ai_tools::AliasManager>,
    list_proto: &ListLinksResponse,
) -> links::Executor<InProcessTransport> {
    let pool = links::descriptor_pool();
    let decoded = |name: &str, bytes: Vec<u8>| {
        let desc = pool.get_message_by_name(name).expect("response message");
        DynamicMessage::decode(desc, bytes.as_slice()).expect("decode")
    };
    let list_response = decoded("links.v1.ListLinksResponse", list_proto.encode_to_vec());
    let one_link = proto_ai_tools_tests::pb::UpdateLinkResponse {
        link: list_proto.links.last().cloned(),
    };
    let update_response = decoded("links.v1.UpdateLinkResponse", one_link.encode_to_vec());
    let transport = InProcessTransport::new()
        .with_handler("/links.v1.LinksService/ListLinks", move |_req, _opts| {
            let response = list_response.clone();
            async move { Ok(response) }
        })
        .with_handler("/links.v1.LinksService/UpdateLink", move |_req, _opts| {
            let response = update_response.clone();
            async move { Ok(response) }
        });
    links::Executor::with_alias_manager(transport, aliases.clone())
}

/// The stages of one `execute`, each alone, plus the whole executor over an
/// in-process transport that answers with a prepared response (no network).
fn breakdown(
    c: &mut Criterion,
    rt: &tokio::runtime::Runtime,
    exec: &links::Executor<TonicTransport>,
    list_proto: &ListLinksResponse,
    target_uuid: &str,
) {
    let pool = links::descriptor_pool();
    let list_desc = pool
        .get_message_by_name("links.v1.ListLinksResponse")
        .expect("ListLinksResponse");
    let update_req_desc = pool
        .get_message_by_name("links.v1.UpdateLinkRequest")
        .expect("UpdateLinkRequest");
    let update_resp_desc = pool
        .get_message_by_name("links.v1.UpdateLinkResponse")
        .expect("UpdateLinkResponse");
    let list_bytes = list_proto.encode_to_vec();
    let one_link = proto_ai_tools_tests::pb::UpdateLinkResponse {
        link: list_proto.links.last().cloned(),
    };
    let one_link_bytes = one_link.encode_to_vec();
    let aliases = exec.alias_manager().clone();

    let mut group = c.benchmark_group("executor/breakdown");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));

    // Inbound (small request).
    group.bench_function("in/parse_args_json", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(UPDATE_ARGS)).expect("json"));
    });
    let args: serde_json::Value = serde_json::from_str(UPDATE_ARGS).expect("json");
    group.bench_function("in/json_to_dynamic_message", |b| {
        b.iter_batched(
            || args.clone(),
            |args| {
                DynamicMessage::deserialize_with_options(
                    update_req_desc.clone(),
                    args,
                    &DeserializeOptions::new(),
                )
                .expect("request")
            },
            BatchSize::SmallInput,
        );
    });
    group.bench_function("in/resolve_alias_for_field", |b| {
        b.iter(|| aliases.resolve_for_field("link", black_box("link-1")));
    });
    let request = DynamicMessage::deserialize_with_options(
        update_req_desc.clone(),
        args.clone(),
        &DeserializeOptions::new(),
    )
    .expect("request");
    group.bench_function("in/encode_dynamic", |b| b.iter(|| request.encode_to_vec()));
    let typed = typed_update(target_uuid);
    group.bench_function("in/encode_typed_baseline", |b| {
        b.iter(|| typed.encode_to_vec())
    });

    // Outbound, one link and ~100 KB.
    for (label, desc, bytes, aliases_of) in [
        (
            "small",
            &update_resp_desc,
            &one_link_bytes,
            links::LINKS_UPDATE.response_aliases,
        ),
        (
            "100KB",
            &list_desc,
            &list_bytes,
            links::LINKS_LIST.response_aliases,
        ),
    ] {
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        if label == "small" {
            group.bench_function(BenchmarkId::new("out/decode_typed_baseline", label), |b| {
                b.iter(|| {
                    proto_ai_tools_tests::pb::UpdateLinkResponse::decode(black_box(
                        bytes.as_slice(),
                    ))
                    .expect("decode")
                });
            });
        } else {
            group.bench_function(BenchmarkId::new("out/decode_typed_baseline", label), |b| {
                b.iter(|| ListLinksResponse::decode(black_box(bytes.as_slice())).expect("decode"));
            });
        }
        group.bench_function(BenchmarkId::new("out/decode_dynamic", label), |b| {
            b.iter(|| {
                DynamicMessage::decode(desc.clone(), black_box(bytes.as_slice())).expect("decode")
            });
        });
        let decoded = DynamicMessage::decode(desc.clone(), bytes.as_slice()).expect("decode");
        group.bench_function(BenchmarkId::new("out/register_and_aliasify", label), |b| {
            b.iter_batched_ref(
                || decoded.clone(),
                |m| ready(aliases.register_message(m, aliases_of)),
                BatchSize::LargeInput,
            );
        });
        let mut aliased = decoded.clone();
        ready(aliases.register_message(&mut aliased, aliases_of)).expect("register");
        group.bench_function(BenchmarkId::new("out/dynamic_to_json", label), |b| {
            b.iter(|| {
                let mut out = Vec::new();
                let mut ser = serde_json::Serializer::new(&mut out);
                aliased
                    .serialize_with_options(&mut ser, &SerializeOptions::new())
                    .expect("json");
                out
            });
        });
        // What the executor does instead of the three rows above: the bytes
        // written straight out as aliased JSON.
        group.bench_function(BenchmarkId::new("out/bytes_to_aliased_json", label), |b| {
            b.iter(|| {
                rt.block_on(proto_ai_tools::__private::transcode(
                    &aliases,
                    desc,
                    aliases_of,
                    black_box(bytes.as_slice()),
                    proto_ai_tools::executor::JsonNames::Camel,
                ))
                .expect("written directly")
                .expect("aliases")
            });
        });
    }

    // The whole executor with the network taken out.
    group.throughput(Throughput::Elements(1));
    let in_process = in_process_executor(&aliases, list_proto);
    group.bench_function(BenchmarkId::new("in_process_execute", "small"), |b| {
        b.iter(|| rt.block_on(in_process.execute("links_update", black_box(UPDATE_ARGS))));
    });
    group.bench_function(BenchmarkId::new("in_process_execute", "100KB"), |b| {
        b.iter(|| rt.block_on(in_process.execute("links_list", black_box(LIST_ARGS))));
    });
    group.finish();
}
