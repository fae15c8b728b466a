//! Editing a proto, a file it imports, or the overlay, rebuilds the crate
//! that expands it; editing only the crate's Rust code takes the expansion
//! from the cache.
//!
//! Builds a small crate that depends on `ai-tools`, edits its protos between
//! runs, and checks that the program's output follows. Offline: it reuses the
//! workspace's lock file, so every dependency is already in cargo's cache.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().expect("a file has a parent")).expect("create dir");
    fs::write(path, text).expect("write file");
}

fn service_proto(tool_name: &str) -> String {
    format!(
        r#"syntax = "proto3";
package probe.v1;
import "ai/context/v1/annotations.proto";
import "probe/v1/common.proto";
service PingService {{
  rpc Ping(PingRequest) returns (PingResponse) {{
    option (ai.context.v1.rpc_tool) = {{ name: "{tool_name}" description: "Ping." }};
  }}
}}
"#
    )
}

fn common_proto(field: &str) -> String {
    format!(
        "syntax = \"proto3\";\npackage probe.v1;\nmessage PingRequest {{ string {field} = 1; }}\nmessage PingResponse {{}}\n"
    )
}

fn overlay(description: &str) -> String {
    format!("[fields.\"probe.v1.PingRequest.message_text\"]\ndescription = \"{description}\"\n")
}

fn run(crate_dir: &Path) -> String {
    let output = Command::new(env!("CARGO"))
        .args(["run", "--quiet", "--offline"])
        .current_dir(crate_dir)
        .env("CARGO_TARGET_DIR", crate_dir.join("target"))
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "the probe crate failed to build or run:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8 output")
}

/// Edits a file so that its modification time surely moves forward.
fn edit(path: &Path, text: &str) {
    std::thread::sleep(std::time::Duration::from_millis(1100));
    write(path, text);
}

#[test]
fn editing_a_proto_its_import_or_the_overlay_rebuilds() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace");
    let crate_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("rebuild-probe");
    let _ = fs::remove_dir_all(crate_dir.join("proto"));
    let _ = fs::remove_file(crate_dir.join("tools.toml"));
    // Entries of earlier runs, made by other versions of the macro.
    let _ = fs::remove_dir_all(crate_dir.join("target/ai-tools-macro-cache"));
    write(
        &crate_dir.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"rebuild-probe\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
             [dependencies]\nproto-ai-tools = {{ path = {:?}, default-features = false }}\n\n[workspace]\n",
            workspace.join("runtime").display().to_string()
        ),
    );
    fs::copy(workspace.join("Cargo.lock"), crate_dir.join("Cargo.lock")).expect("copy lock file");
    write(
        &crate_dir.join("src/main.rs"),
        "mod gentools {\n    proto_ai_tools::ai_tools!(\"proto/probe/v1/service.proto\");\n}\n\n\
         fn main() {\n    for tool in gentools::all_tools() {\n        println!(\"{} {} {}\", tool.name, tool.description, tool.parameters());\n    }\n}\n",
    );
    let service = crate_dir.join("proto/probe/v1/service.proto");
    let common = crate_dir.join("proto/probe/v1/common.proto");
    write(&service, &service_proto("ping"));
    write(&common, &common_proto("text"));

    let first = run(&crate_dir);
    assert!(first.starts_with("ping "), "{first}");
    assert!(first.contains("\"text\""), "{first}");

    // An edit of the crate's Rust code alone takes the expansion from the
    // cache under the target dir: an entry altered there shows in the output.
    let entries: Vec<PathBuf> = fs::read_dir(crate_dir.join("target/ai-tools-macro-cache"))
        .expect("the expansion was cached")
        .map(|entry| entry.expect("a cache entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "txt"))
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let entry = fs::read_to_string(&entries[0]).expect("read the cache entry");
    // The same length: an entry's expansion must be as long as it says.
    let altered = entry.replace(r#""Ping.""#, r#""Pong.""#);
    assert_ne!(altered, entry, "the entry holds the tool's description");
    fs::write(&entries[0], altered).expect("alter the cache entry");
    let main = fs::read_to_string(crate_dir.join("src/main.rs")).expect("read main.rs");
    edit(
        &crate_dir.join("src/main.rs"),
        &format!("{main}\n// edited\n"),
    );
    let cached = run(&crate_dir);
    assert!(
        cached.starts_with("ping Pong. "),
        "an edit of Rust code alone expanded the proto again: {cached}"
    );

    edit(&service, &service_proto("pong"));
    let second = run(&crate_dir);
    assert!(
        second.starts_with("pong "),
        "an edit of the proto was not picked up: {second}"
    );

    edit(&common, &common_proto("message_text"));
    let third = run(&crate_dir);
    assert!(
        third.contains("\"message_text\""),
        "an edit of an imported proto was not picked up: {third}"
    );

    // The expansion with an overlay watches the overlay file: an edit of a
    // description there shows in the tool's parameters.
    let overlay_file = crate_dir.join("tools.toml");
    write(&overlay_file, &overlay("The words to echo."));
    let main = fs::read_to_string(crate_dir.join("src/main.rs")).expect("read main.rs");
    let with_overlay = main.replace(
        r#"proto_ai_tools::ai_tools!("proto/probe/v1/service.proto");"#,
        r#"proto_ai_tools::ai_tools!("proto/probe/v1/service.proto", overlay = "tools.toml");"#,
    );
    assert_ne!(with_overlay, main, "main.rs invokes the macro");
    edit(&crate_dir.join("src/main.rs"), &with_overlay);
    let fourth = run(&crate_dir);
    assert!(
        fourth.contains("The words to echo."),
        "the overlay's description is not in the parameters: {fourth}"
    );

    edit(&overlay_file, &overlay("The words to send back."));
    let fifth = run(&crate_dir);
    assert!(
        fifth.contains("The words to send back.") && !fifth.contains("The words to echo."),
        "an edit of the overlay was not picked up: {fifth}"
    );
}
