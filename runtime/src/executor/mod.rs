//! Turns a model's tool call into a gRPC call and the response into aliased JSON.

mod transcode;
pub(crate) mod wire;

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use ai_tools_schema::HostProfile;
use ai_tools_schema::inbound::{Limits, shorten};
use prost_reflect::{
    DescriptorPool, DeserializeOptions, DynamicMessage, MessageDescriptor, MethodDescriptor,
    SerializeOptions,
};
use serde_json::{Map, Value};

use crate::alias::{AliasError, AliasManager, WalkPlan};
use crate::inbound::{Arguments, Refusal, Resolve, prepare, request_schema};
use crate::memo::Memo;
use crate::store::StoreError;
use crate::tool::AgentTool;
use crate::transport::{CallOptions, Code, Status, Transport};
use transcode::Transcoder;

/// The outcome of one tool call, ready to hand back to the model.
///
/// On success `output` is the response as JSON text; on failure it is a
/// sentence the model can act on (which argument was wrong and what is
/// valid, or the gRPC status). Either way it goes to the model as the tool
/// result; `is_error` tells providers that mark failed tool calls (Anthropic's
/// `is_error`) which one it is.
///
/// # Examples
///
/// ```
/// let r = ai_tools::ToolResult::error("unknown tool `x`");
/// assert!(r.is_error);
/// assert_eq!(r.output, "unknown tool `x`");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ToolResult {
    /// JSON text (success) or an actionable error sentence (failure).
    pub output: String,
    /// Whether the call failed.
    pub is_error: bool,
}

impl ToolResult {
    /// A successful result.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!ai_tools::ToolResult::ok("{}").is_error);
    /// ```
    pub fn ok(output: impl Into<String>) -> Self {
        Self {
            output: output.into(),
            is_error: false,
        }
    }

    /// A failed result.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(ai_tools::ToolResult::error("no").is_error);
    /// ```
    pub fn error(output: impl Into<String>) -> Self {
        Self {
            output: output.into(),
            is_error: true,
        }
    }
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
/// let mut options = ai_tools::ExecutorOptions::default();
/// options.max_argument_bytes = 64 * 1024;
/// options.call = ai_tools::CallOptions::new().timeout(std::time::Duration::from_secs(10));
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
}

/// Bounds on collecting a server stream into one tool result. The call
/// stops at the first bound reached (the service sees it cancelled), and
/// the result says which one it was.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// let mut options = ai_tools::ExecutorOptions::default();
/// options.stream.max_messages = 20;
/// options.stream.max_time = Duration::from_secs(5);
/// assert_eq!(options.stream.max_bytes, 1024 * 1024);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StreamLimits {
    /// The most messages collected (default 100).
    pub max_messages: usize,
    /// The most bytes of messages collected, as encoded on the wire
    /// (default 1 MiB); the message that would pass it is left out.
    pub max_bytes: usize,
    /// The longest time spent collecting (default 30 s).
    pub max_time: Duration,
}

impl Default for StreamLimits {
    fn default() -> Self {
        Self {
            max_messages: 100,
            max_bytes: 1024 * 1024,
            max_time: Duration::from_secs(30),
        }
    }
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
/// The output is protojson as prost-reflect writes it by default: camelCase
/// field names (`pageThemeId`, as the Go plugin's output has it), 64-bit
/// integers as strings, enums by name, default values left out. Inbound,
/// both proto names and camelCase are accepted.
///
/// # Examples
///
/// ```
/// use ai_tools::{AgentTool, InProcessTransport, ProtoExecutor};
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
    /// use ai_tools::{AliasManager, InProcessTransport, ProtoExecutor};
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
    /// # use ai_tools::{ExecutorOptions, InProcessTransport, ProtoExecutor};
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
    /// # use ai_tools::{InProcessTransport, ProtoExecutor};
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
    /// # use ai_tools::{InProcessTransport, ProtoExecutor};
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
    /// # use ai_tools::{InProcessTransport, ProtoExecutor};
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
    /// # use ai_tools::{InProcessTransport, ProtoExecutor};
    /// # static POOL: std::sync::LazyLock<prost_reflect::DescriptorPool> =
    /// #     std::sync::LazyLock::new(prost_reflect::DescriptorPool::new);
    /// let exec = ProtoExecutor::new(&[], &POOL, InProcessTransport::new());
    /// let _: &InProcessTransport = exec.transport();
    /// ```
    pub fn transport(&self) -> &T {
        &self.transport
    }

