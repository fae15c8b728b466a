//! One set of tools for a model loop: generated (proto) tools and native
//! ones, one alias namespace, one `execute`.

pub mod deferred;
mod operations;
#[cfg(feature = "tool-search")]
pub mod search;
#[cfg(feature = "semantic-search")]
pub mod semantic;
mod tool;

use std::collections::HashMap;
use std::sync::Arc;

use prost_reflect::DescriptorPool;
use proto_ai_tools_schema::select::{Problem, Selection, Subject};
use proto_ai_tools_schema::{Dialect, check, names, render};
use serde_json::{Value, json};

use crate::alias::AliasManager;
use crate::consent::{self, ConfirmClass, Consent, ConsentPolicy, ConsentRequest, Unsupported};
use crate::executor::{GeneratedExecutor, JsonNames, ProtoExecutor};
use crate::inbound::Arguments;
use crate::result::{ToolResult, refused_options_message, unknown_tool_message};
use crate::tool::{AgentTool, NativeTool};
use crate::transport::{BoxFuture, CallOptions, Transport};
use tool::Kind;
pub use tool::Tool;

/// The generated executors a [`Toolkit`] holds, whatever their transport:
/// the [`ProtoExecutor`] every generated executor wraps, seen through what
/// the toolkit needs of it.
trait GeneratedSource: Send + Sync + 'static {
    fn tools(&self) -> &'static [&'static AgentTool];
    fn alias_manager(&self) -> &Arc<AliasManager>;
    fn descriptor_pool(&self) -> &'static DescriptorPool;
    /// The executor's own defaults ([`ExecutorOptions::call`](crate::executor::ExecutorOptions::call)),
    /// under the toolkit's.
    fn call_defaults(&self) -> &CallOptions;
    /// Runs `tool`, one of [`tools`](Self::tools), with options worked out already.
    fn run<'a>(
        &'a self,
        tool: &'static AgentTool,
        args: Arguments<'a>,
        options: &'a CallOptions,
        names: JsonNames,
    ) -> BoxFuture<'a, ToolResult>;
    /// Long-running methods (`google.longrunning`), for the MCP server's
    /// tasks: see `executor/operations.rs`.
    fn operations(&self) -> &dyn operations::Operations;
}

impl<T: Transport> GeneratedSource for ProtoExecutor<T> {
    fn tools(&self) -> &'static [&'static AgentTool] {
        ProtoExecutor::tools(self)
    }

    fn alias_manager(&self) -> &Arc<AliasManager> {
        ProtoExecutor::alias_manager(self)
    }

    fn descriptor_pool(&self) -> &'static DescriptorPool {
        self.pool()
    }

    fn call_defaults(&self) -> &CallOptions {
        &self.options().call
    }

    fn run<'a>(
        &'a self,
        tool: &'static AgentTool,
        args: Arguments<'a>,
        options: &'a CallOptions,
        names: JsonNames,
    ) -> BoxFuture<'a, ToolResult> {
        Box::pin(ProtoExecutor::run(self, tool, args, options, names))
    }

    fn operations(&self) -> &dyn operations::Operations {
        self
    }
}

/// Why a [`Toolkit`] could not be built.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::{NativeTool, Toolkit, toolkit::ToolkitError};
/// #[derive(serde::Deserialize, proto_ai_tools::ToolInput)]
/// struct Args { text: String }
/// let echo = || NativeTool::new::<Args, _, _>("echo", "Echo.", |_, a: Args| async move { a.text });
/// let err = Toolkit::builder().native(echo()).native(echo()).build().unwrap_err();
/// assert_eq!(err, ToolkitError::DuplicateName("echo".into()));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolkitError {
    /// Two tools have the same name.
    #[error("two tools are named `{0}`; rename one of them")]
    DuplicateName(String),
    /// A native tool's name is not one every provider accepts.
    #[error("native tool `{name}`: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A native tool's input is not an object (a tool's arguments always are).
    #[error(
        "native tool `{0}` takes an input whose schema is not an object; use a struct with named fields"
    )]
    NotAnObject(String),
    /// A native tool's schema breaks a provider's documented limits.
    #[error("native tool `{tool}` cannot be rendered for {dialect}: {violations}")]
    Schema {
        /// The tool.
        tool: String,
        /// The dialect whose checker refused it.
        dialect: Dialect,
        /// What the checker found, joined with `; `.
        violations: String,
    },
    /// A generated executor uses another alias namespace than the toolkit.
    #[error(
        "the executor of tool `{0}` keeps its aliases in another alias manager than the toolkit's, so an alias one tool shows the model would mean nothing to the other tools: build the executor and the toolkit on the same `AliasManager` (`Executor::with_alias_manager(transport, aliases.clone())` with `Toolkit::builder().alias_manager(aliases)`, the aliases from `Sessions::alias_manager(conversation_id)`), or let the toolkit build the executor on its own: `Toolkit::builder().alias_manager(aliases).executor::<Executor<_>>(transport)`"
    )]
    SeparateAliasManagers(String),
    /// The selection ([`ToolkitBuilder::include`], [`exclude`](ToolkitBuilder::exclude),
    /// [`read_only`](ToolkitBuilder::read_only)) cannot be made: a pattern
    /// that is not a glob or matches no tool, or a selection that leaves no
    /// tool. Every problem, each the sentence a tool set or `ai_tools!`
    /// gives for it, one a line.
    #[error("{}", selection_sentences(.0))]
    Selection(Vec<Problem>),
}

