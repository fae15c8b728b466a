//! One tool as read from a proto ([`ToolSpec`]): its parameters, hints and
//! consent, and its renderings in every dialect.

use std::fmt;

use crate::dialect::Dialect;
use crate::host::HostProfile;
use crate::{check, examples, ir, render};

/// One tool: an RPC annotated with `rpc_tool`, with its parameter schema and
/// the alias prefixes of its request and response.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// Tool name shown to the model.
    pub name: String,
    /// What the tool does, written for the model.
    pub description: String,
    /// Whether the tool asks providers for strict schema adherence.
    pub strict: bool,
    /// Full name of the service, e.g. `links.v1.LinksService`.
    pub service: String,
    /// Simple name of the method, e.g. `CreateLink`.
    pub method: String,
    /// Full name of the request message.
    pub request: String,
    /// Full name of the response message.
    pub response: String,
    /// Root object schema of the request message.
    pub parameters: ir::Schema,
    /// Every field with an `alias_prefix` in the messages reachable from the
    /// request (recursively), in proto order, without duplicates.
    pub request_aliases: Vec<FieldAlias>,
    /// Every field with an `alias_prefix` in the messages reachable from the
    /// response, in proto order, without duplicates.
    pub response_aliases: Vec<FieldAlias>,
    /// A human-readable name for hosts that show tools to people
    /// (`rpc_tool.title`).
    pub title: Option<String>,
    /// What the tool does to the world, for hosts that decide whether to ask
    /// before running it.
    pub hints: ToolHints,
    /// The prefix of the response's own `id` field; else the prefix of the `id`
    /// field of the message of the response's first message-typed field
    /// (singular or repeated) whose message has an aliased `id`.
    pub output_prefix: Option<String>,
    /// The tool's own deadline (`rpc_tool.timeout`), over the server's
    /// default; `None` when the annotation sets none.
    pub timeout: Option<std::time::Duration>,
    /// Example arguments (`rpc_tool.examples`), each one whole arguments
    /// object in the form the canonical schema states, checked when the
    /// tool was read ([`examples`]); rendered as Anthropic's
    /// `input_examples` ([`input_examples`](Self::input_examples)).
    pub examples: Vec<serde_json::Value>,
    /// Whether an MCP server lists the tool's `outputSchema`
    /// (`rpc_tool.output_schema`): `Some(true)` whatever the server's
    /// default, `Some(false)` never, `None` as the server says.
    pub output_schema: Option<bool>,
    /// Whether a person must approve each call (`rpc_tool.consent`):
    /// `None` leaves it to the server's class (`--confirm`).
    pub consent: Option<ConsentPolicy>,
}

impl ToolSpec {
    /// The tool's parameters rendered for `dialect` with the tool's
    /// strictness; see [`render::parameters`].
    pub fn render(&self, dialect: Dialect) -> serde_json::Value {
        self.render_for(dialect, HostProfile::Exact)
    }

    /// The tool's parameters rendered for `dialect` as a model reads them
    /// through a host of profile `host`, the whole definition within
    /// [`render::DEFAULT_MAX_TOOL_BYTES`]; see [`render::parameters_within`].
    pub fn render_for(&self, dialect: Dialect, host: HostProfile) -> serde_json::Value {
        self.render_within(dialect, host, render::DEFAULT_MAX_TOOL_BYTES)
    }

    /// [`render_for`](Self::render_for), the whole definition within
    /// `max_tool_bytes` ([`render::parameters_budget`]).
    pub fn render_within(
        &self,
        dialect: Dialect,
        host: HostProfile,
        max_tool_bytes: usize,
    ) -> serde_json::Value {
        // The examples as written: their Anthropic shape depends on the
        // rendering, and differs from it by a few bytes at most.
        let examples = if self.examples.is_empty() {
            0
        } else {
            render::minified_len(&serde_json::Value::from(self.examples.clone()))
        };
        let budget = render::parameters_budget(
            max_tool_bytes,
            &self.name,
            self.title.as_deref(),
            &self.description,
            examples,
        );
        render::parameters_within(&self.parameters, dialect, self.strict, host, budget)
    }