    /// Runs `tool` with the model's arguments (JSON text; empty means `{}`).
    /// Never panics: every failure is a [`ToolResult`] with `is_error` set.
    ///
    /// # Examples
    ///
    /// See [`ProtoExecutor`].
    pub async fn execute(&self, tool: &str, args_json: &str) -> ToolResult {
        self.execute_with(tool, args_json, &self.options.call).await
    }

    /// [`execute`](Self::execute) with this call's options (deadline, metadata) over the
    /// executor's defaults ([`ExecutorOptions::call`]); a bad metadata key is an error
    /// result naming it, and nothing is sent.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ai_tools::{CallOptions, InProcessTransport, ProtoExecutor};
    /// # static POOL: std::sync::LazyLock<prost_reflect::DescriptorPool> =
    /// #     std::sync::LazyLock::new(prost_reflect::DescriptorPool::new);
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let exec = ProtoExecutor::new(&[], &POOL, InProcessTransport::new());
    /// let options = CallOptions::new().metadata("x-user", "42");
    /// assert!(exec.execute_with("nope", "{}", &options).await.is_error);
    /// # }
    /// ```
    pub async fn execute_with(
        &self,
        tool: &str,
        args_json: &str,
        options: &CallOptions,
    ) -> ToolResult {
        self.start(tool, Arguments::Text(args_json), options).await
    }

    /// [`execute`](Self::execute) with already-parsed arguments (as the
    /// typed per-tool methods of a generated `Executor` pass them).
    ///
    /// # Examples
    ///
    /// ```
    /// # use ai_tools::{InProcessTransport, ProtoExecutor};
    /// # static POOL: std::sync::LazyLock<prost_reflect::DescriptorPool> =
    /// #     std::sync::LazyLock::new(prost_reflect::DescriptorPool::new);
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let exec = ProtoExecutor::new(&[], &POOL, InProcessTransport::new());
    /// let r = exec.execute_value("links_list", serde_json::json!({})).await;
    /// assert!(r.is_error);
    /// # }
    /// ```
    pub async fn execute_value(&self, tool: &str, args: Value) -> ToolResult {
        self.start(tool, Arguments::Value(args), &CallOptions::new())
            .await
    }

    /// [`execute_with`](Self::execute_with) with already-parsed arguments:
    /// what a host that parsed the call itself (an MCP server) passes, so
    /// they are not written out and parsed again.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ai_tools::{CallOptions, InProcessTransport, ProtoExecutor};
    /// # static POOL: std::sync::LazyLock<prost_reflect::DescriptorPool> =
    /// #     std::sync::LazyLock::new(prost_reflect::DescriptorPool::new);
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let exec = ProtoExecutor::new(&[], &POOL, InProcessTransport::new());
    /// let options = CallOptions::new().metadata("x-user", "42");
    /// let result = exec.execute_value_with("nope", serde_json::json!({}), &options).await;
    /// assert!(result.is_error && result.output.starts_with("unknown tool `nope`"));
    /// # }
    /// ```
    pub async fn execute_value_with(
        &self,
        tool: &str,
        args: Value,
        options: &CallOptions,
    ) -> ToolResult {
        self.start(tool, Arguments::Value(args), options).await
    }

    /// Finds the tool, merges and checks the call's options, and runs it.
    async fn start(&self, tool: &str, args: Arguments<'_>, options: &CallOptions) -> ToolResult {
        let index = tool_index(self.tools, self.pool);
        let Some((def, _)) = index.get(tool) else {
            let known = self.tools.iter().map(|t| t.name);
            return error_result(unknown_tool_message(tool, known));
        };
        let mut merged = self.options.call.overriding(options);
        // The call's deadline, else the tool's own, else the executor's.
        merged.timeout = options.timeout.or(def.timeout).or(merged.timeout);
        if let Err(problem) = merged.check() {
            return error_result(refused_options_message(tool, &problem));
        }
        self.run(def, args, &merged).await
    }

    fn limits(&self) -> Limits {
        self.options.limits()
    }

