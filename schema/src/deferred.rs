//! Provider-side deferred loading ("tool search"): a request carries a large
//! catalog of tools whose definitions the provider loads into the model's
//! context only when the model searches for them. Each provider has its own
//! request shape, and a checker here for the rules of that shape:
//!
//! - OpenAI Responses, [tool search]: function tools with
//!   `"defer_loading": true`, grouped in namespaces
//!   (`{"type": "namespace", name, description, tools}`), and the
//!   `{"type": "tool_search"}` tool: [`check_openai_tool_search`].
//! - Anthropic, the [tool search tool]:
//!   `{"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}`
//!   or its BM25 twin ([`AnthropicToolSearch`]), and tools with
//!   `"defer_loading": true`: [`check_anthropic_tool_search`].
//!
//! A checker reports only what belongs to the deferred shape (a missing
//! search tool, a bad namespace, every tool deferred, a catalog too large);
//! the function tools inside go through the checkers of their dialect,
//! [`check::check`] for each schema and [`check::check_request`] for the
//! names and the per-request budgets, and their violations come back with
//! the JSON pointer of the tool in the request (`/tools/2/tools/0/parameters/...`).
//!
//! What the model reads before its first search, as each provider documents
//! it, is [`openai_loaded_up_front`] and [`anthropic_loaded_up_front`].
//!
//! [tool search]: https://developers.openai.com/api/docs/guides/tools-tool-search
//! [tool search tool]: https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool
//!
//! # Examples
//!
//! ```
//! use proto_ai_tools_schema::check::Rule;
//! use proto_ai_tools_schema::deferred::{AnthropicToolSearch, check_anthropic_tool_search};
//! use serde_json::json;
//!
//! let weather = json!({
//!     "name": "get_weather",
//!     "description": "Get the weather at a location.",
//!     "input_schema": { "type": "object", "properties": { "location": { "type": "string" } } },
//!     "defer_loading": true
//! });
//! let tools = [AnthropicToolSearch::Regex.definition(), weather.clone()];
//! assert!(check_anthropic_tool_search(&tools).is_empty());
//!
//! // Without the search tool, nothing can load the deferred tool, and every tool is deferred.
//! let rules: Vec<Rule> = check_anthropic_tool_search(&[weather]).iter().map(|v| v.rule).collect();
//! assert_eq!(rules, [Rule::NoToolSearch, Rule::AllToolsDeferred]);
//! ```

use serde_json::{Map, Value, json};

use crate::check::{self, Rule, Violation};
use crate::dialect::Dialect;

/// Anthropic tool search: at most this many tools in the catalog of one
/// request (the tools beside the search tool itself).
///
/// Source: "Limits", "Maximum tools: 10,000 tools in your catalog",
/// <https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool>.
pub const ANTHROPIC_MAX_CATALOG_TOOLS: usize = 10_000;

/// The `type` of OpenAI's tool search tool, `{"type": "tool_search"}`.
///
/// Source: <https://developers.openai.com/api/docs/guides/tools-tool-search>.
pub const OPENAI_TOOL_SEARCH: &str = "tool_search";

/// The two variants of Anthropic's tool search tool.
///
/// Source: "Tool definition",
/// <https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool>:
/// the regex variant, whose queries are Python `re.search()` patterns, and
/// the BM25 variant, whose queries are natural language. Both search tool
/// names, descriptions, argument names and argument descriptions.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::deferred::AnthropicToolSearch;
/// use serde_json::json;
///
/// assert_eq!(
///     AnthropicToolSearch::Bm25.definition(),
///     json!({ "type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25" })
/// );
/// assert_eq!(
///     AnthropicToolSearch::from_type("tool_search_tool_regex_20251119"),
///     Some(AnthropicToolSearch::Regex)
/// );
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum AnthropicToolSearch {
    /// `tool_search_tool_regex_20251119`: the model writes regular
    /// expressions (at most 200 characters).
    #[default]
    Regex,
    /// `tool_search_tool_bm25_20251119`: the model writes natural-language
    /// queries.
    Bm25,
}

impl AnthropicToolSearch {
    /// Both variants.
    pub const ALL: [AnthropicToolSearch; 2] =
        [AnthropicToolSearch::Regex, AnthropicToolSearch::Bm25];

