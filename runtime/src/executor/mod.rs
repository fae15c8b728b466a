//! Turns a model's tool call into a gRPC call and the response into aliased JSON.
//!
//! # Tracing
//!
//! Every call is a [`tracing`] span `ai_tools.call` (level INFO; fields
//! `tool`, `rpc.service`, `rpc.method`, and `error`, the kind of failure
//! when there is one, never its text), over one DEBUG span per step:
//! `ai_tools.arguments` (parse, check and resolve the model's arguments,
//! aliases included), `ai_tools.grpc` (the call, `streaming` saying whether
//! the method streams; a stream is collected inside it) and
//! `ai_tools.response` (`bytes`: the answer written as aliased JSON). With
//! no subscriber installed a span costs a check of a static.
//!
//! Two events: `tool call` at INFO when a call ends (the same three fields,
//! `duration_ms` and `outcome`, `ok` or the kind of failure), and `tool call
//! arguments` at DEBUG, the request as sent with every
//! `tool_field.sensitive` field `"[redacted]"`
//! ([`proto_ai_tools_schema::proto::redact`]), built only when DEBUG is on. No
//! span or INFO event holds the arguments or the answer. The caller's
//! W3C trace context goes to the service as gRPC metadata (see
//! [`CallOptions`]), so one trace spans agent, gateway and service.

mod operations;
mod sentences;
mod stream;
mod transcode;

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use prost_reflect::{
    DescriptorPool, DeserializeOptions, DynamicMessage, MessageDescriptor, MethodDescriptor,
};
use proto_ai_tools_schema::HostProfile;
use proto_ai_tools_schema::inbound::Limits;
/// The names a result's fields are written under (proto names by default).
pub use proto_ai_tools_schema::output::JsonNames;
use serde_json::{Map, Value};
use tracing::Instrument as _;

use crate::alias::{AliasError, AliasManager, WalkPlan};
pub use crate::inbound::Arguments;
use crate::inbound::{Refusal, Resolve, prepare, request_schema};
use crate::memo::Memo;
use crate::result::{ToolResult, refused_options_message, unknown_tool_message};
use crate::tool::AgentTool;
use crate::transport::wire::{self, undecodable_response};
use crate::transport::{CallOptions, CallRecord, Code, Status, Transport};
#[doc(hidden)]
pub use operations::{OperationError, OperationState};
use sentences::{CallError, failure_sentence};
pub use stream::StreamLimits;
use transcode::Transcoder;

/// What `ai_tools!` generates: an `Executor<T>`, a typed face over a
/// [`ProtoExecutor`] with a method per tool. This trait is how the rest of
/// the crate builds and uses one without knowing its type:
/// [`Sessions::for_conversation`](crate::Sessions::for_conversation) builds
/// one over a conversation's aliases, and
/// [`ToolkitBuilder::generated`](crate::toolkit::ToolkitBuilder::generated)
/// takes its tools (through the `Into` it requires).
///
/// # Examples
///
/// ```
/// mod links {
///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
/// }
/// use std::sync::Arc;
/// use proto_ai_tools::{AliasManager, executor::GeneratedExecutor, transport::InProcessTransport};
///
/// fn build<E: GeneratedExecutor>(transport: E::Transport) -> E {
///     E::with_alias_manager(transport, Arc::new(AliasManager::new()))
/// }
/// let exec: links::Executor<InProcessTransport> = build(InProcessTransport::new());
/// assert!(exec.can_execute("links_create"));
/// ```
pub trait GeneratedExecutor: Into<ProtoExecutor<Self::Transport>> + Sized {
    /// What the executor's calls travel over.
    type Transport: Transport;

    /// An executor over `transport` that resolves and registers ids in
    /// `aliases` (one conversation's namespace).
    fn with_alias_manager(transport: Self::Transport, aliases: Arc<AliasManager>) -> Self;
}

