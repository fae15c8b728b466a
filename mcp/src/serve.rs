//! Serving: the tools as listed, the state every transport serves from
//! (`McpServer::prepare`), and the stdio and HTTP loops with the checks
//! they make before serving.

use super::*;

impl McpServer {
    /// The tools as the server lists them, in the configured dialect and
    /// host profile. For a per-session server this builds one toolkit on a
    /// throwaway namespace.
    ///
    /// # Errors
    ///
    /// When the toolkit cannot be built.
    ///
    /// # Examples
    ///
    /// See [`from_toolkit`](Self::from_toolkit).
    pub fn tools(&self) -> Result<Vec<rmcp::model::Tool>, ToolkitError> {
        Ok(self.listed()?.into_iter().map(|(tool, _)| tool).collect())
    }

    /// The tools as listed, each with whether it is strict: the toolkit's,
    /// and `operations_get` when some of them are long-running.
    fn listed(&self) -> Result<Vec<(rmcp::model::Tool, bool)>, ToolkitError> {
        Ok(self.listed_with_long_running()?.0)
    }

    /// [`listed`](Self::listed), and the names of the long-running tools.
    fn listed_with_long_running(&self) -> Result<(Listed, Vec<String>), ToolkitError> {
        let list = |toolkit: &Toolkit| {
            let mut listed: Listed = toolkit
                .tools()
                .iter()
                .map(|t| {
                    let mut listed = to_mcp_tool_for_host(t, self.dialect, self.host);
                    // A long-running tool's result is the operation for a
                    // client without tasks and the unpacked response for one
                    // with them: no one schema is true of both, so none is
                    // listed while tasks are served.
                    let two_results = self.tasks && matches!(t.long_running(), Some(Ok(_)));
                    // The proto's (or overlay's) word for this tool, else the server's.
                    match t.agent_tool().and_then(|tool| tool.output_schema) {
                        _ if two_results => {}
                        Some(true) => listed.output_schema = output_schema_object(t, self.host),
                        Some(false) => {}
                        None if self.output_schemas => {
                            listed.output_schema =
                                output_schema_within(t, self.host, self.max_output_schema_bytes);
                        }
                        None => {}
                    }
                    (listed, t.is_strict())
                })
                .collect();
            let long_running: Vec<String> = toolkit
                .tools()
                .iter()
                .filter(|t| matches!(t.long_running(), Some(Ok(_))))
                .map(|t| t.name().to_owned())
                .collect();
            // A toolkit's own `operations_get` (an overlay may make
            // GetOperation one) is served in place of the generated one.
            let own = toolkit.get(tasks::OPERATIONS_GET).is_some();
            if !long_running.is_empty() && !own {
                listed.push((tasks::operations_get_tool(&long_running), false));
            }
            (listed, long_running)
        };
        match &self.source {
            Source::Fixed(toolkit) => Ok(list(toolkit)),
            Source::PerSession { factory, .. } => {
                Ok(list(&factory(Arc::new(AliasManager::new()))?))
            }
        }
    }

    /// Checks a tool as listed against the dialect's checker.
    fn check_listed(&self, tool: &rmcp::model::Tool, strict: bool) -> Result<(), ServeError> {
        let schema = Value::Object(tool.input_schema.as_ref().clone());
        let violations = proto_ai_tools_schema::check::check(self.dialect, strict, &schema);
        if violations.is_empty() {
            return Ok(());
        }
        Err(ServeError::Rendering {
            tool: tool.name.to_string(),
            dialect: self.dialect,
            host: self.host,
            violations: violations
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
        })
    }

