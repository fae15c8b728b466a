//! Tool search for MCP hosts that have none of their own
//! ([`McpServer::with_tool_search`](super::McpServer::with_tool_search),
//! feature `tool-search`).
//!
//! An API of hundreds of RPCs is more than a model chooses well from, and
//! more than hosts take (VS Code caps a server at 128 tools). In this mode
//! `tools/list` shows four meta-tools, the tools without a toolset (native
//! ones) and the tools of the toolsets enabled so far:
//!
//! - [`SEARCH_TOOLS`] ranks every tool against the model's words
//!   ([`ToolIndex`]: BM25 over names, the descriptions' first sentences and
//!   the services' titles) and returns the best ones' definitions, each
//!   with its toolset and a one-line summary;
//! - [`LIST_TOOLSETS`] lists the toolsets, each with a one-line summary and
//!   its number of tools: for a model whose words match nothing, to browse;
//! - [`ENABLE_TOOLSET`] adds a toolset to the session's list and sends
//!   `notifications/tools/list_changed`, so a host that lists again shows
//!   the model its tools;
//! - [`CALL_TOOL`] calls any tool by name with its arguments: for hosts
//!   that never list again. It is the same call as `tools/call` of that
//!   tool: the same validation, scopes, deadline and aliases.
//!
//! A host that asks its user to approve each tool sees `call_tool`, not the
//! tool it calls, nor that tool's hints (`destructiveHint`). Inside the
//! server the call is checked as a direct one (OAuth tool scopes
//! included), but a host's own approval is not: where that approval
//! matters, serve write tools only to tokens that need them
//! (`--tool-scopes`), or serve tool search with `--read-only`.
//!
//! A toolset is a gRPC service ([`Tool::toolset`](proto_ai_tools::toolkit::Tool::toolset)). The enabled toolsets
//! belong to an MCP session (or to stdio's one client): a stateless request
//! (MCP 2026-07-28) has no session to keep them in, so there `tools/list`
//! shows the toolsets the server starts with, and the model calls the
//! others' tools through [`CALL_TOOL`].

use std::collections::{BTreeMap, BTreeSet};

use proto_ai_tools_schema::Dialect;
use proto_ai_tools_schema::inbound::kind_of;
use serde_json::{Value, json};

use proto_ai_tools::toolkit::Toolkit;
use proto_ai_tools::toolkit::search::{ToolIndex, service_title, summary};

/// The name of the meta-tool that searches the tools.
pub const SEARCH_TOOLS: &str = "search_tools";
/// The name of the meta-tool that enables a toolset.
pub const ENABLE_TOOLSET: &str = "enable_toolset";
/// The name of the meta-tool that calls a tool by name.
pub const CALL_TOOL: &str = "call_tool";
/// The name of the meta-tool that lists the toolsets.
pub const LIST_TOOLSETS: &str = "list_toolsets";

/// How many tools a search returns unless the model asks for another
/// number.
pub const DEFAULT_SEARCH_LIMIT: usize = 5;
/// The most tools one search returns: each comes with its whole schema.
pub const MAX_SEARCH_LIMIT: usize = 20;
/// The longest query a search takes, in bytes: a request of a few
/// sentences, where the cost of ranking grows with every word.
pub const MAX_QUERY_BYTES: usize = 1024;

/// How a server shows a model a few tools at a time; see the
/// [module docs](self).
///
/// # Examples
///
/// ```
/// use proto_ai_tools_mcp::{McpServer, ToolSearch};
///
/// let search = ToolSearch::new().toolset("links.v1.LinksService");
/// assert_eq!(search.toolsets, ["links.v1.LinksService"]);
/// let server = McpServer::from_toolkit(proto_ai_tools::Toolkit::builder().build().unwrap())
///     .with_tool_search(search);
/// # drop(server);
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ToolSearch {
    /// The toolsets listed from the start, by name (a gRPC service, fully
    /// qualified, or a name [`define`](Self::define)d); none unless set.
    pub toolsets: Vec<String>,
    /// Toolsets of the operator's own: a name and the globs of the tools in
    /// it (see [`define`](Self::define)).
    pub defined: Vec<(String, Vec<String>)>,
    /// Retrieval by meaning beside BM25 (feature `semantic-search`): the
    /// vectors' source and cache; see
    /// [`ToolIndex::with_embeddings`].
    #[cfg(feature = "semantic-search")]
    pub embeddings: Option<proto_ai_tools::toolkit::semantic::Embeddings>,
}

