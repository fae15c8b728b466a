//! A large real API as its package publishes it: Google Compute Engine v1
//! (`google/cloud/compute/v1/compute.proto` from npm's `google-proto-files`,
//! installed in `tests/node` by `npm ci`), every service exposed whole:
//! about a thousand tools. Every tool's rendering passes every dialect's
//! checker, and `search_tools`' ranking ([`ToolIndex`]) is measured on the
//! labelled requests of `tests/search/compute_v1_requests.toml` against a
//! plain substring match over names, the baseline to beat.
//!
//! Run with `--nocapture` to see the figures BENCHMARKS.md reports.
//! Without the package the tests are skipped, saying why, unless
//! `AI_TOOLS_REQUIRE_NODE` is set (`.ci/run` sets it): then they fail.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::PathBuf;

use ai_tools::Toolkit;
use ai_tools::schema::Dialect;
use ai_tools::tool_set::{ToolSet, ToolSetOptions};
use ai_tools::toolkit::search::ToolIndex;
use ai_tools::transport::InProcessTransport;

/// The tree of `google-proto-files`, or why there is none.
fn published_tree() -> Option<PathBuf> {
    let tree = support::workspace().join("tests/node/node_modules/google-proto-files");
    if tree.join("google/cloud/compute/v1/compute.proto").is_file() {
        return Some(tree);
    }
    let reason =
        "tests/node/node_modules/google-proto-files is not installed (run `npm ci` in tests/node)";
    assert!(
        std::env::var_os("AI_TOOLS_REQUIRE_NODE").is_none(),
        "{reason}"
    );
    eprintln!("skipped: {reason}");
    None
}

/// Every service of Compute v1 as tools, in a toolkit.
fn compute(tree: &std::path::Path) -> Toolkit {
    let mut compiler =
        protox::Compiler::with_file_resolver(ai_tools_schema::proto_resolver(&[tree.to_owned()]));
    compiler.include_imports(true).include_source_info(true);
    compiler
        .open_file("google/cloud/compute/v1/compute.proto")
        .expect("compute.proto compiles as published");
    let bytes = compiler.encode_file_descriptor_set();
    let options = ToolSetOptions::new().service("google.cloud.compute.v1.*");
    let set = ToolSet::from_descriptor_set(&bytes, &options).expect("every tool builds and checks");
    Toolkit::builder()
        .generated(set.executor(InProcessTransport::new()))
        .build()
        .expect("a toolkit")
}

#[derive(serde::Deserialize)]
struct Requests {
    request: Vec<Request>,
}

#[derive(serde::Deserialize)]
struct Request {
    text: String,
    method: String,
}

/// The 1-based rank of `wanted` in `ranked`, if it is there.
fn rank(ranked: &[String], wanted: &str) -> Option<usize> {
    ranked.iter().position(|n| n == wanted).map(|i| i + 1)
}

/// The baseline: tools ranked by how many words of the request (of three
/// letters or more) occur in their names, ties in list order.
fn substring_ranking(names: &[String], text: &str) -> Vec<String> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 3)
        .map(str::to_lowercase)
        .collect();
    let mut scored: Vec<(usize, usize)> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            (
                words.iter().filter(|w| name.contains(w.as_str())).count(),
                i,
            )
        })
        .filter(|(hits, _)| *hits > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, i)| names[i].clone()).collect()
}

/// recall@5 and MRR of a ranking over the labelled requests.
fn measure(
    requests: &[(String, String)],
    ranking: impl Fn(&str) -> Vec<String>,
) -> (f64, f64, Vec<String>) {
    let mut at5 = 0usize;
    let mut reciprocal = 0.0;
    let mut misses = Vec::new();
    for (text, tool) in requests {
        match rank(&ranking(text), tool) {
            Some(r) => {
                if r <= 5 {
                    at5 += 1;
                } else {
                    misses.push(format!("{tool} at {r}: {text}"));
                }
                reciprocal += 1.0 / r as f64;
            }
            None => misses.push(format!("{tool} not found: {text}")),
        }
    }
    let n = requests.len() as f64;
    (at5 as f64 / n, reciprocal / n, misses)
}

#[test]
fn compute_v1_builds_whole_and_every_rendering_passes_its_checker() {
    let Some(tree) = published_tree() else {
        return;
    };
    let toolkit = compute(&tree);
    assert!(toolkit.tools().len() > 900, "{}", toolkit.tools().len());
    for tool in toolkit.tools() {
        for dialect in Dialect::ALL {
            let violations = ai_tools::schema::check::check(
                dialect,
                tool.is_strict(),
                &tool.parameters(dialect),
            );
            assert!(
                violations.is_empty(),
                "{} in {dialect}: {violations:?}",
                tool.name()
            );
        }
    }
}

#[test]
fn search_tools_finds_the_labelled_rpc_in_its_first_five_on_compute_v1() {
    let Some(tree) = published_tree() else {
        return;
    };
    let toolkit = compute(&tree);
    let labelled: Requests = toml::from_str(
        &std::fs::read_to_string(
            support::workspace().join("tests/search/compute_v1_requests.toml"),
        )
        .unwrap(),
    )
    .expect("the labelled requests parse");
    let tool_of = |method: &str| {
        toolkit
            .tools()
            .iter()
            .find(|t| {
                t.agent_tool()
                    .is_some_and(|a| format!("{}/{}", a.method.service, a.method.method) == method)
            })
            .map(|t| t.name().to_owned())
            .unwrap_or_else(|| panic!("{method} is a tool"))
    };
    let requests: Vec<(String, String)> = labelled
        .request
        .iter()
        .map(|r| (r.text.clone(), tool_of(&r.method)))
        .collect();
    assert!(requests.len() >= 100, "{}", requests.len());

    let index = ToolIndex::new(&toolkit);
    let everything = toolkit.tools().len();
    let (recall, mrr, misses) = measure(&requests, |text| {
        index
            .search(text, everything)
            .into_iter()
            .map(|m| m.name)
            .collect()
    });
    let names: Vec<String> = toolkit
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    let (base_recall, base_mrr, _) = measure(&requests, |text| substring_ranking(&names, text));
    println!(
        "{} requests over {} tools: search_tools recall@5 {recall:.3}, MRR {mrr:.3}; \
         substring over names recall@5 {base_recall:.3}, MRR {base_mrr:.3}",
        requests.len(),
        everything
    );
    println!("not in the first five:\n  {}", misses.join("\n  "));
    assert!(
        recall >= base_recall + 0.1 && mrr >= base_mrr + 0.1,
        "the search beats the substring baseline by a margin"
    );
    // What this search measured when it was written (0.631), less a margin:
    // a floor against regressions. The bar of 0.9 is not met by a
    // lexical ranking on these paraphrased requests (BENCHMARKS.md, "Tool
    // search").
    assert!(recall >= 0.6, "recall@5 {recall:.3} fell under 0.6");
}
