//! Hand-written ("native") tools: a Rust function whose input is a
//! [`ToolInput`] type, decoded before the function runs.

use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use proto_ai_tools_schema::inbound::Limits;
use proto_ai_tools_schema::{Dialect, HostProfile, ToolHints, render};
use serde_json::Value;

use crate::alias::AliasManager;
use crate::inbound::{Arguments, Refusal, Resolve, prepare};
use crate::input::{InputSchema, ToolInput};
use crate::result::{ToolResult, refused_options_message, warn_failure};
use crate::store::StoreError;
use crate::transport::{BoxFuture, CallOptions};

/// What a native tool's function gets besides its input: the conversation's
/// alias namespace and the tool's name.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// let ctx = proto_ai_tools::ToolContext::new("search", Arc::new(proto_ai_tools::AliasManager::new()));
/// assert_eq!(ctx.tool_name(), "search");
/// assert!(ctx.alias_manager().is_empty());
/// ```
#[derive(Debug, Clone)]
pub struct ToolContext {
    tool: Arc<str>,
    aliases: Arc<AliasManager>,
    call_options: CallOptions,
}

impl ToolContext {
    /// A context for a call of `tool` in the conversation of `aliases`.
    ///
    /// # Examples
    ///
    /// See [`ToolContext`].
    pub fn new(tool: impl Into<Arc<str>>, aliases: Arc<AliasManager>) -> Self {
        Self {
            tool: tool.into(),
            aliases,
            call_options: CallOptions::new(),
        }
    }

    /// This context with the options of the call (the end user's
    /// credentials, tenant, deadline).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// let ctx = proto_ai_tools::ToolContext::new("search", Arc::new(proto_ai_tools::AliasManager::new()))
    ///     .with_call_options(proto_ai_tools::CallOptions::new().metadata("x-user", "42"));
    /// assert_eq!(ctx.call_options().metadata[0].1, "42");
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    pub fn with_call_options(mut self, options: CallOptions) -> Self {
        self.call_options = options;
        self
    }

    /// The options of this call: metadata such as the caller's identity,
    /// and its deadline (see [`Toolkit::execute_with`](crate::Toolkit::execute_with)).
    ///
    /// # Examples
    ///
    /// See [`with_call_options`](Self::with_call_options).
    pub fn call_options(&self) -> &CallOptions {
        &self.call_options
    }

    /// The name of the tool being called.
    ///
    /// # Examples
    ///
    /// See [`ToolContext`].
    pub fn tool_name(&self) -> &str {
        &self.tool
    }

    /// The conversation's aliases: register the ids a tool hands out
    /// (`aliases().register("link", uuid).await`) so the model sees `link-1`.
    ///
    /// # Examples
    ///
    /// See [`ToolContext`].
    pub fn alias_manager(&self) -> &Arc<AliasManager> {
        &self.aliases
    }
}

/// What a native tool returns on success: text, or JSON.
///
/// Known UUIDs in it are shown to the model as their aliases: in text every
/// whole UUID token, in JSON every string value that is exactly a UUID.
///
/// # Examples
///
/// # }
/// ```
/// use proto_ai_tools::tool::ToolOutput;
/// assert_eq!(ToolOutput::from("done"), ToolOutput::Text("done".into()));
/// assert_eq!(ToolOutput::from(serde_json::json!({"n": 1})), ToolOutput::Json(serde_json::json!({"n": 1})));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutput {
    /// Text for the model.
    Text(String),
    /// A JSON value, sent as JSON text.
    Json(Value),
}

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        ToolOutput::Text(text)
    }
}

impl From<&str> for ToolOutput {
    fn from(text: &str) -> Self {
        ToolOutput::Text(text.to_owned())
    }
}

impl From<Value> for ToolOutput {
    fn from(value: Value) -> Self {
        ToolOutput::Json(value)
    }
}

/// The error of a native tool: a message the model reads. Converts from any
/// [`std::error::Error`], so `?` works in a tool's body. An alias store that
/// did not answer ([`StoreError`], or an error caused by one, such as
/// [`AliasError::Store`](crate::alias::AliasError::Store)) becomes a
/// sentence without its cause, which names servers and addresses: the
/// cause goes to the logs at WARN (outcome `store_in_tool`, guide/src/observability.md, "Logs").
///
/// It does not implement `std::error::Error` itself (as `anyhow::Error`
/// does not), which is what lets that conversion exist.
///
/// # Examples
///
/// ```
/// fn parse(s: &str) -> Result<u32, proto_ai_tools::ToolError> {
///     Ok(s.parse::<u32>()?)
/// }
/// assert!(parse("x").unwrap_err().message().contains("invalid digit"));
/// assert_eq!(proto_ai_tools::ToolError::new("no such page").message(), "no such page");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError(String, Option<String>);