impl ToolSearch {
    /// Only the meta-tools (and tools without a toolset) listed at first.
    pub fn new() -> Self {
        Self::default()
    }

    /// Lists the tools of `toolset` from the start.
    pub fn toolset(mut self, toolset: impl Into<String>) -> Self {
        self.toolsets.push(toolset.into());
        self
    }

    /// A toolset named `name` of the tools that match any of `patterns`:
    /// globs on the tool name or, with a `/`, on `package.Service/Method`,
    /// by the rule of [`select`](proto_ai_tools_schema::select) (a pattern that
    /// matches no tool stops the server at start). A tool is listed when
    /// any toolset it is in is enabled, and a search names its defined
    /// toolset first. A name may not be a service's.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools_mcp::ToolSearch;
    ///
    /// let search = ToolSearch::new()
    ///     .define("links-read", ["links_list", "workflow_steps_*"])
    ///     .toolset("links-read");
    /// assert_eq!(search.defined[0].0, "links-read");
    /// ```
    pub fn define<I, S>(mut self, name: impl Into<String>, patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.defined
            .push((name.into(), patterns.into_iter().map(Into::into).collect()));
        self
    }

    /// Ranks tools by meaning as well as by words, fused
    /// ([`ToolIndex::with_embeddings`]): the tools' vectors are read from
    /// the cache or computed when the server starts, and a server whose
    /// vectors cannot be had does not start
    /// ([`ServeError::Embeddings`](super::ServeError::Embeddings)).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use proto_ai_tools_mcp::ToolSearch;
    /// use proto_ai_tools::toolkit::semantic::{Embeddings, LocalModel};
    ///
    /// let model = LocalModel::open("models/all-MiniLM-L6-v2")?;
    /// let search = ToolSearch::new().embeddings(Embeddings::new(model).cache_dir(".cache"));
    /// # drop(search);
    /// # Ok::<(), proto_ai_tools::toolkit::semantic::EmbeddingError>(())
    /// ```
    #[cfg(feature = "semantic-search")]
    pub fn embeddings(mut self, embeddings: proto_ai_tools::toolkit::semantic::Embeddings) -> Self {
        self.embeddings = Some(embeddings);
        self
    }
}

/// What every session of a server in tool-search mode shares: the index,
/// which toolset each tool is in, and the meta-tools' definitions.
pub(super) struct Catalog {
    index: ToolIndex,
    /// Tool name → its toolsets, defined ones first; tools without one are
    /// not here.
    toolset_of: BTreeMap<String, Vec<String>>,
    /// Toolset → its tools' names, in toolkit order.
    members: BTreeMap<String, Vec<String>>,
    /// Toolset → its one-line summary, as [`LIST_TOOLSETS`] gives it.
    summaries: BTreeMap<String, String>,
    /// The toolsets a session starts with.
    pub(super) initial: BTreeSet<String>,
    /// The four meta-tools, as listed.
    pub(super) meta_tools: Vec<rmcp::model::Tool>,
}

/// Why the toolsets cannot be made.
#[derive(Debug)]
pub(super) enum ToolsetProblem {
    /// A toolset named at start-up that no tool belongs to.
    Unknown { toolset: String, known: String },
    /// A defined toolset's name is taken, or its patterns are wrong.
    Definition(String),
    /// The tools' vectors for retrieval by meaning cannot be had.
    #[cfg(feature = "semantic-search")]
    Embeddings(proto_ai_tools::toolkit::semantic::EmbeddingError),
}

