//! The MCP server against clients: the official MCP Python SDK (stdio and
//! streamable HTTP) driving the example server backed by a real tonic
//! service, and raw JSON-RPC over an in-memory pipe.
//!
//! The Python part needs a Python with the `mcp` package: `AI_TOOLS_PYTHON`,
//! else `target/py-venv/bin/python` (`.ci/run` makes it:
//! `python3 -m venv target/py-venv && target/py-venv/bin/pip install mcp`).
//! Without one the test is skipped with the reason printed, unless
//! `AI_TOOLS_REQUIRE_MCP=1` (as in CI), where it fails.

/// Says why a test is skipped where the test harness does not capture it
/// (it captures `println!`/`eprintln!` of passing tests), so a skip is seen.
fn skipped(reason: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED: {reason}");
}

#[cfg(not(feature = "mcp"))]
#[test]
fn mcp_tests_need_the_mcp_feature() {
    skipped(
        "the MCP tests need the `mcp` feature: cargo test -p proto-ai-tools-tests --features mcp --test mcp",
    );
    assert!(
        std::env::var_os("AI_TOOLS_REQUIRE_MCP").is_none(),
        "AI_TOOLS_REQUIRE_MCP is set but the tests were built without the `mcp` feature"
    );
}

#[cfg(feature = "mcp")]
mod python_sdk {
    use std::io::Read;
    use std::path::{Path, PathBuf};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    /// The driver's time limit: it starts two servers and runs about 30 checks.
    const LIMIT: Duration = Duration::from_secs(240);

    fn required() -> bool {
        std::env::var_os("AI_TOOLS_REQUIRE_MCP").is_some_and(|v| !v.is_empty() && v != "0")
    }

    /// A Python with the SDK; `None` (the test skips, saying why) unless
    /// `AI_TOOLS_REQUIRE_MCP` is set.
    fn python_or_skip() -> Option<PathBuf> {
        match proto_ai_tools_tests::support::python_importing("mcp") {
            Ok(p) => Some(p),
            Err(reason) if !required() => {
                super::skipped(&reason);
                None
            }
            Err(reason) => panic!("AI_TOOLS_REQUIRE_MCP is set: {reason}"),
        }
    }

