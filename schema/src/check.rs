//! Checkers: does a JSON Schema value obey a provider's documented rules?
//!
//! [`check`] works on any [`serde_json::Value`], not only on this crate's
//! renderings, and reports every rule broken, each with the JSON pointer of the
//! node (e.g. `/properties/a/items`).
//!
//! What is checked, per dialect (see [`crate::render`] for the sources):
//!
//! - every dialect: the root is `type: "object"` and not a union
//!   (`anyOf`/`oneOf`/`allOf`); every node has a `type`, except union and
//!   `$ref` nodes; a `$ref` points at a definition that exists;
//! - OpenAI strict (and canonical strict): only the Structured Outputs
//!   keywords and formats; `additionalProperties: false` on every object;
//!   every property listed in `required`; no keyword beside `$ref`; at most 10 levels of object nesting,
//!   5000 properties, 1000 enum values, 120,000 characters of property names,
//!   definition names, enum and const values, and 15,000 characters for an
//!   enum of more than 250 values;
//! - Anthropic strict: no numeric or length bounds, accepted formats only,
//!   `additionalProperties: false` on every object, no recursive `$ref`;
//! - Gemini (`parameters`): only fields of Gemini's `Schema`; no type arrays,
//!   no `additionalProperties`, no `$ref`/`$defs`, string enums only, the
//!   `date-time` and `enum` formats only.
//!
//! Per-request limits that span several tools (Anthropic's 20 strict tools,
//! 24 optional and 16 union-typed parameters; Gemini's 128 declarations;
//! unique, well-formed tool names) are not a property of one schema: check
//! the whole tool list of a request with [`check_request`].
//! A request that defers its tools to the provider's tool search (OpenAI's
//! namespaces and `tool_search`, Anthropic's tool search tool) has rules of
//! its own: see [`deferred`](crate::deferred).
//!
//! Values are checked too: [`check_arguments`] holds a tool call's
//! arguments (or an example of them) to the schema the tool was given, and
//! [`check_input_examples`] an Anthropic tool's `input_examples` to the
//! rules Anthropic documents for them.
//!
//! # Examples
//!
//! ```
//! use proto_ai_tools_schema::check::{check, Rule};
//! use proto_ai_tools_schema::Dialect;
//! use serde_json::json;
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": { "a": { "type": "string" } }
//! });
//! let violations = check(Dialect::OpenAi, true, &schema);
//! let rules: Vec<Rule> = violations.iter().map(|v| v.rule).collect();
//! assert_eq!(rules, [Rule::OpenObject, Rule::NotRequired]);
//! assert_eq!(violations[1].path, "/properties/a");
//! assert!(check(Dialect::Anthropic, false, &schema).is_empty());
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

use serde_json::{Map, Value};

use crate::dialect::Dialect;
use crate::names::push_pointer_token;

mod arguments;

use crate::nested::{Member, each_nested, holds_definitions};
use crate::render::Profile;
pub(crate) use arguments::admitted;
pub use arguments::{check_arguments, check_input_examples};

/// OpenAI: total object properties in one schema.
pub const OPENAI_MAX_PROPERTIES: usize = 5000;
/// OpenAI: total enum values in one schema.
pub const OPENAI_MAX_ENUM_VALUES: usize = 1000;
/// OpenAI: total characters of property names, definition names, enum values
/// and const values.
pub const OPENAI_MAX_CHARS: usize = 120_000;
/// OpenAI: an enum of more than this many values ...
pub const OPENAI_LONG_ENUM: usize = 250;
/// ... may total at most this many characters.
pub const OPENAI_LONG_ENUM_CHARS: usize = 15_000;

/// A rule a schema broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    /// The root is not `type: "object"`.
    RootNotObject,
    /// The root is a union (`anyOf`, `oneOf`, `allOf`).
    RootUnion,
    /// A node has no `type` (and is not a union or `$ref`), or is not an object.
    MissingType,
    /// A keyword the dialect does not accept.
    UnsupportedKeyword,
    /// A string `format` the dialect does not accept.
    UnsupportedFormat,
    /// An object that allows extra properties where the dialect forbids it
    /// (strict: `additionalProperties` must be `false`).
    OpenObject,
    /// `additionalProperties` in a dialect that does not accept the keyword.
    AdditionalProperties,
    /// A property missing from `required` where every property must be listed.
    NotRequired,
    /// `type` is an array in a dialect that accepts only one type.
    TypeArray,
    /// `$ref` or `$defs` in a dialect without references.
    RefNotAllowed,
    /// A `$ref` that is part of a cycle, in a dialect without recursion.
    RecursiveRef,
    /// A `$ref` to a definition that does not exist.
    DanglingRef,
    /// A `$ref` node with other keywords, in a dialect that rejects them.
    RefSiblings,
    /// A non-string enum value in a dialect with string enums only.
    NonStringEnum,
    /// Objects nested deeper than the dialect's limit.
    TooDeep,
    /// More properties in total than the dialect's limit.
    TooManyProperties,
    /// More enum values in total than the dialect's limit.
    TooManyEnumValues,
    /// A large enum whose values are too long in total.
    EnumTooLong,
    /// More characters of names and values than the dialect's limit.
    TooManyChars,
    /// A tool name the dialect does not accept ([`check_request`]).
    ToolName,
    /// Two tools of one request share a name ([`check_request`]).
    DuplicateToolName,
    /// More tools in one request than the dialect accepts ([`check_request`];
    /// a tool search catalog: [`deferred`](crate::deferred)).
    TooManyTools,
    /// More strict tools in one request than the dialect accepts
    /// ([`check_request`]).
    TooManyStrictTools,
    /// More optional parameters across the strict tools of one request than
    /// the dialect accepts ([`check_request`]).
    TooManyOptionalParameters,
    /// More union-typed parameters (`anyOf`, or a `type` array such as
    /// `["string", "null"]`) across the strict tools of one request than the
    /// dialect accepts ([`check_request`]).
    TooManyUnionParameters,
    /// A deferred tool (`"defer_loading": true`) in a request without the
    /// provider's tool search tool, which is what loads it
    /// ([`deferred`](crate::deferred)).
    NoToolSearch,
    /// The tool search tool is itself deferred ([`deferred`](crate::deferred)).
    DeferredToolSearch,
    /// Every tool of a request is deferred ([`deferred`](crate::deferred)).
    AllToolsDeferred,
    /// A tool search tool whose `type` and `name` are not a documented pair
    /// ([`deferred`](crate::deferred)).
    ToolSearchShape,
    /// An OpenAI namespace without a name ([`deferred`](crate::deferred)).
    NamespaceName,
    /// An OpenAI namespace without a description
    /// ([`deferred`](crate::deferred)).
    NamespaceDescription,
    /// An OpenAI namespace whose `tools` is not a non-empty list of function
    /// and custom tools ([`deferred`](crate::deferred)).
    NamespaceMember,
    /// `defer_loading` on an OpenAI namespace object, where it belongs on
    /// the functions inside ([`deferred`](crate::deferred)).
    DeferredNamespace,
    /// A tool field the provider does not accept beside tool search
    /// (Anthropic: `input_examples`; [`deferred`](crate::deferred)).
    NotWithToolSearch,
    /// A value its schema does not admit ([`check_arguments`]; the path is
    /// the value's, in the arguments).
    NotAdmitted,
    /// An Anthropic `input_examples` that is not an array of objects, or an
    /// example its tool's `input_schema` does not admit
    /// ([`check_input_examples`]).
    InputExample,
}

