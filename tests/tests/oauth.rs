//! The MCP gateway as an OAuth 2.1 resource server, end to end with real
//! parts on loopback:
//!
//! - a real authorization server: the npm package `oauth2-mock-server`
//!   (`tests/oauth/authorization_server.mjs`, packages from `tests/node`),
//!   with discovery, a JWKS, the authorization-code grant with PKCE, and
//!   tokens whose subject, scopes, audience and lifetime each test chooses;
//! - a real gRPC backend of another stack: grpcio
//!   (`tests/oauth/backend.py`), which logs the metadata of every call;
//! - the gateway, `McpServer::with_oauth`, in this process, spoken to in raw
//!   HTTP/1.1 where statuses and headers are checked, and by the official
//!   MCP Python SDK's OAuth client (`tests/oauth/mcp_oauth_client.py`)
//!   through discovery.
//!
//! Each refusal is checked for its status, its `WWW-Authenticate` challenge,
//! and that no call reached the backend; the backend of an accepted call sees
//! the configured claim headers and the gateway's own credential, never the
//! MCP token. Opaque tokens are introspected (the authorization server
//! checks the gateway's client credentials); what OAuth rules out is refused
//! at start; a session answers only the user who started it.
//!
//! They need Node.js with `npm ci` run in `tests/node`, and a Python with
//! `mcp` and `grpc` (`.ci/run` makes both). Without them the tests skip
//! saying why, unless `AI_TOOLS_REQUIRE_NODE` or `AI_TOOLS_REQUIRE_PYTHON`
//! is set, as `.ci/run` does: then they fail.

#[cfg(not(feature = "oauth"))]
#[test]
fn oauth_tests_need_the_oauth_feature() {
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr().lock(),
        "SKIPPED: the OAuth tests need the `oauth` feature: cargo test -p proto-ai-tools-tests --features oauth --test oauth"
    );
    for required in ["AI_TOOLS_REQUIRE_NODE", "AI_TOOLS_REQUIRE_PYTHON"] {
        assert!(
            std::env::var_os(required).is_none_or(|v| v.is_empty() || v == "0"),
            "{required} is set but the tests were built without the `oauth` feature"
        );
    }
}

#[cfg(feature = "oauth")]
mod oauth {
    use std::net::SocketAddr;
    use std::path::PathBuf;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use proto_ai_tools::transport::CallOptions;
    use proto_ai_tools_mcp::{
        AUTHORIZATION_SERVER_TIMEOUT, JWKS_REFRESH_INTERVAL, McpServer, OAuth, ServeError,
    };
    use proto_ai_tools_tests::http::Response;
    use proto_ai_tools_tests::links_mcp_server;
    use proto_ai_tools_tests::oauth::{
        self, AuthorizationServer, BACKEND_MODULES, Backend, BackendCall, Expected, INITIALIZE,
        INTROSPECTION_CLIENT, INTROSPECTION_SECRET, PATIENCE, TempDir, assert_called,
        assert_resource_metadata, assert_unauthorized, list_links, tool_call, tools_or_skip,
        workspace,
    };
    use serde_json::{Value, json};

    // The tests of opaque tokens, and of what start refuses, in files of
    // their own beside this one (`oauth/`).
    mod introspection;
    mod start;

    /// The gateway's own credential to the backend.
    const BACKEND_CREDENTIAL: &str = "Bearer backend-secret";
    const REQUIRED_SCOPE: &str = "mcp:use";
    const READ_SCOPE: &str = "tools:read";
    const WRITE_SCOPE: &str = "tools:write";
    /// Every scope a full user holds.
    const ALL_SCOPES: &str = "mcp:use tools:read tools:write";
    /// The links tools, and which of them is read-only (`ListLinks` has
    /// `idempotency_level = NO_SIDE_EFFECTS`).
    const ALL_TOOLS: [&str; 5] = [
        "links_create",
        "links_list",
        "links_update",
        "workflow_steps_create",
        "workflow_steps_delete",
    ];
    const READ_ONLY_TOOLS: [&str; 1] = ["links_list"];

    /// The gateway, in this process: the links tools over tonic to the
    /// backend, as an OAuth resource server of `resource`.
    struct Gateway {
        addr: SocketAddr,
        resource: String,
        stop: tokio::sync::oneshot::Sender<()>,
        serving: tokio::task::JoinHandle<Result<(), ServeError>>,
    }

