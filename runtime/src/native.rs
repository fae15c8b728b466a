//! Hand-written ("native") tools: a Rust function whose input is a
//! [`ToolInput`] type, decoded before the function runs.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use ai_tools_schema::ir::{Kind, Object, Schema};
use ai_tools_schema::{Dialect, FieldAlias, render};
use serde_json::{Map, Value};

use crate::alias::{AliasManager, Resolution};
use crate::executor::{ToolResult, alias_problem, entries_to_map};
use crate::tool_input::{InputSchema, ToolInput};
use crate::transport::BoxFuture;

/// The largest arguments text a native tool accepts, in bytes.
pub const MAX_ARGUMENT_BYTES: usize = 256 * 1024;
/// The deepest nesting of arrays and objects a native tool accepts.
pub const MAX_ARGUMENT_DEPTH: usize = 32;

/// What a native tool's function gets besides its input: the conversation's
/// alias namespace and the tool's name.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// let ctx = ai_tools::ToolContext::new("search", Arc::new(ai_tools::AliasManager::new()));
/// assert_eq!(ctx.tool_name(), "search");
/// assert!(ctx.aliases().is_empty());
/// ```
#[derive(Debug, Clone)]
pub struct ToolContext {
    tool: Arc<str>,
    aliases: Arc<AliasManager>,
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
        }
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
    /// (`aliases().register("link", uuid)`) so the model sees `link-1`.
    ///
    /// # Examples
    ///
    /// See [`ToolContext`].
    pub fn aliases(&self) -> &Arc<AliasManager> {
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
/// ```
/// use ai_tools::ToolOutput;
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
/// [`std::error::Error`], so `?` works in a tool's body.
///
/// It does not implement `std::error::Error` itself (as `anyhow::Error`
/// does not), which is what lets that conversion exist.
///
/// # Examples
///
/// ```
/// fn parse(s: &str) -> Result<u32, ai_tools::ToolError> {
///     Ok(s.parse::<u32>()?)
/// }
/// assert!(parse("x").unwrap_err().message().contains("invalid digit"));
/// assert_eq!(ai_tools::ToolError::new("no such page").message(), "no such page");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError(String);

impl ToolError {
    /// An error with `message`, written for the model: what went wrong and
    /// what to do instead.
    ///
    /// # Examples
    ///
    /// See [`ToolError`].
    pub fn new(message: impl fmt::Display) -> Self {
        ToolError(message.to_string())
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
        ToolError(error.to_string())
    }
}

/// What a native tool's function may return: `Result<O, ToolError>` with `O`
/// a `String`, `&str`, `serde_json::Value` or [`ToolOutput`], or one of
/// those directly for a tool that cannot fail.
///
/// # Examples
///
/// ```
/// use ai_tools::{ToolError, ToolOutput, ToolReturn};
/// assert_eq!(Ok::<_, ToolError>("hi").into_outcome(), Ok(ToolOutput::Text("hi".into())));
/// assert_eq!(String::from("hi").into_outcome(), Ok(ToolOutput::Text("hi".into())));
/// ```
pub trait ToolReturn {
    /// The output, or the error's message.
    fn into_outcome(self) -> Result<ToolOutput, ToolError>;
}

impl<O: Into<ToolOutput>> ToolReturn for Result<O, ToolError> {
    fn into_outcome(self) -> Result<ToolOutput, ToolError> {
        self.map(Into::into)
    }
}

impl ToolReturn for String {
    fn into_outcome(self) -> Result<ToolOutput, ToolError> {
        Ok(self.into())
    }
}

impl ToolReturn for &'static str {
    fn into_outcome(self) -> Result<ToolOutput, ToolError> {
        Ok(self.into())
    }
}

impl ToolReturn for Value {
    fn into_outcome(self) -> Result<ToolOutput, ToolError> {
        Ok(self.into())
    }
}

impl ToolReturn for ToolOutput {
    fn into_outcome(self) -> Result<ToolOutput, ToolError> {
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
/// use ai_tools::{AliasManager, NativeTool, ToolInput};
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
/// let result = search.call(Arc::new(AliasManager::new()), r#"{"query":"adapters"}"#).await;
/// assert_eq!(result.output, "query=adapters limit=None");
/// let result = search.call(Arc::new(AliasManager::new()), r#"{"limit":3}"#).await;
/// assert!(result.is_error);
/// assert!(result.output.contains("missing field `query`"), "{}", result.output);
/// # }
/// ```
#[derive(Clone)]
pub struct NativeTool {
    name: String,
    description: String,
    strict: bool,
    input: Arc<InputSchema>,
    handler: Arc<Handler>,
}

impl fmt::Debug for NativeTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NativeTool")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("strict", &self.strict)
            .field("input", &self.input)
            .finish_non_exhaustive()
    }
}

