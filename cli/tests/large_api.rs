//! Large real APIs as their package publishes them (npm's
//! `google-proto-files`, installed in `tests/node` by `npm ci`), every
//! service exposed whole: Google Compute Engine v1
//! (`google/cloud/compute/v1/compute.proto`, about a thousand tools) and a
//! second catalogue of seven other Google APIs (Cloud SQL Admin, Cloud Run,
//! Secret Manager, KMS, Pub/Sub, Cloud Tasks, Cloud Scheduler: about 250
//! tools). Every tool's rendering passes every dialect's checker, and
//! `search_tools`' ranking ([`ToolIndex`]) is measured on the labelled
//! requests of `tests/search/compute_v1_requests.toml` and
//! `tests/search/cloud_mix_requests.toml` against a plain substring match
//! over names, the baseline to beat.
//!
//! Run with `--nocapture` to see the figures BENCHMARKS.md reports.
//! Without the package the tests are skipped, saying why, unless
//! `AI_TOOLS_REQUIRE_NODE` is set (`.ci/run` sets it): then they fail.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use proto_ai_tools::Toolkit;
use proto_ai_tools::schema::Dialect;
use proto_ai_tools::toolkit::search::ToolIndex;
use proto_ai_tools_tests::large_api::{
    CLOUD_MIX, COMPUTE, Figures, Labelled, cloud_mix_toolkit, compute_toolkit, labelled_requests,
    measure, substring_ranking,
};

/// The Compute toolkit, built once for every test (about half a minute in
/// a debug build), or none without the package.
fn compute() -> Option<&'static Toolkit> {
    static TOOLKIT: std::sync::OnceLock<Option<Toolkit>> = std::sync::OnceLock::new();
    TOOLKIT
        .get_or_init(|| support::published_tree(COMPUTE).map(|tree| compute_toolkit(&tree)))
        .as_ref()
}

/// The second catalogue's toolkit, or none without the package.
fn cloud_mix() -> Option<&'static Toolkit> {
    static TOOLKIT: std::sync::OnceLock<Option<Toolkit>> = std::sync::OnceLock::new();
    TOOLKIT
        .get_or_init(|| support::published_tree(CLOUD_MIX[0]).map(|tree| cloud_mix_toolkit(&tree)))
        .as_ref()
}

/// A ranking measured on the labelled requests: a request's text → tool
/// names, best first.
type Ranking<'a> = Box<dyn Fn(&str) -> Vec<String> + 'a>;

/// The rankings measured on every catalogue, by name, the baseline first.
/// Another ranking (retrieval by meaning, or a fusion of it with BM25) is
/// one more entry.
fn rankings(toolkit: &Toolkit) -> Vec<(&'static str, Ranking<'_>)> {
    let names: Vec<String> = toolkit
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    let index = ToolIndex::new(toolkit);
    let mut rankings: Vec<(&'static str, Ranking<'_>)> = vec![
        (
            "substring over names",
            Box::new(move |text: &str| {
                substring_ranking(&names, text)
                    .into_iter()
                    .map(|i| names[i].clone())
                    .collect()
            }),
        ),
        (
            "BM25",
            Box::new(move |text: &str| index.ranked(text).map(|m| m.name).collect()),
        ),
    ];
    // Retrieval by meaning, fused with BM25, where the shipped model is
    // (`.ci/run` unpacks it and requires it).
    if let Some(dir) = embedding_model() {
        use proto_ai_tools::toolkit::semantic::{Embeddings, LocalModel};
        let model = LocalModel::open(&dir).expect("the model folder opens");
        let embeddings =
            Embeddings::new(model).cache_dir(support::workspace().join("target/embeddings-cache"));
        let fused = ToolIndex::with_embeddings(toolkit, &embeddings).expect("the tools embed");
        rankings.push((
            "BM25 + meaning (all-MiniLM-L6-v2), fused",
            Box::new(move |text: &str| fused.ranked(text).map(|m| m.name).collect()),
        ));
    }
    rankings
}