    impl Gateway {
        /// The gateway of the tests on a port of its own; `configure` gets
        /// the standard [`OAuth`] and the issuer.
        async fn start(
            issuer: &str,
            backend: SocketAddr,
            configure: impl FnOnce(OAuth, &str) -> OAuth,
        ) -> Self {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            let addr = listener.local_addr().expect("addr");
            let resource = format!("http://{addr}/mcp");
            let server =
                gateway_server(backend, configure(oauth_config(&resource, issuer), issuer));
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let serving = tokio::spawn(server.serve_http_until(listener, async {
                let _ = stopped.await;
            }));
            Self {
                addr,
                resource,
                stop,
                serving,
            }
        }

        fn metadata_url(&self) -> String {
            oauth::metadata_url(self.addr)
        }

        /// A JSON-RPC message to `/mcp`, with `token` as the bearer.
        async fn post(&self, token: Option<&str>, session: Option<&str>, body: &str) -> Response {
            oauth::post(self.addr, token, session, body).await
        }

        /// A session of the user of `token`, initialized; its id.
        async fn session(&self, token: &str) -> String {
            oauth::session(self.addr, token).await
        }

        /// The tools the user of `token` is shown.
        async fn tool_names(&self, token: &str) -> Vec<String> {
            oauth::tool_names(self.addr, token).await
        }

        async fn stop(self) {
            let _ = self.stop.send(());
            tokio::time::timeout(PATIENCE, self.serving)
                .await
                .expect("the gateway stops in time")
                .expect("the gateway task")
                .expect("the gateway stopped cleanly");
        }
    }

    /// The OAuth configuration of the tests' gateway at `resource`.
    fn oauth_config(resource: &str, issuer: &str) -> OAuth {
        OAuth::new(resource, issuer)
            .required_scope(REQUIRED_SCOPE)
            .tool_scopes(READ_SCOPE, WRITE_SCOPE)
            .claim_header("sub", "x-user-id")
            .claim_header("email", "x-user-email")
    }

    /// The links tools of `backend` as an MCP server protected by `oauth`,
    /// sending the backend the gateway's own credential.
    fn gateway_server(backend: SocketAddr, oauth: OAuth) -> McpServer {
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{backend}"))
            .expect("a URL")
            .connect_lazy();
        links_mcp_server(channel)
            .with_server_info("links", "1")
            .with_oauth(oauth)
            .with_call_options(CallOptions::new().metadata("authorization", BACKEND_CREDENTIAL))
    }

    /// Everything one test runs against.
    struct Setup {
        authorization: AuthorizationServer,
        backend: Backend,
        gateway: Gateway,
        python: PathBuf,
        _dir: TempDir,
    }

    async fn setup(test: &str) -> Option<Setup> {
        setup_with(test, &[], |oauth, _| oauth).await
    }

    /// [`setup`] with arguments to the authorization server, and the
    /// gateway's [`OAuth`] changed by `configure` (given the issuer).
    async fn setup_with(
        test: &str,
        authorization_args: &[&str],
        configure: impl FnOnce(OAuth, &str) -> OAuth,
    ) -> Option<Setup> {
        let (node, python) = tools_or_skip(&format!("mcp, {BACKEND_MODULES}"))?;
        let dir = TempDir::new(test);
        let authorization = AuthorizationServer::start(&node, authorization_args);
        let backend = Backend::start(&python, &dir.0);
        let gateway = Gateway::start(&authorization.issuer, backend.addr, configure).await;
        Some(Setup {
            authorization,
            backend,
            gateway,
            python,
            _dir: dir,
        })
    }

    impl Setup {
        /// `links_list` with `token` on `session`, expected to go through
        /// and reach the backend as its `n`th call, as `sub` (with `email`,
        /// if given) and without the token; the calls so far.
        async fn call_reaching_backend(
            &self,
            (token, session): (&str, &str),
            n: usize,
            (sub, email): (&str, Option<&str>),
            case: &str,
        ) -> Vec<BackendCall> {
            let called = self
                .gateway
                .post(Some(token), Some(session), &list_links())
                .await;
            assert_called(&called, case);
            let calls = self.backend.calls_when(n).await;
            assert_eq!(
                calls.len(),
                n,
                "{case}: {n} calls reached the backend: {calls:?}"
            );
            assert_backend_saw(&calls[n - 1], sub, email, token);
            calls
        }

        /// Asserts that no call has reached the backend.
        fn assert_nothing_sent(&self, case: &str) {
            let calls = self.backend.calls();
            assert!(calls.is_empty(), "{case}: nothing was sent: {calls:?}");
        }

        /// A token for the gateway, of `sub` with `scope`, with `extra`
        /// form parameters.
        async fn token_for(&self, sub: &str, scope: &str, extra: &[(&str, &str)]) -> String {
            let mut params = vec![
                ("sub", sub),
                ("scope", scope),
                ("resource", self.gateway.resource.as_str()),
            ];
            params.extend_from_slice(extra);
            self.authorization.token(&params).await
        }
    }