    /// The tool's versioned `type`.
    pub fn tool_type(self) -> &'static str {
        match self {
            AnthropicToolSearch::Regex => "tool_search_tool_regex_20251119",
            AnthropicToolSearch::Bm25 => "tool_search_tool_bm25_20251119",
        }
    }

    /// The tool's `name`, the one the documentation pairs with its type.
    pub fn name(self) -> &'static str {
        match self {
            AnthropicToolSearch::Regex => "tool_search_tool_regex",
            AnthropicToolSearch::Bm25 => "tool_search_tool_bm25",
        }
    }

    /// The tool as a request lists it: `{"type": ..., "name": ...}`, never
    /// deferred.
    pub fn definition(self) -> Value {
        json!({ "type": self.tool_type(), "name": self.name() })
    }

    /// The variant whose `type` is `tool_type`.
    pub fn from_type(tool_type: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.tool_type() == tool_type)
    }
}

/// The OpenAI namespace name for the tools of the gRPC service `service`
/// (fully qualified, `links.v1.LinksService`): every character outside
/// `a-zA-Z0-9_-` becomes `_` (`links_v1_LinksService`); a name longer than
/// 64 characters is cut to its last 64, the service's own name kept.
///
/// OpenAI documents a namespace name only as non-empty ("The namespace name
/// used in tool calls (for example, `crm`)", `minLength` 1 in the API
/// reference of `responses.create`); the name derived here also obeys the
/// rule of function names, `^[a-zA-Z0-9_-]{1,64}$`, so that it stays valid
/// wherever a tool name is. Two services may derive the same name (`a.b.S`
/// and `a_b.S`): a renderer makes them distinct.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::deferred::openai_namespace_name;
/// assert_eq!(openai_namespace_name("links.v1.LinksService"), "links_v1_LinksService");
/// assert_eq!(openai_namespace_name(""), "tools");
/// let long = format!("{}.Service", "package".repeat(12));
/// assert_eq!(openai_namespace_name(&long).len(), 64);
/// assert!(openai_namespace_name(&long).ends_with("_Service"));
/// ```
pub fn openai_namespace_name(service: &str) -> String {
    const MAX: usize = 64;
    let name: String = service
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() {
        return "tools".to_owned();
    }
    // Every character is ASCII: byte and character counts agree.
    match name.len().checked_sub(MAX) {
        Some(cut) if cut > 0 => name[cut..].to_owned(),
        _ => name,
    }
}

/// One function tool of a deferred request, where it sits in the request.
struct Function<'v> {
    /// JSON pointer of the tool: `/tools/3`, or `/tools/3/tools/0` inside a
    /// namespace.
    pointer: String,
    name: &'v str,
    strict: bool,
    /// The schema, under `schema_key` (`parameters`, `input_schema`).
    schema: Option<&'v Value>,
    deferred: bool,
}

fn deferred(tool: &Value) -> bool {
    tool.get("defer_loading").and_then(Value::as_bool) == Some(true)
}

fn string<'v>(tool: &'v Value, key: &str) -> Option<&'v str> {
    tool.get(key).and_then(Value::as_str)
}

fn violation(path: String, rule: Rule, message: String) -> Violation {
    Violation {
        path,
        rule,
        message,
    }
}

/// `names` as `` `a`, `b` `` (the first eight, then how many more).
fn listed(names: &[&str]) -> String {
    const SHOWN: usize = 8;
    let mut text: Vec<String> = names.iter().take(SHOWN).map(|n| format!("`{n}`")).collect();
    if names.len() > SHOWN {
        text.push(format!("and {} more", names.len() - SHOWN));
    }
    text.join(", ")
}

