//! One tool of a [`Toolkit`](super::Toolkit), generated or native: what
//! it is called and says, its hints and consent, and its definition in
//! each provider's form (its parameters rendered once per dialect, host and
//! budget, and shared).

use std::sync::{Arc, LazyLock};

use prost_reflect::DescriptorPool;
use proto_ai_tools_schema::output::{self, ResultShape};
use proto_ai_tools_schema::{Dialect, HostProfile, ToolHints, render};
use serde_json::{Value, json};

use super::GeneratedSource;
use crate::consent::ConsentPolicy;
use crate::executor::{JsonNames, method_in};
use crate::inbound::request_schema;
use crate::memo::Memo;
use crate::tool::{AgentTool, NativeTool};

/// A generated tool's parameters rendered for `dialect` through a host of
/// profile `host` within `max_bytes`, from the request's IR in `pool` (its
/// executor's descriptors): once per tool, dialect, host and budget, then
/// shared.
fn generated_for_host(
    tool: &'static AgentTool,
    pool: &'static DescriptorPool,
    dialect: Dialect,
    host: HostProfile,
    max_bytes: usize,
) -> Value {
    type Key = (usize, Dialect, HostProfile, usize);
    static RENDERED: LazyLock<Memo<Key, Value>> = LazyLock::new(Memo::new);
    let key = (std::ptr::from_ref(tool) as usize, dialect, host, max_bytes);
    let rendered = RENDERED.get_or(key, || {
        match pool.get_message_by_name(tool.method.request) {
            Some(request) => {
                let schema = request_schema(pool, &request);
                render::parameters_within(&schema, dialect, tool.strict, host, max_bytes)
            }
            // Not this executor's tool: the exact rendering is all there is.
            None => tool.parameters_value(dialect),
        }
    });
    Value::clone(&rendered)
}

/// The result schema of a generated tool, made once per tool, host and
/// names.
fn generated_output_schema(
    tool: &'static AgentTool,
    pool: &'static DescriptorPool,
    host: HostProfile,
    names: JsonNames,
) -> Arc<Option<Value>> {
    type Key = (usize, HostProfile, JsonNames);
    static MADE: LazyLock<Memo<Key, Option<Value>>> = LazyLock::new(Memo::new);
    MADE.get_or((std::ptr::from_ref(tool) as usize, host, names), || {
        let method = method_in(pool, tool).ok()?;
        let shape = if method.is_server_streaming() {
            ResultShape::ServerStream
        } else {
            ResultShape::Unary
        };
        let aliases = tool
            .response_aliases
            .iter()
            .map(|alias| (alias.message, alias.field, alias.prefix));
        output::result_schema_with(&method.output(), shape, aliases, host, names)
    })
}

/// One tool of a [`Toolkit`](super::Toolkit): generated or native.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::{NativeTool, Toolkit, ToolInput};
/// #[derive(serde::Deserialize, ToolInput)]
/// struct Input { text: String }
/// let shout = NativeTool::new::<Input, _, _>("shout", "Shout.", |_, i: Input| async move { i.text + "!" });
/// let toolkit = Toolkit::builder().native(shout).build().unwrap();
/// let tool = toolkit.get("shout").unwrap();
/// assert_eq!((tool.name(), tool.description(), tool.is_strict()), ("shout", "Shout.", false));
/// assert!(tool.native().is_some() && tool.agent_tool().is_none());
/// ```
#[derive(Debug)]
pub struct Tool {
    pub(super) kind: Kind,
    /// The toolkit's budget for the parameters
    /// ([`ToolkitBuilder::max_tool_bytes`](super::ToolkitBuilder::max_tool_bytes)).
    pub(super) max_bytes: usize,
    /// The names its results are written under
    /// ([`ToolkitBuilder::json_names`](super::ToolkitBuilder::json_names)).
    pub(super) json_names: JsonNames,
}

pub(super) enum Kind {
    /// A tool of a generated executor, which runs it.
    Generated {
        tool: &'static AgentTool,
        source: Arc<dyn GeneratedSource>,
    },
    Native(NativeTool),
}

impl std::fmt::Debug for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Kind::Generated { tool, .. } => f.debug_tuple("Generated").field(tool).finish(),
            Kind::Native(native) => f.debug_tuple("Native").field(native).finish(),
        }
    }
}