/// One broken rule, at one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer of the node, e.g. `/properties/a/items`; empty for the
    /// root.
    pub path: String,
    /// The rule.
    pub rule: Rule,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        write!(f, "{path}: {}", self.message)
    }
}

/// Checks `schema` against the rules of `dialect` (with `strict` where the
/// dialect has a strict mode) and returns every violation, in document order
/// (limits last).
pub fn check(dialect: Dialect, strict: bool, schema: &Value) -> Vec<Violation> {
    let mut c = Checker {
        p: Profile::of(dialect, strict),
        out: Vec::new(),
        properties: 0,
        enum_values: 0,
        chars: 0,
        def: None,
        refs: Vec::new(),
        def_refs: BTreeMap::new(),
        def_names: BTreeSet::new(),
    };
    c.root(schema);
    c.out
}

struct Checker {
    p: Profile,
    out: Vec<Violation>,
    properties: usize,
    enum_values: usize,
    chars: usize,
    /// The definition being walked.
    def: Option<String>,
    /// Every `$ref`: (path, target definition or `None` for the root `#`).
    refs: Vec<(String, Option<String>)>,
    /// Definition (or `""` for the root) -> definitions it refers to.
    def_refs: BTreeMap<String, BTreeSet<String>>,
    /// Every definition name met.
    def_names: BTreeSet<String>,
}

fn unescape(key: &str) -> String {
    key.replace("~1", "/").replace("~0", "~")
}

/// The keywords of one node that the checker reads, found in one pass over
/// the node (a lookup each would hash every name again, node after node).
#[derive(Default)]
struct Keys<'v> {
    ty: Option<&'v Value>,
    any_of: Option<&'v Value>,
    one_of: Option<&'v Value>,
    all_of: Option<&'v Value>,
    reference: Option<&'v Value>,
    format: Option<&'v Value>,
    enumeration: Option<&'v Value>,
    constant: Option<&'v Value>,
    properties: Option<&'v Value>,
    required: Option<&'v Value>,
    additional_properties: Option<&'v Value>,
}

impl<'v> Keys<'v> {
    fn of(node: &'v Map<String, Value>) -> Self {
        let mut keys = Keys::default();
        for (key, value) in node {
            let slot = match key.as_str() {
                "type" => &mut keys.ty,
                "anyOf" => &mut keys.any_of,
                "oneOf" => &mut keys.one_of,
                "allOf" => &mut keys.all_of,
                "$ref" => &mut keys.reference,
                "format" => &mut keys.format,
                "enum" => &mut keys.enumeration,
                "const" => &mut keys.constant,
                "properties" => &mut keys.properties,
                "required" => &mut keys.required,
                "additionalProperties" => &mut keys.additional_properties,
                _ => continue,
            };
            *slot = Some(value);
        }
        keys
    }
}

impl Checker {
    fn push(&mut self, path: &str, rule: Rule, message: String) {
        self.out.push(Violation {
            path: path.to_owned(),
            rule,
            message,
        });
    }

    fn root(&mut self, schema: &Value) {
        match schema.as_object() {
            Some(root) => {
                if root.get("type").and_then(Value::as_str) != Some("object") {
                    self.push(
                        "",
                        Rule::RootNotObject,
                        "the root schema is not `\"type\": \"object\"`; tool parameters must be an object, so wrap the value in a property".into(),
                    );
                }
                for key in ["anyOf", "oneOf", "allOf"] {
                    if root.contains_key(key) {
                        self.push(
                            "",
                            Rule::RootUnion,
                            format!("the root schema uses `{key}`; providers reject a union at the root, so make the root a plain object whose members are optional properties"),
                        );
                    }
                }
            }
            None => self.push(
                "",
                Rule::RootNotObject,
                "the root schema is not a JSON object; tool parameters must be `{\"type\": \"object\", ...}`".into(),
            ),
        }
        self.node(schema, &mut String::new(), 0);
        self.finish();
    }

    /// Checks the node `v` at `path` (a JSON pointer, extended in place for
    /// the children and restored before returning: a path is made into a
    /// string of its own only for a violation or a `$ref`).
    fn node(&mut self, v: &Value, path: &mut String, depth: usize) {
        let Some(node) = v.as_object() else {
            self.push(
                path,
                Rule::MissingType,
                format!("schema node is `{v}`, not an object with a `type`; write an explicit schema such as `{{\"type\": \"string\"}}`"),
            );
            return;
        };
        let keys = Keys::of(node);
        let (typed, typed_object) = match keys.ty {
            Some(Value::String(t)) => (true, t == "object"),
            Some(Value::Array(ts)) => {
                if !self.p.type_arrays {
                    self.push(
                        path,
                        Rule::TypeArray,
                        "`type` is an array, which this dialect does not accept; use one type (and `nullable: true` for null)".into(),
                    );
                }
                let mut types = ts.iter().filter_map(Value::as_str);
                let typed = types.clone().next().is_some();
                (typed, types.any(|t| t == "object"))
            }
            _ => (false, false),
        };
        let union = keys.any_of.is_some() || keys.one_of.is_some() || keys.all_of.is_some();
        if !typed && !union && keys.reference.is_none() {
            self.push(
                path,
                Rule::MissingType,
                "schema node has no `type`; some providers reject typeless nodes, so add one (e.g. `\"type\": \"string\"`)".into(),
            );
        }
        self.keywords(node, path);
        self.format(&keys, path);
        self.enums(&keys, path);
        self.reference(node, &keys, path);

        let is_object = typed_object || keys.properties.is_some();
        let depth = if is_object { depth + 1 } else { depth };
        if is_object {
            if let Some(max) = self.p.max_depth
                && depth == max + 1
            {
                self.push(
                    path,
                    Rule::TooDeep,
                    format!("objects are nested {depth} levels deep here; the limit is {max}, so flatten the structure or pass the inner object as a JSON-encoded string"),
                );
            }
            self.object(&keys, path);
        }
        self.children(node, path, depth);
    }