    /// The parameters in every dialect as minified JSON text, each checked
    /// by its provider's checker, and every violation found (a rendering a
    /// provider would refuse is not to be served: the macro makes it a
    /// compile error, a tool set built at run time an error).
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools_schema::{ToolHints, ToolSpec, ir::{Object, Schema}};
    /// let spec = ToolSpec {
    ///     name: "ping".into(),
    ///     description: "Ping.".into(),
    ///     strict: true,
    ///     service: "p.S".into(),
    ///     method: "Ping".into(),
    ///     request: "p.Req".into(),
    ///     response: "p.Resp".into(),
    ///     parameters: Schema::object(Object::new().property("text", Schema::string(), true)),
    ///     request_aliases: vec![],
    ///     response_aliases: vec![],
    ///     title: None,
    ///     hints: ToolHints::default(),
    ///     output_prefix: None,
    ///     timeout: None,
    ///     examples: vec![],
    ///     output_schema: None,
    ///     consent: None,
    /// };
    /// let (rendered, violations) = spec.render_checked();
    /// assert!(violations.is_empty(), "{violations:?}");
    /// assert!(rendered.openai.contains("\"additionalProperties\":false"));
    /// ```
    pub fn render_checked(&self) -> (RenderedTool, Vec<String>) {
        let mut violations = Vec::new();
        let rendered = self.render_each(|dialect, schema| {
            self.check_rendering(dialect, schema, &mut violations);
        });
        (rendered, violations)
    }

    /// The violations [`render_checked`](Self::render_checked) finds, without
    /// writing the renderings out as text: for a caller that only checks
    /// (`ai_tools!` checks every rendering at compile time and renders them
    /// again at run time from the descriptors it embeds).
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools_schema::{ToolHints, ToolSpec, ir::{Object, Schema}};
    /// let spec = ToolSpec {
    ///     name: "ping".into(),
    ///     description: "Ping.".into(),
    ///     strict: true,
    ///     service: "p.S".into(),
    ///     method: "Ping".into(),
    ///     request: "p.Req".into(),
    ///     response: "p.Resp".into(),
    ///     parameters: Schema::object(Object::new().property("text", Schema::string(), true)),
    ///     request_aliases: vec![],
    ///     response_aliases: vec![],
    ///     title: None,
    ///     hints: ToolHints::default(),
    ///     output_prefix: None,
    ///     timeout: None,
    ///     examples: vec![],
    ///     output_schema: None,
    ///     consent: None,
    /// };
    /// assert_eq!(spec.violations(), spec.render_checked().1);
    /// ```
    pub fn violations(&self) -> Vec<String> {
        let mut violations = Vec::new();
        for dialect in Dialect::ALL {
            self.check_rendering(dialect, &self.render(dialect), &mut violations);
        }
        violations
    }

    fn check_rendering(
        &self,
        dialect: Dialect,
        schema: &serde_json::Value,
        violations: &mut Vec<String>,
    ) {
        for violation in check::check(dialect, self.strict, schema) {
            violations.push(format!(
                "tool `{}` cannot be rendered for {dialect}: {violation}",
                self.name
            ));
        }
        if dialect == Dialect::Anthropic {
            self.check_examples(schema, violations);
        }
    }

    /// The examples' own problems (checked when read from a proto; a spec
    /// may be built by hand), and Anthropic's rules for them in the
    /// rendering `input_schema`: each shaped example admitted, and read back
    /// by the executor as the example it was shaped from.
    fn check_examples(&self, input_schema: &serde_json::Value, violations: &mut Vec<String>) {
        let Some(input_examples) = self.anthropic_examples(input_schema) else {
            return;
        };
        let canonical = render::parameters(&self.parameters, Dialect::JsonSchema, false);
        for (i, example) in self.examples.iter().enumerate() {
            let problems = examples::problems(&self.parameters, &canonical, example);
            if !problems.is_empty() {
                violations.push(format!(
                    "tool `{}`: example {} does not fit the tool: {}",
                    self.name,
                    i + 1,
                    problems.join("; ")
                ));
            }
        }
        let tool = serde_json::json!({
            "input_schema": input_schema,
            "input_examples": input_examples,
        });
        for violation in check::check_input_examples(&tool) {
            violations.push(format!(
                "tool `{}` cannot be rendered for {}: {violation}",
                self.name,
                Dialect::Anthropic
            ));
        }
        let shaped = input_examples.as_array().map_or(&[][..], Vec::as_slice);
        for (i, (example, shaped)) in self.examples.iter().zip(shaped).enumerate() {
            if !examples::reads_back(&self.parameters, example, shaped) {
                violations.push(format!(
                    "tool `{}` cannot be rendered for {}: example {} as rendered ({shaped}) does not read back as the example",
                    self.name,
                    Dialect::Anthropic,
                    i + 1
                ));
            }
        }
    }

