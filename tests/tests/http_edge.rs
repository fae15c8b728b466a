//! The HTTP edge of `McpServer::serve_http_until` under abuse, driven by a
//! raw HTTP/1.1 client over loopback: bodies bounded before they are parsed,
//! no parse before the session is known, a cap on sessions and on
//! connections, header-read and idle timeouts, `Origin` validation, and the
//! statuses and JSON-RPC codes of malformed requests; then tool calls to
//! real tonic services: forwarded headers that fail closed, deadlines,
//! clients that cancel or drop their connection, and a stop that answers
//! the calls in flight. Each test fails against a
//! server without these limits (rmcp's and axum's defaults), but for the
//! `notifications/cancelled` one, which checks what already held.
//!
//! The tests run one at a time (`SERIAL`): one of them measures the test
//! process's peak memory, which the others would disturb.

#[cfg(not(feature = "mcp"))]
#[test]
fn http_edge_tests_need_the_mcp_feature() {
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr().lock(),
        "SKIPPED: the HTTP edge tests need the `mcp` feature: cargo test -p proto-ai-tools-tests --features mcp --test http_edge"
    );
    assert!(
        std::env::var_os("AI_TOOLS_REQUIRE_MCP").is_none(),
        "AI_TOOLS_REQUIRE_MCP is set but the tests were built without the `mcp` feature"
    );
}

#[cfg(feature = "mcp")]
mod edge {
    use std::net::SocketAddr;
    use std::time::{Duration, Instant};

    use proto_ai_tools::{NativeTool, Toolkit};
    use proto_ai_tools_mcp::{McpServer, ServeError};
    use proto_ai_tools_tests::http::{self, Response, read_response};
    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
    use tokio::net::TcpStream;

    /// One test at a time: the memory test reads the process's peak.
    static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

    /// How long any one wait of a test may last before it fails.
    const PATIENCE: Duration = Duration::from_secs(10);

    #[derive(serde::Deserialize, proto_ai_tools::ToolInput)]
    struct Items {
        /// Strings to count.
        items: Vec<String>,
    }

    fn server() -> McpServer {
        McpServer::new(|aliases| {
            let count = NativeTool::new::<Items, _, _>(
                "count",
                "Count strings.",
                |_, i: Items| async move { json!({ "count": i.items.len() }).to_string() },
            );
            Toolkit::builder()
                .alias_manager(aliases)
                .native(count)
                .build()
        })
        .with_server_info("edge", "1")
    }

    struct Running {
        addr: SocketAddr,
        stop: tokio::sync::oneshot::Sender<()>,
        serving: tokio::task::JoinHandle<Result<(), ServeError>>,
    }