    /// A JWT with its signature's first character changed (the last
    /// segment): the same header and claims, a signature that does not verify.
    fn tampered(token: &str) -> String {
        let (signed, signature) = token.rsplit_once('.').expect("a JWT");
        let mut signature: Vec<u8> = signature.bytes().collect();
        signature[0] = if signature[0] == b'A' { b'B' } else { b'A' };
        format!(
            "{signed}.{}",
            String::from_utf8(signature).expect("base64url")
        )
    }

    /// Every token the gateway must refuse, with a valid session open: each
    /// is 401 with `error="invalid_token"` (403 `insufficient_scope` for the
    /// one without the required scope) and sends nothing to the backend.
    /// Then a valid token's call reaches the backend, which sees the claim
    /// headers and the gateway's own credential, and never the MCP token.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn refused_tokens_reach_no_backend_and_a_valid_one_sends_claims_not_the_token() {
        let Some(setup) = setup("refusals").await else {
            return;
        };
        let gateway = &setup.gateway;
        let metadata_url = gateway.metadata_url();
        let valid = setup
            .token_for(
                "alice",
                ALL_SCOPES,
                &[("claims", r#"{"email":"alice@example.com"}"#)],
            )
            .await;
        let session = gateway.session(&valid).await;

        // No token at all, on a new session and on an open one.
        let bare = gateway.post(None, None, INITIALIZE).await;
        assert_unauthorized(&bare, &metadata_url, false, "initialize without a token");
        let bare = gateway.post(None, Some(&session), &list_links()).await;
        assert_unauthorized(&bare, &metadata_url, false, "a call without a token");

        let other_resource = format!("http://{}/other", gateway.addr);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("now")
            .as_secs();
        let cases: Vec<(&str, String)> = vec![
            (
                "the wrong audience",
                setup
                    .authorization
                    .token(&[
                        ("sub", "alice"),
                        ("scope", ALL_SCOPES),
                        ("resource", &other_resource),
                    ])
                    .await,
            ),
            (
                "no audience",
                setup
                    .authorization
                    .token(&[("sub", "alice"), ("scope", ALL_SCOPES)])
                    .await,
            ),
            (
                "expired ten minutes ago",
                setup
                    .token_for("alice", ALL_SCOPES, &[("expires_in", "-600")])
                    .await,
            ),
            (
                "valid only ten minutes from now",
                setup
                    .token_for("alice", ALL_SCOPES, &[("not_before_in", "600")])
                    .await,
            ),
            (
                "another issuer",
                setup
                    .token_for(
                        "alice",
                        ALL_SCOPES,
                        &[("claims", r#"{"iss":"http://127.0.0.1:9/"}"#)],
                    )
                    .await,
            ),
            ("a bad signature", tampered(&valid)),
            (
                "claims changed after signing",
                with_changed_claims(&valid, now),
            ),
            ("a kid the issuer never had", with_unknown_kid(&valid)),
            (
                "signed by a key the issuer never published",
                setup
                    .token_for("alice", ALL_SCOPES, &[("signing_key", "unpublished")])
                    .await,
            ),
            (
                "not a JWT",
                "opaque-token-the-issuer-never-issued".to_owned(),
            ),
        ];
        for (case, token) in &cases {
            let refused = gateway
                .post(Some(token), Some(&session), &list_links())
                .await;
            assert_unauthorized(&refused, &metadata_url, true, case);
            let refused = gateway.post(Some(token), None, INITIALIZE).await;
            assert_unauthorized(
                &refused,
                &metadata_url,
                true,
                &format!("initialize, {case}"),
            );
        }

        // Valid, but without the scope every request needs.
        let unscoped = setup
            .token_for("alice", "tools:read tools:write", &[])
            .await;
        for (what, response) in [
            (
                "initialize",
                gateway.post(Some(&unscoped), None, INITIALIZE).await,
            ),
            (
                "a call",
                gateway
                    .post(Some(&unscoped), Some(&session), &list_links())
                    .await,
            ),
        ] {
            assert_eq!(
                response.status, 403,
                "{what} without {REQUIRED_SCOPE}: {response:?}"
            );
            let challenge = response
                .header("www-authenticate")
                .unwrap_or_else(|| panic!("{what}: a 403 without WWW-Authenticate: {response:?}"));
            assert!(
                challenge.starts_with("Bearer ")
                    && challenge.contains("error=\"insufficient_scope\"")
                    && challenge.contains(&format!("scope=\"{ALL_SCOPES}\""))
                    && challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
                "{what}: the challenge names every scope to ask for, the missing one among them: {challenge}"
            );
        }

        assert!(
            setup.backend.calls().is_empty(),
            "no refused request reached the backend: {:?}",
            setup.backend.calls()
        );

        // The valid token: the call reaches the backend, with the claims
        // and the gateway's credential, not the token.
        let called = gateway
            .post(Some(&valid), Some(&session), &list_links())
            .await;
        assert_eq!(called.status, 200, "{called:?}");
        let message = called.message();
        assert_eq!(
            message["result"]["isError"], false,
            "links_list with a valid token: {message}"
        );
        let calls = setup.backend.calls_when(1).await;
        assert_eq!(
            calls.len(),
            1,
            "exactly the valid call reached the backend (the refused ones, logged before it, none): {calls:?}"
        );
        let call = &calls[0];
        assert_eq!(call.method, "/links.v1.LinksService/ListLinks");
        assert_eq!(call.values("x-user-id"), ["alice"], "{call:?}");
        assert_eq!(
            call.values("x-user-email"),
            ["alice@example.com"],
            "{call:?}"
        );
        assert_eq!(
            call.values("authorization"),
            [BACKEND_CREDENTIAL],
            "the backend sees the gateway's own credential, once: {call:?}"
        );
        for (key, value) in &call.metadata {
            assert!(
                !value.contains(&valid) && !value.contains(valid.split('.').nth(2).expect("a JWT")),
                "the MCP token reached the backend in `{key}`: {call:?}"
            );
        }
        assert_eq!(call.request, json!({"page_size": 7}), "{call:?}");

        let Setup { gateway, .. } = setup;
        gateway.stop().await;
    }

    /// `valid` with other claims (another subject, a later `iat`) under its
    /// signature: a token changed after it was signed.
    fn with_changed_claims(valid: &str, now: u64) -> String {
        let mut parts = valid.split('.');
        let (header, claims, signature) = (
            parts.next().expect("a JWT"),
            parts.next().expect("a JWT"),
            parts.next().expect("a JWT"),
        );
        let mut decoded: Value =
            serde_json::from_slice(&base64url_decode(claims).expect("base64url claims"))
                .expect("JSON claims");
        decoded["iat"] = json!(now + 1);
        decoded["sub"] = json!("mallory");
        let claims = base64url_encode(decoded.to_string().as_bytes());
        format!("{header}.{claims}.{signature}")
    }

    /// `valid` with its header naming a key the issuer never had.
    fn with_unknown_kid(valid: &str) -> String {
        let (header, rest) = valid.split_once('.').expect("a JWT");
        let mut decoded: Value =
            serde_json::from_slice(&base64url_decode(header).expect("base64url header"))
                .expect("JSON header");
        decoded["kid"] = json!("a-key-the-issuer-never-had");
        format!(
            "{}.{rest}",
            base64url_encode(decoded.to_string().as_bytes())
        )
    }

    fn base64url_decode(text: &str) -> Option<Vec<u8>> {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(text)
            .ok()
    }

    fn base64url_encode(bytes: &[u8]) -> String {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    }

    /// After the authorization server rotates its signing key, a token
    /// naming the new `kid` works without restarting the gateway: it
    /// fetches the key set again (at most once per `JWKS_REFRESH_INTERVAL`,
    /// so the test may wait that long), and the call reaches the backend.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_token_signed_after_key_rotation_works_without_a_restart() {
        let Some(mut setup) = setup("rotation").await else {
            return;
        };
        let started = Instant::now();
        let before = setup.token_for("alice", ALL_SCOPES, &[]).await;
        let old_kid = kid(&before);
        let session = setup.gateway.session(&before).await;

        let new_kid = setup.authorization.rotate();
        assert_ne!(new_kid, old_kid, "rotation gives a new key");
        let after = setup.token_for("alice", ALL_SCOPES, &[]).await;
        assert_eq!(kid(&after), new_kid, "tokens are signed with the new key");

        // The gateway has not fetched the keys since it started: within the
        // refresh interval an unknown kid may still be refused (401,
        // invalid_token, nothing sent); after it, the key is fetched.
        let deadline = started + JWKS_REFRESH_INTERVAL + PATIENCE;
        let accepted = loop {
            let response = setup
                .gateway
                .post(Some(&after), Some(&session), &list_links())
                .await;
            if response.status == 200 {
                break response;
            }
            assert_unauthorized(
                &response,
                &setup.gateway.metadata_url(),
                true,
                "a new kid before the gateway may fetch the keys again",
            );
            assert!(
                Instant::now() < deadline,
                "the new kid is still refused {:?} after the gateway started (the key set is fetched again at most every {JWKS_REFRESH_INTERVAL:?})",
                started.elapsed()
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        let message = accepted.message();
        assert_eq!(message["result"]["isError"], false, "{message}");
        let calls = setup.backend.calls_when(1).await;
        assert_eq!(
            calls.len(),
            1,
            "only the accepted call reached the backend: {calls:?}"
        );
        assert_eq!(calls[0].values("x-user-id"), ["alice"]);

        let Setup { gateway, .. } = setup;
        gateway.stop().await;
    }

    /// The `kid` of a JWT's header.
    fn kid(token: &str) -> String {
        let header = token.split('.').next().expect("a JWT");
        let header: Value =
            serde_json::from_slice(&base64url_decode(header).expect("base64url")).expect("JSON");
        header["kid"].as_str().expect("a kid").to_owned()
    }

    /// `tools/list` per user: a read-only user sees only the read-only
    /// tool, a user with the write scope sees them all. A read-only user's
    /// call of another tool is refused with a result that says which scope
    /// it needs, and nothing is sent; its call of the read-only tool goes
    /// through.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn tools_list_shows_each_user_only_the_tools_its_scopes_open() {
        let Some(setup) = setup("scopes").await else {
            return;
        };
        let gateway = &setup.gateway;
        let reader = setup
            .token_for("reader", &format!("{REQUIRED_SCOPE} {READ_SCOPE}"), &[])
            .await;
        let writer = setup.token_for("writer", ALL_SCOPES, &[]).await;
        let neither = setup.token_for("nobody", REQUIRED_SCOPE, &[]).await;

        assert_eq!(gateway.tool_names(&reader).await, READ_ONLY_TOOLS);
        assert_eq!(gateway.tool_names(&writer).await, ALL_TOOLS);
        assert_eq!(
            gateway.tool_names(&neither).await,
            Vec::<String>::new(),
            "a user with neither tool scope is shown no tools"
        );

        let session = gateway.session(&reader).await;
        let refused = gateway
            .post(
                Some(&reader),
                Some(&session),
                &tool_call(
                    4,
                    "links_create",
                    &json!({"destination": "https://example.com/"}),
                ),
            )
            .await;
        assert_eq!(refused.status, 200, "{refused:?}");
        let message = refused.message();
        let text = message["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(
            message["result"]["isError"] == true && text.contains(WRITE_SCOPE),
            "a read-only user's links_create is an error naming the scope it needs: {message}"
        );
        assert!(
            setup.backend.calls().is_empty(),
            "the refused call sent nothing: {:?}",
            setup.backend.calls()
        );

        let listed = gateway
            .post(Some(&reader), Some(&session), &list_links())
            .await;
        assert_eq!(listed.message()["result"]["isError"], false, "{listed:?}");
        let calls = setup.backend.calls_when(1).await;
        assert_eq!(calls.len(), 1, "{calls:?}");
        assert_eq!(calls[0].method, "/links.v1.LinksService/ListLinks");
        assert_eq!(calls[0].values("x-user-id"), ["reader"]);

        let Setup { gateway, .. } = setup;
        gateway.stop().await;
    }

    /// One caller holds at most `max_sessions_per_caller` sessions: past it
    /// its `initialize` is `429` with `Retry-After`, naming the bound,
    /// while another caller still starts sessions; the caller's sessions
    /// keep working.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_caller_holds_at_most_its_share_of_sessions() {
        let Some(setup) = setup_with("sessions-per-caller", &[], |oauth, _| {
            oauth.max_sessions_per_caller(2)
        })
        .await
        else {
            return;
        };
        let gateway = &setup.gateway;
        let alice = setup.token_for("alice", ALL_SCOPES, &[]).await;
        let bob = setup.token_for("bob", ALL_SCOPES, &[]).await;
        let first = gateway.session(&alice).await;
        let second = gateway.session(&alice).await;
        assert_ne!(first, second);
        let third = gateway.post(Some(&alice), None, INITIALIZE).await;
        assert_eq!(third.status, 429, "{third:?}");
        assert!(
            third
                .header("retry-after")
                .is_some_and(|s| s.parse::<u64>().is_ok_and(|s| s > 0)),
            "{third:?}"
        );
        assert!(
            third.body.contains("maximum of 2 MCP sessions"),
            "{third:?}"
        );
        assert!(third.header("mcp-session-id").is_none(), "{third:?}");
        // Another caller is not held to alice's count.
        let _ = gateway.session(&bob).await;
        // Alice's sessions still answer her.
        let call = gateway
            .post(Some(&alice), Some(&first), &list_links())
            .await;
        assert_eq!(call.status, 200, "{call:?}");
    }

    /// The protected resource metadata (RFC 9728), at the path-suffixed
    /// and the root well-known URLs, without a token.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_protected_resource_metadata_names_the_issuer_and_the_scopes() {
        let Some(setup) = setup("metadata").await else {
            return;
        };
        let gateway = &setup.gateway;
        for path in [
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource",
        ] {
            assert_resource_metadata(
                gateway.addr,
                path,
                (&gateway.resource, &setup.authorization.issuer),
                &[REQUIRED_SCOPE, READ_SCOPE, WRITE_SCOPE],
            )
            .await;
        }
        let Setup { gateway, .. } = setup;
        gateway.stop().await;
    }

    /// The MCP Python SDK's OAuth client goes through discovery: 401 ->
    /// protected resource metadata -> authorization server metadata ->
    /// authorization code with PKCE and `resource` -> token -> tools/list
    /// and a call, which reaches the backend as the SDK user.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_python_sdk_client_discovers_the_authorization_server_and_calls_a_tool() {
        let Some(setup) = setup("python-sdk").await else {
            return;
        };
        let url = setup.gateway.resource.clone();
        let python = setup.python.clone();
        let calls = json!([{"name": "links_list", "arguments": {}}]).to_string();
        let output = tokio::task::spawn_blocking(move || {
            Command::new(python)
                .arg(workspace().join("tests/oauth/mcp_oauth_client.py"))
                .args(["--url", &url, "--calls", &calls])
                .stderr(Stdio::inherit())
                .output()
        })
        .await
        .expect("the client's task")
        .expect("the Python client runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let summary: Value = stdout
            .lines()
            .last()
            .and_then(|l| serde_json::from_str(l).ok())
            .unwrap_or_else(|| panic!("the client's summary: {stdout}"));
        assert!(output.status.success(), "the SDK client failed: {summary}");

        let requests: Vec<&str> = summary["requests"]
            .as_array()
            .expect("requests")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let issuer = &setup.authorization.issuer;
        let metadata_url = setup.gateway.metadata_url();
        let expected = [
            format!("POST {} -> 401", setup.gateway.resource),
            format!("GET {metadata_url} -> 200"),
            format!("GET {issuer}/.well-known/oauth-authorization-server -> 200"),
            format!("GET {issuer}/authorize?"),
            format!("POST {issuer}/token -> 200"),
            format!("POST {} -> 200", setup.gateway.resource),
        ];
        let mut at = 0;
        for step in &expected {
            let found = requests[at..]
                .iter()
                .position(|r| r.starts_with(step.as_str()))
                .unwrap_or_else(|| panic!("`{step}` after request {at} in {requests:#?}"));
            at += found + 1;
        }

        let authorize = &summary["authorize"];
        assert_eq!(authorize["code_challenge_method"], "S256", "{authorize}");
        assert_eq!(
            authorize["resource"],
            setup.gateway.resource.as_str(),
            "{authorize}"
        );
        let claims = &summary["token"]["claims"];
        assert_eq!(claims["aud"], setup.gateway.resource.as_str(), "{claims}");
        assert_eq!(claims["iss"], issuer.as_str(), "{claims}");
        assert_eq!(claims["sub"], "sdk-user", "{claims}");

        let mut tools: Vec<&str> = summary["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        tools.sort_unstable();
        assert_eq!(
            tools, ALL_TOOLS,
            "the SDK asks for every scope the resource metadata lists, so it sees every tool"
        );
        let call = &summary["calls"][0];
        assert_eq!(call["is_error"], false, "{call}");

        let backend = setup.backend.calls_when(1).await;
        assert_eq!(backend.len(), 1, "{backend:?}");
        assert_eq!(backend[0].method, "/links.v1.LinksService/ListLinks");
        assert_eq!(backend[0].values("x-user-id"), ["sdk-user"]);
        assert_eq!(backend[0].values("authorization"), [BACKEND_CREDENTIAL]);

        let Setup { gateway, .. } = setup;
        gateway.stop().await;
    }

    /// A mapped claim gRPC metadata cannot carry (non-ASCII text, a line
    /// break, a list, an object) refuses the call with a tool error naming
    /// the claim and the metadata key, and nothing reaches the backend; a
    /// token without the claim calls without that header.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_claim_metadata_cannot_carry_refuses_the_call_and_a_missing_one_is_not_sent() {
        let Some(setup) = setup("claims").await else {
            return;
        };
        let without_email = setup.token_for("erin", ALL_SCOPES, &[]).await;
        let session = setup.gateway.session(&without_email).await;
        for (case, email) in [
            ("non-ASCII text", json!("émile@example.com")),
            ("a line break", json!("erin@example.com\r\nx-admin: 1")),
            ("a list", json!(["erin@example.com", "e@example.com"])),
            ("an object", json!({"primary": "erin@example.com"})),
        ] {
            let claims = json!({ "email": email }).to_string();
            let token = setup
                .token_for("erin", ALL_SCOPES, &[("claims", &claims)])
                .await;
            let response = setup
                .gateway
                .post(Some(&token), Some(&session), &list_links())
                .await;
            assert_eq!(response.status, 200, "{case}: {response:?}");
            let message = response.message();
            let text = message["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default();
            assert!(
                message["result"]["isError"] == true
                    && text.contains("the claim `email`")
                    && text.contains("`x-user-email`")
                    && text.contains("nothing was sent"),
                "{case}: a tool error naming the claim and the key: {message}"
            );
            setup.assert_nothing_sent(case);
        }

        setup
            .call_reaching_backend(
                (&without_email, &session),
                1,
                ("erin", None),
                "a token without the email claim",
            )
            .await;

        let Setup { gateway, .. } = setup;
        gateway.stop().await;
    }

    /// A session is its initializer's: another user's valid token naming
    /// it, even before its owner's first call, gets the answer of a session
    /// the server does not hold (`404`, JSON-RPC `invalid_request`), for a
    /// call and for tools/list, so the refusal says nothing of whose the
    /// session is; nothing reaches the backend; the owner still uses it,
    /// and the other user's own session works.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_session_answers_only_the_user_who_started_it() {
        let Some(setup) = setup("sessions").await else {
            return;
        };
        let gateway = &setup.gateway;
        let alice = setup.token_for("alice", ALL_SCOPES, &[]).await;
        let bob = setup.token_for("bob", ALL_SCOPES, &[]).await;
        let session = gateway.session(&alice).await;

        let assert_refused = |response: &Response, what: &str| {
            assert_eq!(response.status, 404, "{what}: {response:?}");
            let message: Value = serde_json::from_str(&response.body)
                .unwrap_or_else(|e| panic!("{what}: JSON: {e}: {response:?}"));
            assert_eq!(message["error"]["code"], -32600, "{what}: {message}");
            assert!(
                message["error"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("holds no session with that Mcp-Session-Id")),
                "{what}: {message}"
            );
            assert!(message.get("result").is_none(), "{what}: {message}");
        };
        // Bob first: the session is alice's from its initialize on.
        let hijack = gateway
            .post(Some(&bob), Some(&session), &list_links())
            .await;
        assert_refused(&hijack, "bob's call on alice's session, before hers");
        let listed = gateway
            .post(
                Some(&bob),
                Some(&session),
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            )
            .await;
        assert_refused(&listed, "bob's tools/list on alice's session");
        setup.assert_nothing_sent("bob on alice's session");

        setup
            .call_reaching_backend(
                (&alice, &session),
                1,
                ("alice", None),
                "alice on her session",
            )
            .await;
        let hijack = gateway
            .post(Some(&bob), Some(&session), &list_links())
            .await;
        assert_refused(&hijack, "bob's call on alice's session, after hers");
        assert_eq!(
            setup.backend.calls().len(),
            1,
            "only alice's call: {:?}",
            setup.backend.calls()
        );

        let own = gateway.session(&bob).await;
        setup
            .call_reaching_backend((&bob, &own), 2, ("bob", None), "bob on his own session")
            .await;

        let Setup { gateway, .. } = setup;
        gateway.stop().await;
    }

    /// Protocol 2026-07-28 has no sessions: a stateless request's aliases
    /// are its caller's (the token's issuer, subject and client), kept
    /// across requests and tokens, never another caller's.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn stateless_requests_keep_aliases_per_principal_across_tokens() {
        let Some(setup) = setup("stateless").await else {
            return;
        };
        // A links service that gives out ids (the logging backend answers
        // empty messages).
        let links = proto_ai_tools_tests::serve(proto_ai_tools_tests::LinksBackend::default())
            .await
            .expect("the links service");
        let gateway = Gateway::start(&setup.authorization.issuer, links.addr, |oauth, _| {
            oauth.max_sessions_per_caller(1)
        })
        .await;
        let resource = gateway.resource.clone();
        // `claims` makes a later token of the same caller another token.
        let token = |sub: &'static str, client_id: &'static str, claims: &'static str| {
            let resource = resource.clone();
            let authorization = &setup.authorization;
            async move {
                authorization
                    .token(&[
                        ("sub", sub),
                        ("client_id", client_id),
                        ("scope", ALL_SCOPES),
                        ("resource", &resource),
                        ("claims", claims),
                    ])
                    .await
            }
        };
        let result = |response: &Response, case: &str| {
            assert_eq!(response.status, 200, "{case}: {response:?}");
            response.message()["result"].clone()
        };