/// The all-MiniLM-L6-v2 folder (`AI_TOOLS_TEST_EMBEDDING_MODEL`, else where
/// `.ci/run` unpacks it); `None`, said, without it, unless
/// `AI_TOOLS_REQUIRE_EMBEDDING_MODEL` is set.
fn embedding_model() -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("AI_TOOLS_TEST_EMBEDDING_MODEL")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| support::workspace().join("target/models/all-MiniLM-L6-v2"));
    if dir.join("model.safetensors").is_file() {
        return Some(dir);
    }
    let why = format!(
        "no all-MiniLM-L6-v2 folder at {}: the fused ranking is not measured",
        dir.display()
    );
    assert!(
        std::env::var_os("AI_TOOLS_REQUIRE_EMBEDDING_MODEL")
            .is_none_or(|v| v.is_empty() || v == "0"),
        "AI_TOOLS_REQUIRE_EMBEDDING_MODEL is set: {why}"
    );
    println!("SKIPPED: {why}");
    None
}

/// Every ranking's figures on the requests of `file` (under
/// `tests/search`) over `toolkit`, printed as BENCHMARKS.md shows them.
fn measured(catalogue: &str, toolkit: &Toolkit, file: &str) -> Vec<(&'static str, Figures)> {
    let requests: Vec<Labelled> = labelled_requests(
        toolkit,
        &support::workspace().join("tests/search").join(file),
    );
    let figures: Vec<(&str, Figures)> = rankings(toolkit)
        .into_iter()
        .map(|(name, ranking)| (name, measure(&requests, ranking)))
        .collect();
    println!(
        "{catalogue}: {} requests over {} tools",
        requests.len(),
        toolkit.tools().len()
    );
    println!("| ranking | recall@1 | recall@5 | MRR |\n|---|---|---|---|");
    for (name, f) in &figures {
        println!(
            "| {name} | {:.3} | {:.3} | {:.3} |",
            f.recall_at_1, f.recall_at_5, f.mrr
        );
    }
    for (name, f) in &figures {
        println!(
            "{name}, not in the first five:\n  {}",
            f.misses.join("\n  ")
        );
    }
    figures
}

/// Retrieval by meaning, where measured, finds more in the first five than
/// BM25 alone and ranks better (MRR). The bars (recall@5 0.9,
/// recall@1 0.7) are not met yet: BENCHMARKS.md §9 has the figures.
fn fused_beats_bm25(figures: &[(&str, Figures)], bm25: &Figures) {
    if let Some((_, fused)) = figures.iter().find(|(name, _)| name.contains("meaning")) {
        assert!(
            fused.recall_at_5 > bm25.recall_at_5 && fused.mrr > bm25.mrr,
            "fused recall@5 {:.3}, MRR {:.3}; BM25 {:.3}, {:.3}",
            fused.recall_at_5,
            fused.mrr,
            bm25.recall_at_5,
            bm25.mrr
        );
    }
}

/// The figures of the ranking named `name`.
fn of<'a>(figures: &'a [(&str, Figures)], name: &str) -> &'a Figures {
    &figures
        .iter()
        .find(|(n, _)| *n == name)
        .expect("measured")
        .1
}

#[test]
fn compute_v1_builds_whole_and_every_rendering_passes_its_checker() {
    let Some(toolkit) = compute() else {
        return;
    };
    assert!(toolkit.tools().len() > 900, "{}", toolkit.tools().len());
    every_rendering_passes_its_checker(toolkit);
}