/// Limits and policies of a [`ProtoExecutor`].
///
/// Every bound gives an error result that names the bound and the value at
/// fault (`links_create: \`tags\` has 5000 items, more than the limit of
/// 1000; send at most 1000 items`), before anything is sent.
///
/// # Examples
///
/// ```
/// let mut options = proto_ai_tools::executor::ExecutorOptions::default();
/// options.max_argument_bytes = 64 * 1024;
/// options.call = proto_ai_tools::CallOptions::new().timeout(std::time::Duration::from_secs(10));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExecutorOptions {
    /// The largest arguments text accepted, in bytes (default 256 KiB).
    pub max_argument_bytes: usize,
    /// The deepest nesting of arrays and objects accepted (default 32).
    pub max_argument_depth: usize,
    /// The longest string value (or object key) accepted, in bytes
    /// (default 64 KiB). Strings that hold JSON (a message or `Struct` past a
    /// dialect's cut) are bounded by it before they are decoded.
    pub max_string_bytes: usize,
    /// The most items accepted in one array (or entries in one map sent as
    /// an array of entries; default 1,000).
    pub max_array_items: usize,
    /// Pass a raw UUID the conversation has never seen through an
    /// alias-carrying field instead of refusing it (default `false`: a model
    /// that invents ids is stopped before the call).
    pub pass_unknown_uuids: bool,
    /// Deadline and metadata of every call.
    pub call: CallOptions,
    /// How much of a server-streaming method's stream one call collects.
    pub stream: StreamLimits,
    /// The names a response's fields are written under (default
    /// [`JsonNames::Proto`], the names the arguments use). A
    /// [`Toolkit`](crate::toolkit::Toolkit) writes its own
    /// ([`ToolkitBuilder::json_names`](crate::toolkit::ToolkitBuilder::json_names)).
    pub json_names: JsonNames,
}

impl ExecutorOptions {
    /// The bounds on one call's arguments, as the inbound rules take them.
    fn limits(&self) -> Limits {
        Limits {
            max_bytes: self.max_argument_bytes,
            max_depth: self.max_argument_depth,
            max_string_bytes: self.max_string_bytes,
            max_array_items: self.max_array_items,
            numbers_as_doubles: false,
        }
    }
}

impl Default for ExecutorOptions {
    fn default() -> Self {
        Self {
            max_argument_bytes: 256 * 1024,
            max_argument_depth: 32,
            max_string_bytes: 64 * 1024,
            max_array_items: 1_000,
            pass_unknown_uuids: false,
            call: CallOptions::new(),
            stream: StreamLimits::default(),
            json_names: JsonNames::default(),
        }
    }
}

/// Executes the tools of one descriptor pool over a [`Transport`], with the
/// aliases of one conversation.
///
/// `ai_tools!` wraps one of these in a typed `Executor`; it is public so that
/// tools and a pool obtained some other way can be executed too.
///
/// The data path of [`execute`](Self::execute): parse the arguments (bounded
/// size and depth) → undo provider shaping by the request descriptor
/// (`null` = absent, map entry arrays → maps, JSON-encoded message/Struct
/// strings → JSON) → reject unknown and hidden fields → protojson into a
/// `DynamicMessage` → resolve aliases in the fields the tool's
/// `request_aliases` list, checking the prefix → [`Transport::unary_encoded`]
/// → the response's bytes written as protojson text, the UUIDs of the fields
/// the tool's `response_aliases` list registered and replaced by their
/// aliases as they are written.
///
/// The output is protojson as prost-reflect writes it by default, but for
/// the field names: proto names (`page_theme_id`), the names the arguments
/// use, unless [`ExecutorOptions::json_names`] asks for camelCase
/// (`pageThemeId`); 64-bit integers as strings, enums by name, default
/// values left out. Inbound, both proto names and camelCase are accepted.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::{AgentTool, executor::ProtoExecutor, transport::InProcessTransport};
///
/// static TOOLS: &[&AgentTool] = &[];
/// static POOL: std::sync::LazyLock<prost_reflect::DescriptorPool> =
///     std::sync::LazyLock::new(prost_reflect::DescriptorPool::new);
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let exec = ProtoExecutor::new(TOOLS, &POOL, InProcessTransport::new());
/// let result = exec.execute("links_create", "{}").await;
/// assert!(result.is_error);
/// assert!(result.output.contains("unknown tool `links_create`"));
/// # }
/// ```
#[derive(Debug)]
pub struct ProtoExecutor<T> {
    tools: &'static [&'static AgentTool],
    pool: &'static DescriptorPool,
    transport: T,
    aliases: Arc<AliasManager>,
    options: ExecutorOptions,
}