impl Catalog {
    /// The catalog of `toolkit`, starting with `search`'s toolsets.
    pub(super) fn new(
        toolkit: &Toolkit,
        search: &ToolSearch,
        dialect: Dialect,
    ) -> Result<Self, ToolsetProblem> {
        use proto_ai_tools_schema::select::Selection;
        let mut toolset_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut members: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut summaries: BTreeMap<String, String> = BTreeMap::new();
        for (name, patterns) in &search.defined {
            let taken = members.contains_key(name)
                || toolkit
                    .tools()
                    .iter()
                    .any(|t| t.toolset() == Some(name.as_str()));
            if taken || name.is_empty() {
                return Err(ToolsetProblem::Definition(format!(
                    "toolset `{name}` is defined twice, or is a service's name: give it a name of its own"
                )));
            }
            let problem = |problems: Vec<proto_ai_tools_schema::select::Problem>| {
                ToolsetProblem::Definition(format!(
                    "toolset `{name}`: {}",
                    problems
                        .iter()
                        .map(|p| p.message())
                        .collect::<Vec<_>>()
                        .join("; ")
                ))
            };
            let selection = Selection::new(patterns, &[], false).map_err(problem)?;
            let chosen = selection
                .apply(toolkit.tools().iter().collect(), |tool| {
                    proto_ai_tools::toolkit::subject(tool)
                })
                .map_err(problem)?;
            for tool in chosen {
                toolset_of
                    .entry(tool.name().to_owned())
                    .or_default()
                    .push(name.clone());
                members
                    .entry(name.clone())
                    .or_default()
                    .push(tool.name().to_owned());
            }
        }
        for (name, _) in &search.defined {
            let count = members.get(name).map_or(0, Vec::len);
            summaries.insert(
                name.clone(),
                format!("The operator's own toolset of {count} tools."),
            );
        }
        for tool in toolkit.tools() {
            if let Some(toolset) = tool.toolset() {
                if !summaries.contains_key(toolset)
                    && let Some(title) = service_title(tool)
                {
                    summaries.insert(toolset.to_owned(), title);
                }
                toolset_of
                    .entry(tool.name().to_owned())
                    .or_default()
                    .push(toolset.to_owned());
                members
                    .entry(toolset.to_owned())
                    .or_default()
                    .push(tool.name().to_owned());
            }
        }
        let mut initial = BTreeSet::new();
        for toolset in &search.toolsets {
            if !members.contains_key(toolset) {
                return Err(ToolsetProblem::Unknown {
                    toolset: toolset.clone(),
                    known: members.keys().cloned().collect::<Vec<_>>().join(", "),
                });
            }
            initial.insert(toolset.clone());
        }
        #[cfg(feature = "semantic-search")]
        let index = match &search.embeddings {
            Some(embeddings) => ToolIndex::with_embeddings(toolkit, embeddings)
                .map_err(ToolsetProblem::Embeddings)?,
            None => ToolIndex::new(toolkit),
        };
        #[cfg(not(feature = "semantic-search"))]
        let index = ToolIndex::new(toolkit);
        Ok(Self {
            index,
            toolset_of,
            members,
            summaries,
            initial,
            meta_tools: meta_tools(dialect),
        })
    }

    /// Whether `name` is one of the meta-tools.
    pub(super) fn is_meta(name: &str) -> bool {
        [SEARCH_TOOLS, LIST_TOOLSETS, ENABLE_TOOLSET, CALL_TOOL].contains(&name)
    }

    /// Whether a session with `enabled` toolsets lists the tool `name`.
    pub(super) fn listed(&self, name: &str, enabled: &BTreeSet<String>) -> bool {
        self.toolset_of
            .get(name)
            .is_none_or(|toolsets| toolsets.iter().any(|t| enabled.contains(t)))
    }