fn every_rendering_passes_its_checker(toolkit: &Toolkit) {
    for tool in toolkit.tools() {
        for dialect in Dialect::ALL {
            let violations = proto_ai_tools::schema::check::check(
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
    let figures = measured("Compute Engine v1", toolkit, "compute_v1_requests.toml");
    let (bm25, base) = (of(&figures, "BM25"), of(&figures, "substring over names"));
    fused_beats_bm25(&figures, bm25);
    assert!(
        bm25.recall_at_5 >= base.recall_at_5 + 0.1 && bm25.mrr >= base.mrr + 0.1,
        "the search beats the substring baseline by a margin"
    );
    // What this search measured (recall@5 0.634, recall@1 0.446), less a
    // margin: floors against regressions. The bars (recall@5 0.9,
    // recall@1 0.7) are not met by a lexical ranking on these paraphrased
    // requests (BENCHMARKS.md §9).
    assert!(
        bm25.recall_at_5 >= 0.6,
        "recall@5 {:.3} fell under 0.6",
        bm25.recall_at_5
    );
    assert!(
        bm25.recall_at_1 >= 0.42,
        "recall@1 {:.3} fell under 0.42",
        bm25.recall_at_1
    );
}

/// The second catalogue (issue 40): at least 150 tools of at least five
/// APIs other than Compute, every rendering checked, and 95 requests
/// written in a user's words before any search ran on it.
#[test]
fn search_tools_on_seven_other_google_apis() {
    let Some(toolkit) = cloud_mix() else {
        return;
    };
    let apis: std::collections::BTreeSet<&str> = toolkit
        .tools()
        .iter()
        .filter_map(|t| t.toolset())
        .map(|service| {
            service
                .rsplit_once('.')
                .map_or(service, |(package, _)| package)
        })
        .collect();
    assert!(toolkit.tools().len() >= 150, "{}", toolkit.tools().len());
    assert!(apis.len() >= 5, "{apis:?}");
    every_rendering_passes_its_checker(toolkit);
    let figures = measured(
        "seven other Google APIs",
        toolkit,
        "cloud_mix_requests.toml",
    );
    let (bm25, base) = (of(&figures, "BM25"), of(&figures, "substring over names"));
    fused_beats_bm25(&figures, bm25);
    assert!(
        bm25.recall_at_5 >= base.recall_at_5 + 0.1 && bm25.mrr >= base.mrr + 0.1,
        "the search beats the substring baseline by a margin"
    );
    // What BM25 measured (recall@5 0.558, recall@1 0.295), less a margin:
    // the requests are in a user's words, which the APIs' own rarely are
    // ("reboot the database server" for `SqlInstancesService/Restart`).
    assert!(
        bm25.recall_at_5 >= 0.5,
        "recall@5 {:.3} fell under 0.5",
        bm25.recall_at_5
    );
    assert!(
        bm25.recall_at_1 >= 0.25,
        "recall@1 {:.3} fell under 0.25",
        bm25.recall_at_1
    );
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

/// Issue 40: every Compute tool's whole definition fits the default size
/// budget in every dialect and host profile (the largest ran to 192 KB
/// spelled out), as a provider's list and as MCP `tools/list` carry it,
/// and every rendering the budget cut still passes its dialect's checker.
#[test]
fn compute_v1_every_tool_fits_the_size_budget_in_every_rendering() {
    use proto_ai_tools::schema::HostProfile;
    use proto_ai_tools::schema::render::{DEFAULT_MAX_TOOL_BYTES, minified_len};
    use proto_ai_tools_mcp::McpServer;
    let Some(toolkit) = compute() else {
        return;
    };
    let mut largest = (0, String::new());
    let mut fits = |len: usize, what: String| {
        assert!(len <= DEFAULT_MAX_TOOL_BYTES, "{what}: {len} bytes");
        if len > largest.0 {
            largest = (len, what);
        }
    };
    // Each provider's list, the parameters as a host of each profile
    // reads them.
    let lists = [
        (toolkit.to_openai(), "/function/parameters", Dialect::OpenAi),
        (toolkit.to_anthropic(), "/input_schema", Dialect::Anthropic),
        (
            toolkit.to_gemini()["functionDeclarations"].clone(),
            "/parameters",
            Dialect::Gemini,
        ),
        (
            toolkit.to_gemini_json_schema()["functionDeclarations"].clone(),
            "/parametersJsonSchema",
            Dialect::GeminiJsonSchema,
        ),
    ];
    for (list, at, dialect) in lists {
        let items = list.as_array().expect("a list of tools");
        assert_eq!(items.len(), toolkit.tools().len());
        for host in HostProfile::ALL {
            for (item, tool) in items.iter().zip(toolkit.tools()) {
                let parameters = tool.parameters_for_host(dialect, host);
                let violations =
                    proto_ai_tools::schema::check::check(dialect, tool.is_strict(), &parameters);
                assert!(violations.is_empty(), "{}: {violations:?}", tool.name());
                let mut item = item.clone();
                *item.pointer_mut(at).expect("the parameters") = parameters;
                fits(
                    minified_len(&item),
                    format!("{} in {dialect} for {}", tool.name(), host.as_str()),
                );
            }
        }
    }
    // MCP `tools/list`, every annotation included.
    let tree = support::published_tree(COMPUTE).expect("the package, as compute() found it");
    for host in HostProfile::ALL {
        let listed = McpServer::from_toolkit(compute_toolkit(&tree))
            .with_host_profile(host)
            .tools()
            .expect("the tools");
        for tool in listed {
            let item = serde_json::to_value(&tool).expect("a tool as JSON");
            fits(
                minified_len(&item),
                format!("{} in MCP tools/list for {}", tool.name, host.as_str()),
            );
        }
    }
    println!(
        "largest Compute tool definition: {} bytes ({})",
        largest.0, largest.1
    );
}
