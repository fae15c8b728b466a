//! The two kinds of tool: [`AgentTool`], what `ai_tools!` (or a
//! [`ToolSet`](crate::tool_set::ToolSet) at run time) makes of an annotated
//! RPC (name, description, schemas, the RPC behind it), and [`NativeTool`],
//! a Rust function whose input is a [`ToolInput`](crate::ToolInput) type.

pub(crate) mod construct;
mod native;

pub use native::{IntoToolOutput, NativeTool, ToolContext, ToolError, ToolOutput};

use std::sync::{LazyLock, OnceLock};

use proto_ai_tools_schema::{Dialect, RenderedTool, ToolHints};

use crate::alias::FieldPrefix;
use prost_reflect::DescriptorPool;
use serde::Deserialize as _;
use serde_json::Value;

/// One tool, generated at compile time from an annotated RPC.
///
/// Every field is static data; the schemas ([`parameters`](Self::parameters),
/// [`renderings`](Self::renderings)) are minified JSON text, ready to send.
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
    /// The arguments' schema: canonical and per provider.
    pub(crate) schemas: Schemas,
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
    /// The tool's own deadline (`rpc_tool.timeout`, in the proto or an
    /// overlay), over the server's default: a call whose options set no
    /// deadline gets this one. `None` when the annotation sets none.
    pub timeout: Option<std::time::Duration>,
    /// Whether an MCP server lists the tool's `outputSchema`
    /// (`rpc_tool.output_schema`, in the proto or an overlay): `Some(true)`
    /// whatever the server's default, `Some(false)` never, `None` as the
    /// server says (`McpServer::with_output_schemas`).
    pub output_schema: Option<bool>,
    /// Whether a person must approve each call (`rpc_tool.consent`, in the
    /// proto or an overlay): `None` leaves it to the class the server or
    /// toolkit confirms ([`ConfirmClass`](crate::consent::ConfirmClass)).
    pub consent: Option<proto_ai_tools_schema::ConsentPolicy>,
}

impl AgentTool {
    /// The canonical JSON Schema of the arguments (minified JSON text).
    /// Rendered, with every tool of the same `ai_tools!`, the first time any
    /// of them is asked for a schema.
    ///
    /// # Examples
    ///
    /// See [`parameters_for`](Self::parameters_for).
    pub fn parameters(&self) -> &'static str {
        self.schemas.get().0
    }

    /// The arguments' schema rendered for each provider.
    ///
    /// # Examples
    ///
    /// See [`parameters_for`](Self::parameters_for).
    pub fn renderings(&self) -> Renderings {
        self.schemas.get().1
    }

    /// The parameters' schema as rendered for `dialect` (minified JSON text):
    /// [`parameters`](Self::parameters) for [`Dialect::JsonSchema`], else the
    /// matching field of [`renderings`](Self::renderings).
    ///
    /// # Examples
    ///
    /// ```
    /// mod gentools {
    ///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
    /// }
    /// use proto_ai_tools::schema::Dialect;
    ///
    /// let tool = &gentools::LINKS_CREATE;
    /// assert_eq!(tool.parameters_for(Dialect::JsonSchema), tool.parameters());
    /// assert_eq!(tool.parameters_for(Dialect::Gemini), tool.renderings().gemini);
    /// ```
    pub fn parameters_for(&self, dialect: Dialect) -> &'static str {
        let (parameters, renderings) = self.schemas.get();
        match dialect {
            Dialect::JsonSchema => parameters,
            Dialect::OpenAi => renderings.openai,
            Dialect::Anthropic => renderings.anthropic,
            Dialect::Gemini => renderings.gemini,
            Dialect::GeminiJsonSchema => renderings.gemini_json_schema,
        }
    }

    /// [`parameters_for`](Self::parameters_for) as a JSON value. The texts
    /// were written by serde_json (in the macro, or by a `ToolSet` at run
    /// time), so they parse; but a deeply nested request renders deeper than
    /// serde_json's default limit of 128 levels, which would leave the
    /// parameters `null`. Renderings are bounded by
    /// `schema::proto::MAX_NESTING_DEPTH` messages, a few JSON levels each,
    /// so parsing them without the limit stays well within a stack.
    #[doc(hidden)]
    pub fn parameters_value(&self, dialect: Dialect) -> Value {
        parse_unbounded(self.parameters_for(dialect))
    }

    /// The tool's examples (`rpc_tool.examples`, checked when the tool was
    /// built) as Anthropic's `input_examples`: a JSON array in the form of
    /// the Anthropic rendering, as minified JSON text; `None` when the
    /// tool has none. No other dialect documents a field for examples.
    ///
    /// # Examples
    ///
    /// ```
    /// mod gentools {
    ///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
    /// }
    /// let examples: serde_json::Value =
    ///     serde_json::from_str(gentools::LINKS_CREATE.input_examples().unwrap()).unwrap();
    /// assert_eq!(examples[0]["destination"], "https://example.com/spring-sale");
    /// assert_eq!(gentools::LINKS_LIST.input_examples(), None);
    /// ```
    pub fn input_examples(&self) -> Option<&'static str> {
        self.schemas.get().1.input_examples
    }

    /// [`input_examples`](Self::input_examples) as a JSON value.
    pub(crate) fn input_examples_value(&self) -> Option<Value> {
        self.input_examples().map(parse_unbounded)
    }
}

