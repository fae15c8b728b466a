//! Tools built at run time from descriptors: what `ai_tools!` builds at
//! compile time, for protos that arrive as an encoded `FileDescriptorSet`
//! (`protoc --descriptor_set_out`, `buf build -o`) or from a server.

use std::collections::HashSet;
use std::fmt;
use std::time::Duration;

use prost_reflect::DescriptorPool;
use proto_ai_tools_schema::overlay::{Overlay, PlainFields, annotate};
use proto_ai_tools_schema::select::{self, Selection};
use proto_ai_tools_schema::{ANNOTATION_DESCRIPTORS, FieldAlias, RPC_TOOL_EXTENSION, ToolSpec};

use crate::alias::{AliasManager, FieldPrefix};
use crate::executor::ProtoExecutor;
use crate::tool::AgentTool;
use crate::tool::construct::{
    agent_tool, field_prefix, method_ref, ready, renderings, with_consent, with_hints,
    with_output_schema, with_timeout,
};
use crate::transport::Transport;

#[cfg(feature = "reflection")]
mod reflection;

/// What a run-time tool set exposes, besides methods annotated in the protos,
/// and which of its tools it keeps.
///
/// # Choosing tools
///
/// Of the tools built (the annotated methods, the overlay's and the whole
/// services'), a set keeps those the selection chooses:
///
/// - with [`include`](Self::include) patterns, a tool must match one of
///   them;
/// - a tool that matches an [`exclude`](Self::exclude) pattern is dropped;
/// - then [`read_only`](Self::read_only) keeps only the tools whose hints
///   say read-only ([`ToolHints::read_only`](proto_ai_tools_schema::ToolHints::read_only):
///   the method's `option idempotency_level = NO_SIDE_EFFECTS`, or an
///   overlay's `read_only = true`).
///
/// The rule is [`proto_ai_tools_schema::select`]'s, which `ai_tools!`'s
/// `include`, `exclude` and `read_only` arguments and
/// [`ToolkitBuilder`](crate::toolkit::ToolkitBuilder)'s methods of the same
/// names follow too. A pattern is a glob (`globset`'s syntax: `*`, `?`,
/// `[abc]`, `{a,b}`; case-sensitive, matched whole). A pattern with a `/`
/// in it is matched against the fully qualified method, written
/// `package.Service/Method` as in the gRPC path: `links.v1.LinksService/*`
/// is every tool of one service, `links.v1.LinksService/CreateLink` one
/// method. Any other pattern is matched against the tool name: `links_*`.
///
/// A pattern that matches no tool at all is an error when the set is built
/// ([`ToolSetError`], naming the pattern and some tools), and so is a
/// selection that leaves no tool: a typo never exposes nothing, nor, in an
/// exclude, everything.
///
/// # Examples
///
/// ```
/// let options = proto_ai_tools::tool_set::ToolSetOptions::new()
///     .service("google.longrunning.Operations");
/// assert_eq!(options.services, ["google.longrunning.Operations"]);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolSetOptions {
    /// Annotations from outside the protos (see
    /// [`proto_ai_tools_schema::overlay`]).
    pub overlay: Option<Overlay>,
    /// Services whose every unary and server-streaming method is a tool.
    pub services: Vec<String>,
    /// Whether the plain fields of those services' requests (not
    /// `optional`, not in a oneof, not `field_behavior = REQUIRED`) are
    /// required: [`PlainFields::Optional`] unless set (see
    /// [`proto_ai_tools_schema::overlay`] for why).
    pub plain_fields: PlainFields,
    /// How long `ToolSet::from_reflection` (feature `reflection`) may take
    /// for the whole exchange with the server, connecting included:
    /// [`DEFAULT_REFLECTION_TIMEOUT`] unless set.
    pub reflection_timeout: Duration,
    /// Globs of which a tool must match one to be kept; none keeps every
    /// tool (see [Choosing tools](Self#choosing-tools)).
    pub include: Vec<String>,
    /// Globs that drop the tools they match.
    pub exclude: Vec<String>,
    /// Whether only the read-only tools are kept.
    pub read_only: bool,
}

/// How long reflecting a server may take unless
/// [`ToolSetOptions::reflection_timeout`] says otherwise: 30 seconds, ample
/// for a server of thousands of files, short enough that a server which
/// accepts the connection and never answers is reported, not waited on.
pub const DEFAULT_REFLECTION_TIMEOUT: Duration = Duration::from_secs(30);

