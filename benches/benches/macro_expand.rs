//! Macro expansion: the `ai_tools!` pipeline (locate → protox compile →
//! schema model → render + check every dialect → expand to tokens), run
//! in-process on the macro's own modules, for the example proto and a
//! generated large proto (200 RPCs, 1,000 messages, nesting 6 deep); against
//! prost + tonic code generation (`tonic-prost-build`) of the same protos.
//!
//! A proc-macro crate cannot be linked by a bench, so its plain-Rust modules
//! are compiled into this bench with `#[path]`: the very code the macro runs.

// The modules' own unit tests are compiled out but their imports are not.
#![allow(dead_code, unused_imports)]

// Without the macro crate's build script there is no fingerprint, so the
// expansion cache is off here: the bench measures the whole pipeline.
#[path = "../../macros/src/cache.rs"]
mod cache;
#[path = "../../macros/src/compile.rs"]
mod compile;
#[path = "../../macros/src/errors.rs"]
mod errors;
#[path = "../../macros/src/expand.rs"]
mod expand;
#[path = "../../macros/src/input.rs"]
mod input;
#[path = "../../macros/src/locate.rs"]
mod locate;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, SamplingMode};
use proto_ai_tools_benches::{LargeProtoShape, quick_mode, write_large_proto};
use proto_ai_tools_schema::Dialect;

/// One proto the macro is pointed at, as a user's crate would name it.
struct Case {
    label: &'static str,
    manifest_dir: PathBuf,
    macro_input: input::MacroInput,
}

impl Case {
    fn located(&self) -> locate::Located {
        let includes: Vec<String> = self
            .macro_input
            .includes
            .iter()
            .map(syn::LitStr::value)
            .collect();
        locate::locate(
            &self.macro_input.path.value(),
            &includes,
            &self.manifest_dir,
            None,
        )
        .expect("located")
    }

    fn expand(&self) -> proc_macro2::TokenStream {
        let tokens = quote::ToTokens::to_token_stream(&self.macro_input.path);
        expand::ai_tools(tokens, &self.manifest_dir, None)
    }
}

/// Stage 3 as the macro runs it (`expand::check_renderings`): every dialect
/// rendered and checked, no text written, on every core.
fn render_and_check(tools: &[proto_ai_tools_schema::ToolSpec]) {
    assert!(expand::check_renderings(tools).is_empty());
}

/// The size of every rendering as text (what the expansion no longer embeds).
fn rendered_size(tools: &[proto_ai_tools_schema::ToolSpec]) -> usize {
    tools
        .iter()
        .map(|tool| {
            let r = tool.rendered();
            r.canonical.len()
                + r.openai.len()
                + r.anthropic.len()
                + r.gemini.len()
                + r.gemini_json_schema.len()
        })
        .sum()
}

/// prost + tonic code generation of the same file, as a `build.rs` would run
/// it: protox as it comes (`compile_plain`, not the macro's faster compile).
fn tonic_codegen(located: &locate::Located, out_dir: &Path) {
    let compiled = compile::compile_plain(located, false).expect("compiles");
    let fds = prost_reflect::prost::Message::decode(compiled.pool.encode_to_vec().as_slice())
        .expect("file descriptor set");
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .out_dir(out_dir)
        .compile_fds(fds)
        .expect("tonic codegen");
}