    async fn run(
        &self,
        tool: &'static AgentTool,
        args: Arguments<'_>,
        options: &CallOptions,
    ) -> ToolResult {
        match self.call(tool, args, options).await {
            Ok(output) => ToolResult::ok(output),
            Err(CallError::Arguments(message)) => error_result(format!("{}: {message}", tool.name)),
            Err(CallError::Status(status)) => {
                // Best effort: a store that is down leaves unknown ids as they are.
                let _ = self.aliases.fetch_text(&status.message).await;
                error_result(self.status_sentence(tool, &status))
            }
            Err(CallError::Unreadable(problem)) => error_result(format!(
                "{} ran and the service answered, but the answer cannot be read: {problem}. A retry would fail the same way, and the call took effect: do not repeat it (when it creates or changes something, check first, for example by listing); tell the user.",
                tool.name
            )),
            Err(CallError::StoreBeforeCall(e)) => error_result(format!(
                "{} could not run: {e}, so the ids in the arguments could not be resolved; nothing was sent to the service. A retry may help: try again in a moment, or tell the user.",
                tool.name
            )),
            Err(CallError::StoreAfterCall(e)) => error_result(format!(
                "{} ran and the service answered, but the answer is withheld: {e}, so the ids in it could not be given aliases, and none was registered. The call took effect: do not repeat it blindly (when it creates or changes something, check first, for example by listing, once the store is back); tell the user.",
                tool.name
            )),
            Err(CallError::AliasLimit(e)) => error_result(format!(
                "{} ran and the service answered, but the answer is withheld: {e}. Do not retry; tell the user.",
                tool.name
            )),
            Err(CallError::Internal(message)) => error_result(format!(
                "{} could not run because of an internal error ({message}); do not retry, tell the user",
                tool.name
            )),
        }
    }

    async fn call(
        &self,
        tool: &'static AgentTool,
        args: Arguments<'_>,
        options: &CallOptions,
    ) -> Result<String, CallError> {
        let method = self.method(tool)?;
        let request = self.build_request(&method.input(), args, options).await?;
        if method.is_server_streaming() {
            return self.collect_stream(tool, &method, request, options).await;
        }
        let response = self
            .transport
            .unary_encoded(&method, request, options)
            .await
            .map_err(CallError::Status)?;
        self.aliased_json_of_encoded(tool, &method.output(), &response)
            .await
    }

    /// The response in `bytes` as JSON, its ids given aliases: written
    /// straight from the bytes where the transcoder can, else decoded into a
    /// `DynamicMessage` first. Both write the same text.
    async fn aliased_json_of_encoded(
        &self,
        tool: &'static AgentTool,
        desc: &MessageDescriptor,
        bytes: &[u8],
    ) -> Result<String, CallError> {
        let written = transcoded(&self.aliases, tool.response_aliases, desc, bytes)
            .await
            .map_err(aliases_after_call)?;
        if let Some(json) = written {
            return Ok(json);
        }
        let mut response = DynamicMessage::decode(desc.clone(), bytes)
            .map_err(|e| CallError::Unreadable(undecodable_response(desc, &e)))?;
        self.aliased_json(&mut response, &response_plan(tool, desc))
            .await
    }

    /// `response` as JSON, its ids given aliases first.
    async fn aliased_json(
        &self,
        response: &mut DynamicMessage,
        plan: &WalkPlan<'_>,
    ) -> Result<String, CallError> {
        self.aliases
            .register_planned(response, plan)
            .await
            .map_err(aliases_after_call)?;
        let mut out = Vec::new();
        let mut ser = serde_json::Serializer::new(&mut out);
        response
            .serialize_with_options(&mut ser, &SerializeOptions::new())
            .map_err(|e| {
                CallError::Internal(format!("the response could not be written as JSON: {e}"))
            })?;
        String::from_utf8(out).map_err(|e| CallError::Internal(e.to_string()))
    }