impl Default for ToolSetOptions {
    fn default() -> Self {
        Self {
            overlay: None,
            services: Vec::new(),
            plain_fields: PlainFields::Optional,
            reflection_timeout: DEFAULT_REFLECTION_TIMEOUT,
            include: Vec::new(),
            exclude: Vec::new(),
            read_only: false,
        }
    }
}

impl ToolSetOptions {
    /// No overlay, no whole services: the annotated methods only; the
    /// default reflection timeout.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bounds the whole reflection exchange of `ToolSet::from_reflection`
    /// (feature `reflection`); [`DEFAULT_REFLECTION_TIMEOUT`] otherwise.
    pub fn reflection_timeout(mut self, timeout: Duration) -> Self {
        self.reflection_timeout = timeout;
        self
    }

    /// Adds the annotations of `overlay`.
    pub fn overlay(mut self, overlay: Overlay) -> Self {
        self.overlay = Some(overlay);
        self
    }

    /// Exposes every unary and server-streaming method of `service`: a fully
    /// qualified name, or a glob over them (`google.cloud.compute.v1.*`; a
    /// glob that matches no service is an error when the set is built).
    pub fn service(mut self, service: impl Into<String>) -> Self {
        self.services.push(service.into());
        self
    }

    /// Says whether the plain fields of the services exposed whole are
    /// required; by default they are optional, and only
    /// `(google.api.field_behavior) = REQUIRED` fields are required (an
    /// overlay's `required` decides for one field either way).
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::schema::overlay::PlainFields;
    ///
    /// let options = proto_ai_tools::tool_set::ToolSetOptions::new()
    ///     .service("google.longrunning.Operations")
    ///     .plain_fields(PlainFields::Required);
    /// assert_eq!(options.plain_fields, PlainFields::Required);
    /// assert_eq!(proto_ai_tools::tool_set::ToolSetOptions::new().plain_fields, PlainFields::Optional);
    /// ```
    pub fn plain_fields(mut self, plain_fields: PlainFields) -> Self {
        self.plain_fields = plain_fields;
        self
    }

    /// Keeps only the tools that match `pattern` or another include: a glob
    /// on the tool name (`links_*`), or, with a `/`, on the method
    /// `package.Service/Method` (`links.v1.LinksService/*`). See
    /// [Choosing tools](Self#choosing-tools).
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::tool_set::{ToolSet, ToolSetOptions};
    ///
    /// mod links {
    ///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
    /// }
    /// let bytes = links::descriptor_pool().encode_to_vec();
    ///
    /// let options = ToolSetOptions::new()
    ///     .include("links_*")
    ///     .include("links.v1.WorkflowStepsService/DeleteWorkflowStep");
    /// let set = ToolSet::from_descriptor_set(&bytes, &options).expect("tools");
    /// let names: Vec<&str> = set.tools().iter().map(|t| t.name).collect();
    /// assert_eq!(names, ["links_create", "links_update", "links_list", "workflow_steps_delete"]);
    ///
    /// // A typo is an error that names the pattern, not an empty set.
    /// let typo = ToolSetOptions::new().include("link_*");
    /// let error = ToolSet::from_descriptor_set(&bytes, &typo).unwrap_err();
    /// assert!(error.to_string().starts_with("include pattern `link_*` matches no tool name; the tool names are links_create,"));
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
    /// ```
    /// use proto_ai_tools::tool_set::{ToolSet, ToolSetOptions};
    ///
    /// mod links {
    ///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
    /// }
    /// let bytes = links::descriptor_pool().encode_to_vec();
    ///
    /// let options = ToolSetOptions::new()
    ///     .include("links_*")
    ///     .exclude("links_update");
    /// let set = ToolSet::from_descriptor_set(&bytes, &options).expect("tools");
    /// let names: Vec<&str> = set.tools().iter().map(|t| t.name).collect();
    /// assert_eq!(names, ["links_create", "links_list"]);
    /// assert!(!set.executor(proto_ai_tools::transport::InProcessTransport::new()).can_execute("links_update"));
    /// ```
    pub fn exclude(mut self, pattern: impl Into<String>) -> Self {
        self.exclude.push(pattern.into());
        self
    }