    /// Checks the toolkit once and freezes what every session shares.
    fn prepare(self, oauth: handler::Guard) -> Result<Arc<Shared>, ServeError> {
        let (listed, long_running) = self.listed_with_long_running()?;
        // Every rendering `ai_tools!` and the toolkit check is the exact
        // host's; the host's own is checked here, once, before serving.
        for (tool, strict) in &listed {
            self.check_listed(tool, *strict)?;
        }
        let tools: Vec<rmcp::model::Tool> = listed.into_iter().map(|(tool, _)| tool).collect();
        let mut timed: Vec<&String> = self.calls.per_tool.keys().collect();
        timed.sort();
        if let Some(unknown) = timed
            .into_iter()
            .find(|name| !tools.iter().any(|t| t.name == name.as_str()))
        {
            return Err(ServeError::UnknownTool {
                tool: unknown.clone(),
                known: tools
                    .iter()
                    .map(|t| t.name.as_ref())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        #[cfg(feature = "tool-search")]
        let catalog = self.catalog()?;
        #[cfg(feature = "tool-search")]
        let capabilities = if catalog.is_some() {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build()
        } else {
            ServerCapabilities::builder().enable_tools().build()
        };
        #[cfg(not(feature = "tool-search"))]
        let capabilities = ServerCapabilities::builder().enable_tools().build();
        // Long-running tools' calls become tasks for clients that take them.
        let mut capabilities = capabilities;
        if self.tasks && !long_running.is_empty() {
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(
                    rmcp::model::TASKS_EXTENSION_ID.to_owned(),
                    rmcp::model::JsonObject::new(),
                );
        }
        #[cfg(feature = "redis")]
        let records = self.session_store.map(|store| {
            Arc::new(session_store::SessionRecords::new(
                store,
                self.http.session_idle_timeout,
            ))
        });
        let mut config = ServerConfig::new(capabilities)
            .with_server_info(self.info)
            .with_protocol_version(MAX_PROTOCOL_VERSION);
        if let Some(instructions) = self.instructions {
            config = config.with_instructions(instructions);
        }
        // As many views as scopes kept, at most `MAX_VIEWS` (`views`).
        let views_capacity = match &self.source {
            Source::PerSession { sessions, .. } => sessions.capacity().min(views::MAX_VIEWS),
            Source::Fixed(_) => 1,
        };
        // The tools the server lists are the tool names the metrics label;
        // meta-tools too.
        #[cfg(feature = "admin")]
        if let Some(metrics) = &self.metrics {
            metrics.know_tools(tools.iter().map(|tool| tool.name.as_ref()));
            #[cfg(feature = "tool-search")]
            if let Some(catalog) = &catalog {
                metrics.know_tools(catalog.meta_tools.iter().map(|tool| tool.name.as_ref()));
            }
        }
        Ok(Arc::new(Shared {
            source: self.source,
            tools,
            host: self.host,
            config,
            stdio_session: self.stdio_session,
            allowed_hosts: self.allowed_hosts,
            forward_headers: self.forward_headers,
            call_options: self.call_options,
            calls: self.calls,
            oauth,
            long_running: (!long_running.is_empty()).then_some(long_running),
            consent: self.consent,
            approvals: Arc::new(
                approvals::Approvals::new(self.consent_key.as_deref())
                    .map_err(ServeError::ConsentKey)?,
            ),
            views: views::Views::new(views::VIEW_IDLE, views_capacity),
            #[cfg(feature = "tool-search")]
            catalog,
            #[cfg(feature = "redis")]
            records,
            #[cfg(feature = "admin")]
            metrics: self.metrics,
            drain_over: CancellationToken::new(),
            #[cfg(feature = "otel")]
            opentelemetry: self.opentelemetry,
        }))
    }

    /// The tool-search catalog, when tool search is on: built from one
    /// toolkit, its toolsets and meta-tools checked.
    #[cfg(feature = "tool-search")]
    fn catalog(&self) -> Result<Option<Arc<tool_search::Catalog>>, ServeError> {
        let Some(search) = &self.tool_search else {
            return Ok(None);
        };
        let toolkit = match &self.source {
            Source::Fixed(toolkit) => toolkit.clone(),
            Source::PerSession { factory, .. } => Arc::new(factory(Arc::new(AliasManager::new()))?),
        };
        if let Some(clash) = toolkit
            .tools()
            .iter()
            .find(|t| tool_search::Catalog::is_meta(t.name()))
        {
            return Err(ServeError::MetaToolName(clash.name().to_owned()));
        }
        let catalog =
            tool_search::Catalog::new(&toolkit, search, self.dialect).map_err(|problem| {
                match problem {
                    tool_search::ToolsetProblem::Unknown { toolset, known } => {
                        ServeError::UnknownToolset { toolset, known }
                    }
                    tool_search::ToolsetProblem::Definition(problem) => {
                        ServeError::ToolsetDefinition(problem)
                    }
                    #[cfg(feature = "semantic-search")]
                    tool_search::ToolsetProblem::Embeddings(problem) => {
                        ServeError::Embeddings(problem)
                    }
                }
            })?;
        for tool in &catalog.meta_tools {
            self.check_listed(tool, false)?;
        }
        Ok(Some(Arc::new(catalog)))
    }

    /// Serves one client over this process's stdin and stdout until stdin
    /// closes, or ctrl-c / `SIGTERM` ([`shutdown_signal`]). Nothing else is
    /// written to stdout.
    ///
    /// # Errors
    ///
    /// [`ServeError`]: the toolkit does not build, the handshake failed.
    ///
    /// # Examples
    ///
    /// See [`McpServer`].
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        self.serve_stdio_until(shutdown_signal()).await
    }

    /// [`serve_stdio`](Self::serve_stdio) until stdin closes or `shutdown` completes.
    ///
    /// # Errors
    ///
    /// See [`serve_stdio`](Self::serve_stdio).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn run(server: proto_ai_tools_mcp::McpServer) -> Result<(), proto_ai_tools_mcp::ServeError> {
    /// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    /// server.serve_stdio_until(async { let _ = stopped.await; }).await
    /// # }
    /// ```
    pub async fn serve_stdio_until(
        self,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), ServeError> {
        let (read, write) = rmcp::transport::stdio_pipes();
        self.serve_io(read, write, shutdown).await
    }

    /// Serves one client over a byte stream pair (newline-delimited JSON-RPC,
    /// as stdio) until it closes or `shutdown` completes: a Unix socket, a
    /// child's pipes, an in-memory duplex in a test. The session's
    /// namespace is the stdio one ([`with_stdio_session_id`](Self::with_stdio_session_id)).
    ///
    /// # Errors
    ///
    /// See [`serve_stdio`](Self::serve_stdio).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    /// let server = proto_ai_tools_mcp::McpServer::from_toolkit(proto_ai_tools::Toolkit::builder().build().unwrap());
    /// let (client, server_end) = tokio::io::duplex(64 * 1024);
    /// let (read, write) = tokio::io::split(server_end);
    /// let serving = tokio::spawn(server.serve_io(read, write, std::future::pending()));
    ///
    /// let (client_read, mut client_write) = tokio::io::split(client);
    /// let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"doc","version":"1"}}}"#;
    /// client_write.write_all(format!("{init}\n").as_bytes()).await.unwrap();
    /// let mut lines = BufReader::new(client_read).lines();
    /// let reply = lines.next_line().await.unwrap().unwrap();
    /// assert!(reply.contains(r#""protocolVersion":"2025-06-18""#));
    /// drop(client_write); // the client hangs up: the server returns
    /// drop(lines);
    /// serving.await.unwrap().unwrap();
    /// # }
    /// ```
    pub async fn serve_io<R, W>(
        self,
        read: R,
        write: W,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), ServeError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        #[cfg(feature = "oauth")]
        if self.oauth.is_some() {
            return Err(ServeError::OAuthOverStdio);
        }
        #[cfg(feature = "admin")]
        let readiness = self.readiness.clone();
        let shared = self.prepare(handler::Guard::default())?;
        #[cfg(feature = "admin")]
        let shutdown = async move {
            if let Some(readiness) = &readiness {
                readiness.serving();
            }
            shutdown.await;
            if let Some(readiness) = readiness {
                readiness.drain();
            }
        };
        let session = shared.stdio_session.clone();
        let handler = Handler::new(shared, Some(session));
        let ct = CancellationToken::new();
        let mut shutdown = std::pin::pin!(shutdown);
        let running = tokio::select! {
            running = handler.serve_with_ct((read, write), ct.clone()) => {
                running.map_err(|e| ServeError::Handshake(e.to_string()))?
            }
            () = &mut shutdown => {
                ct.cancel();
                return Ok(());
            }
        };
        let stop = running.cancellation_token();
        let mut waiting = std::pin::pin!(running.waiting());
        let done = tokio::select! {
            done = &mut waiting => done,
            () = &mut shutdown => {
                stop.cancel();
                waiting.await
            }
        };
        done.map(drop).map_err(|e| ServeError::Task(e.to_string()))
    }

    /// Serves streamable HTTP at `http://ADDR/mcp` ([`HTTP_PATH`]) until
    /// ctrl-c / `SIGTERM` ([`shutdown_signal`]), one alias namespace per MCP
    /// session.
    ///
    /// # Errors
    ///
    /// [`ServeError`]: the address cannot be bound, the toolkit does not
    /// build, or the server holds one toolkit ([`ServeError::SharedToolkit`]).
    ///
    /// # Examples
    ///
    /// See the [module docs](crate).
    pub async fn serve_http(self, addr: impl tokio::net::ToSocketAddrs) -> Result<(), ServeError> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        self.serve_http_until(listener, shutdown_signal()).await
    }