impl Tool {
    /// The name the model calls.
    ///
    /// # Examples
    ///
    /// See [`Tool`].
    pub fn name(&self) -> &str {
        match &self.kind {
            Kind::Generated { tool, .. } => tool.name,
            Kind::Native(tool) => tool.name(),
        }
    }

    /// What the tool does, for the model.
    ///
    /// # Examples
    ///
    /// See [`Tool`].
    pub fn description(&self) -> &str {
        match &self.kind {
            Kind::Generated { tool, .. } => tool.description,
            Kind::Native(tool) => tool.description(),
        }
    }

    /// Whether providers are asked to enforce the schema exactly.
    ///
    /// # Examples
    ///
    /// See [`Tool`].
    pub fn is_strict(&self) -> bool {
        match &self.kind {
            Kind::Generated { tool, .. } => tool.strict,
            Kind::Native(tool) => tool.is_strict(),
        }
    }

    /// A human-readable name for hosts that show tools to people, if the
    /// tool has one (`rpc_tool.title`, or [`NativeTool::title`]).
    ///
    /// # Examples
    ///
    /// See [`Tool`].
    pub fn title(&self) -> Option<&str> {
        match &self.kind {
            Kind::Generated { tool, .. } => tool.title,
            Kind::Native(tool) => tool.title_text(),
        }
    }

    /// What the tool does to the world (from the proto's
    /// `idempotency_level` and `rpc_tool.destructive`, or
    /// [`NativeTool::hints`]).
    ///
    /// # Examples
    ///
    /// See [`Tool`].
    pub fn hints(&self) -> ToolHints {
        match &self.kind {
            Kind::Generated { tool, .. } => tool.hints,
            Kind::Native(tool) => tool.tool_hints(),
        }
    }

    /// The tool's own consent policy (`rpc_tool.consent`, in the proto or
    /// an overlay), if it has one; `None` leaves it to the class confirmed
    /// ([`crate::consent`]). A native tool has none.
    ///
    /// # Examples
    ///
    /// See [`Toolkit::consent_policy`](super::Toolkit::consent_policy).
    pub fn consent(&self) -> Option<ConsentPolicy> {
        match &self.kind {
            Kind::Generated { tool, .. } => tool.consent,
            Kind::Native(_) => None,
        }
    }

    /// `arguments` as a person reads them before approving a call: every
    /// `tool_field.sensitive` field's value `"[redacted]"`.
    #[doc(hidden)]
    pub fn redacted(&self, arguments: &Value) -> Value {
        let mut shown = arguments.clone();
        if let Kind::Generated { tool, source } = &self.kind
            && let Some(request) = source
                .descriptor_pool()
                .get_message_by_name(tool.method.request)
        {
            proto_ai_tools_schema::proto::redact(&mut shown, &request);
        }
        shown
    }

    /// The tool's own deadline, if it has one (`rpc_tool.timeout`, in the
    /// proto or an overlay): a call whose options set no deadline gets it,
    /// and an MCP server puts it over its default (see
    /// `McpServer::with_call_timeout`).
    /// A native tool has none.
    ///
    /// # Examples
    ///
    /// See [`Tool`].
    pub fn timeout(&self) -> Option<std::time::Duration> {
        match &self.kind {
            Kind::Generated { tool, .. } => tool.timeout,
            Kind::Native(_) => None,
        }
    }

