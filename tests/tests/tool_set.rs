//! Tools built at run time from an encoded `FileDescriptorSet`: the same
//! tools `ai_tools!` builds at compile time, an executor that runs them
//! against a real tonic server with aliases, and clear errors for bad input.

use proto_ai_tools::schema::overlay::Overlay;
use proto_ai_tools::{
    tool_set::{ToolSet, ToolSetOptions},
    transport::TonicTransport,
};
use proto_ai_tools_tests::support::{error_text, ok_json};
use proto_ai_tools_tests::tools::{links, longrunning_overlay, longrunning_whole};
use proto_ai_tools_tests::{LinksBackend, serve};

fn workspace(path: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path)
}

/// googleapis' `operations.proto` as `protoc --include_imports
/// --include_source_info --descriptor_set_out` would write it: unedited,
/// every import in, comments kept (they are the descriptions).
fn operations_descriptor_set() -> Vec<u8> {
    let mut compiler =
        protox::Compiler::new([workspace("proto/third_party/googleapis")]).expect("a compiler");
    compiler
        .include_imports(true)
        .include_source_info(true)
        .open_file("google/longrunning/operations_proto.proto")
        .expect("compiles");
    compiler.encode_file_descriptor_set()
}

fn overlay() -> Overlay {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("overlays/operations.tools.toml");
    let text = std::fs::read_to_string(path).expect("the overlay");
    Overlay::parse("operations.tools.toml", &text).expect("a valid overlay")
}

/// The run-time tools equal the compile-time ones, field by field.
fn assert_same(
    run_time: &[&proto_ai_tools::AgentTool],
    compile_time: &[&proto_ai_tools::AgentTool],
) {
    assert_eq!(run_time.len(), compile_time.len());
    for (a, b) in run_time.iter().zip(compile_time) {
        assert_eq!(a, b, "tool `{}` differs", b.name);
    }
}