    async fn start(server: McpServer) -> Running {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
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
            tokio::time::timeout(PATIENCE, self.serving)
                .await
                .expect("the server stops within the drain")
                .expect("the server task")
                .expect("the server stopped cleanly");
        }
    }

    /// A request to `/mcp` as the SDKs send it, with `extra` header lines.
    fn request(method: &str, session: Option<&str>, extra: &[(&str, &str)], body: &str) -> Vec<u8> {
        let mut head = format!(
            "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        );
        if let Some(id) = session {
            head.push_str(&format!("Mcp-Session-Id: {id}\r\n"));
        }
        for (name, value) in extra {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body.as_bytes());
        bytes
    }

    /// Sends one request on a new connection; its response, within
    /// [`PATIENCE`]. The request is written while the response is read: a
    /// server may answer (and close) before it has read the whole body.
    async fn exchange(addr: SocketAddr, request: &[u8]) -> Response {
        http::exchange(addr, request, PATIENCE).await
    }

    const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"edge-test","version":"1"}}}"#;
    const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

    /// `initialize`'s response.
    async fn initialize(addr: SocketAddr, extra: &[(&str, &str)]) -> Response {
        exchange(addr, &request("POST", None, extra, INITIALIZE)).await
    }

    /// A session, initialized; its id.
    async fn session(addr: SocketAddr) -> String {
        let init = initialize(addr, &[]).await;
        assert_eq!(init.status, 200, "{init:?}");
        let id = init
            .header("mcp-session-id")
            .expect("a session id")
            .to_owned();
        let note = exchange(addr, &request("POST", Some(&id), &[], INITIALIZED)).await;
        assert_eq!(note.status, 202, "{note:?}");
        id
    }

    fn call(id: u64, arguments: &Value) -> String {
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"count","arguments":arguments}})
            .to_string()
    }

    /// `VmHWM` (peak resident) and `VmRSS` (resident) of this process, KiB.
    fn memory_kib() -> (u64, u64) {
        let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{name} in /proc/self/status"))
        };
        (field("VmHWM:"), field("VmRSS:"))
    }

    /// A JSON-RPC `tools/call` of `bytes` bytes whose arguments are arrays
    /// nested ten deep, over and over: `[[[[[[[[[[0]]]]]]]]]],…`. The shape
    /// that cost the most to parse: before these limits one 4 MiB body
    /// without a session peaked at 0.5–1.2 GB.
    fn nested_call(bytes: usize) -> String {
        let head = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"count","arguments":{"items":["#;
        let tail = "0]}}}";
        let unit = "[[[[[[[[[[0]]]]]]]]]],";
        let mut body = String::with_capacity(bytes);
        body.push_str(head);
        while body.len() + unit.len() + tail.len() <= bytes {
            body.push_str(unit);
        }
        body.push_str(tail);
        body
    }

    /// The bound on the peak memory one refused 4 MiB body may add to the
    /// process (client and server both in it; the client's own copies of
    /// the body are 8 MiB of it).
    const MEMORY_BOUND_KIB: u64 = 64 * 1024;

    /// The bound on the peak one body at the default limit, nested, adds
    /// while rmcp parses it in a session (measured: about 83 MiB, some 260
    /// bytes per byte; its untagged enums buffer the message more than once).
    const SESSION_BODY_BOUND_KIB: u64 = 192 * 1024;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_body_past_the_limit_is_refused_naming_it_and_arguments_up_to_theirs_fit() {
        let _serial = SERIAL.lock().await;
        let running = start(server()).await;
        let addr = running.addr;
        let id = session(addr).await;

        // Arguments just under the argument limit (256 KiB) fit the body limit.
        let items: Vec<String> = (0..1000).map(|i| format!("{i:0>250}")).collect();
        let arguments = json!({ "items": items });
        let body = call(2, &arguments);
        assert!(
            arguments.to_string().len() > 250_000 && body.len() < 256 * 1024,
            "{}",
            body.len()
        );
        let fits = exchange(addr, &request("POST", Some(&id), &[], &body)).await;
        assert_eq!(fits.status, 200, "{fits:?}");
        assert_eq!(
            fits.message()["result"]["structuredContent"]["count"],
            1000,
            "{fits:?}"
        );

        // One byte past the limit, declared: refused before it is read.
        let limit = proto_ai_tools_mcp::DEFAULT_MAX_REQUEST_BODY_BYTES;
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nMcp-Session-Id: {id}\r\nContent-Length: {}\r\n\r\n",
            limit + 1
        );
        stream.write_all(head.as_bytes()).await.expect("sent");
        let mut reader = BufReader::new(stream);
        let refused = tokio::time::timeout(PATIENCE, read_response(&mut reader))
            .await
            .expect("refused without waiting for the body")
            .expect("a response");
        assert_eq!(refused.status, 413, "{refused:?}");
        let message = refused.message()["error"]["message"].to_string();
        assert!(
            message.contains(&limit.to_string()),
            "names the limit: {message}"
        );

        // The same, chunked (no length declared): refused while it streams.
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nMcp-Session-Id: {id}\r\nTransfer-Encoding: chunked\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).await.expect("sent");
        let (read, mut write) = stream.into_split();
        let writer = tokio::spawn(async move {
            let chunk = vec![b' '; 64 * 1024];
            for _ in 0..16 {
                let size = format!("{:x}\r\n", chunk.len());
                if write.write_all(size.as_bytes()).await.is_err()
                    || write.write_all(&chunk).await.is_err()
                    || write.write_all(b"\r\n").await.is_err()
                {
                    return;
                }
            }
        });
        let refused = tokio::time::timeout(PATIENCE, read_response(&mut BufReader::new(read)))
            .await
            .expect("refused in time")
            .expect("a response");
        assert_eq!(refused.status, 413, "{refused:?}");
        assert!(
            refused.message()["error"]["message"]
                .to_string()
                .contains(&limit.to_string()),
            "{refused:?}"
        );
        writer.abort();

        // A smaller limit, set on the builder.
        running.stop().await;
        let running = start(server().with_max_request_body_bytes(1000)).await;
        let id = session(running.addr).await;
        let body = call(3, &json!({ "items": ["x".repeat(1000)] }));
        let refused = exchange(running.addr, &request("POST", Some(&id), &[], &body)).await;
        assert_eq!(refused.status, 413, "{refused:?}");
        assert!(refused.body.contains("1000 bytes"), "{refused:?}");
        running.stop().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_nested_4_mib_body_is_refused_without_being_parsed() {
        let _serial = SERIAL.lock().await;
        let running = start(server()).await;
        let addr = running.addr;
        let body = nested_call(4 << 20);
        let (peak_before, rss_before) = memory_kib();

        // Without a session, the length declared: refused at once.
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.expect("sent");
        let refused = tokio::time::timeout(PATIENCE, read_response(&mut BufReader::new(stream)))
            .await
            .expect("refused in time")
            .expect("a response");
        assert_eq!(refused.status, 413, "{refused:?}");
        assert!(
            refused
                .body
                .contains(&proto_ai_tools_mcp::MAX_SESSIONLESS_BODY_BYTES.to_string()),
            "{refused:?}"
        );

        // Without a session, chunked, sent whole: read no further than the
        // sessionless limit.
        let stream = TcpStream::connect(addr).await.expect("connect");
        let (read, mut write) = stream.into_split();
        let chunked = body.clone();
        let writer = tokio::spawn(async move {
            let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\n\
                        Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
            if write.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            for chunk in chunked.as_bytes().chunks(64 * 1024) {
                let size = format!("{:x}\r\n", chunk.len());
                if write.write_all(size.as_bytes()).await.is_err()
                    || write.write_all(chunk).await.is_err()
                    || write.write_all(b"\r\n").await.is_err()
                {
                    return;
                }
            }
            let _ = write.write_all(b"0\r\n\r\n").await;
        });
        let refused = tokio::time::timeout(PATIENCE, read_response(&mut BufReader::new(read)))
            .await
            .expect("refused in time")
            .expect("a response");
        assert_eq!(refused.status, 413, "{refused:?}");
        writer.abort();

        // With an unknown session: 404 before the body is read.
        let unknown = exchange(addr, &request("POST", Some("no-such-session"), &[], &body)).await;
        assert_eq!(unknown.status, 404, "{unknown:?}");

        let (peak_after, rss_after) = memory_kib();
        eprintln!(
            "4 MiB nested body without a session: peak {peak_before} -> {peak_after} KiB, resident {rss_before} -> {rss_after} KiB"
        );
        assert!(
            peak_after - peak_before < MEMORY_BOUND_KIB,
            "the refused bodies raised the peak by {} KiB, past the bound of {MEMORY_BOUND_KIB} KiB",
            peak_after - peak_before
        );

        // The most a session's body can cost: the limit, nested the same way.
        let id = session(addr).await;
        let (peak_before, _) = memory_kib();
        let within = nested_call(proto_ai_tools_mcp::DEFAULT_MAX_REQUEST_BODY_BYTES);
        let parsed = exchange(addr, &request("POST", Some(&id), &[], &within)).await;
        let (peak_after, rss_after) = memory_kib();
        eprintln!(
            "{} bytes nested in a session (parsed by rmcp): status {}, peak {peak_before} -> {peak_after} KiB, resident {rss_after} KiB",
            within.len(),
            parsed.status
        );
        assert_eq!(parsed.status, 200, "{parsed:?}");
        assert!(
            peak_after - peak_before < SESSION_BODY_BOUND_KIB,
            "a body at the limit raised the peak by {} KiB, past the bound of {SESSION_BODY_BOUND_KIB} KiB",
            peak_after - peak_before
        );
        running.stop().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sessions_past_the_cap_are_refused_with_503_until_one_ends() {
        let _serial = SERIAL.lock().await;
        const CAP: usize = 50;
        const EXTRA: usize = 10;
        let running = start(server().with_max_sessions(CAP)).await;
        let addr = running.addr;
        let attempts: Vec<_> = (0..CAP + EXTRA)
            .map(|_| tokio::spawn(initialize(addr, &[])))
            .collect();
        let mut ids = Vec::new();
        let mut refused = Vec::new();
        for attempt in attempts {
            let response = attempt.await.expect("the attempt");
            match response.status {
                200 => ids.push(response.header("mcp-session-id").expect("an id").to_owned()),
                _ => refused.push(response),
            }
        }
        assert_eq!(ids.len(), CAP, "exactly the cap is admitted");
        assert_eq!(refused.len(), EXTRA);
        for response in &refused {
            assert_eq!(response.status, 503, "{response:?}");
            assert_eq!(response.header("retry-after"), Some("5"), "{response:?}");
            assert!(response.body.contains("maximum of 50"), "{response:?}");
        }
        // The sessions held all still serve.
        let first = exchange(addr, &request("POST", Some(&ids[0]), &[], INITIALIZED)).await;
        assert_eq!(first.status, 202, "{first:?}");
        // One ends: a new one is admitted, and only one.
        let ended = exchange(addr, &request("DELETE", Some(&ids[0]), &[], "")).await;
        assert_eq!(ended.status, 204, "{ended:?}");
        assert_eq!(initialize(addr, &[]).await.status, 200);
        assert_eq!(initialize(addr, &[]).await.status, 503);
        running.stop().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_idle_session_expires_and_frees_its_slot() {
        let _serial = SERIAL.lock().await;
        let idle = Duration::from_millis(800);
        let running = start(
            server()
                .with_max_sessions(2)
                .with_session_idle_timeout(idle),
        )
        .await;
        let addr = running.addr;
        let a = session(addr).await;
        let _b = session(addr).await;
        assert_eq!(initialize(addr, &[]).await.status, 503);
        let started = Instant::now();
        let admitted = loop {
            assert!(started.elapsed() < PATIENCE, "no slot came back");
            tokio::time::sleep(Duration::from_millis(100)).await;
            let response = initialize(addr, &[]).await;
            if response.status == 200 {
                break started.elapsed();
            }
        };
        assert!(admitted >= idle / 2, "admitted after {admitted:?}");
        let expired = exchange(addr, &request("POST", Some(&a), &[], INITIALIZED)).await;
        assert_eq!(
            expired.status, 404,
            "an expired session is unknown: {expired:?}"
        );
        running.stop().await;
    }

    /// Waits until the server closes `stream`; how long that took.
    async fn closed_within(stream: &mut TcpStream, limit: Duration) -> Duration {
        let started = Instant::now();
        let mut buf = [0u8; 1024];
        loop {
            let read = tokio::time::timeout(limit, stream.read(&mut buf))
                .await
                .unwrap_or_else(|_| panic!("the server kept the connection open past {limit:?}"));
            match read {
                Ok(0) | Err(_) => return started.elapsed(),
                Ok(_) => {}
            }
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn idle_and_slow_connections_are_closed_by_the_timeouts() {
        let _serial = SERIAL.lock().await;
        let header = Duration::from_millis(600);
        let idle = Duration::from_millis(2000);
        let running = start(server().with_header_timeout(header).with_idle_timeout(idle)).await;
        let addr = running.addr;
        let get = b"GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

        // A connection that never sends a byte: closed at the idle timeout.
        let mut silent = TcpStream::connect(addr).await.expect("connect");
        let took = closed_within(&mut silent, PATIENCE).await;
        assert!(
            took >= idle / 2,
            "closed after {took:?}, before the idle timeout"
        );

        // Kept alive between requests longer than the header timeout: still
        // served, then closed once idle.
        let mut kept = BufReader::new(TcpStream::connect(addr).await.expect("connect"));
        kept.get_mut().write_all(get).await.expect("sent");
        assert_eq!(
            read_response(&mut kept).await.expect("a response").status,
            404
        );
        tokio::time::sleep(header * 2).await;
        kept.get_mut().write_all(get).await.expect("sent");
        assert_eq!(
            read_response(&mut kept).await.expect("a response").status,
            404
        );
        let took = closed_within(kept.get_mut(), PATIENCE).await;
        assert!(took >= idle / 2, "closed after {took:?}");

        // Headers a byte every 150 ms (slowloris): closed at the header
        // timeout, long before they would end.
        let mut slow = TcpStream::connect(addr).await.expect("connect");
        let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
        let started = Instant::now();
        let mut sent = 0;
        for byte in head.as_bytes() {
            if slow.write_all(&[*byte]).await.is_err() {
                break;
            }
            sent += 1;
            tokio::time::sleep(Duration::from_millis(150)).await;
            let mut probe = [0u8; 64];
            if let Ok(Ok(0) | Err(_)) =
                tokio::time::timeout(Duration::from_millis(1), slow.read(&mut probe)).await
            {
                break;
            }
        }
        let took = started.elapsed();
        assert!(
            sent < head.len(),
            "all {sent} bytes of the headers were taken over {took:?}"
        );
        assert!(
            took < header + Duration::from_secs(4),
            "closed after {took:?}"
        );

        running.stop().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_slow_body_is_refused_with_408() {
        let _serial = SERIAL.lock().await;
        let running = start(server().with_header_timeout(Duration::from_millis(600))).await;
        let stream = TcpStream::connect(running.addr).await.expect("connect");
        let (read, mut write) = stream.into_split();
        let full = request("POST", None, &[], INITIALIZE);
        let split = full.len() - INITIALIZE.len() + 1;
        write.write_all(&full[..split]).await.expect("sent");
        let rest = full[split..].to_vec();
        let trickle = tokio::spawn(async move {
            for byte in rest {
                if write.write_all(&[byte]).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(150)).await;
            }
        });
        let started = Instant::now();
        let refused = tokio::time::timeout(PATIENCE, read_response(&mut BufReader::new(read)))
            .await
            .expect("answered in time")
            .expect("a response");
        assert_eq!(refused.status, 408, "{refused:?}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        trickle.abort();
        running.stop().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn connections_past_the_cap_wait_until_one_closes() {
        let _serial = SERIAL.lock().await;
        let running = start(server().with_max_connections(2)).await;
        let addr = running.addr;
        let get = b"GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
        let mut held = Vec::new();
        for _ in 0..2 {
            let mut stream = BufReader::new(TcpStream::connect(addr).await.expect("connect"));
            stream.get_mut().write_all(get).await.expect("sent");
            assert_eq!(
                read_response(&mut stream).await.expect("served").status,
                404
            );
            held.push(stream);
        }
        // The third connects (the kernel's backlog) but is not served.
        let mut third = BufReader::new(TcpStream::connect(addr).await.expect("connect"));
        third.get_mut().write_all(get).await.expect("sent");
        let waited =
            tokio::time::timeout(Duration::from_millis(800), read_response(&mut third)).await;
        assert!(waited.is_err(), "a third connection was served: {waited:?}");
        // One closes: the third is served.
        drop(held.pop());
        let served = tokio::time::timeout(PATIENCE, read_response(&mut third))
            .await
            .expect("served once a connection closed")
            .expect("a response");
        assert_eq!(served.status, 404);
        running.stop().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_foreign_origin_is_refused_a_loopback_one_and_none_pass() {
        let _serial = SERIAL.lock().await;
        let running = start(server().with_allowed_origins(["https://app.example.com:443"])).await;
        let addr = running.addr;
        let foreign = initialize(addr, &[("Origin", "http://evil.example")]).await;
        assert_eq!(foreign.status, 403, "{foreign:?}");
        let foreign_port = initialize(addr, &[("Origin", "https://app.example.com:8443")]).await;
        assert_eq!(foreign_port.status, 403, "{foreign_port:?}");
        for origin in [
            "http://localhost:6274",
            "http://127.0.0.1:3000",
            "http://[::1]:8080",
            "https://app.example.com",
        ] {
            let passed = initialize(addr, &[("Origin", origin)]).await;
            assert_eq!(passed.status, 200, "{origin}: {passed:?}");
        }
        assert_eq!(initialize(addr, &[]).await.status, 200, "no Origin passes");
        running.stop().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn malformed_requests_get_the_statuses_and_codes_the_specs_give() {
        let _serial = SERIAL.lock().await;
        let running = start(server()).await;
        let addr = running.addr;
        let id = session(addr).await;

        // DELETE of a session the server does not hold: 404; of its own: 204.
        let unknown = exchange(addr, &request("DELETE", Some("no-such-session"), &[], "")).await;
        assert_eq!(unknown.status, 404, "{unknown:?}");

        // Not JSON: 400 with a JSON-RPC parse error, in a session or not.
        for session in [Some(id.as_str()), None] {
            let invalid = exchange(
                addr,
                &request("POST", session, &[], r#"{"jsonrpc":"2.0","id":1,"#),
            )
            .await;
            assert_eq!(invalid.status, 400, "{invalid:?}");
            assert_eq!(invalid.message()["error"]["code"], -32700, "{invalid:?}");
        }
        // JSON but not a JSON-RPC message: 400, invalid request.
        let not_rpc = exchange(
            addr,
            &request("POST", Some(&id), &[], r#"{"hello":"world"}"#),
        )
        .await;
        assert_eq!(not_rpc.status, 400, "{not_rpc:?}");
        assert_eq!(not_rpc.message()["error"]["code"], -32600, "{not_rpc:?}");

        // A request other than initialize without a session: 400.
        let sessionless = exchange(
            addr,
            &request("POST", None, &[], &call(5, &json!({"items": []}))),
        )
        .await;
        assert_eq!(sessionless.status, 400, "{sessionless:?}");

        // `arguments` as an array: invalid params.
        let array = exchange(
            addr,
            &request("POST", Some(&id), &[], &call(6, &json!(["a", "b"]))),
        )
        .await;
        assert_eq!(array.status, 200, "{array:?}");
        let error = &array.message()["error"];
        assert_eq!(error["code"], -32602, "{array:?}");
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains("must be a JSON object")),
            "{array:?}"
        );
        // An unknown method is still an unknown method.
        let unknown_method = exchange(
            addr,
            &request(
                "POST",
                Some(&id),
                &[],
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/frobnicate","params":{}}"#,
            ),
        )
        .await;
        assert_eq!(
            unknown_method.message()["error"]["code"],
            -32601,
            "{unknown_method:?}"
        );

        let ended = exchange(addr, &request("DELETE", Some(&id), &[], "")).await;
        assert_eq!(ended.status, 204, "{ended:?}");
        let again = exchange(addr, &request("DELETE", Some(&id), &[], "")).await;
        assert_eq!(again.status, 404, "{again:?}");
        running.stop().await;
    }

    // Tool calls over HTTP: forwarded headers that fail closed, deadlines,
    // and clients that go away, against real tonic services on loopback.

    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

    use proto_ai_tools_tests::pb::links_service_server::{LinksService, LinksServiceServer};
    use proto_ai_tools_tests::{LinksBackend, links_mcp_server, new_uuid, pb};

    /// An MCP server of the links tools, calling `channel` through tonic.
    fn links_server(channel: tonic::transport::Channel) -> McpServer {
        links_mcp_server(channel).with_server_info("links", "1")
    }

    fn channel(addr: SocketAddr) -> tonic::transport::Channel {
        tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
            .expect("a URL")
            .connect_lazy()
    }

    fn tool_call(id: u64, name: &str, arguments: &Value) -> String {
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":arguments}})
            .to_string()
    }

    /// A tool call's result: whether it is an error, and its text.
    fn tool_result(response: &Response) -> (bool, String) {
        let message = response.message();
        let result = &message["result"];
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("a tool result: {message}"))
            .to_owned();
        (result["isError"] == true, text)
    }

    /// A links service whose `CreateLink` stalls for `stall_ms` before it
    /// creates anything, recording each call as started, then finished or
    /// cancelled (its handler dropped mid-stall: the client reset the
    /// stream, or the `grpc-timeout` it sent passed).
    #[derive(Clone, Default)]
    struct Stalling {
        stall_ms: Arc<AtomicU64>,
        started: Arc<AtomicUsize>,
        finished: Arc<AtomicUsize>,
        cancelled: Arc<AtomicUsize>,
    }

    /// Counts a cancellation when dropped before it is defused.
    struct Cancelled(Option<Arc<AtomicUsize>>);

    impl Drop for Cancelled {
        fn drop(&mut self) {
            if let Some(count) = self.0.take() {
                count.fetch_add(1, Ordering::SeqCst);
            }
        }
    }

    impl Stalling {
        fn new(stall: Duration) -> Self {
            let stalling = Self::default();
            stalling.set_stall(stall);
            stalling
        }

        fn set_stall(&self, stall: Duration) {
            self.stall_ms
                .store(stall.as_millis() as u64, Ordering::SeqCst);
        }

        fn count(&self) -> (usize, usize, usize) {
            (
                self.started.load(Ordering::SeqCst),
                self.finished.load(Ordering::SeqCst),
                self.cancelled.load(Ordering::SeqCst),
            )
        }

        /// Waits until `done` holds of (started, finished, cancelled), at
        /// most `PATIENCE`; the counts then.
        async fn until(
            &self,
            done: impl Fn((usize, usize, usize)) -> bool,
        ) -> (usize, usize, usize) {
            let started = Instant::now();
            while !done(self.count()) && started.elapsed() < PATIENCE {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            self.count()
        }

        async fn serve(&self) -> proto_ai_tools_tests::Server {
            let router = tonic::transport::Server::builder()
                .add_service(LinksServiceServer::new(self.clone()));
            proto_ai_tools_tests::serve_router("127.0.0.1:0".parse().expect("addr"), router)
                .await
                .expect("bind")
        }
    }

    #[tonic::async_trait]
    impl LinksService for Stalling {
        async fn create_link(
            &self,
            request: tonic::Request<pb::CreateLinkRequest>,
        ) -> Result<tonic::Response<pb::CreateLinkResponse>, tonic::Status> {
            self.started.fetch_add(1, Ordering::SeqCst);
            let mut cancelled = Cancelled(Some(self.cancelled.clone()));
            let stall = Duration::from_millis(self.stall_ms.load(Ordering::SeqCst));
            tokio::time::sleep(stall).await;
            cancelled.0 = None;
            self.finished.fetch_add(1, Ordering::SeqCst);
            let link = pb::Link {
                id: new_uuid(),
                page_theme_id: new_uuid(),
                destination: request.into_inner().destination,
                ..Default::default()
            };
            Ok(tonic::Response::new(pb::CreateLinkResponse {
                link: Some(link),
            }))
        }

        async fn update_link(
            &self,
            _request: tonic::Request<pb::UpdateLinkRequest>,
        ) -> Result<tonic::Response<pb::UpdateLinkResponse>, tonic::Status> {
            Err(tonic::Status::unimplemented("not here"))
        }

        async fn list_links(
            &self,
            _request: tonic::Request<pb::ListLinksRequest>,
        ) -> Result<tonic::Response<pb::ListLinksResponse>, tonic::Status> {
            Ok(tonic::Response::new(pb::ListLinksResponse::default()))
        }
    }

    const CREATE: &str = "links_create";

    fn create_args() -> Value {
        json!({"destination": "https://example.com/x"})
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_forwarded_header_that_cannot_be_forwarded_refuses_the_call_and_nothing_is_sent() {
        let _serial = SERIAL.lock().await;
        let grpc = proto_ai_tools_tests::serve(LinksBackend::with_links(0))
            .await
            .expect("bind");
        let server = links_server(grpc.channel().expect("a channel"))
            .forward_headers(["authorization", "x-tenant", "x-trace-bin"])
            .expect("forwardable");
        let running = start(server).await;
        let addr = running.addr;
        let id = session(addr).await;
        let body = tool_call(2, CREATE, &create_args());

        // Values gRPC metadata cannot carry: UTF-8, a tab, base64 that is not.
        let refused: [(&str, &str, &str); 4] = [
            ("x-tenant", "X-Tenant", "t\u{e9}nant-secret"),
            ("authorization", "Authorization", "Bearer caf\u{e9}-secret"),
            ("x-tenant", "X-Tenant", "acme\tsecret"),
            ("x-trace-bin", "X-Trace-Bin", "not base64 secret!"),
        ];
        for (name, header, value) in refused {
            let response =
                exchange(addr, &request("POST", Some(&id), &[(header, value)], &body)).await;
            assert_eq!(response.status, 200, "{response:?}");
            let (is_error, text) = tool_result(&response);
            assert!(is_error, "{name}: {text}");
            assert!(
                text.contains(&format!("`{name}`")),
                "names the header: {text}"
            );
            assert!(!text.contains("secret"), "never its value: {text}");
            assert!(
                text.contains("nothing was sent") && text.contains("retrying will not help"),
                "{text}"
            );
        }
        // A header sent more than once: 2, and 90 as in the issue's probe.
        for times in [2, 90] {
            let lines: Vec<(&str, &str)> = (0..times)
                .map(|i| {
                    (
                        "Authorization",
                        if i % 2 == 0 {
                            "Bearer a-secret"
                        } else {
                            "Bearer b-secret"
                        },
                    )
                })
                .collect();
            let response = exchange(addr, &request("POST", Some(&id), &lines, &body)).await;
            let (is_error, text) = tool_result(&response);
            assert!(is_error, "{times}: {text}");
            assert!(
                text.contains("`authorization`")
                    && text.contains(&format!("appears {times} times")),
                "{text}"
            );
            assert!(
                text.contains("single-valued") && !text.contains("secret"),
                "{text}"
            );
        }
        assert!(
            grpc.backend.received().is_empty(),
            "the service saw a refused call: {:?}",
            grpc.backend.received()
        );
        assert!(grpc.backend.links().is_empty(), "a link was created");

        // One of each, forwardable: the call is made, and carries them.
        let response = exchange(
            addr,
            &request(
                "POST",
                Some(&id),
                &[
                    ("Authorization", "Bearer t0ken"),
                    ("X-Tenant", "acme"),
                    ("X-Trace-Bin", "AQI=, Aw"),
                ],
                &body,
            ),
        )
        .await;
        let (is_error, text) = tool_result(&response);
        assert!(!is_error, "{text}");
        let requests = grpc.backend.requests();
        assert_eq!(requests.len(), 1, "{requests:?}");
        let metadata = &requests[0].1;
        assert_eq!(metadata.ascii("authorization"), Some("Bearer t0ken"));
        assert_eq!(metadata.ascii("x-tenant"), Some("acme"));
        assert_eq!(
            metadata.values("x-trace-bin"),
            [
                &proto_ai_tools_tests::MetadataValue::Binary(vec![1, 2]),
                &proto_ai_tools_tests::MetadataValue::Binary(vec![3])
            ]
        );
        running.stop().await;
        grpc.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stalled_service_meets_the_deadline_with_an_error_the_model_can_act_on() {
        let _serial = SERIAL.lock().await;
        let backend = Stalling::new(Duration::from_secs(20));
        let grpc = backend.serve().await;

        // A tool's own deadline must name one of the server's tools.
        let typo = links_server(channel(grpc.addr))
            .with_tool_timeout("links_craete", Duration::from_secs(1));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let error = typo
            .serve_http_until(listener, std::future::ready(()))
            .await
            .expect_err("an unknown tool");
        assert!(
            matches!(&error, ServeError::UnknownTool { tool, .. } if tool == "links_craete")
                && error.to_string().contains("links_create"),
            "{error}"
        );

        let deadline = Duration::from_millis(300);
        let server = links_server(channel(grpc.addr)).with_call_timeout(Some(deadline));
        let running = start(server).await;
        let addr = running.addr;
        let id = session(addr).await;
        let started = Instant::now();
        let response = exchange(
            addr,
            &request(
                "POST",
                Some(&id),
                &[],
                &tool_call(2, CREATE, &create_args()),
            ),
        )
        .await;
        let took = started.elapsed();
        let (is_error, text) = tool_result(&response);
        assert!(is_error, "{text}");
        assert!(
            text.starts_with("links_create failed with gRPC status DEADLINE_EXCEEDED")
                && text.contains("0.3 s")
                && text.contains("may or may not have taken effect"),
            "{text}"
        );
        assert!(
            took < Duration::from_secs(3),
            "the deadline was not kept: {took:?}"
        );
        // The service saw the deadline pass: its handler was cancelled.
        assert_eq!(backend.until(|(_, _, c)| c == 1).await, (1, 0, 1));
        running.stop().await;

        // A tool's own deadline comes first: 2 s for links_create, over 300 ms.
        let server = links_server(channel(grpc.addr))
            .with_call_timeout(Some(deadline))
            .with_tool_timeout(CREATE, Duration::from_secs(2));
        let running = start(server).await;
        let addr = running.addr;
        let id = session(addr).await;
        backend.set_stall(Duration::from_millis(700));
        let response = exchange(
            addr,
            &request(
                "POST",
                Some(&id),
                &[],
                &tool_call(3, CREATE, &create_args()),
            ),
        )
        .await;
        let (is_error, text) = tool_result(&response);
        assert!(!is_error, "{text}");
        assert_eq!(backend.count(), (2, 1, 1));
        println!(
            "figure: a 300 ms deadline held against a 20 s stall, the call answered after {took:?}"
        );
        running.stop().await;
        grpc.stop().await;
    }

    /// Starts a `tools/call` of `links_create` on a connection of its own
    /// and reads its response head; the connection, to drop or keep.
    async fn call_in_flight(addr: SocketAddr, session: &str, id: u64) -> BufReader<TcpStream> {
        let mut stream = BufReader::new(TcpStream::connect(addr).await.expect("connect"));
        let body = tool_call(id, CREATE, &create_args());
        stream
            .get_mut()
            .write_all(&request("POST", Some(session), &[], &body))
            .await
            .expect("sent");
        let mut status = String::new();
        tokio::time::timeout(PATIENCE, stream.read_line(&mut status))
            .await
            .expect("a response head in time")
            .expect("read");
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        stream
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cancelled_request_cancels_its_backend_call() {
        let _serial = SERIAL.lock().await;
        let backend = Stalling::new(Duration::from_secs(20));
        let grpc = backend.serve().await;
        let running = start(links_server(channel(grpc.addr))).await;
        let addr = running.addr;
        let id = session(addr).await;

        let in_flight = call_in_flight(addr, &id, 7).await;
        assert_eq!(
            backend.until(|(s, _, _)| s == 1).await.0,
            1,
            "the call reached the service"
        );
        let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"the user stopped it"}}"#;
        let sent = Instant::now();
        let note = exchange(addr, &request("POST", Some(&id), &[], cancel)).await;
        assert_eq!(note.status, 202, "{note:?}");
        assert_eq!(
            backend.until(|(_, _, c)| c == 1).await,
            (1, 0, 1),
            "the service's handler was not cancelled"
        );
        let took = sent.elapsed();
        assert!(took < Duration::from_secs(2), "{took:?}");
        println!("figure: notifications/cancelled reached the service's handler after {took:?}");
        drop(in_flight);
        running.stop().await;
        grpc.stop().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_client_that_drops_its_connection_cancels_its_backend_call() {
        let _serial = SERIAL.lock().await;
        let backend = Stalling::new(Duration::from_secs(20));
        let grpc = backend.serve().await;
        let running = start(links_server(channel(grpc.addr))).await;
        let addr = running.addr;
        let id = session(addr).await;

        // The client reads the head of the event stream, then goes away.
        let in_flight = call_in_flight(addr, &id, 8).await;
        assert_eq!(
            backend.until(|(s, _, _)| s == 1).await.0,
            1,
            "the call reached the service"
        );
        let dropped = Instant::now();
        drop(in_flight);
        assert_eq!(
            backend.until(|(_, _, c)| c == 1).await,
            (1, 0, 1),
            "the service's handler was not cancelled"
        );
        let took = dropped.elapsed();
        assert!(took < Duration::from_secs(2), "{took:?}");
        println!(
            "figure: a dropped connection reached the service's handler as a cancellation after {took:?}"
        );

        // The session goes on.
        backend.set_stall(Duration::ZERO);
        let response = exchange(
            addr,
            &request(
                "POST",
                Some(&id),
                &[],
                &tool_call(9, CREATE, &create_args()),
            ),
        )
        .await;
        let (is_error, text) = tool_result(&response);
        assert!(!is_error, "{text}");
        assert_eq!(backend.count(), (2, 1, 1));
        running.stop().await;

        // Unless told to keep it: the call runs to its end.
        backend.set_stall(Duration::from_millis(500));
        let running =
            start(links_server(channel(grpc.addr)).with_cancel_on_disconnect(false)).await;
        let addr = running.addr;
        let id = session(addr).await;
        let in_flight = call_in_flight(addr, &id, 10).await;
        assert_eq!(backend.until(|(s, _, _)| s == 3).await.0, 3);
        drop(in_flight);
        assert_eq!(
            backend.until(|(_, f, _)| f == 2).await,
            (3, 2, 1),
            "kept running"
        );
        running.stop().await;
        grpc.stop().await;
    }

    /// The JSON-RPC messages of what is left of a response whose status
    /// line was read: every `data:` line of its event stream, read until
    /// the server closes the connection.
    async fn rest_of_stream(mut stream: BufReader<TcpStream>) -> Vec<Value> {
        let mut rest = String::new();
        tokio::time::timeout(PATIENCE, stream.read_to_string(&mut rest))
            .await
            .expect("the connection closed in time")
            .expect("read");
        rest.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .filter(|m| m.get("jsonrpc").is_some())
            .collect()
    }

    /// A stop (the gateway's SIGTERM) lets the calls in flight run to their
    /// end and answers them before the sessions end; a request that comes
    /// meanwhile is answered `503` with `Retry-After`, and reaches nothing.
    /// Before, rmcp's sessions were ended at once and the calls in flight
    /// got no answer.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stop_answers_the_calls_in_flight_before_it_ends_the_sessions() {
        let _serial = SERIAL.lock().await;
        let stall = Duration::from_millis(1500);
        let backend = Stalling::new(stall);
        let grpc = backend.serve().await;
        let running = start(links_server(channel(grpc.addr))).await;
        let addr = running.addr;
        let id = session(addr).await;

        let first = call_in_flight(addr, &id, 21).await;
        let second = call_in_flight(addr, &id, 22).await;
        assert_eq!(
            backend.until(|(s, _, _)| s == 2).await.0,
            2,
            "both calls reached the service"
        );
        let stopped_at = Instant::now();
        let _ = running.stop.send(());
        // A request on a new connection hears why, and when to come back.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut late = TcpStream::connect(addr).await.expect("still listening");
        late.write_all(&request("POST", Some(&id), &[], INITIALIZE))
            .await
            .expect("sent");
        let mut answer = Vec::new();
        tokio::time::timeout(PATIENCE, late.read_to_end(&mut answer))
            .await
            .expect("answered, then closed")
            .expect("read");
        let answer = String::from_utf8_lossy(&answer).to_ascii_lowercase();
        assert!(
            answer.starts_with("http/1.1 503")
                && answer.contains("retry-after: 1\r\n")
                && answer.contains("connection: close\r\n")
                && answer.contains("is stopping"),
            "{answer}"
        );

        for (stream, call) in [(first, 21), (second, 22)] {
            let messages = rest_of_stream(stream).await;
            let answer = messages
                .iter()
                .find(|m| m["id"] == call)
                .unwrap_or_else(|| panic!("call {call} got no answer: {messages:?}"));
            assert!(
                answer["result"].is_object() && answer["result"]["isError"] != true,
                "call {call}: {answer}"
            );
        }
        assert_eq!(
            backend.count(),
            (2, 2, 0),
            "the service finished both calls, none cancelled"
        );
        tokio::time::timeout(PATIENCE, running.serving)
            .await
            .expect("the server stops once the calls are answered")
            .expect("the server task")
            .expect("the server stopped cleanly");
        let took = stopped_at.elapsed();
        assert!(
            took < stall + Duration::from_secs(2),
            "the stop waited for more than the calls: {took:?}"
        );
        println!("figure: a stop with two calls in flight ended after {took:?}");
        grpc.stop().await;
    }
}