    /// Runs `driver.py` with `args` within [`LIMIT`], prints its output, and
    /// checks that every one of its checks passed.
    fn run_driver(python: &Path, args: &[&str]) {
        let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/driver.py");
        let mut child = Command::new(python)
            .arg(&driver)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the driver starts");
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
            std::thread::sleep(Duration::from_millis(100));
        };
        let out = out.join().unwrap_or_default();
        let err = err.join().unwrap_or_default();
        println!("{out}");
        eprintln!("{err}");
        let status = status.unwrap_or_else(|| panic!("the driver ran past {LIMIT:?}"));
        let summary = out
            .lines()
            .rev()
            .find(|l| l.contains(" passed, "))
            .unwrap_or("no summary");
        assert!(
            status.success(),
            "the Python driver failed ({status}): {summary}"
        );
        assert!(summary.ends_with(" 0 failed"), "{summary}");
    }

    #[test]
    fn the_official_python_sdk_drives_the_example_server_over_stdio_and_http() {
        let Some(python) = python_or_skip() else {
            return;
        };
        run_driver(&python, &["--server", env!("CARGO_BIN_EXE_mcp_server")]);
    }

    /// The headers one SDK session sends with every request, and what the
    /// gRPC server must receive for them.
    struct Caller {
        name: &'static str,
        authorization: &'static str,
        tenant: &'static str,
        /// Not allow-listed: never forwarded.
        unlisted: &'static str,
        /// `x-trace-bin` as sent: base64 (padded for one session, not for
        /// the other) of `trace`.
        trace_base64: &'static str,
        trace: &'static [u8],
    }

    const CALLERS: [Caller; 2] = [
        Caller {
            name: "alice",
            authorization: "Bearer alice-token",
            tenant: "acme",
            unlisted: "alice-secret",
            trace_base64: "AP9hbGljZQE=",
            trace: b"\x00\xffalice\x01",
        },
        Caller {
            name: "bob",
            authorization: "Bearer bob-token",
            tenant: "globex",
            unlisted: "bob-secret",
            trace_base64: "/gBib2I",
            trace: b"\xfe\x00bob",
        },
    ];
    const CALLS_PER_SESSION: usize = 20;

    /// Over streamable HTTP, SDK sessions with their own `authorization`,
    /// `x-tenant`, `x-trace-bin` and an unlisted header call a generated tool,
    /// interleaved; the tonic server behind it records each request with all
    /// its metadata. Each call arrives with its own session's allow-listed
    /// headers (the `-bin` one as the bytes it encodes) and nothing else.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn forwarded_headers_reach_the_grpc_server_allow_listed_only_and_per_session() {
        use proto_ai_tools_tests::{
            LinksBackend, MetadataValue, Received, links_mcp_server, serve,
        };

        let Some(python) = python_or_skip() else {
            return;
        };
        let grpc = serve(LinksBackend::with_links(0))
            .await
            .expect("a gRPC server");
        // Every call waits a little at the server, so that calls overlap.
        grpc.backend.set_delay(Duration::from_millis(20));
        let server = links_mcp_server(grpc.channel().expect("a channel"))
            .with_server_info("links", "1")
            .forward_headers(["authorization", "x-tenant", "x-trace-bin"])
            .expect("forwardable headers");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(server.serve_http_until(listener, async {
            let _ = stopped.await;
        }));

        let sessions: serde_json::Map<String, serde_json::Value> = CALLERS
            .iter()
            .map(|c| {
                (
                    c.name.to_owned(),
                    serde_json::json!({
                        "authorization": c.authorization,
                        "x-tenant": c.tenant,
                        "x-unlisted": c.unlisted,
                        "x-trace-bin": c.trace_base64,
                    }),
                )
            })
            .collect();
        let scenario = serde_json::json!({
            "sessions": sessions,
            "calls": CALLS_PER_SESSION,
            "undecodable": {"authorization": "Bearer carol-token", "x-trace-bin": "not base64!"},
        })
        .to_string();
        tokio::task::spawn_blocking(move || {
            run_driver(&python, &["--forwarding", &url, "--scenario", &scenario]);
        })
        .await
        .expect("the driver ran");
        let _ = stop.send(());
        serving
            .await
            .expect("the server task")
            .expect("the server stopped cleanly");

        let requests = grpc.backend.requests();
        for caller in &CALLERS {
            let prefix = format!("{}-", caller.name);
            let mine: Vec<_> = requests
                .iter()
                .filter_map(|(received, metadata)| match received {
                    Received::CreateLink(r)
                        if r.name.as_deref().is_some_and(|n| n.starts_with(&prefix)) =>
                    {
                        Some((r.name.clone().unwrap_or_default(), metadata))
                    }
                    _ => None,
                })
                .collect();
            assert_eq!(mine.len(), CALLS_PER_SESSION, "{}'s calls", caller.name);
            for (name, metadata) in mine {
                assert_eq!(
                    metadata.values("authorization"),
                    [&MetadataValue::Ascii(caller.authorization.to_owned())],
                    "{name}: {metadata:?}"
                );
                assert_eq!(
                    metadata.values("x-tenant"),
                    [&MetadataValue::Ascii(caller.tenant.to_owned())],
                    "{name}: {metadata:?}"
                );
                assert_eq!(
                    metadata.values("x-trace-bin"),
                    [&MetadataValue::Binary(caller.trace.to_vec())],
                    "{name}: the -bin header arrives as the bytes it encodes: {metadata:?}"
                );
                // Nothing else of the MCP request: only what gRPC itself sends.
                let others: Vec<&str> = metadata
                    .keys()
                    .into_iter()
                    .filter(|k| {
                        !["authorization", "x-tenant", "x-trace-bin"].contains(k)
                            && !["te", "content-type", "user-agent"].contains(k)
                            && !k.starts_with("grpc-")
                    })
                    .collect();
                assert!(others.is_empty(), "{name}: {others:?} were forwarded too");
                let leaked = metadata
                    .0
                    .iter()
                    .any(|(_, v)| matches!(v, MetadataValue::Ascii(t) if t.contains("secret")));
                assert!(!leaked, "{name}: an unlisted header's value arrived");
            }
        }
        assert!(
            !requests.iter().any(|(received, _)| matches!(
                received,
                Received::CreateLink(r) if r.name.as_deref() == Some("undecodable")
            )),
            "a call whose -bin header does not decode is not made"
        );
        assert_eq!(
            requests.len(),
            CALLS_PER_SESSION * CALLERS.len(),
            "no other request reached the server"
        );
        grpc.shutdown().await;
    }
}