impl NativeTool {
    /// A tool named `name` that runs `function` with the arguments decoded
    /// into `Input`. The function gets a [`ToolContext`] and the input, and
    /// returns a [`ToolReturn`]: usually `Ok(String or serde_json::Value)`.
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
        Fut::Output: ToolReturn,
    {
        let handler = move |ctx: ToolContext,
                            args: Value|
              -> BoxFuture<'static, Result<ToolOutput, Failure>> {
            match serde_json::from_value::<Input>(args) {
                Ok(input) => {
                    let future = function(ctx, input);
                    Box::pin(async move { future.await.into_outcome().map_err(Failure::Tool) })
                }
                Err(e) => Box::pin(std::future::ready(Err(Failure::Decode(e.to_string())))),
            }
        };
        Self {
            name: name.into(),
            description: description.into(),
            strict: false,
            input: Arc::new(InputSchema::of::<Input>()),
            handler: Arc::new(handler),
        }
    }

    /// Asks providers to enforce the schema exactly (OpenAI `strict`,
    /// Anthropic strict tool use). Off by default.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ai_tools::NativeTool;
    /// let tool = NativeTool::new::<serde_json::Map<String, serde_json::Value>, _, _>("echo", "Echo.", |_, m| async move {
    ///     serde_json::Value::Object(m)
    /// })
    /// .strict(true);
    /// assert!(tool.is_strict());
    /// ```
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// The name the model calls.
    ///
    /// # Examples
    ///
    /// ```
    /// # let tool = ai_tools::NativeTool::new::<String, _, _>("echo", "Echo.", |_, s| async move { s });
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
    /// # let tool = ai_tools::NativeTool::new::<String, _, _>("echo", "Echo.", |_, s| async move { s });
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
    /// # let tool = ai_tools::NativeTool::new::<String, _, _>("echo", "Echo.", |_, s| async move { s });
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
    /// use ai_tools::{NativeTool, ToolInput};
    /// use ai_tools::schema::Dialect;
    ///
    /// #[derive(serde::Deserialize, ToolInput)]
    /// struct Input { text: String }
    ///
    /// let tool = NativeTool::new::<Input, _, _>("shout", "Shout.", |_, i: Input| async move { i.text + "!" });
    /// assert_eq!(tool.parameters(Dialect::Anthropic)["required"], serde_json::json!(["text"]));
    /// ```
    pub fn parameters(&self, dialect: Dialect) -> Value {
        render::parameters(&self.input.schema, dialect, self.strict)
    }

    /// Runs the tool with the model's arguments (JSON text; empty means
    /// `{}`) in the conversation of `aliases`: undo provider shaping, refuse
    /// unknown arguments, resolve aliases in `alias_prefix` fields (an alias
    /// the conversation never issued is refused, naming the valid ones),
    /// decode into the input type, run, and show known UUIDs in the output as
    /// aliases. Never panics: a panic in the function is an error result.
    ///
    /// # Examples
    ///
    /// See [`NativeTool`].
    pub async fn call(&self, aliases: Arc<AliasManager>, args_json: &str) -> ToolResult {
        // A shared conversation: learn the aliases and UUIDs of the arguments
        // from the store first, in one request.
        if aliases.is_shared()
            && let Ok(value) = serde_json::from_str::<Value>(args_json)
            && let Err(e) = aliases.fetch(&crate::alias::json_strings(&value)).await
        {
            return ToolResult::error(format!(
                "{} could not run: {e}; nothing ran. A retry may help: try again in a moment, or tell the user.",
                self.name
            ));
        }
        let args = match self.prepare(&aliases, args_json) {
            Ok(args) => args,
            Err(message) => return ToolResult::error(format!("{}: {message}", self.name)),
        };
        let ctx = ToolContext::new(self.name.as_str(), aliases.clone());
        let handler = self.handler.clone();
        let started = catch_unwind(AssertUnwindSafe(move || handler(ctx, args)));
        let outcome = match started {
            Ok(future) => CatchUnwind(future).await,
            Err(payload) => Err(panic_message(payload.as_ref())),
        };
        // A shared conversation: learn the aliases of the output's UUIDs
        // first; without them, known ids would reach the model raw.
        if aliases.is_shared() {
            let fetched = match &outcome {
                Ok(Ok(ToolOutput::Text(text))) => aliases.fetch_text(text).await,
                Ok(Ok(ToolOutput::Json(value))) => {
                    aliases.fetch(&crate::alias::json_strings(value)).await
                }
                Ok(Err(Failure::Tool(error))) => aliases.fetch_text(error.message()).await,
                _ => Ok(()),
            };
            if let Err(e) = fetched {
                return ToolResult::error(format!(
                    "{} ran, but its answer is withheld: {e}, so the ids in it could not be shown as aliases. It took effect: do not repeat it blindly; tell the user.",
                    self.name
                ));
            }
        }
        match outcome {
            Ok(Ok(ToolOutput::Text(text))) => ToolResult::ok(aliases.aliasify_text(&text)),
            Ok(Ok(ToolOutput::Json(mut value))) => {
                aliases.aliasify_json(&mut value);
                ToolResult::ok(value.to_string())
            }
            Ok(Err(Failure::Decode(message))) => ToolResult::error(format!(
                "{}: the arguments are invalid: {message}",
                self.name
            )),
            Ok(Err(Failure::Tool(error))) => ToolResult::error(format!(
                "{} failed: {}",
                self.name,
                aliases.aliasify_text(error.message())
            )),
            Err(panic) => ToolResult::error(format!(
                "{} could not run because of an internal error ({panic}); do not retry, tell the user",
                self.name
            )),
        }
    }

    /// Parses, unshapes and resolves the arguments.
    fn prepare(&self, aliases: &AliasManager, text: &str) -> Result<Value, String> {
        if text.len() > MAX_ARGUMENT_BYTES {
            return Err(format!(
                "the arguments are {} bytes long, more than the {MAX_ARGUMENT_BYTES} accepted",
                text.len()
            ));
        }
        if text.trim().is_empty() {
            return self.shape(aliases, Value::Object(Map::new()));
        }
        let mut value: Value = serde_json::from_str(text)
            .map_err(|e| format!("the arguments are not valid JSON ({e}); send one JSON object"))?;
        // Some models double-encode: a JSON string that holds the object.
        if let Value::String(inner) = &value
            && let Ok(object @ Value::Object(_)) = serde_json::from_str::<Value>(inner)
        {
            value = object;
        }
        self.shape(aliases, value)
    }

    fn shape(&self, aliases: &AliasManager, mut value: Value) -> Result<Value, String> {
        let defs = match &self.input.schema.kind {
            Kind::Object(object) => &object.defs,
            _ => &EMPTY_DEFS,
        };
        let mut walk = Walk {
            defs,
            fields: &self.input.aliases,
            aliases,
            problems: Vec::new(),
        };
        walk.value(&self.input.schema, &mut value, "", 0);
        if walk.problems.is_empty() {
            Ok(value)
        } else {
            Err(walk.problems.join("; "))
        }
    }
}