    /// The answer to [`SEARCH_TOOLS`]: the best tools' definitions as
    /// `listed` renders them, each with its toolset, as JSON text.
    pub(super) fn search(
        &self,
        arguments: &serde_json::Map<String, Value>,
        listed: impl Fn(&str) -> Option<rmcp::model::Tool>,
    ) -> Result<String, String> {
        let query = match arguments.get("query") {
            Some(Value::String(query)) if query.len() > MAX_QUERY_BYTES => {
                return Err(format!(
                    "`query` is {} bytes long: say what the tool should do in at most {MAX_QUERY_BYTES}",
                    query.len()
                ));
            }
            Some(Value::String(query)) if !query.trim().is_empty() => query,
            Some(Value::String(_)) => {
                return Err("`query` is empty: say in words what the tool should do".into());
            }
            Some(other) => {
                return Err(format!(
                    "`query` is {}, not a string: send the words to search for as a string",
                    kind_of(other)
                ));
            }
            None => return Err("`query` is missing: say in words what the tool should do".into()),
        };
        let limit = match arguments.get("limit") {
            None | Some(Value::Null) => DEFAULT_SEARCH_LIMIT,
            // 5.0 is an integer to JSON Schema, as 5 is.
            Some(Value::Number(n)) => match n.as_f64().filter(|f| f.fract() == 0.0) {
                Some(f) if (1.0..=MAX_SEARCH_LIMIT as f64).contains(&f) => f as usize,
                _ => {
                    return Err(format!(
                        "`limit` is {n}: send a whole number from 1 to {MAX_SEARCH_LIMIT}, or leave it out for {DEFAULT_SEARCH_LIMIT}"
                    ));
                }
            },
            Some(other) => {
                return Err(format!(
                    "`limit` is {}, not a number: send a whole number from 1 to {MAX_SEARCH_LIMIT}",
                    kind_of(other)
                ));
            }
        };
        if let Some(unknown) = arguments.keys().find(|k| *k != "query" && *k != "limit") {
            return Err(format!(
                "`{unknown}` is not a parameter of {SEARCH_TOOLS}; it takes `query` and `limit`"
            ));
        }
        // Filtered before it is cut: a caller whose token opens fewer tools
        // still gets the best `limit` of those it may use.
        let found: Vec<Value> = self
            .index
            .ranked(query)
            .filter_map(|found| {
                let tool = listed(&found.name)?;
                Some(json!({
                    "name": tool.name,
                    "toolset": self.toolset_of.get(found.name.as_str()).and_then(|t| t.first()),
                    "summary": summary(tool.description.as_deref().unwrap_or_default()),
                    "description": tool.description,
                    "inputSchema": Value::Object(tool.input_schema.as_ref().clone()),
                }))
            })
            .take(limit)
            .collect();
        let note = if found.is_empty() {
            "No tool matches those words: try other words for what the tool should do, or browse the toolsets with list_toolsets."
        } else {
            "Call a tool found here through call_tool with its name and arguments, or enable its toolset (enable_toolset) to have its tools listed."
        };
        Ok(json!({ "tools": found, "note": note }).to_string())
    }

    /// The answer to [`LIST_TOOLSETS`]: every toolset with a tool that
    /// `usable` allows, by name, with its one-line summary and how many of
    /// its tools `usable` allows, as JSON text.
    pub(super) fn toolsets(
        &self,
        arguments: &serde_json::Map<String, Value>,
        usable: impl Fn(&str) -> bool,
    ) -> Result<String, String> {
        if let Some(unknown) = arguments.keys().next() {
            return Err(format!(
                "`{unknown}` is not a parameter of {LIST_TOOLSETS}; it takes none"
            ));
        }
        let toolsets: Vec<Value> = self
            .members
            .iter()
            .filter_map(|(name, tools)| {
                let count = tools.iter().filter(|tool| usable(tool)).count();
                (count > 0).then(|| {
                    json!({
                        "name": name,
                        "summary": self.summaries.get(name),
                        "tools": count,
                    })
                })
            })
            .collect();
        Ok(json!({
            "toolsets": toolsets,
            "note": "Search a toolset's tools with search_tools in its words, or enable it (enable_toolset) to have its tools listed.",
        })
        .to_string())
    }

