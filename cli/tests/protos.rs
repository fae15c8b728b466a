//! `ai-tools protos --out DIR`, run as a user runs it: every annotation proto
//! written under its import path, byte for byte what the crates serve, and
//! the module's `buf.yaml`; a second run changes nothing; a file edited by hand stops the command
//! before it writes anything, until `--force`; other files are left alone.

// An integration test: its helpers fail the test by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use proto_ai_tools::schema::{ANNOTATION_BUF_YAML, ANNOTATION_PROTOS};

fn ai_tools(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ai-tools"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("AI_TOOLS_") {
            command.env_remove(name);
        }
    }
    command
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A fresh directory of this test's own.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ai-tools-protos-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The lines `ai-tools protos` prints: `word DIR/path` per annotation proto,
/// then for `buf.yaml`.
fn report(out: &Path, words: &[&str]) -> String {
    assert_eq!(words.len(), ANNOTATION_PROTOS.len() + 1);
    ANNOTATION_PROTOS
        .iter()
        .map(|(path, _)| *path)
        .chain(["buf.yaml"])
        .zip(words)
        .map(|(path, word)| format!("{word} {}\n", out.join(path).display()))
        .collect()
}

#[test]
fn writes_the_annotation_protos_and_never_replaces_an_edit_unasked() {
    let dir = scratch("write");
    let out = dir.join("third_party/ai-tools");
    let out_arg = out.to_str().unwrap();

    // Into a directory that does not exist yet.
    let first = ai_tools(&["protos", "--out", out_arg], &[]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    assert_eq!(text(&first.stdout), report(&out, &["written"; 5]));
    assert_eq!(ANNOTATION_PROTOS.len(), 4);
    for (path, source) in ANNOTATION_PROTOS {
        assert_eq!(
            std::fs::read_to_string(out.join(path)).unwrap(),
            *source,
            "{path}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(out.join("buf.yaml")).unwrap(),
        ANNOTATION_BUF_YAML
    );
    assert!(out.join("ai/context/v1/annotations.proto").is_file());

    // Again: nothing to do.
    let again = ai_tools(&["protos", "--out", out_arg], &[]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    assert_eq!(text(&again.stdout), report(&out, &["unchanged"; 5]));

    // A user's edit, a missing file and a file of the user's own.
    let edited = out.join("ai/tools/v1/annotations.proto");
    let mine = format!("{}// my edit\n", ANNOTATION_PROTOS[1].1);
    std::fs::write(&edited, &mine).unwrap();
    let missing = out.join("google/api/field_behavior.proto");
    std::fs::remove_file(&missing).unwrap();
    let own = out.join("ai/tools/v1/mine.proto");
    std::fs::write(&own, "syntax = \"proto3\";\n").unwrap();

    // Refused, saying which file and what to do; nothing written, not even
    // the missing file; AI_TOOLS_FORCE does not stand for --force.
    let refused = ai_tools(&["protos", "--out", out_arg], &[("AI_TOOLS_FORCE", "true")]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(refused.stdout.is_empty());
    let stderr = text(&refused.stderr);
    assert!(
        stderr.contains(&format!("{} already there and different", edited.display()))
            && stderr.contains("nothing was written")
            && stderr.contains("--force"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&edited).unwrap(), mine);
    assert!(!missing.exists());

    // --force replaces the edit and writes the missing file; the user's own
    // file stays.
    let forced = ai_tools(&["protos", "--out", out_arg, "--force"], &[]);
    assert_eq!(forced.status.code(), Some(0), "{}", text(&forced.stderr));
    assert_eq!(
        text(&forced.stdout),
        report(
            &out,
            &[
                "unchanged",
                "overwritten",
                "unchanged",
                "written",
                "unchanged"
            ]
        )
    );
    assert_eq!(
        std::fs::read_to_string(&edited).unwrap(),
        ANNOTATION_PROTOS[1].1
    );
    assert_eq!(
        std::fs::read_to_string(&missing).unwrap(),
        ANNOTATION_PROTOS[3].1
    );
    assert_eq!(
        std::fs::read_to_string(&own).unwrap(),
        "syntax = \"proto3\";\n"
    );

    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_is_not_a_directory_and_out_is_required() {
    let dir = scratch("usage");
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let output = ai_tools(&["protos", "--out", file.to_str().unwrap()], &[]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stderr).contains("not a directory"),
        "{}",
        text(&output.stderr)
    );

    let output = ai_tools(&["protos"], &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("--out"),
        "{}",
        text(&output.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