/// Runs the checkers of `dialect` over `functions`: each schema with
/// [`check::check`] (at `{pointer}/{schema_key}`), the list with
/// [`check::check_request`] (its `/tools/{k}` taken to the function's own
/// pointer). With `count_deferred` false, the request's tool count
/// ([`Rule::TooManyTools`]) counts only the functions loaded up front.
fn check_functions(
    dialect: Dialect,
    functions: &[Function<'_>],
    schema_key: &str,
    count_deferred: bool,
    out: &mut Vec<Violation>,
) {
    let empty = json!({ "type": "object", "properties": {} });
    let listed: Vec<(&str, bool, &Value)> = functions
        .iter()
        .map(|f| (f.name, f.strict, f.schema.unwrap_or(&empty)))
        .collect();
    let remap = |v: Violation| -> Violation {
        let at = v
            .path
            .strip_prefix("/tools/")
            .and_then(|k| k.parse::<usize>().ok())
            .and_then(|k| functions.get(k));
        match at {
            Some(function) => Violation {
                path: function.pointer.clone(),
                ..v
            },
            None => v,
        }
    };
    for v in check::check_request(dialect, &listed) {
        if count_deferred || v.rule != Rule::TooManyTools {
            out.push(remap(v));
        }
    }
    if !count_deferred {
        let up_front: Vec<(&str, bool, &Value)> = functions
            .iter()
            .zip(&listed)
            .filter(|(f, _)| !f.deferred)
            .map(|(_, listed)| *listed)
            .collect();
        for v in check::check_request(dialect, &up_front) {
            if v.rule == Rule::TooManyTools {
                out.push(Violation {
                    message: format!(
                        "counting the functions loaded up front (deferred ones are not counted: the tool search guide states no limit for them), {}",
                        v.message
                    ),
                    ..v
                });
            }
        }
    }
    for function in functions {
        let Some(schema) = function.schema else {
            continue;
        };
        for v in check::check(dialect, function.strict, schema) {
            out.push(Violation {
                path: format!("{}/{schema_key}{}", function.pointer, v.path),
                message: format!("tool `{}`: {}", function.name, v.message),
                ..v
            });
        }
    }
}

/// Checks an OpenAI Responses `tools` list that uses tool search, and
/// returns every violation.
///
/// The rules of the deferred shape, from the [tool search guide] and the
/// API reference of [`responses.create`] (its `tools`):
///
/// - a request with a deferred tool (`"defer_loading": true` on a function,
///   on a custom tool or on an MCP server) lists `{"type": "tool_search"}`
///   ("To activate tool search, you must ... Add `tool_search` as a tool in
///   your `tools` array"): [`Rule::NoToolSearch`];
/// - the `tool_search` tool has no `defer_loading` (its fields are `type`,
///   `execution`, `description` and `parameters`): [`Rule::DeferredToolSearch`];
/// - a namespace has a non-empty `name` and a non-empty `description`
///   (`minLength` 1 each): [`Rule::NamespaceName`],
///   [`Rule::NamespaceDescription`];
/// - its `tools` are function and custom tools, at least one:
///   [`Rule::NamespaceMember`];
/// - `defer_loading` is set on the functions inside a namespace, "not to the
///   namespace object itself" (which has no such field):
///   [`Rule::DeferredNamespace`].
///
/// Every function tool, at the top level or in a namespace, then goes
/// through the OpenAI checkers: [`check::check`] on its `parameters` (strict
/// when `"strict": true`) and [`check::check_request`] on all of them
/// together (names `^[a-zA-Z0-9_-]{1,64}$`, unique across the whole request;
/// whether OpenAI accepts one name in two namespaces is not documented).
/// The guide states no catalog size, so the 128 tools of
/// [`check::OPENAI_MAX_TOOLS`] count only the functions loaded up front.
///
/// Tool search is documented for `gpt-5.4` and later models only; the
/// guide also advises fewer than 10 functions per namespace, a best practice
/// and not a limit, which is not checked.
///
/// [tool search guide]: https://developers.openai.com/api/docs/guides/tools-tool-search
/// [`responses.create`]: https://platform.openai.com/docs/api-reference/responses/create
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::check::Rule;
/// use proto_ai_tools_schema::deferred::check_openai_tool_search;
/// use serde_json::json;
///
/// let crm = json!({
///     "type": "namespace",
///     "name": "crm",
///     "description": "CRM tools for customer lookup and order management.",
///     "tools": [{
///         "type": "function",
///         "name": "list_open_orders",
///         "description": "List open orders for a customer ID.",
///         "defer_loading": true,
///         "parameters": {
///             "type": "object",
///             "properties": { "customer_id": { "type": "string" } },
///             "required": ["customer_id"],
///             "additionalProperties": false
///         }
///     }]
/// });
/// assert!(check_openai_tool_search(&[crm.clone(), json!({ "type": "tool_search" })]).is_empty());
///
/// // No `tool_search`: nothing loads the deferred function.
/// let violations = check_openai_tool_search(&[crm]);
/// assert_eq!(violations[0].rule, Rule::NoToolSearch);
/// assert!(violations[0].message.contains("`crm/list_open_orders`"));
/// ```
pub fn check_openai_tool_search(tools: &[Value]) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut functions: Vec<Function<'_>> = Vec::new();
    // What is deferred, by name (`namespace/function` inside a namespace).
    let mut deferred_names: Vec<String> = Vec::new();
    let mut searches = 0_usize;

    for (i, tool) in tools.iter().enumerate() {
        let pointer = format!("/tools/{i}");
        match string(tool, "type") {
            Some("function") => {
                let f = openai_function(pointer, tool);
                if f.deferred {
                    deferred_names.push(f.name.to_owned());
                }
                functions.push(f);
            }
            Some(OPENAI_TOOL_SEARCH) => {
                searches += 1;
                if tool.get("defer_loading").is_some() {
                    out.push(violation(
                        pointer,
                        Rule::DeferredToolSearch,
                        "the `tool_search` tool has `defer_loading`; it is what loads the deferred tools and has no such field (OpenAI's API reference lists `type`, `execution`, `description` and `parameters`), so remove it".into(),
                    ));
                }
            }
            Some("namespace") => {
                check_namespace(tool, &pointer, &mut out);
                let namespace = string(tool, "name").unwrap_or("");
                let members = tool.get("tools").and_then(Value::as_array);
                for (j, member) in members.into_iter().flatten().enumerate() {
                    let at = format!("{pointer}/tools/{j}");
                    match string(member, "type") {
                        Some("function") => {
                            let f = openai_function(at, member);
                            if f.deferred {
                                deferred_names.push(format!("{namespace}/{}", f.name));
                            }
                            functions.push(f);
                        }
                        Some("custom") => {
                            if deferred(member) {
                                let name = string(member, "name").unwrap_or("");
                                deferred_names.push(format!("{namespace}/{name}"));
                            }
                        }
                        other => out.push(violation(
                            at,
                            Rule::NamespaceMember,
                            format!(
                                "namespace `{namespace}` holds a tool of type `{}`; OpenAI's API reference accepts only function and custom tools inside a namespace, so list it at the top level",
                                other.unwrap_or("(none)")
                            ),
                        )),
                    }
                }
            }
            // A custom tool or an MCP server can be deferred too.
            _ => {
                if deferred(tool) {
                    let name = string(tool, "name")
                        .or_else(|| string(tool, "server_label"))
                        .unwrap_or("?");
                    deferred_names.push(name.to_owned());
                }
            }
        }
    }
    if searches == 0 && !deferred_names.is_empty() {
        let names: Vec<&str> = deferred_names.iter().map(String::as_str).collect();
        out.push(violation(
            "/tools".into(),
            Rule::NoToolSearch,
            format!(
                "{} deferred tools ({}) but no `{{\"type\": \"tool_search\"}}` tool, which is what loads them; OpenAI's tool search guide requires both, so add it (or drop `defer_loading`)",
                names.len(),
                listed(&names)
            ),
        ));
    }
    check_functions(Dialect::OpenAi, &functions, "parameters", false, &mut out);
    out
}

