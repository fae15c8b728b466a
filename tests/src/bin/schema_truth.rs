//! The Rust side of the independent schema-truth harness (`tests/truth/harness.py`).
//!
//! `schema_truth dump` prints one JSON document describing every tool of the
//! corpus: its request message, gRPC method path, request aliases, and its
//! parameters rendered for six targets (OpenAI strict and not, Anthropic
//! strict and not, Gemini `parametersJsonSchema`, Gemini `parameters`) for a
//! client that changes nothing (`HostProfile::Exact`), the same six again
//! for each other host profile (`openai@javascript`, …), plus the canonical
//! rendering. The renderings come from a descriptor pool compiled here, at
//! run time, with protox; each exact one is compared with what the
//! `ai_tools!` expansion of the same proto holds
//! (`AgentTool::parameters_for`), and each host one with what a toolkit of
//! the expansion renders for that host (`Tool::parameters_for_host`). The
//! document also carries the encoded `FileDescriptorSet` of every corpus
//! proto and its imports (for a Python server), and the aliases the exec
//! mode issues before any call.
//!
//! `schema_truth exec <grpc-addr>` reads JSON lines
//! `{"tool": …, "host": …, "args": …}` on stdin, runs each through the real
//! executor over a tonic channel to `http://<grpc-addr>`, all in one
//! conversation, telling it the host profile the arguments came through
//! (`exact` if absent), and writes one JSON line
//! `{"is_error": bool, "output": string}` per input.
//!
//! Adding a proto to the corpus is its expansion in the tests library
//! (`proto_ai_tools_tests::tools`) and one line of `corpus!` below.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use base64::Engine as _;
use prost_reflect::DescriptorPool;
use proto_ai_tools::schema::{Dialect, HostProfile, render};
use proto_ai_tools::{
    AgentTool, AliasManager, CallOptions, executor::ProtoExecutor, transport::TonicTransport,
};
use protox::file::{ChainFileResolver, GoogleFileResolver};
use serde_json::{Value, json};

/// One corpus proto: where it lives (relative to the workspace root), the
/// include directories it compiles with (relative to the workspace root),
/// and the `ai_tools!` expansion of it.
struct Corpus {
    path: &'static str,
    includes: &'static [&'static str],
    tools: fn() -> &'static [&'static AgentTool],
    pool: fn() -> &'static DescriptorPool,
    /// An overlay annotating the proto (relative to the tests crate).
    overlay: Option<&'static str>,
}

/// `corpus! { module: "path", includes = ["dir", …] (, overlay = "file")?; … }`
/// lists in `CORPUS` the tests library's expansion `tools::module` of each
/// proto, with the path, includes and overlay it was expanded with (the
/// harness compiles the same files again to dump them).
macro_rules! corpus {
    (@overlay) => { None };
    (@overlay $overlay:tt) => { Some($overlay) };
    ($($module:ident : $path:tt, includes = [$($include:tt),*] $(, overlay = $overlay:tt)?;)*) => {
        const CORPUS: &[Corpus] = &[
            $(Corpus {
                path: $path,
                includes: &[$($include),*],
                tools: proto_ai_tools_tests::tools::$module::all_tools,
                pool: proto_ai_tools_tests::tools::$module::descriptor_pool,
                overlay: corpus!(@overlay $($overlay)?),
            },)*
        ];
    };
}

corpus! {
    conformance: "proto/conformance/v1/conformance.proto", includes = ["proto"];
    links: "proto/links/v1/links.proto", includes = ["proto"];
    google_types: "proto/corpus/v1/google_types.proto",
        includes = ["proto/third_party/googleapis", "proto"];
    etcd: "proto/third_party/etcd/etcd/api/etcdserverpb/rpc.proto",
        includes = ["proto/third_party/etcd", "proto/third_party/googleapis"];
    // googleapis' operations.proto as the wheel ships it, annotated by an
    // overlay (its annotated copy defines the same messages, so one of the
    // two: the pool the harness builds holds every corpus file at once).
    longrunning_overlay: "proto/third_party/googleapis/google/longrunning/operations_proto.proto",
        includes = ["proto/third_party/googleapis"], overlay = "overlays/operations.tools.toml";
}