/// The sentences of `problems`, one a line.
fn selection_sentences(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(Problem::message)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Collects the tools of a [`Toolkit`]; see [`Toolkit::builder`].
///
/// # Examples
///
/// ```
/// let toolkit = proto_ai_tools::Toolkit::builder().build().unwrap();
/// assert!(toolkit.tools().is_empty());
/// ```
#[derive(Default)]
pub struct ToolkitBuilder {
    aliases: Option<Arc<AliasManager>>,
    entries: Vec<Entry>,
    call_options: CallOptions,
    include: Vec<String>,
    exclude: Vec<String>,
    read_only: bool,
    max_tool_bytes: Option<usize>,
    json_names: JsonNames,
    consent: Consenting,
}

/// Who a toolkit asks before a `confirm` tool runs, and which tools are
/// `confirm` when they say nothing.
#[derive(Clone, Default)]
struct Consenting {
    /// The class confirmed (none unless set).
    class: Option<ConfirmClass>,
    hook: Option<crate::consent::Hook>,
    unsupported: Unsupported,
}

enum Entry {
    Generated(Arc<dyn GeneratedSource>),
    /// A generated executor built at [`ToolkitBuilder::build`] on the
    /// toolkit's alias manager ([`ToolkitBuilder::executor`]).
    OnToolkitAliases(OnAliases),
    Native(NativeTool),
}

/// Builds a generated executor on the alias manager it is given.
type OnAliases = Box<dyn FnOnce(Arc<AliasManager>) -> Arc<dyn GeneratedSource> + Send>;

impl ToolkitBuilder {
    /// Options every call carries unless the call's own override them
    /// ([`Toolkit::execute_with`]): for example a service credential, or
    /// the tenant of a conversation.
    ///
    /// # Examples
    ///
    /// See [`Toolkit::execute_with`].
    pub fn call_options(mut self, options: CallOptions) -> Self {
        self.call_options = options;
        self
    }

    /// Uses `aliases` as the conversation's namespace (from
    /// [`Sessions::alias_manager`](crate::Sessions::alias_manager)). Without
    /// it, the toolkit takes its first generated executor's, or a fresh one.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// let aliases = Arc::new(proto_ai_tools::AliasManager::new());
    /// let toolkit = proto_ai_tools::Toolkit::builder().alias_manager(aliases.clone()).build().unwrap();
    /// assert!(Arc::ptr_eq(toolkit.alias_manager(), &aliases));
    /// ```
    pub fn alias_manager(mut self, aliases: Arc<AliasManager>) -> Self {
        self.aliases = Some(aliases);
        self
    }

    /// Adds every tool of a generated executor (an `Executor<T>` of
    /// `ai_tools!`, or the [`ProtoExecutor`] of a
    /// [`ToolSet`](crate::tool_set::ToolSet)). It must use the toolkit's
    /// alias manager (build it with `with_alias_manager`), or
    /// [`executor`](Self::executor) builds it on that one.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::{Toolkit, executor::ProtoExecutor, transport::InProcessTransport};
    /// static POOL: std::sync::LazyLock<prost_reflect::DescriptorPool> =
    ///     std::sync::LazyLock::new(prost_reflect::DescriptorPool::new);
    ///
    /// let exec = ProtoExecutor::new(&[], &POOL, InProcessTransport::new());
    /// let aliases = exec.alias_manager().clone();
    /// let toolkit = Toolkit::builder().generated(exec).build().unwrap();
    /// assert!(std::sync::Arc::ptr_eq(toolkit.alias_manager(), &aliases));
    /// ```
    pub fn generated<T: Transport>(mut self, executor: impl Into<ProtoExecutor<T>>) -> Self {
        self.entries
            .push(Entry::Generated(Arc::new(executor.into())));
        self
    }

    /// Adds every tool of the generated executor `E` (an `Executor<T>` of
    /// `ai_tools!`) over `transport`, built on the toolkit's alias manager:
    /// the one [`alias_manager`](Self::alias_manager) gives, else the
    /// first [`generated`](Self::generated) executor's, else a fresh one.
    /// The alias manager is named once, here on the builder, and cannot
    /// differ from the executor's.
    ///
    /// # Examples
    ///
    /// ```
    /// mod links {
    ///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
    /// }
    /// use std::time::Duration;
    /// use proto_ai_tools::{Sessions, Toolkit, transport::InProcessTransport};
    ///
    /// let sessions = Sessions::new(InProcessTransport::new(), Duration::from_secs(1800));
    /// let aliases = sessions.alias_manager("conversation-42");
    /// let toolkit = Toolkit::builder()
    ///     .alias_manager(aliases.clone())
    ///     .executor::<links::Executor<_>>(sessions.transport().clone())
    ///     .build()
    ///     .unwrap();
    /// assert!(std::sync::Arc::ptr_eq(toolkit.alias_manager(), &aliases));
    /// assert!(toolkit.get("links_create").is_some());
    /// ```
    pub fn executor<E: GeneratedExecutor>(mut self, transport: E::Transport) -> Self {
        self.entries
            .push(Entry::OnToolkitAliases(Box::new(move |aliases| {
                Arc::new(E::with_alias_manager(transport, aliases).into())
            })));
        self
    }

    /// Adds a native tool.
    ///
    /// # Examples
    ///
    /// ```
    /// let echo = proto_ai_tools::NativeTool::new::<String, _, _>("echo", "Echo.", |_, s| async move { s });
    /// let toolkit = proto_ai_tools::Toolkit::builder().native(echo).build();
    /// assert!(toolkit.is_err()); // a `String` input is not an object
    /// ```
    pub fn native(mut self, tool: NativeTool) -> Self {
        self.entries.push(Entry::Native(tool));
        self
    }

    /// Keeps only the tools that match `pattern` or another include: a glob
    /// on the tool name (`links_*`), or, with a `/`, on the method
    /// `package.Service/Method` (`links.v1.LinksService/*`). A native tool
    /// has no method, so a pattern with a `/` never matches it.
    ///
    /// The rule is [`proto_ai_tools_schema::select`]'s, the one of a tool set's
    /// [`ToolSetOptions::include`](crate::tool_set::ToolSetOptions::include)
    /// and of `ai_tools!`'s `include` argument, applied to every tool added,
    /// generated and native, when the toolkit is built: a pattern that is not
    /// a glob or matches no tool, and a selection that leaves no tool, are
    /// [`ToolkitError::Selection`].
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::{NativeTool, Toolkit, ToolInput, schema::ToolHints};
    /// use proto_ai_tools::transport::InProcessTransport;
    ///
    /// mod links {
    ///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
    /// }
    /// #[derive(serde::Deserialize, ToolInput)]
    /// struct Query { text: String }
    /// let search = NativeTool::new::<Query, _, _>("docs_search", "Search the docs.", |_, q: Query| async move {
    ///     q.text
    /// })
    /// .hints(ToolHints { read_only: true, idempotent: true, destructive: None });
    /// let toolkit = || {
    ///     Toolkit::builder()
    ///         .generated(links::Executor::new(InProcessTransport::new()))
    ///         .native(search.clone())
    /// };
    ///
    /// let chosen = toolkit()
    ///     .include("links.v1.LinksService/*")
    ///     .include("docs_*")
    ///     .exclude("links_update")
    ///     .build()
    ///     .unwrap();
    /// let names: Vec<&str> = chosen.tools().iter().map(|t| t.name()).collect();
    /// assert_eq!(names, ["links_create", "links_list", "docs_search"]);
    ///
    /// // Read-only keeps the tools whose hints say so, generated or native.
    /// let read_only = toolkit().read_only(true).build().unwrap();
    /// let names: Vec<&str> = read_only.tools().iter().map(|t| t.name()).collect();
    /// assert_eq!(names, ["links_list", "docs_search"]);
    ///
    /// // A typo is an error naming the pattern, not an empty toolkit.
    /// let error = toolkit().include("link_*").build().unwrap_err();
    /// assert!(error.to_string().starts_with(
    ///     "include pattern `link_*` matches no tool name; the tool names are links_create,"
    /// ));
    /// ```
    pub fn include(mut self, pattern: impl Into<String>) -> Self {
        self.include.push(pattern.into());
        self
    }

    /// Drops the tools that match `pattern`, whatever the includes say; the
    /// same globs as [`include`](Self::include).
    ///
    /// # Examples
    ///
    /// See [`include`](Self::include).
    pub fn exclude(mut self, pattern: impl Into<String>) -> Self {
        self.exclude.push(pattern.into());
        self
    }

    /// Keeps only the tools whose hints say read-only, after the includes
    /// and excludes: a generated tool's method has `option
    /// idempotency_level = NO_SIDE_EFFECTS` (or an overlay's `read_only =
    /// true`), a native tool says so in [`NativeTool::hints`].
    ///
    /// # Examples
    ///
    /// See [`include`](Self::include).
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// The most bytes of minified JSON one whole tool definition may take,
    /// in every dialect and host profile (default
    /// [`render::DEFAULT_MAX_TOOL_BYTES`], 16 KiB; the parameters get what
    /// the name, title, description and examples leave,
    /// [`render::parameters_budget`]): past it, the nested objects deepest
    /// in the request are cut to a string holding their JSON text, which
    /// the executor reads back (see [`render::parameters_within`]). A large
    /// budget (`usize::MAX`) keeps every tool whole.
    ///
    /// # Examples
    ///
    /// ```
    /// mod gentools {
    ///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
    /// }
    /// use proto_ai_tools::schema::{Dialect, render::minified_len};
    ///
    /// let executor = gentools::Executor::new(proto_ai_tools::transport::InProcessTransport::new());
    /// let toolkit = proto_ai_tools::Toolkit::builder()
    ///     .generated(executor)
    ///     .max_tool_bytes(200)
    ///     .build()
    ///     .unwrap();
    /// let create = toolkit.get("links_create").unwrap().parameters(Dialect::OpenAi);
    /// // The links tools are flat: the smallest rendering, over the budget.
    /// assert!(minified_len(&create) > 200);
    /// ```
    pub fn max_tool_bytes(mut self, bytes: usize) -> Self {
        self.max_tool_bytes = Some(bytes);
        self
    }

    /// The names the fields of every generated tool's result are written
    /// under, and its output schema says: [`JsonNames::Proto`] (the
    /// default), the names the arguments use, so that a field read in one
    /// result is sent under the same name to the next tool; or
    /// [`JsonNames::Camel`], protojson's lowerCamelCase. It takes the place
    /// of each executor's own ([`ExecutorOptions::json_names`](crate::executor::ExecutorOptions::json_names)).
    ///
    /// # Examples
    ///
    /// ```
    /// mod gentools {
    ///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
    /// }
    /// use proto_ai_tools::executor::JsonNames;
    /// use proto_ai_tools::transport::InProcessTransport;
    ///
    /// let toolkit = |names| {
    ///     let executor = gentools::Executor::new(InProcessTransport::new());
    ///     proto_ai_tools::Toolkit::builder().generated(executor).json_names(names).build().unwrap()
    /// };
    /// let link = |names| {
    ///     let schema = toolkit(names).get("links_create").unwrap().output_schema().unwrap();
    ///     schema["properties"]["link"]["properties"].clone()
    /// };
    /// assert!(link(JsonNames::Proto).get("page_theme_id").is_some());
    /// assert!(link(JsonNames::Camel).get("pageThemeId").is_some());
    /// assert_eq!(toolkit(JsonNames::Camel).json_names(), JsonNames::Camel);
    /// ```
    pub fn json_names(mut self, names: JsonNames) -> Self {
        self.json_names = names;
        self
    }

    /// Which tools a person must approve when the tool itself says nothing
    /// (`rpc_tool.consent`): by default none (a toolkit asks only before the
    /// tools whose own policy is `confirm`). [`execute`](Toolkit::execute)
    /// asks the [`consent`](Self::consent) hook before each such call.
    ///
    /// # Examples
    ///
    /// See [`consent`](Self::consent).
    pub fn confirm(mut self, class: ConfirmClass) -> Self {
        self.consent.class = Some(class);
        self
    }

    /// The hook asked before a `confirm` tool runs: given the tool and the
    /// arguments as the model wrote them (aliases, not ids), it answers
    /// accept, decline or cancel; only accept runs the call. For programs
    /// that are not MCP servers, e.g. an agent that asks on its terminal
    /// (an MCP server asks through the host instead). Without a hook such
    /// a call follows [`consent_unsupported`](Self::consent_unsupported).
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::consent::{ConfirmClass, ConsentAnswer, ConsentRequest};
    /// use proto_ai_tools::schema::ToolHints;
    /// use proto_ai_tools::{NativeTool, Toolkit, ToolInput};
    /// #[derive(serde::Deserialize, ToolInput)]
    /// struct Input { path: String }
    /// let remove = NativeTool::new::<Input, _, _>("remove", "Remove a file.", |_, i: Input| async move { format!("removed {}", i.path) })
    ///     .hints(ToolHints { read_only: false, idempotent: true, destructive: Some(true) });
    /// let toolkit = Toolkit::builder()
    ///     .native(remove)
    ///     .confirm(ConfirmClass::Destructive)
    ///     .consent(|request: ConsentRequest| async move {
    ///         // Ask on the terminal here; this one refuses the root.
    ///         if request.arguments["path"] == "/" { ConsentAnswer::Decline } else { ConsentAnswer::Accept }
    ///     })
    ///     .build()
    ///     .unwrap();
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// assert_eq!(toolkit.execute("remove", r#"{"path":"a.txt"}"#).await.output, "removed a.txt");
    /// let refused = toolkit.execute("remove", r#"{"path":"/"}"#).await;
    /// assert!(refused.is_error && refused.output.contains("declined"));
    /// # });
    /// ```
    pub fn consent(mut self, hook: impl Consent) -> Self {
        self.consent.hook = Some(std::sync::Arc::new(hook));
        self
    }

    /// What a `confirm` tool's call does when the toolkit has no
    /// [`consent`](Self::consent) hook: refused (the default), or run.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::consent::{ConfirmClass, Unsupported};
    /// use proto_ai_tools::schema::ToolHints;
    /// use proto_ai_tools::{NativeTool, Toolkit, ToolInput};
    /// #[derive(serde::Deserialize, ToolInput)]
    /// struct Input {}
    /// let wipe = || NativeTool::new::<Input, _, _>("wipe", "Wipe.", |_, _: Input| async move { "wiped" })
    ///     .hints(ToolHints { read_only: false, idempotent: true, destructive: Some(true) });
    /// let refusing = Toolkit::builder().native(wipe()).confirm(ConfirmClass::Destructive).build().unwrap();
    /// let allowing = Toolkit::builder().native(wipe()).confirm(ConfirmClass::Destructive)
    ///     .consent_unsupported(Unsupported::Allow).build().unwrap();
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// assert!(refusing.execute("wipe", "{}").await.output.contains("needs a person's approval"));
    /// assert_eq!(allowing.execute("wipe", "{}").await.output, "wiped");
    /// # });
    /// ```
    pub fn consent_unsupported(mut self, unsupported: Unsupported) -> Self {
        self.consent.unsupported = unsupported;
        self
    }

    /// Checks the tools (native names valid, native schemas objects within
    /// every provider's limits, one alias namespace), keeps those the
    /// selection chooses ([`include`](Self::include),
    /// [`exclude`](Self::exclude), [`read_only`](Self::read_only)), checks
    /// that their names are unique, and builds the toolkit.
    ///
    /// # Errors
    ///
    /// The first [`ToolkitError`] found: a pattern that is not a glob;
    /// then a tool that fails its checks, in the order tools were added;
    /// then the selection's other problems; then a name two kept tools
    /// share (a selection can keep one of two tools of the same name).
    ///
    /// # Examples
    ///
    /// See [`ToolkitError`].
    pub fn build(self) -> Result<Toolkit, ToolkitError> {
        let ToolkitBuilder {
            aliases,
            entries,
            call_options,
            include,
            exclude,
            read_only,
            max_tool_bytes,
            json_names,
            consent,
        } = self;
        let max_bytes = max_tool_bytes.unwrap_or(render::DEFAULT_MAX_TOOL_BYTES);
        let selection =
            Selection::new(&include, &exclude, read_only).map_err(ToolkitError::Selection)?;
        let aliases = aliases.unwrap_or_else(|| {
            entries
                .iter()
                .find_map(|e| match e {
                    Entry::Generated(g) => Some(g.alias_manager().clone()),
                    Entry::OnToolkitAliases(_) | Entry::Native(_) => None,
                })
                .unwrap_or_default()
        });
        // The executors to be built on the toolkit's aliases, built.
        let entries = entries.into_iter().map(|entry| match entry {
            Entry::OnToolkitAliases(make) => Entry::Generated(make(aliases.clone())),
            other => other,
        });
        let mut added = Vec::new();
        for entry in entries {
            match entry {
                Entry::Generated(source) => {
                    for agent in source.tools() {
                        if !Arc::ptr_eq(source.alias_manager(), &aliases) {
                            return Err(ToolkitError::SeparateAliasManagers(agent.name.to_owned()));
                        }
                        added.push(Tool {
                            kind: Kind::Generated {
                                tool: agent,
                                source: source.clone(),
                            },
                            max_bytes,
                            json_names,
                        });
                    }
                }
                Entry::Native(native) => {
                    names::validate_tool_name(native.name()).map_err(|reason| {
                        ToolkitError::InvalidName {
                            name: native.name().to_owned(),
                            reason,
                        }
                    })?;
                    check_native(&native)?;
                    added.push(Tool {
                        kind: Kind::Native(native),
                        max_bytes,
                        json_names,
                    });
                }
                // built into `Generated` above
                Entry::OnToolkitAliases(_) => {}
            }
        }
        if !selection.is_everything() {
            added = selection
                .apply(added, subject)
                .map_err(ToolkitError::Selection)?;
        }
        let mut tools = Vec::with_capacity(added.len());
        let mut index = HashMap::new();
        for tool in added {
            push(&mut tools, &mut index, tool)?;
        }
        Ok(Toolkit {
            tools,
            index,
            aliases,
            call_options,
            json_names,
            consent,
        })
    }
}

/// `tool` as the selection sees it: a native tool is no proto method.
#[doc(hidden)]
pub fn subject(tool: &Tool) -> Subject<'_> {
    match &tool.kind {
        Kind::Generated { tool, .. } => Subject::of_method(
            tool.name,
            tool.method.service,
            tool.method.method,
            tool.hints.read_only,
        ),
        Kind::Native(native) => {
            Subject::without_method(native.name(), native.tool_hints().read_only)
        }
    }
}