fn main() {
    let large_root =
        std::env::temp_dir().join(format!("ai-tools-bench-large-{}", std::process::id()));
    let large_path = write_large_proto(
        &large_root,
        if quick_mode() {
            LargeProtoShape::QUICK
        } else {
            LargeProtoShape::ISSUE
        },
    )
    .expect("write large proto");
    let codegen_out = large_root.join("codegen");
    std::fs::create_dir_all(&codegen_out).expect("codegen dir");

    let cases = [
        Case {
            label: "example_links",
            manifest_dir: Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf(),
            macro_input: syn::parse_str("\"proto/links/v1/links.proto\"").expect("input"),
        },
        Case {
            label: "large_200rpc_1000msg",
            manifest_dir: large_root.clone(),
            macro_input: syn::parse_str(&format!("{large_path:?}")).expect("input"),
        },
    ];

    // Sanity and sizes, once.
    for case in &cases {
        let started = Instant::now();
        let tokens = case.expand().to_string();
        let elapsed = started.elapsed();
        assert!(
            !tokens.contains("compile_error"),
            "{}: {}",
            case.label,
            &tokens[..tokens.len().min(2000)]
        );
        let compiled = compile::compile(&case.located()).expect("compiles");
        // The macro's compile gives protox's descriptors, byte for byte.
        let plain = compile::compile_plain(&case.located(), false).expect("compiles");
        assert!(compiled.encoded_with_source == plain.encoded_with_source);
        assert_eq!(compiled.read_files, plain.read_files);
        let tools = proto_ai_tools_schema::tools_in_file(&compiled.pool, &compiled.file_name)
            .expect("tools");
        println!(
            "macro bench: {}: {} tools, {} messages in the pool, expansion {} bytes of tokens, embedded pool {} bytes, rendered schemas {} bytes; first expansion {:.1} ms",
            case.label,
            tools.len(),
            compiled.pool.all_messages().count(),
            tokens.len(),
            compiled.embedded_pool().len(),
            rendered_size(&tools),
            elapsed.as_secs_f64() * 1e3,
        );
    }

    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("macro");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(if quick_mode() { 1 } else { 5 }))
        .sampling_mode(SamplingMode::Flat)
        .sample_size(20);
    for case in &cases {
        let located = case.located();
        group.bench_function(
            BenchmarkId::new("ai_tools_whole_pipeline", case.label),
            |b| {
                b.iter(|| case.expand());
            },
        );
        group.bench_function(
            BenchmarkId::new("stage1_locate_protox_compile", case.label),
            |b| {
                b.iter(|| compile::compile(&case.located()).expect("compiles"));
            },
        );
        let compiled = compile::compile(&located).expect("compiles");
        group.bench_function(BenchmarkId::new("stage2_tools_in_file", case.label), |b| {
            b.iter(|| {
                proto_ai_tools_schema::tools_in_file(black_box(&compiled.pool), &compiled.file_name)
                    .expect("tools")
            });
        });
        let tools = proto_ai_tools_schema::tools_in_file(&compiled.pool, &compiled.file_name)
            .expect("tools");
        group.bench_function(BenchmarkId::new("stage3_render_check", case.label), |b| {
            b.iter(|| render_and_check(black_box(&tools)));
        });
        // Stages 2 and 3 as the macro runs them: each tool checked while the
        // later ones are read (`expand::read_and_check`).
        group.bench_function(
            BenchmarkId::new("stage2_3_read_and_check", case.label),
            |b| {
                b.iter(|| {
                    let (tools, violations) =
                        expand::read_and_check(black_box(&compiled.pool), &compiled.file_name);
                    assert!(tools.is_ok() && violations.is_empty());
                });
            },
        );
        // What a program pays once, the first time it asks any tool of the
        // file for a schema: the embedded descriptors decoded, the tools
        // read from them and every dialect rendered (no checks).
        let embedded = compiled.embedded_pool();
        group.bench_function(
            BenchmarkId::new("run_time_first_schema_use", case.label),
            |b| {
                b.iter(|| {
                    let pool =
                        prost_reflect::DescriptorPool::decode(black_box(embedded.as_slice()))
                            .expect("decodes");
                    let tools = proto_ai_tools_schema::tools_in_file(&pool, &compiled.file_name)
                        .expect("tools");
                    tools
                        .iter()
                        .map(proto_ai_tools_schema::ToolSpec::rendered)
                        .count()
                });
            },
        );
        group.bench_function(BenchmarkId::new("tokens_to_string", case.label), |b| {
            let tokens = case.expand();
            b.iter(|| tokens.to_string());
        });
        group.bench_function(
            BenchmarkId::new("baseline_protox_plus_tonic_prost_build", case.label),
            |b| {
                b.iter(|| tonic_codegen(&located, &codegen_out));
            },
        );
    }
    group.finish();
    c.final_summary();
    let _ = std::fs::remove_dir_all(&large_root);
}
