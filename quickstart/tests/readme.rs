//! The Quickstart (README.md's, and the guide's `guide/src/quickstart.md`
//! with "Serve it with tonic") as a newcomer follows it: every block marked
//! `<!-- quickstart/FILE -->` in README.md or in a chapter of the guide is
//! extracted and compared with this crate's FILE byte for byte (the
//! `Cargo.toml` blocks line by line, with the path of this checkout's
//! `runtime` for the docs' path to yours), this crate builds in the
//! workspace, and its binary and the serve example run.

use std::path::{Path, PathBuf};
use std::process::Command;

// The guide's "Serve it with tonic" example, run in-process.
mod serve {
    include!("../examples/serve.rs");

    pub(super) fn run() -> Result<(), Box<dyn std::error::Error>> {
        main()
    }
}

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every chapter of the guide, one after the other.
fn readme() -> String {
    let mut text = read(&crate_dir().join("../README.md"));
    let mut dirs = vec![crate_dir().join("../guide/src")];
    let mut chapters = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                chapters.push(path);
            }
        }
    }
    chapters.sort();
    for chapter in chapters {
        text.push_str(&read(&chapter));
    }
    text
}

/// Each `<!-- quickstart/FILE -->` marker of `readme` with the fenced block
/// that follows it: `(FILE, block text)`.
fn marked_blocks(readme: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        let Some(file) = line
            .strip_prefix("<!-- quickstart/")
            .and_then(|rest| rest.strip_suffix(" -->"))
        else {
            continue;
        };
        let fence = lines.next().unwrap_or_default();
        assert!(
            fence.starts_with("```"),
            "README.md or the guide: the marker of quickstart/{file} is not followed by a fenced block but by {fence:?}"
        );
        let mut text = String::new();
        for line in lines.by_ref() {
            if line == "```" {
                break;
            }
            text.push_str(line);
            text.push('\n');
        }
        blocks.push((file.to_owned(), text));
    }
    blocks
}

/// The dependency lines of a `Cargo.toml` text, `[section]` headers
/// included, without comments and blank lines; the docs' path to a
/// checkout read as this crate's path to this one.
fn dependency_lines(toml: &str) -> Vec<String> {
    let mut in_dependencies = false;
    let mut lines = Vec::new();
    for line in toml.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_dependencies = line.ends_with("dependencies]");
        }
        if in_dependencies && !line.is_empty() && !line.starts_with('#') {
            lines.push(line.replace(
                r#"path = "../proto-ai-tools/runtime""#,
                r#"path = "../runtime""#,
            ));
        }
    }
    lines
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_readme_shows_this_crates_files_as_they_are() {
    let blocks = marked_blocks(&readme());
    let files: Vec<&str> = blocks.iter().map(|(file, _)| file.as_str()).collect();
    for expected in [
        "Cargo.toml",
        "proto/links/v1/links.proto",
        "src/main.rs",
        "build.rs",
        "examples/serve.rs",
    ] {
        assert!(
            files.contains(&expected),
            "neither README.md nor the guide marks a block as quickstart/{expected}: {files:?}"
        );
    }
    let manifest = dependency_lines(&read(&crate_dir().join("Cargo.toml")));
    let mut whole_manifest_shown = false;
    for (file, block) in &blocks {
        if file == "Cargo.toml" {
            // A step's block: each of its dependencies is this crate's.
            let shown = dependency_lines(block);
            for line in &shown {
                assert!(
                    manifest.contains(line),
                    "a Cargo.toml block of README.md or the guide has `{line}`, which quickstart/Cargo.toml has not: {manifest:#?}"
                );
            }
            whole_manifest_shown |= shown == manifest;
        } else {
            assert_eq!(
                block,
                &read(&crate_dir().join(file)),
                "the block marked quickstart/{file} (README.md or the guide) differs from the file"
            );
        }
    }
    assert!(
        whole_manifest_shown,
        "no Cargo.toml block of README.md or the guide lists all of quickstart/Cargo.toml's dependencies: {manifest:#?}"
    );
}

#[test]
fn the_quickstart_prints_the_tool() {
    let output = Command::new(env!("CARGO_BIN_EXE_proto-ai-tools-quickstart"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.starts_with(
            "links_create true Create a short link that redirects to a destination URL. {\"type\":\"object\""
        ),
        "{stdout}"
    );
}

#[test]
fn the_serve_example_serves_the_proto_and_executes_calls() {
    serve::run().unwrap();
}