/// An OpenAI function tool at `pointer`.
fn openai_function(pointer: String, tool: &Value) -> Function<'_> {
    Function {
        pointer,
        name: string(tool, "name").unwrap_or(""),
        strict: tool.get("strict").and_then(Value::as_bool) == Some(true),
        schema: tool.get("parameters"),
        deferred: deferred(tool),
    }
}

/// The rules of one OpenAI namespace object itself (not of its members).
fn check_namespace(namespace: &Value, pointer: &str, out: &mut Vec<Violation>) {
    let name = string(namespace, "name").unwrap_or("");
    if name.is_empty() {
        out.push(violation(
            pointer.to_owned(),
            Rule::NamespaceName,
            "a namespace has no `name`; OpenAI's API reference requires a non-empty one (`minLength` 1), the name tool calls carry, so name it after what its tools do".into(),
        ));
    }
    let shown = if name.is_empty() { "(unnamed)" } else { name };
    if string(namespace, "description").is_none_or(str::is_empty) {
        out.push(violation(
            pointer.to_owned(),
            Rule::NamespaceDescription,
            format!(
                "namespace `{shown}` has no `description`; OpenAI's API reference requires a non-empty one (`minLength` 1), and before its first search the model reads only a namespace's name and description, so say what its tools do"
            ),
        ));
    }
    if namespace.get("defer_loading").is_some() {
        out.push(violation(
            pointer.to_owned(),
            Rule::DeferredNamespace,
            format!(
                "namespace `{shown}` has `defer_loading`; OpenAI's tool search guide sets it on the functions inside a namespace, not on the namespace object, so move it to each function"
            ),
        ));
    }
    match namespace.get("tools").and_then(Value::as_array) {
        Some(members) if !members.is_empty() => {}
        _ => out.push(violation(
            pointer.to_owned(),
            Rule::NamespaceMember,
            format!(
                "namespace `{shown}` has no `tools`; OpenAI's API reference requires the list of the function and custom tools inside it (at least one), so add them or drop the namespace"
            ),
        )),
    }
}

