//! The pipeline of `ai_tools!`: input → locate → compile → model → check → select → expand.

use std::path::Path;

use proc_macro2::{Span, TokenStream};
use proto_ai_tools_schema::select::{PatternKind, Problem, Selection, Subject};
use proto_ai_tools_schema::{FieldAlias, ToolSpec};
use quote::{format_ident, quote};

use crate::cache::Cache;
use crate::compile::{self, Compiled};
use crate::errors::Errors;
use crate::input::MacroInput;
use crate::locate;

/// The inherent methods of the generated `Executor`, every one that [`items`]
/// writes in `impl<T: Transport> Executor<T>`, in its order. A tool whose
/// snake name is one of them gets the method `<name>_tool`, so that it
/// shadows none.
const EXECUTOR_METHODS: &[&str] = &[
    "new",
    "with_alias_manager",
    "with_options",
    "execute",
    "execute_with",
    "can_execute",
    "alias_manager",
    "tools",
];

/// The upper-case names [`items`] gives the module's own items in the value
/// namespace, where each tool's static goes. A tool whose static would take
/// one of them gets the static `<NAME>_TOOL`. The module's free functions
/// (`all_tools`, `descriptor_pool`) are lower case, so no static can take
/// their names; a tool name starts with a letter, so none becomes the hidden
/// `__AI_TOOLS_*`, which are listed all the same to keep this the module's
/// list.
const MODULE_STATICS: &[&str] = &["__AI_TOOLS_POOL", "__AI_TOOLS_SCHEMAS", "ALL_TOOLS"];