static EMPTY_DEFS: BTreeMap<String, Schema> = BTreeMap::new();

/// Walks the arguments along the input's schema: undoes what the renderings
/// did (`null` for a left-out optional, `{key, value}` arrays for maps, JSON
/// text for cut or open objects), collects unknown arguments, and resolves
/// aliases in the alias-carrying fields.
struct Walk<'a> {
    defs: &'a BTreeMap<String, Schema>,
    fields: &'a [FieldAlias],
    aliases: &'a AliasManager,
    problems: Vec<String>,
}

impl Walk<'_> {
    fn value(&mut self, schema: &Schema, value: &mut Value, path: &str, depth: usize) {
        if depth > MAX_ARGUMENT_DEPTH {
            self.problems.push(format!(
                "the arguments are nested deeper than {MAX_ARGUMENT_DEPTH} levels"
            ));
            return;
        }
        match &schema.kind {
            Kind::Ref(name) => {
                if let Some(def) = self.defs.get(name) {
                    self.value(def, value, path, depth);
                }
            }
            Kind::Object(object) => {
                decode_json_string(value, Value::is_object);
                if let Value::Object(map) = value {
                    self.object(object, map, path, depth);
                }
            }
            Kind::Map(map) => {
                decode_json_string(value, |v| v.is_object() || v.is_array());
                if let Value::Array(items) = value
                    && let Some(entries) = entries_to_map(items)
                {
                    *value = Value::Object(entries);
                }
                if let Value::Object(entries) = value {
                    for (key, item) in entries.iter_mut() {
                        self.value(&map.value, item, &format!("{path}[{key}]"), depth + 1);
                    }
                }
            }
            Kind::Array(items) => {
                if let Value::Array(values) = value {
                    for (i, item) in values.iter_mut().enumerate() {
                        self.value(items, item, &format!("{path}[{i}]"), depth + 1);
                    }
                }
            }
            Kind::Any => decode_json_string(value, |v| v.is_object() || v.is_array()),
            _ => {}
        }
    }

    fn object(&mut self, object: &Object, map: &mut Map<String, Value>, path: &str, depth: usize) {
        let mut unknown = Vec::new();
        let keys: Vec<String> = map.keys().cloned().collect();
        for key in keys {
            let Some(property) = object.properties.iter().find(|p| p.name == key) else {
                if !object.open {
                    unknown.push(key);
                }
                continue;
            };
            // Strict dialects send `null` for every optional property left out.
            if !property.required
                && !property.schema.nullable
                && map.get(&key).is_some_and(Value::is_null)
            {
                map.remove(&key);
                continue;
            }
            let Some(value) = map.get_mut(&key) else {
                continue;
            };
            let field_path = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            let prefix = object.name.as_deref().and_then(|name| {
                self.fields
                    .iter()
                    .find(|f| f.message == name && f.field == key)
                    .map(|f| f.prefix.clone())
            });
            match prefix {
                Some(prefix) => self.resolve(&prefix, value, &field_path),
                None => self.value(&property.schema, value, &field_path, depth + 1),
            }
        }
        if !unknown.is_empty() {
            let noun = match (path.is_empty(), unknown.len()) {
                (true, 1) => "unknown argument",
                (true, _) => "unknown arguments",
                (false, 1) => "unknown field",
                (false, _) => "unknown fields",
            };
            let list = unknown
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let place = if path.is_empty() {
                String::new()
            } else {
                format!(" in `{path}`")
            };
            let valid: Vec<String> = object
                .properties
                .iter()
                .map(|p| format!("`{}`", p.name))
                .collect();
            let valid = if valid.is_empty() {
                "none".to_owned()
            } else {
                valid.join(", ")
            };
            self.problems
                .push(format!("{noun} {list}{place}; the valid ones are: {valid}"));
        }
    }

    /// Resolves the alias in a string (or each string of an array) of an
    /// alias-carrying field.
    fn resolve(&mut self, prefix: &str, value: &mut Value, path: &str) {
        match value {
            Value::String(s) => match self.aliases.resolve_for_field(prefix, s) {
                Resolution::Uuid(uuid) => *s = uuid,
                Resolution::Empty => {}
                other => {
                    let problem =
                        alias_problem(path, prefix, s, &other, &self.aliases.aliases_of(prefix));
                    self.problems.push(problem);
                }
            },
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    self.resolve(prefix, item, &format!("{path}[{i}]"));
                }
            }
            _ => {}
        }
    }
}