impl ToolError {
    /// An error with `message`, written for the model: what went wrong and
    /// what to do instead.
    ///
    /// # Examples
    ///
    /// See [`ToolError`].
    pub fn new(message: impl fmt::Display) -> Self {
        ToolError(message.to_string(), None)
    }

    /// The message.
    ///
    /// # Examples
    ///
    /// See [`ToolError`].
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<E: std::error::Error> From<E> for ToolError {
    fn from(error: E) -> Self {
        // `E` need not be 'static, so it is known by its name; what it
        // wraps is 'static and downcast.
        let mut store = std::any::type_name::<E>() == std::any::type_name::<StoreError>();
        let mut source = error.source();
        while let (false, Some(e)) = (store, source) {
            store = e.is::<StoreError>();
            source = e.source();
        }
        if store {
            return ToolError(
                "the alias store is unavailable, so the ids could not be given or read as aliases; what the tool did before may have taken effect. A retry may help: try again in a moment (check first when the tool creates or changes something), or tell the user.".to_owned(),
                Some(error.to_string()),
            );
        }
        ToolError(error.to_string(), None)
    }
}

/// What a native tool's function may return: `Result<O, ToolError>` with `O`
/// a `String`, `&str`, `serde_json::Value` or [`ToolOutput`], or one of
/// those directly for a tool that cannot fail.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::ToolError;
/// use proto_ai_tools::tool::{IntoToolOutput, ToolOutput};
/// assert_eq!(Ok::<_, ToolError>("hi").into_tool_output(), Ok(ToolOutput::Text("hi".into())));
/// assert_eq!(String::from("hi").into_tool_output(), Ok(ToolOutput::Text("hi".into())));
/// ```
pub trait IntoToolOutput {
    /// The output, or the error's message.
    fn into_tool_output(self) -> Result<ToolOutput, ToolError>;
}

impl<O: Into<ToolOutput>> IntoToolOutput for Result<O, ToolError> {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        self.map(Into::into)
    }
}

impl IntoToolOutput for String {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        Ok(self.into())
    }
}

impl IntoToolOutput for &'static str {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        Ok(self.into())
    }
}

impl IntoToolOutput for Value {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        Ok(self.into())
    }
}

impl IntoToolOutput for ToolOutput {
    fn into_tool_output(self) -> Result<ToolOutput, ToolError> {
        Ok(self)
    }
}

type Handler =
    dyn Fn(ToolContext, Value) -> BoxFuture<'static, Result<ToolOutput, Failure>> + Send + Sync;

/// Why a native call failed.
enum Failure {
    /// serde refused the arguments.
    Decode(String),
    /// The function returned an error.
    Tool(ToolError),
}

/// A hand-written tool: a name, a description, an input type that gives the
/// schema, and an async function that gets the decoded input.
///
/// Run it through a [`Toolkit`](crate::Toolkit), which shares the
/// conversation's aliases with every tool and resolves the aliases of its
/// `alias_prefix` fields, or alone with [`call`](Self::call). The name is
/// checked when the toolkit is built.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use proto_ai_tools::{AliasManager, CallOptions, NativeTool, ToolInput};
///
/// /// Search the docs.
/// #[derive(serde::Deserialize, ToolInput)]
/// struct SearchInput {
///     /// What to look for.
///     query: String,
///     #[serde(default)]
///     limit: Option<u32>,
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let search = NativeTool::new::<SearchInput, _, _>("search", "Search the docs.", |_ctx, input: SearchInput| async move {
///     Ok(format!("query={} limit={:?}", input.query, input.limit))
/// });
///
/// let result = search.call(Arc::new(AliasManager::new()), r#"{"query":"adapters"}"#, &CallOptions::new()).await;
/// assert_eq!(result.output, "query=adapters limit=None");
/// let result = search.call(Arc::new(AliasManager::new()), r#"{"limit":3}"#, &CallOptions::new()).await;
/// assert!(result.is_error);
/// assert!(result.output.contains("missing field `query`"), "{}", result.output);
/// # }
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
#[derive(Clone)]
pub struct NativeTool {
    name: String,
    description: String,
    strict: bool,
    title: Option<String>,
    hints: ToolHints,
    input: Arc<InputSchema>,
    handler: Arc<Handler>,
    /// Its schema has passed every dialect's checker (a toolkit's build):
    /// shared by its clones, so a tool made once and cloned into each
    /// scope's toolkit is checked once. Reset by what changes the schema
    /// as rendered (strictness, title).
    checked: Arc<std::sync::OnceLock<()>>,
}

impl fmt::Debug for NativeTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NativeTool")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("strict", &self.strict)
            .field("title", &self.title)
            .field("hints", &self.hints)
            .field("input", &self.input)
            .finish_non_exhaustive()
    }
}

