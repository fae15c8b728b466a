//! Tool search on a large real API: Google Compute Engine v1 as npm's
//! `google-proto-files` publishes it (installed in `tests/node` by
//! `npm ci`), every service exposed whole, 988 tools.
//!
//! - `tool_search/index`: building the `ToolIndex` (what
//!   `McpServer::with_tool_search` does once at start), against the same
//!   run's rendering of the whole MCP tool list, which every server does
//!   once at start anyway.
//! - `tool_search/query`: one `search_tools` ranking (five results), against
//!   the same run's substring match over the tool names, the baseline whose
//!   quality it beats (BENCHMARKS.md, section 9).
//!
//! Without the package the bench says why and measures nothing.

use std::hint::black_box;
use std::time::Duration;

use criterion::Criterion;
use proto_ai_tools::toolkit::search::ToolIndex;
use proto_ai_tools_benches::workspace_root;
use proto_ai_tools_tests::large_api::{COMPUTE, compute_toolkit, substring_ranking};

const QUERIES: &[&str] = &[
    "shut down the server api-2 in europe-west1-b",
    "list the firewall rules of my network",
    "take a snapshot of the disk data-1",
    "resize the managed instance group web-mig to 10",
];

fn compute() -> Option<proto_ai_tools::Toolkit> {
    let tree = workspace_root().join("tests/node/node_modules/google-proto-files");
    if !tree.join(COMPUTE).is_file() {
        eprintln!(
            "tool_search: skipped, google-proto-files is not installed (npm ci in tests/node)"
        );
        return None;
    }
    Some(compute_toolkit(&tree))
}

fn main() {
    let Some(toolkit) = compute() else { return };
    let mut c = Criterion::default().configure_from_args();

    let mut group = c.benchmark_group("tool_search/index");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));
    group.bench_function("ToolIndex::new", |b| {
        b.iter(|| black_box(ToolIndex::new(&toolkit)))
    });
    group.bench_function("baseline: the MCP tool list", |b| {
        b.iter(|| {
            let list: Vec<proto_ai_tools_mcp::rmcp::model::Tool> = toolkit
                .tools()
                .iter()
                .map(|t| proto_ai_tools_mcp::to_mcp_tool(t, proto_ai_tools_mcp::MCP_DIALECT))
                .collect();
            black_box(list)
        })
    });
    group.finish();

    let index = ToolIndex::new(&toolkit);
    let names: Vec<String> = toolkit
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    let mut group = c.benchmark_group("tool_search/query");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    group.bench_function("ToolIndex::search", |b| {
        b.iter(|| {
            for query in QUERIES {
                black_box(index.search(query, 5));
            }
        })
    });
    group.bench_function("baseline: substring over names", |b| {
        b.iter(|| {
            for query in QUERIES {
                black_box(substring_ranking(&names, query));
            }
        })
    });
    group.finish();
    c.final_summary();
}