impl<T: Clone> Clone for ProtoExecutor<T> {
    fn clone(&self) -> Self {
        Self {
            tools: self.tools,
            pool: self.pool,
            transport: self.transport.clone(),
            aliases: self.aliases.clone(),
            options: self.options.clone(),
        }
    }
}

impl<T: Transport> ProtoExecutor<T> {
    /// An executor with a fresh alias namespace. `pool` may be a
    /// `&'static LazyLock<DescriptorPool>` (it derefs).
    ///
    /// # Examples
    ///
    /// See [`ProtoExecutor`].
    pub fn new(
        tools: &'static [&'static AgentTool],
        pool: &'static DescriptorPool,
        transport: T,
    ) -> Self {
        Self::with_alias_manager(tools, pool, transport, Arc::new(AliasManager::new()))
    }

    /// An executor that shares `aliases` (a conversation's namespace) with others.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use proto_ai_tools::{AliasManager, executor::ProtoExecutor, transport::InProcessTransport};
    /// static POOL: std::sync::LazyLock<prost_reflect::DescriptorPool> =
    ///     std::sync::LazyLock::new(prost_reflect::DescriptorPool::new);
    ///
    /// let aliases = Arc::new(AliasManager::new());
    /// let exec = ProtoExecutor::with_alias_manager(&[], &POOL, InProcessTransport::new(), aliases.clone());
    /// assert!(Arc::ptr_eq(exec.alias_manager(), &aliases));
    /// ```
    pub fn with_alias_manager(
        tools: &'static [&'static AgentTool],
        pool: &'static DescriptorPool,
        transport: T,
        aliases: Arc<AliasManager>,
    ) -> Self {
        Self {
            tools,
            pool,
            transport,
            aliases,
            options: ExecutorOptions::default(),
        }
    }

    /// Replaces the limits and policies.
    ///
    /// # Examples
    ///
    /// ```
    /// # use proto_ai_tools::{executor::{ExecutorOptions, ProtoExecutor}, transport::InProcessTransport};
    /// # static POOL: std::sync::LazyLock<prost_reflect::DescriptorPool> =
    /// #     std::sync::LazyLock::new(prost_reflect::DescriptorPool::new);
    /// let mut options = ExecutorOptions::default();
    /// options.pass_unknown_uuids = true;
    /// let exec = ProtoExecutor::new(&[], &POOL, InProcessTransport::new()).with_options(options);
    /// assert!(exec.options().pass_unknown_uuids);
    /// ```
    pub fn with_options(mut self, options: ExecutorOptions) -> Self {
        self.options = options;
        self
    }

    /// The limits and policies in force.
    ///
    /// # Examples
    ///
    /// See [`with_options`](Self::with_options).
    pub fn options(&self) -> &ExecutorOptions {
        &self.options
    }

    /// The tools this executor runs.
    ///
    /// # Examples
    ///
    /// ```
    /// # use proto_ai_tools::{executor::ProtoExecutor, transport::InProcessTransport};
    /// # static POOL: std::sync::LazyLock<prost_reflect::DescriptorPool> =
    /// #     std::sync::LazyLock::new(prost_reflect::DescriptorPool::new);
    /// assert!(ProtoExecutor::new(&[], &POOL, InProcessTransport::new()).tools().is_empty());
    /// ```
    pub fn tools(&self) -> &'static [&'static AgentTool] {
        self.tools
    }

    /// The descriptors requests are encoded and responses decoded with.
    ///
    /// # Examples
    ///
    /// ```
    /// # use proto_ai_tools::{executor::ProtoExecutor, transport::InProcessTransport};
    /// # static POOL: std::sync::LazyLock<prost_reflect::DescriptorPool> =
    /// #     std::sync::LazyLock::new(prost_reflect::DescriptorPool::new);
    /// let executor = ProtoExecutor::new(&[], &POOL, InProcessTransport::new());
    /// assert_eq!(executor.pool().files().count(), 0);
    /// ```
    pub fn pool(&self) -> &'static DescriptorPool {
        self.pool
    }

    /// Whether `tool` is one of this executor's tools.
    ///
    /// # Examples
    ///
    /// ```
    /// # use proto_ai_tools::{executor::ProtoExecutor, transport::InProcessTransport};
    /// # static POOL: std::sync::LazyLock<prost_reflect::DescriptorPool> =
    /// #     std::sync::LazyLock::new(prost_reflect::DescriptorPool::new);
    /// assert!(!ProtoExecutor::new(&[], &POOL, InProcessTransport::new()).can_execute("links_create"));
    /// ```
    pub fn can_execute(&self, tool: &str) -> bool {
        tool_index(self.tools, self.pool).contains_key(tool)
    }

    /// The conversation's alias namespace.
    ///
    /// # Examples
    ///
    /// See [`with_alias_manager`](Self::with_alias_manager).
    pub fn alias_manager(&self) -> &Arc<AliasManager> {
        &self.aliases
    }

    /// The transport calls go through.
    ///
    /// # Examples
    ///
    /// ```
    /// # use proto_ai_tools::{executor::ProtoExecutor, transport::InProcessTransport};
    /// # static POOL: std::sync::LazyLock<prost_reflect::DescriptorPool> =
    /// #     std::sync::LazyLock::new(prost_reflect::DescriptorPool::new);
    /// let exec = ProtoExecutor::new(&[], &POOL, InProcessTransport::new());
    /// let _: &InProcessTransport = exec.transport();
    /// ```
    pub fn transport(&self) -> &T {
        &self.transport
    }

    /// Runs `tool` with the model's arguments: JSON text as the model sent
    /// it (empty means `{}`) or a value already parsed. Never panics: every
    /// failure is a [`ToolResult`] with `is_error` set.
    ///
    /// # Examples
    ///
    /// See [`ProtoExecutor`].
    pub async fn execute<'a>(&self, tool: &str, args: impl Into<Arguments<'a>>) -> ToolResult {
        self.execute_with(tool, args, &CallOptions::new()).await
    }

    /// [`execute`](Self::execute) with this call's options (deadline, metadata) over the
    /// executor's defaults ([`ExecutorOptions::call`]); a bad metadata key is an error
    /// result naming it, and nothing is sent.
    ///
    /// # Examples
    ///
    /// ```
    /// # use proto_ai_tools::{CallOptions, executor::ProtoExecutor, transport::InProcessTransport};
    /// # static POOL: std::sync::LazyLock<prost_reflect::DescriptorPool> =
    /// #     std::sync::LazyLock::new(prost_reflect::DescriptorPool::new);
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let exec = ProtoExecutor::new(&[], &POOL, InProcessTransport::new());
    /// let options = CallOptions::new().metadata("x-user", "42");
    /// let result = exec.execute_with("nope", serde_json::json!({}), &options).await;
    /// assert!(result.is_error && result.output.starts_with("unknown tool `nope`"));
    /// # }
    /// ```
    pub async fn execute_with<'a>(
        &self,
        tool: &str,
        args: impl Into<Arguments<'a>>,
        options: &CallOptions,
    ) -> ToolResult {
        let index = tool_index(self.tools, self.pool);
        let Some((def, _)) = index.get(tool) else {
            let known = self.tools.iter().map(|t| t.name);
            return ToolResult::error(unknown_tool_message(tool, known));
        };
        match options.for_tool(&self.options.call, def.timeout) {
            Ok(options) => {
                let names = self.options.json_names;
                self.run(def, args.into(), &options, names).await
            }
            Err(problem) => ToolResult::error(refused_options_message(tool, &problem)),
        }
    }

    fn limits(&self) -> Limits {
        self.options.limits()
    }

    /// Runs `tool`, one of this executor's, with `options` worked out and
    /// checked already ([`CallOptions::for_tool`]), its response written
    /// with field names `names`: the rest of a call, for a caller that
    /// looked the tool up itself (a toolkit).
    pub(crate) async fn run(
        &self,
        tool: &'static AgentTool,
        args: Arguments<'_>,
        options: &CallOptions,
        names: JsonNames,
    ) -> ToolResult {
        // One span a call, and one a step (see the module docs, "Tracing"):
        // with no subscriber installed, each is a check of a static and
        // nothing is recorded.
        let span = tracing::info_span!(
            "ai_tools.call",
            tool = tool.name,
            rpc.service = tool.method.service,
            rpc.method = tool.method.method,
            error = tracing::field::Empty,
        );
        let recorded = span.clone();
        let started = std::time::Instant::now();
        async {
            let mut backend = Backend::default();
            let (result, outcome) = match self.call(tool, args, options, names, &mut backend).await
            {
                Ok(output) => (ToolResult::ok(output), "ok"),
                Err(error) => {
                    let kind = error.kind();
                    recorded.record("error", kind);
                    if let CallError::Status(status) = &error {
                        backend.status = Some(status.code);
                    }
                    let sentence = failure_sentence(tool.name, &self.aliases, error).await;
                    (ToolResult::error(sentence), kind)
                }
            };
            let duration = started.elapsed();
            // The one line a call writes at INFO (guide/src/observability.md, "Logs"): what ran,
            // how long it took, how it ended; never the arguments or the
            // answer.
            tracing::info!(
                tool = tool.name,
                rpc.service = tool.method.service,
                rpc.method = tool.method.method,
                duration_ms = duration.as_secs_f64() * 1e3,
                outcome,
                "tool call"
            );
            if let Some(observer) = &options.observer {
                let mut record = CallRecord::new(tool.name, outcome, duration);
                record.rpc_service = Some(tool.method.service);
                record.rpc_method = Some(tool.method.method);
                record.grpc_status = backend.status;
                record.backend = backend.elapsed;
                observer.record(&record);
            }
            result
        }
        .instrument(span)
        .await
    }

    async fn call(
        &self,
        tool: &'static AgentTool,
        args: Arguments<'_>,
        options: &CallOptions,
        names: JsonNames,
        backend: &mut Backend,
    ) -> Result<String, CallError> {
        let method = self.method(tool)?;
        let request = self
            .build_request(&method.input(), args, options)
            .instrument(tracing::debug_span!("ai_tools.arguments"))
            .await?;
        if tracing::enabled!(tracing::Level::DEBUG) {
            debug_arguments(tool, &request);
        }
        let sent = std::time::Instant::now();
        if method.is_server_streaming() {
            let collected = async {
                let options = options.propagated();
                self.collect_stream(tool, &method, request, &options, names)
                    .await
            }
            .instrument(grpc_span(&method, true))
            .await;
            backend.elapsed = Some(sent.elapsed());
            // A stream's status is known when it ended whole; an error of
            // the aliases after some messages leaves it unsaid.
            if collected.is_ok() {
                backend.status = Some(Code::Ok);
            }
            return collected;
        }
        let response = self.unary_traced(&method, request, options).await;
        backend.elapsed = Some(sent.elapsed());
        let response = response.map_err(CallError::Status)?;
        backend.status = Some(Code::Ok);
        self.aliased_json_of_encoded(tool, &method.output(), &response, names)
            .instrument(tracing::debug_span!(
                "ai_tools.response",
                bytes = response.len()
            ))
            .await
    }

    /// The response in `bytes` as JSON, its fields under `names`, its ids
    /// given aliases: written straight from the bytes where the transcoder
    /// can, else decoded into a `DynamicMessage` first. Both write the same
    /// text.
    async fn aliased_json_of_encoded(
        &self,
        tool: &'static AgentTool,
        desc: &MessageDescriptor,
        bytes: &[u8],
        names: JsonNames,
    ) -> Result<String, CallError> {
        let written = transcoded(&self.aliases, tool.response_aliases, desc, bytes, names)
            .await
            .map_err(aliases_after_call)?;
        if let Some(json) = written {
            return Ok(json);
        }
        let mut response = DynamicMessage::decode(desc.clone(), bytes)
            .map_err(|e| CallError::Unreadable(undecodable_response(desc, &e)))?;
        self.aliased_json(&mut response, &response_plan(tool, desc), names)
            .await
    }

    /// `response` as JSON, its ids given aliases first.
    async fn aliased_json(
        &self,
        response: &mut DynamicMessage,
        plan: &WalkPlan<'_>,
        names: JsonNames,
    ) -> Result<String, CallError> {
        self.aliases
            .register_planned(response, plan)
            .await
            .map_err(aliases_after_call)?;
        let mut out = Vec::new();
        let mut ser = serde_json::Serializer::new(&mut out);
        response
            .serialize_with_options(&mut ser, &names.serialize_options())
            .map_err(|e| {
                CallError::Internal(format!("the response could not be written as JSON: {e}"))
            })?;
        String::from_utf8(out).map_err(|e| CallError::Internal(e.to_string()))
    }

    /// A server stream collected into one result, within
    /// [`ExecutorOptions::stream`]: see [`stream::collect_stream`].
    /// One unary call of `method` in its client span ([`grpc_span`]): the
    /// trace context goes to the service as the span's
    /// ([`CallOptions::propagated`]), and the span says the call's status.
    pub(crate) async fn unary_traced(
        &self,
        method: &MethodDescriptor,
        request: DynamicMessage,
        options: &CallOptions,
    ) -> Result<Vec<u8>, Status> {
        let span = grpc_span(method, false);
        let response = async {
            let options = options.propagated();
            self.transport
                .unary_encoded(method, request, &options)
                .await
        }
        .instrument(span.clone())
        .await;
        span.record(
            "rpc.grpc.status_code",
            response.as_ref().map_or_else(|s| s.code, |_| Code::Ok) as i64,
        );
        response
    }

    async fn collect_stream(
        &self,
        tool: &'static AgentTool,
        method: &MethodDescriptor,
        request: DynamicMessage,
        options: &CallOptions,
        names: JsonNames,
    ) -> Result<String, CallError> {
        let output = method.output();
        let output = &output;
        stream::collect_stream(
            tool.name,
            &self.aliases,
            &self.options.stream,
            options,
            || self.transport.server_streaming(method, request, options),
            |message| async move {
                self.aliased_json_of_encoded(tool, output, &message, names)
                    .await
            },
        )
        .await
    }

    fn method(&self, tool: &AgentTool) -> Result<MethodDescriptor, CallError> {
        match tool_index(self.tools, self.pool).get(tool.name) {
            Some((_, Ok(method))) => Ok(method.clone()),
            Some((_, Err(missing))) => Err(CallError::Internal(missing.clone())),
            None => Err(CallError::Internal(format!(
                "tool `{}` is not among the executor's tools",
                tool.name
            ))),
        }
    }

    /// The request message from the model's arguments: parsed, unshaped and
    /// checked along the request's schema, aliases resolved, then decoded.
    async fn build_request(
        &self,
        desc: &MessageDescriptor,
        args: Arguments<'_>,
        options: &CallOptions,
    ) -> Result<DynamicMessage, CallError> {
        let schema = request_schema(self.pool, desc);
        let resolve = Resolve {
            aliases: &self.aliases,
            pass_unknown_uuids: self.options.pass_unknown_uuids,
        };
        let limits = Limits {
            numbers_as_doubles: options.host.is_some_and(HostProfile::numbers_as_doubles),
            ..self.limits()
        };
        let args =
            prepare(&schema, args, &limits, resolve)
                .await
                .map_err(|refusal| match refusal {
                    Refusal::Arguments(message) => CallError::Arguments(message),
                    Refusal::Store(e) => CallError::StoreBeforeCall(e),
                })?;
        deserialize(desc, args)
    }
}

