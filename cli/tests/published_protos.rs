//! Google's protos as a package publishes them (npm's `google-proto-files`,
//! installed in `tests/node` by `npm ci`): their tree carries its own
//! `google/protobuf/descriptor.proto`, with tooling declarations
//! (`extensions 536000000 [declaration = {…}]`) protox's parser does not
//! read. `ai-tools --proto` compiles against the well-known types protox
//! bundles instead, so the tree works as published; and an error in a
//! proto names its file, line and column.
//!
//! Without the package the test is skipped, saying why, unless
//! `AI_TOOLS_REQUIRE_NODE` is set (`.ci/run` sets it): then it fails.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::process::Command;

#[test]
fn google_pubsub_compiles_from_its_published_tree_in_every_dialect() {
    let Some(tree) = support::published_tree("google/pubsub/v1/pubsub.proto") else {
        return;
    };
    let descriptor =
        std::fs::read_to_string(tree.join("google/protobuf/descriptor.proto")).unwrap();
    assert!(
        descriptor.contains("extensions 536000000 [declaration"),
        "the published descriptor.proto carries the declaration this test is about"
    );
    for dialect in ["openai", "anthropic", "gemini", "mcp"] {
        let output = Command::new(env!("CARGO_BIN_EXE_ai-tools"))
            .arg("tools")
            .arg("--proto")
            .arg(tree.join("google/pubsub/v1/pubsub.proto"))
            .arg("-I")
            .arg(&tree)
            .args([
                "--service",
                "google.pubsub.v1.Publisher",
                "--dialect",
                dialect,
            ])
            .output()
            .expect("the binary runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{dialect}: {stderr}");
        let tools: serde_json::Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|e| panic!("{dialect}: stdout is JSON: {e}"));
        let names: Vec<String> = tools
            .as_array()
            .or_else(|| tools["functionDeclarations"].as_array())
            .unwrap_or_else(|| panic!("{dialect}: a list of tools: {tools}"))
            .iter()
            .map(|t| {
                t["name"]
                    .as_str()
                    .or_else(|| t["function"]["name"].as_str())
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect();
        assert!(
            names.iter().any(|n| n == "publisher_create_topic")
                && names.iter().all(|n| n.starts_with("publisher_")),
            "{dialect}: {names:?}"
        );
    }
}

#[test]
fn a_parse_error_in_an_imported_proto_names_its_file_line_and_column() {
    let dir = std::env::temp_dir().join(format!("ai-tools-parse-error-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("shop/v1")).unwrap();
    std::fs::write(
        dir.join("shop/v1/types.proto"),
        "syntax = \"proto3\";\npackage shop.v1;\nmessage Item {\n  string id = 1\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("shop/v1/shop.proto"),
        "syntax = \"proto3\";\npackage shop.v1;\nimport \"shop/v1/types.proto\";\nservice Shop { rpc Get(Item) returns (Item); }\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_ai-tools"))
        .arg("tools")
        .arg("--proto")
        .arg(dir.join("shop/v1/shop.proto"))
        .arg("-I")
        .arg(&dir)
        .output()
        .expect("the binary runs");
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("shop/v1/types.proto:5:1: expected ';'"),
        "the imported file's line and column: {stderr}"
    );
}