    /// Keeps only the tools whose hints say read-only (the method's
    /// `option idempotency_level = NO_SIDE_EFFECTS`, or an overlay's
    /// `read_only = true` for a proto you do not own), after the includes
    /// and excludes.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::tool_set::{ToolSet, ToolSetOptions};
    ///
    /// mod links {
    ///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
    /// }
    /// let bytes = links::descriptor_pool().encode_to_vec();
    ///
    /// let set = ToolSet::from_descriptor_set(&bytes, &ToolSetOptions::new().read_only(true))
    ///     .expect("tools");
    /// let names: Vec<&str> = set.tools().iter().map(|t| t.name).collect();
    /// assert_eq!(names, ["links_list"]);
    /// ```
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }
}

/// Why a tool set could not be built: every problem found, each a sentence
/// (located at `file:line:column` where it has a place). Nothing is built
/// when there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSetError {
    /// The problems, in the order found.
    pub problems: Vec<String>,
}

impl fmt::Display for ToolSetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.problems.join("\n"))
    }
}

impl std::error::Error for ToolSetError {}

impl ToolSetError {
    fn one(problem: impl Into<String>) -> Self {
        Self {
            problems: vec![problem.into()],
        }
    }

    /// The problems of the options' selection, each its sentence.
    fn of_selection(problems: Vec<select::Problem>) -> Self {
        Self {
            problems: problems.iter().map(ToString::to_string).collect(),
        }
    }
}

/// Tools and their descriptors, built at run time with the same rules,
/// renderings and checks as `ai_tools!`.
///
/// A tool set is built once and lives as long as the process, as the
/// macro's statics do: its tools and pool are leaked so that executors,
/// `Toolkit`s, `Sessions` and MCP servers take them exactly as they take
/// generated ones. Build one per process (or per reload), not per call.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::{tool_set::{ToolSet, ToolSetOptions}, transport::InProcessTransport};
///
/// // Any encoded `FileDescriptorSet` with its imports; here, one the
/// // macro embedded.
/// mod links {
///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
/// }
/// let bytes = links::descriptor_pool().encode_to_vec();
/// let set = ToolSet::from_descriptor_set(&bytes, &ToolSetOptions::new()).expect("tools");
/// let names: Vec<&str> = set.tools().iter().map(|t| t.name).collect();
/// assert!(names.contains(&"links_create"));
/// let executor = set.executor(InProcessTransport::new());
/// assert!(executor.can_execute("links_create"));
///
/// let broken = ToolSet::from_descriptor_set(b"not a descriptor set", &ToolSetOptions::new());
/// assert!(broken.is_err());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ToolSet {
    tools: &'static [&'static AgentTool],
    pool: &'static DescriptorPool,
    left_out: &'static [String],
}

impl ToolSet {
    /// The tools of every annotated method (and of `options`) in `bytes`, an
    /// encoded `FileDescriptorSet` that holds every file it imports. The
    /// descriptions come from the protos' comments, which a set keeps only
    /// when built with them (`protoc --include_source_info`; `buf build`
    /// keeps them unless told `--exclude-source-info`).
    ///
    /// # Errors
    ///
    /// A set that does not decode or lacks an import, a bad overlay, and
    /// every problem the macro would report as a compile error (a bad or
    /// duplicate name, a rendering a provider would refuse, no tool at all);
    /// an include or exclude that is not a glob or matches no tool, and a
    /// selection that leaves no tool (see
    /// [Choosing tools](ToolSetOptions#choosing-tools)).
    pub fn from_descriptor_set(
        bytes: &[u8],
        options: &ToolSetOptions,
    ) -> Result<Self, ToolSetError> {
        let selection = Selection::new(&options.include, &options.exclude, options.read_only)
            .map_err(ToolSetError::of_selection)?;
        let mut pool = DescriptorPool::decode(bytes).map_err(|e| {
            ToolSetError::one(format!(
                "the descriptor set does not decode ({e}); build it with its imports (`protoc --include_imports --descriptor_set_out`, `buf build -o`)"
            ))
        })?;
        let annotating = options.overlay.is_some() || !options.services.is_empty();
        let mut left_out = Vec::new();
        if annotating {
            let services = services_named(&pool, &options.services)?;
            add_missing_annotations(&mut pool)?;
            let encoded = pool.encode_to_vec();
            let annotated = annotate(
                &pool,
                &encoded,
                None,
                options.overlay.as_ref(),
                &services,
                options.plain_fields,
            )
            .map_err(|diagnostics| ToolSetError {
                problems: diagnostics.iter().map(ToString::to_string).collect(),
            })?;
            pool = annotated.pool;
            left_out = annotated.left_out;
        }
        let mut specs = tools_of(&pool)?;
        if !selection.is_everything() {
            specs = selection
                .apply(specs, |(spec, _)| select::Subject::of_spec(spec))
                .map_err(ToolSetError::of_selection)?;
        }
        let pool: &'static DescriptorPool = Box::leak(Box::new(pool));
        let tools: Vec<&'static AgentTool> = specs
            .iter()
            .map(|(spec, rendered)| &*Box::leak(Box::new(agent_tool_of(spec, rendered))))
            .collect();
        Ok(Self {
            tools: Box::leak(tools.into_boxed_slice()),
            pool,
            left_out: Box::leak(left_out.into_boxed_slice()),
        })
    }