/// How many aliases each prefix gets before the first call.
const ALIASES_PER_PREFIX: usize = 3;

/// The six rendering targets: (name, dialect, strict). `None`: the tool's own
/// strictness (Gemini has no strict mode of its own). Each is dumped as
/// rendered for a client that changes nothing (`HostProfile::Exact`, under
/// its own name, as `render::parameters` renders it) and for every other
/// host profile as `name@profile` (`openai@javascript`, …).
const TARGETS: &[(&str, Dialect, Option<bool>)] = &[
    ("openai_strict", Dialect::OpenAi, Some(true)),
    ("openai", Dialect::OpenAi, Some(false)),
    ("anthropic", Dialect::Anthropic, Some(false)),
    ("anthropic_strict", Dialect::Anthropic, Some(true)),
    ("gemini_json_schema", Dialect::GeminiJsonSchema, None),
    ("gemini", Dialect::Gemini, None),
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Compiles one corpus proto at run time, with source info and imports, as
/// the macro resolves it: include directories, then `google/protobuf/*`,
/// then the annotation protos. Returns the pool and the file's name in it.
fn compile(corpus: &Corpus) -> Result<(DescriptorPool, String), String> {
    let root = workspace();
    let mut resolver = ChainFileResolver::new();
    for include in corpus.includes {
        resolver.add(protox::file::IncludeFileResolver::new(root.join(include)));
    }
    resolver.add(GoogleFileResolver::new());
    resolver.add(proto_ai_tools_schema::AnnotationFileResolver);
    let name = corpus
        .includes
        .iter()
        .find_map(|include| {
            Path::new(corpus.path)
                .strip_prefix(include)
                .ok()
                .map(|rest| rest.to_string_lossy().replace('\\', "/"))
        })
        .ok_or_else(|| format!("{} is under none of its include directories", corpus.path))?;
    let mut compiler = protox::Compiler::with_file_resolver(resolver);
    compiler.include_imports(true).include_source_info(true);
    compiler
        .open_file(&name)
        .map_err(|e| format!("{}: {e}", corpus.path))?;
    let Some(overlay) = corpus.overlay else {
        return Ok((compiler.descriptor_pool(), name));
    };
    // As the macro does: the annotation protos in, the overlay written in.
    for annotations in proto_ai_tools::schema::OVERLAY_ANNOTATION_PROTOS {
        compiler
            .open_file(annotations)
            .map_err(|e| format!("{annotations}: {e}"))?;
    }
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(overlay))
        .map_err(|e| format!("{overlay}: {e}"))?;
    let parsed = proto_ai_tools::schema::overlay::Overlay::parse(overlay, &text)
        .map_err(|d| format!("{d:?}"))?;
    let annotated = proto_ai_tools::schema::overlay::annotate(
        &compiler.descriptor_pool(),
        &compiler.encode_file_descriptor_set(),
        Some(&name),
        Some(&parsed),
        &[],
        proto_ai_tools::schema::overlay::PlainFields::default(),
    )
    .map_err(|d| format!("{d:?}"))?;
    Ok((annotated.pool, name))
}

/// A deterministic UUID (version 4 layout) for the `n`th id of `prefix`.
fn uuid_for(prefix: &str, n: usize) -> String {
    // FNV-1a of the prefix: stable across runs and platforms.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in prefix.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        h >> 32,
        (h >> 16) & 0xffff,
        h & 0xfff,
        n & 0xfff,
        (h ^ (n as u64).wrapping_mul(0x9e37_79b9)) & 0xffff_ffff_ffff
    )
}

/// Every alias prefix a request of any corpus tool resolves, sorted.
fn prefixes() -> BTreeSet<&'static str> {
    CORPUS
        .iter()
        .flat_map(|c| (c.tools)().iter())
        .flat_map(|t| t.request_aliases.iter().map(|fp| fp.prefix))
        .collect()
}