impl NativeTool {
    /// A tool named `name` that runs `function` with the arguments decoded
    /// into `Input`. The function gets a [`ToolContext`] and the input, and
    /// returns a [`IntoToolOutput`]: usually `Ok(String or serde_json::Value)`.
    ///
    /// # Examples
    ///
    /// See [`NativeTool`].
    pub fn new<Input, F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        function: F,
    ) -> Self
    where
        Input: ToolInput + Send + 'static,
        F: Fn(ToolContext, Input) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: IntoToolOutput,
    {
        let handler = move |ctx: ToolContext,
                            args: Value|
              -> BoxFuture<'static, Result<ToolOutput, Failure>> {
            match serde_json::from_value::<Input>(args) {
                Ok(input) => {
                    let future = function(ctx, input);
                    Box::pin(async move { future.await.into_tool_output().map_err(Failure::Tool) })
                }
                Err(e) => Box::pin(std::future::ready(Err(Failure::Decode(e.to_string())))),
            }
        };
        Self {
            name: name.into(),
            description: description.into(),
            strict: false,
            title: None,
            hints: ToolHints::default(),
            input: Arc::new(InputSchema::of::<Input>()),
            handler: Arc::new(handler),
            checked: Arc::default(),
        }
    }

    /// Asks providers to enforce the schema exactly (OpenAI `strict`,
    /// Anthropic strict tool use). Off by default.
    ///
    /// # Examples
    ///
    /// # }
    /// ```
    /// # use proto_ai_tools::NativeTool;
    /// let tool = NativeTool::new::<serde_json::Map<String, serde_json::Value>, _, _>("echo", "Echo.", |_, m| async move {
    ///     serde_json::Value::Object(m)
    /// })
    /// .strict(true);
    /// assert!(tool.is_strict());
    /// ```
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self.checked = Arc::default();
        self
    }

    /// Gives the tool a human-readable name for hosts that show tools to
    /// people (MCP `title`).
    ///
    /// # Examples
    ///
    /// ```
    /// # let tool = proto_ai_tools::NativeTool::new::<String, _, _>("echo", "Echo.", |_, s| async move { s });
    /// assert_eq!(tool.title("Echo a text").title_text(), Some("Echo a text"));
    /// ```
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self.checked = Arc::default();
        self
    }

    /// The human-readable name, if one was given.
    ///
    /// # Examples
    ///
    /// See [`title`](Self::title).
    pub fn title_text(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// Says what the tool does to the world (read-only, idempotent,
    /// destructive), for hosts that decide whether to ask before running it;
    /// MCP serves them as the tool's annotations. None by default.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::schema::ToolHints;
    /// # let tool = proto_ai_tools::NativeTool::new::<String, _, _>("echo", "Echo.", |_, s| async move { s });
    /// let tool = tool.hints(ToolHints { read_only: true, idempotent: true, destructive: None });
    /// assert!(tool.tool_hints().read_only);
    /// ```
    pub fn hints(mut self, hints: ToolHints) -> Self {
        self.hints = hints;
        self
    }

    /// What the tool does to the world; see [`hints`](Self::hints).
    ///
    /// # Examples
    ///
    /// See [`hints`](Self::hints).
    pub fn tool_hints(&self) -> ToolHints {
        self.hints
    }

    /// The name the model calls.
    ///
    /// # Examples
    ///
    /// ```
    /// # let tool = proto_ai_tools::NativeTool::new::<String, _, _>("echo", "Echo.", |_, s| async move { s });
    /// assert_eq!(tool.name(), "echo");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the tool does, for the model.
    ///
    /// # Examples
    ///
    /// ```
    /// # let tool = proto_ai_tools::NativeTool::new::<String, _, _>("echo", "Echo.", |_, s| async move { s });
    /// assert_eq!(tool.description(), "Echo.");
    /// ```
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Whether providers are asked to enforce the schema exactly.
    ///
    /// # Examples
    ///
    /// See [`strict`](Self::strict).
    pub fn is_strict(&self) -> bool {
        self.strict
    }

    /// The input's schema (IR) and its alias-carrying fields.
    ///
    /// # Examples
    ///
    /// ```
    /// # let tool = proto_ai_tools::NativeTool::new::<String, _, _>("echo", "Echo.", |_, s| async move { s });
    /// assert!(tool.input().aliases.is_empty());
    /// ```
    pub fn input(&self) -> &InputSchema {
        &self.input
    }

    /// The parameters rendered for `dialect`, with this tool's strictness.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::{NativeTool, ToolInput};
    /// use proto_ai_tools::schema::Dialect;
    ///
    /// #[derive(serde::Deserialize, ToolInput)]
    /// struct Input { text: String }
    ///
    /// let tool = NativeTool::new::<Input, _, _>("shout", "Shout.", |_, i: Input| async move { i.text + "!" });
    /// assert_eq!(tool.parameters(Dialect::Anthropic)["required"], serde_json::json!(["text"]));
    /// ```
    pub fn parameters(&self, dialect: Dialect) -> Value {
        self.parameters_for_host(dialect, HostProfile::Exact)
    }

    /// The parameters' schema for `dialect` as a model reads it through a
    /// host of profile `host`; see
    /// [`Tool::parameters_for_host`](crate::toolkit::Tool::parameters_for_host).
    pub fn parameters_for_host(&self, dialect: Dialect, host: HostProfile) -> Value {
        self.parameters_within(dialect, host, render::DEFAULT_MAX_TOOL_BYTES)
    }

    /// Whether the schema passed the toolkit's checks already (in this
    /// tool or a clone of it).
    pub(crate) fn is_checked(&self) -> bool {
        self.checked.get().is_some()
    }

    /// Notes that the schema passed the toolkit's checks.
    pub(crate) fn mark_checked(&self) {
        let _ = self.checked.set(());
    }

    /// [`parameters_for_host`](Self::parameters_for_host), the whole
    /// definition within `max_tool_bytes` (a toolkit's budget; see
    /// [`render::parameters_within`]).
    pub(crate) fn parameters_within(
        &self,
        dialect: Dialect,
        host: HostProfile,
        max_tool_bytes: usize,
    ) -> Value {
        let budget = render::parameters_budget(
            max_tool_bytes,
            &self.name,
            self.title_text(),
            self.description(),
            0,
        );
        render::parameters_within(&self.input.schema, dialect, self.strict, host, budget)
    }

    /// Runs the tool with the model's arguments (JSON text, empty meaning
    /// `{}`, or a value parsed already) in the conversation of `aliases`,
    /// with the call's `options` (which the function reads from its
    /// [`ToolContext::call_options`]; a bad metadata key is an error result
    /// and nothing runs): undo provider shaping, refuse
    /// unknown arguments, resolve aliases in `alias_prefix` fields (an alias
    /// the conversation never issued is refused, naming the valid ones),
    /// decode into the input type, run, and show known UUIDs in the output as
    /// aliases. Never panics: a panic in the function is an error result.
    ///
    /// # Examples
    ///
    /// See [`NativeTool`].
    pub async fn call<'a>(
        &self,
        aliases: Arc<AliasManager>,
        args: impl Into<Arguments<'a>>,
        options: &CallOptions,
    ) -> ToolResult {
        match options.for_tool(&CallOptions::new(), None) {
            Ok(options) => self.run(aliases, args.into(), &options).await.0,
            Err(problem) => ToolResult::error(refused_options_message(&self.name, &problem)),
        }
    }

    /// [`call`](Self::call) with `options` worked out and checked already
    /// (by a toolkit), and how it ended: the `outcome` of the logs (guide/src/observability.md,
    /// "Logs"). A failure an operator acts on is logged at WARN with its
    /// cause, which the model is not shown.
    pub(crate) async fn run(
        &self,
        aliases: Arc<AliasManager>,
        args: Arguments<'_>,
        options: &CallOptions,
    ) -> (ToolResult, &'static str) {
        let resolve = Resolve {
            aliases: &aliases,
            pass_unknown_uuids: false,
        };
        let limits = Limits {
            numbers_as_doubles: options.host.is_some_and(HostProfile::numbers_as_doubles),
            ..Limits::default()
        };
        let prepared = prepare(&self.input.schema, args, &limits, resolve).await;
        let args = match prepared {
            Ok(args) => args,
            Err(Refusal::Arguments(message)) => {
                return (
                    ToolResult::error(format!("{}: {message}", self.name)),
                    "arguments",
                );
            }
            Err(Refusal::Store(e)) => {
                warn_failure(&self.name, "store_before_call", e.message());
                return (
                    ToolResult::error(format!(
                        "{} could not run: the alias store is unavailable, so the ids in the arguments could not be resolved; nothing ran. A retry may help: try again in a moment, or tell the user.",
                        self.name
                    )),
                    "store_before_call",
                );
            }
        };
        let ctx = ToolContext::new(self.name.as_str(), aliases.clone())
            .with_call_options(options.clone());
        let handler = self.handler.clone();
        let started = catch_unwind(AssertUnwindSafe(move || handler(ctx, args)));
        let outcome = match started {
            Ok(future) => CatchUnwind(future).await,
            Err(payload) => Err(panic_message(payload.as_ref())),
        };
        // A shared conversation learns the aliases of the output's UUIDs
        // first (without them, known ids would reach the model raw); one in
        // memory knows them already, and the fetches return at once.
        let fetched = match &outcome {
            Ok(Ok(ToolOutput::Text(text))) => aliases.fetch_text(text).await,
            Ok(Ok(ToolOutput::Json(value))) => aliases.fetch_json(value).await,
            Ok(Err(Failure::Tool(error))) => aliases.fetch_text(error.message()).await,
            _ => Ok(()),
        };
        if let Err(e) = fetched {
            let cause = match &e {
                crate::alias::AliasError::Store(e) => e.message().to_owned(),
                other => other.to_string(),
            };
            warn_failure(&self.name, "store_after_call", &cause);
            return (
                ToolResult::error(format!(
                    "{} ran, but its answer is withheld: the alias store is unavailable, so the ids in it could not be shown as aliases. It took effect: do not repeat it blindly; tell the user.",
                    self.name
                )),
                "store_after_call",
            );
        }
        match outcome {
            Ok(Ok(ToolOutput::Text(text))) => (ToolResult::ok(aliases.aliasify_text(&text)), "ok"),
            Ok(Ok(ToolOutput::Json(mut value))) => {
                aliases.aliasify_json(&mut value);
                (ToolResult::ok(value.to_string()), "ok")
            }
            Ok(Err(Failure::Decode(message))) => (
                ToolResult::error(format!(
                    "{}: the arguments are invalid: {message}",
                    self.name
                )),
                "arguments",
            ),
            Ok(Err(Failure::Tool(error))) => {
                let outcome = match &error.1 {
                    Some(cause) => {
                        warn_failure(&self.name, "store_in_tool", cause);
                        "store_in_tool"
                    }
                    None => "error",
                };
                (
                    ToolResult::error(format!(
                        "{} failed: {}",
                        self.name,
                        aliases.aliasify_text(error.message())
                    )),
                    outcome,
                )
            }
            Err(panic) => {
                warn_failure(&self.name, "internal", &panic);
                (
                    ToolResult::error(format!(
                        "{} could not run because of an internal error ({panic}); do not retry, tell the user",
                        self.name
                    )),
                    "internal",
                )
            }
        }
    }
}