    /// The examples in the form of the Anthropic rendering of the tool's
    /// parameters, as its `input_examples` (an array); `None` when the tool
    /// has none. The other dialects document no examples field, and a host
    /// profile's renderings (MCP) carry none (see [`examples`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools_schema::{ToolHints, ToolSpec, ir::{Object, Schema}};
    /// use serde_json::json;
    /// let spec = ToolSpec {
    ///     name: "label".into(),
    ///     description: "Label a thing.".into(),
    ///     strict: true,
    ///     service: "p.S".into(),
    ///     method: "Label".into(),
    ///     request: "p.Req".into(),
    ///     response: "p.Resp".into(),
    ///     parameters: Schema::object(
    ///         Object::new().property("labels", Schema::map(Schema::string(), Schema::string()), true),
    ///     ),
    ///     request_aliases: vec![],
    ///     response_aliases: vec![],
    ///     title: None,
    ///     hints: ToolHints::default(),
    ///     output_prefix: None,
    ///     timeout: None,
    ///     examples: vec![json!({"labels": {"team": "web"}})],
    ///     output_schema: None,
    ///     consent: None,
    /// };
    /// // Anthropic strict gives a map as `{key, value}` entries: so does the example.
    /// assert_eq!(
    ///     spec.input_examples(),
    ///     Some(json!([{"labels": [{"key": "team", "value": "web"}]}]))
    /// );
    /// assert!(spec.violations().is_empty());
    /// ```
    pub fn input_examples(&self) -> Option<serde_json::Value> {
        self.anthropic_examples(&self.render(Dialect::Anthropic))
    }

    /// The examples shaped for `input_schema`, the Anthropic rendering.
    fn anthropic_examples(&self, input_schema: &serde_json::Value) -> Option<serde_json::Value> {
        (!self.examples.is_empty()).then(|| {
            serde_json::Value::Array(
                self.examples
                    .iter()
                    .map(|example| examples::shape(input_schema, example))
                    .collect(),
            )
        })
    }

    /// The parameters in every dialect as minified JSON text, unchecked:
    /// for a tool whose renderings were checked before (`ai_tools!` checks
    /// them at compile time and renders them again at run time, from the
    /// descriptors it embeds, rather than embedding every rendering).
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools_schema::{ToolHints, ToolSpec, ir::{Object, Schema}};
    /// let spec = ToolSpec {
    ///     name: "ping".into(),
    ///     description: "Ping.".into(),
    ///     strict: false,
    ///     service: "p.S".into(),
    ///     method: "Ping".into(),
    ///     request: "p.Req".into(),
    ///     response: "p.Resp".into(),
    ///     parameters: Schema::object(Object::new().property("text", Schema::string(), true)),
    ///     request_aliases: vec![],
    ///     response_aliases: vec![],
    ///     title: None,
    ///     hints: ToolHints::default(),
    ///     output_prefix: None,
    ///     timeout: None,
    ///     examples: vec![],
    ///     output_schema: None,
    ///     consent: None,
    /// };
    /// assert_eq!(spec.rendered(), spec.render_checked().0);
    /// ```
    pub fn rendered(&self) -> RenderedTool {
        self.render_each(|_, _| {})
    }

    /// Renders every dialect, showing each rendering to `inspect` first.
    fn render_each(&self, mut inspect: impl FnMut(Dialect, &serde_json::Value)) -> RenderedTool {
        let mut render = |dialect: Dialect| {
            let schema = self.render(dialect);
            inspect(dialect, &schema);
            schema
        };
        let canonical = render(Dialect::JsonSchema).to_string();
        let openai = render(Dialect::OpenAi).to_string();
        let anthropic = render(Dialect::Anthropic);
        let input_examples = self
            .anthropic_examples(&anthropic)
            .map(|examples| examples.to_string());
        RenderedTool {
            canonical,
            openai,
            anthropic: anthropic.to_string(),
            gemini: render(Dialect::Gemini).to_string(),
            gemini_json_schema: render(Dialect::GeminiJsonSchema).to_string(),
            input_examples,
        }
    }
}

