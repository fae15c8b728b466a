//! The rmcp [`ServerHandler`] of an [`McpServer`](super::McpServer): one per
//! MCP session, with the session's toolkit and what each tool call carries
//! (its deadline, its forwarded headers, its cancellation).

use std::borrow::Cow;
use std::sync::{Arc, Mutex, MutexGuard};

use proto_ai_tools_schema::HostProfile;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CreateTaskResult, CustomRequest,
    CustomResult, DetailedTask, GetTaskParams, GetTaskResult, InitializeRequestParams,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProtocolVersion, ServerConfig, TaskPayload, TaskStatus,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use tracing::Instrument as _;

use super::convert::to_call_tool_result;
use super::edge;
use super::limits::CallLimits;
use super::scope::Scope;
use super::tasks::TaskRef;
use consent_gate::{Gate, Returned};
use proto_ai_tools::Sessions;
use proto_ai_tools::ToolResult;
use proto_ai_tools::alias::AliasManager;
use proto_ai_tools::consent::{ConfirmClass, Unsupported};
use proto_ai_tools::executor::OperationState;
use proto_ai_tools::toolkit::{Toolkit, ToolkitError};
use proto_ai_tools::transport::CallOptions;

mod consent_gate;
mod observed;

/// The newest protocol version served: `2026-07-28`, stateless, beside
/// every handshake-era one (see the [module docs](super)).
pub const MAX_PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2026_07_28;

/// The newest handshake-era version: what an `initialize` agrees to at most.
pub const MAX_SESSION_PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// The shape of a per-session toolkit builder.
pub(super) type Factory = dyn Fn(Arc<AliasManager>) -> Result<Toolkit, ToolkitError> + Send + Sync;

/// Where a scope's alias namespace comes from: a [`Sessions`] of any
/// transport, keyed by [`Scope::key`].
pub(super) trait Namespaces: Send + Sync {
    fn alias_manager(&self, scope: &Scope) -> Arc<AliasManager>;
    fn forget(&self, scope: &Scope);
    /// The most idle scopes kept (the views of stateless scopes are
    /// bounded by it too, [`super::views`]).
    fn capacity(&self) -> usize;
    /// The scopes kept now.
    #[cfg_attr(not(feature = "admin"), allow(dead_code))]
    fn len(&self) -> usize;
    /// What the scopes' alias managers did, counted.
    #[cfg_attr(not(feature = "admin"), allow(dead_code))]
    fn alias_counts(&self) -> Arc<proto_ai_tools::alias::AliasCounts>;
}

impl<T: Send + Sync + 'static> Namespaces for Sessions<T> {
    fn alias_manager(&self, scope: &Scope) -> Arc<AliasManager> {
        Sessions::alias_manager(self, scope.key())
    }

    fn forget(&self, scope: &Scope) {
        let _ = self.remove(scope.key());
    }

    fn capacity(&self) -> usize {
        Sessions::capacity(self)
    }

    fn len(&self) -> usize {
        Sessions::len(self)
    }

    fn alias_counts(&self) -> Arc<proto_ai_tools::alias::AliasCounts> {
        Sessions::alias_counts(self).clone()
    }
}

pub(super) enum Source {
    /// A toolkit per session, on the session's namespace.
    PerSession {
        factory: Arc<Factory>,
        sessions: Arc<dyn Namespaces>,
    },
    /// One toolkit (stdio: one client, one namespace).
    Fixed(Arc<Toolkit>),
}

/// Who may call the server and what the backend learns of the caller: the
/// token checks of [`McpServer::with_oauth`](super::McpServer::with_oauth),
/// when on (feature `oauth`).
#[cfg(feature = "oauth")]
pub(super) type Guard = Option<Arc<super::auth::Verifier>>;
/// Without the feature there is nothing to hold.
#[cfg(not(feature = "oauth"))]
pub(super) type Guard = ();

/// What every session of one server shares.
pub(super) struct Shared {
    pub(super) source: Source,
    pub(super) tools: Vec<rmcp::model::Tool>,
    /// The profile of the hosts served: every call is read as coming
    /// through one.
    pub(super) host: HostProfile,
    pub(super) config: ServerConfig,
    pub(super) stdio_session: String,
    pub(super) allowed_hosts: Option<Vec<String>>,
    pub(super) forward_headers: Vec<String>,
    pub(super) call_options: CallOptions,
    pub(super) calls: CallLimits,
    #[cfg_attr(not(feature = "oauth"), allow(dead_code))]
    pub(super) oauth: Guard,
    /// The long-running tools listed (whose calls may become tasks, and
    /// whose operations `operations_get` polls), when there are any.
    pub(super) long_running: Option<Vec<String>>,
    /// Which tools a person must approve ([`proto_ai_tools::consent`]).
    pub(super) consent: ConsentSettings,
    /// Stateless clients' approvals, signed and redeemed once.
    pub(super) approvals: Arc<super::approvals::Approvals>,
    /// The toolkits of the active stateless scopes, built once per scope
    /// ([`super::views`]).
    pub(super) views: super::views::Views,
    /// Tool search's index and toolsets, when it is on.
    #[cfg(feature = "tool-search")]
    pub(super) catalog: Option<Arc<super::tool_search::Catalog>>,
    /// Where sessions' records are kept, when sessions roam
    /// ([`McpServer::with_session_store`](super::McpServer::with_session_store)).
    #[cfg(feature = "redis")]
    pub(super) records: Option<Arc<super::session_store::SessionRecords>>,
    /// Where each request and tool call is measured
    /// ([`McpServer::with_metrics`](super::McpServer::with_metrics)).
    #[cfg(feature = "admin")]
    pub(super) metrics: Option<super::admin::Metrics>,
    /// Cancelled when a stopping server's drain is over: each call still
    /// running is answered that it did not finish.
    pub(super) drain_over: tokio_util::sync::CancellationToken,
    /// Whether requests' spans join the trace they carry, and gRPC calls
    /// send theirs on ([`McpServer::with_opentelemetry`](super::McpServer::with_opentelemetry)).
    #[cfg(feature = "otel")]
    pub(super) opentelemetry: bool,
}