#[cfg(feature = "mcp")]
mod in_process {
    use std::sync::Arc;
    use std::time::Duration;

    use proto_ai_tools::{AliasManager, NativeTool, Sessions, Toolkit, toolkit::ToolkitError};
    use proto_ai_tools_mcp::{McpServer, ServeError};
    use serde_json::Value;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    #[derive(serde::Deserialize, proto_ai_tools::ToolInput)]
    #[allow(dead_code)]
    struct Pick {
        /// A link.
        #[tool(alias_prefix = "link")]
        link_id: String,
    }

    #[derive(serde::Deserialize, proto_ai_tools::ToolInput)]
    struct Empty {}

    const UUID: &str = "d290f1ee-6c54-4b01-90e6-d701748f0851";

    fn toolkit(aliases: Arc<AliasManager>) -> Result<Toolkit, ToolkitError> {
        let new =
            NativeTool::new::<Empty, _, _>("links_new", "New link.", |ctx, _: Empty| async move {
                Ok(format!(
                    "created {}",
                    ctx.alias_manager().register("link", UUID).await?
                ))
            });
        let pick =
            NativeTool::new::<Pick, _, _>("links_pick", "Pick a link.", |_, p: Pick| async move {
                serde_json::json!({ "picked": p.link_id })
            });
        Toolkit::builder()
            .alias_manager(aliases)
            .native(new)
            .native(pick)
            .build()
    }

    struct Client {
        lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
        write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
        next: u64,
    }

    impl Client {
        /// A client over the client end of a duplex pipe.
        fn over(end: tokio::io::DuplexStream) -> Self {
            let (read, write) = tokio::io::split(end);
            Self {
                lines: BufReader::new(read).lines(),
                write,
                next: 0,
            }
        }

        /// Sends `initialize`; the server's answer.
        async fn initialize(&mut self) -> Value {
            self.request(
                "initialize",
                serde_json::json!({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}),
            )
            .await
        }

        async fn send(&mut self, message: Value) {
            let text = format!("{message}\n");
            self.write.write_all(text.as_bytes()).await.unwrap();
        }