        let alice = token("alice", "chat-app", r#"{"email":"alice@example.com"}"#).await;
        let created = oauth::stateless_call(
            gateway.addr,
            &alice,
            "links_create",
            &json!({"destination": "https://alice.example/", "name": "A"}),
        )
        .await;
        let created = result(&created, "alice creates");
        assert_eq!(
            created["structuredContent"]["link"]["id"], "link-1",
            "{created}"
        );

        // Another token of alice's, another request: her link-1.
        let alice_again = token("alice", "chat-app", r#"{"email":"alice@example.org"}"#).await;
        assert_ne!(alice, alice_again);
        let renamed = oauth::stateless_call(
            gateway.addr,
            &alice_again,
            "links_update",
            &json!({"link_id": "link-1", "name": "A renamed"}),
        )
        .await;
        let renamed = result(&renamed, "alice's later token");
        assert_eq!(
            renamed["structuredContent"]["link"]["destination"], "https://alice.example/",
            "{renamed}"
        );

        // Bob's link-1 is not alice's: he has none.
        let bob = token("bob", "chat-app", "{}").await;
        let reached = oauth::stateless_call(
            gateway.addr,
            &bob,
            "links_update",
            &json!({"link_id": "link-1", "name": "stolen"}),
        )
        .await;
        let reached = result(&reached, "bob");
        assert_eq!(
            reached["isError"], true,
            "bob resolved alice's link-1: {reached}"
        );

        // Alice through another OAuth client is another scope: what one
        // app of hers was shown is not another app's.
        let other_app = token("alice", "other-app", "{}").await;
        let reached = oauth::stateless_call(
            gateway.addr,
            &other_app,
            "links_update",
            &json!({"link_id": "link-1", "name": "x"}),
        )
        .await;
        let reached = result(&reached, "alice through another client");
        assert_eq!(reached["isError"], true, "{reached}");

        // A handshake-era session of alice's has a namespace of its own.
        let session = gateway.session(&alice).await;
        let in_session = gateway
            .post(
                Some(&alice),
                Some(&session),
                &oauth::tool_call(
                    4,
                    "links_update",
                    &json!({"link_id": "link-1", "name": "x"}),
                ),
            )
            .await;
        let in_session = result(&in_session, "alice's session");
        assert_eq!(in_session["isError"], true, "{in_session}");

        // At her cap of one session, alice's stateless calls go on (they
        // hold no session); another initialize does not.
        let stateless = oauth::stateless_call(
            gateway.addr,
            &alice,
            "links_update",
            &json!({"link_id": "link-1", "name": "at the cap"}),
        )
        .await;
        let stateless = result(&stateless, "alice stateless at her session cap");
        assert_eq!(stateless["isError"], false, "{stateless}");
        let second = oauth::post(gateway.addr, Some(&alice), None, oauth::INITIALIZE).await;
        assert_eq!(second.status, 429, "{second:?}");

        // Without a token, nothing: the edge asks for one.
        let anonymous = oauth::post(gateway.addr, None, None, &list_links()).await;
        assert_eq!(anonymous.status, 401, "{anonymous:?}");
        gateway.stop().await;
        links.shutdown().await;
        let Setup { gateway, .. } = setup;
        gateway.stop().await;
    }

    /// Asserts what the backend saw of an accepted call: the caller as
    /// `x-user-id` (and `email` as `x-user-email`, if given), the gateway's
    /// own credential, and nowhere the MCP token.
    fn assert_backend_saw(call: &BackendCall, sub: &str, email: Option<&str>, token: &str) {
        oauth::assert_backend_saw(
            call,
            Expected {
                sub,
                email,
                token,
                credential: BACKEND_CREDENTIAL,
            },
        );
    }

    /// Starts the tests' gateway with `issuer`, the standard OAuth changed
    /// by `oauth` and the server by `server`, and expects start to fail:
    /// the error and how long start took.
    async fn start_refused(
        issuer: &str,
        oauth: impl FnOnce(OAuth) -> OAuth,
        server: impl FnOnce(McpServer) -> McpServer,
    ) -> (ServeError, Duration) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let resource = format!("http://{}/mcp", listener.local_addr().expect("addr"));
        // No backend is called: start fails before any call.
        let backend = SocketAddr::from(([127, 0, 0, 1], 9));
        let server = server(gateway_server(
            backend,
            oauth(oauth_config(&resource, issuer)),
        ));
        let started = Instant::now();
        let outcome = tokio::time::timeout(
            PATIENCE,
            server.serve_http_until(listener, std::future::pending()),
        )
        .await
        .expect("start answers within the test's patience");
        match outcome {
            Err(error) => (error, started.elapsed()),
            Ok(()) => panic!("the gateway started and stopped"),
        }
    }
}