/// Registers the same ids, in the same order, every time; returns
/// prefix → [(alias, uuid)].
fn preregister(aliases: &AliasManager) -> Result<BTreeMap<String, Vec<(String, String)>>, String> {
    let mut out = BTreeMap::new();
    for prefix in prefixes() {
        let mut issued = Vec::new();
        for n in 0..ALIASES_PER_PREFIX {
            // A manager without a store answers at once.
            let alias = proto_ai_tools_tests::support::ready(
                aliases.register(prefix, &uuid_for(prefix, n)),
            )
            .map_err(|e| format!("registering an id for `{prefix}`: {e}"))?;
            let uuid = aliases
                .resolve(&alias)
                .ok_or_else(|| format!("`{alias}` does not resolve right after registration"))?;
            issued.push((alias, uuid));
        }
        out.insert(prefix.to_owned(), issued);
    }
    Ok(out)
}

/// `max_tool_bytes`: the size budget the renderings are cut to (none when
/// `None`); each tool says whether it was cut.
fn dump(max_tool_bytes: Option<usize>) -> Result<Value, String> {
    // Whole by default: the full run holds every usage expressible, which
    // a cut may not (a long comment can put a corpus tool past the default
    // budget); the cuts have their own run, where soundness is the bar.
    let max_tool_bytes = max_tool_bytes.unwrap_or(usize::MAX);
    let mut merged = DescriptorPool::new();
    let mut files = Vec::new();
    let mut mismatches = Vec::new();
    let mut names = BTreeSet::new();
    for corpus in CORPUS {
        let (pool, file) = compile(corpus)?;
        for fd in pool.files() {
            if merged.get_file_by_name(fd.name()).is_none() {
                merged
                    .add_file_descriptor_proto(fd.file_descriptor_proto().clone())
                    .map_err(|e| format!("merging {}: {e}", fd.name()))?;
            }
        }
        let specs = proto_ai_tools::schema::tools_in_file(&pool, &file).map_err(|diags| {
            diags
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        })?;
        let statics = (corpus.tools)();
        // The expansion's tools as a toolkit renders them for a host (from
        // the descriptors the expansion embeds).
        let toolkit = proto_ai_tools::Toolkit::builder()
            .generated(ProtoExecutor::new(
                statics,
                (corpus.pool)(),
                proto_ai_tools::transport::InProcessTransport::new(),
            ))
            .build()
            .map_err(|e| format!("{}: a toolkit of the expansion: {e}", corpus.path))?;
        if statics.len() != specs.len() {
            mismatches.push(format!(
                "{}: the expansion has {} tools, the run-time pool {}",
                corpus.path,
                statics.len(),
                specs.len()
            ));
        }
        let mut tools = Vec::new();
        for spec in &specs {
            if !names.insert(spec.name.clone()) {
                return Err(format!(
                    "tool name `{}` appears twice in the corpus",
                    spec.name
                ));
            }
            let mut renderings = serde_json::Map::new();
            let mut cut = false;
            renderings.insert(
                "canonical".into(),
                render::parameters(&spec.parameters, Dialect::JsonSchema, false),
            );
            for (target, dialect, strict) in TARGETS {
                let strict = strict.unwrap_or(spec.strict);
                for host in HostProfile::ALL {
                    let name = match host {
                        HostProfile::Exact => (*target).to_owned(),
                        _ => format!("{target}@{host}"),
                    };
                    let twin = proto_ai_tools::schema::ToolSpec {
                        strict,
                        ..spec.clone()
                    };
                    let rendered = twin.render_within(*dialect, host, max_tool_bytes);
                    cut |= rendered != twin.render_within(*dialect, host, usize::MAX);
                    renderings.insert(name, rendered);
                }
            }
            match statics.iter().find(|t| t.name == spec.name) {
                None => mismatches.push(format!(
                    "{}: no static tool in the expansion of {}",
                    spec.name, corpus.path
                )),
                Some(tool) => {
                    mismatches.extend(compare_static(tool, spec));
                    mismatches.extend(compare_hosts(&toolkit, spec));
                    if (corpus.pool)().get_message_by_name(&spec.request).is_none() {
                        mismatches.push(format!(
                            "{}: `{}` missing from the embedded pool",
                            spec.name, spec.request
                        ));
                    }
                }
            }
            tools.push(json!({
                "name": spec.name,
                "strict": spec.strict,
                "request": spec.request,
                "response": spec.response,
                "method_path": format!("/{}/{}", spec.service, spec.method),
                "request_aliases": spec.request_aliases.iter().map(|a| json!({
                    "message": a.message, "field": a.field, "prefix": a.prefix,
                })).collect::<Vec<_>>(),
                "renderings": renderings,
                "cut": cut,
            }));
        }
        files.push(json!({ "proto": corpus.path, "file": file, "tools": tools }));
    }
    let mut aliases = serde_json::Map::new();
    for (prefix, issued) in preregister(&AliasManager::new())? {
        let issued: Vec<Value> = issued
            .into_iter()
            .map(|(alias, uuid)| json!({ "alias": alias, "uuid": uuid }))
            .collect();
        aliases.insert(prefix, Value::Array(issued));
    }
    Ok(json!({
        "files": files,
        "aliases": aliases,
        "descriptor_set": base64::engine::general_purpose::STANDARD.encode(merged.encode_to_vec()),
        "static_mismatches": mismatches,
    }))
}