/// Checks an Anthropic `tools` list that uses the tool search tool, and
/// returns every violation.
///
/// The rules of the deferred shape, from the [tool search tool] page:
///
/// - a request with a deferred tool lists a tool search tool, which is what
///   loads deferred tools (the page's first step is to include one, the
///   second to mark the tools to defer): [`Rule::NoToolSearch`];
/// - a search tool's `type` and `name` are one of the documented pairs of
///   [`AnthropicToolSearch`]: [`Rule::ToolSearchShape`];
/// - the tool search tool itself never has `defer_loading: true`:
///   [`Rule::DeferredToolSearch`];
/// - at least one tool is not deferred ("All tools have defer_loading set.
///   At least one tool must be non-deferred", a 400 error):
///   [`Rule::AllToolsDeferred`];
/// - at most [`ANTHROPIC_MAX_CATALOG_TOOLS`] tools in the catalog:
///   [`Rule::TooManyTools`];
/// - no `input_examples`: "The tool search tool is not compatible with tool
///   use examples": [`Rule::NotWithToolSearch`].
///
/// Every client tool (no `type`, or `"type": "custom"`) then goes through
/// the Anthropic checkers: [`check::check`] on its `input_schema` (strict
/// when `"strict": true`) and [`check::check_request`] on all of them
/// together (names, and the strict budgets, which count deferred tools too:
/// the page does not say they are exempt).
///
/// [tool search tool]: https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::check::Rule;
/// use proto_ai_tools_schema::deferred::{AnthropicToolSearch, check_anthropic_tool_search};
/// use serde_json::json;
///
/// let mut search = AnthropicToolSearch::Bm25.definition();
/// search["defer_loading"] = json!(true);
/// let rules: Vec<Rule> = check_anthropic_tool_search(&[search]).iter().map(|v| v.rule).collect();
/// assert_eq!(rules, [Rule::DeferredToolSearch, Rule::AllToolsDeferred]);
/// ```
pub fn check_anthropic_tool_search(tools: &[Value]) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut functions: Vec<Function<'_>> = Vec::new();
    let mut deferred_names: Vec<&str> = Vec::new();
    let (mut searches, mut catalog) = (0_usize, 0_usize);

    for (i, tool) in tools.iter().enumerate() {
        let pointer = format!("/tools/{i}");
        let name = string(tool, "name").unwrap_or("");
        match string(tool, "type") {
            Some(ty) if ty.starts_with("tool_search_tool_") => {
                searches += 1;
                let documented = AnthropicToolSearch::from_type(ty);
                if documented.is_none_or(|search| search.name() != name) {
                    let pairs: Vec<String> = AnthropicToolSearch::ALL
                        .iter()
                        .map(|s| format!("`{}` named `{}`", s.tool_type(), s.name()))
                        .collect();
                    out.push(violation(
                        pointer.clone(),
                        Rule::ToolSearchShape,
                        format!(
                            "the tool search tool `{name}` has type `{ty}`; Anthropic documents {}, so use one of these as written",
                            pairs.join(" and ")
                        ),
                    ));
                }
                if deferred(tool) {
                    out.push(violation(
                        pointer,
                        Rule::DeferredToolSearch,
                        format!(
                            "the tool search tool `{name}` is deferred; Anthropic's tool search tool page says it must never have `defer_loading: true` (it is what finds the deferred tools), so remove it"
                        ),
                    ));
                }
            }
            ty => {
                catalog += 1;
                if deferred(tool) {
                    deferred_names.push(name);
                }
                if !matches!(ty, None | Some("custom")) {
                    // A server tool or an MCP toolset: not a client tool.
                    continue;
                }
                if tool.get("input_examples").is_some() {
                    out.push(violation(
                        pointer.clone(),
                        Rule::NotWithToolSearch,
                        format!(
                            "tool `{name}` has `input_examples`; Anthropic's tool search tool is not compatible with tool use examples, so drop them (or send the tools without tool search)"
                        ),
                    ));
                }
                functions.push(Function {
                    pointer,
                    name,
                    strict: tool.get("strict").and_then(Value::as_bool) == Some(true),
                    // Required by Anthropic: a missing one is reported.
                    schema: Some(tool.get("input_schema").unwrap_or(&Value::Null)),
                    deferred: deferred(tool),
                });
            }
        }
    }
    if searches == 0 && !deferred_names.is_empty() {
        out.push(violation(
            "/tools".into(),
            Rule::NoToolSearch,
            format!(
                "{} deferred tools ({}) but no tool search tool, which is what loads them; add `{}` (or `{}`), or drop `defer_loading`",
                deferred_names.len(),
                listed(&deferred_names),
                AnthropicToolSearch::Regex.definition(),
                AnthropicToolSearch::Bm25.definition(),
            ),
        ));
    }
    if !tools.is_empty() && tools.iter().all(deferred) {
        out.push(violation(
            "/tools".into(),
            Rule::AllToolsDeferred,
            "every tool has `defer_loading: true`; Anthropic answers 400 (\"At least one tool must be non-deferred\"), so keep the tool search tool, and the tools used most, loaded".into(),
        ));
    }
    if catalog > ANTHROPIC_MAX_CATALOG_TOOLS {
        out.push(violation(
            "/tools".into(),
            Rule::TooManyTools,
            format!(
                "the catalog has {catalog} tools; Anthropic's tool search accepts at most {ANTHROPIC_MAX_CATALOG_TOOLS}, so send only the tools this conversation may need"
            ),
        ));
    }
    check_functions(
        Dialect::Anthropic,
        &functions,
        "input_schema",
        true,
        &mut out,
    );
    out
}