    /// The toolset [`ENABLE_TOOLSET`] names in `arguments`, and its tools.
    pub(super) fn toolset<'a>(
        &'a self,
        arguments: &serde_json::Map<String, Value>,
    ) -> Result<(&'a str, &'a [String]), String> {
        let name = match arguments.get("toolset") {
            Some(Value::String(name)) => name,
            Some(other) => {
                return Err(format!(
                    "`toolset` is {}, not a string: send a toolset's name as search_tools returns it",
                    kind_of(other)
                ));
            }
            None => {
                return Err(
                    "`toolset` is missing: send a toolset's name as search_tools returns it".into(),
                );
            }
        };
        if let Some(unknown) = arguments.keys().find(|k| *k != "toolset") {
            return Err(format!(
                "`{unknown}` is not a parameter of {ENABLE_TOOLSET}; it takes `toolset`"
            ));
        }
        match self.members.get_key_value(name.as_str()) {
            Some((name, tools)) => Ok((name, tools)),
            None => Err(format!(
                "there is no toolset `{}`; {}",
                proto_ai_tools_schema::inbound::shorten(name),
                self.closest_toolsets(name)
            )),
        }
    }

    /// The toolsets whose last name part matches `name`'s, or else a
    /// pointer to the search.
    fn closest_toolsets(&self, name: &str) -> String {
        let last = |s: &str| s.rsplit('.').next().unwrap_or(s).to_ascii_lowercase();
        let wanted = last(name);
        let close: Vec<&str> = self
            .members
            .keys()
            .filter(|t| last(t) == wanted)
            .map(String::as_str)
            .collect();
        if close.is_empty() {
            format!("{SEARCH_TOOLS} returns each tool's toolset")
        } else {
            format!("did you mean {}?", close.join(" or "))
        }
    }
}