/// Runs the whole pipeline on the macro's arguments. Every error found is
/// reported, all of them combined into `compile_error!`s, beside an expansion
/// that still defines every name user code reaches for (see [`fallback`]), so
/// that code shows only the real errors.
pub fn ai_tools(
    input: TokenStream,
    manifest_dir: &Path,
    invoking_file_dir: Option<&Path>,
) -> TokenStream {
    let mut errors = Errors::default();
    let arguments = input.to_string();
    let expansion = match syn::parse2::<MacroInput>(input) {
        Ok(input) => generate(
            &input,
            &arguments,
            manifest_dir,
            invoking_file_dir,
            &mut errors,
        ),
        Err(error) => {
            errors.push(error);
            None
        }
    };
    let expansion = expansion.unwrap_or_else(fallback);
    let errors = errors.finish().map(syn::Error::into_compile_error);
    quote! { #errors #expansion }
}

/// The expansion, or `None` when the proto's tools could not be read; every
/// error found goes to `errors`, at the path literal (a span cannot point
/// into a `.proto`, so each message starts with `file:line:column`).
///
/// A stage that needs the output of the one before stops there; the stages
/// that only read the tools (the providers' checks, the Rust names) all run.
/// When only a provider's rules refused a rendering, each tool still has its
/// name and schemas, so the whole expansion stands beside the errors.
///
/// An expansion without errors is kept in the [`Cache`], and taken from it
/// while nothing it was made from changed (`arguments` is the macro's input
/// as text).
fn generate(
    input: &MacroInput,
    arguments: &str,
    manifest_dir: &Path,
    invoking_file_dir: Option<&Path>,
    errors: &mut Errors,
) -> Option<TokenStream> {
    let span = input.path.span();
    let selection = selection_of(input, errors)?;
    let includes: Vec<String> = input.includes.iter().map(syn::LitStr::value).collect();
    let located = locate::locate(
        &input.path.value(),
        &includes,
        manifest_dir,
        invoking_file_dir,
    )
    .map_err(|message| errors.at(span, message))
    .ok()?;
    let cache = Cache::open(
        manifest_dir,
        &format!("{arguments}\n{invoking_file_dir:?}\n{located:?}"),
    );
    if let Some(expansion) = cache
        .as_ref()
        .and_then(Cache::lookup)
        .and_then(|text| text.parse::<TokenStream>().ok())
    {
        return Some(expansion);
    }
    let annotating = input.overlay.is_some() || !input.services.is_empty();
    let mut compiled = compile::compile_with(&located, annotating)
        .map_err(|message| errors.at(span, message))
        .ok()?;
    let annotated = if annotating {
        Some(annotate(
            input,
            &mut compiled,
            &located,
            manifest_dir,
            invoking_file_dir,
            errors,
        )?)
    } else {
        None
    };
    let (tools, violations) = read_and_check(&compiled.pool, &compiled.file_name);
    let tools = match tools {
        Ok(tools) => tools,
        Err(diagnostics) => {
            if diagnostics.is_empty() {
                errors.at(
                    span,
                    format!(
                        "`{}` has no usable tool",
                        located.shown(&compiled.file_name)
                    ),
                );
            }
            for diagnostic in diagnostics {
                let diagnostic = match &annotated {
                    Some(annotated) => annotated.relocate(diagnostic),
                    None => diagnostic,
                };
                let diagnostic = shown(&located, diagnostic);
                errors.at(span_of(input, &diagnostic), diagnostic);
            }
            return None;
        }
    };
    for violation in violations {
        errors.at(span, violation);
    }
    // Every annotated method is read and checked above; the selection
    // decides which become tools of the expansion.
    let read = tools.len();
    let tools = if selection.is_everything() {
        tools
    } else {
        match selection.apply(tools, |tool| Subject::of_spec(tool)) {
            Ok(kept) => kept,
            Err(problems) => {
                for problem in problems {
                    errors.at(selection_span(input, &problem), problem);
                }
                return None;
            }
        }
    };
    let chosen = (!selection.is_everything()).then_some(read);
    match rust_names(&tools) {
        Ok(names) => {
            let left_out = annotated.map(|a| a.left_out).unwrap_or_default();
            let expansion = expand(&compiled, &tools, &names, &left_out, chosen);
            if let Some(cache) = cache
                && errors.is_empty()
            {
                cache.store(&compiled.read_files, &expansion.to_string());
            }
            Some(expansion)
        }
        Err(collisions) => {
            // At the second tool's rpc, or the overlay's line that annotated it.
            let at = |tool: &ToolSpec, message| {
                let diagnostic = proto_ai_tools_schema::proto::method_diagnostic(
                    &compiled.pool,
                    &tool.service,
                    &tool.method,
                    message,
                );
                let diagnostic = match &annotated {
                    Some(annotated) => annotated.relocate(diagnostic),
                    None => diagnostic,
                };
                shown(&located, diagnostic)
            };
            for collision in collisions {
                let first_at = place(&at(collision.first, String::new()));
                let diagnostic = at(collision.second, collision.message(&first_at));
                errors.at(span_of(input, &diagnostic), diagnostic);
            }
            None
        }
    }
}

/// The selection of `include`, `exclude` and `read_only`; `None` when a
/// pattern is not a glob, each such error at its string literal.
fn selection_of(input: &MacroInput, errors: &mut Errors) -> Option<Selection> {
    let values = |list: &[syn::LitStr]| list.iter().map(syn::LitStr::value).collect::<Vec<_>>();
    let read_only = input.read_only.as_ref().is_some_and(|r| r.value);
    match Selection::new(&values(&input.include), &values(&input.exclude), read_only) {
        Ok(selection) => Some(selection),
        Err(problems) => {
            for problem in problems {
                errors.at(selection_span(input, &problem), problem);
            }
            None
        }
    }
}

/// Where a problem of the selection goes: at the pattern's string literal;
/// for a selection that leaves no tool, at `read_only` when the globs kept
/// some, else at `exclude` (includes that each match a tool keep some).
fn selection_span(input: &MacroInput, problem: &Problem) -> Span {
    let at = match problem.pattern() {
        Some((PatternKind::Include, index)) => input.include.get(index).map(syn::LitStr::span),
        Some((PatternKind::Exclude, index)) => input.exclude.get(index).map(syn::LitStr::span),
        None if matches!(
            problem,
            Problem::LeavesNoTool {
                by_read_only: true,
                ..
            }
        ) =>
        {
            input.read_only.as_ref().map(syn::LitBool::span)
        }
        None => input.exclude_key,
    };
    at.unwrap_or_else(|| input.path.span())
}

/// Writes the overlay's annotations and those of whole-service mode into
/// `compiled` (its pool and what the expansion embeds), and makes the
/// expansion watch the overlay file.
fn annotate(
    input: &MacroInput,
    compiled: &mut Compiled,
    located: &locate::Located,
    manifest_dir: &Path,
    invoking_file_dir: Option<&Path>,
    errors: &mut Errors,
) -> Option<proto_ai_tools_schema::overlay::Annotated> {
    let mut overlay = None;
    if let Some(literal) = &input.overlay {
        let span = literal.span();
        let written = literal.value();
        let candidates: Vec<std::path::PathBuf> = std::iter::once(manifest_dir.join(&written))
            .chain(invoking_file_dir.map(|dir| dir.join(&written)))
            .collect();
        let Some(path) = candidates.iter().find(|p| p.is_file()) else {
            let tried: Vec<String> = candidates
                .iter()
                .map(|p| format!("`{}`", p.display()))
                .collect();
            errors.at(
                span,
                format!(
                    "overlay `{written}` not found; looked at {} (a path is relative to the crate's `Cargo.toml`)",
                    tried.join(" and ")
                ),
            );
            return None;
        };
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) => {
                errors.at(span, format!("overlay `{written}` cannot be read: {e}"));
                return None;
            }
        };
        compiled.read_files.push(path.clone());
        match proto_ai_tools_schema::overlay::Overlay::parse(&written, &text) {
            Ok(parsed) => overlay = Some(parsed),
            Err(diagnostics) => {
                for diagnostic in diagnostics {
                    errors.at(span, diagnostic);
                }
                return None;
            }
        }
    }
    let services: Vec<String> = input.services.iter().map(syn::LitStr::value).collect();
    match proto_ai_tools_schema::overlay::annotate(
        &compiled.pool,
        &compiled.encoded_with_source,
        Some(&compiled.file_name),
        overlay.as_ref(),
        &services,
        input.plain_fields,
    ) {
        Ok(annotated) => {
            compiled.pool = annotated.pool.clone();
            compiled.encoded_with_source = annotated.encoded.clone();
            Some(annotated)
        }
        Err(diagnostics) => {
            for diagnostic in diagnostics {
                let diagnostic = shown(located, diagnostic);
                errors.at(span_of(input, &diagnostic), diagnostic);
            }
            None
        }
    }
}

