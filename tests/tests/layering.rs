//! What a program that only runs tool calls compiles: the library
//! `proto-ai-tools`, with every one of its features on, holds no MCP server
//! (`rmcp`, `axum`: those are `proto-ai-tools-mcp`'s), no HTTP server
//! (hyper's `server` feature: a backend is reached through tonic's client
//! `channel` alone) and no JOSE (`jsonwebtoken`). Asked of cargo itself,
//! so a dependency or a feature that brings one of them back fails here.

use std::process::Command;

#[test]
fn the_library_compiles_no_mcp_server_no_http_server_and_no_jose() {
    let output = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "--quiet",
            "--offline",
            "--package",
            "proto-ai-tools",
            "--all-features",
        ])
        .args([
            "--edges", "normal", "--prefix", "none", "--format", "{p} {f}",
        ])
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tree = String::from_utf8(output.stdout).expect("cargo tree prints UTF-8");
    // Each line: the package, its version and source, then its features.
    let packages: Vec<(&str, Vec<&str>)> = tree
        .lines()
        .filter_map(|line| {
            let mut words = line.split(' ');
            let name = words.next()?;
            let features = words
                .find(|word| word.contains(',') || !word.starts_with(['v', '(']))
                .map(|list| list.split(',').collect())
                .unwrap_or_default();
            Some((name, features))
        })
        .collect();
    assert!(
        packages.iter().any(|(name, _)| *name == "tonic"),
        "the tree should hold tonic, the default transport:\n{tree}"
    );
    for refused in ["rmcp", "axum", "jsonwebtoken", "proto-ai-tools-mcp"] {
        assert!(
            !packages.iter().any(|(name, _)| *name == refused),
            "proto-ai-tools compiles {refused}, which belongs to the gateway:\n{tree}"
        );
    }
    for (name, features) in &packages {
        if *name == "hyper" {
            assert!(
                !features.contains(&"server"),
                "proto-ai-tools turns on hyper's `server` feature ({features:?}): \
                 it should reach backends through tonic's `channel` alone"
            );
        }
    }
}