    /// The methods of the services exposed whole that are not tools: the
    /// client- and bidirectional-streaming ones, by full name.
    ///
    /// # Examples
    ///
    /// ```
    /// # fn demo(set: &proto_ai_tools::tool_set::ToolSet) {
    /// for method in set.left_out() {
    ///     eprintln!("not a tool (client or bidirectional streaming): {method}");
    /// }
    /// # }
    /// ```
    pub fn left_out(&self) -> &'static [String] {
        self.left_out
    }

    /// The tools, in file and declaration order.
    pub fn tools(&self) -> &'static [&'static AgentTool] {
        self.tools
    }

    /// The descriptors, annotations written in.
    pub fn pool(&self) -> &'static DescriptorPool {
        self.pool
    }

    /// An executor of these tools over `transport`, with a fresh alias
    /// namespace.
    pub fn executor<T: Transport>(&self, transport: T) -> ProtoExecutor<T> {
        ProtoExecutor::new(self.tools, self.pool, transport)
    }

    /// An executor of these tools over `transport` in the conversation of
    /// `aliases`.
    pub fn executor_with_alias_manager<T: Transport>(
        &self,
        transport: T,
        aliases: std::sync::Arc<AliasManager>,
    ) -> ProtoExecutor<T> {
        ProtoExecutor::with_alias_manager(self.tools, self.pool, transport, aliases)
    }
}

/// The services `named` names, each a fully qualified name or a glob over
/// them (`google.cloud.compute.v1.*`), in the pool's order for a glob; a
/// name passes as given (the overlay says when it names no service).
///
/// # Errors
///
/// A glob that is not one, or that matches no service of `pool`.
fn services_named(pool: &DescriptorPool, named: &[String]) -> Result<Vec<String>, ToolSetError> {
    let mut services = Vec::new();
    let mut problems = Vec::new();
    for name in named {
        if !name.contains(['*', '?', '[', '{']) {
            if !services.contains(name) {
                services.push(name.clone());
            }
            continue;
        }
        let glob = match globset::Glob::new(name) {
            Ok(glob) => glob.compile_matcher(),
            Err(e) => {
                problems.push(format!("service pattern `{name}` is not a glob: {e}"));
                continue;
            }
        };
        let matched: Vec<String> = pool
            .services()
            .map(|s| s.full_name().to_owned())
            .filter(|s| glob.is_match(s))
            .collect();
        if matched.is_empty() {
            let all: Vec<String> = pool.services().map(|s| s.full_name().to_owned()).collect();
            problems.push(format!(
                "service pattern `{name}` matches no service; the services are {}",
                if all.is_empty() {
                    "none".to_owned()
                } else {
                    all.join(", ")
                }
            ));
        }
        for service in matched {
            if !services.contains(&service) && !named.contains(&service) {
                services.push(service);
            }
        }
    }
    if problems.is_empty() {
        Ok(services)
    } else {
        Err(ToolSetError { problems })
    }
}

/// What a set with no tool in it is told.
const NO_TOOLS: &str = "no method is annotated with `rpc_tool`: annotate some, give an overlay, or name services to expose whole";

/// Adds the annotation protos `pool` lacks, so that an overlay or
/// whole-service mode can write their options: a set whose protos import
/// only the method annotation still gets the field one. The method
/// annotation `ai.context.v1.rpc_tool` is added only when nothing in the
/// pool declares its number already (a copy of it under another file name).
fn add_missing_annotations(pool: &mut DescriptorPool) -> Result<(), ToolSetError> {
    use prost_reflect::prost::Message as _;
    let unfit = |e: &dyn fmt::Display| {
        ToolSetError::one(format!(
            "the annotation protos do not fit this descriptor set: {e}"
        ))
    };
    let annotations = prost_reflect::prost_types::FileDescriptorSet::decode(ANNOTATION_DESCRIPTORS)
        .map_err(|e| unfit(&e))?;
    let has_rpc_tool = rpc_tool_extension(pool).is_some();
    let missing: Vec<_> = annotations
        .file
        .into_iter()
        .filter(|file| pool.get_file_by_name(file.name()).is_none())
        .filter(|file| !(has_rpc_tool && file.name() == "ai/context/v1/annotations.proto"))
        .collect();
    pool.add_file_descriptor_protos(missing)
        .map_err(|e| unfit(&e))
}