    /// [`serve_http`](Self::serve_http) on a bound listener (bind port 0 and
    /// read [`local_addr`](tokio::net::TcpListener::local_addr) to learn the
    /// port) until `shutdown` completes. On shutdown each new request is
    /// answered `503` with `Retry-After`, the calls in flight get up to the
    /// [drain timeout](Self::with_drain_timeout) to be answered, a call
    /// still running then is answered that it did not finish, and then
    /// every session is ended and the open connections are closed.
    ///
    /// # Errors
    ///
    /// See [`serve_http`](Self::serve_http).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn run(server: proto_ai_tools_mcp::McpServer) -> Result<(), proto_ai_tools_mcp::ServeError> {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// eprintln!("MCP at http://{}/mcp", listener.local_addr()?);
    /// server.serve_http_until(listener, proto_ai_tools_mcp::shutdown_signal()).await
    /// # }
    /// ```
    pub async fn serve_http_until(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        if matches!(self.source, Source::Fixed(_)) {
            return Err(ServeError::SharedToolkit);
        }
        let limits = self.http.clone();
        self.check_address(listener.local_addr()?)?;
        #[cfg(feature = "admin")]
        let readiness = self.readiness.clone();
        let scopes = self.scopes.clone();
        #[cfg(feature = "oauth")]
        let verifier = match self.oauth.clone() {
            Some(oauth) => Some(Arc::new(self.start_oauth(oauth).await?)),
            None => None,
        };
        #[cfg(feature = "oauth")]
        let shared = self.prepare(verifier.clone())?;
        #[cfg(not(feature = "oauth"))]
        let shared = self.prepare(())?;
        let ct = CancellationToken::new();
        let origins = LOOPBACK_ORIGINS
            .iter()
            .map(|o| (*o).to_owned())
            .chain(limits.origins.iter().cloned());
        let mut config = StreamableHttpServerConfig::default()
            .with_cancellation_token(ct.child_token())
            .with_legacy_session_mode(true)
            .with_max_request_body_bytes(limits.max_body)
            .with_allowed_origins(origins)
            .enforce_origin_validation();
        if let Some(hosts) = &shared.allowed_hosts {
            config = config.with_allowed_hosts(hosts.clone());
        }
        let sessions = edge::CappedSessions::new(limits.max_sessions, limits.session_idle_timeout);
        #[cfg(feature = "redis")]
        let sessions = sessions.with_records(shared.records.clone());
        let sessions = Arc::new(sessions);
        // Sessions roam: rmcp writes each one's record after its
        // handshake and restores one it does not hold from it.
        #[cfg(feature = "redis")]
        if let Some(records) = &shared.records {
            config.session_store = Some(Arc::new(edge::RoamingStore {
                sessions: sessions.clone(),
                records: records.clone(),
            }));
        }
        let factory_shared = shared.clone();
        let service = StreamableHttpService::new(
            move || Ok(Handler::new(factory_shared.clone(), None)),
            sessions.clone(),
            config,
        );
        let gate = edge::Gate {
            sessions: sessions.clone(),
            max_body: limits.max_body,
            read_timeout: limits.header_timeout,
            scopes: Arc::new(scopes),
        };
        let router = axum::Router::new()
            .nest_service(HTTP_PATH, service)
            .layer(axum::middleware::from_fn(deleted_is_no_content))
            .layer(axum::middleware::from_fn_with_state(gate, edge::gate));
        // Outermost: a request without a valid token is answered before the
        // edge reads its body or looks up its session; the metadata that
        // says where to get one is served to anyone.
        #[cfg(feature = "oauth")]
        let router = match verifier {
            Some(verifier) => {
                let mut metadata = axum::Router::new();
                for path in verifier.metadata_paths() {
                    let verifier = verifier.clone();
                    metadata = metadata.route(
                        &path,
                        axum::routing::get(move || async move { verifier.metadata_response() }),
                    );
                }
                let authenticator = auth::Authenticator {
                    verifier,
                    sessions: sessions.clone(),
                };
                router
                    .layer(axum::middleware::from_fn_with_state(
                        authenticator,
                        auth::authenticate,
                    ))
                    .merge(metadata)
            }
            None => router,
        };
        let connections = edge::ConnectionLimits {
            max_connections: limits.max_connections,
            header_timeout: limits.header_timeout,
            idle_timeout: limits.idle_timeout,
        };
        #[cfg(feature = "admin")]
        let shutdown = {
            let readiness = readiness.clone();
            if let Some(readiness) = &readiness {
                readiness.serving();
            }
            async move {
                shutdown.await;
                if let Some(readiness) = readiness {
                    readiness.drain();
                }
            }
        };
        let drain = edge::Drain {
            timeout: limits.drain_timeout,
            over: shared.drain_over.clone(),
        };
        #[cfg(feature = "admin")]
        let refusals = shared.metrics.as_ref().map(|metrics| {
            let held = sessions.clone();
            metrics.watch_gauge(
                "ai_tools_mcp_sessions",
                "Handshake-era MCP sessions held",
                move || i64::try_from(held.len()).unwrap_or(i64::MAX),
            );
            if let Source::PerSession {
                sessions: scopes, ..
            } = &shared.source
            {
                use proto_ai_tools::alias::AliasCounts;
                let counts = scopes.alias_counts();
                let watch = |name, help, read: fn(&AliasCounts) -> u64| {
                    let counts = counts.clone();
                    metrics.watch_counter(name, help, move || read(&counts));
                };
                watch(
                    "ai_tools_aliases_given",
                    "Aliases given out",
                    AliasCounts::given,
                );
                watch(
                    "ai_tools_aliases_resolved",
                    "Aliases that models sent and that resolved to their UUID",
                    AliasCounts::resolved,
                );
                watch(
                    "ai_tools_aliases_expired",
                    "Aliases that models sent after they expired",
                    AliasCounts::expired,
                );
                watch(
                    "ai_tools_aliases_lost",
                    "Aliases that models sent after the alias store lost them",
                    AliasCounts::lost,
                );
                let scopes = scopes.clone();
                metrics.watch_gauge(
                    "ai_tools_alias_scopes",
                    "Alias namespaces (sessions, callers) kept in memory",
                    move || i64::try_from(scopes.len()).unwrap_or(i64::MAX),
                );
            }
            let metrics = metrics.clone();
            Arc::new(move |limit| metrics.record_refusal(limit)) as edge::RefusalCounter
        });
        #[cfg(not(feature = "admin"))]
        let refusals = None;
        edge::serve(
            listener,
            router,
            connections,
            shutdown,
            drain,
            refusals,
            ct.clone(),
        )
        .await;
        ct.cancel();
        Ok(())
    }
}