/// Replaces a string holding JSON that `accept` likes with that JSON.
fn decode_json_string(value: &mut Value, accept: impl Fn(&Value) -> bool) {
    let Value::String(s) = value else { return };
    let t = s.trim_start();
    if !(t.starts_with('{') || t.starts_with('[')) {
        return;
    }
    if let Ok(parsed) = serde_json::from_str::<Value>(s)
        && accept(&parsed)
    {
        *value = parsed;
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

    #[tokio::test]
    async fn panics_become_error_results() {
        let tool = NativeTool::new::<String, _, _>("boom", "Boom.", |_, s: String| async move {
            if s == "now" {
                panic!("kaboom");
            }
            Ok::<_, ToolError>(s)
        });
        let result = tool.call(Arc::new(AliasManager::new()), r#""now""#).await;
        assert!(result.is_error);
        assert!(result.output.contains("kaboom"), "{}", result.output);
    }

    #[tokio::test]
    async fn output_is_aliasified_and_errors_name_the_tool() {
        let aliases = Arc::new(AliasManager::new());
        aliases.register("link", &uuid(1)).unwrap();
        let result = echo()
            .call(
                aliases.clone(),
                &json!({"id": uuid(1), "n": "x"}).to_string(),
            )
            .await;
        assert_eq!(
            result,
            ToolResult::ok(json!({"id": "link-1", "n": "x"}).to_string())
        );
        let result = echo().call(aliases, "{not json").await;
        assert!(
            result.is_error
                && result
                    .output
                    .starts_with("echo: the arguments are not valid JSON")
        );
    }

    #[test]
    fn map_entries_and_json_strings_are_unshaped() {
        let mut object = Object::named("In");
        object = object
            .property("m", Schema::map(Schema::string(), Schema::integer()), true)
            .property(
                "o",
                Schema::object(Object::named("Inner").property("x", Schema::integer(), false)),
                false,
            );
        let schema = Schema::object(object);
        let aliases = AliasManager::new();
        let mut walk = Walk {
            defs: &EMPTY_DEFS,
            fields: &[],
            aliases: &aliases,
            problems: Vec::new(),
        };
        let mut value = json!({"m": [{"key": "a", "value": 1}], "o": "{\"x\": null}"});
        walk.value(&schema, &mut value, "", 0);
        assert_eq!(value, json!({"m": {"a": 1}, "o": {}}));
        assert!(walk.problems.is_empty());
    }
}
