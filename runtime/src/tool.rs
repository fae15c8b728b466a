//! Static tool definitions, as `ai_tools!` expands them.

use ai_tools_schema::{Dialect, ToolHints};

/// One tool, generated at compile time from an annotated RPC.
///
/// Every field is static data: the JSON texts are minified and ready to send.
/// Only `ai_tools!` builds one (the struct is `#[non_exhaustive]`, so fields
/// can be added without breaking your code); read its fields freely.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct AgentTool {
    /// Tool name shown to the model (`rpc_tool.name`).
    pub name: &'static str,
    /// What the tool does, for the model (`rpc_tool.description`).
    pub description: &'static str,
    /// Whether providers are asked to enforce the schema exactly.
    pub strict: bool,
    /// The canonical JSON Schema of the arguments (minified JSON text).
    pub parameters: &'static str,
    /// The arguments' schema rendered for each provider.
    pub renderings: Renderings,
    /// The RPC that runs when a model calls this tool.
    pub method: MethodRef,
    /// Request fields whose aliases are resolved inbound, per message.
    pub request_aliases: &'static [FieldPrefix],
    /// Response fields whose UUIDs are registered and aliased outbound, per message.
    pub response_aliases: &'static [FieldPrefix],
    /// The prefix of the entity the tool returns: the `alias_prefix` of the
    /// `id` field of the top-level entity in the response, if any.
    pub output_prefix: Option<&'static str>,
    /// A human-readable name for hosts that show tools to people
    /// (`rpc_tool.title`).
    pub title: Option<&'static str>,
    /// What the tool does to the world (`idempotency_level`,
    /// `rpc_tool.destructive`), for hosts that decide whether to ask first;
    /// MCP serves them as the tool's annotations.
    pub hints: ToolHints,
}

impl AgentTool {
    /// The parameters' schema as rendered for `dialect` (minified JSON text):
    /// [`parameters`](Self::parameters) for [`Dialect::JsonSchema`], else the
    /// matching field of [`renderings`](Self::renderings).
    ///
    /// # Examples
    ///
    /// ```
    /// mod gentools {
    ///     ai_tools::ai_tools!("proto/links/v1/links.proto");
    /// }
    /// use ai_tools::schema::Dialect;
    ///
    /// let tool = &gentools::LINKS_CREATE;
    /// assert_eq!(tool.parameters_for(Dialect::JsonSchema), tool.parameters);
    /// assert_eq!(tool.parameters_for(Dialect::Gemini), tool.renderings.gemini);
    /// ```
    pub fn parameters_for(&self, dialect: Dialect) -> &'static str {
        match dialect {
            Dialect::JsonSchema => self.parameters,
            Dialect::OpenAi => self.renderings.openai,
            Dialect::Anthropic => self.renderings.anthropic,
            Dialect::Gemini => self.renderings.gemini,
            Dialect::GeminiJsonSchema => self.renderings.gemini_json_schema,
        }
    }
}

/// The parameters' schema of one tool rendered per provider dialect
/// (minified JSON text of the `parameters` / `input_schema` object).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Renderings {
    /// OpenAI Chat Completions and Responses `parameters` (strict rules when the tool is strict).
    pub openai: &'static str,
    /// Anthropic `input_schema`.
    pub anthropic: &'static str,
    /// Gemini `functionDeclarations[].parameters` (OpenAPI subset).
    pub gemini: &'static str,
    /// Gemini `functionDeclarations[].parametersJsonSchema` (JSON Schema).
    pub gemini_json_schema: &'static str,
}

/// The gRPC method behind a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct MethodRef {
    /// Fully qualified service name, e.g. `links.v1.LinksService`.
    pub service: &'static str,
    /// Method name, e.g. `CreateLink`.
    pub method: &'static str,
    /// Fully qualified request message name.
    pub request: &'static str,
    /// Fully qualified response message name.
    pub response: &'static str,
}

/// One field that carries an alias prefix, scoped to its message so that two
/// messages' `id` fields can carry different prefixes.
///
/// Build one with [`FieldPrefix::new`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FieldPrefix {
    /// Fully qualified message name, e.g. `links.v1.Link`.
    pub message: &'static str,
    /// The field's proto name, e.g. `page_theme_id`.
    pub field: &'static str,
    /// The alias prefix, e.g. `theme`.
    pub prefix: &'static str,
}

impl FieldPrefix {
    /// The field `field` (its proto name) of the message `message` (fully
    /// qualified) carries aliases with prefix `prefix`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ai_tools::FieldPrefix;
    /// const LINK_ID: FieldPrefix = FieldPrefix::new("links.v1.Link", "id", "link");
    /// assert_eq!((LINK_ID.message, LINK_ID.field, LINK_ID.prefix), ("links.v1.Link", "id", "link"));
    /// ```
    pub const fn new(message: &'static str, field: &'static str, prefix: &'static str) -> Self {
        FieldPrefix {
            message,
            field,
            prefix,
        }
    }
}