/// The response in `bytes` written straight out as JSON, its fields under
/// `names`, its ids given aliases by `aliases`; `None` where the writer leaves the response to
/// `DynamicMessage` (nothing is then registered). `__private::transcode`
/// shows it to the tests.
pub(crate) async fn transcoded(
    aliases: &AliasManager,
    prefixes: &'static [crate::alias::FieldPrefix],
    response: &MessageDescriptor,
    bytes: &[u8],
    names: JsonNames,
) -> Result<Option<String>, AliasError> {
    let transcoder = response_transcoder(prefixes, response);
    let Some(transcoder) = transcoder.as_ref() else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(bytes.len().saturating_mul(2));
    let written = aliases
        .assign_written(|alias| {
            out.clear();
            transcoder.write(bytes, &mut out, alias, names)
        })
        .await?;
    // The writer writes UTF-8 only (strings are checked as they are read).
    Ok(written.ok().and_then(|()| String::from_utf8(out).ok()))
}

/// A tool list's tools by name, each with its method in the pool (or why it
/// is missing), the first of a name winning: every call looks its tool up,
/// so the index is made once per tool list and pool.
type ToolIndex = HashMap<&'static str, (&'static AgentTool, Result<MethodDescriptor, String>)>;

/// The span of one gRPC call of `method`, `ai_tools.grpc` (DEBUG), with
/// what OpenTelemetry's RPC conventions name a client span by, for a
/// subscriber that exports it: `otel.name` `package.Service/Method`,
/// `otel.kind` `client`, `rpc.system`, `rpc.service`, `rpc.method`, and
/// `rpc.grpc.status_code` once the call has ended. The fields are made
/// only when the span is enabled.
pub(crate) fn grpc_span(method: &MethodDescriptor, streaming: bool) -> tracing::Span {
    let service = method.parent_service();
    tracing::debug_span!(
        "ai_tools.grpc",
        streaming,
        otel.name = %format_args!("{}/{}", service.full_name(), method.name()),
        otel.kind = "client",
        rpc.system = "grpc",
        rpc.service = service.full_name(),
        rpc.method = method.name(),
        rpc.grpc.status_code = tracing::field::Empty,
    )
}