impl McpServer {
    /// Whether this server may serve HTTP at `addr`, as
    /// [`serve_http_until`](Self::serve_http_until) checks before serving:
    /// on an address that is not loopback it needs a way to tell the
    /// callers of stateless requests apart (OAuth or
    /// [an alias scope header](Self::with_alias_scope_header)), and
    /// [single-user](Self::with_single_user) needs loopback. Call it to
    /// report a refusal before saying where you serve.
    ///
    /// # Errors
    ///
    /// [`ServeError::NoCallerIdentity`] and [`ServeError::SingleUserNotLoopback`].
    ///
    /// # Examples
    ///
    /// ```
    /// let server = proto_ai_tools_mcp::McpServer::new(|a| proto_ai_tools::Toolkit::builder().alias_manager(a).build());
    /// assert!(server.check_address("127.0.0.1:8080".parse().unwrap()).is_ok());
    /// assert!(server.check_address("0.0.0.0:8080".parse().unwrap()).is_err());
    /// let server = server.with_alias_scope_header("x-user-id").unwrap();
    /// assert!(server.check_address("0.0.0.0:8080".parse().unwrap()).is_ok());
    /// ```
    pub fn check_address(&self, addr: std::net::SocketAddr) -> Result<(), ServeError> {
        let loopback = addr.ip().is_loopback();
        if self.scopes.single_user && !loopback {
            return Err(ServeError::SingleUserNotLoopback { addr });
        }
        #[cfg(feature = "oauth")]
        let oauth = self.oauth.is_some();
        #[cfg(not(feature = "oauth"))]
        let oauth = false;
        if !loopback && !self.scopes.identifies_callers(oauth) {
            return Err(ServeError::NoCallerIdentity { addr });
        }
        Ok(())
    }
}