    fn keywords(&mut self, node: &Map<String, Value>, path: &str) {
        for key in node.keys() {
            let key = key.as_str();
            if key == "additionalProperties" && !self.p.closed_keyword {
                self.push(
                    path,
                    Rule::AdditionalProperties,
                    "`additionalProperties` is not accepted by this dialect; remove it (and turn maps into arrays of `{key, value}` entries)".into(),
                );
                continue;
            }
            if matches!(key, "$ref" | "$defs" | "definitions") && !self.p.refs {
                self.push(
                    path,
                    Rule::RefNotAllowed,
                    format!("`{key}` is not accepted by this dialect; inline the definition (cutting recursion with a JSON-encoded string)"),
                );
                continue;
            }
            if let Some(allowed) = self.p.keywords
                && !allowed.contains(&key)
            {
                self.push(
                    path,
                    Rule::UnsupportedKeyword,
                    format!("keyword `{key}` is not supported by this dialect; remove it (say it in the `description` if the model needs it)"),
                );
            }
        }
    }

    fn format(&mut self, keys: &Keys<'_>, path: &str) {
        let (Some(allowed), Some(format)) = (self.p.formats, keys.format) else {
            return;
        };
        let Some(format) = format.as_str() else {
            return;
        };
        let gemini_enum = self.p.string_enums && format == "enum";
        if !allowed.contains(&format) && !gemini_enum {
            self.push(
                path,
                Rule::UnsupportedFormat,
                format!(
                    "format `{format}` is not supported by this dialect (supported: {}); remove it and describe the format in the `description`",
                    allowed
                        .iter()
                        .map(|f| format!("`{f}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
    }

    fn enums(&mut self, keys: &Keys<'_>, path: &str) {
        if let Some(Value::Array(values)) = keys.enumeration {
            self.enum_values += values.len();
            let mut chars = 0;
            for value in values {
                match value {
                    Value::String(s) => chars += s.chars().count(),
                    Value::Null if !self.p.string_enums => {}
                    other if self.p.string_enums => {
                        self.push(
                            path,
                            Rule::NonStringEnum,
                            format!("enum value `{other}` is not a string; this dialect accepts string enums only, so use the value's name"),
                        );
                    }
                    _ => {}
                }
            }
            self.chars += chars;
            if self.p.openai_limits
                && values.len() > OPENAI_LONG_ENUM
                && chars > OPENAI_LONG_ENUM_CHARS
            {
                self.push(
                    path,
                    Rule::EnumTooLong,
                    format!("this enum has {} values totalling {chars} characters; above {OPENAI_LONG_ENUM} values the limit is {OPENAI_LONG_ENUM_CHARS} characters, so shorten or split it", values.len()),
                );
            }
        }
        if let Some(Value::String(s)) = keys.constant {
            self.chars += s.chars().count();
        }
    }

    fn reference(&mut self, node: &Map<String, Value>, keys: &Keys<'_>, path: &str) {
        let Some(target) = keys.reference.and_then(Value::as_str) else {
            return;
        };
        if !self.p.ref_siblings && self.p.refs && node.len() > 1 {
            let others: Vec<String> = node
                .keys()
                .filter(|k| *k != "$ref")
                .map(|k| format!("`{k}`"))
                .collect();
            self.push(
                path,
                Rule::RefSiblings,
                format!("`$ref` sits beside {}, which this dialect rejects; move them to an `anyOf` wrapping the `$ref`", others.join(", ")),
            );
        }
        let target = if target == "#" {
            None
        } else if let Some((_, name)) = definition_of(target) {
            Some(name)
        } else {
            // Remote or deep pointers: not ours to resolve.
            return;
        };
        let from = self.def.clone().unwrap_or_default();
        self.def_refs
            .entry(from)
            .or_default()
            .insert(target.clone().unwrap_or_default());
        self.refs.push((path.to_owned(), target));
    }

    fn object(&mut self, keys: &Keys<'_>, path: &str) {
        if !self.p.open_objects
            && self.p.closed_keyword
            && keys.additional_properties != Some(&Value::Bool(false))
        {
            self.push(
                path,
                Rule::OpenObject,
                "object does not say `\"additionalProperties\": false`; this dialect forbids open objects, so add it (pass free-form data as a JSON-encoded string)".into(),
            );
        }
        let Some(properties) = keys.properties.and_then(Value::as_object) else {
            return;
        };
        self.properties += properties.len();
        self.chars += properties.keys().map(|k| k.chars().count()).sum::<usize>();
        if self.p.all_required {
            let required: BTreeSet<&str> = keys
                .required
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for name in properties.keys() {
                if !required.contains(name.as_str()) {
                    let mut at = format!("{path}/properties/");
                    push_pointer_token(&mut at, name);
                    self.push(
                        &at,
                        Rule::NotRequired,
                        format!("property `{name}` is not in `required`; strict mode requires every property, so list it and make it nullable if it is optional"),
                    );
                }
            }
        }
    }

    /// Walks `sub` at `path` + `segments` (each segment escaped as a JSON
    /// pointer token), then takes `path` back.
    fn child(&mut self, sub: &Value, path: &mut String, segments: &[&str], depth: usize) {
        let len = path.len();
        for segment in segments {
            path.push('/');
            push_pointer_token(path, segment);
        }
        self.node(sub, path, depth);
        path.truncate(len);
    }

    fn children(&mut self, node: &Map<String, Value>, path: &mut String, depth: usize) {
        each_nested(node, |keyword, member, sub| {
            // `true`/`false` are schemas too, but for `additionalProperties`
            // they are the open/closed switch that `object` reads.
            if keyword == "additionalProperties" && sub.is_boolean() {
                return;
            }
            match member {
                Member::Whole => self.child(sub, path, &[keyword], depth),
                Member::Index(i) => self.child(sub, path, &[keyword, &i.to_string()], depth),
                Member::Name(name) if holds_definitions(keyword) => {
                    self.chars += name.chars().count();
                    self.def_names.insert(name.to_owned());
                    let outer = self.def.replace(name.to_owned());
                    self.child(sub, path, &[keyword, name], 0);
                    self.def = outer;
                }
                Member::Name(name) => self.child(sub, path, &[keyword, name], depth),
            }
        });
    }

    /// Whole-schema rules: reference targets, recursion, totals.
    fn finish(&mut self) {
        let refs = std::mem::take(&mut self.refs);
        for (path, target) in &refs {
            if let Some(name) = target
                && !self.def_names.contains(name)
            {
                self.push(
                    path,
                    Rule::DanglingRef,
                    format!("`$ref` points at `{name}`, which is not in `$defs`; define it or fix the reference"),
                );
                continue;
            }
            if self.p.refs && !self.p.recursion {
                let name = target.clone().unwrap_or_default();
                if self.reaches(&name, &name) {
                    self.push(
                        path,
                        Rule::RecursiveRef,
                        "this `$ref` is recursive, which this dialect does not accept; inline the type to a fixed depth and pass deeper levels as a JSON-encoded string".into(),
                    );
                }
            }
        }
        if !self.p.openai_limits {
            return;
        }
        if self.properties > OPENAI_MAX_PROPERTIES {
            self.push(
                "",
                Rule::TooManyProperties,
                format!("the schema has {} properties; the limit is {OPENAI_MAX_PROPERTIES}, so split the tool or skip fields with `(ai.tools.v1.tool_field).skip`", self.properties),
            );
        }
        if self.enum_values > OPENAI_MAX_ENUM_VALUES {
            self.push(
                "",
                Rule::TooManyEnumValues,
                format!("the schema has {} enum values; the limit is {OPENAI_MAX_ENUM_VALUES}, so use plain strings for the largest enums", self.enum_values),
            );
        }
        if self.chars > OPENAI_MAX_CHARS {
            self.push(
                "",
                Rule::TooManyChars,
                format!("property names, definition names and enum values total {} characters; the limit is {OPENAI_MAX_CHARS}, so shorten or remove some", self.chars),
            );
        }
    }

    /// Whether `to` is reachable from `from` through `$ref`s (`""`: the root).
    fn reaches(&self, from: &str, to: &str) -> bool {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&str> = vec![from];
        while let Some(node) = stack.pop() {
            for next in self.def_refs.get(node).into_iter().flatten() {
                if next == to {
                    return true;
                }
                if seen.insert(next.as_str()) {
                    stack.push(next);
                }
            }
        }
        false
    }
}

/// Anthropic strict tool use: at most this many tools with `strict: true` in
/// one request.
///
/// Source: "Schema complexity limits" of Anthropic's structured outputs,
/// <https://platform.claude.com/docs/en/build-with-claude/structured-outputs>
/// (strict tool use: <https://docs.claude.com/en/docs/agents-and-tools/tool-use/strict-tool-use>).
pub const ANTHROPIC_MAX_STRICT_TOOLS: usize = 20;
/// Anthropic strict tool use: at most this many optional parameters (properties
/// left out of their object's `required`) across all strict schemas of one
/// request. Source: as for [`ANTHROPIC_MAX_STRICT_TOOLS`].
pub const ANTHROPIC_MAX_OPTIONAL_PARAMETERS: usize = 24;
/// Anthropic strict tool use: at most this many parameters using `anyOf` or a
/// type array (`["string", "null"]` counts) across all strict schemas of one
/// request. Source: as for [`ANTHROPIC_MAX_STRICT_TOOLS`].
pub const ANTHROPIC_MAX_UNION_PARAMETERS: usize = 16;
/// Gemini: at most this many function declarations in one request.
///
/// Source: `Tool.functionDeclarations`, "Maximum 128 function declarations can
/// be provided", <https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1beta1/Tool>.
pub const GEMINI_MAX_DECLARATIONS: usize = 128;
/// OpenAI Chat Completions: at most this many function tools in one request.
///
/// Source: the `tools` parameter, "A max of 128 functions are supported",
/// <https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools>.
/// The Responses API documents no other number; the same limit is applied.
pub const OPENAI_MAX_TOOLS: usize = 128;

/// What one strict schema spends of Anthropic's per-request budgets (see
/// [`ANTHROPIC_MAX_OPTIONAL_PARAMETERS`], [`ANTHROPIC_MAX_UNION_PARAMETERS`]).
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::check::{strict_counts, StrictCounts};
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {
///         "a": { "type": "string" },
///         "b": { "type": ["string", "null"] },
///         "c": { "anyOf": [{ "type": "integer" }, { "type": "null" }] }
///     },
///     "required": ["a"],
///     "additionalProperties": false
/// });
/// assert_eq!(strict_counts(&schema), StrictCounts { optional_parameters: 2, union_parameters: 2 });
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StrictCounts {
    /// Properties left out of their object's `required`, at every level,
    /// a definition counted at each `$ref` to it as if it were inlined
    /// there. (Whether Anthropic counts a referenced definition once or at
    /// each use is not documented; counting each use can only make a
    /// toolkit drop `strict` where it might have kept it, never send a
    /// request over the budget.)
    pub optional_parameters: usize,
    /// Nodes with `anyOf`/`oneOf` or with a `type` array of more than one
    /// type, at every level (definitions as above).
    pub union_parameters: usize,
}

/// Counts what `schema` spends of Anthropic's per-request strict budgets.
///
/// # Examples
///
/// See [`StrictCounts`].
pub fn strict_counts(schema: &Value) -> StrictCounts {
    let mut counts = StrictCounts::default();
    count_strict(schema, schema, &mut Definitions::default(), &mut counts);
    counts
}

/// What each definition spends, counted once and added at each reference
/// (so that definitions referring to each other twice at every level cost
/// linear time, not exponential).
#[derive(Default)]
struct Definitions {
    counted: HashMap<String, StrictCounts>,
    /// The definitions being counted: a reference back to one of them (a
    /// cycle) adds nothing more.
    counting: Vec<String>,
}

/// Adds what `v` spends to `counts`, each `$ref` into `root`'s definitions
/// as if the definition were inlined there.
fn count_strict(root: &Value, v: &Value, definitions: &mut Definitions, counts: &mut StrictCounts) {
    let Some(node) = v.as_object() else {
        return;
    };
    let union = node.contains_key("anyOf")
        || node.contains_key("oneOf")
        || node
            .get("type")
            .and_then(Value::as_array)
            .is_some_and(|t| t.len() > 1);
    if union {
        counts.add(0, 1);
    }
    if let Some(Value::Object(properties)) = node.get("properties") {
        let required: BTreeSet<&str> = node
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let optional = properties
            .keys()
            .filter(|k| !required.contains(k.as_str()))
            .count();
        counts.add(optional, 0);
    }
    // Definitions are counted where a `$ref` reaches them, below.
    each_nested(node, |keyword, _, sub| {
        if !holds_definitions(keyword) {
            count_strict(root, sub, definitions, counts);
        }
    });
    if let Some(Value::String(target)) = node.get("$ref")
        && let Some((key, name)) = definition_of(target)
        && !definitions.counting.contains(&name)
        && let Some(definition) = root.get(key).and_then(|defs| defs.get(&name))
    {
        let spent = match definitions.counted.get(&name) {
            Some(spent) => *spent,
            None => {
                let mut spent = StrictCounts::default();
                definitions.counting.push(name.clone());
                count_strict(root, definition, definitions, &mut spent);
                definitions.counting.pop();
                definitions.counted.insert(name, spent);
                spent
            }
        };
        counts.add(spent.optional_parameters, spent.union_parameters);
    }
}

impl StrictCounts {
    /// Adds to both counts, saturating: a schema whose definitions refer to
    /// each other twice at every level, 64 deep, would count past `usize`.
    fn add(&mut self, optional_parameters: usize, union_parameters: usize) {
        self.optional_parameters = self.optional_parameters.saturating_add(optional_parameters);
        self.union_parameters = self.union_parameters.saturating_add(union_parameters);
    }
}

/// The root keyword (`$defs` or `definitions`) and the name of the
/// definition that a local `$ref` such as `#/$defs/pkg.M` points at.
fn definition_of(target: &str) -> Option<(&'static str, String)> {
    if let Some(name) = target.strip_prefix("#/$defs/") {
        Some(("$defs", unescape(name)))
    } else {
        target
            .strip_prefix("#/definitions/")
            .map(|name| ("definitions", unescape(name)))
    }
}

/// Checks the whole tool list of one request against the limits of `dialect`
/// that span several tools, and returns every violation.
///
/// `tools` is `(name, strict, parameters)` per tool, in request order;
/// `parameters` is the tool's rendered schema for `dialect` (only its
/// counts matter here: check each schema itself with [`check`]).
///
/// What is checked:
///
/// - every dialect: tool names are unique;
/// - OpenAI, Anthropic: names match `^[a-zA-Z0-9_-]{1,64}$`; Gemini (both
///   forms): names start with a letter or `_`, then `a-zA-Z0-9_.:-`, at most
///   64 characters;
/// - OpenAI: at most [`OPENAI_MAX_TOOLS`] tools; Gemini: at most
///   [`GEMINI_MAX_DECLARATIONS`] declarations;
/// - Anthropic, over the tools with `strict` set: at most
///   [`ANTHROPIC_MAX_STRICT_TOOLS`] of them,
///   [`ANTHROPIC_MAX_OPTIONAL_PARAMETERS`] optional parameters and
///   [`ANTHROPIC_MAX_UNION_PARAMETERS`] union-typed parameters in total (see
///   [`strict_counts`]; a nullable `["string", "null"]` is a union).
///
/// A violation about one tool has the path `/tools/{index}`; one about the
/// request as a whole has the path `/tools`, and its message names the tools
/// that count towards the limit.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::check::{check_request, Rule};
/// use proto_ai_tools_schema::Dialect;
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": { "note": { "type": ["string", "null"] } },
///     "required": ["note"],
///     "additionalProperties": false
/// });
/// let names: Vec<String> = (0..17).map(|i| format!("tool_{i}")).collect();
/// let tools: Vec<(&str, bool, &serde_json::Value)> =
///     names.iter().map(|n| (n.as_str(), true, &schema)).collect();
///
/// let violations = check_request(Dialect::Anthropic, &tools);
/// assert_eq!(violations.len(), 1);
/// assert_eq!(violations[0].rule, Rule::TooManyUnionParameters);
/// assert!(violations[0].message.contains("tool_16: 1"));
/// // Non-strict tools do not count; OpenAI has no such budget.
/// let relaxed: Vec<_> = tools.iter().map(|&(n, _, s)| (n, false, s)).collect();
/// assert!(check_request(Dialect::Anthropic, &relaxed).is_empty());
/// assert!(check_request(Dialect::OpenAi, &tools).is_empty());
/// ```
pub fn check_request(dialect: Dialect, tools: &[(&str, bool, &Value)]) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut push = |path: String, rule: Rule, message: String| {
        out.push(Violation {
            path,
            rule,
            message,
        });
    };
    let provider = match dialect {
        Dialect::JsonSchema => "JSON Schema",
        Dialect::OpenAi => "OpenAI",
        Dialect::Anthropic => "Anthropic",
        Dialect::Gemini | Dialect::GeminiJsonSchema => "Gemini",
    };

    let mut first_index: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, (name, _, _)) in tools.iter().enumerate() {
        if let Err(why) = tool_name(dialect, name) {
            push(format!("/tools/{i}"), Rule::ToolName, why);
        }
        match first_index.get(name) {
            Some(first) => push(
                format!("/tools/{i}"),
                Rule::DuplicateToolName,
                format!(
                    "tool `{name}` is listed twice (at {first} and {i}); {provider} rejects a request whose tool names repeat, so rename one or send it once"
                ),
            ),
            None => {
                first_index.insert(name, i);
            }
        }
    }

    let max_tools = match dialect {
        Dialect::OpenAi => Some((OPENAI_MAX_TOOLS, "tools")),
        Dialect::Gemini | Dialect::GeminiJsonSchema => {
            Some((GEMINI_MAX_DECLARATIONS, "function declarations"))
        }
        Dialect::JsonSchema | Dialect::Anthropic => None,
    };
    if let Some((max, what)) = max_tools
        && tools.len() > max
    {
        push(
            "/tools".into(),
            Rule::TooManyTools,
            format!(
                "the request has {} {what}; {provider} accepts at most {max}, so send only the tools this turn needs",
                tools.len()
            ),
        );
    }

    if dialect == Dialect::Anthropic {
        let strict: Vec<(&str, StrictCounts)> = tools
            .iter()
            .filter(|(_, strict, _)| *strict)
            .map(|(name, _, schema)| (*name, strict_counts(schema)))
            .collect();
        if strict.len() > ANTHROPIC_MAX_STRICT_TOOLS {
            let names: Vec<String> = strict.iter().map(|(n, _)| format!("`{n}`")).collect();
            push(
                "/tools".into(),
                Rule::TooManyStrictTools,
                format!(
                    "the request has {} strict tools ({}); Anthropic strict tool use accepts at most {ANTHROPIC_MAX_STRICT_TOOLS}, so send some without `strict` or split the tools across requests",
                    strict.len(),
                    names.join(", ")
                ),
            );
        }
        for (rule, max, what, count) in [
            (
                Rule::TooManyOptionalParameters,
                ANTHROPIC_MAX_OPTIONAL_PARAMETERS,
                "optional parameters",
                (|c: &StrictCounts| c.optional_parameters) as fn(&StrictCounts) -> usize,
            ),
            (
                Rule::TooManyUnionParameters,
                ANTHROPIC_MAX_UNION_PARAMETERS,
                "union-typed parameters (`anyOf` or a type array such as `[\"string\", \"null\"]`)",
                |c: &StrictCounts| c.union_parameters,
            ),
        ] {
            let total = strict
                .iter()
                .fold(0_usize, |total, (_, c)| total.saturating_add(count(c)));
            if total > max {
                let per_tool: Vec<String> = strict
                    .iter()
                    .filter(|(_, c)| count(c) > 0)
                    .map(|(n, c)| format!("{n}: {}", count(c)))
                    .collect();
                push(
                    "/tools".into(),
                    rule,
                    format!(
                        "the strict tools of this request have {total} {what} in total ({}); Anthropic strict tool use accepts at most {max} across all strict tools, so send some of these tools without `strict`, make fields required, or split the tools across requests",
                        per_tool.join(", ")
                    ),
                );
            }
        }
    }
    out
}

/// Checks one tool name against the rule of `dialect`.
fn tool_name(dialect: Dialect, name: &str) -> Result<(), String> {
    const MAX: usize = 64;
    let openai_like = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let gemini_first = |c: char| c.is_ascii_alphabetic() || c == '_';
    let gemini_rest = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-');
    let mut chars = name.chars();
    let first = chars.next();
    let (fits, rule) = match dialect {
        Dialect::JsonSchema => return Ok(()),
        Dialect::OpenAi | Dialect::Anthropic => (
            first.is_some_and(openai_like) && chars.all(openai_like),
            "`^[a-zA-Z0-9_-]{1,64}$`",
        ),
        Dialect::Gemini | Dialect::GeminiJsonSchema => (
            first.is_some_and(gemini_first) && chars.all(gemini_rest),
            "`^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$`",
        ),
    };
    if fits && name.len() <= MAX {
        Ok(())
    } else {
        Err(format!(
            "tool name `{name}` does not match {rule}, which {dialect} requires; rename the tool"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(dialect: Dialect, strict: bool, schema: &Value) -> Vec<(String, Rule)> {
        check(dialect, strict, schema)
            .into_iter()
            .map(|v| (v.path, v.rule))
            .collect()
    }

    fn at(path: &str, rule: Rule) -> (String, Rule) {
        (path.to_owned(), rule)
    }

    #[test]
    fn root_must_be_a_plain_object() {
        let schema = json!({ "anyOf": [{ "type": "object" }, { "type": "string" }] });
        for dialect in Dialect::ALL {
            let found = rules(dialect, false, &schema);
            assert!(found.contains(&at("", Rule::RootNotObject)), "{dialect}");
            assert!(found.contains(&at("", Rule::RootUnion)), "{dialect}");
        }
        assert_eq!(
            rules(Dialect::JsonSchema, false, &json!("x")),
            [at("", Rule::RootNotObject), at("", Rule::MissingType)]
        );
    }

    #[test]
    fn typeless_nodes() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": { "description": "no type" },
                "b": { "type": "array", "items": true },
                "c": { "anyOf": [{ "type": "string" }, {}] }
            }
        });
        assert_eq!(
            rules(Dialect::Anthropic, false, &schema),
            [
                at("/properties/a", Rule::MissingType),
                at("/properties/b/items", Rule::MissingType),
                at("/properties/c/anyOf/1", Rule::MissingType),
            ]
        );
    }

    #[test]
    fn property_names_is_walked_as_a_schema() {
        // The canonical rendering of a map with boolean keys names its keys
        // by pattern; what is inside is checked like any other schema.
        let map = |names: Value| {
            json!({
                "type": "object",
                "properties": {
                    "m": { "type": "object", "additionalProperties": { "type": "string" }, "propertyNames": names }
                }
            })
        };
        assert_eq!(
            rules(
                Dialect::JsonSchema,
                false,
                &map(json!({ "type": "string", "pattern": "^(true|false)$" }))
            ),
            []
        );
        assert_eq!(
            rules(
                Dialect::JsonSchema,
                false,
                &map(json!({ "pattern": "^(true|false)$" }))
            ),
            [at("/properties/m/propertyNames", Rule::MissingType)]
        );
        assert_eq!(
            rules(
                Dialect::JsonSchema,
                false,
                &map(json!({ "$ref": "#/$defs/Key" }))
            ),
            [at("/properties/m/propertyNames", Rule::DanglingRef)]
        );
    }

    #[test]
    fn openai_strict_rules() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": { "type": "string", "format": "byte", "minLength": 1 },
                "b/c": { "type": "object", "properties": {}, "additionalProperties": true, "required": [] },
                "d": { "$ref": "#/$defs/D", "description": "beside" },
                "e": { "$ref": "#/$defs/Missing" }
            },
            "required": ["a", "d", "e"],
            "additionalProperties": false,
            "$defs": { "D": { "type": "object", "properties": {}, "required": [], "additionalProperties": false } }
        });
        assert_eq!(
            rules(Dialect::OpenAi, true, &schema),
            [
                at("/properties/b~1c", Rule::NotRequired),
                at("/properties/a", Rule::UnsupportedKeyword),
                at("/properties/a", Rule::UnsupportedFormat),
                at("/properties/b~1c", Rule::OpenObject),
                at("/properties/d", Rule::RefSiblings),
                at("/properties/e", Rule::DanglingRef),
            ]
        );
        // Canonical strict follows the same rules; non-strict canonical does not.
        assert_eq!(rules(Dialect::JsonSchema, true, &schema).len(), 6);
        assert_eq!(
            rules(Dialect::JsonSchema, false, &schema),
            [at("/properties/e", Rule::DanglingRef)]
        );
    }

    #[test]
    fn openai_limits() {
        // Depth: eleven nested objects.
        let mut deep = json!({ "type": "object", "properties": {}, "required": [], "additionalProperties": false });
        for _ in 0..10 {
            deep = json!({ "type": "object", "properties": { "x": deep }, "required": ["x"], "additionalProperties": false });
        }
        let found = rules(Dialect::OpenAi, true, &deep);
        assert_eq!(found, [at(&"/properties/x".repeat(10), Rule::TooDeep)]);

        // Properties, enum values and characters.
        let names: Map<String, Value> = (0..5001)
            .map(|i| (format!("p{i}"), json!({ "type": "string" })))
            .collect();
        let required: Vec<Value> = names.keys().map(|k| json!(k)).collect();
        let many = json!({ "type": "object", "properties": names, "required": required, "additionalProperties": false });
        assert_eq!(
            rules(Dialect::OpenAi, true, &many),
            [at("", Rule::TooManyProperties)]
        );

        let values: Vec<Value> = (0..1001).map(|i| json!(format!("{i:0>60}"))).collect();
        let enums = json!({
            "type": "object",
            "properties": { "e": { "type": "string", "enum": values } },
            "required": ["e"],
            "additionalProperties": false
        });
        assert_eq!(
            rules(Dialect::OpenAi, true, &enums),
            [
                at("/properties/e", Rule::EnumTooLong),
                at("", Rule::TooManyEnumValues)
            ]
        );

        let long = "n".repeat(OPENAI_MAX_CHARS + 1);
        let chars = json!({
            "type": "object",
            "properties": { long.clone(): { "type": "string" } },
            "required": [long],
            "additionalProperties": false
        });
        assert_eq!(
            rules(Dialect::OpenAi, true, &chars),
            [at("", Rule::TooManyChars)]
        );
        // Non-strict OpenAI does not apply the Structured Outputs limits.
        assert!(rules(Dialect::OpenAi, false, &chars).is_empty());
    }

    #[test]
    fn gemini_rules() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": { "type": ["string", "null"] },
                "b": { "type": "object", "additionalProperties": { "type": "string" } },
                "c": { "$ref": "#/$defs/C" },
                "d": { "type": "integer", "enum": [1, 2] },
                "e": { "type": "string", "format": "uuid" },
                "f": { "type": "string", "format": "enum", "enum": ["X"] },
                "g": { "type": "string", "const": "x" }
            },
            "$defs": { "C": { "type": "string" } }
        });
        assert_eq!(
            rules(Dialect::Gemini, false, &schema),
            [
                at("", Rule::RefNotAllowed),
                at("/properties/a", Rule::TypeArray),
                at("/properties/b", Rule::AdditionalProperties),
                at("/properties/c", Rule::RefNotAllowed),
                at("/properties/d", Rule::NonStringEnum),
                at("/properties/d", Rule::NonStringEnum),
                at("/properties/e", Rule::UnsupportedFormat),
                at("/properties/g", Rule::UnsupportedKeyword),
            ]
        );
        // The JSON Schema path of Gemini accepts all of it.
        assert!(rules(Dialect::GeminiJsonSchema, false, &schema).is_empty());
    }

    #[test]
    fn anthropic_strict_rules() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": { "type": "integer", "minimum": 0 },
                "open": { "type": "object" },
                "tree": { "$ref": "#/$defs/Tree" },
                "flat": { "$ref": "#/$defs/Flat" }
            },
            "additionalProperties": false,
            "$defs": {
                "Tree": {
                    "type": "object",
                    "properties": { "kids": { "type": "array", "items": { "$ref": "#/$defs/Tree" } } },
                    "additionalProperties": false
                },
                "Flat": { "type": "object", "properties": {}, "additionalProperties": false }
            }
        });
        assert_eq!(
            rules(Dialect::Anthropic, true, &schema),
            [
                at("/properties/n", Rule::UnsupportedKeyword),
                at("/properties/open", Rule::OpenObject),
                at("/properties/tree", Rule::RecursiveRef),
                at("/$defs/Tree/properties/kids/items", Rule::RecursiveRef),
            ]
        );
        // Non-strict Anthropic accepts recursion and open objects.
        assert!(rules(Dialect::Anthropic, false, &schema).is_empty());
    }

    fn request_rules(dialect: Dialect, tools: &[(&str, bool, &Value)]) -> Vec<(String, Rule)> {
        check_request(dialect, tools)
            .into_iter()
            .map(|v| (v.path, v.rule))
            .collect()
    }

    /// A strict schema with `optional` optional strings and `unions` nullable
    /// (required) strings.
    fn strict_schema(optional: usize, unions: usize) -> Value {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for i in 0..optional {
            properties.insert(format!("o{i}"), json!({ "type": "string" }));
        }
        for i in 0..unions {
            properties.insert(format!("u{i}"), json!({ "type": ["string", "null"] }));
            required.push(json!(format!("u{i}")));
        }
        json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false })
    }

    #[test]
    fn strict_counts_walk_every_level_and_every_reference() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": { "type": "array", "items": { "$ref": "#/$defs/D" } },
                "b": { "anyOf": [{ "$ref": "#/$defs/D" }, { "type": "null" }] },
                "c": { "type": "object", "additionalProperties": { "type": ["integer", "null"] } },
                "d": { "type": ["string"] }
            },
            "required": ["a"],
            "$defs": {
                "D": {
                    "type": "object",
                    "properties": { "x": { "type": "string" }, "y": { "type": "string" } },
                    "required": ["x"]
                }
            }
        });
        assert_eq!(
            strict_counts(&schema),
            StrictCounts {
                // b, c, d at the root; y in D, at each of its two references.
                optional_parameters: 5,
                // b's anyOf and c's values; a one-type array is no union.
                union_parameters: 2,
            }
        );
        assert_eq!(strict_counts(&json!("x")), StrictCounts::default());
        // A cycle (which no strict rendering has) is followed once.
        let cycle = json!({
            "type": "object",
            "properties": { "a": { "$ref": "#/$defs/A" } },
            "$defs": {
                "A": { "type": "object", "properties": { "next": { "$ref": "#/$defs/A" } } }
            }
        });
        assert_eq!(
            strict_counts(&cycle),
            StrictCounts {
                // `a` at the root, `next` in A once.
                optional_parameters: 2,
                union_parameters: 0,
            }
        );
        // Definitions that each refer to the next twice, forty deep: 2^40
        // inlined copies of the last one, counted without making them.
        let mut defs = serde_json::Map::new();
        for level in 0..40 {
            let next = json!({ "$ref": format!("#/$defs/D{}", level + 1) });
            defs.insert(
                format!("D{level}"),
                json!({ "type": "object", "properties": { "a": next, "b": next } }),
            );
        }
        defs.insert("D40".into(), json!({ "type": ["string", "null"] }));
        let doubling = json!({
            "type": "object",
            "properties": { "root": { "$ref": "#/$defs/D0" } },
            "required": ["root"],
            "$defs": defs
        });
        let counts = strict_counts(&doubling);
        assert_eq!(counts.union_parameters, 1 << 40);
        assert_eq!(counts.optional_parameters, (1 << 41) - 2);
        // Seventy deep counts past `usize`, and saturates.
        let mut deeper = doubling.clone();
        for level in 40..70 {
            let next = json!({ "$ref": format!("#/$defs/D{}", level + 1) });
            deeper["$defs"][format!("D{level}")] =
                json!({ "type": "object", "properties": { "a": next, "b": next } });
        }
        deeper["$defs"]["D70"] = json!({ "type": ["string", "null"] });
        assert_eq!(strict_counts(&deeper).optional_parameters, usize::MAX);
    }

    #[test]
    fn anthropic_strict_budgets_span_tools() {
        let twelve = strict_schema(12, 0);
        let thirteen = strict_schema(13, 0);
        // 12 + 12 optional parameters: exactly at the limit.
        assert!(
            request_rules(
                Dialect::Anthropic,
                &[("a", true, &twelve), ("b", true, &twelve)]
            )
            .is_empty()
        );
        // 12 + 13: over, and the message names the limit and the tools.
        let v = check_request(
            Dialect::Anthropic,
            &[("a", true, &twelve), ("b", true, &thirteen)],
        );
        assert_eq!(v.len(), 1);
        assert_eq!(
            (v[0].path.as_str(), v[0].rule),
            ("/tools", Rule::TooManyOptionalParameters)
        );
        assert!(
            v[0].message.contains("25 optional parameters"),
            "{}",
            v[0].message
        );
        assert!(v[0].message.contains("at most 24"), "{}", v[0].message);
        assert!(v[0].message.contains("a: 12, b: 13"), "{}", v[0].message);
        // A non-strict tool spends nothing.
        assert!(
            request_rules(
                Dialect::Anthropic,
                &[("a", true, &twelve), ("b", false, &thirteen)]
            )
            .is_empty()
        );

        // Unions: `["string", "null"]` counts; 16 pass, 17 do not.
        let eight = strict_schema(0, 8);
        let nine = strict_schema(0, 9);
        assert!(
            request_rules(
                Dialect::Anthropic,
                &[("a", true, &eight), ("b", true, &eight)]
            )
            .is_empty()
        );
        assert_eq!(
            request_rules(
                Dialect::Anthropic,
                &[("a", true, &eight), ("b", true, &nine)]
            ),
            [at("/tools", Rule::TooManyUnionParameters)]
        );

        // Strict tools: 20 pass, 21 do not.
        let empty = strict_schema(0, 0);
        let names: Vec<String> = (0..21).map(|i| format!("t{i}")).collect();
        let tools: Vec<(&str, bool, &Value)> =
            names.iter().map(|n| (n.as_str(), true, &empty)).collect();
        assert!(request_rules(Dialect::Anthropic, &tools[..20]).is_empty());
        let v = check_request(Dialect::Anthropic, &tools);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].rule, Rule::TooManyStrictTools);
        assert!(
            v[0].message.contains("21 strict tools") && v[0].message.contains("`t20`"),
            "{}",
            v[0].message
        );
        // Other dialects have no strict budgets.
        for dialect in [Dialect::OpenAi, Dialect::Gemini, Dialect::JsonSchema] {
            assert!(request_rules(dialect, &tools).is_empty(), "{dialect}");
        }
    }

    #[test]
    fn tool_counts_per_dialect() {
        let empty = strict_schema(0, 0);
        let names: Vec<String> = (0..129).map(|i| format!("t{i}")).collect();
        let tools: Vec<(&str, bool, &Value)> =
            names.iter().map(|n| (n.as_str(), false, &empty)).collect();
        for dialect in [Dialect::OpenAi, Dialect::Gemini, Dialect::GeminiJsonSchema] {
            assert!(
                request_rules(dialect, &tools[..128]).is_empty(),
                "{dialect}"
            );
            let v = check_request(dialect, &tools);
            assert_eq!(v.len(), 1, "{dialect}");
            assert_eq!(v[0].rule, Rule::TooManyTools);
            assert!(
                v[0].message.contains("129") && v[0].message.contains("at most 128"),
                "{}",
                v[0].message
            );
        }
        assert!(request_rules(Dialect::Anthropic, &tools).is_empty());
    }

    #[test]
    fn tool_names_per_dialect() {
        let s = strict_schema(0, 0);
        let long = "a".repeat(65);
        let tools: Vec<(&str, bool, &Value)> = vec![
            ("ok_name-1", false, &s),
            ("1starts_with_digit", false, &s),
            ("has.dot", false, &s),
            ("has space", false, &s),
            (long.as_str(), false, &s),
            ("", false, &s),
            ("ok_name-1", false, &s),
        ];
        let openai = request_rules(Dialect::OpenAi, &tools);
        assert_eq!(
            openai,
            [
                at("/tools/2", Rule::ToolName),
                at("/tools/3", Rule::ToolName),
                at("/tools/4", Rule::ToolName),
                at("/tools/5", Rule::ToolName),
                at("/tools/6", Rule::DuplicateToolName),
            ]
        );
        assert_eq!(request_rules(Dialect::Anthropic, &tools), openai);
        assert_eq!(
            request_rules(Dialect::Gemini, &tools),
            [
                at("/tools/1", Rule::ToolName),
                at("/tools/3", Rule::ToolName),
                at("/tools/4", Rule::ToolName),
                at("/tools/5", Rule::ToolName),
                at("/tools/6", Rule::DuplicateToolName),
            ]
        );
        assert_eq!(
            request_rules(Dialect::JsonSchema, &tools),
            [at("/tools/6", Rule::DuplicateToolName)]
        );
        let dup = check_request(Dialect::OpenAi, &tools);
        assert!(
            dup[4]
                .message
                .contains("`ok_name-1` is listed twice (at 0 and 6)"),
            "{}",
            dup[4].message
        );
    }

    #[test]
    fn violations_display_path_and_message() {
        let v = check(Dialect::OpenAi, true, &json!({ "type": "string" }));
        assert_eq!(v[0].to_string().split(": ").next(), Some("/"));
        assert!(v[0].message.starts_with("the root schema"));
    }
}