fn push(
    tools: &mut Vec<Tool>,
    index: &mut HashMap<String, usize>,
    tool: Tool,
) -> Result<(), ToolkitError> {
    let name = tool.name().to_owned();
    if index.contains_key(&name) {
        return Err(ToolkitError::DuplicateName(name));
    }
    index.insert(name, tools.len());
    tools.push(tool);
    Ok(())
}

/// Checks `tool`'s schema against every dialect's checker, once per tool
/// and its clones (memoised in the tool): a per-scope toolkit builder that
/// clones the tools it made once pays for the check once.
fn check_native(tool: &NativeTool) -> Result<(), ToolkitError> {
    if tool.is_checked() {
        return Ok(());
    }
    check_native_schema(tool)?;
    tool.mark_checked();
    Ok(())
}

fn check_native_schema(tool: &NativeTool) -> Result<(), ToolkitError> {
    if tool.input().schema.as_object().is_none() {
        return Err(ToolkitError::NotAnObject(tool.name().to_owned()));
    }
    for dialect in Dialect::ALL {
        let violations = check::check(dialect, tool.is_strict(), &tool.parameters(dialect));
        if !violations.is_empty() {
            return Err(ToolkitError::Schema {
                tool: tool.name().to_owned(),
                dialect,
                violations: violations
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
            });
        }
    }
    Ok(())
}