/// Polls a boxed future, turning a panic into an error.
struct CatchUnwind<F>(F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.0;
        match catch_unwind(AssertUnwindSafe(|| Pin::new(inner).poll(cx))) {
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(panic_message(payload.as_ref()))),
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned());
    match text {
        Some(text) => format!("the tool panicked: {text}"),
        None => "the tool panicked".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn uuid(n: u32) -> String {
        format!("{n:08x}-0000-4000-8000-000000000000")
    }

    fn echo() -> NativeTool {
        NativeTool::new::<serde_json::Map<String, Value>, _, _>(
            "echo",
            "Echo.",
            |_, m| async move { Value::Object(m) },
        )
    }

    #[test]
    fn a_tool_and_its_clones_are_checked_once_until_its_rendering_changes() {
        /// Some text.
        #[derive(serde::Deserialize, crate::ToolInput)]
        #[allow(dead_code)]
        struct Shout {
            /// What to shout.
            text: String,
        }
        let tool =
            NativeTool::new::<Shout, _, _>("shout", "Shout.", |_, s: Shout| async move { s.text });
        assert!(!tool.is_checked());
        let built = crate::Toolkit::builder().native(tool.clone()).build();
        assert!(built.is_ok(), "{built:?}");
        // The clone the toolkit checked shares the note with this one.
        assert!(tool.is_checked() && tool.clone().is_checked());
        // What changes the schema as rendered is checked again.
        assert!(!tool.clone().strict(true).is_checked());
        assert!(!tool.clone().title("Echo").is_checked());
        assert!(tool.clone().hints(ToolHints::default()).is_checked());
    }

    #[tokio::test]
    async fn panics_become_error_results() {
        let tool = NativeTool::new::<String, _, _>("boom", "Boom.", |_, s: String| async move {
            if s == "now" {
                panic!("kaboom");
            }
            Ok::<_, ToolError>(s)
        });
        let result = tool
            .call(
                Arc::new(AliasManager::new()),
                r#""now""#,
                &CallOptions::new(),
            )
            .await;
        assert!(result.is_error);
        assert!(result.output.contains("kaboom"), "{}", result.output);
    }

    #[tokio::test]
    async fn output_is_aliasified_and_errors_name_the_tool() {
        let aliases = Arc::new(AliasManager::new());
        aliases.register("link", &uuid(1)).await.unwrap();
        let result = echo()
            .call(
                aliases.clone(),
                &json!({"id": uuid(1), "n": "x"}).to_string(),
                &CallOptions::new(),
            )
            .await;
        assert_eq!(
            result,
            ToolResult::ok(json!({"id": "link-1", "n": "x"}).to_string())
        );
        let result = echo().call(aliases, "{not json", &CallOptions::new()).await;
        assert!(
            result.is_error
                && result
                    .output
                    .starts_with("echo: the arguments are not valid JSON")
        );
    }

    /// A tool that hands out a new id registers it the same way whether the
    /// conversation is in memory or in a shared store, and another replica
    /// of the conversation resolves it.
    #[tokio::test]
    async fn a_tool_registers_new_ids_in_a_shared_conversation() {
        let created = NativeTool::new::<String, _, _>(
            "create",
            "Creates a link.",
            |ctx: ToolContext, id: String| async move {
                ctx.alias_manager()
                    .register("link", &id)
                    .await
                    .map_err(|e| ToolError::new(e.to_string()))
            },
        );
        let store: Arc<dyn crate::store::AliasStore> = Arc::new(crate::store::MemoryStore::new(
            std::time::Duration::from_secs(60),
        ));
        let replica_a = Arc::new(AliasManager::with_store(store.clone(), "c"));
        let replica_b = AliasManager::with_store(store.clone(), "c");
        let result = created
            .call(
                replica_a,
                &json!(uuid(7).to_uppercase()).to_string(),
                &CallOptions::new(),
            )
            .await;
        assert_eq!(result, ToolResult::ok("link-1"));
        replica_b.fetch(&["link-1"]).await.unwrap();
        assert_eq!(replica_b.resolve("link-1"), Some(uuid(7)));

        // A replica that has learnt nothing yet still shows the id of an
        // output, JSON or text, as its alias: it asks the store first.
        let replica_c = Arc::new(AliasManager::with_store(store.clone(), "c"));
        let echoed = echo()
            .call(
                replica_c.clone(),
                &json!({"id": uuid(7)}).to_string(),
                &CallOptions::new(),
            )
            .await;
        assert_eq!(echoed, ToolResult::ok(json!({"id": "link-1"}).to_string()));
        let said = NativeTool::new::<String, _, _>(
            "say",
            "Says it.",
            |_, text: String| async move { text },
        );
        let replica_d = Arc::new(AliasManager::with_store(store, "c"));
        let result = said
            .call(
                replica_d,
                &json!(format!("made {}", uuid(7))).to_string(),
                &CallOptions::new(),
            )
            .await;
        assert_eq!(result, ToolResult::ok("made link-1"));
    }
}
