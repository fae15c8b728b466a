//! Output schemas hold for every result: `ai-tools mcp --output-schemas`
//! over the corpus protos lists each tool's `outputSchema`, and every result
//! of every tool, for responses `hypothesis` draws from the response type
//! and a grpcio server sends, validates against it, as the official
//! TypeScript MCP SDK's `callTool` checks it and as Python's `jsonschema`
//! (Draft 2020-12) checks it. The work is done by `tests/output/harness.py`
//! (see its docstring), with `tests/node/output_host.mjs` as the host.
//!
//! Needs a Python with `hypothesis`, `jsonschema`, `grpcio` and `protobuf`
//! (`AI_TOOLS_PYTHON`, else `target/py-venv/bin/python`) and Node.js 20 or
//! later with the packages of `tests/node` installed (`npm ci` there).
//! Without them the test is skipped, saying why, unless
//! `AI_TOOLS_REQUIRE_PYTHON` or `AI_TOOLS_REQUIRE_NODE` is set (as in CI),
//! where it fails.

// The shared helpers in `support/` are not `#[test]` code, so clippy.toml's
// `allow-*-in-tests` does not reach them; they fail the test by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::Write as _;
use std::process::Command;

use proto_ai_tools_tests::support::{
    node_at_least, node_required, python_importing, python_required,
};
use proto_ai_tools_tests::tools;
use support::workspace;

/// Draws per tool (hypothesis stops sooner where a response type has fewer
/// distinct values).
const DRAWS: &str = "20";

/// Writes past the test harness's capture, so a skip or the summary is seen.
fn say(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// The corpus: the annotated protos of the tests library (as
/// `schema_truth`'s, with the streaming one; not `shapes.proto`, whose own
/// declaration of the annotations cannot share a pool with theirs), under
/// the workspace root, and their include directories.
const CORPUS: &[&str] = &[
    "links/v1/links.proto",
    "conformance/v1/conformance.proto",
    "feed/v1/feed.proto",
    "corpus/v1/google_types.proto",
    "etcd/api/etcdserverpb/rpc.proto",
    "google/longrunning/operations_proto.proto",
];
const INCLUDES: &[&str] = &[
    "proto",
    "proto/third_party/googleapis",
    "proto/third_party/etcd",
];

/// The corpus compiled as `ai-tools --proto` compiles (protox, the
/// annotation protos served), every file once and after its imports (as a
/// Python descriptor pool takes them), options and all. The tests library's
/// expansions embed thinned descriptors, which a gateway cannot serve from.
fn descriptor_set() -> Vec<u8> {
    let includes = INCLUDES.iter().map(|dir| workspace().join(dir));
    let mut compiler =
        protox::Compiler::with_file_resolver(proto_ai_tools_schema::proto_resolver(includes));
    compiler.include_imports(true);
    compiler.open_files(CORPUS).unwrap();
    compiler.encode_file_descriptor_set()
}

/// How many tools the corpus's expansions hold.
fn corpus_tool_count() -> u64 {
    [
        tools::links::all_tools().len(),
        tools::conformance::all_tools().len(),
        tools::feed::all_tools().len(),
        tools::google_types::all_tools().len(),
        tools::etcd::all_tools().len(),
        tools::longrunning_overlay::all_tools().len(),
    ]
    .iter()
    .sum::<usize>() as u64
}

#[test]
fn every_result_of_every_corpus_tool_validates_against_its_output_schema() {
    let python = match python_importing("hypothesis, jsonschema, grpc, google.protobuf") {
        Ok(python) => python,
        Err(reason) if python_required() => panic!("AI_TOOLS_REQUIRE_PYTHON is set: {reason}"),
        Err(reason) => return say(&format!("SKIPPED: {reason}")),
    };
    let node_dir = workspace().join("tests/node");
    let sdk = node_dir.join("node_modules/@modelcontextprotocol/sdk/package.json");
    let node = node_at_least(20).and_then(|node| {
        if sdk.is_file() {
            Ok(node)
        } else {
            Err("the TypeScript MCP SDK is not installed (run `npm ci` in tests/node)".to_owned())
        }
    });
    let node = match node {
        Ok(node) => node,
        Err(reason) if node_required() => panic!("AI_TOOLS_REQUIRE_NODE is set: {reason}"),
        Err(reason) => return say(&format!("SKIPPED: {reason}")),
    };
    let dir = std::env::temp_dir().join(format!("ai-tools-output-schemas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let set = dir.join("corpus.binpb");
    std::fs::write(&set, descriptor_set()).unwrap();

    // Each host profile the gateway lists for: without `$ref` (the
    // default) and with it.
    for host in ["javascript", "exact"] {
        let output = Command::new(&python)
            .arg(workspace().join("tests/output/harness.py"))
            .arg("--ai-tools")
            .arg(env!("CARGO_BIN_EXE_ai-tools"))
            .arg("--descriptor-set")
            .arg(&set)
            .arg("--overlay")
            .arg(workspace().join("tests/overlays/operations.tools.toml"))
            .arg("--node-dir")
            .arg(&node_dir)
            .args(["--draws", DRAWS, "--host-profile", host])
            // The harness starts `node` by name: the one found above first.
            .env("PATH", path_with(&node))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let summary: serde_json::Value = stdout
            .lines()
            .last()
            .and_then(|line| serde_json::from_str(line).ok())
            .unwrap_or_else(|| {
                panic!("{host}: the harness printed no summary\n{stdout}\n{stderr}")
            });
        say(&format!("host profile {host}:\n{stdout}"));
        assert!(
            output.status.success() && summary["failures"] == 0,
            "{host}: results that did not validate (see above)\n{stderr}"
        );
        // Every tool of the corpus is listed with a schema and was called.
        assert_eq!(
            summary["unlisted"],
            serde_json::json!([]),
            "{host}: {stdout}"
        );
        let corpus_tools = corpus_tool_count();
        assert_eq!(summary["tools"], corpus_tools, "{host}: {stdout}");
        assert!(
            summary["results"].as_u64().unwrap() >= 5 * corpus_tools,
            "{host}: {stdout}"
        );
    }
    if std::env::var_os("AI_TOOLS_KEEP_OUTPUT_DIR").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// `PATH` with `node`'s directory first.
fn path_with(node: &std::path::Path) -> std::ffi::OsString {
    let mut dirs: Vec<std::path::PathBuf> = node.parent().into_iter().map(Into::into).collect();
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(dirs).unwrap()
}