/// The extension under `ai.context.v1.rpc_tool`'s number, when some proto
/// of `pool` declares it.
fn rpc_tool_extension(pool: &DescriptorPool) -> Option<prost_reflect::ExtensionDescriptor> {
    pool.get_message_by_name("google.protobuf.MethodOptions")?
        .get_extension(RPC_TOOL_EXTENSION)
}

/// The tools of every file with an annotated method, rendered and checked.
fn tools_of(
    pool: &DescriptorPool,
) -> Result<Vec<(ToolSpec, proto_ai_tools_schema::RenderedTool)>, ToolSetError> {
    // `rpc_tool` under either number (`ai.context.v1`'s, `ai.tools.v1`'s).
    let rpc_tools = proto_ai_tools_schema::proto::rpc_tool_extensions(pool);
    if rpc_tools.is_empty() {
        return Err(ToolSetError::one(NO_TOOLS));
    }
    let mut problems = Vec::new();
    let mut out = Vec::new();
    let mut names = HashSet::new();
    for file in pool.files() {
        let annotated = file.services().any(|s| {
            s.methods().any(|m| {
                let options = m.options();
                rpc_tools.iter().any(|ext| options.has_extension(ext))
            })
        });
        if !annotated {
            continue;
        }
        match proto_ai_tools_schema::tools_in_file(pool, file.name()) {
            Ok(specs) => {
                for spec in specs {
                    if !names.insert(spec.name.clone()) {
                        problems.push(format!(
                            "tool name `{}` is used in more than one file (again in `{}`); rename one",
                            spec.name,
                            file.name()
                        ));
                        continue;
                    }
                    let (rendered, violations) = spec.render_checked();
                    problems.extend(violations);
                    out.push((spec, rendered));
                }
            }
            Err(diagnostics) => problems.extend(diagnostics.iter().map(ToString::to_string)),
        }
    }
    if out.is_empty() && problems.is_empty() {
        problems.push(NO_TOOLS.to_owned());
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(ToolSetError { problems })
    }
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_owned().into_boxed_str())
}

fn prefixes(aliases: &[FieldAlias]) -> &'static [FieldPrefix] {
    let list: Vec<FieldPrefix> = aliases
        .iter()
        .map(|a| field_prefix(leak(&a.message), leak(&a.field), leak(&a.prefix)))
        .collect();
    Box::leak(list.into_boxed_slice())
}

/// The same `AgentTool` the macro's expansion holds for `spec`.
fn agent_tool_of(spec: &ToolSpec, rendered: &proto_ai_tools_schema::RenderedTool) -> AgentTool {
    let tool = with_hints(
        agent_tool(
            leak(&spec.name),
            leak(&spec.description),
            spec.strict,
            ready(
                leak(&rendered.canonical),
                renderings(
                    leak(&rendered.openai),
                    leak(&rendered.anthropic),
                    leak(&rendered.gemini),
                    leak(&rendered.gemini_json_schema),
                    rendered.input_examples.as_deref().map(leak),
                ),
            ),
            method_ref(
                leak(&spec.service),
                leak(&spec.method),
                leak(&spec.request),
                leak(&spec.response),
            ),
            prefixes(&spec.request_aliases),
            prefixes(&spec.response_aliases),
            spec.output_prefix.as_deref().map(leak),
        ),
        spec.title.as_deref().map(leak),
        spec.hints.read_only,
        spec.hints.idempotent,
        spec.hints.destructive,
    );
    let tool = match spec.timeout {
        Some(timeout) => with_timeout(tool, timeout.as_secs(), timeout.subsec_nanos()),
        None => tool,
    };
    let tool = match spec.output_schema {
        Some(listed) => with_output_schema(tool, listed),
        None => tool,
    };
    match spec.consent {
        Some(policy) => with_consent(tool, policy),
        None => tool,
    }
}

#[cfg(test)]
mod tests;