/// Which tools a person must approve, and what happens where the client
/// cannot ask.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ConsentSettings {
    pub(super) class: ConfirmClass,
    pub(super) unsupported: Unsupported,
}

/// One MCP session: rmcp builds one per stdio connection and one per HTTP
/// session (at `initialize`), and drops it when the session ends.
#[derive(Clone)]
pub(super) struct Handler {
    state: Arc<SessionState>,
}

struct SessionState {
    shared: Arc<Shared>,
    /// The caller a session belongs to (issuer, subject), from the
    /// `initialize` that started it: another caller's token cannot use it.
    #[cfg(feature = "oauth")]
    owner: Mutex<Option<(String, String)>>,
    /// The session id for stdio; over HTTP it comes with each request.
    fixed_id: Option<String>,
    /// This handler served an `initialize`: it is a session's, not one
    /// stateless request's, and its namespace ends with it.
    initialized: std::sync::atomic::AtomicBool,
    /// The session's toolkit, built on first use, with its scope: a
    /// session's or stdio's (a stateless request's handler serves one
    /// request, and keeps nothing).
    bound: Mutex<Option<(Scope, Arc<Toolkit>)>>,
    /// The toolsets this session lists (tool search): the server's initial
    /// ones and those the model enabled since.
    #[cfg(feature = "tool-search")]
    enabled: Mutex<std::collections::BTreeSet<String>>,
}

impl Drop for SessionState {
    /// The session is over: forget its namespace now rather than at the
    /// TTL. Only a session's or stdio's is bound, never a caller's, which
    /// lives across requests.
    fn drop(&mut self) {
        let bound = self
            .bound
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        let owns_namespace =
            self.fixed_id.is_some() || self.initialized.load(std::sync::atomic::Ordering::Relaxed);
        if let (true, Some((scope, _)), Source::PerSession { sessions, .. }) =
            (owns_namespace, bound, &self.shared.source)
        {
            sessions.forget(&scope);
        }
    }
}

impl Handler {
    /// The server's metrics, when it has them.
    #[cfg(feature = "admin")]
    pub(super) fn metrics(&self) -> Option<&super::admin::Metrics> {
        self.state.shared.metrics.as_ref()
    }

    pub(super) fn new(shared: Arc<Shared>, fixed_id: Option<String>) -> Self {
        #[cfg(feature = "tool-search")]
        let enabled = Mutex::new(
            shared
                .catalog
                .as_ref()
                .map(|catalog| catalog.initial.clone())
                .unwrap_or_default(),
        );
        Self {
            state: Arc::new(SessionState {
                #[cfg(feature = "tool-search")]
                enabled,
                shared,
                #[cfg(feature = "oauth")]
                owner: Mutex::new(None),
                fixed_id,
                initialized: std::sync::atomic::AtomicBool::new(false),
                bound: Mutex::new(None),
            }),
        }
    }

    fn bound(&self) -> MutexGuard<'_, Option<(Scope, Arc<Toolkit>)>> {
        self.state
            .bound
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The toolkit of the request's scope ([`super::scope`]): stdio's, the
    /// request's MCP session's, or, for a stateless request, the caller's
    /// that the edge found.
    /// Returned with the key of the scope it is for (a single toolkit's is
    /// the stdio session's).
    fn scoped_toolkit(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<(String, Arc<Toolkit>), ErrorData> {
        let shared = &self.state.shared;
        let (factory, sessions) = match &shared.source {
            Source::Fixed(toolkit) => {
                return Ok((format!("fixed-{}", shared.stdio_session), toolkit.clone()));
            }
            Source::PerSession { factory, sessions } => (factory, sessions),
        };
        let id = match &self.state.fixed_id {
            Some(id) => Some(Scope::stdio(id)),
            None => {
                let id = session_id(context);
                #[cfg(feature = "oauth")]
                self.check_owner(context, &id)?;
                (!id.is_empty()).then(|| Scope::session(&id))
            }
        };
        let Some(scope) = id else {
            // Stateless: the caller's scope, which the edge put on the
            // request (it refused the request had there been none).
            let scope = context
                .extensions
                .get::<http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Scope>())
                .ok_or_else(|| {
                    ErrorData::invalid_request(
                        "this request has no MCP session and no caller identity to keep its aliases under",
                        None,
                    )
                })?;
            // Its view, built once and shared while the scope is active
            // (the idle views swept first, unpinning their scopes before
            // `sessions` sweeps the expired ones).
            let toolkit = shared.views.get_or_build(
                scope.key(),
                || sessions.alias_manager(scope),
                |aliases| build(factory.as_ref(), aliases),
            )?;
            return Ok((scope.key().to_owned(), toolkit));
        };
        let key = scope.key().to_owned();
        let mut bound = self.bound();
        if let Some((kept, toolkit)) = bound.as_ref()
            && *kept == scope
        {
            return Ok((key, toolkit.clone()));
        }
        shared.views.sweep();
        let toolkit = build(factory.as_ref(), sessions.alias_manager(&scope))?;
        *bound = Some((scope, toolkit.clone()));
        Ok((key, toolkit))
    }
}