        async fn request(&mut self, method: &str, params: Value) -> Value {
            self.next += 1;
            let id = self.next;
            self.send(serde_json::json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}))
                .await;
            loop {
                let line = self.lines.next_line().await.unwrap().unwrap();
                let reply: Value = serde_json::from_str(&line).unwrap();
                if reply["id"] == id {
                    return reply;
                }
            }
        }
    }

    async fn connect(
        server: McpServer,
    ) -> (Client, tokio::task::JoinHandle<Result<(), ServeError>>) {
        let (client, server_end) = tokio::io::duplex(1 << 20);
        let (read, write) = tokio::io::split(server_end);
        let serving = tokio::spawn(server.serve_io(read, write, std::future::pending()));
        let mut client = Client::over(client);
        let init = client.initialize().await;
        assert_eq!(init["result"]["serverInfo"]["name"], "links", "{init}");
        client
            .send(serde_json::json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
            .await;
        (client, serving)
    }

    #[tokio::test]
    async fn lists_calls_and_reports_tool_errors_as_results() {
        let sessions = Arc::new(Sessions::new((), Duration::from_secs(60)));
        let server = McpServer::new(toolkit)
            .with_sessions(sessions.clone())
            .with_server_info("links", "1");
        let (mut client, serving) = connect(server).await;

        let list = client.request("tools/list", serde_json::json!({})).await;
        let names: Vec<&str> = list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["links_new", "links_pick"]);
        assert_eq!(
            list["result"]["tools"][1]["inputSchema"]["properties"]["link_id"]["type"],
            "string"
        );

        let created = client
            .request(
                "tools/call",
                serde_json::json!({"name":"links_new","arguments":{}}),
            )
            .await;
        assert_eq!(
            created["result"]["content"][0]["text"], "created link-1",
            "{created}"
        );
        assert_eq!(created["result"]["isError"], false);

        let picked = client
            .request(
                "tools/call",
                serde_json::json!({"name":"links_pick","arguments":{"link_id":"link-1"}}),
            )
            .await;
        assert_eq!(
            picked["result"]["structuredContent"]["picked"], "link-1",
            "{picked}"
        );
        assert_eq!(picked["result"]["isError"], false);

        let invented = client
            .request(
                "tools/call",
                serde_json::json!({"name":"links_pick","arguments":{"link_id":"link-7"}}),
            )
            .await;
        assert_eq!(invented["result"]["isError"], true, "{invented}");
        assert!(
            invented["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("link-1"),
            "the error names the valid aliases: {invented}"
        );

        let unknown = client
            .request(
                "tools/call",
                serde_json::json!({"name":"nope","arguments":{}}),
            )
            .await;
        assert_eq!(unknown["error"]["code"], -32602, "{unknown}");

        // the stdio session's namespace lives in the shared Sessions
        assert!(sessions.alias_manager("stdio").resolve("link-1").is_some());

        drop(client);
        serving.await.unwrap().unwrap();
        assert!(
            sessions.is_empty(),
            "the ended session's namespace is forgotten"
        );
    }

    #[tokio::test]
    async fn the_shutdown_future_stops_a_session() {
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let server = McpServer::new(toolkit).with_server_info("links", "1");
        let (client_end, server_end) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(server_end);
        let serving = tokio::spawn(server.serve_io(read, write, async {
            let _ = rx.await;
        }));
        let mut client = Client::over(client_end);
        let init = client.initialize().await;
        assert!(init["result"].is_object());
        tx.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(5), serving)
            .await
            .expect("stopped in time")
            .unwrap()
            .unwrap();
        drop(client);
    }

    #[tokio::test]
    async fn one_toolkit_is_refused_for_http() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let server = McpServer::from_toolkit(toolkit(Arc::default()).unwrap());
        let err = server
            .serve_http_until(listener, std::future::ready(()))
            .await
            .unwrap_err();
        assert!(matches!(err, ServeError::SharedToolkit));
    }

    #[tokio::test]
    async fn a_toolkit_that_does_not_build_is_reported_before_serving() {
        let server = McpServer::new(|_| Err(ToolkitError::DuplicateName("x".into())));
        let (_client, server_end) = tokio::io::duplex(1024);
        let (read, write) = tokio::io::split(server_end);
        let err = server
            .serve_io(read, write, std::future::pending())
            .await
            .unwrap_err();
        assert!(matches!(err, ServeError::Toolkit(_)), "{err}");
    }

    use proto_ai_tools_tests::tools::feed;

    /// An MCP client's `notifications/cancelled` for a server-streaming tool
    /// call in progress cancels the stream at the tonic server.
    #[tokio::test]
    async fn a_client_cancelling_a_streaming_call_cancels_the_stream_at_the_server() {
        use proto_ai_tools_tests::{LinksBackend, serve};

        let grpc = serve(LinksBackend::default()).await.expect("a gRPC server");
        let transport =
            proto_ai_tools::transport::TonicTransport::new(grpc.channel().expect("a channel"));
        // Bounds no stream of this test reaches: only the client ends it.
        let mut unbounded = proto_ai_tools::executor::ExecutorOptions::default();
        unbounded.stream.max_messages = usize::MAX;
        unbounded.stream.max_bytes = usize::MAX;
        unbounded.stream.max_time = Duration::from_secs(600);
        let server = McpServer::new(move |aliases| {
            Toolkit::builder()
                .alias_manager(aliases.clone())
                .generated(
                    feed::Executor::with_alias_manager(transport.clone(), aliases)
                        .with_options(unbounded.clone()),
                )
                .build()
        })
        .with_server_info("links", "1");
        let (mut client, serving) = connect(server).await;
        // An endless stream, which no bound ends within the test.
        client
            .send(serde_json::json!({
                "jsonrpc": "2.0", "id": 100, "method": "tools/call",
                "params": {"name": "feed_follow", "arguments": {"count": 0, "interval_ms": 5}}
            }))
            .await;
        let mut waited = 0;
        while grpc.feed.sent() < 3 {
            assert!(waited < 500, "the stream never started");
            waited += 1;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(grpc.feed.cancelled(), 0);
        client
            .send(serde_json::json!({
                "jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 100, "reason": "the user moved on"}
            }))
            .await;
        let mut waited = 0;
        while grpc.feed.cancelled() < 1 {
            assert!(
                waited < 500,
                "the server kept streaming to a client that cancelled"
            );
            waited += 1;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // The session still serves.
        let list = client.request("tools/list", serde_json::json!({})).await;
        assert_eq!(list["result"]["tools"][0]["name"], "feed_follow", "{list}");
        drop(client);
        serving.await.unwrap().unwrap();
        grpc.shutdown().await;
    }
}

/// Stateless requests (protocol 2026-07-28) share their scope's toolkit
/// (`mcp/views.rs`): built once per scope while it is active, never another
/// scope's, never one on a namespace the scope no longer has, and nothing
/// a session enables leaks into it.
#[cfg(feature = "mcp")]
mod stateless_views {
    use std::net::SocketAddr;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use proto_ai_tools::{AliasManager, NativeTool, Sessions, Toolkit, toolkit::ToolkitError};
    use proto_ai_tools_mcp::{McpServer, ServeError};
    use proto_ai_tools_tests::http::{Response, exchange, http_request};
    use serde_json::Value;

    #[derive(serde::Deserialize, proto_ai_tools::ToolInput)]
    #[allow(dead_code)]
    struct Pick {
        /// A link.
        #[tool(alias_prefix = "link")]
        link_id: String,
    }

    #[derive(serde::Deserialize, proto_ai_tools::ToolInput)]
    struct Empty {}

    const UUID: &str = "d290f1ee-6c54-4b01-90e6-d701748f0851";

    /// `links_new` registers a link and answers its alias; `links_pick`
    /// answers the id an alias resolves to (shown as the alias again), and
    /// is an error for an alias its scope was never given. The tools are made once and
    /// cloned into each scope's toolkit; `built` counts the toolkits.
    fn factory(
        built: Arc<AtomicUsize>,
    ) -> impl Fn(Arc<AliasManager>) -> Result<Toolkit, ToolkitError> + Send + Sync + 'static {
        let new =
            NativeTool::new::<Empty, _, _>("links_new", "New link.", |ctx, _: Empty| async move {
                Ok(format!(
                    "created {}",
                    ctx.alias_manager().register("link", UUID).await?
                ))
            });
        let pick =
            NativeTool::new::<Pick, _, _>("links_pick", "Pick a link.", |_, p: Pick| async move {
                serde_json::json!({ "picked": p.link_id })
            });
        move |aliases| {
            built.fetch_add(1, Ordering::SeqCst);
            Toolkit::builder()
                .alias_manager(aliases)
                .native(new.clone())
                .native(pick.clone())
                .build()
        }
    }

    struct Running {
        addr: SocketAddr,
        stop: tokio::sync::oneshot::Sender<()>,
        serving: tokio::task::JoinHandle<Result<(), ServeError>>,
    }

    async fn serve(server: McpServer) -> Running {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(server.serve_http_until(listener, async {
            let _ = stopped.await;
        }));
        Running {
            addr,
            stop,
            serving,
        }
    }

    impl Running {
        async fn stop(self) {
            let _ = self.stop.send(());
            let _ = tokio::time::timeout(Duration::from_secs(10), self.serving).await;
        }
    }

    async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &Value) -> Response {
        let mut all = vec![
            ("Accept", "application/json, text/event-stream"),
            ("Content-Type", "application/json"),
        ];
        all.extend_from_slice(headers);
        exchange(
            addr,
            &http_request("POST", "/mcp", &all, &body.to_string()),
            Duration::from_secs(10),
        )
        .await
    }

    /// One stateless request of `method` (`name`: the tool's, for
    /// `Mcp-Name`) by `principal` (the scope header; none on a single-user
    /// server); its JSON-RPC answer.
    async fn stateless(
        addr: SocketAddr,
        principal: Option<&str>,
        method: &str,
        name: &str,
        params: Value,
    ) -> Value {
        let mut params = params;
        params["_meta"] = serde_json::json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        let body =
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut headers = vec![
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
        ];
        if !name.is_empty() {
            headers.push(("Mcp-Name", name));
        }
        if let Some(principal) = principal {
            headers.push(("x-principal", principal));
        }
        let response = post(addr, &headers, &body).await;
        assert_eq!(response.status, 200, "{response:?}");
        response.message()
    }

    async fn call(
        addr: SocketAddr,
        principal: Option<&str>,
        tool: &str,
        arguments: Value,
    ) -> Value {
        let answer = stateless(
            addr,
            principal,
            "tools/call",
            tool,
            serde_json::json!({"name": tool, "arguments": arguments}),
        )
        .await;
        answer["result"].clone()
    }

    fn text(result: &Value) -> &str {
        result["content"][0]["text"].as_str().unwrap_or_default()
    }

    async fn pick(addr: SocketAddr, principal: Option<&str>) -> Value {
        call(
            addr,
            principal,
            "links_pick",
            serde_json::json!({"link_id": "link-1"}),
        )
        .await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_scope_builds_its_toolkit_once_and_never_shares_it() {
        let built = Arc::new(AtomicUsize::new(0));
        let server = McpServer::new(factory(built.clone()))
            .with_alias_scope_header("x-principal")
            .unwrap();
        let running = serve(server).await;
        let addr = running.addr;
        // Once serving, the server has built its toolkits for the listing.
        stateless(addr, Some("warm"), "tools/list", "", serde_json::json!({})).await;
        let before = built.load(Ordering::SeqCst);

        let alice = Some("alice");
        assert_eq!(
            text(&call(addr, alice, "links_new", serde_json::json!({})).await),
            "created link-1"
        );
        let picked = pick(addr, alice).await;
        assert_eq!(picked["isError"], false, "{picked}");
        // Alice's three requests built one toolkit.
        assert_eq!(built.load(Ordering::SeqCst) - before, 1);

        // Bob never got link-1: a view of Alice's would resolve it.
        let bob = Some("bob");
        let refused = pick(addr, bob).await;
        assert_eq!(refused["isError"], true, "{refused}");
        assert_eq!(built.load(Ordering::SeqCst) - before, 2);
        // And Alice still has hers.
        assert_eq!(pick(addr, alice).await["isError"], false);
        assert_eq!(built.load(Ordering::SeqCst) - before, 2);
        running.stop().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_scope_forgotten_and_made_again_gets_a_new_toolkit_on_its_new_namespace() {
        let built = Arc::new(AtomicUsize::new(0));
        let sessions = Arc::new(Sessions::new((), Duration::from_secs(3600)));
        let server = McpServer::new(factory(built.clone()))
            .with_sessions(sessions.clone())
            .with_single_user(true);
        let running = serve(server).await;
        let addr = running.addr;
        // Once serving, the server has built its toolkits for the listing.
        stateless(addr, None, "tools/list", "", serde_json::json!({})).await;
        let before = built.load(Ordering::SeqCst);

        assert_eq!(
            text(&call(addr, None, "links_new", serde_json::json!({})).await),
            "created link-1"
        );
        assert_eq!(pick(addr, None).await["isError"], false);
        assert_eq!(built.load(Ordering::SeqCst) - before, 1);

        // The scope is forgotten (as at its expiry): its aliases are gone,
        // and a kept toolkit on the old namespace would still resolve them.
        assert!(sessions.remove("local").is_some());
        let refused = pick(addr, None).await;
        assert_eq!(refused["isError"], true, "{refused}");
        assert_eq!(built.load(Ordering::SeqCst) - before, 2);
        running.stop().await;
    }

    /// The toolsets a session enables are that session's: the stateless
    /// scopes' toolkits, kept across requests, never list them, before or
    /// after, and a stateless `enable_toolset` changes nothing kept.
    #[cfg(feature = "tool-search")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_toolset_a_session_enables_never_reaches_a_kept_stateless_toolkit() {
        use proto_ai_tools_mcp::ToolSearch;

        let built = Arc::new(AtomicUsize::new(0));
        let server = McpServer::new(factory(built.clone()))
            .with_alias_scope_header("x-principal")
            .unwrap()
            .with_tool_search(ToolSearch::new().define("picking", ["links_pick"]));
        let running = serve(server).await;
        let addr = running.addr;
        let listed = async |principal| {
            let answer = stateless(
                addr,
                Some(principal),
                "tools/list",
                "",
                serde_json::json!({}),
            )
            .await;
            let mut names: Vec<String> = answer["result"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned())
                .collect();
            names.sort();
            names
        };
        let before = listed("alice").await;
        assert!(before.contains(&"links_new".to_owned()), "{before:?}");
        assert!(!before.contains(&"links_pick".to_owned()), "{before:?}");
        // Alice's toolkit is made and kept.
        call(addr, Some("alice"), "links_new", serde_json::json!({})).await;

        // A session enables the toolset, and lists it.
        let initialize = serde_json::json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
        let started = post(addr, &[], &initialize).await;
        let session = started.header("mcp-session-id").unwrap().to_owned();
        let in_session = [
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ];
        let initialized = serde_json::json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        post(addr, &in_session, &initialized).await;
        let enable = serde_json::json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"enable_toolset","arguments":{"toolset":"picking"}}});
        let enabled = post(addr, &in_session, &enable).await.message();
        assert!(text(&enabled["result"]).starts_with("Enabled"), "{enabled}");
        let list = serde_json::json!({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}});
        let session_list = post(addr, &in_session, &list).await.message();
        assert!(
            session_list["result"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["name"] == "links_pick"),
            "{session_list}"
        );

        // Alice's list is as it was; so is a new caller's.
        assert_eq!(listed("alice").await, before);
        assert_eq!(listed("carol").await, before);
        // A stateless enable keeps nothing: the list stays as it was.
        let asked = call(
            addr,
            Some("alice"),
            "enable_toolset",
            serde_json::json!({"toolset": "picking"}),
        )
        .await;
        assert!(text(&asked).contains("no MCP session"), "{asked}");
        assert_eq!(listed("alice").await, before);
        // The kept toolkit still runs every tool, listed or not.
        assert_eq!(pick(addr, Some("alice")).await["isError"], false);
        running.stop().await;
    }
}
