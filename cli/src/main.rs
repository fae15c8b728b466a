//! `ai-tools`: any gRPC service as an MCP server, and tool definitions as
//! JSON for agents written in other languages. Logs go to stderr only.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use proto_ai_tools::schema::overlay::Overlay;
use proto_ai_tools::{
    Toolkit,
    tool_set::{ToolSet, ToolSetOptions},
    transport::TonicTransport,
};
use proto_ai_tools_mcp::McpServer;

/// `--proto`: `proto` compiled as `ai_tools!` compiles it
/// ([`proto_ai_tools_schema::proto_resolver`]), under `includes` or else the
/// proto's own directory.
/// Kept in `cache` (see [`proto_cache`]) and used again while its inputs
/// hold.
fn compile_proto(
    proto: &Path,
    includes: &[PathBuf],
    cache: Option<&Path>,
) -> Result<Vec<u8>, Failure> {
    let includes: Vec<PathBuf> = if includes.is_empty() {
        vec![default_include(proto)]
    } else {
        includes.to_vec()
    };
    // protox names a file by its path under an include directory; an
    // absolute include (from a config file) holds a relative proto too.
    let name = includes
        .iter()
        .find_map(|dir| proto.strip_prefix(dir).ok())
        .map(Path::to_path_buf)
        .or_else(|| {
            let proto = std::fs::canonicalize(proto).ok()?;
            includes.iter().find_map(|dir| {
                let dir = std::fs::canonicalize(dir).ok()?;
                proto.strip_prefix(dir).ok().map(Path::to_path_buf)
            })
        })
        .unwrap_or_else(|| proto.to_path_buf());
    let name = name.as_path();
    let shown = name.display().to_string();
    proto_cache::compiled(cache, &shown, &includes, || {
        let mut compiler =
            protox::Compiler::with_file_resolver(proto_ai_tools_schema::proto_resolver(&includes));
        compiler.include_imports(true).include_source_info(true);
        compiler.open_file(name).map_err(|e| {
            // Where the error is (an imported file's line and column), else
            // the proto asked for.
            let at = proto_ai_tools_schema::error_location(&e).map_or_else(
                || proto.display().to_string(),
                |at| as_reached(&at, &includes),
            );
            // with its cause: the field an option block has no such
            // field as, not only the option it spoils
            Failure::Run(format!(
                "{at}: {}",
                proto_ai_tools_schema::error_message(&e)
            ))
        })?;
        Ok(proto_cache::Compiled {
            bytes: compiler.encode_file_descriptor_set(),
            files: compiler.files().map(|f| f.name().to_owned()).collect(),
        })
    })
}

/// The include directory of `--proto` without `-I`, by `ai_tools!`'s rule:
/// the first directory of a relative path (`proto` for
/// `proto/links/v1/links.proto`, so that its imports, written from that
/// root, resolve), the current directory for a bare file name; an absolute
/// path's own directory.
fn default_include(proto: &Path) -> PathBuf {
    if proto.is_absolute() {
        return proto.parent().map(PathBuf::from).unwrap_or_default();
    }
    let mut parts = proto.components();
    match (parts.next(), parts.next()) {
        (Some(first), Some(_)) => PathBuf::from(first.as_os_str()),
        _ => PathBuf::from("."),
    }
}

/// `location` (`file:line:column`, or a file, named as protox names it:
/// under its include directory) with the file as the user reaches it from
/// here: joined to the include directory that holds it
/// (`proto/links/v1/links.proto:9:23`, not `links/v1/links.proto:9:23`).
fn as_reached(location: &str, includes: &[PathBuf]) -> String {
    let mut parts = location.rsplitn(3, ':');
    let (column, line, file) = (parts.next(), parts.next(), parts.next());
    let (file, position) = match (file, line, column) {
        (Some(file), Some(line), Some(column))
            if line.parse::<u32>().is_ok() && column.parse::<u32>().is_ok() =>
        {
            (file, format!(":{line}:{column}"))
        }
        _ => (location, String::new()),
    };
    let reached = includes
        .iter()
        .map(|dir| dir.join(file))
        .find(|path| path.is_file())
        .map_or_else(|| file.to_owned(), |path| path.display().to_string());
    format!("{reached}{position}")
}