#[cfg(feature = "oauth")]
impl McpServer {
    /// Checks what OAuth rules out and starts the token checks.
    async fn start_oauth(&self, oauth: OAuth) -> Result<auth::Verifier, ServeError> {
        if self.forward_headers.iter().any(|h| h == "authorization") {
            return Err(ServeError::TokenPassthrough);
        }
        for key in oauth.claim_metadata_keys() {
            // A claim must never stand in for what the server itself sends:
            // `authorization` is the gateway's own credential.
            if key == "authorization" || self.call_options.metadata.iter().any(|(k, _)| k == key) {
                return Err(ServeError::OAuth(format!(
                    "a claim cannot be sent as the metadata `{key}`: the server's own call options set it (the gateway's credential to the backend); choose another key"
                )));
            }
            if key.ends_with("-bin") {
                return Err(ServeError::OAuth(format!(
                    "a claim cannot be sent as the metadata `{key}`: claims are text, and a `-bin` key carries bytes"
                )));
            }
            if let Some(why) = unforwardable(key) {
                return Err(ServeError::OAuth(format!(
                    "a claim cannot be sent as the metadata `{key}`: {why}"
                )));
            }
            if self.forward_headers.iter().any(|h| h == key) {
                return Err(ServeError::OAuth(format!(
                    "`{key}` is both a claim header and a forwarded header: the caller could set what the token says; keep one"
                )));
            }
        }
        auth::Verifier::start(oauth)
            .await
            .map_err(ServeError::OAuth)
    }
}