/// The toolkit of one scope, on its namespace.
fn build(factory: &Factory, aliases: Arc<AliasManager>) -> Result<Arc<Toolkit>, ErrorData> {
    factory(aliases)
        .map(Arc::new)
        .map_err(|e| ErrorData::internal_error(format!("the toolkit cannot be built: {e}"), None))
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        self.state.shared.config.clone()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&MAX_PROTOCOL_VERSION))
    }

    /// The session is its initializer's from here on: were the owner
    /// bound at the first call instead, another user who learned the
    /// session id could call first and take it.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        let span = self.request_span("initialize", None, &context);
        let started = std::time::Instant::now();
        let answer = self
            .answer_initialize(request, context)
            .instrument(span.clone())
            .await;
        let ended = super::traced::ended(&answer, |_| false);
        self.finish_request(&span, "initialize", None, ended, None, started.elapsed());
        answer
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let span = self.request_span("tools/list", None, &context);
        let started = std::time::Instant::now();
        let answer = self
            .answer_list_tools(request, context)
            .instrument(span.clone())
            .await;
        let ended = super::traced::ended(&answer, |_| false);
        self.finish_request(&span, "tools/list", None, ended, None, started.elapsed());
        answer
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.state
            .shared
            .tools
            .iter()
            .find(|t| t.name == name)
            .cloned()
    }

    /// rmcp reads a request whose params do not fit its method's as a custom
    /// request: a `tools/call` whose `arguments` is an array is one. That is
    /// invalid params (`-32602`), not an unknown method (`-32601`, rmcp's
    /// answer, which is kept for methods this server does not have).
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(custom_request_error(
            &request.method,
            request.params.as_ref(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let started = std::time::Instant::now();
        let tool = request.name.to_string();
        let caller = self.audit_caller(&context);
        let span = self.request_span("tools/call", Some(&tool), &context);
        let (answer, notes) = super::audit::noted(self.answer_call_tool(request, context))
            .instrument(span.clone())
            .await;
        let took = started.elapsed();
        let ended = super::traced::ended(
            &answer,
            |r| matches!(r, CallToolResponse::Complete(r) if r.is_error == Some(true)),
        );
        super::audit::record(&tool, &caller, &notes, ended.error_type.is_some(), took);
        let grpc_status = notes.grpc_status.map(|code| code as i32);
        self.finish_request(&span, "tools/call", Some(&tool), ended, grpc_status, took);
        #[cfg(feature = "admin")]
        if let (Some(metrics), Some(decision)) = (self.metrics(), notes.consent) {
            metrics.record_consent(&tool, decision);
        }
        answer
    }

    /// `tasks/get`: where the task's operation stands at the service
    /// (`GetOperation`), a finished one's result the tool's answer.
    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let (scope, toolkit, task) = self.task_of(&request.task_id, &context)?;
        let tool = task_tool(&toolkit, &task)?;
        let options = self.task_call_options(tool, &toolkit, &context)?;
        let state = toolkit
            .poll_operation(tool, &task.operation, &options)
            .await
            .map_err(operation_error)?;
        let detailed = match state {
            OperationState::Running { metadata } => {
                let mut base = task.task(&scope, TaskStatus::Working);
                if let Some(metadata) = metadata {
                    base = base.with_status_message(metadata);
                }
                DetailedTask::new(base, TaskPayload::Working)
            }
            OperationState::Done(result) => {
                let result = match serde_json::to_value(to_call_tool_result(result)) {
                    Ok(Value::Object(result)) => result,
                    _ => {
                        return Err(ErrorData::internal_error(
                            "the finished task's result could not be written",
                            None,
                        ));
                    }
                };
                DetailedTask::new(
                    task.task(&scope, TaskStatus::Completed),
                    TaskPayload::Completed { result },
                )
            }
            OperationState::Cancelled(result) => DetailedTask::new(
                task.task(&scope, TaskStatus::Cancelled)
                    .with_status_message(result.output),
                TaskPayload::Cancelled,
            ),
        };
        Ok(GetTaskResult::new(detailed))
    }

    /// `tasks/cancel`: asks the service to cancel the task's operation
    /// (`CancelOperation`); `tasks/get` then says where it stands.
    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let (_, toolkit, task) = self.task_of(&request.task_id, &context)?;
        let tool = task_tool(&toolkit, &task)?;
        let options = self.task_call_options(tool, &toolkit, &context)?;
        toolkit
            .cancel_operation(tool, &task.operation, &options)
            .await
            .map_err(operation_error)
    }
}

/// The tool of `task` in `toolkit`.
fn task_tool<'t>(
    toolkit: &'t Toolkit,
    task: &TaskRef,
) -> Result<&'t proto_ai_tools::toolkit::Tool, ErrorData> {
    toolkit.get(&task.tool).ok_or_else(|| {
        ErrorData::invalid_params(
            format!("the tool `{}` of this task is no longer served", task.tool),
            None,
        )
    })
}

/// A failure to poll or cancel an operation as a JSON-RPC error: invalid
/// params when the service does not know it (or has no Operations service),
/// else an internal error that may pass.
fn operation_error(error: proto_ai_tools::executor::OperationError) -> ErrorData {
    if error.unknown {
        ErrorData::invalid_params(error.message, None)
    } else {
        ErrorData::internal_error(error.message, None)
    }
}