fn tool_index(
    tools: &'static [&'static AgentTool],
    pool: &'static DescriptorPool,
) -> Arc<ToolIndex> {
    static INDEXES: LazyLock<Memo<(usize, usize, usize), ToolIndex>> = LazyLock::new(Memo::new);
    let key = (
        tools.as_ptr() as usize,
        tools.len(),
        std::ptr::from_ref(pool) as usize,
    );
    INDEXES.get_or(key, || {
        let mut index = ToolIndex::new();
        for &tool in tools {
            index
                .entry(tool.name)
                .or_insert_with(|| (tool, method_in(pool, tool)));
        }
        index
    })
}

/// The method `tool` calls, from `pool`.
pub(crate) fn method_in(
    pool: &DescriptorPool,
    tool: &AgentTool,
) -> Result<MethodDescriptor, String> {
    let service = pool
        .get_service_by_name(tool.method.service)
        .ok_or_else(|| {
            format!(
                "service `{}` is missing from the descriptor pool",
                tool.method.service
            )
        })?;
    service
        .methods()
        .find(|m| m.name() == tool.method.method)
        .ok_or_else(|| {
            format!(
                "method `{}/{}` is missing from the descriptor pool",
                tool.method.service, tool.method.method
            )
        })
}

/// Why a response's ids could not be given aliases.
fn aliases_after_call(e: AliasError) -> CallError {
    match e {
        AliasError::Store(e) => CallError::StoreAfterCall(e),
        other => CallError::AliasLimit(other),
    }
}