/// What an OpenAI model reads of `tools` (a Responses `tools` list using
/// tool search) before its first search, as the [tool search guide] says:
/// "At the start of a request, the model still sees the name and
/// description of whatever is searchable. For a namespace ... only the
/// namespace ... name and description ... For an individual deferred
/// function, the model still sees the function name and description."
///
/// So: a namespace keeps its `type`, `name` and `description`, and only the
/// functions inside it that are not deferred (in full); a deferred function
/// at the top level keeps its `type`, `name` and `description`; every other
/// tool, `tool_search` included, is kept whole. The provider writes these
/// into the model's context in a form of its own, so the JSON measures the
/// share of the list the model reads, not its exact tokens.
///
/// [tool search guide]: https://developers.openai.com/api/docs/guides/tools-tool-search
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::deferred::openai_loaded_up_front;
/// use serde_json::json;
///
/// let tools = [
///     json!({ "type": "namespace", "name": "crm", "description": "CRM tools.", "tools": [
///         { "type": "function", "name": "list_orders", "defer_loading": true,
///           "parameters": { "type": "object", "properties": {} } }
///     ] }),
///     json!({ "type": "tool_search" }),
/// ];
/// assert_eq!(
///     openai_loaded_up_front(&tools),
///     json!([{ "type": "namespace", "name": "crm", "description": "CRM tools." }, { "type": "tool_search" }])
/// );
/// ```
pub fn openai_loaded_up_front(tools: &[Value]) -> Value {
    let summary = |tool: &Value| -> Value {
        let mut kept = Map::new();
        for key in ["type", "name", "description"] {
            if let Some(value) = tool.get(key) {
                kept.insert(key.to_owned(), value.clone());
            }
        }
        Value::Object(kept)
    };
    let seen = tools.iter().map(|tool| match string(tool, "type") {
        Some("namespace") => {
            let mut seen = summary(tool);
            let loaded: Vec<Value> = tool
                .get("tools")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|member| !deferred(member))
                .cloned()
                .collect();
            if !loaded.is_empty() {
                seen["tools"] = Value::Array(loaded);
            }
            seen
        }
        Some("function") if deferred(tool) => summary(tool),
        _ => tool.clone(),
    });
    Value::Array(seen.collect())
}