/// rmcp answers a session's `DELETE` with `202 Accepted`, which the Python
/// SDK reports as a failed termination (it expects 200 or 204); the session
/// is closed by then, so say `204 No Content`.
async fn deleted_is_no_content(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let delete = request.method() == http::Method::DELETE;
    let mut response = next.run(request).await;
    if delete && response.status() == http::StatusCode::ACCEPTED {
        *response.status_mut() = http::StatusCode::NO_CONTENT;
    }
    response
}

#[cfg(feature = "otel")]
impl McpServer {
    /// Joins each request's span (a DEBUG `tracing` span, `mcp.request`,
    /// named `{mcp.method.name} {target}` as OpenTelemetry's MCP conventions
    /// say, kind `server`; a tool call's `ai_tools.call` and its gRPC call's
    /// `ai_tools.grpc`, kind `client`, are its children) to the
    /// trace the request carries, in its `_meta` (`traceparent`,
    /// `tracestate`, as MCP's 2026-07-28 revision puts them) or else its
    /// HTTP headers, and sends each gRPC call's own span on to the service
    /// as `traceparent` metadata (over the caller's, which is sent as it
    /// came without this). The trace context is read and written by the
    /// global propagator (`opentelemetry::global::set_text_map_propagator`,
    /// W3C trace context in most programs); the spans reach an exporter
    /// through a `tracing_opentelemetry` layer the program installs. Feature
    /// `otel`.
    ///
    /// # Examples
    ///
    /// ```
    /// let server = proto_ai_tools_mcp::McpServer::new(|a| proto_ai_tools::Toolkit::builder().alias_manager(a).build())
    ///     .with_opentelemetry();
    /// # let _ = server;
    /// ```
    pub fn with_opentelemetry(mut self) -> Self {
        self.opentelemetry = true;
        self
    }
}