/// Differences between the expansion's static tool and the run-time spec.
fn compare_static(tool: &AgentTool, spec: &proto_ai_tools::schema::ToolSpec) -> Vec<String> {
    let mut out = Vec::new();
    let mut same = |what: &str, a: String, b: String| {
        if a != b {
            out.push(format!(
                "{}: {what}: static `{a}`, run time `{b}`",
                spec.name
            ));
        }
    };
    same("strict", tool.strict.to_string(), spec.strict.to_string());
    same(
        "request",
        tool.method.request.to_owned(),
        spec.request.clone(),
    );
    same(
        "method",
        format!("{}/{}", tool.method.service, tool.method.method),
        format!("{}/{}", spec.service, spec.method),
    );
    same(
        "request aliases",
        format!(
            "{:?}",
            tool.request_aliases
                .iter()
                .map(|a| (a.message, a.field, a.prefix))
                .collect::<Vec<_>>()
        ),
        format!(
            "{:?}",
            spec.request_aliases
                .iter()
                .map(|a| (a.message.as_str(), a.field.as_str(), a.prefix.as_str()))
                .collect::<Vec<_>>()
        ),
    );
    for dialect in Dialect::ALL {
        // Both sides through the same text parser: serde_json (without
        // `float_roundtrip`) may round a long decimal differently from the
        // exact value the renderer holds.
        let dynamic = spec.render(dialect);
        let dynamic: Value = serde_json::from_str(&dynamic.to_string()).unwrap_or(dynamic);
        match serde_json::from_str::<Value>(tool.parameters_for(dialect)) {
            Ok(stat) if stat == dynamic => {}
            Ok(stat) => out.push(format!(
                "{}: {dialect}: the static rendering differs from the run-time one{}",
                spec.name,
                first_difference(&stat, &dynamic, String::new())
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default()
            )),
            Err(e) => out.push(format!(
                "{}: {dialect}: the static rendering is not JSON ({e})",
                spec.name
            )),
        }
    }
    out
}

/// Differences between what a toolkit of the expansion renders for each host
/// profile but `Exact` (whose renderings `compare_static` compares) and the
/// run-time rendering, in every dialect with the tool's own strictness.
fn compare_hosts(
    toolkit: &proto_ai_tools::Toolkit,
    spec: &proto_ai_tools::schema::ToolSpec,
) -> Vec<String> {
    let Some(tool) = toolkit.get(&spec.name) else {
        return vec![format!("{}: not in a toolkit of the expansion", spec.name)];
    };
    let mut out = Vec::new();
    for host in HostProfile::ALL {
        if host == HostProfile::Exact {
            continue;
        }
        for dialect in Dialect::ALL {
            // Both through the same text parser, as in `compare_static`.
            let reparse = |v: Value| serde_json::from_str(&v.to_string()).unwrap_or(v);
            let dynamic = reparse(spec.render_for(dialect, host));
            let stat = reparse(tool.parameters_for_host(dialect, host));
            if stat != dynamic {
                out.push(format!(
                    "{}: {dialect} for a {host} host: the expansion's rendering differs from the run-time one{}",
                    spec.name,
                    first_difference(&stat, &dynamic, String::new())
                        .map(|d| format!(" ({d})"))
                        .unwrap_or_default()
                ));
            }
        }
    }
    out
}