    /// A server stream collected into `{"messages": [...]}`, within
    /// [`StreamLimits`]; `"stopped_early"` says why when a bound, or the
    /// service failing after some messages, ended it first. Dropping the
    /// stream on the way out cancels the call at the service.
    async fn collect_stream(
        &self,
        tool: &'static AgentTool,
        method: &MethodDescriptor,
        request: DynamicMessage,
        options: &CallOptions,
    ) -> Result<String, CallError> {
        let limits = &self.options.stream;
        let started = tokio::time::Instant::now();
        // The call's own deadline, when it comes first, ends the collection
        // as a deadline does: with `DEADLINE_EXCEEDED` if nothing arrived.
        let call_deadline = options.timeout.filter(|t| *t < limits.max_time);
        let deadline = started + call_deadline.unwrap_or(limits.max_time);
        let output = method.output();
        // The same bound covers opening the stream: a server slow to answer
        // at all holds the call no longer than one slow to send.
        let deadline_exceeded = || Status::new(Code::DeadlineExceeded, "deadline exceeded");
        let opened = tokio::time::timeout_at(
            deadline,
            self.transport.server_streaming(method, request, options),
        )
        .await;
        let mut stream = opened
            .map_err(|_| CallError::Status(deadline_exceeded()))?
            .map_err(CallError::Status)?;
        let mut messages: Vec<String> = Vec::new();
        let mut bytes = 0usize;
        let stopped_early = loop {
            if messages.len() >= limits.max_messages {
                break Some(format!(
                    "after {}, the most one call collects; more may follow",
                    messages_counted(limits.max_messages)
                ));
            }
            let message = match tokio::time::timeout_at(deadline, stream.next_encoded()).await {
                Err(_) if call_deadline.is_some() => {
                    let status = deadline_exceeded();
                    if messages.is_empty() {
                        return Err(CallError::Status(status));
                    }
                    break Some(self.status_sentence(tool, &status));
                }
                Err(_) => {
                    break Some(format!(
                        "after {} s, the longest one call collects; more may follow",
                        limits.max_time.as_secs_f64()
                    ));
                }
                Ok(None) => break None,
                Ok(Some(Err(status))) if messages.is_empty() => {
                    return Err(CallError::Status(status));
                }
                Ok(Some(Err(status))) => break Some(self.status_sentence(tool, &status)),
                Ok(Some(Ok(message))) => message,
            };
            let size = message.len();
            if bytes + size > limits.max_bytes {
                break Some(format!(
                    "after {}: the next one would pass {} bytes, the most one call collects; more may follow",
                    messages_counted(messages.len()),
                    limits.max_bytes
                ));
            }
            bytes += size;
            let json = match self.aliased_json_of_encoded(tool, &output, &message).await {
                Ok(json) => json,
                // A message that does not decode ends the collection; what
                // came before it stands.
                Err(CallError::Unreadable(problem)) if !messages.is_empty() => {
                    break Some(format!(
                        "after {}: the next one cannot be read ({problem}); the rest of the stream was not collected",
                        messages_counted(messages.len())
                    ));
                }
                Err(e) => return Err(e),
            };
            messages.push(json);
            if let Some(progress) = &options.progress {
                progress.report(messages.len() as u64);
            }
        };
        drop(stream);
        let mut out = String::with_capacity(bytes + 32);
        out.push_str("{\"messages\":[");
        out.push_str(&messages.join(","));
        out.push(']');
        if let Some(reason) = stopped_early {
            out.push_str(",\"stopped_early\":");
            out.push_str(&Value::String(reason).to_string());
        }
        out.push('}');
        Ok(out)
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

    fn status_sentence(&self, tool: &AgentTool, status: &Status) -> String {
        let message = self.aliases.aliasify_text(&clean_message(&status.message));
        let message = message.trim().trim_end_matches('.');
        let hint = status_hint(status.code);
        if message.is_empty() {
            format!(
                "{} failed with gRPC status {}. {hint}",
                tool.name, status.code
            )
        } else {
            format!(
                "{} failed with gRPC status {}: {message}. {hint}",
                tool.name, status.code
            )
        }
    }
}

/// What a status code means for the model: what happened, and whether a retry may help.
fn status_hint(code: Code) -> &'static str {
    match code {
        Code::Ok => {
            "The service reported success but sent no usable answer; do not retry, tell the user."
        }
        Code::Cancelled => {
            "The call was cancelled before it finished and may or may not have taken effect; a retry may help, but check first (for example by listing) when the call creates or changes something."
        }
        Code::Unknown => {
            "The service failed for an unknown reason; a retry is unlikely to help, tell the user if it happens again."
        }
        Code::InvalidArgument => {
            "The service rejected the arguments; do not retry as is: fix the arguments and call the tool again."
        }
        Code::DeadlineExceeded => {
            "The call took too long and may or may not have taken effect; try again later (check first when it creates or changes something) or tell the user."
        }
        Code::NotFound => {
            "Something the call refers to does not exist; do not retry with the same ids: check the ids you passed and use only ids returned by tools."
        }
        Code::AlreadyExists => {
            "What the call would create exists already; do not retry: use the existing one."
        }
        Code::PermissionDenied => {
            "The user is not allowed to do this; do not retry, tell the user."
        }
        Code::ResourceExhausted => {
            "A quota or rate limit was reached; a retry after a pause may help, or tell the user."
        }
        Code::FailedPrecondition => {
            "The system is not in a state that allows this; do not retry as is: fix the arguments or change what the call depends on first."
        }
        Code::Aborted => "The call conflicted with a concurrent change; a retry may help.",
        Code::OutOfRange => {
            "A value is outside the valid range; do not retry as is: fix the arguments and call the tool again."
        }
        Code::Unimplemented => {
            "The service does not support this operation; do not retry, tell the user."
        }
        Code::Internal => {
            "The service failed internally; a retry is unlikely to help, tell the user."
        }
        Code::Unavailable => {
            "The service is unreachable right now; a retry may help: try again later or tell the user."
        }
        Code::DataLoss => "Data was lost or corrupted; do not retry, tell the user.",
        Code::Unauthenticated => "The call was not authenticated; do not retry, tell the user.",
    }
}