/// The meta-tools' definitions in `dialect`: plain objects of strings and
/// integers, closed (`additionalProperties: false`) where the dialect
/// allows it (Gemini's does not). The server checks them as it checks
/// every listed tool.
pub(super) fn meta_tools(dialect: Dialect) -> Vec<rmcp::model::Tool> {
    let tool = |name: &'static str, description: &'static str, schema: Value| {
        let mut schema = schema.as_object().cloned().unwrap_or_default();
        if dialect == Dialect::Gemini {
            schema.remove("additionalProperties");
        }
        let mut tool = rmcp::model::Tool::new(name, description, std::sync::Arc::new(schema));
        tool.annotations = Some(rmcp::model::ToolAnnotations::from_raw(
            None,
            Some(name != CALL_TOOL),
            None,
            None,
            None,
        ));
        tool
    };
    vec![
        tool(
            SEARCH_TOOLS,
            "Find the tools for a task among all of this server's tools, most of which are not listed. Describe in words what you want to do; the best matching tools come back with their full definitions (name, description, inputSchema) and toolset. Search before saying a task cannot be done.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What the tool should do, in words: \"stop a virtual machine\", \"list firewall rules\"."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT, "description": "How many tools to return (default 5)."}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
        ),
        tool(
            LIST_TOOLSETS,
            "List this server's toolsets (groups of related tools), each with a one-line summary and its number of tools. Browse them when search_tools finds nothing for your words.",
            json!({
                "type": "object",
                "properties": {},
                "additionalProperties": false
            }),
        ),
        tool(
            ENABLE_TOOLSET,
            "List the tools of a toolset (as search_tools names it) from now on in this session. Hosts that list tools again then show them; otherwise use call_tool.",
            json!({
                "type": "object",
                "properties": {
                    "toolset": {"type": "string", "description": "A toolset's name, exactly as search_tools returns it."}
                },
                "required": ["toolset"],
                "additionalProperties": false
            }),
        ),
        tool(
            CALL_TOOL,
            "Call a tool that search_tools found, by name, with arguments that follow its inputSchema: the same as calling it directly.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The tool's name, as search_tools returns it."},
                    "arguments": {"type": "object", "description": "The tool's arguments, following its inputSchema (leave it out for a tool that takes none)."}
                },
                "required": ["name"],
                "additionalProperties": false
            }),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A catalog of one generated toolset (the links service) and one
    /// native tool.
    fn catalog() -> Catalog {
        #[derive(serde::Deserialize, proto_ai_tools::ToolInput)]
        struct Input {
            text: String,
        }
        let echo = proto_ai_tools::NativeTool::new::<Input, _, _>(
            "echo",
            "Echo the text.",
            |_, i: Input| async move { i.text },
        );
        static POOL: std::sync::LazyLock<proto_ai_tools::prost_reflect::DescriptorPool> =
            std::sync::LazyLock::new(proto_ai_tools::prost_reflect::DescriptorPool::new);
        let toolkit = Toolkit::builder()
            .generated(proto_ai_tools::executor::ProtoExecutor::new(
                &[],
                &POOL,
                proto_ai_tools::transport::InProcessTransport::new(),
            ))
            .native(echo)
            .build()
            .expect("a toolkit");
        Catalog::new(&toolkit, &ToolSearch::new(), Dialect::Anthropic)
            .unwrap_or_else(|e| panic!("{e:?}"))
    }

    fn searched(arguments: Value) -> Result<String, String> {
        let Value::Object(arguments) = arguments else {
            panic!("an object")
        };
        catalog().search(&arguments, |name| {
            Some(rmcp::model::Tool::new(
                name.to_owned(),
                "d",
                std::sync::Arc::new(serde_json::Map::new()),
            ))
        })
    }

    #[test]
    fn a_search_holds_its_arguments_to_their_bounds() {
        let found = searched(json!({"query": "echo the text"})).expect("found");
        assert!(found.contains("\"name\":\"echo\""), "{found}");
        assert!(
            searched(json!({"query": "echo", "limit": 5.0})).is_ok(),
            "5.0 is 5"
        );
        let long = "word ".repeat(MAX_QUERY_BYTES / 5 + 1);
        assert_eq!(
            searched(json!({ "query": long })).unwrap_err(),
            format!(
                "`query` is {} bytes long: say what the tool should do in at most {MAX_QUERY_BYTES}",
                long.len()
            )
        );
        for (arguments, problem) in [
            (json!({"query": " "}), "`query` is empty"),
            (json!({}), "`query` is missing"),
            (json!({"query": 3}), "`query` is a number, not a string"),
            (
                json!({"query": "x", "limit": 0}),
                "`limit` is 0: send a whole number from 1 to 20",
            ),
            (json!({"query": "x", "limit": 21}), "`limit` is 21"),
            (json!({"query": "x", "limit": 2.5}), "`limit` is 2.5"),
            (
                json!({"query": "x", "limit": "5"}),
                "`limit` is a string, not a number",
            ),
            (
                json!({"query": "x", "page": 2}),
                "`page` is not a parameter of search_tools",
            ),
        ] {
            let refused = searched(arguments.clone()).unwrap_err();
            assert!(refused.starts_with(problem), "{arguments}: {refused}");
        }
    }

    mod links {
        proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
    }

    fn links_toolkit() -> Toolkit {
        Toolkit::builder()
            .generated(links::Executor::new(
                proto_ai_tools::transport::InProcessTransport::new(),
            ))
            .build()
            .expect("a toolkit")
    }

    #[test]
    fn a_defined_toolset_lists_its_tools_and_is_named_first() {
        let search = ToolSearch::new()
            .define(
                "reading",
                ["links_list", "links.v1.WorkflowStepsService/Delete*"],
            )
            .toolset("reading");
        let catalog = Catalog::new(&links_toolkit(), &search, Dialect::Anthropic)
            .unwrap_or_else(|e| panic!("{e:?}"));
        let enabled = catalog.initial.clone();
        let listed: Vec<&str> = ["links_create", "links_list", "workflow_steps_delete"]
            .into_iter()
            .filter(|name| catalog.listed(name, &enabled))
            .collect();
        assert_eq!(listed, ["links_list", "workflow_steps_delete"]);
        assert_eq!(
            catalog.toolset_of["links_list"],
            ["reading", "links.v1.LinksService"],
            "the defined toolset first, its service after"
        );
        let (name, tools) = catalog
            .toolset(
                json!({"toolset": "reading"})
                    .as_object()
                    .expect("an object"),
            )
            .expect("a toolset");
        assert_eq!(
            (name, tools),
            (
                "reading",
                &["links_list".to_owned(), "workflow_steps_delete".to_owned()][..]
            )
        );
    }

    #[test]
    fn a_defined_toolset_that_cannot_be_made_is_said_at_start() {
        let problem = |search: ToolSearch| match Catalog::new(
            &links_toolkit(),
            &search,
            Dialect::Anthropic,
        ) {
            Err(ToolsetProblem::Definition(problem)) => problem,
            other => panic!("{:?}", other.map(|_| ())),
        };
        assert!(
            problem(ToolSearch::new().define("reading", ["link_*"]))
                .starts_with("toolset `reading`: include pattern `link_*` matches no tool name"),
        );
        assert_eq!(
            problem(ToolSearch::new().define("links.v1.LinksService", ["links_list"])),
            "toolset `links.v1.LinksService` is defined twice, or is a service's name: give it a name of its own"
        );
        assert!(
            problem(
                ToolSearch::new()
                    .define("a", ["links_*"])
                    .define("a", ["links_*"])
            )
            .contains("defined twice")
        );
    }

    #[test]
    fn list_toolsets_gives_each_toolset_a_summary_and_its_usable_tools() {
        let search = ToolSearch::new().define("reading", ["links_list"]);
        let catalog = Catalog::new(&links_toolkit(), &search, Dialect::Anthropic)
            .unwrap_or_else(|e| panic!("{e:?}"));
        let none = serde_json::Map::new();
        let listed: Value =
            serde_json::from_str(&catalog.toolsets(&none, |_| true).expect("listed"))
                .expect("JSON");
        let toolsets = listed["toolsets"].as_array().expect("toolsets");
        let links = toolsets
            .iter()
            .find(|t| t["name"] == "links.v1.LinksService")
            .expect("the links service");
        let summary = links["summary"].as_str().expect("a summary");
        assert!(!summary.is_empty() && !summary.contains('\n'), "{summary}");
        assert_eq!(links["tools"], 3);
        let reading = toolsets
            .iter()
            .find(|t| t["name"] == "reading")
            .expect("the defined toolset");
        assert_eq!(reading["summary"], "The operator's own toolset of 1 tools.");
        // A toolset none of whose tools the caller may use is not shown.
        let some: Value = serde_json::from_str(
            &catalog
                .toolsets(&none, |name| name != "links_list")
                .expect("listed"),
        )
        .expect("JSON");
        assert!(
            !some["toolsets"]
                .as_array()
                .expect("toolsets")
                .iter()
                .any(|t| t["name"] == "reading"),
            "{some}"
        );
        let arguments = json!({"page": 2});
        assert_eq!(
            catalog
                .toolsets(arguments.as_object().expect("an object"), |_| true)
                .unwrap_err(),
            "`page` is not a parameter of list_toolsets; it takes none"
        );
    }

    #[test]
    fn a_search_hit_carries_a_one_line_summary() {
        let found = searched(json!({"query": "echo the text"})).expect("found");
        let found: Value = serde_json::from_str(&found).expect("JSON");
        assert_eq!(found["tools"][0]["summary"], "d");
        assert!(Catalog::is_meta(LIST_TOOLSETS));
        assert_eq!(meta_tools(Dialect::Anthropic).len(), 4);
    }

    #[test]
    fn the_meta_tools_pass_every_dialects_checker() {
        for dialect in Dialect::ALL {
            for tool in meta_tools(dialect) {
                let schema = Value::Object(tool.input_schema.as_ref().clone());
                let violations = proto_ai_tools_schema::check::check(dialect, false, &schema);
                assert!(
                    violations.is_empty(),
                    "{} in {dialect}: {violations:?}",
                    tool.name
                );
            }
        }
    }
}