    /// The generated tool's static definition, if it is one.
    ///
    /// # Examples
    ///
    /// See [`Tool`].
    pub fn agent_tool(&self) -> Option<&'static AgentTool> {
        match &self.kind {
            Kind::Generated { tool, .. } => Some(tool),
            Kind::Native(_) => None,
        }
    }

    /// The toolset the tool belongs to: a generated tool's gRPC service,
    /// fully qualified (`links.v1.LinksService`); a native tool belongs to
    /// none. A server that shows a model a few tools at a time enables them
    /// by toolset (`McpServer::with_tool_search`, feature `tool-search`).
    ///
    /// # Examples
    ///
    /// See [`Tool`].
    pub fn toolset(&self) -> Option<&'static str> {
        self.agent_tool().map(|tool| tool.method.service)
    }

    /// The native tool, if it is one.
    ///
    /// # Examples
    ///
    /// See [`Tool`].
    pub fn native(&self) -> Option<&NativeTool> {
        match &self.kind {
            Kind::Generated { .. } => None,
            Kind::Native(tool) => Some(tool),
        }
    }

    /// The parameters' schema for `dialect`, within the toolkit's
    /// [`max_tool_bytes`](super::ToolkitBuilder::max_tool_bytes). A generated
    /// tool's are, under the default budget, the texts `ai_tools!` rendered
    /// and checked.
    ///
    /// # Examples
    ///
    /// ```
    /// # use proto_ai_tools::{NativeTool, Toolkit, ToolInput};
    /// # #[derive(serde::Deserialize, ToolInput)]
    /// # struct Input { text: String }
    /// # let shout = NativeTool::new::<Input, _, _>("shout", "Shout.", |_, i: Input| async move { i.text + "!" });
    /// # let toolkit = Toolkit::builder().native(shout).build().unwrap();
    /// let schema = toolkit.get("shout").unwrap().parameters(proto_ai_tools::schema::Dialect::OpenAi);
    /// assert_eq!(schema["properties"]["text"]["type"], "string");
    /// ```
    pub fn parameters(&self, dialect: Dialect) -> Value {
        if self.max_bytes != render::DEFAULT_MAX_TOOL_BYTES {
            return self.rendered(dialect, HostProfile::Exact);
        }
        match &self.kind {
            Kind::Generated { tool, .. } => tool.parameters_value(dialect),
            Kind::Native(tool) => tool.parameters(dialect),
        }
    }

    /// The parameters' schema for `dialect` as a model reads it through a
    /// host of profile `host` (see [`HostProfile`]): for a JavaScript host,
    /// 64-bit integers as strings of digits and no `$ref`.
    /// [`HostProfile::Exact`] gives [`parameters`](Self::parameters). A
    /// generated tool is rendered from its executor's descriptors once per
    /// dialect and host, then shared.
    ///
    /// # Examples
    ///
    /// ```
    /// # use proto_ai_tools::{NativeTool, Toolkit, ToolInput};
    /// use proto_ai_tools::schema::{Dialect, HostProfile};
    ///
    /// #[derive(serde::Deserialize, ToolInput)]
    /// struct Input { order_id: i64 }
    ///
    /// let tool = NativeTool::new::<Input, _, _>("cancel", "Cancel an order.", |_, i: Input| async move {
    ///     i.order_id.to_string()
    /// });
    /// let toolkit = Toolkit::builder().native(tool).build().unwrap();
    /// let cancel = toolkit.get("cancel").unwrap();
    /// let exact = cancel.parameters_for_host(Dialect::Anthropic, HostProfile::Exact);
    /// assert_eq!(exact["properties"]["order_id"]["type"], "integer");
    /// // `JSON.parse` would round an integer past 2^53: a string of digits arrives exactly.
    /// let javascript = cancel.parameters_for_host(Dialect::Anthropic, HostProfile::JavaScript);
    /// assert_eq!(javascript["properties"]["order_id"]["type"], "string");
    /// ```
    pub fn parameters_for_host(&self, dialect: Dialect, host: HostProfile) -> Value {
        if host == HostProfile::Exact {
            return self.parameters(dialect);
        }
        self.rendered(dialect, host)
    }

    /// The parameters rendered for `dialect` and `host`, from the
    /// request's IR, the whole definition within the toolkit's budget.
    fn rendered(&self, dialect: Dialect, host: HostProfile) -> Value {
        match &self.kind {
            Kind::Generated { tool, source } => {
                let examples = tool.input_examples().map_or(0, str::len);
                let budget = render::parameters_budget(
                    self.max_bytes,
                    tool.name,
                    tool.title,
                    tool.description,
                    examples,
                );
                generated_for_host(tool, source.descriptor_pool(), dialect, host, budget)
            }
            Kind::Native(tool) => tool.parameters_within(dialect, host, self.max_bytes),
        }
    }

    /// The JSON Schema of this tool's result when the call succeeds: the
    /// protojson the executor writes for the method's response (or
    /// `{"messages": [...]}` for a server stream), aliases described by
    /// their prefix; see [`proto_ai_tools_schema::output`] for the rules. An MCP
    /// server declares it as the tool's `outputSchema` where
    /// `McpServer::with_output_schemas` (feature `mcp`) asks for it.
    ///
    /// `None` for a native tool (its result is text), and for a unary
    /// method whose response protojson writes as something other than an
    /// object (a `google.protobuf.Timestamp`).
    ///
    /// # Examples
    ///
    /// ```
    /// mod gentools {
    ///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
    /// }
    /// use proto_ai_tools::transport::InProcessTransport;
    ///
    /// let executor = gentools::Executor::new(InProcessTransport::new());
    /// let toolkit = proto_ai_tools::Toolkit::builder().generated(executor).build().unwrap();
    ///
    /// let schema = toolkit.get("links_create").unwrap().output_schema().unwrap();
    /// let link = &schema["properties"]["link"]["properties"];
    /// assert_eq!(link["id"]["type"], "string");
    /// assert!(link["id"]["description"].as_str().unwrap().contains("`link-1`"));
    /// // Proto names, as the arguments have them (`ToolkitBuilder::json_names`).
    /// assert!(link["page_theme_id"]["description"].as_str().unwrap().contains("`theme-1`"));
    /// ```
    pub fn output_schema(&self) -> Option<Value> {
        self.output_schema_for_host(HostProfile::Exact)
    }

    /// [`output_schema`](Self::output_schema) for hosts of profile `host`:
    /// for a host that refuses `$ref` (the default MCP profile,
    /// [`HostProfile::JavaScript`]) every message type is spelled out and a
    /// recursive one cut ([`proto_ai_tools_schema::output::result_schema_for`]).
    ///
    /// # Examples
    ///
    /// ```
    /// mod gentools {
    ///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
    /// }
    /// use proto_ai_tools::schema::HostProfile;
    /// use proto_ai_tools::transport::InProcessTransport;
    ///
    /// let executor = gentools::Executor::new(InProcessTransport::new());
    /// let toolkit = proto_ai_tools::Toolkit::builder().generated(executor).build().unwrap();
    /// let list = toolkit.get("links_list").unwrap();
    /// let schema = list.output_schema_for_host(HostProfile::JavaScript).unwrap();
    /// assert!(!schema.to_string().contains("$ref"));
    /// ```
    pub fn output_schema_for_host(&self, host: HostProfile) -> Option<Value> {
        match &self.kind {
            Kind::Generated { tool, source } => Option::clone(&generated_output_schema(
                tool,
                source.descriptor_pool(),
                host,
                self.json_names,
            )),
            Kind::Native(_) => None,
        }
    }

    /// This tool in OpenAI Chat Completions' shape.
    ///
    /// # Examples
    ///
    /// See [`Toolkit`](super::Toolkit).
    pub fn to_openai(&self) -> Value {
        json!({
            "type": "function",
            "function": {
                "name": self.name(),
                "description": self.description(),
                "parameters": self.parameters(Dialect::OpenAi),
                "strict": self.is_strict(),
            }
        })
    }

    /// This tool in OpenAI Responses' shape.
    ///
    /// # Examples
    ///
    /// See [`Toolkit::to_openai_responses`](super::Toolkit::to_openai_responses).
    pub fn to_openai_responses(&self) -> Value {
        json!({
            "type": "function",
            "name": self.name(),
            "description": self.description(),
            "parameters": self.parameters(Dialect::OpenAi),
            "strict": self.is_strict(),
        })
    }

    /// This tool as one Gemini function declaration with a JSON Schema.
    ///
    /// # Examples
    ///
    /// See [`Toolkit::to_gemini_json_schema`](super::Toolkit::to_gemini_json_schema).
    pub fn to_gemini_json_schema(&self) -> Value {
        json!({
            "name": self.name(),
            "description": self.description(),
            "parametersJsonSchema": self.parameters(Dialect::GeminiJsonSchema),
        })
    }

    /// This tool in Anthropic's shape, with its examples as
    /// `input_examples` when it has some.
    ///
    /// # Examples
    ///
    /// See [`Toolkit::to_anthropic`](super::Toolkit::to_anthropic).
    pub fn to_anthropic(&self) -> Value {
        let mut tool = json!({
            "name": self.name(),
            "description": self.description(),
            "input_schema": self.parameters(Dialect::Anthropic),
        });
        if self.is_strict() {
            tool["strict"] = Value::Bool(true);
        }
        if let Some(examples) = self.agent_tool().and_then(AgentTool::input_examples_value) {
            tool["input_examples"] = examples;
        }
        tool
    }

    /// This tool as one Gemini function declaration.
    ///
    /// # Examples
    ///
    /// See [`Toolkit::to_gemini`](super::Toolkit::to_gemini).
    pub fn to_gemini(&self) -> Value {
        json!({
            "name": self.name(),
            "description": self.description(),
            "parameters": self.parameters(Dialect::Gemini),
        })
    }
}