/// Generated and native tools behind one name → tool map and one alias
/// namespace, for one conversation.
///
/// Build one per conversation with the conversation's alias manager
/// ([`Sessions::alias_manager`](crate::Sessions::alias_manager)), so that an
/// id one tool returns (`link-1`) is understood by every other tool.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::{NativeTool, Toolkit, ToolInput};
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
/// let toolkit = Toolkit::builder().native(search).build().unwrap();
///
/// let result = toolkit.execute("search", r#"{"query":"adapters"}"#).await;
/// assert_eq!(result.output, "query=adapters limit=None");
/// assert_eq!(toolkit.to_openai()[0]["function"]["name"], "search");
/// # }
/// ```
pub struct Toolkit {
    tools: Vec<Tool>,
    index: HashMap<String, usize>,
    aliases: Arc<AliasManager>,
    /// The defaults of every call (see [`ToolkitBuilder::call_options`]).
    call_options: CallOptions,
    /// The names results are written under ([`ToolkitBuilder::json_names`]).
    json_names: JsonNames,
    /// Who is asked before a `confirm` tool runs ([`ToolkitBuilder::consent`]).
    consent: Consenting,
}

impl std::fmt::Debug for Toolkit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Toolkit")
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl Toolkit {
    /// An empty builder.
    ///
    /// # Examples
    ///
    /// See [`Toolkit`].
    pub fn builder() -> ToolkitBuilder {
        ToolkitBuilder::default()
    }

    /// Every tool, in the order they were added.
    ///
    /// # Examples
    ///
    /// ```
    /// let toolkit = proto_ai_tools::Toolkit::builder().build().unwrap();
    /// assert_eq!(toolkit.tools().len(), 0);
    /// ```
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool named `name`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(proto_ai_tools::Toolkit::builder().build().unwrap().get("search").is_none());
    /// ```
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.index.get(name).map(|&i| &self.tools[i])
    }

    /// The conversation's alias namespace, shared by every tool.
    ///
    /// # Examples
    ///
    /// See [`ToolkitBuilder::alias_manager`].
    pub fn alias_manager(&self) -> &Arc<AliasManager> {
        &self.aliases
    }

    /// The options every call carries unless its own override them
    /// ([`ToolkitBuilder::call_options`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// let toolkit = proto_ai_tools::Toolkit::builder()
    ///     .call_options(proto_ai_tools::CallOptions::new().timeout(Duration::from_secs(5)))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(toolkit.call_options().timeout, Some(Duration::from_secs(5)));
    /// ```
    pub fn call_options(&self) -> &CallOptions {
        &self.call_options
    }

    /// The names the fields of results are written under
    /// ([`ToolkitBuilder::json_names`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::executor::JsonNames;
    /// assert_eq!(proto_ai_tools::Toolkit::builder().build().unwrap().json_names(), JsonNames::Proto);
    /// ```
    pub fn json_names(&self) -> JsonNames {
        self.json_names
    }

    /// Runs the tool `name` with the model's arguments: JSON text as the
    /// model sent it, or a value a host parsed already. Never
    /// panics: an unknown tool, bad arguments, a failed call, a tool's error
    /// or a panic in a native tool is a [`ToolResult`] with `is_error` set.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let toolkit = proto_ai_tools::Toolkit::builder().build().unwrap();
    /// let result = toolkit.execute("nope", "{}").await;
    /// assert!(result.is_error);
    /// assert!(result.output.contains("unknown tool `nope`"));
    /// # }
    /// ```
    pub async fn execute<'a>(&self, name: &str, args: impl Into<Arguments<'a>>) -> ToolResult {
        self.execute_with(name, args, &CallOptions::new()).await
    }

    /// [`execute`](Self::execute) on behalf of one end user: `options`
    /// (credentials, tenant, a deadline) override the toolkit's defaults
    /// ([`ToolkitBuilder::call_options`]) key by key. Generated tools send
    /// them as gRPC metadata; native tools see them in their
    /// [`ToolContext`](crate::ToolContext). A bad key is an error result that
    /// names it (never its value), and nothing runs.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::{CallOptions, NativeTool, ToolInput, Toolkit};
    /// /// No arguments.
    /// #[derive(serde::Deserialize, ToolInput)]
    /// struct Nothing {}
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let whoami = NativeTool::new::<Nothing, _, _>("whoami", "Who is calling.", |ctx, _| async move {
    ///     ctx.call_options().metadata.iter().find(|(k, _)| k == "x-user").map(|(_, v)| v.clone()).unwrap_or_default()
    /// });
    /// let toolkit = Toolkit::builder()
    ///     .native(whoami)
    ///     .call_options(CallOptions::new().metadata("x-user", "service"))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(toolkit.execute("whoami", "{}").await.output, "service");
    /// let call = CallOptions::new().metadata("x-user", "user-42");
    /// assert_eq!(toolkit.execute_with("whoami", "{}", &call).await.output, "user-42");
    /// let bad = CallOptions::new().metadata("x user", "secret");
    /// let result = toolkit.execute_with("whoami", "{}", &bad).await;
    /// assert!(result.is_error && !result.output.contains("secret"));
    /// # }
    /// ```
    pub async fn execute_with<'a>(
        &self,
        name: &str,
        args: impl Into<Arguments<'a>>,
        options: &CallOptions,
    ) -> ToolResult {
        let Some(tool) = self.get(name) else {
            let known = self.tools.iter().map(Tool::name);
            return ToolResult::error(unknown_tool_message(name, known));
        };
        let args = args.into();
        if let Some(refused) = self.ask(tool, &args).await {
            return refused;
        }
        self.run(tool, args, options).await
    }

    /// The consent policy of `tool` in this toolkit: its own
    /// (`rpc_tool.consent`), else `confirm` when the toolkit's
    /// [`confirm`](ToolkitBuilder::confirm) class holds it, else `allow`.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::consent::ConsentPolicy;
    /// use proto_ai_tools::{NativeTool, Toolkit, ToolInput};
    /// #[derive(serde::Deserialize, ToolInput)]
    /// struct Input {}
    /// let ping = NativeTool::new::<Input, _, _>("ping", "Ping.", |_, _: Input| async move { "pong" });
    /// let toolkit = Toolkit::builder().native(ping).build().unwrap();
    /// assert_eq!(toolkit.consent_policy(toolkit.get("ping").unwrap()), ConsentPolicy::Allow);
    /// ```
    pub fn consent_policy(&self, tool: &Tool) -> ConsentPolicy {
        let class = self.consent.class.unwrap_or(ConfirmClass::None);
        crate::consent::policy(tool.consent(), tool.hints(), class)
    }

    /// The toolkit's consent for a call of `tool`: `None` to run it, else
    /// the refusal the model reads. Audited ([`crate::consent`]).
    async fn ask(&self, tool: &Tool, args: &Arguments<'_>) -> Option<ToolResult> {
        let class = self.consent.class.unwrap_or(ConfirmClass::None);
        let ask = || match &self.consent.hook {
            Some(hook) => {
                // Text that does not parse is shown as it is; the run
                // refuses it, after an acceptance, without a call.
                let arguments = match args {
                    Arguments::Text(text) if text.trim().is_empty() => {
                        Value::Object(Default::default())
                    }
                    Arguments::Text(text) => serde_json::from_str(text)
                        .unwrap_or_else(|_| Value::String((*text).to_owned())),
                    Arguments::Value(value) => value.clone(),
                };
                Ok(hook.ask(ConsentRequest {
                    tool: tool.name().to_owned(),
                    title: tool.title().map(str::to_owned),
                    arguments,
                }))
            }
            None => Err("no one can be asked here (this program has no consent hook)"),
        };
        consent::decide(
            tool.name(),
            tool.consent(),
            tool.hints(),
            class,
            self.consent.unsupported,
            ask,
        )
        .await
        .refusal
        .map(ToolResult::error)
    }

    /// Runs `tool`, one of this toolkit's (looked up by the caller, once),
    /// with the call's `options`: merged over the executor's and the
    /// toolkit's defaults and checked here, once.
    #[doc(hidden)]
    pub async fn run(&self, tool: &Tool, args: Arguments<'_>, options: &CallOptions) -> ToolResult {
        match &tool.kind {
            Kind::Generated { tool, source } => {
                let defaults = source.call_defaults().overriding(&self.call_options);
                match options.for_tool(&defaults, tool.timeout) {
                    Ok(options) => source.run(tool, args, &options, self.json_names).await,
                    Err(problem) => ToolResult::error(refused_options_message(tool.name, &problem)),
                }
            }
            Kind::Native(native) => {
                let started = std::time::Instant::now();
                let (result, outcome) = match options.for_tool(&self.call_options, None) {
                    Ok(options) => native.run(self.aliases.clone(), args, &options).await,
                    Err(problem) => (
                        ToolResult::error(refused_options_message(native.name(), &problem)),
                        "options",
                    ),
                };
                let duration = started.elapsed();
                // A native tool's one INFO line, as a generated tool's
                // executor writes it (no method to name).
                tracing::info!(
                    tool = native.name(),
                    duration_ms = duration.as_secs_f64() * 1e3,
                    outcome,
                    "tool call"
                );
                let observer = options.observer.as_ref();
                if let Some(observer) = observer.or(self.call_options.observer.as_ref()) {
                    observer.record(&crate::transport::CallRecord::new(
                        native.name(),
                        outcome,
                        duration,
                    ));
                }
                result
            }
        }
    }

    /// Every tool in the shape of OpenAI Chat Completions' `tools`:
    /// `[{"type":"function","function":{name, description, parameters, strict}}]`.
    ///
    /// # Examples
    ///
    /// See [`Toolkit`].
    pub fn to_openai(&self) -> Value {
        Value::Array(self.tools.iter().map(Tool::to_openai).collect())
    }

    /// Every tool in the shape of Anthropic's `tools`:
    /// `[{name, description, input_schema}]`, with the tool's examples
    /// (`rpc_tool.examples`) as `input_examples` where it has some, and
    /// `strict: true` for strict tools as long as the request stays within
    /// Anthropic's strict budgets
    /// (at most [`ANTHROPIC_MAX_STRICT_TOOLS`](proto_ai_tools_schema::check::ANTHROPIC_MAX_STRICT_TOOLS)
    /// strict tools, [`ANTHROPIC_MAX_OPTIONAL_PARAMETERS`](proto_ai_tools_schema::check::ANTHROPIC_MAX_OPTIONAL_PARAMETERS)
    /// optional and [`ANTHROPIC_MAX_UNION_PARAMETERS`](proto_ai_tools_schema::check::ANTHROPIC_MAX_UNION_PARAMETERS)
    /// union-typed parameters in all). Anthropic refuses a whole request past
    /// those, so a strict tool that would overspend them is sent, in tool
    /// order, without `strict`: its schema is the same, only not enforced.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(proto_ai_tools::Toolkit::builder().build().unwrap().to_anthropic(), serde_json::json!([]));
    /// ```
    pub fn to_anthropic(&self) -> Value {
        use proto_ai_tools_schema::check::{
            ANTHROPIC_MAX_OPTIONAL_PARAMETERS, ANTHROPIC_MAX_STRICT_TOOLS,
            ANTHROPIC_MAX_UNION_PARAMETERS, strict_counts,
        };
        let (mut strict_tools, mut optional, mut unions) = (0_usize, 0_usize, 0_usize);
        let tools = self.tools.iter().map(|tool| {
            let mut shape = tool.to_anthropic();
            if tool.is_strict() {
                let counts = strict_counts(&shape["input_schema"]);
                let fits = strict_tools < ANTHROPIC_MAX_STRICT_TOOLS
                    && optional.saturating_add(counts.optional_parameters)
                        <= ANTHROPIC_MAX_OPTIONAL_PARAMETERS
                    && unions.saturating_add(counts.union_parameters)
                        <= ANTHROPIC_MAX_UNION_PARAMETERS;
                if fits {
                    strict_tools += 1;
                    optional += counts.optional_parameters;
                    unions += counts.union_parameters;
                } else if let Some(shape) = shape.as_object_mut() {
                    shape.remove("strict");
                }
            }
            shape
        });
        Value::Array(tools.collect())
    }

    /// Every tool in the shape of OpenAI Responses' `tools`:
    /// `[{"type":"function", name, description, parameters, strict}]`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(
    ///     proto_ai_tools::Toolkit::builder().build().unwrap().to_openai_responses(),
    ///     serde_json::json!([])
    /// );
    /// ```
    pub fn to_openai_responses(&self) -> Value {
        Value::Array(self.tools.iter().map(Tool::to_openai_responses).collect())
    }

    /// Every tool as one Gemini tool whose declarations carry JSON Schema:
    /// `{"functionDeclarations":[{name, description, parametersJsonSchema}]}`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(
    ///     proto_ai_tools::Toolkit::builder().build().unwrap().to_gemini_json_schema(),
    ///     serde_json::json!({"functionDeclarations": []})
    /// );
    /// ```
    pub fn to_gemini_json_schema(&self) -> Value {
        json!({
            "functionDeclarations": self
                .tools
                .iter()
                .map(Tool::to_gemini_json_schema)
                .collect::<Vec<_>>()
        })
    }

    /// Every tool as one Gemini tool:
    /// `{"functionDeclarations":[{name, description, parameters}]}`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(
    ///     proto_ai_tools::Toolkit::builder().build().unwrap().to_gemini(),
    ///     serde_json::json!({"functionDeclarations": []})
    /// );
    /// ```
    pub fn to_gemini(&self) -> Value {
        json!({ "functionDeclarations": self.tools.iter().map(Tool::to_gemini).collect::<Vec<_>>() })
    }
}