/// `diagnostic` naming its proto as the user's path does, relative to the
/// crate (`proto/links/v1/links.proto:9:23`) rather than to the include
/// directory, so the location opens from a terminal or an editor.
fn shown(
    located: &locate::Located,
    mut diagnostic: proto_ai_tools_schema::Diagnostic,
) -> proto_ai_tools_schema::Diagnostic {
    diagnostic.file = located.shown(&diagnostic.file);
    diagnostic
}

/// Where a diagnostic goes: under the overlay's path when it is located in
/// the overlay, else under the proto's.
fn span_of(input: &MacroInput, diagnostic: &proto_ai_tools_schema::Diagnostic) -> Span {
    match &input.overlay {
        Some(overlay) if overlay.value() == diagnostic.file => overlay.span(),
        _ => input.path.span(),
    }
}

/// `file:line:column` of `diagnostic`, as far as it is located.
fn place(diagnostic: &proto_ai_tools_schema::Diagnostic) -> String {
    match (diagnostic.line, diagnostic.column) {
        (Some(line), Some(column)) => format!("{}:{line}:{column}", diagnostic.file),
        (Some(line), None) => format!("{}:{line}", diagnostic.file),
        _ => diagnostic.file.clone(),
    }
}

/// From how many tools on the renderings are checked on several threads.
const CHECK_ON_THREADS_FROM: usize = 16;