/// How to write a tool's response type straight from its bytes, made once
/// per tool and response type as the walk plan is; `None` for a type the
/// transcoder leaves to `DynamicMessage`.
fn response_transcoder(
    prefixes: &'static [crate::alias::FieldPrefix],
    response: &MessageDescriptor,
) -> Arc<Option<Transcoder>> {
    static TRANSCODERS: LazyLock<Memo<(usize, usize, String), Option<Transcoder>>> =
        LazyLock::new(Memo::new);
    let key = (
        prefixes.as_ptr() as usize,
        prefixes.len(),
        response.full_name().to_owned(),
    );
    let kept = TRANSCODERS.get_or(key, || Transcoder::new(response, prefixes));
    match kept.as_ref() {
        // A type of the same name from another pool (two versions of a
        // proto in one program, a tool set built at run time): made afresh.
        Some(transcoder) if !transcoder.is_for(response) => {
            Arc::new(Transcoder::new(response, prefixes))
        }
        _ => kept,
    }
}

/// The walk plan of a tool's response, made once per tool and response type:
/// a tool's `response_aliases` is static, so its address names it for good.
fn response_plan(tool: &'static AgentTool, response: &MessageDescriptor) -> Arc<WalkPlan<'static>> {
    static PLANS: LazyLock<Memo<(usize, String), WalkPlan<'static>>> = LazyLock::new(Memo::new);
    let key = (
        tool.response_aliases.as_ptr() as usize,
        response.full_name().to_owned(),
    );
    PLANS.get_or(key, || WalkPlan::new(response, tool.response_aliases))
}

/// The request a call sends, at DEBUG: protojson, its ids resolved, every
/// `tool_field.sensitive` field's value `"[redacted]"`.
fn debug_arguments(tool: &AgentTool, request: &DynamicMessage) {
    let Ok(mut arguments) = serde_json::to_value(request) else {
        return;
    };
    use prost_reflect::ReflectMessage as _;
    proto_ai_tools_schema::proto::redact(&mut arguments, &request.descriptor());
    tracing::debug!(tool = tool.name, %arguments, "tool call arguments");
}

/// Decodes the unshaped arguments, which the inbound rules have checked
/// against the schema; a failure here is one those rules do not state.
fn deserialize(desc: &MessageDescriptor, args: Value) -> Result<DynamicMessage, CallError> {
    let options = DeserializeOptions::new();
    match DynamicMessage::deserialize_with_options(desc.clone(), &args, &options) {
        Ok(mut m) => {
            wire::restore_negative_zero_wrappers(&mut m, &args);
            Ok(m)
        }
        Err(whole) => {
            // Find the argument at fault: serde errors on a `Value` carry no position.
            if let Value::Object(obj) = args {
                for (key, value) in obj {
                    let one = Value::Object(Map::from_iter([(key.clone(), value)]));
                    if let Err(e) =
                        DynamicMessage::deserialize_with_options(desc.clone(), one, &options)
                    {
                        return Err(CallError::Arguments(format!(
                            "argument `{key}` is invalid: {e}"
                        )));
                    }
                }
            }
            Err(CallError::Arguments(format!(
                "the arguments are invalid: {whole}"
            )))
        }
    }
}

/// What a call's gRPC part did, for its [`CallRecord`]: filled in by
/// `call` as it goes, so that a call that fails after it still says it.
#[derive(Default)]
struct Backend {
    /// The service's (or the transport's) status; `None` until answered.
    status: Option<Code>,
    /// From sending the request to its answer or a stream's end.
    elapsed: Option<std::time::Duration>,
}

#[cfg(test)]
mod tests;