/// A tool's parameters in every dialect, as minified JSON text
/// ([`ToolSpec::render_checked`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedTool {
    /// Plain JSON Schema (MCP `inputSchema`, the canonical form).
    pub canonical: String,
    /// OpenAI (strict when the tool is).
    pub openai: String,
    /// Anthropic (strict when the tool is).
    pub anthropic: String,
    /// Gemini `parameters`.
    pub gemini: String,
    /// Gemini `parametersJsonSchema`.
    pub gemini_json_schema: String,
    /// Anthropic `input_examples`: the tool's examples in the form of
    /// [`anthropic`](Self::anthropic), a JSON array; `None` when the tool
    /// has none ([`ToolSpec::input_examples`]).
    pub input_examples: Option<String>,
}

/// What a tool does to the world, as MCP's tool annotations say it.
///
/// From the proto: `option idempotency_level = NO_SIDE_EFFECTS` makes a
/// method read-only (and idempotent), `IDEMPOTENT` idempotent;
/// `rpc_tool.destructive` says whether it may destroy or overwrite data.
/// Where a method sets neither, its `google.api.http` binding speaks for
/// it ([`HTTP_RULE_EXTENSION`]): `get` makes it read-only (and idempotent),
/// `delete` destructive. What the proto or an overlay sets explicitly
/// always wins: an `idempotency_level` (any value) over `get` and
/// `delete`, `rpc_tool.destructive` (or the overlay's `destructive`) over
/// both.
///
/// [`HTTP_RULE_EXTENSION`]: crate::HTTP_RULE_EXTENSION
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ToolHints {
    /// The tool changes nothing (MCP `readOnlyHint`).
    pub read_only: bool,
    /// Calling it again with the same arguments has no further effect (MCP
    /// `idempotentHint`).
    pub idempotent: bool,
    /// It may destroy or overwrite data (MCP `destructiveHint`); `None` when
    /// the proto does not say.
    pub destructive: Option<bool>,
}

/// Whether a person must approve a tool's calls before they run
/// (`rpc_tool.consent`, or an overlay's `consent`): the tool's own word,
/// over the server's class of confirmed tools (`--confirm`).
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::ConsentPolicy;
/// assert_eq!("confirm".parse::<ConsentPolicy>(), Ok(ConsentPolicy::Confirm));
/// assert_eq!(ConsentPolicy::Block.as_str(), "block");
/// assert!("maybe".parse::<ConsentPolicy>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConsentPolicy {
    /// Run without asking (`ALLOW`).
    Allow,
    /// Ask a person first (`CONFIRM`): through the MCP host, or the
    /// library's consent hook; where no one can be asked, the operator's
    /// choice decides (refuse, unless told to allow).
    Confirm,
    /// Never run (`BLOCK`): each call is refused, the service not called.
    Block,
}

impl ConsentPolicy {
    /// `allow`, `confirm` or `block`: the overlay's words.
    pub const fn as_str(self) -> &'static str {
        match self {
            ConsentPolicy::Allow => "allow",
            ConsentPolicy::Confirm => "confirm",
            ConsentPolicy::Block => "block",
        }
    }

    /// The value of `rpc_tool.consent` (`ALLOW` = 1, `CONFIRM` = 2,
    /// `BLOCK` = 3); `None` for unset (0) and numbers it does not know.
    pub const fn from_number(number: i32) -> Option<Self> {
        match number {
            1 => Some(ConsentPolicy::Allow),
            2 => Some(ConsentPolicy::Confirm),
            3 => Some(ConsentPolicy::Block),
            _ => None,
        }
    }

    /// The number of the value in `rpc_tool.consent`.
    pub const fn number(self) -> i32 {
        match self {
            ConsentPolicy::Allow => 1,
            ConsentPolicy::Confirm => 2,
            ConsentPolicy::Block => 3,
        }
    }
}

impl std::str::FromStr for ConsentPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "allow" => Ok(ConsentPolicy::Allow),
            "confirm" => Ok(ConsentPolicy::Confirm),
            "block" => Ok(ConsentPolicy::Block),
            _ => Err(format!(
                "unknown consent `{s}`: use `allow`, `confirm` or `block`"
            )),
        }
    }
}

impl fmt::Display for ConsentPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A field that carries `(ai.tools.v1.tool_field).alias_prefix`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldAlias {
    /// Full name of the message that declares the field.
    pub message: String,
    /// Proto name of the field.
    pub field: String,
    /// The alias prefix, e.g. `link` for aliases `link-1`, `link-2`, ...
    pub prefix: String,
}