/// JSON text serde_json wrote (in the macro, or a `ToolSet` at run time),
/// parsed without serde_json's limit of 128 levels: a deeply nested
/// request renders deeper, and its schema would read as `null`.
/// Renderings are bounded by `schema::proto::MAX_NESTING_DEPTH` messages,
/// a few JSON levels each, so parsing them without the limit stays well
/// within a stack.
fn parse_unbounded(text: &str) -> Value {
    let mut reader = serde_json::Deserializer::from_str(text);
    reader.disable_recursion_limit();
    Value::deserialize(&mut reader).unwrap_or(Value::Null)
}

/// Where a tool's schemas come from.
///
/// `ai_tools!` checks every rendering at compile time but does not embed
/// them: five renderings of every tool made a large proto's expansion
/// megabytes of string literals. It embeds the descriptors (which it needs
/// anyway) and the schemas are rendered from them, by the same code, on
/// first use.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub enum Schemas {
    /// Rendered already (a tool set built at run time).
    Ready(&'static str, Renderings),
    /// The `index`th tool of an expansion, rendered on first use.
    Expanded(&'static ExpandedSchemas, usize),
}

impl Schemas {
    /// The canonical schema and the renderings.
    fn get(self) -> (&'static str, Renderings) {
        match self {
            Schemas::Ready(parameters, renderings) => (parameters, renderings),
            Schemas::Expanded(all, index) => {
                let tool = &all.rendered()[index];
                (
                    &tool.canonical,
                    Renderings {
                        openai: &tool.openai,
                        anthropic: &tool.anthropic,
                        gemini: &tool.gemini,
                        gemini_json_schema: &tool.gemini_json_schema,
                        input_examples: tool.input_examples.as_deref(),
                    },
                )
            }
        }
    }
}

impl std::fmt::Debug for Schemas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (parameters, renderings) = self.get();
        f.debug_struct("Schemas")
            .field("parameters", &parameters)
            .field("renderings", &renderings)
            .finish()
    }
}

/// Two tools' schemas are equal when their texts are.
impl PartialEq for Schemas {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for Schemas {}

/// The schemas of every tool of one `ai_tools!` expansion, rendered from
/// its descriptor pool on first use.
#[doc(hidden)]
pub struct ExpandedSchemas {
    pool: &'static LazyLock<DescriptorPool>,
    file: &'static str,
    tools: &'static [&'static str],
    rendered: OnceLock<Vec<RenderedTool>>,
}

impl ExpandedSchemas {
    /// The schemas of the tools named `tools` (in the expansion's order) of
    /// the proto `file` in `pool`.
    pub(crate) const fn new(
        pool: &'static LazyLock<DescriptorPool>,
        file: &'static str,
        tools: &'static [&'static str],
    ) -> Self {
        ExpandedSchemas {
            pool,
            file,
            tools,
            rendered: OnceLock::new(),
        }
    }

    /// Every tool's schemas, in the expansion's order. The macro read these
    /// very tools from these very descriptors and checked every rendering,
    /// so a tool missing here is a bug of ai-tools: panicking names it.
    #[allow(clippy::panic)]
    fn rendered(&'static self) -> &'static [RenderedTool] {
        self.rendered.get_or_init(|| {
            let specs = match proto_ai_tools_schema::tools_in_file(self.pool, self.file) {
                Ok(specs) => specs,
                Err(diagnostics) => panic!(
                    "ai-tools bug: the descriptors `ai_tools!` embedded for `{}` no longer give its tools ({}); please report it",
                    self.file,
                    diagnostics.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
                ),
            };
            self.tools
                .iter()
                .map(|name| match specs.iter().find(|spec| spec.name == *name) {
                    Some(spec) => spec.rendered(),
                    None => panic!(
                        "ai-tools bug: the tool `{name}` that `ai_tools!` expanded is not in the descriptors it embedded for `{}`; please report it",
                        self.file
                    ),
                })
                .collect()
        })
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
    /// Anthropic `input_examples` (a JSON array in the form of
    /// [`anthropic`](Self::anthropic)); `None` when the tool has no
    /// examples. See [`AgentTool::input_examples`].
    pub input_examples: Option<&'static str>,
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