impl Handler {
    /// `tools/list`, unmeasured.
    async fn answer_list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        #[cfg(feature = "oauth")]
        self.check_owner(&context, &session_id(&context))?;
        let visible = self
            .state
            .shared
            .tools
            .iter()
            .filter(|tool| self.may_use(tool, &context));
        #[cfg(feature = "tool-search")]
        if let Some(catalog) = &self.state.shared.catalog {
            #[cfg(feature = "redis")]
            self.learn_stored_toolsets(&context).await;
            let enabled = self.enabled();
            let tools = catalog
                .meta_tools
                .iter()
                .chain(visible.filter(|tool| catalog.listed(&tool.name, &enabled)))
                .cloned()
                .collect();
            return Ok(ListToolsResult::with_all_items(tools));
        }
        Ok(ListToolsResult::with_all_items(visible.cloned().collect()))
    }

    /// `initialize`, unmeasured.
    async fn answer_initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        #[cfg(feature = "oauth")]
        if let Some(caller) = principal(&context) {
            *self
                .state
                .owner
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) =
                Some((caller.issuer.clone(), caller.subject.clone()));
        }
        self.state
            .initialized
            .store(true, std::sync::atomic::Ordering::Relaxed);
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    /// `tools/call`, unmeasured.
    async fn answer_call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        #[cfg(feature = "tool-search")]
        if let Some(catalog) = self.state.shared.catalog.clone() {
            match self.meta_tool(&catalog, &mut request, &context).await {
                MetaCall::Answered(result) => return Ok(to_call_tool_result(result).into()),
                MetaCall::Refused(error) => return Err(error),
                MetaCall::CallTool | MetaCall::NotMeta => {}
            }
        }
        let (scope_key, toolkit) = self.scoped_toolkit(&context)?;
        if request.name == super::tasks::OPERATIONS_GET
            && self.state.shared.long_running.is_some()
            && toolkit.get(&request.name).is_none()
        {
            let result = self
                .operations_get(
                    &toolkit,
                    request.arguments.take().unwrap_or_default(),
                    &context,
                )
                .await;
            return Ok(to_call_tool_result(result).into());
        }
        // The one lookup of the call: the toolkit runs what is found here.
        let Some(tool) = toolkit.get(&request.name) else {
            let known = toolkit
                .tools()
                .iter()
                .map(proto_ai_tools::toolkit::Tool::name);
            return Err(ErrorData::invalid_params(
                proto_ai_tools::__gateway::unknown_tool_message(&request.name, known),
                None,
            ));
        };
        #[cfg(feature = "oauth")]
        if let Some(refused) = self.scope_refusal(tool, &context) {
            return Ok(to_call_tool_result(refused).into());
        }
        // Passed on as parsed: written out as text, they would only be
        // parsed again.
        let args = Value::Object(request.arguments.take().unwrap_or_default());
        // Before anything reaches the service, a task's too: the server's
        // policy, never an argument, decides.
        let returned = Returned {
            state: request.request_state.take(),
            responses: request.input_responses.take(),
        };
        match self
            .consent(tool, &args, &scope_key, returned, &context)
            .await
        {
            Gate::Run => {}
            Gate::Refuse(refused) => {
                return Ok(to_call_tool_result(ToolResult::error(refused)).into());
            }
            Gate::Ask(input) => return Ok(CallToolResponse::InputRequired(input)),
        }
        let mut options = match self.call_options(tool, &toolkit, &context) {
            Ok(options) => options,
            Err(refused) => return Ok(to_call_tool_result(refused).into()),
        };
        if self.as_task(tool, &context) {
            return Ok(self
                .start_task(&toolkit, &scope_key, tool, args, &options, &context)
                .await);
        }
        // Set by the HTTP edge: cancelled when the client's connection
        // closes before the response has been sent.
        let gone = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<edge::ClientGone>())
            .filter(|_| self.state.shared.calls.cancel_on_disconnect)
            .map(|gone| gone.token().clone());
        let gone = async move {
            match gone {
                Some(token) => token.cancelled_owned().await,
                None => std::future::pending().await,
            }
        };
        // A client that sent a progress token hears of each message of a
        // server stream as it arrives, before the result.
        let progress = context.meta.get_progress_token().map(|token| {
            let (sent, mut received) = tokio::sync::mpsc::unbounded_channel::<u64>();
            options = std::mem::take(&mut options).progress(move |count| {
                let _ = sent.send(count);
            });
            let peer = context.peer.clone();
            tokio::spawn(async move {
                while let Some(count) = received.recv().await {
                    let note = ProgressNotificationParam::new(token.clone(), count as f64)
                        .with_message(format!("{count} messages received"));
                    if peer.notify_progress(note).await.is_err() {
                        break;
                    }
                }
            })
        });
        // Either way the call's future is dropped, which cancels it at the
        // service (a gRPC stream reset).
        let result = tokio::select! {
            result = toolkit.run(tool, args.into(), &options) => result,
            () = context.ct.cancelled() => {
                super::audit::note(|notes| notes.outcome = Some("cancelled"));
                ToolResult::error("the call was cancelled by the client")
            }
            () = self.state.shared.drain_over.cancelled() => {
                super::audit::note(|notes| notes.outcome = Some("did_not_finish"));
                ToolResult::error(format!(
                "{} did not finish: the server stopped (it is being restarted or scaled down) \
                 before the service answered, so it may or may not have taken effect: check first \
                 (for example by listing) before repeating a call that creates or changes \
                 something; a repeated call reaches a running server.",
                request.name
            ))
            }
            () = gone => {
                super::audit::note(|notes| notes.outcome = Some("cancelled"));
                ToolResult::error(format!(
                "{} was cancelled because the client's connection closed before the result was sent; \
                 it may or may not have taken effect: check first (for example by listing) before \
                 repeating a call that creates or changes something.",
                request.name
            ))
            }
        };
        // Dropping the options closes the channel: the forwarder sends what
        // is left, then ends.
        drop(options);
        if let Some(forwarder) = progress {
            let _ = forwarder.await;
        }
        Ok(to_call_tool_result(result).into())
    }

    /// Whether this call of `tool` is answered with a task: the tool is
    /// long-running, the server advertises tasks, and the client declared
    /// them (in this request or at `initialize`).
    fn as_task(
        &self,
        tool: &proto_ai_tools::toolkit::Tool,
        context: &RequestContext<RoleServer>,
    ) -> bool {
        self.state.shared.config.capabilities.supports_tasks()
            && context
                .client_capabilities()
                .is_some_and(|caps| caps.supports_tasks())
            && matches!(tool.long_running(), Some(Ok(_)))
    }

    /// Makes the call of long-running `tool` and answers with the task that
    /// follows its operation; a call that fails is answered as any call.
    async fn start_task(
        &self,
        toolkit: &Toolkit,
        scope: &str,
        tool: &proto_ai_tools::toolkit::Tool,
        args: Value,
        options: &CallOptions,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let started = tokio::select! {
            started = toolkit.start_operation(tool, args.into(), options) => started,
            () = context.ct.cancelled() => {
                Err(ToolResult::error("the call was cancelled by the client"))
            }
        };
        match started {
            Ok(operation) => {
                let task = TaskRef::new(tool.name(), operation);
                CallToolResponse::Task(CreateTaskResult::new(task.task(scope, TaskStatus::Working)))
            }
            Err(result) => to_call_tool_result(result).into(),
        }
    }

    /// The task `id` names in the request's scope, with the scope's key and
    /// toolkit; an id given in another scope (or no id at all) is unknown.
    fn task_of(
        &self,
        id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<(String, Arc<Toolkit>, TaskRef), ErrorData> {
        let (scope, toolkit) = self.scoped_toolkit(context)?;
        let task = TaskRef::read(&scope, id).ok_or_else(|| {
            ErrorData::invalid_params(
                format!(
                    "there is no task `{}` here: a task id works only in the session (or for the caller) that started it",
                    proto_ai_tools_schema::inbound::shorten(id)
                ),
                None,
            )
        })?;
        Ok((scope, toolkit, task))
    }

    /// The options of a `tasks/get` or `tasks/cancel` of `tool`'s task:
    /// those a call of `tool` would have (deadline, forwarded headers,
    /// claims), or the refusal as a JSON-RPC error.
    fn task_call_options(
        &self,
        tool: &proto_ai_tools::toolkit::Tool,
        toolkit: &Toolkit,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallOptions, ErrorData> {
        #[cfg(feature = "oauth")]
        if let Some(refused) = self.scope_refusal(tool, context) {
            return Err(ErrorData::invalid_request(refused.output, None));
        }
        self.call_options(tool, toolkit, context)
            .map_err(|refused| ErrorData::invalid_request(refused.output, None))
    }

    /// A call of `operations_get`: where the named operation stands, a
    /// finished one's result the answer of the tool that started it.
    async fn operations_get(
        &self,
        toolkit: &Toolkit,
        arguments: rmcp::model::JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> ToolResult {
        use super::tasks::OPERATIONS_GET;
        let (name, tool_name) = match super::tasks::operations_get_arguments(&arguments) {
            Ok(found) => found,
            Err(problem) => return ToolResult::error(problem),
        };
        let long_running = self
            .state
            .shared
            .long_running
            .as_deref()
            .unwrap_or_default();
        let tool_name = match tool_name {
            Some(tool) if long_running.contains(&tool) => tool,
            Some(tool) => {
                return ToolResult::error(format!(
                    "{OPERATIONS_GET}: `{}` is not a tool that starts operations; give one of {}",
                    proto_ai_tools_schema::inbound::shorten(&tool),
                    long_running.join(", ")
                ));
            }
            None => match long_running {
                [only] => only.clone(),
                _ => {
                    return ToolResult::error(format!(
                        "{OPERATIONS_GET}: say which tool started the operation in `tool`: one of {}",
                        long_running.join(", ")
                    ));
                }
            },
        };
        let Some(tool) = toolkit.get(&tool_name) else {
            return ToolResult::error(format!(
                "{OPERATIONS_GET}: the tool {tool_name} is not served"
            ));
        };
        #[cfg(feature = "oauth")]
        if let Some(refused) = self.scope_refusal(tool, context) {
            return refused;
        }
        let options = match self.call_options(tool, toolkit, context) {
            Ok(options) => options,
            Err(refused) => return refused,
        };
        // An alias of an operation's name (an overlay or the proto gives
        // `Operation.name` a prefix) stands for the name the conversation
        // was given; one it was never given is refused, as any call refuses
        // an invented alias, rather than sent to the service.
        let aliases = toolkit.alias_manager();
        let prefix = tool.agent_tool().and_then(|agent| {
            agent
                .response_aliases
                .iter()
                .find(|a| a.message == proto_ai_tools_schema::proto::OPERATION && a.field == "name")
                .map(|a| a.prefix)
        });
        let operation = match (prefix, proto_ai_tools_schema::names::split_alias(&name)) {
            (Some(prefix), Some((given, _))) if given == prefix => {
                let _ = aliases.fetch_text(&name).await;
                match aliases.resolve(&name) {
                    Some(operation) => operation,
                    None => {
                        let known = aliases.aliases_of(prefix);
                        return ToolResult::error(format!(
                            "{OPERATIONS_GET}: `{}` is not an operation this conversation was given; {}",
                            proto_ai_tools_schema::inbound::shorten(&name),
                            if known.is_empty() {
                                format!("start one with {tool_name} first")
                            } else {
                                format!("the ones given are: {}", known.join(", "))
                            }
                        ));
                    }
                }
            }
            _ => name.clone(),
        };
        match toolkit.poll_operation(tool, &operation, &options).await {
            Ok(OperationState::Running { metadata }) => {
                let metadata = metadata
                    .and_then(|text| serde_json::from_str::<Value>(&text).ok())
                    .unwrap_or(Value::Null);
                let mut running = serde_json::Map::new();
                running.insert("name".to_owned(), Value::String(name));
                running.insert("done".to_owned(), Value::Bool(false));
                if !metadata.is_null() {
                    running.insert("metadata".to_owned(), metadata);
                }
                ToolResult::ok(Value::Object(running).to_string())
            }
            Ok(OperationState::Done(result) | OperationState::Cancelled(result)) => result,
            Err(error) => ToolResult::error(format!("{OPERATIONS_GET}: {}", error.message)),
        }
    }
}

/// What a call of a meta-tool came to (tool search).
#[cfg(feature = "tool-search")]
enum MetaCall {
    /// Not a meta-tool: the call goes on as it is.
    NotMeta,
    /// `call_tool`: the request now names the tool it calls and carries its
    /// arguments, and goes on as a call of that tool.
    CallTool,
    /// Answered here.
    Answered(ToolResult),
    /// Refused as a protocol error, as a direct call would be.
    #[cfg_attr(not(feature = "oauth"), allow(dead_code))]
    Refused(ErrorData),
}

impl Handler {
    /// Whether the caller of `context` may use `tool`: every tool, unless
    /// OAuth's tool scopes say otherwise (feature `oauth`).
    fn may_use(&self, tool: &rmcp::model::Tool, context: &RequestContext<RoleServer>) -> bool {
        #[cfg(feature = "oauth")]
        if let Some(rule) = self.tool_scope_rule() {
            let read_only = tool
                .annotations
                .as_ref()
                .and_then(|a| a.read_only_hint)
                .unwrap_or(false);
            return principal(context).is_some_and(|caller| caller.may_use(Some(rule), read_only));
        }
        let _ = (tool, context);
        true
    }

    /// The toolsets this session lists.
    #[cfg(feature = "tool-search")]
    fn enabled(&self) -> MutexGuard<'_, std::collections::BTreeSet<String>> {
        self.state
            .enabled
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The session of `context`, when sessions roam and this handler is a
    /// session's: the records and the session id.
    #[cfg(all(feature = "redis", feature = "tool-search"))]
    fn roaming(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Option<(&super::session_store::SessionRecords, String)> {
        let records = self.state.shared.records.as_deref()?;
        let session = self
            .state
            .initialized
            .load(std::sync::atomic::Ordering::Relaxed)
            .then(|| session_id(context))
            .filter(|id| !id.is_empty())?;
        Some((records, session))
    }

    /// Adds the toolsets the session enabled on any gateway (its record's)
    /// to those it lists here: the same session may be served by several
    /// gateways at once, and one enabled elsewhere is enabled here too.
    /// Toolsets are only ever added, so the union is the session's set.
    #[cfg(all(feature = "redis", feature = "tool-search"))]
    async fn learn_stored_toolsets(&self, context: &RequestContext<RoleServer>) {
        let Some((records, session)) = self.roaming(context) else {
            return;
        };
        match records.load(&session).await {
            Ok(Some(stored)) => self.enabled().extend(stored.toolsets),
            Ok(None) => {}
            Err(e) => tracing::warn!(
                error = %e,
                "the MCP session store did not give the session's toolsets; the tool list has those enabled on this gateway"
            ),
        }
    }

    /// Keeps an enabled toolset in the session's record, for the other
    /// gateways that serve the session.
    #[cfg(all(feature = "redis", feature = "tool-search"))]
    async fn store_toolset(&self, context: &RequestContext<RoleServer>, toolset: &str) {
        let Some((records, session)) = self.roaming(context) else {
            return;
        };
        if let Err(e) = records.enable_toolset(&session, toolset).await {
            tracing::warn!(
                error = %e,
                toolset,
                "the MCP session store did not keep an enabled toolset; it is listed on this gateway only"
            );
        }
    }

    /// Answers a call of a meta-tool of tool search ([`super::tool_search`]),
    /// or turns a `call_tool` into the call it asks for.
    #[cfg(feature = "tool-search")]
    async fn meta_tool(
        &self,
        catalog: &super::tool_search::Catalog,
        request: &mut CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> MetaCall {
        use super::tool_search::{CALL_TOOL, ENABLE_TOOLSET, LIST_TOOLSETS, SEARCH_TOOLS};
        if !super::tool_search::Catalog::is_meta(&request.name) {
            return MetaCall::NotMeta;
        }
        // The session is its owner's, as for any call (the edge checks it
        // too).
        #[cfg(feature = "oauth")]
        if let Err(refused) = self.check_owner(context, &session_id(context)) {
            return MetaCall::Refused(refused);
        }
        let arguments = request.arguments.clone().unwrap_or_default();
        match request.name.as_ref() {
            SEARCH_TOOLS => {
                let found = catalog.search(&arguments, |name| {
                    self.get_tool(name)
                        .filter(|tool| self.may_use(tool, context))
                });
                MetaCall::Answered(match found {
                    Ok(text) => ToolResult::ok(text),
                    Err(problem) => ToolResult::error(format!("{SEARCH_TOOLS}: {problem}")),
                })
            }
            LIST_TOOLSETS => {
                let listed = catalog.toolsets(&arguments, |name| {
                    self.get_tool(name)
                        .is_some_and(|tool| self.may_use(&tool, context))
                });
                MetaCall::Answered(match listed {
                    Ok(text) => ToolResult::ok(text),
                    Err(problem) => ToolResult::error(format!("{LIST_TOOLSETS}: {problem}")),
                })
            }
            ENABLE_TOOLSET => {
                let (toolset, tools) = match catalog.toolset(&arguments) {
                    Ok(found) => found,
                    Err(problem) => {
                        return MetaCall::Answered(ToolResult::error(format!(
                            "{ENABLE_TOOLSET}: {problem}"
                        )));
                    }
                };
                let keeps_state = self.state.fixed_id.is_some()
                    || self
                        .state
                        .initialized
                        .load(std::sync::atomic::Ordering::Relaxed);
                let usable: Vec<&str> = tools
                    .iter()
                    .filter(|name| {
                        self.get_tool(name)
                            .is_some_and(|tool| self.may_use(&tool, context))
                    })
                    .map(String::as_str)
                    .collect();
                if usable.is_empty() {
                    return MetaCall::Answered(ToolResult::error(format!(
                        "{ENABLE_TOOLSET}: none of the tools of {toolset} is open to you"
                    )));
                }
                if !keeps_state {
                    return MetaCall::Answered(ToolResult::ok(format!(
                        "This request has no MCP session to keep a toolset enabled in, so the tool list stays as it is. Call the tools of {toolset} through {CALL_TOOL}: {}.",
                        usable.join(", ")
                    )));
                }
                let added = self.enabled().insert(toolset.to_owned());
                #[cfg(feature = "redis")]
                self.store_toolset(context, toolset).await;
                if added {
                    // A host that does not listen lists again or not at
                    // all: the result says how to call the tools either way.
                    let _ = context.peer.notify_tool_list_changed().await;
                }
                MetaCall::Answered(ToolResult::ok(format!(
                    "{} {toolset}: its tools {} now listed: {}. If they do not appear, call them through {CALL_TOOL}.",
                    if added { "Enabled" } else { "Already enabled:" },
                    if added { "are" } else { "were" },
                    usable.join(", ")
                )))
            }
            CALL_TOOL => {
                let name = match arguments.get("name") {
                    Some(Value::String(name)) => name.clone(),
                    _ => {
                        return MetaCall::Answered(ToolResult::error(format!(
                            "{CALL_TOOL}: `name` must be a tool's name, as {SEARCH_TOOLS} returns it"
                        )));
                    }
                };
                let target_arguments = match arguments.get("arguments") {
                    Some(Value::Object(arguments)) => arguments.clone(),
                    // As a direct call without arguments.
                    None | Some(Value::Null) => serde_json::Map::new(),
                    Some(_) => {
                        return MetaCall::Answered(ToolResult::error(format!(
                            "{CALL_TOOL}: `arguments` must be an object holding {}'s arguments, following its inputSchema",
                            proto_ai_tools_schema::inbound::shorten(&name)
                        )));
                    }
                };
                if let Some(unknown) = arguments.keys().find(|k| *k != "name" && *k != "arguments")
                {
                    return MetaCall::Answered(ToolResult::error(format!(
                        "{CALL_TOOL}: `{unknown}` is not a parameter; put the tool's own arguments in `arguments`"
                    )));
                }
                if super::tool_search::Catalog::is_meta(&name) {
                    return MetaCall::Answered(ToolResult::error(format!(
                        "{CALL_TOOL}: {name} is a meta-tool; call it directly"
                    )));
                }
                if self.get_tool(&name).is_none() {
                    return MetaCall::Answered(ToolResult::error(format!(
                        "{CALL_TOOL}: there is no tool `{}`; find tools with {SEARCH_TOOLS}",
                        proto_ai_tools_schema::inbound::shorten(&name)
                    )));
                }
                request.name = name.into();
                request.arguments = Some(target_arguments);
                MetaCall::CallTool
            }
            _ => MetaCall::NotMeta,
        }
    }

    /// The options of one tool call of `tool`: the server's, with its
    /// deadline ([`CallLimits::deadline`]), and the allow-listed headers of
    /// this very HTTP request on top (stdio has none). A `-bin` header is
    /// base64 on the wire and forwarded as the bytes it encodes.
    ///
    /// Fails closed: a forwarded header that appears more than once, or
    /// whose value gRPC metadata cannot carry, refuses the call with a tool
    /// error that names the header, never its value.
    fn call_options(
        &self,
        tool: &proto_ai_tools::toolkit::Tool,
        toolkit: &Toolkit,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallOptions, ToolResult> {
        let shared = &self.state.shared;
        let defaults = CallOptions {
            host: shared.call_options.host.or(Some(shared.host)),
            timeout: shared.calls.deadline(
                tool.name(),
                tool.timeout(),
                shared.call_options.timeout,
                toolkit.call_options().timeout,
            ),
            ..shared.call_options.clone()
        };
        // The caller's trace goes on to the service (W3C trace context in
        // `_meta`, SEP-414), under the defaults' keys but for forwarded
        // headers and claims.
        let defaults = defaults.overriding(&trace_context(&context.meta));
        // The call tells the request's audit event (and measure) how it
        // ended, the metrics too, and any observer the server was given.
        #[cfg(feature = "admin")]
        let metrics = shared.metrics.clone();
        let given = defaults.observer.clone();
        let defaults = defaults.observe(move |record| {
            super::audit::note_call(record);
            #[cfg(feature = "admin")]
            if let Some(metrics) = &metrics {
                metrics.record_call(record);
            }
            if let Some(given) = &given {
                given.record(record);
            }
        });
        // With OpenTelemetry on, the service gets the gRPC call's own span
        // as its parent, over the caller's trace context sent above.
        #[cfg(feature = "otel")]
        let defaults = if shared.opentelemetry {
            defaults.propagate(super::traced::current_trace_context)
        } else {
            defaults
        };
        let Some(parts) = context.extensions.get::<http::request::Parts>() else {
            return Ok(defaults);
        };
        let refused = |name: &str, why: String| {
            ToolResult::error(format!(
                "{} was not called: the request header `{name}` {why}, so nothing was sent to the service. \
                 Ask the user or the host to fix that header; retrying will not help.",
                tool.name()
            ))
        };
        let mut forwarded = CallOptions::new();
        for name in &shared.forward_headers {
            let mut values = parts.headers.get_all(name.as_str()).iter();
            let Some(value) = values.next() else {
                continue;
            };
            let count = 1 + values.count();
            if count > 1 {
                return Err(refused(
                    name,
                    format!(
                        "appears {count} times in this request, and a forwarded header is single-valued \
                         (which value was meant cannot be known)"
                    ),
                ));
            }
            if name.ends_with("-bin") {
                let Some(values) = decode_binary_header(value.as_bytes()) else {
                    return Err(refused(
                        name,
                        "is not valid base64: a `-bin` header carries its binary value in standard base64 \
                         (padding optional)"
                            .to_owned(),
                    ));
                };
                for bytes in values {
                    forwarded = forwarded.binary_metadata(name.as_str(), bytes);
                }
            } else {
                let Some(text) = metadata_text(value.as_bytes()) else {
                    return Err(refused(
                        name,
                        "holds a value gRPC metadata cannot carry: only printable ASCII \
                         (0x20-0x7E, no tab, no accented letters) can be forwarded"
                            .to_owned(),
                    ));
                };
                forwarded = forwarded.metadata(name.as_str(), text);
            }
        }
        #[cfg(feature = "oauth")]
        let forwarded = self.with_claims(forwarded, tool, parts)?;
        Ok(defaults.overriding(&forwarded))
    }
}

/// The `Mcp-Session-Id` of an HTTP request; empty when it has none.
fn session_id(context: &RequestContext<RoleServer>) -> String {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.headers.get(edge::SESSION_HEADER))
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// The caller of this request, when the server checks tokens.
#[cfg(feature = "oauth")]
fn principal(context: &RequestContext<RoleServer>) -> Option<Arc<super::auth::Principal>> {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Arc<super::auth::Principal>>())
        .cloned()
}

#[cfg(feature = "oauth")]
impl Handler {
    fn tool_scope_rule(&self) -> Option<&super::auth::ToolScopes> {
        self.state
            .shared
            .oauth
            .as_ref()
            .and_then(|verifier| verifier.config.tool_scope_rule())
    }

    /// A session is its initializer's (else, without one, its first
    /// caller's): a request of another caller that names it is refused (the
    /// MCP spec's advice against session hijacking).
    fn check_owner(&self, context: &RequestContext<RoleServer>, id: &str) -> Result<(), ErrorData> {
        let Some(caller) = principal(context) else {
            return Ok(());
        };
        if id.is_empty() {
            return Ok(());
        }
        let key = (caller.issuer.clone(), caller.subject.clone());
        let mut owner = self
            .state
            .owner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match owner.as_ref() {
            None => {
                *owner = Some(key);
                Ok(())
            }
            Some(kept) if *kept == key => Ok(()),
            Some(_) => Err(ErrorData::invalid_request(
                "this MCP session was started by another user; start a session of your own",
                None,
            )),
        }
    }

    /// The refusal of a call of a tool the caller's token does not open.
    fn scope_refusal(
        &self,
        tool: &proto_ai_tools::toolkit::Tool,
        context: &RequestContext<RoleServer>,
    ) -> Option<ToolResult> {
        let rule = self.tool_scope_rule()?;
        let read_only = tool.hints().read_only;
        let allowed =
            principal(context).is_some_and(|caller| caller.may_use(Some(rule), read_only));
        (!allowed).then(|| {
            ToolResult::error(format!(
                "{} was not called: it needs the scope `{}`, which the user's token does not grant, so nothing was sent to the service. Tell the user; retrying will not help.",
                tool.name(),
                super::auth::Principal::scope_for(rule, read_only)
            ))
        })
    }

    /// `forwarded` with the configured claims of the caller's token as
    /// metadata. A claim gRPC metadata cannot carry refuses the call; one
    /// the token lacks is not sent.
    fn with_claims(
        &self,
        mut forwarded: CallOptions,
        tool: &proto_ai_tools::toolkit::Tool,
        parts: &http::request::Parts,
    ) -> Result<CallOptions, ToolResult> {
        let Some(verifier) = &self.state.shared.oauth else {
            return Ok(forwarded);
        };
        let Some(caller) = parts.extensions.get::<Arc<super::auth::Principal>>() else {
            return Ok(forwarded);
        };
        for (claim, key) in verifier.config.claim_headers() {
            let refused = |why: &str| {
                ToolResult::error(format!(
                    "{} was not called: the claim `{claim}` of the user's token {why}, so it cannot be sent to the service as `{key}` and nothing was sent. Tell the user; retrying will not help.",
                    tool.name()
                ))
            };
            match caller.claim_text(claim) {
                Ok(None) => {}
                Ok(Some(text)) => match metadata_text(text.as_bytes()) {
                    Some(text) => forwarded = forwarded.metadata(key.as_str(), text),
                    None => {
                        return Err(refused(
                            "holds characters gRPC metadata cannot carry (only printable ASCII can be sent)",
                        ));
                    }
                },
                Err(why) => return Err(refused(why)),
            }
        }
        Ok(forwarded)
    }
}

/// The W3C trace context of a request's `_meta` (`traceparent`, and with
/// it `tracestate` and `baggage`) as the gRPC metadata of the same names,
/// which OpenTelemetry's gRPC instrumentation reads, so that one trace spans
/// agent, gateway and service. A `traceparent` that is not a valid
/// version-00 one is dropped, and its companions with it: the W3C spec
/// tells a receiver to restart the trace rather than fail the request.
pub(super) fn trace_context(meta: &rmcp::model::RequestMetaObject) -> CallOptions {
    let mut options = CallOptions::new();
    let Some(traceparent) = meta.get_traceparent().filter(|t| is_traceparent(t)) else {
        return options;
    };
    options = options.metadata("traceparent", traceparent);
    for (key, value, max) in [
        ("tracestate", meta.get_tracestate(), 512),
        ("baggage", meta.get_baggage(), 8192),
    ] {
        if let Some(value) = value
            && value.len() <= max
            && let Some(text) = metadata_text(value.as_bytes())
        {
            options = options.metadata(key, text);
        }
    }
    options
}

/// Whether `value` is a W3C `traceparent` of version 00:
/// `00-<32 hex trace id, not all zero>-<16 hex parent id, not all zero>-<2 hex flags>`.
fn is_traceparent(value: &str) -> bool {
    let hex = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let nonzero = |s: &str| s.bytes().any(|b| b != b'0');
    let parts: Vec<&str> = value.split('-').collect();
    matches!(parts.as_slice(), [version, trace, parent, flags]
        if *version == "00"
            && trace.len() == 32 && hex(trace) && nonzero(trace)
            && parent.len() == 16 && hex(parent) && nonzero(parent)
            && flags.len() == 2 && hex(flags))
}

/// `value` as the text of an ASCII gRPC metadata value, if it is one:
/// printable ASCII, `0x20` to `0x7E`.
pub(super) fn metadata_text(value: &[u8]) -> Option<&str> {
    if value.iter().all(|b| (0x20..=0x7e).contains(b)) {
        std::str::from_utf8(value).ok()
    } else {
        None
    }
}

/// The error for a request rmcp could not read as its method's: invalid
/// params for a method the server has, saying what is wrong, else an
/// unknown method.
pub(super) fn custom_request_error(method: &str, params: Option<&Value>) -> ErrorData {
    let kind = proto_ai_tools_schema::inbound::kind_of;
    match method {
        "tools/call" => {
            let arguments = params.and_then(|p| p.get("arguments"));
            let why = match arguments {
                Some(args) if !args.is_object() && !args.is_null() => {
                    format!("`arguments` must be a JSON object, not {}", kind(args))
                }
                _ => match serde_json::from_value::<CallToolRequestParams>(
                    params.cloned().unwrap_or(Value::Null),
                ) {
                    Err(e) => e.to_string(),
                    Ok(_) => "they do not match its schema".to_owned(),
                },
            };
            ErrorData::invalid_params(format!("invalid params of tools/call: {why}"), None)
        }
        "tools/list" | "ping" | "initialize" => ErrorData::invalid_params(
            format!(
                "invalid params of {method}: {} does not match its schema",
                params.map_or("null", kind)
            ),
            None,
        ),
        _ => ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            method.to_owned(),
            None,
        ),
    }
}

/// The values of a `-bin` header as gRPC defines them: standard base64,
/// padded or not, several values joined by commas; `None` when one does not
/// decode.
pub(super) fn decode_binary_header(value: &[u8]) -> Option<Vec<Vec<u8>>> {
    use base64::Engine as _;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const BASE64: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    value
        .split(|&b| b == b',')
        .map(|part| BASE64.decode(part.trim_ascii()).ok())
        .collect()
}

/// Why a header can never be forwarded into gRPC metadata, if it cannot.
pub(super) fn unforwardable(name: &str) -> Option<&'static str> {
    const HOP_BY_HOP: &[&str] = &[
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
    ];
    if HOP_BY_HOP.contains(&name) {
        return Some("it is a hop-by-hop header of this HTTP connection");
    }
    if name.starts_with("mcp-") || name.starts_with("content-") || name == "accept" {
        return Some("it belongs to the MCP transport itself");
    }
    if !name.ends_with("-bin") && CallOptions::new().metadata(name, "").check().is_err() {
        return Some(
            "it is not a valid gRPC metadata key (lowercase letters, digits, `_`, `.`, `-`; not `grpc-…`)",
        );
    }
    if name.ends_with("-bin")
        && CallOptions::new()
            .binary_metadata(name, [])
            .check()
            .is_err()
    {
        return Some("it is not a valid gRPC binary metadata key");
    }
    None
}