/// The longest error text handed to the model, in bytes.
const MAX_ERROR_BYTES: usize = 4_000;
/// The longest server message passed on, in characters.
const MAX_STATUS_CHARS: usize = 300;

/// An error result, its text bounded.
fn error_result(mut text: String) -> ToolResult {
    if text.len() > MAX_ERROR_BYTES {
        let mut cut = MAX_ERROR_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str(" …");
    }
    ToolResult::error(text)
}

/// A server's (or transport's) status message made fit for the model: its
/// first line only (no stack trace), file-system paths replaced by `<path>`,
/// at most [`MAX_STATUS_CHARS`] characters.
fn clean_message(message: &str) -> String {
    let first = message
        .split(['\n', '\r'])
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut out = String::with_capacity(first.len());
    for (i, token) in first.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let core = token.trim_matches(|c: char| PATH_PUNCTUATION.contains(c));
        if looks_like_path(core) {
            // Keep the punctuation around the path: `(see <path>)`.
            let start = token.len()
                - token
                    .trim_start_matches(|c: char| PATH_PUNCTUATION.contains(c))
                    .len();
            out.push_str(&token[..start]);
            out.push_str("<path>");
            out.push_str(&token[start + core.len()..]);
        } else {
            out.push_str(token);
        }
    }
    match out.char_indices().nth(MAX_STATUS_CHARS) {
        None => out,
        Some((cut, _)) => format!("{}…", &out[..cut]),
    }
}

const PATH_PUNCTUATION: &str = "()[]{}<>'\"`,;";

/// A file-system path or source location: `/home/u/x.rs:12`, `C:\\src\\a.go`,
/// `src/main.rs:40:7`. A gRPC method path (`/pkg.Service/Method`) is not one.
fn looks_like_path(t: &str) -> bool {
    let windows = t.len() > 2 && t.as_bytes()[1] == b':' && t[2..].starts_with('\\');
    let absolute = [
        "/home/",
        "/root/",
        "/usr/",
        "/var/",
        "/tmp/",
        "/opt/",
        "/etc/",
        "/srv/",
        "/Users/",
        "/app/",
        "/build/",
        "/src/",
        "/workspace/",
        "/rustc/",
        "/proc/",
    ]
    .iter()
    .any(|p| t.starts_with(p));
    let no_line = t.trim_end_matches(|c: char| c.is_ascii_digit() || c == ':');
    let source = (t.contains('/') || t.contains('\\'))
        && [
            ".rs", ".go", ".py", ".java", ".kt", ".js", ".ts", ".rb", ".cs", ".cc", ".cpp", ".c",
            ".h", ".php", ".scala", ".swift",
        ]
        .iter()
        .any(|ext| no_line.ends_with(ext));
    windows || absolute || source
}

enum CallError {
    /// The model's arguments are wrong; the message says how.
    Arguments(String),
    /// The service answered with an error status.
    Status(Status),
    /// The service answered, but its answer does not decode as the tool's
    /// response type: the call took effect, and what it returned is lost.
    Unreadable(String),
    /// The service answered, but the conversation cannot take its ids.
    AliasLimit(AliasError),
    /// The alias store was down before the call: nothing was sent.
    StoreBeforeCall(StoreError),
    /// The alias store was down after the call: the answer is withheld.
    StoreAfterCall(StoreError),
    /// Our bug or a broken pool; nothing the model can fix.
    Internal(String),
}

