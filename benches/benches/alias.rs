//! Alias rewriting: `aliasify_json` and `resolve_json` of JSON documents of
//! 1 KB, 100 KB and 1 MB with 10, 1,000 and 10,000 ids registered, against
//! the same run's `serde_json` parse + serialise of the same document, and
//! against the Go plugin's way: one substring `ReplaceAll` per known id.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput};
use proto_ai_tools::AliasManager;
use proto_ai_tools_benches::{json_document, quick_mode, ready, uuids};
use serde_json::Value;

const SIZES: &[(usize, &str)] = &[(1024, "1KB"), (100 * 1024, "100KB"), (1024 * 1024, "1MB")];
const ID_COUNTS: &[usize] = &[10, 1_000, 10_000];

/// The Go plugin's rewrite, faithfully: for every known (uuid, alias) pair,
/// `strings.ReplaceAll(text, uuid, alias)`, which first counts matches and
/// returns the text untouched when there are none.
fn go_replace_all(text: &str, pairs: &[(String, String)]) -> String {
    let mut text = text.to_owned();
    for (uuid, alias) in pairs {
        if text.contains(uuid.as_str()) {
            text = text.replace(uuid.as_str(), alias);
        }
    }
    text
}

fn roundtrip(text: &str) -> String {
    let value: Value = serde_json::from_str(text).expect("valid JSON");
    serde_json::to_string(&value).expect("serialisable")
}

fn bench(c: &mut Criterion) {
    for &(size, label) in SIZES {
        let mut group = c.benchmark_group(format!("alias/{label}"));
        group
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2));
        if size >= 1024 * 1024 {
            group.sampling_mode(SamplingMode::Flat).sample_size(20);
        }
        for &ids in ID_COUNTS {
            let known = uuids(ids);
            let aliases = AliasManager::new();
            let pairs: Vec<(String, String)> = known
                .iter()
                .map(|id| {
                    (
                        id.clone(),
                        ready(aliases.register("link", id)).expect("uuid"),
                    )
                })
                .collect();
            let doc = json_document(size, &known);
            let aliased = {
                let mut v: Value = serde_json::from_str(&doc).expect("valid JSON");
                aliases.aliasify_json(&mut v);
                serde_json::to_string(&v).expect("serialisable")
            };
            group.throughput(Throughput::Bytes(doc.len() as u64));

            group.bench_with_input(
                BenchmarkId::new("baseline_parse_serialise", ids),
                &doc,
                |b, doc| {
                    b.iter(|| roundtrip(black_box(doc)));
                },
            );
            group.bench_with_input(
                BenchmarkId::new("aliasify_parse_rewrite_serialise", ids),
                &doc,
                |b, doc| {
                    b.iter(|| {
                        let mut v: Value =
                            serde_json::from_str(black_box(doc)).expect("valid JSON");
                        aliases.aliasify_json(&mut v);
                        serde_json::to_string(&v).expect("serialisable")
                    });
                },
            );
            let parsed: Value = serde_json::from_str(&doc).expect("valid JSON");
            group.bench_with_input(
                BenchmarkId::new("aliasify_json_only", ids),
                &parsed,
                |b, parsed| {
                    b.iter_batched_ref(
                        || parsed.clone(),
                        |v| aliases.aliasify_json(v),
                        BatchSize::LargeInput,
                    );
                },
            );

            group.throughput(Throughput::Bytes(aliased.len() as u64));
            group.bench_with_input(
                BenchmarkId::new("baseline_parse_serialise_aliased", ids),
                &aliased,
                |b, doc| b.iter(|| roundtrip(black_box(doc))),
            );
            group.bench_with_input(
                BenchmarkId::new("resolve_parse_rewrite_serialise", ids),
                &aliased,
                |b, doc| {
                    b.iter(|| {
                        let mut v: Value =
                            serde_json::from_str(black_box(doc)).expect("valid JSON");
                        aliases.resolve_json(&mut v);
                        serde_json::to_string(&v).expect("serialisable")
                    });
                },
            );
            let parsed: Value = serde_json::from_str(&aliased).expect("valid JSON");
            group.bench_with_input(
                BenchmarkId::new("resolve_json_only", ids),
                &parsed,
                |b, parsed| {
                    b.iter_batched_ref(
                        || parsed.clone(),
                        |v| aliases.resolve_json(v),
                        BatchSize::LargeInput,
                    );
                },
            );

            // The contrast grows with ids x bytes: at 1 MB x 10,000 ids one
            // rewrite takes seconds, so it runs there only in full mode.
            if !(quick_mode() && size * ids > 100 * 1024 * 1000) {
                group.throughput(Throughput::Bytes(doc.len() as u64));
                if size * ids >= 100 * 1024 * 10_000 {
                    group.sampling_mode(SamplingMode::Flat).sample_size(10);
                }
                group.bench_with_input(
                    BenchmarkId::new("go_replace_all_per_id", ids),
                    &doc,
                    |b, doc| {
                        b.iter(|| go_replace_all(black_box(doc), &pairs));
                    },
                );
            }
        }
        group.finish();
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
}