/// The builder methods of the admin feature.
#[cfg(feature = "admin")]
impl McpServer {
    /// Measures every MCP request and tool call in `metrics`, which
    /// [`serve_admin`](crate::admin::serve_admin) serves at `/metrics` (feature `admin`): see
    /// [the module](crate::admin) for the metrics and their labels. Off by default.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use proto_ai_tools::Toolkit;
    /// use proto_ai_tools_mcp::McpServer;
    /// use proto_ai_tools_mcp::admin::{Metrics, Readiness, serve_admin};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let metrics = Metrics::new();
    /// let admin = tokio::net::TcpListener::bind("127.0.0.1:9090").await?;
    /// tokio::spawn(serve_admin(admin, Some(metrics.clone()), Readiness::new(), std::future::pending()));
    /// McpServer::new(|aliases| Toolkit::builder().alias_manager(aliases).build())
    ///     .with_metrics(metrics)
    ///     .serve_http("127.0.0.1:8080")
    ///     .await?;
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn with_metrics(mut self, metrics: crate::admin::Metrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Ties `readiness` to this server (feature `admin`): its `serving`
    /// check fails until the server serves (its tools listed, its search
    /// index built, its listener open), and it drains as soon as the
    /// server's shutdown begins, so that `/readyz` turns a load balancer
    /// away before the server stops taking calls.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use proto_ai_tools_mcp::{McpServer, admin::Readiness};
    /// let readiness = Readiness::new();
    /// let _server = McpServer::from_toolkit(proto_ai_tools::Toolkit::builder().build().unwrap())
    ///     .with_readiness(readiness.clone());
    /// assert!(!readiness.report().await.ready, "not serving yet");
    /// # }
    /// ```
    #[must_use]
    pub fn with_readiness(mut self, readiness: crate::admin::Readiness) -> Self {
        readiness.starting();
        self.readiness = Some(readiness);
        self
    }
}