async fn tool_set(args: &Args) -> Result<ToolSet, Failure> {
    let mut options = ToolSetOptions::new();
    if let Some(path) = &args.common.choice.overlay {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::Run(format!("the overlay {}: {e}", path.display())))?;
        let overlay = Overlay::parse(&path.display().to_string(), &text).map_err(|d| {
            Failure::Run(
                d.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
        })?;
        options = options.overlay(overlay);
    }
    for service in &args.common.choice.services {
        options = options.service(service.clone());
    }
    if let Some(plain_fields) = args.common.choice.plain_fields {
        options = options.plain_fields(plain_fields);
    }
    for pattern in &args.common.choice.include_tools {
        options = options.include(pattern.clone());
    }
    for pattern in &args.common.choice.exclude_tools {
        options = options.exclude(pattern.clone());
    }
    options = options.read_only(args.common.choice.read_only);
    if let Some(timeout) = args.common.source.reflection_timeout {
        options = options.reflection_timeout(timeout);
    }
    let set = if args.common.source.reflection {
        let url = args.common.source.grpc.as_deref().unwrap_or_default();
        tracing::info!(
            "reading the descriptors of {url} by reflection (at most {:?})",
            options.reflection_timeout
        );
        let report = |n: usize| {
            if n.is_multiple_of(25) {
                tracing::info!("{n} files fetched");
            }
        };
        let builder = args.common.tls.builder(url)?;
        // Over TLS, connect first: a certificate that does not verify is
        // said as such, naming the host, and the reflection has what is
        // left of its timeout.
        let transport = if url.starts_with("https://") {
            let started = std::time::Instant::now();
            let transport = builder
                .connect_timeout(options.reflection_timeout)
                .connect()
                .await
                .map_err(transport_failure)?;
            let left = options.reflection_timeout.saturating_sub(started.elapsed());
            options = options.reflection_timeout(left.max(Duration::from_millis(1)));
            transport
        } else {
            builder.connect_lazy().map_err(transport_failure)?
        };
        // The library cannot name the server (a channel does not say where
        // it goes): the error does here.
        ToolSet::from_reflection(transport.channel().clone(), &options, &report)
            .await
            .map_err(|e| Failure::Run(format!("{url}: {e}")))?
    } else {
        let bytes = match (
            &args.common.source.descriptor_set,
            &args.common.source.proto,
        ) {
            (Some(path), _) => std::fs::read(path)
                .map_err(|e| Failure::Run(format!("the descriptor set {}: {e}", path.display())))?,
            (None, Some(proto)) => {
                let cache = match (
                    &args.common.source.proto_cache,
                    args.common.source.no_proto_cache,
                ) {
                    (_, true) => None,
                    (Some(dir), false) => Some(dir.clone()),
                    (None, false) => proto_cache::default_dir(),
                };
                compile_proto(proto, &args.common.source.includes, cache.as_deref())?
            }
            (None, None) => unreachable!("parse requires a source"),
        };
        ToolSet::from_descriptor_set(&bytes, &options).map_err(|e| Failure::Run(e.to_string()))?
    };
    tracing::info!("{} tools", set.tools().len());
    for method in set.left_out() {
        tracing::warn!(
            "{method} is not a tool: client- and bidirectional-streaming methods cannot be"
        );
    }
    Ok(set)
}