/// The response in `bytes` written straight out as JSON, its ids given
/// aliases by `aliases`; `None` where the writer leaves the response to
/// `DynamicMessage` (nothing is then registered). `__private::transcode`
/// shows it to the tests.
pub(crate) async fn transcoded(
    aliases: &AliasManager,
    prefixes: &'static [crate::tool::FieldPrefix],
    response: &MessageDescriptor,
    bytes: &[u8],
) -> Result<Option<String>, AliasError> {
    let transcoder = response_transcoder(prefixes, response);
    let Some(transcoder) = transcoder.as_ref() else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(bytes.len().saturating_mul(2));
    let written = aliases
        .assign_written(|alias| {
            out.clear();
            transcoder.write(bytes, &mut out, alias)
        })
        .await?;
    // The writer writes UTF-8 only (strings are checked as they are read).
    Ok(written.ok().and_then(|()| String::from_utf8(out).ok()))
}

/// A tool list's tools by name, each with its method in the pool (or why it
/// is missing), the first of a name winning: every call looks its tool up,
/// so the index is made once per tool list and pool.
type ToolIndex = HashMap<&'static str, (&'static AgentTool, Result<MethodDescriptor, String>)>;

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
fn method_in(pool: &DescriptorPool, tool: &AgentTool) -> Result<MethodDescriptor, String> {
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

/// "1 message", "2 messages": how many a stream had brought when it stopped.
fn messages_counted(n: usize) -> String {
    if n == 1 {
        "1 message".to_owned()
    } else {
        format!("{n} messages")
    }
}

/// The words for a response that is not a message of the method's output
/// type, wherever it is decoded.
pub(crate) fn undecodable_response(desc: &MessageDescriptor, e: &impl std::fmt::Display) -> String {
    format!(
        "the service's response does not decode as a {} ({e}): the service and this tool disagree on the message type",
        desc.full_name()
    )
}

/// How to write a tool's response type straight from its bytes, made once
/// per tool and response type as the walk plan is; `None` for a type the
/// transcoder leaves to `DynamicMessage`.
fn response_transcoder(
    prefixes: &'static [crate::tool::FieldPrefix],
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

/// Decodes the unshaped arguments, which the inbound rules have checked
/// against the schema; a failure here is one those rules do not state.
/// The one answer to a call of a tool that is not there, wherever it is
/// made (an executor, a toolkit, an MCP server): the name as sent, shortened
/// (a model may send anything), and the tools there are.
pub(crate) fn unknown_tool_message<'a>(
    tool: &str,
    known: impl IntoIterator<Item = &'a str>,
) -> String {
    let known: Vec<&str> = known.into_iter().collect();
    let tool = shorten(tool);
    if known.is_empty() {
        format!("unknown tool `{tool}`; no tools are available here")
    } else {
        format!(
            "unknown tool `{tool}`; the available tools are: {}",
            known.join(", ")
        )
    }
}

/// The one answer to a call whose options (metadata keys, a deadline) are
/// refused, wherever it is made (an executor, a toolkit): nothing was sent.
pub(crate) fn refused_options_message(tool: &str, problem: &str) -> String {
    format!(
        "{} could not run: {problem}; nothing was sent. Tell the user.",
        shorten(tool)
    )
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_messages_lose_stack_traces_and_paths() {
        let m = "boom at /home/dev/svc/src/handler.rs:42:7 (see src/db/pool.go:10)\n   0: std::backtrace\n   1: main";
        assert_eq!(clean_message(m), "boom at <path> (see <path>)");
        assert_eq!(
            clean_message("no handler for /links.v1.LinksService/ListLinks"),
            "no handler for /links.v1.LinksService/ListLinks"
        );
        assert_eq!(
            clean_message(r"open C:\\srv\\data.db failed"),
            "open <path> failed"
        );
        assert_eq!(
            clean_message("\n\n  second line first  \n"),
            "second line first"
        );
        let long = "x".repeat(1000);
        assert_eq!(clean_message(&long).chars().count(), MAX_STATUS_CHARS + 1);
    }

    #[test]
    fn every_code_says_whether_a_retry_may_help() {
        for n in 0..17 {
            let hint = status_hint(Code::from_i32(n));
            assert!(
                hint.contains("retry") || hint.contains("try again"),
                "{n}: {hint}"
            );
        }
    }

    #[test]
    fn echoes_and_errors_are_bounded() {
        let r = error_result("ü".repeat(5000));
        assert!(r.output.len() <= MAX_ERROR_BYTES + 4);
    }
}