/// Where two JSON values first differ: a JSON pointer and both values there.
fn first_difference(a: &Value, b: &Value, at: String) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| match (x.get(k), y.get(k)) {
                (Some(p), Some(q)) => first_difference(p, q, format!("{at}/{k}")),
                (p, q) => Some(format!("at {at}/{k}: static {p:?}, run time {q:?}")),
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, format!("{at}/{i}"))),
        _ if a == b => None,
        _ => Some(format!("at {at}: static {a}, run time {b}")),
    }
}

/// One input line of the exec mode; `args` is kept as the exact text sent.
#[derive(serde::Deserialize)]
struct Call<'a> {
    tool: String,
    #[serde(borrow)]
    args: &'a serde_json::value::RawValue,
    /// The profile of the host the arguments came through (`exact`,
    /// `javascript`); absent: `exact`.
    #[serde(default)]
    host: Option<String>,
}

/// The options of a call whose arguments came through a host of profile
/// `host`, as an MCP server of that profile passes them: the host, which
/// makes the executor refuse an integer number a double may have rounded.
fn call_options(host: HostProfile) -> CallOptions {
    CallOptions::new().through_host(host)
}

fn exec(addr: &str) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    let channel = runtime
        .block_on(
            tonic::transport::Channel::from_shared(format!("http://{addr}"))
                .map_err(|e| format!("bad address `{addr}`: {e}"))?
                .connect(),
        )
        .map_err(|e| format!("connecting to {addr}: {e}"))?;
    let transport = TonicTransport::new(channel);
    let aliases = Arc::new(AliasManager::new());
    preregister(&aliases)?;
    let executors: Vec<ProtoExecutor<TonicTransport>> = CORPUS
        .iter()
        .map(|c| {
            ProtoExecutor::with_alias_manager(
                (c.tools)(),
                (c.pool)(),
                transport.clone(),
                aliases.clone(),
            )
        })
        .collect();
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.map_err(|e| format!("reading stdin: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let call: Call<'_> =
            serde_json::from_str(&line).map_err(|e| format!("bad input line ({e}): {line}"))?;
        let host = match call.host.as_deref() {
            None => HostProfile::Exact,
            Some(name) => name.parse().map_err(|e| format!("{e}: {line}"))?,
        };
        let options = call_options(host);
        let result = match executors.iter().find(|e| e.can_execute(&call.tool)) {
            Some(executor) => {
                runtime.block_on(executor.execute_with(&call.tool, call.args.get(), &options))
            }
            None => proto_ai_tools::ToolResult::error(format!("no corpus tool `{}`", call.tool)),
        };
        let out = json!({ "is_error": result.is_error, "output": result.output });
        writeln!(stdout, "{out}")
            .and_then(|()| stdout.flush())
            .map_err(|e| format!("writing stdout: {e}"))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["dump"] => dump(None).map(|doc| println!("{doc}")),
        ["dump", "--max-tool-bytes", bytes] => bytes
            .parse()
            .map_err(|e| format!("--max-tool-bytes {bytes}: {e}"))
            .and_then(|bytes| dump(Some(bytes)))
            .map(|doc| println!("{doc}")),
        ["exec", addr] => exec(addr),
        _ => Err(
            "usage: schema_truth dump [--max-tool-bytes N] | schema_truth exec <grpc-addr>"
                .to_owned(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("schema_truth: {e}");
            ExitCode::FAILURE
        }
    }
}