async fn run(args: Args) -> Result<(), Failure> {
    let set = tool_set(&args).await?;
    if args.command == "tools" {
        // Only listed, never called.
        let transport = TonicTransport::builder("http://127.0.0.1:1")
            .connect_lazy()
            .map_err(transport_failure)?;
        let toolkit = args
            .common
            .tool_budget(
                args.common
                    .result_names(Toolkit::builder().generated(set.executor(transport.clone()))),
            )
            .build()
            .map_err(|e| Failure::Run(e.to_string()))?;
        let host = args.common.host_profile.unwrap_or_default();
        // The provider's shape, each tool's parameters rendered for the host.
        let for_host = |mut all: serde_json::Value, list: &str, at: &str, dialect| {
            let tools = toolkit.tools();
            let items = if list.is_empty() {
                all.as_array_mut()
            } else {
                all[list].as_array_mut()
            };
            for (item, tool) in items.into_iter().flatten().zip(tools) {
                if let Some(slot) = item.pointer_mut(at) {
                    *slot = tool.parameters_for_host(dialect, host);
                }
            }
            all
        };
        use proto_ai_tools::schema::Dialect;
        let listing = |dialect: &str| -> Result<serde_json::Value, Failure> {
            Ok(match dialect {
                "openai" => for_host(
                    toolkit.to_openai(),
                    "",
                    "/function/parameters",
                    Dialect::OpenAi,
                ),
                "anthropic" => for_host(
                    toolkit.to_anthropic(),
                    "",
                    "/input_schema",
                    Dialect::Anthropic,
                ),
                "gemini" => for_host(
                    toolkit.to_gemini(),
                    "functionDeclarations",
                    "/parameters",
                    Dialect::Gemini,
                ),
                // Deferred loading: the provider's tool search loads a
                // definition when the model searches for it.
                "openai_tool_search" => toolkit.to_openai_tool_search(),
                "anthropic_tool_search" => toolkit.to_anthropic_tool_search(
                    proto_ai_tools::toolkit::deferred::AnthropicToolSearch::Bm25,
                ),
                // What `ai-tools mcp` lists, made as it makes it.
                "mcp" => {
                    let toolkit = args
                        .common
                        .tool_budget(args.common.result_names(
                            Toolkit::builder().generated(set.executor(transport.clone())),
                        ))
                        .build()
                        .map_err(|e| Failure::Run(e.to_string()))?;
                    let listed = args
                        .common
                        .output_schemas(McpServer::from_toolkit(toolkit).with_host_profile(host))
                        .tools()
                        .map_err(|e| Failure::Run(e.to_string()))?;
                    serde_json::to_value(listed).map_err(|e| Failure::Run(e.to_string()))?
                }
                other => {
                    return Err(Failure::Usage(format!(
                        "unknown dialect `{other}`: use openai, anthropic, gemini, mcp, openai_tool_search or anthropic_tool_search"
                    )));
                }
            })
        };
        let text = if args.listing.stats {
            let dialects: Vec<&str> = match args.listing.dialect.as_deref() {
                Some(one) => vec![one],
                None => vec![
                    "openai",
                    "anthropic",
                    "gemini",
                    "mcp",
                    "openai_tool_search",
                    "anthropic_tool_search",
                ],
            };
            // The same tools kept whole, to tell which the budget cut.
            let whole = Toolkit::builder()
                .generated(set.executor(transport.clone()))
                .max_tool_bytes(usize::MAX)
                .build()
                .map_err(|e| Failure::Run(e.to_string()))?;
            let budget = args
                .common
                .max_tool_bytes
                .unwrap_or(proto_ai_tools::schema::render::DEFAULT_MAX_TOOL_BYTES);
            let mut text = stats::of_budget(budget, &stats::cut_tools(&toolkit, &whole, host));
            for dialect in dialects {
                text.push_str(&stats::of_listing(dialect, &listing(dialect)?));
            }
            text
        } else {
            format!(
                "{:#}",
                listing(args.listing.dialect.as_deref().unwrap_or("mcp"))?
            )
        };
        // A closed pipe (`| head`) is the reader's choice, not a failure.
        let mut out = std::io::stdout().lock();
        return match writeln!(out, "{}", text.trim_end()) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                Err(Failure::Run(format!("writing the tools: {e}")))
            }
            _ => Ok(()),
        };
    }
    let url = args.common.source.grpc.clone().unwrap_or_default();
    let backend = args.common.tls.builder(&url)?;
    let transport = backend.clone().connect_lazy().map_err(transport_failure)?;
    let (sessions, session_store, store_summary) = args.serve.scopes.sessions().await?;
    let strict_replicas = (store_summary.kind != "memory" && !store_summary.wait_auto)
        .then_some(store_summary.wait_replicas);
    let admin =
        admin::Admin::new(&args.serve, backend, session_store.clone(), strict_replicas).await?;
    let admin_address = admin.as_ref().map(admin::Admin::address);
    let sessions = Arc::new(sessions);
    let max_tool_bytes = args.common.max_tool_bytes;
    let json_names = args.common.json_names.unwrap_or_default();
    let server = McpServer::new(move |aliases| {
        let toolkit = Toolkit::builder()
            .alias_manager(aliases.clone())
            .generated(set.executor_with_alias_manager(transport.clone(), aliases))
            .json_names(json_names);
        flags::with_tool_budget(toolkit, max_tool_bytes).build()
    })
    .with_sessions(sessions)
    .with_server_info("ai-tools", env!("CARGO_PKG_VERSION"))
    .with_host_profile(args.common.host_profile.unwrap_or_default());
    let server = args
        .common
        .output_schemas(args.serve.consent(server)?)
        .forward_headers(args.serve.forward_headers.iter().map(String::as_str))
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let mut server = args
        .serve
        .scopes
        .apply(args.serve.calls.apply(args.serve.http_limits.apply(server)))?;
    if let Some(credential) = args.serve.auth.backend_credential()? {
        server = server.with_call_options(credential);
    }
    if let Some(oauth) = args.serve.auth.oauth()? {
        server = server.with_oauth(oauth);
    }
    // Over HTTP, sessions roam with their aliases between the gateways of
    // one Redis.
    let sessions_roam = session_store.is_some() && args.serve.http.is_some();
    if let Some(store) = session_store
        && args.serve.http.is_some()
    {
        server = server.with_session_store(store);
    }
    if args.serve.tool_search {
        let search = args.serve.defined_toolsets.iter().fold(
            proto_ai_tools_mcp::ToolSearch::new(),
            |search, (name, globs)| search.define(name.clone(), globs.clone()),
        );
        let search = args
            .serve
            .toolsets
            .iter()
            .fold(search, |search, toolset| search.toolset(toolset.clone()));
        let search = match embeddings::embeddings(&args.serve)? {
            Some(embeddings) => search.embeddings(embeddings),
            None => search,
        };
        server = server.with_tool_search(search);
    }
    if let Some(admin) = &admin {
        server = admin.apply(server);
    }
    if args.serve.otlp_endpoint.is_some() {
        server = server.with_opentelemetry();
    }
    if args.serve.stdio {
        startup::log(&args, &store_summary, "stdio", None, false, admin_address);
        tracing::info!("serving {url} over MCP on stdio");
        let admin = admin.map(admin::Admin::start);
        let served = server
            .serve_stdio()
            .await
            .map_err(|e| Failure::Run(e.to_string()));
        if let Some(admin) = admin {
            admin.stop().await;
        }
        served
    } else {
        let addr = args.serve.http.clone().unwrap_or_default();
        let listener = tokio::net::TcpListener::bind(&addr)
            .await
            .map_err(|e| Failure::Run(format!("cannot listen on {addr}: {e}")))?;
        let local = listener
            .local_addr()
            .map_err(|e| Failure::Run(e.to_string()))?;
        server
            .check_address(local)
            .map_err(|e| Failure::Usage(e.to_string()))?;
        startup::log(
            &args,
            &store_summary,
            "http",
            Some(format!("http://{local}/mcp")),
            sessions_roam,
            admin_address,
        );
        tracing::info!("serving {url} over MCP at http://{local}/mcp");
        let drain = startup::drain_timeout(&args.serve.http_limits);
        let stop = async move {
            proto_ai_tools_mcp::shutdown_signal().await;
            tracing::info!(
                drain_timeout_s = drain.as_secs_f64(),
                "stopping (ctrl-c or SIGTERM): not ready, new requests are answered 503, the calls in flight get up to the drain timeout to end, then sessions end"
            );
        };
        let admin = admin.map(admin::Admin::start);
        let served = server
            .serve_http_until(listener, stop)
            .await
            .map_err(|e| Failure::Run(e.to_string()));
        if let Some(admin) = admin {
            admin.stop().await;
        }
        served?;
        tracing::info!("stopped");
        Ok(())
    }
}