/// Renders each tool's parameters in every dialect and checks them with
/// that dialect's checker: a rendering a provider would refuse never
/// compiles. The renderings are not embedded; the expansion renders them
/// again from its descriptors on first use (see `ExpandedSchemas`).
///
/// The tools are checked on as many threads as the machine has cores, in
/// contiguous chunks, so the violations keep the tools' order: on a large
/// proto this is the biggest part of the macro's work after protox.
pub fn check_renderings(tools: &[ToolSpec]) -> Vec<String> {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    if threads < 2 || tools.len() < CHECK_ON_THREADS_FROM {
        return tools.iter().flat_map(ToolSpec::violations).collect();
    }
    let chunk = tools.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let checks: Vec<_> = tools
            .chunks(chunk)
            .map(|part| {
                scope.spawn(|| {
                    part.iter()
                        .flat_map(ToolSpec::violations)
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        checks
            .into_iter()
            .flat_map(|check| {
                // A panic in a checker is ai-tools' bug; raised again here, on
                // the macro's thread, rustc reports it.
                check
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// The tools of `file` ([`proto_ai_tools_schema::tools_in_file`]) and the
/// violations [`check_renderings`] finds in them, the same and in the same
/// order, checked while the later tools are still being read: the tools go
/// to a queue as they are read, and the machine's other cores take them
/// from it, then this thread too once every tool is read. The violations
/// are meaningless when the tools are an error (the macro reports those
/// diagnostics instead).
pub fn read_and_check(
    pool: &prost_reflect::DescriptorPool,
    file: &str,
) -> (
    Result<Vec<ToolSpec>, Vec<proto_ai_tools_schema::Diagnostic>>,
    Vec<String>,
) {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    if threads < 2 {
        let tools = proto_ai_tools_schema::tools_in_file(pool, file);
        let violations = match &tools {
            Ok(tools) => check_renderings(tools),
            Err(_) => Vec::new(),
        };
        return (tools, violations);
    }
    type Checked = Vec<(usize, ToolSpec, Vec<String>)>;
    let (queue, taken) = std::sync::mpsc::channel::<(usize, ToolSpec)>();
    let taken = std::sync::Mutex::new(taken);
    let check = || {
        let mut checked: Checked = Vec::new();
        loop {
            // The lock is held only to take a tool (a thread waiting for the
            // next one holds it, and the others would only wait behind it).
            let next = taken
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .recv();
            let Ok((index, tool)) = next else {
                return checked;
            };
            let violations = tool.violations();
            checked.push((index, tool, violations));
        }
    };
    let (read, mut checked) = std::thread::scope(|scope| {
        // The sending end is moved in, so that a panic while reading drops
        // it too: the checkers then return, the scope's join ends, and the
        // panic reaches rustc instead of the macro hanging.
        let queue = queue;
        // Threads are started for a file with as many tools as
        // `check_renderings` starts them for, once that many are read.
        let mut checkers = Vec::new();
        let mut count = 0;
        let read = proto_ai_tools_schema::proto::tools_in_file_each(pool, file, |tool| {
            // The receiving end lives until every checker has returned.
            let _ = queue.send((count, tool));
            count += 1;
            if count == CHECK_ON_THREADS_FROM {
                checkers.extend((1..threads).map(|_| scope.spawn(check)));
            }
        });
        drop(queue);
        let mut checked = check();
        for checker in checkers {
            // A panic in a checker is ai-tools' bug; raised again here, on
            // the macro's thread, rustc reports it.
            checked.extend(
                checker
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            );
        }
        (read, checked)
    });
    if let Err(diagnostics) = read {
        return (Err(diagnostics), Vec::new());
    }
    checked.sort_unstable_by_key(|(index, _, _)| *index);
    let mut violations = Vec::new();
    let tools = checked
        .into_iter()
        .map(|(_, tool, found)| {
            violations.extend(found);
            tool
        })
        .collect();
    (Ok(tools), violations)
}

/// The Rust names of one tool's items.
struct RustNames {
    /// `LINKS_CREATE`
    static_name: syn::Ident,
    /// `links_create`
    method_name: syn::Ident,
}

/// Two tools whose Rust names would collide: the later one cannot have its
/// items.
struct Collision<'a> {
    first: &'a ToolSpec,
    second: &'a ToolSpec,
    /// What both would become, e.g. "the Rust name `send_ping`".
    what: String,
}

impl Collision<'_> {
    /// The error, with `first_at` where the first tool is (`file:line:column`).
    fn message(&self, first_at: &str) -> String {
        format!(
            "tools `{}` ({first_at}) and `{}` both become {}; rename one of them",
            self.first.name, self.second.name, self.what
        )
    }
}

/// Every tool's Rust names, or each pair of tools whose names would collide
/// (a tool collides with the first earlier one it would collide with).
///
/// A tool's method is its snake name, with a `_tool` suffix when that is one
/// of [`EXECUTOR_METHODS`]; its static is its snake name in upper case, with
/// a `_TOOL` suffix when that is one of [`MODULE_STATICS`].
fn rust_names(tools: &[ToolSpec]) -> Result<Vec<RustNames>, Vec<Collision<'_>>> {
    // Each earlier tool, its snake name, method and static.
    let mut seen: Vec<(&ToolSpec, String, String, String)> = Vec::new();
    let mut names = Vec::with_capacity(tools.len());
    let mut errors = Vec::new();
    for tool in tools {
        let snake = tool.name.replace('-', "_").to_lowercase();
        let method = if EXECUTOR_METHODS.contains(&snake.as_str()) {
            format!("{snake}_tool")
        } else {
            snake.clone()
        };
        let upper = snake.to_uppercase();
        let static_name = if MODULE_STATICS.contains(&upper.as_str()) {
            format!("{upper}_TOOL")
        } else {
            upper
        };
        let collision = seen.iter().find_map(|(first, its_snake, its_method, its_static)| {
            if *its_snake == snake {
                Some(format!("the Rust name `{snake}`"))
            } else if *its_method == method {
                Some(format!(
                    "the executor method `{method}` (a tool named like a method of `Executor` takes a `_tool` suffix)"
                ))
            } else if *its_static == static_name {
                Some(format!(
                    "the static `{static_name}` (a tool whose static would be named like an item of the module takes a `_TOOL` suffix)"
                ))
            } else {
                None
            }
            .map(|what| Collision {
                first,
                second: tool,
                what,
            })
        });
        if let Some(collision) = collision {
            errors.push(collision);
            continue;
        }
        names.push(RustNames {
            static_name: format_ident!("{static_name}"),
            method_name: ident_allowing_keywords(&method),
        });
        seen.push((tool, snake, method, static_name));
    }
    if errors.is_empty() {
        Ok(names)
    } else {
        Err(errors)
    }
}

fn ident_allowing_keywords(name: &str) -> syn::Ident {
    match syn::parse_str::<syn::Ident>(name) {
        Ok(ident) => ident,
        // `self`, `super`, `crate` and `Self` cannot be raw identifiers.
        Err(_) if matches!(name, "self" | "super" | "crate") => format_ident!("{name}_"),
        Err(_) => syn::Ident::new_raw(name, Span::call_site()),
    }
}

/// The items of one expansion; [`items`] writes them out. The complete
/// expansion and the [`fallback`] differ only in these.
struct Parts {
    /// `const _: &[u8] = include_bytes!(…);` for each file read from disk.
    watched: Vec<TokenStream>,
    /// An expression of type `DescriptorPool`.
    pool: TokenStream,
    /// The proto file's name in the pool, whose tools the statics are.
    file_name: String,
    /// The tools' names, in declaration order.
    tool_names: Vec<String>,
    /// One `pub static` per tool.
    statics: Vec<TokenStream>,
    /// The statics' names, in declaration order.
    static_names: Vec<syn::Ident>,
    /// One executor method per tool.
    methods: Vec<TokenStream>,
    /// The doc of `ALL_TOOLS` and `all_tools`.
    all_doc: String,
}

/// The expansion of `tools`; `chosen` is how many tools the file has when
/// the invocation's selection kept only `tools` of them.
fn expand(
    compiled: &Compiled,
    tools: &[ToolSpec],
    names: &[RustNames],
    left_out: &[String],
    chosen: Option<usize>,
) -> TokenStream {
    let watched = compiled
        .read_files
        .iter()
        .map(|path| {
            let path = path.display().to_string();
            quote! { const _: &[u8] = ::core::include_bytes!(#path); }
        })
        .collect();
    let pool_text = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(compiled.embedded_pool())
    };
    let statics = tools
        .iter()
        .zip(names)
        .enumerate()
        .map(|(index, (tool, names))| tool_static(tool, index, &names.static_name))
        .collect();
    let methods = tools
        .iter()
        .zip(names)
        .map(|(tool, names)| {
            let name = &tool.name;
            let method = &names.method_name;
            let doc = format!(
                "Runs the tool `{name}`, {}: the same as [`Executor::execute`] with that name and `args` as its JSON arguments.",
                rpc_of(tool)
            );
            let description = doc_lines(&tool.description);
            quote! {
                #description
                #[doc = ""]
                #[doc = #doc]
                pub async fn #method(&self, args: ::proto_ai_tools::__private::serde_json::Value) -> ::proto_ai_tools::ToolResult {
                    self.inner.execute(#name, args).await
                }
            }
        })
        .collect();
    items(Parts {
        watched,
        pool: quote! { ::proto_ai_tools::__private::decode_pool(#pool_text) },
        file_name: compiled.file_name.clone(),
        tool_names: tools.iter().map(|tool| tool.name.clone()).collect(),
        statics,
        static_names: names
            .iter()
            .map(|names| names.static_name.clone())
            .collect(),
        methods,
        all_doc: format!(
            "{}{}",
            match chosen {
                Some(read) => format!(
                    "The tools of `{}` that the invocation's `include`, `exclude` and `read_only` keep ({} of {read}), in declaration order.",
                    compiled.file_name,
                    tools.len()
                ),
                None => format!(
                    "All the tools of `{}`, in declaration order.",
                    compiled.file_name
                ),
            },
            if left_out.is_empty() {
                String::new()
            } else {
                let names: Vec<String> = left_out.iter().map(|m| format!("`{m}`")).collect();
                format!(
                    "\n\nLeft out of the services exposed whole, as client- or bidirectional-streaming (a model sends one request per call): {}.",
                    names.join(", ")
                )
            }
        ),
    })
}

/// What stands in for the expansion after an error, as thiserror's
/// `fallback.rs` does: every item whose name does not come from the proto's
/// tools (`ALL_TOOLS`, `all_tools`, `descriptor_pool`, `Executor<T>` with its
/// own methods and trait impls), written by the same code as the complete
/// expansion, with no tools and an empty descriptor pool. Code that uses
/// them compiles, so the macro's errors are the only ones.
fn fallback() -> TokenStream {
    items(Parts {
        watched: Vec::new(),
        pool: quote! { ::proto_ai_tools::__private::DescriptorPool::new() },
        file_name: String::new(),
        tool_names: Vec::new(),
        statics: Vec::new(),
        static_names: Vec::new(),
        methods: Vec::new(),
        all_doc: "No tools: the `ai_tools!` invocation has an error.".to_owned(),
    })
}

fn items(parts: Parts) -> TokenStream {
    let Parts {
        watched,
        pool,
        file_name,
        tool_names,
        statics,
        static_names,
        methods,
        all_doc,
    } = parts;
    let count = static_names.len();
    quote! {
        #(#watched)*

        #[doc(hidden)]
        pub static __AI_TOOLS_POOL: ::proto_ai_tools::__private::LazyLock<::proto_ai_tools::__private::DescriptorPool> =
            ::proto_ai_tools::__private::LazyLock::new(|| #pool);

        #[doc(hidden)]
        pub static __AI_TOOLS_SCHEMAS: ::proto_ai_tools::__private::ExpandedSchemas =
            ::proto_ai_tools::__private::expanded_schemas(&__AI_TOOLS_POOL, #file_name, &[#(#tool_names),*]);

        #(#statics)*

        #[doc = #all_doc]
        pub static ALL_TOOLS: [&::proto_ai_tools::AgentTool; #count] = [#(&#static_names),*];

        #[doc = #all_doc]
        pub fn all_tools() -> &'static [&'static ::proto_ai_tools::AgentTool] {
            &ALL_TOOLS
        }

        /// The descriptors of the proto and everything it imports, decoded once.
        pub fn descriptor_pool() -> &'static ::proto_ai_tools::__private::DescriptorPool {
            &__AI_TOOLS_POOL
        }

        #[doc = "Runs a model's tool calls as gRPC calls, with UUIDs shown to the model as aliases."]
        #[doc = ""]
        #[doc = "One executor per conversation: its [`AliasManager`](::proto_ai_tools::AliasManager) is that conversation's alias namespace."]
        pub struct Executor<T> {
            inner: ::proto_ai_tools::executor::ProtoExecutor<T>,
        }

        #[automatically_derived]
        impl<T: ::core::clone::Clone> ::core::clone::Clone for Executor<T> {
            fn clone(&self) -> Self {
                Executor { inner: ::core::clone::Clone::clone(&self.inner) }
            }
        }

        impl<T: ::proto_ai_tools::Transport> Executor<T> {
            /// An executor with a fresh alias namespace.
            pub fn new(transport: T) -> Self {
                Executor {
                    inner: ::proto_ai_tools::executor::ProtoExecutor::new(all_tools(), &__AI_TOOLS_POOL, transport),
                }
            }

            /// An executor that shares `aliases` (one conversation's namespace).
            pub fn with_alias_manager(
                transport: T,
                aliases: ::std::sync::Arc<::proto_ai_tools::AliasManager>,
            ) -> Self {
                Executor {
                    inner: ::proto_ai_tools::executor::ProtoExecutor::with_alias_manager(
                        all_tools(),
                        &__AI_TOOLS_POOL,
                        transport,
                        aliases,
                    ),
                }
            }

            /// Replaces the limits and policies (argument bounds, default call
            /// options, how much of a server stream one call collects).
            pub fn with_options(self, options: ::proto_ai_tools::executor::ExecutorOptions) -> Self {
                Executor {
                    inner: self.inner.with_options(options),
                }
            }

            /// Runs the tool `tool` with the model's arguments (JSON text, or a
            /// value parsed already); every failure is an error result.
            pub async fn execute<'a>(
                &self,
                tool: &str,
                args: impl ::core::convert::Into<::proto_ai_tools::executor::Arguments<'a>>,
            ) -> ::proto_ai_tools::ToolResult {
                self.inner.execute(tool, args).await
            }

            /// [`execute`](Self::execute) with this call's options (the end user's
            /// credentials, a deadline) over the executor's defaults.
            pub async fn execute_with<'a>(
                &self,
                tool: &str,
                args: impl ::core::convert::Into<::proto_ai_tools::executor::Arguments<'a>>,
                options: &::proto_ai_tools::CallOptions,
            ) -> ::proto_ai_tools::ToolResult {
                self.inner.execute_with(tool, args, options).await
            }

            /// Whether `tool` is one of this executor's tools.
            pub fn can_execute(&self, tool: &str) -> bool {
                self.inner.can_execute(tool)
            }

            /// This executor's alias namespace.
            pub fn alias_manager(&self) -> &::std::sync::Arc<::proto_ai_tools::AliasManager> {
                self.inner.alias_manager()
            }

            /// The tools this executor runs.
            pub fn tools(&self) -> &'static [&'static ::proto_ai_tools::AgentTool] {
                all_tools()
            }

            #(#methods)*
        }

        #[automatically_derived]
        impl<T: ::proto_ai_tools::Transport> ::core::convert::From<Executor<T>> for ::proto_ai_tools::executor::ProtoExecutor<T> {
            fn from(executor: Executor<T>) -> Self {
                executor.inner
            }
        }

        #[automatically_derived]
        impl<T: ::proto_ai_tools::Transport> ::proto_ai_tools::executor::GeneratedExecutor for Executor<T> {
            type Transport = T;

            fn with_alias_manager(
                transport: T,
                aliases: ::std::sync::Arc<::proto_ai_tools::AliasManager>,
            ) -> Self {
                Executor::with_alias_manager(transport, aliases)
            }
        }
    }
}

/// The static of the `index`th tool; its schemas are that tool's entry of
/// `__AI_TOOLS_SCHEMAS`.
fn tool_static(tool: &ToolSpec, index: usize, static_name: &syn::Ident) -> TokenStream {
    let ToolSpec {
        name,
        description,
        strict,
        service,
        method,
        request,
        response,
        timeout: tool_timeout,
        output_schema,
        consent,
        ..
    } = tool;
    let doc = doc_lines(description);
    let rpc_doc = format!("Tool `{name}`: {}.", rpc_of(tool));
    let request_aliases = field_prefixes(&tool.request_aliases);
    let response_aliases = field_prefixes(&tool.response_aliases);
    let output_prefix = match &tool.output_prefix {
        Some(prefix) => quote! { ::core::option::Option::Some(#prefix) },
        None => quote! { ::core::option::Option::None },
    };
    let title = match &tool.title {
        Some(title) => quote! { ::core::option::Option::Some(#title) },
        None => quote! { ::core::option::Option::None },
    };
    let read_only = tool.hints.read_only;
    let idempotent = tool.hints.idempotent;
    let destructive = match tool.hints.destructive {
        Some(destructive) => quote! { ::core::option::Option::Some(#destructive) },
        None => quote! { ::core::option::Option::None },
    };
    let tool = quote! {
        ::proto_ai_tools::__private::with_hints(
            ::proto_ai_tools::__private::agent_tool(
                #name,
                #description,
                #strict,
                ::proto_ai_tools::__private::expanded(&__AI_TOOLS_SCHEMAS, #index),
                ::proto_ai_tools::__private::method_ref(#service, #method, #request, #response),
                #request_aliases,
                #response_aliases,
                #output_prefix,
            ),
            #title,
            #read_only,
            #idempotent,
            #destructive,
        )
    };
    let tool = match tool_timeout {
        Some(timeout) => {
            let seconds = timeout.as_secs();
            let nanos = timeout.subsec_nanos();
            quote! { ::proto_ai_tools::__private::with_timeout(#tool, #seconds, #nanos) }
        }
        None => tool,
    };
    let tool = match output_schema {
        Some(listed) => quote! { ::proto_ai_tools::__private::with_output_schema(#tool, #listed) },
        None => tool,
    };
    let tool = match consent {
        Some(policy) => {
            let variant = match policy {
                proto_ai_tools_schema::ConsentPolicy::Allow => quote! { Allow },
                proto_ai_tools_schema::ConsentPolicy::Confirm => quote! { Confirm },
                proto_ai_tools_schema::ConsentPolicy::Block => quote! { Block },
            };
            quote! {
                ::proto_ai_tools::__private::with_consent(
                    #tool,
                    ::proto_ai_tools::schema::ConsentPolicy::#variant,
                )
            }
        }
        None => tool,
    };
    // Constructors, not struct literals: the structs are `#[non_exhaustive]`.
    quote! {
        #doc
        #[doc = ""]
        #[doc = #rpc_doc]
        pub static #static_name: ::proto_ai_tools::AgentTool = #tool;
    }
}

fn rpc_of(tool: &ToolSpec) -> String {
    format!("the RPC `{}/{}`", tool.service, tool.method)
}

fn field_prefixes(aliases: &[FieldAlias]) -> TokenStream {
    let entries = aliases.iter().map(|alias| {
        let FieldAlias {
            message,
            field,
            prefix,
        } = alias;
        quote! { ::proto_ai_tools::__private::field_prefix(#message, #field, #prefix) }
    });
    quote! { &[#(#entries),*] }
}

fn doc_lines(text: &str) -> TokenStream {
    let lines = text.lines().map(|line| {
        let line = format!(" {line}");
        quote! { #[doc = #line] }
    });
    quote! { #(#lines)* }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compiles `proto` (one file) from a temporary directory.
    fn compile_one(name: &str, proto: &str) -> Compiled {
        let root =
            std::env::temp_dir().join(format!("ai-tools-read-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("t.proto"), proto).unwrap();
        let compiled = compile::compile(&locate::Located {
            file: root.join("t.proto"),
            includes: vec![root.clone()],
            base: root.clone(),
        })
        .unwrap();
        let _ = std::fs::remove_dir_all(&root);
        compiled
    }

    #[test]
    fn tools_checked_while_read_are_the_tools_then_checked() {
        // Every other tool's request has more properties than OpenAI's
        // limit, which binds the strict ones (every sixth tool).
        let fields: String = (0..5001)
            .map(|i| format!("string f{i} = {};", i + 1))
            .collect();
        let mut proto = format!(
            "syntax = \"proto3\";\npackage t;\nimport \"ai/context/v1/annotations.proto\";\n\
             message Big {{ {fields} }}\nmessage Small {{ string a = 1; }}\nservice S {{\n"
        );
        for i in 0..40 {
            let request = if i % 2 == 0 { "Big" } else { "Small" };
            proto.push_str(&format!(
                "rpc M{i}({request}) returns (Small) {{ option (ai.context.v1.rpc_tool) = {{ name: \"m{i}\" description: \"M.\" strict: {} }}; }}\n",
                i % 3 == 0
            ));
        }
        proto.push_str("}\n");
        let compiled = compile_one("many", &proto);
        let tools =
            proto_ai_tools_schema::tools_in_file(&compiled.pool, &compiled.file_name).unwrap();
        let violations = check_renderings(&tools);
        assert!(violations.len() >= 10, "{violations:?}");
        let (read, checked) = read_and_check(&compiled.pool, &compiled.file_name);
        assert_eq!(read.unwrap(), tools);
        assert_eq!(checked, violations);

        // A file whose tools are an error: its diagnostics, nothing checked.
        let bad = compile_one("bad", &proto.replace("name: \"m7\"", "name: \"M 7\""));
        let (read, checked) = read_and_check(&bad.pool, &bad.file_name);
        assert_eq!(
            read.unwrap_err(),
            proto_ai_tools_schema::tools_in_file(&bad.pool, &bad.file_name).unwrap_err()
        );
        assert!(checked.is_empty());
    }

    /// A tool named `name`, with no parameters.
    fn spec(name: &str) -> ToolSpec {
        use proto_ai_tools_schema::ir::{Object, Schema};
        ToolSpec {
            name: name.to_owned(),
            description: "A tool.".to_owned(),
            strict: false,
            service: "t.S".to_owned(),
            method: "M".to_owned(),
            request: "t.Req".to_owned(),
            response: "t.Resp".to_owned(),
            parameters: Schema::object(Object::new()),
            request_aliases: vec![],
            response_aliases: vec![],
            title: None,
            hints: proto_ai_tools_schema::ToolHints::default(),
            output_prefix: None,
            timeout: None,
            examples: vec![],
            output_schema: None,
            consent: None,
        }
    }

    /// Each tool's static and method, as text; or each collision's message,
    /// the first tool placed at `t.proto:1:1`.
    fn names_of(tools: &[&str]) -> Result<Vec<(String, String)>, Vec<String>> {
        let tools: Vec<ToolSpec> = tools.iter().map(|name| spec(name)).collect();
        match rust_names(&tools) {
            Ok(names) => Ok(names
                .into_iter()
                .map(|names| (names.static_name.to_string(), names.method_name.to_string()))
                .collect()),
            Err(collisions) => Err(collisions
                .iter()
                .map(|collision| collision.message("t.proto:1:1"))
                .collect()),
        }
    }

    #[test]
    fn keywords_and_executor_methods_get_usable_names() {
        assert_eq!(ident_allowing_keywords("type").to_string(), "r#type");
        assert_eq!(ident_allowing_keywords("self").to_string(), "self_");
        assert_eq!(
            ident_allowing_keywords("links_create").to_string(),
            "links_create"
        );
        let names = names_of(&[
            "links-create",
            "type",
            "self",
            "execute",
            "execute_with",
            "tools",
            "all_tools",
            "descriptor_pool",
        ])
        .unwrap();
        let expected = [
            ("LINKS_CREATE", "links_create"),
            ("TYPE", "r#type"),
            ("SELF", "self_"),
            ("EXECUTE", "execute_tool"),
            ("EXECUTE_WITH", "execute_with_tool"),
            ("TOOLS", "tools_tool"),
            // Its static would be the module's `ALL_TOOLS`; a free function
            // of the module is no method of `Executor`.
            ("ALL_TOOLS_TOOL", "all_tools"),
            ("DESCRIPTOR_POOL", "descriptor_pool"),
        ];
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(s, m)| ((*s).to_owned(), (*m).to_owned()))
            .collect();
        assert_eq!(names, expected);
    }

    #[test]
    fn names_a_suffix_would_collide_with_are_errors() {
        assert_eq!(
            names_of(&["send_ping", "send-ping"]).unwrap_err(),
            [
                "tools `send_ping` (t.proto:1:1) and `send-ping` both become the Rust name `send_ping`; rename one of them"
            ]
        );
        let errors =
            names_of(&["execute", "execute_tool", "all_tools", "all_tools_tool"]).unwrap_err();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors[0].starts_with(
                "tools `execute` (t.proto:1:1) and `execute_tool` both become the executor method `execute_tool`"
            ),
            "{errors:?}"
        );
        assert!(
            errors[1].starts_with(
                "tools `all_tools` (t.proto:1:1) and `all_tools_tool` both become the static `ALL_TOOLS_TOOL`"
            ),
            "{errors:?}"
        );
    }

    /// [`EXECUTOR_METHODS`] and [`MODULE_STATICS`] are read off what
    /// [`items`] writes, so that neither drifts from it.
    #[test]
    fn reserved_names_are_those_of_the_expansion() {
        let file: syn::File = syn::parse2(fallback()).unwrap();
        let mut methods = Vec::new();
        let mut upper = Vec::new();
        for item in &file.items {
            let name = match item {
                syn::Item::Impl(block) if block.trait_.is_none() => {
                    for item in &block.items {
                        if let syn::ImplItem::Fn(method) = item {
                            methods.push(method.sig.ident.to_string());
                        }
                    }
                    continue;
                }
                syn::Item::Static(item) => item.ident.to_string(),
                syn::Item::Const(item) => item.ident.to_string(),
                syn::Item::Fn(item) => item.sig.ident.to_string(),
                _ => continue,
            };
            if name == name.to_uppercase() && name != "_" {
                upper.push(name);
            }
        }
        assert_eq!(methods, EXECUTOR_METHODS);
        assert_eq!(upper, MODULE_STATICS);
    }
}