#[test]
fn an_overlay_and_whole_services_give_the_macros_tools_at_run_time() {
    let bytes = operations_descriptor_set();
    let set = ToolSet::from_descriptor_set(&bytes, &ToolSetOptions::new().overlay(overlay()))
        .expect("tools");
    assert_same(set.tools(), longrunning_overlay::all_tools());
    // The overlay's `timeout`, in both: the macro's static and the run time's.
    let timeouts: Vec<_> = set.tools().iter().map(|t| (t.name, t.timeout)).collect();
    assert_eq!(
        timeouts,
        [
            ("lro_list", None),
            ("lro_get", None),
            ("lro_cancel", Some(std::time::Duration::from_millis(7500))),
        ]
    );

    // The overlay's `examples`, the same in both too.
    let examples: Vec<_> = set
        .tools()
        .iter()
        .map(|t| (t.name, t.input_examples()))
        .collect();
    assert_eq!(
        examples,
        [
            ("lro_list", None),
            ("lro_get", Some(r#"[{"name":"operation-1"}]"#)),
            ("lro_cancel", None),
        ]
    );

    let set = ToolSet::from_descriptor_set(
        &bytes,
        &ToolSetOptions::new().service("google.longrunning.Operations"),
    )
    .expect("tools");
    assert_same(set.tools(), longrunning_whole::all_tools());
}

#[test]
fn an_example_that_does_not_fit_is_refused_where_it_is_written() {
    let bytes = operations_descriptor_set();
    let text = "[methods.\"google.longrunning.Operations.GetOperation\"]\n\
                name = \"lro_get\"\n\
                description = \"Get an operation.\"\n\
                examples = ['{\"name\": \"operation-1\"}', '{\"name\": \"operations/build-42\"}']\n\n\
                [fields.\"google.longrunning.GetOperationRequest.name\"]\n\
                alias_prefix = \"operation\"\n";
    let overlay = Overlay::parse("bad.tools.toml", text).expect("valid TOML");
    let error = ToolSet::from_descriptor_set(&bytes, &ToolSetOptions::new().overlay(overlay))
        .expect_err("a UUID-carrying field takes an alias");
    assert_eq!(
        error.to_string(),
        "bad.tools.toml:4:40: rpc `GetOperation`: example 2 (`{\"name\": \"operations/build-42\"}`) does not fit the tool: `name` is `operations/build-42`; a model sends this field's ids as aliases, such as `operation-1`, which the executor resolves in the conversation"
    );
}

#[test]
fn an_overlay_marks_methods_read_only_for_a_read_only_set() {
    // `operations.proto` marks no method `NO_SIDE_EFFECTS`, but binds
    // ListOperations and GetOperation to HTTP GET: `--read-only` keeps
    // those two (their `google.api.http` verb speaks for them).
    let bytes = operations_descriptor_set();
    let whole = || ToolSetOptions::new().service("google.longrunning.Operations");
    let by_verb =
        ToolSet::from_descriptor_set(&bytes, &whole().read_only(true)).expect("the GET methods");
    let names: Vec<&str> = by_verb.tools().iter().map(|t| t.name).collect();
    assert_eq!(names, ["operations_list", "operations_get"]);

    // An overlay says it for the protos: one entry keeps its derived name,
    // one names the tool too.
    let overlay = Overlay::parse(
        "read-only.tools.toml",
        "[methods.\"google.longrunning.Operations.ListOperations\"]\nread_only = true\n\n\
         [methods.\"google.longrunning.Operations.GetOperation\"]\nname = \"lro_get\"\n\
         description = \"Get an operation.\"\nread_only = true\n",
    )
    .expect("a valid overlay");
    let set = ToolSet::from_descriptor_set(&bytes, &whole().overlay(overlay).read_only(true))
        .expect("tools");
    let kept: Vec<(&str, bool, bool)> = set
        .tools()
        .iter()
        .map(|t| (t.name, t.hints.read_only, t.hints.idempotent))
        .collect();
    assert_eq!(
        kept,
        [("operations_list", true, true), ("lro_get", true, true)]
    );
    // Written into the descriptors as the option it stands for.
    let method = set
        .pool()
        .get_service_by_name("google.longrunning.Operations")
        .and_then(|s| s.methods().find(|m| m.name() == "ListOperations"))
        .expect("the method");
    assert_eq!(
        method
            .method_descriptor_proto()
            .options
            .as_ref()
            .and_then(|o| o.idempotency_level),
        Some(1),
        "idempotency_level = NO_SIDE_EFFECTS"
    );
}

#[test]
fn whole_services_say_which_streaming_methods_are_not_tools() {
    // etcd's `Watch` and `LeaseKeepAlive` stream both ways (the copy is
    // annotated, so the annotation protos are on the path too).
    let mut compiler = protox::Compiler::new([
        workspace("proto/third_party/etcd"),
        workspace("proto/third_party/googleapis"),
        workspace("proto"),
    ])
    .expect("a compiler");
    compiler
        .include_imports(true)
        .open_file("etcd/api/etcdserverpb/rpc.proto")
        .expect("compiles");
    let bytes = compiler.encode_file_descriptor_set();
    let set = ToolSet::from_descriptor_set(
        &bytes,
        &ToolSetOptions::new()
            .service("etcdserverpb.Watch")
            .service("etcdserverpb.Lease"),
    )
    .expect("tools");
    assert_eq!(
        set.left_out(),
        [
            "etcdserverpb.Watch.Watch",
            "etcdserverpb.Lease.LeaseKeepAlive"
        ]
    );
    let names: Vec<&str> = set.tools().iter().map(|t| t.name).collect();
    // Lease's unary methods are tools (annotated in this copy, so under
    // their own names); the streaming ones are not.
    assert!(names.contains(&"etcd_lease_grant"), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n.contains("keep_alive") || n.contains("watch")),
        "{names:?}"
    );
    // Without whole services, nothing is left out.
    let annotated = ToolSet::from_descriptor_set(&bytes, &ToolSetOptions::new()).expect("tools");
    assert!(annotated.left_out().is_empty());
}

#[tokio::test]
async fn run_time_tools_call_a_real_server_with_aliases() {
    let server = serve(LinksBackend::default()).await.expect("server");
    // `links.proto` compiled with its comments (the macro's embedded pool
    // drops them, having already turned them into descriptions).
    let bytes = proto_ai_tools_tests::LINKS_POOL.encode_to_vec();
    let set = ToolSet::from_descriptor_set(&bytes, &ToolSetOptions::new()).expect("tools");
    assert_same(set.tools(), links::all_tools());
    let exec = set.executor(TonicTransport::new(server.channel().expect("channel")));
    let created = ok_json(
        &exec
            .execute(
                "links_create",
                r#"{"destination": "https://example.com/a", "name": "A"}"#,
            )
            .await,
    );
    assert_eq!(created["link"]["id"], "link-1");
    let updated = exec
        .execute("links_update", r#"{"link_id": "link-1", "name": "B"}"#)
        .await;
    ok_json(&updated);
    assert_eq!(server.backend.links()[0].name, "B");
    let invented = exec
        .execute("links_update", r#"{"link_id": "link-9", "name": "C"}"#)
        .await;
    assert!(error_text(&invented).contains("link-9"));
    server.shutdown().await;
}

#[test]
fn bad_descriptor_sets_and_overlays_are_clear_errors() {
    let garbage = ToolSet::from_descriptor_set(b"\x0a\x05junk!", &ToolSetOptions::new())
        .expect_err("not a descriptor set");
    assert!(garbage.to_string().contains("does not decode"), "{garbage}");

    // Without its imports (no `--include_imports`).
    let mut compiler =
        protox::Compiler::new([workspace("proto/third_party/googleapis")]).expect("a compiler");
    compiler
        .include_imports(false)
        .open_file("google/longrunning/operations_proto.proto")
        .expect("compiles");
    let alone = ToolSet::from_descriptor_set(
        &compiler.encode_file_descriptor_set(),
        &ToolSetOptions::new().service("google.longrunning.Operations"),
    )
    .expect_err("imports missing");
    assert!(alone.to_string().contains("--include_imports"), "{alone}");

    // Nothing annotated and nothing asked for.
    let none = ToolSet::from_descriptor_set(&operations_descriptor_set(), &ToolSetOptions::new())
        .expect_err("no tools");
    assert!(
        none.to_string().contains("no method is annotated"),
        "{none}"
    );

    // A selector that matches nothing names the closest one.
    let typo = Overlay::parse(
        "typo.toml",
        "[methods.\"google.longrunning.Operations.GetOperaton\"]\nname = \"x\"\ndescription = \"X.\"\n",
    )
    .expect("valid TOML");
    let wrong = ToolSet::from_descriptor_set(
        &operations_descriptor_set(),
        &ToolSetOptions::new().overlay(typo),
    )
    .expect_err("no such method");
    let text = wrong.to_string();
    assert!(text.starts_with("typo.toml:1:10: "), "{text}");
    assert!(
        text.contains("did you mean `google.longrunning.Operations.GetOperation`?"),
        "{text}"
    );
}

use proto_ai_tools_tests::tools::feed;

/// Reflection over both protocol versions gives the tools the macro gives,
/// and they run against the same server.
#[tokio::test]
async fn tools_from_a_live_servers_reflection_v1_and_v1alpha() {
    use proto_ai_tools_tests::{Reflection, serve_with_reflection};
    for version in [Reflection::V1, Reflection::V1Alpha] {
        let server = serve_with_reflection(LinksBackend::default(), version)
            .await
            .expect("server");
        let fetched = std::sync::atomic::AtomicUsize::new(0);
        let set = ToolSet::from_reflection(
            server.channel().expect("channel"),
            &ToolSetOptions::new(),
            &|n| fetched.store(n, std::sync::atomic::Ordering::Relaxed),
        )
        .await
        .unwrap_or_else(|e| panic!("{version:?}: {e}"));
        assert!(
            fetched.into_inner() >= 3,
            "{version:?}: files reported as fetched"
        );
        let mut expected: Vec<&proto_ai_tools::AgentTool> = links::all_tools().to_vec();
        expected.extend(feed::all_tools());
        let mut got: Vec<&proto_ai_tools::AgentTool> = set.tools().to_vec();
        got.sort_by_key(|t| t.name);
        expected.sort_by_key(|t| t.name);
        assert_same(&got, &expected);

        let exec = set.executor(TonicTransport::new(server.channel().expect("channel")));
        let created = ok_json(
            &exec
                .execute(
                    "links_create",
                    r#"{"destination": "https://example.com/r"}"#,
                )
                .await,
        );
        assert_eq!(created["link"]["id"], "link-1");
        let followed = ok_json(&exec.execute("feed_follow", r#"{"count": 2}"#).await);
        assert_eq!(followed["messages"][1]["id"], "event-2");
        server.shutdown().await;
    }
}

#[tokio::test]
async fn a_server_without_reflection_is_a_clear_error() {
    let server = serve(LinksBackend::default()).await.expect("server");
    let error = ToolSet::from_reflection(
        server.channel().expect("channel"),
        &ToolSetOptions::new(),
        &|_| {},
    )
    .await
    .expect_err("no reflection service");
    let text = error.to_string();
    assert!(
        text.contains("neither grpc.reflection.v1 nor v1alpha"),
        "{text}"
    );
    server.shutdown().await;
}

/// A server that accepts the connection and never answers (not even the
/// HTTP/2 handshake) is an error within the reflection timeout, not a hang.
#[tokio::test]
async fn a_server_that_never_answers_is_an_error_within_the_timeout() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a listener");
    let url = format!("http://{}", listener.local_addr().expect("an address"));
    let silent = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let channel = tonic::transport::Endpoint::from_shared(url)
        .expect("a URL")
        .connect_lazy();
    let started = std::time::Instant::now();
    let timeout = std::time::Duration::from_millis(300);
    let error = ToolSet::from_reflection(
        channel,
        &ToolSetOptions::new().reflection_timeout(timeout),
        &|_| {},
    )
    .await
    .expect_err("no answer");
    let waited = started.elapsed();
    assert!(
        waited >= timeout && waited < std::time::Duration::from_secs(5),
        "{waited:?}"
    );
    let text = error.to_string();
    assert!(
        text.contains("did not answer in full within 300ms") && text.contains("reflection_timeout"),
        "{text}"
    );
    assert_eq!(
        ToolSetOptions::new().reflection_timeout,
        proto_ai_tools::tool_set::DEFAULT_REFLECTION_TIMEOUT
    );
    silent.abort();
}

/// A reflection server that knows links.proto but not the files it imports
/// (tonic-reflection answers `file_by_filename` for them with NOT_FOUND) is
/// an error naming the missing file and its importer; nothing is built.
#[tokio::test]
async fn a_server_lacking_an_imported_file_is_a_clear_error() {
    let links_only = links::descriptor_pool()
        .get_file_by_name("links/v1/links.proto")
        .expect("links.proto in the pool")
        .file_descriptor_proto()
        .clone();
    assert!(
        links_only
            .dependency
            .iter()
            .any(|d| d == "google/protobuf/timestamp.proto")
    );
    let reflection = tonic_reflection::server::Builder::configure()
        .register_file_descriptor_set(prost_types::FileDescriptorSet {
            file: vec![links_only],
        })
        .build_v1()
        .expect("tonic-reflection takes a set with missing imports");
    let server = proto_ai_tools_tests::serve_router(
        "127.0.0.1:0".parse().expect("an address"),
        tonic::transport::Server::builder().add_service(reflection),
    )
    .await
    .expect("server");
    let channel = tonic::transport::Endpoint::from_shared(server.url())
        .expect("a URL")
        .connect_lazy();
    let error = ToolSet::from_reflection(channel, &ToolSetOptions::new(), &|_| {})
        .await
        .expect_err("an import is missing");
    let text = error.to_string();
    assert!(text.starts_with("gRPC reflection failed: "), "{text}");
    assert!(
        text.contains("the server did not send `")
            && text.contains("`, which `links/v1/links.proto` imports")
            && text.contains("NotFound"),
        "{text}"
    );
    server.stop().await;
}

#[test]
fn annotation_protos_that_do_not_fit_the_set_are_a_clear_error() {
    // A file of the set already declares `ai.tools.v1.ToolFieldOptions`, so
    // the field annotation cannot be added beside it.
    let bytes = descriptor_set_of(
        "clash",
        "syntax = \"proto3\";\npackage ai.tools.v1;\nmessage ToolFieldOptions { string other = 1; }\n\
         message Ping { string text = 1; }\nservice Pinger { rpc Ping(Ping) returns (Ping); }\n",
    );
    let error =
        ToolSet::from_descriptor_set(&bytes, &ToolSetOptions::new().service("ai.tools.v1.Pinger"))
            .expect_err("the annotations do not fit");
    let text = error.to_string();
    assert!(
        text.contains("the annotation protos do not fit this descriptor set")
            && text.contains("ToolFieldOptions"),
        "{text}"
    );
}

/// An encoded descriptor set of `deep.proto`: `Req` holding a chain of
/// `levels` messages, each the value of a map in the last (the shape whose
/// rendering nests deepest), and a service `deep.S` taking `Req`.
fn deep_descriptor_set(levels: usize) -> Vec<u8> {
    let mut source =
        String::from("syntax = \"proto3\";\npackage deep;\nmessage Req { L0 top = 1; }\n");
    for i in 0..levels - 1 {
        source.push_str(&format!(
            "message L{i} {{ map<string, L{}> next = 1; string s = 2; }}\n",
            i + 1
        ));
    }
    source.push_str(&format!(
        "message L{} {{ string s = 1; }}\nmessage Resp {{}}\nservice S {{ rpc Go(Req) returns (Resp); }}\n",
        levels - 1
    ));
    descriptor_set_of(&format!("deep-{levels}"), &source)
}

/// `source` compiled as `{name}.proto` (in a directory of its own) into an
/// encoded descriptor set with its imports.
fn descriptor_set_of(name: &str, source: &str) -> Vec<u8> {
    let dir = std::env::temp_dir().join(format!("ai-tools-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let file = format!("{name}.proto");
    std::fs::write(dir.join(&file), source).expect("written");
    let mut compiler = protox::Compiler::new([&dir]).expect("a compiler");
    compiler
        .include_imports(true)
        .open_file(&file)
        .expect("compiles");
    let _ = std::fs::remove_dir_all(&dir);
    compiler.encode_file_descriptor_set()
}

#[test]
fn a_request_nested_to_the_bound_has_its_parameters_in_every_dialect() {
    use proto_ai_tools::schema::Dialect;
    use proto_ai_tools::schema::proto::MAX_NESTING_DEPTH;
    // `Req` and the chain: exactly the deepest a request may nest. In
    // Gemini `parameters` each level is five levels of JSON (property,
    // entry array, entry object, its properties, value): past serde_json's
    // default limit of 128, where the parameters used to read as `null`.
    let bytes = deep_descriptor_set(MAX_NESTING_DEPTH - 1);
    let set = ToolSet::from_descriptor_set(&bytes, &ToolSetOptions::new().service("deep.S"))
        .expect("tools");
    let toolkit = proto_ai_tools::Toolkit::builder()
        .generated(set.executor(proto_ai_tools::transport::InProcessTransport::new()))
        .build()
        .expect("a toolkit");
    let tool = toolkit.get("s_go").expect("the tool");
    for dialect in Dialect::ALL {
        let parameters = tool.parameters(dialect);
        assert_eq!(parameters["type"], "object", "{dialect}: {parameters}");
    }
    // The MCP form of the set's own tool reads its rendering in full too.
    let mcp =
        proto_ai_tools_mcp::agent_tool_to_mcp(set.tools()[0], proto_ai_tools_mcp::MCP_DIALECT);
    assert_eq!(
        serde_json::Value::Object((*mcp.input_schema).clone()),
        tool.parameters(proto_ai_tools_mcp::MCP_DIALECT)
    );
    let gemini = serde_json::to_string(&tool.parameters(Dialect::Gemini)).expect("text");
    let default_limit = serde_json::from_str::<serde_json::Value>(&gemini)
        .expect_err("deeper than serde_json's default limit");
    assert!(
        default_limit.to_string().contains("recursion limit"),
        "{default_limit}"
    );
}

#[test]
fn a_request_nested_past_the_bound_is_a_clear_error_not_a_crash() {
    // A server's reflection may describe messages chained thousands deep.
    let bytes = deep_descriptor_set(3_000);
    let error = ToolSet::from_descriptor_set(&bytes, &ToolSetOptions::new().service("deep.S"))
        .expect_err("too deep");
    let text = error.to_string();
    assert!(
        text.contains("its request `deep.Req` nests messages more than 32 deep")
            && text.contains("`deep.Req` → `deep.L0` → `deep.L1` →"),
        "{text}"
    );
}

/// An overlay's `timeout` is the tool's deadline for a plain `execute`
/// (no deadline in the call's or the executor's options): against a
/// service that never answers, the call ends at it instead of hanging.
#[tokio::test]
async fn an_overlay_timeout_bounds_a_plain_execute() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a listener");
    let url = format!("http://{}", listener.local_addr().expect("an address"));
    let mute = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let overlay = Overlay::parse(
        "tools.toml",
        "[methods.\"google.longrunning.Operations.GetOperation\"]\nname = \"lro_get\"\ndescription = \"Get.\"\ntimeout = \"0.3s\"\n",
    )
    .expect("a valid overlay");
    let set = ToolSet::from_descriptor_set(
        &operations_descriptor_set(),
        &ToolSetOptions::new().overlay(overlay),
    )
    .expect("tools");
    let channel = tonic::transport::Endpoint::from_shared(url)
        .expect("a URL")
        .connect_lazy();
    let exec = set.executor(TonicTransport::new(channel));
    let started = std::time::Instant::now();
    let result = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        exec.execute("lro_get", r#"{"name": "operations/1"}"#),
    )
    .await
    .expect("the tool's deadline ends the call");
    let took = started.elapsed();
    let text = error_text(&result);
    assert!(
        text.contains("DEADLINE_EXCEEDED") && text.contains("0.3 s"),
        "{text}"
    );
    assert!(took < std::time::Duration::from_secs(3), "{took:?}");

    // The call's own deadline comes first.
    let options = proto_ai_tools::CallOptions::new().timeout(std::time::Duration::from_millis(500));
    let result = exec
        .execute_with("lro_get", r#"{"name": "operations/1"}"#, &options)
        .await;
    let text = error_text(&result);
    assert!(
        text.contains("DEADLINE_EXCEEDED") && text.contains("0.5 s"),
        "{text}"
    );
    mute.abort();
}