mod admin;
mod auth;
mod checked;
mod completions;
mod config;
mod embeddings;
mod failure;
mod flags;
mod limits;
mod logging;
mod proto_cache;
mod protos;
mod sources;
mod startup;
mod stats;
mod store;
mod tls;
mod traces;

use failure::Failure;
use flags::{Args, Parsed};
use logging::logs;
use tls::transport_failure;

/// `text` on stdout; a closed pipe (`| head`) is the reader's choice, not
/// a failure.
fn write_stdout(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::Run(format!("writing to stdout: {e}")))
        }
        _ => Ok(()),
    }
}

/// jemalloc with background threads, not the system allocator: it returns
/// the memory of expired sessions to the OS, which glibc's malloc kept (see
/// RELIABILITY.md, "Memory after sessions expire").
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main]
async fn main() -> ExitCode {
    let args = match flags::parse(std::env::args_os().collect()) {
        Ok(Parsed::Run(args)) => args,
        Ok(Parsed::Print(text)) => {
            return match write_stdout(&text) {
                Ok(()) => ExitCode::SUCCESS,
                Err(Failure::Usage(message) | Failure::Run(message)) => {
                    eprintln!("ai-tools: {message}");
                    ExitCode::from(1)
                }
            };
        }
        Ok(Parsed::Protos { out, force }) => {
            return match protos::write(&out, force).and_then(|report| write_stdout(&report)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(Failure::Usage(message) | Failure::Run(message)) => {
                    eprintln!("ai-tools: {message}");
                    ExitCode::from(1)
                }
            };
        }
        Ok(Parsed::Completions(shell)) => {
            return match write_stdout(&completions::script(shell)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(Failure::Usage(message) | Failure::Run(message)) => {
                    eprintln!("ai-tools: {message}");
                    ExitCode::from(1)
                }
            };
        }
        Err(Failure::Usage(message) | Failure::Run(message)) => {
            eprintln!("ai-tools: {message}");
            return ExitCode::from(2);
        }
    };
    // Traces are the `mcp` command's; their exporter is built before the
    // logs, whose subscriber carries its layer.
    let mut args = args;
    let traces = if args.command == "mcp" {
        match traces::start(args.serve.otlp_endpoint.as_deref()) {
            Ok(traces) => traces,
            Err(message) => {
                eprintln!("ai-tools: {message}");
                return ExitCode::from(2);
            }
        }
    } else {
        None
    };
    // What the ready line says, and what turns the gateway's own part on.
    args.serve.otlp_endpoint = traces.as_ref().map(|traces| traces.endpoint.clone());
    let logging = logs(
        args.common.log_format.unwrap_or_default(),
        traces.as_ref().map(traces::Traces::layer),
    );
    // A path the config file gave that leads nowhere is blamed on its key.
    let config = args.common.config.clone();
    let noted = |message: String| match &config {
        Some(path) => config::note(path, &flags::command(), message),
        None => message,
    };
    let result = run(*args).await;
    if let Some(traces) = traces {
        traces.flush().await;
    }
    // Every log line out, in order, before the reason of a failure and
    // the exit (see `logs`).
    drop(logging);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(message)) => {
            eprintln!("ai-tools: {}", noted(message));
            ExitCode::from(2)
        }
        Err(Failure::Run(message)) => {
            eprintln!("ai-tools: {}", noted(message));
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests;