/// What an Anthropic model reads of `tools` (a `tools` list using the tool
/// search tool) before its first search, as the [tool search tool] page
/// says: at first Claude sees only the tool search tool and the tools that
/// are not deferred; a deferred tool enters the context when a search
/// returns it.
/// So: every tool without `"defer_loading": true`, whole. (As for
/// [`openai_loaded_up_front`], the provider writes them in a form of its
/// own.)
///
/// [tool search tool]: https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::deferred::{AnthropicToolSearch, anthropic_loaded_up_front};
/// use serde_json::json;
///
/// let search = AnthropicToolSearch::Regex.definition();
/// let tools = [search.clone(), json!({ "name": "get_weather", "defer_loading": true })];
/// assert_eq!(anthropic_loaded_up_front(&tools), json!([search]));
/// ```
pub fn anthropic_loaded_up_front(tools: &[Value]) -> Value {
    Value::Array(
        tools
            .iter()
            .filter(|tool| !deferred(tool))
            .cloned()
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(violations: &[Violation]) -> Vec<(String, Rule)> {
        violations
            .iter()
            .map(|v| (v.path.clone(), v.rule))
            .collect()
    }

    fn at(path: &str, rule: Rule) -> (String, Rule) {
        (path.to_owned(), rule)
    }

    fn strict_function(name: &str, deferred: bool) -> Value {
        json!({
            "type": "function",
            "name": name,
            "description": "Does a thing.",
            "parameters": {
                "type": "object",
                "properties": { "a": { "type": "string" } },
                "required": ["a"],
                "additionalProperties": false
            },
            "strict": true,
            "defer_loading": deferred
        })
    }

    fn namespace(name: &str, tools: Vec<Value>) -> Value {
        json!({ "type": "namespace", "name": name, "description": "Things.", "tools": tools })
    }

    #[test]
    fn openai_accepts_namespaces_loaded_functions_and_the_search_tool() {
        let tools = [
            namespace(
                "things",
                vec![strict_function("a", true), strict_function("b", false)],
            ),
            strict_function("c", true),
            strict_function("d", false),
            json!({ "type": "tool_search" }),
        ];
        assert_eq!(check_openai_tool_search(&tools), []);
        // Nothing deferred: no search tool needed.
        assert_eq!(check_openai_tool_search(&[strict_function("d", false)]), []);
    }

    #[test]
    fn openai_namespace_rules() {
        let mut no_name = namespace("", vec![strict_function("a", true)]);
        no_name["description"] = json!("");
        let mut deferred_ns = namespace("ns", vec![strict_function("b", true)]);
        deferred_ns["defer_loading"] = json!(true);
        let empty = namespace("empty", vec![]);
        let nested = namespace(
            "outer",
            vec![namespace("inner", vec![strict_function("c", true)])],
        );
        let mut search = json!({ "type": "tool_search" });
        search["defer_loading"] = json!(false);
        let tools = [no_name, deferred_ns, empty, nested, search];
        assert_eq!(
            rules(&check_openai_tool_search(&tools)),
            [
                at("/tools/0", Rule::NamespaceName),
                at("/tools/0", Rule::NamespaceDescription),
                at("/tools/1", Rule::DeferredNamespace),
                at("/tools/2", Rule::NamespaceMember),
                at("/tools/3/tools/0", Rule::NamespaceMember),
                at("/tools/4", Rule::DeferredToolSearch),
            ]
        );
    }

    #[test]
    fn openai_functions_go_through_the_openai_checkers() {
        let mut open = strict_function("open", true);
        open["parameters"]["additionalProperties"] = json!(true);
        let tools = [
            namespace(
                "ns",
                vec![
                    open,
                    strict_function("bad.name", true),
                    strict_function("x", true),
                ],
            ),
            strict_function("x", false),
            json!({ "type": "tool_search" }),
        ];
        let found = check_openai_tool_search(&tools);
        assert_eq!(
            rules(&found),
            [
                at("/tools/0/tools/1", Rule::ToolName),
                at("/tools/1", Rule::DuplicateToolName),
                at("/tools/0/tools/0/parameters", Rule::OpenObject),
            ]
        );
        assert!(
            found[2].message.starts_with("tool `open`: "),
            "{}",
            found[2].message
        );
    }

    #[test]
    fn openai_counts_only_the_functions_loaded_up_front() {
        let deferred: Vec<Value> = (0..200)
            .map(|i| strict_function(&format!("d{i}"), true))
            .collect();
        let mut tools = vec![
            namespace("many", deferred),
            json!({ "type": "tool_search" }),
        ];
        assert_eq!(check_openai_tool_search(&tools), []);
        tools.extend((0..129).map(|i| strict_function(&format!("l{i}"), false)));
        let found = check_openai_tool_search(&tools);
        assert_eq!(rules(&found), [at("/tools", Rule::TooManyTools)]);
        assert!(
            found[0].message.contains("129 tools") && found[0].message.contains("up front"),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn openai_needs_the_search_tool_for_any_deferred_tool() {
        let mcp = json!({ "type": "mcp", "server_label": "deepwiki", "defer_loading": true });
        let found = check_openai_tool_search(&[mcp]);
        assert_eq!(rules(&found), [at("/tools", Rule::NoToolSearch)]);
        assert!(
            found[0].message.contains("`deepwiki`"),
            "{}",
            found[0].message
        );
    }

    fn anthropic_tool(name: &str, deferred: bool) -> Value {
        json!({
            "name": name,
            "description": "Does a thing.",
            "input_schema": { "type": "object", "properties": { "a": { "type": "string" } } },
            "defer_loading": deferred
        })
    }

    #[test]
    fn anthropic_rules() {
        let search = AnthropicToolSearch::Regex.definition();
        assert_eq!(
            check_anthropic_tool_search(&[search.clone(), anthropic_tool("a", true)]),
            []
        );
        // Not deferred at all: fine without a search tool.
        assert_eq!(
            check_anthropic_tool_search(&[anthropic_tool("a", false)]),
            []
        );

        let mut mismatched = AnthropicToolSearch::Bm25.definition();
        mismatched["name"] = json!("tool_search_tool_regex");
        let unknown =
            json!({ "type": "tool_search_tool_regex_20990101", "name": "tool_search_tool_regex" });
        let mut examples = anthropic_tool("b", false);
        examples["input_examples"] = json!([{ "a": "x" }]);
        let mut missing_schema = anthropic_tool("c", true);
        missing_schema
            .as_object_mut()
            .unwrap()
            .remove("input_schema");
        let tools = [mismatched, unknown, examples, missing_schema];
        assert_eq!(
            rules(&check_anthropic_tool_search(&tools)),
            [
                at("/tools/0", Rule::ToolSearchShape),
                at("/tools/1", Rule::ToolSearchShape),
                at("/tools/2", Rule::NotWithToolSearch),
                at("/tools/3/input_schema", Rule::RootNotObject),
                at("/tools/3/input_schema", Rule::MissingType),
            ]
        );
    }

    #[test]
    fn anthropic_catalog_limit() {
        let mut tools = vec![AnthropicToolSearch::Bm25.definition()];
        tools.extend(
            (0..ANTHROPIC_MAX_CATALOG_TOOLS).map(|i| anthropic_tool(&format!("t{i}"), true)),
        );
        assert_eq!(check_anthropic_tool_search(&tools), []);
        tools.push(anthropic_tool("one_more", true));
        let found = check_anthropic_tool_search(&tools);
        assert_eq!(rules(&found), [at("/tools", Rule::TooManyTools)]);
        assert!(
            found[0].message.contains("10001") && found[0].message.contains("10000"),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn anthropic_tools_go_through_the_anthropic_checkers() {
        let mut strict = anthropic_tool("s", true);
        strict["strict"] = json!(true);
        let tools = [
            AnthropicToolSearch::Regex.definition(),
            strict,
            anthropic_tool("has space", true),
            anthropic_tool("s", true),
        ];
        assert_eq!(
            rules(&check_anthropic_tool_search(&tools)),
            [
                at("/tools/2", Rule::ToolName),
                at("/tools/3", Rule::DuplicateToolName),
                at("/tools/1/input_schema", Rule::OpenObject),
            ]
        );
    }

    #[test]
    fn up_front_keeps_what_the_providers_load() {
        let tools = [
            namespace(
                "ns",
                vec![strict_function("a", true), strict_function("b", false)],
            ),
            strict_function("c", true),
            strict_function("d", false),
            json!({ "type": "tool_search" }),
        ];
        let seen = openai_loaded_up_front(&tools);
        assert_eq!(
            seen,
            json!([
                { "type": "namespace", "name": "ns", "description": "Things.", "tools": [strict_function("b", false)] },
                { "type": "function", "name": "c", "description": "Does a thing." },
                strict_function("d", false),
                { "type": "tool_search" }
            ])
        );
        let search = AnthropicToolSearch::Regex.definition();
        let loaded = anthropic_tool("b", false);
        assert_eq!(
            anthropic_loaded_up_front(&[search.clone(), anthropic_tool("a", true), loaded.clone()]),
            json!([search, loaded])
        );
    }

    #[test]
    fn namespace_names_follow_the_function_name_rule() {
        for service in ["links.v1.LinksService", "a.b-c.D_e", "x", "ünï.cödé"] {
            let name = openai_namespace_name(service);
            assert!(
                !name.is_empty()
                    && name.len() <= 64
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
                "{service} -> {name}"
            );
        }
    }
}
