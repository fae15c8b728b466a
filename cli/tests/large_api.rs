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

use ai_tools::schema::Dialect;
use ai_tools::toolkit::search::ToolIndex;
use ai_tools_tests::large_api::{COMPUTE, compute_toolkit, substring_ranking};

/// The Compute toolkit, built once for both tests (about half a minute in
/// a debug build), or none without the package.
fn compute() -> Option<&'static ai_tools::Toolkit> {
    static TOOLKIT: std::sync::OnceLock<Option<ai_tools::Toolkit>> = std::sync::OnceLock::new();
    TOOLKIT
        .get_or_init(|| support::published_tree(COMPUTE).map(|tree| compute_toolkit(&tree)))
        .as_ref()
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
    let Some(toolkit) = compute() else {
        return;
    };
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
    let Some(toolkit) = compute() else {
        return;
    };
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

    let index = ToolIndex::new(toolkit);
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
    let (base_recall, base_mrr, _) = measure(&requests, |text| {
        substring_ranking(&names, text)
            .into_iter()
            .map(|i| names[i].clone())
            .collect()
    });
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

/// The HTTP verb of every method of a proto file, read from its text
/// (`service`, `rpc` and the `get:`/`post:`/… line of its `google.api.http`
/// option): a reading of the proto that shares nothing with the descriptors
/// the hints are built from.
fn http_verbs_in_text(text: &str) -> std::collections::HashMap<(String, String), String> {
    let mut verbs = std::collections::HashMap::new();
    let (mut service, mut rpc) = (String::new(), None::<String>);
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("service ") {
            service = rest
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_owned();
        } else if let Some(rest) = line.strip_prefix("rpc ") {
            rpc = rest.split('(').next().map(|name| name.trim().to_owned());
        } else if let Some(name) = &rpc
            && let Some((verb, _)) = line.split_once(": \"")
            && ["get", "post", "put", "patch", "delete"].contains(&verb)
        {
            verbs.insert((service.clone(), name.clone()), verb.to_owned());
            rpc = None;
        }
    }
    verbs
}

/// Issue 40: Compute sets no `idempotency_level`, but binds its methods to
/// HTTP verbs, the API's own word on what they do (AIP-131, 132, 135): a
/// `GET` method is read-only, a `DELETE` one destructive. So `--read-only`
/// keeps the Get, List and AggregatedList tools that are bound to `GET`,
/// and nothing else. (Some methods named Get or List are bound to `POST`
/// with a body, `GetHealth` say: those stay writes.)
#[test]
fn compute_v1_hints_come_from_its_http_bindings() {
    let Some(toolkit) = compute() else {
        return;
    };
    let tree = support::published_tree(COMPUTE).expect("the package, as compute() found it");
    let text = std::fs::read_to_string(tree.join(COMPUTE)).expect("compute.proto");
    let verbs = http_verbs_in_text(&text);
    let mut read_only = 0;
    let mut wrong = Vec::new();
    for tool in toolkit.tools() {
        let rpc = tool.agent_tool().expect("generated").method;
        let service = rpc.service.rsplit('.').next().unwrap_or_default();
        let verb = verbs
            .get(&(service.to_owned(), rpc.method.to_owned()))
            .map_or("none", String::as_str);
        let hints = tool.hints();
        read_only += usize::from(hints.read_only);
        if hints.read_only != (verb == "get") {
            wrong.push(format!(
                "{} ({verb}): read-only {}",
                tool.name(),
                hints.read_only
            ));
        }
        if (hints.destructive == Some(true)) != (verb == "delete") {
            wrong.push(format!(
                "{} ({verb}): destructive {:?}",
                tool.name(),
                hints.destructive
            ));
        }
        if hints.read_only
            && !["Get", "List", "AggregatedList"]
                .iter()
                .any(|standard| rpc.method.starts_with(standard))
        {
            wrong.push(format!(
                "{} ({}): read-only but not a Get or List",
                tool.name(),
                rpc.method
            ));
        }
    }
    println!(
        "{read_only} of {} Compute tools are read-only",
        toolkit.tools().len()
    );
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(read_only > 300, "{read_only}");
}
