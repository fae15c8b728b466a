//! `ai-tools mcp --tool-search` with retrieval by meaning, end to end: the
//! binary in front of the links server, asked over stdio, with its
//! embeddings from an OpenAI-compatible endpoint (`--embeddings-url`:
//! `tests/embeddings/server.py`, all-MiniLM-L6-v2 in numpy) or the local
//! model (`--embedding-model`). `search_tools` finds by meaning a tool
//! that the search by words misses, the start-up log says which retrieval
//! is on, the embeddings are cached, and the flags' mistakes, a bad model
//! directory and an unreachable endpoint are said.
//!
//! Needs the all-MiniLM-L6-v2 folder (`AI_TOOLS_TEST_EMBEDDING_MODEL`,
//! else `target/models/all-MiniLM-L6-v2`; `.ci/run` unpacks it) and a
//! Python with numpy, tokenizers and safetensors. Without them the tests
//! that need them say why and pass, unless
//! `AI_TOOLS_REQUIRE_EMBEDDING_MODEL` is set, as in CI.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;
use support::links_server;

/// The name the test server gives the model.
const MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// No word of it is in the links tools.
const BY_MEANING: &str = "notify me by mail when someone clicks";

fn skip(why: &str) {
    let required = std::env::var_os("AI_TOOLS_REQUIRE_EMBEDDING_MODEL")
        .is_some_and(|v| !v.is_empty() && v != "0");
    assert!(!required, "AI_TOOLS_REQUIRE_EMBEDDING_MODEL is set: {why}");
    eprintln!("SKIPPED: {why}");
}

fn model_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("AI_TOOLS_TEST_EMBEDDING_MODEL")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| support::workspace().join("target/models/all-MiniLM-L6-v2"));
    if dir.join("model.safetensors").is_file() {
        return Some(dir);
    }
    skip(&format!(
        "no all-MiniLM-L6-v2 folder at {} (set AI_TOOLS_TEST_EMBEDDING_MODEL or run .ci/run)",
        dir.display()
    ));
    None
}

/// `tests/embeddings/server.py`, killed when dropped.
struct EmbeddingsServer {
    child: Child,
    url: String,
}

impl Drop for EmbeddingsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn embeddings_server() -> Option<EmbeddingsServer> {
    let dir = model_dir()?;
    let python =
        match proto_ai_tools_tests::support::python_importing("numpy, tokenizers, safetensors") {
            Ok(python) => python,
            Err(why) => {
                skip(&why);
                return None;
            }
        };
    let mut child = Command::new(python)
        .arg(support::workspace().join("tests/embeddings/server.py"))
        .arg(&dir)
        .args(["--name", MODEL_NAME])
        .stdout(Stdio::piped())
        .spawn()
        .expect("the embeddings server starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped"))
        .read_line(&mut line)
        .expect("it says its port");
    let port = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("the server said {line:?}"));
    Some(EmbeddingsServer {
        url: format!("http://127.0.0.1:{port}"),
        child,
    })
}

/// The names `search_tools` returns for `query` from a gateway started
/// with `flags` (after `--tool-search`), and its log.
fn search(grpc: &str, flags: &[&str], query: &str) -> (Vec<String>, String) {
    let mut gateway = Command::new(env!("CARGO_BIN_EXE_ai-tools"))
        .args(["mcp", "--grpc", grpc, "--reflection", "--tool-search"])
        // The links tools alone (the server also has a feed service).
        .args(["--exclude", "feed_*"])
        .args(flags)
        .arg("--stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gateway starts");
    let mut stdin = gateway.stdin.take().expect("piped");
    let mut stdout = BufReader::new(gateway.stdout.take().expect("piped"));
    let call = serde_json::json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "search_tools", "arguments": {"query": query}}
    });
    for message in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        call.to_string(),
    ] {
        writeln!(stdin, "{message}").expect("written");
    }
    let mut answer = None;
    for _ in 0..10 {
        let mut line = String::new();
        if stdout.read_line(&mut line).expect("read") == 0 {
            break;
        }
        let reply: Value = serde_json::from_str(&line).expect("JSON-RPC");
        if reply["id"] == 2 {
            answer = Some(reply);
            break;
        }
    }
    drop(stdin);
    let _ = gateway.wait();
    let mut log = String::new();
    gateway
        .stderr
        .take()
        .expect("piped")
        .read_to_string(&mut log)
        .expect("the log");
    let answer = answer.unwrap_or_else(|| panic!("no answer to search_tools; the log:\n{log}"));
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{answer}"));
    let found: Value = serde_json::from_str(text).expect("the search's JSON");
    let names = found["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("a name").to_owned())
        .collect();
    (names, log)
}

/// The `gateway ready` line of a log.
fn ready_line(log: &str) -> &str {
    log.lines()
        .find(|l| l.contains("gateway ready"))
        .unwrap_or_else(|| panic!("no `gateway ready` in:\n{log}"))
}

#[test]
fn search_tools_finds_by_meaning_what_words_miss_from_an_endpoint_and_a_local_model() {
    let (Some(dir), Some(embeddings)) = (model_dir(), embeddings_server()) else {
        return;
    };
    let (runtime, server) = links_server();
    let grpc = server.url();
    let cache = std::env::temp_dir().join(format!("proto-ai-tools-cli-emb-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let cache_flag = cache.to_str().expect("a UTF-8 path");

    let (words, log) = search(&grpc, &[], BY_MEANING);
    assert!(words.is_empty(), "BM25 alone finds nothing: {words:?}");
    assert!(ready_line(&log).contains("tool_search=\"bm25\""), "{log}");

    let endpoint = [
        "--embeddings-url",
        &embeddings.url,
        "--embeddings-model",
        MODEL_NAME,
        "--embeddings-cache",
        cache_flag,
    ];
    let (found, log) = search(&grpc, &endpoint, BY_MEANING);
    assert_eq!(
        found.first().map(String::as_str),
        Some("workflow_steps_create"),
        "{found:?}"
    );
    assert!(
        ready_line(&log).contains(&format!(
            "tool_search=\"bm25 + meaning (endpoint {}, model {MODEL_NAME}), fused\"",
            embeddings.url
        )),
        "{log}"
    );
    let cached: Vec<PathBuf> = std::fs::read_dir(&cache)
        .expect("the cache directory is made")
        .map(|e| e.expect("an entry").path())
        .collect();
    assert_eq!(
        cached.len(),
        1,
        "one file for the toolkit and model: {cached:?}"
    );
    assert!(log.contains("computing the tools' embeddings"), "{log}");

    // Started again: the vectors come from the cache.
    let (again, log) = search(&grpc, &endpoint, BY_MEANING);
    assert_eq!(again, found);
    assert!(!log.contains("computing the tools' embeddings"), "{log}");

    let local = [
        "--embedding-model",
        dir.to_str().expect("UTF-8"),
        "--embeddings-cache",
        cache_flag,
    ];
    let (found, log) = search(&grpc, &local, BY_MEANING);
    assert_eq!(
        found.first().map(String::as_str),
        Some("workflow_steps_create"),
        "{found:?}"
    );
    assert!(
        ready_line(&log).contains(&format!(
            "tool_search=\"bm25 + meaning (local model {}), fused\"",
            dir.display()
        )),
        "{log}"
    );
    let _ = std::fs::remove_dir_all(&cache);
    runtime.block_on(server.shutdown());
}

/// The gateway's exit code and log, started with `flags` and no client.
fn refused(flags: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_ai-tools"))
        .args(["mcp", "--grpc", "http://127.0.0.1:1", "--proto"])
        .arg(support::workspace().join("proto/links/v1/links.proto"))
        .args(["-I", support::workspace().to_str().expect("UTF-8")])
        .args(flags)
        .arg("--stdio")
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_flags_mistakes_a_bad_model_directory_and_an_unreachable_endpoint_are_said() {
    for (flags, said) in [
        (
            &["--embedding-model", "/models/minilm"][..],
            "`--embedding-model` finds tools by meaning for `--tool-search`'s search: give `--tool-search`",
        ),
        (
            &[
                "--embeddings-url",
                "http://127.0.0.1:1",
                "--embeddings-model",
                "m",
            ][..],
            "`--embeddings-url` finds tools by meaning for `--tool-search`'s search: give `--tool-search`",
        ),
        (
            &["--tool-search", "--embeddings-url", "http://127.0.0.1:1"][..],
            "`--embeddings-url` needs the name of the endpoint's model: give `--embeddings-model NAME`",
        ),
        (
            &["--tool-search", "--embeddings-model", "m"][..],
            "`--embeddings-model` names the model of an embeddings endpoint: give `--embeddings-url URL`",
        ),
        (
            &[
                "--tool-search",
                "--embedding-model",
                "/m",
                "--embeddings-url",
                "http://h",
                "--embeddings-model",
                "m",
            ][..],
            "give one source of embeddings",
        ),
    ] {
        let (code, log) = refused(flags);
        assert_eq!(code, Some(2), "{flags:?}: {log}");
        assert!(log.contains(said), "{flags:?}: {log}");
    }

    // The same flags from a config file's keys and from the environment.
    let config = std::env::temp_dir().join(format!("ai-tools-emb-{}.toml", std::process::id()));
    std::fs::write(&config, "[mcp]\nembeddings-url = \"http://127.0.0.1:1\"\n").expect("written");
    let (code, log) = refused(&["--config", config.to_str().expect("UTF-8")]);
    assert_eq!(code, Some(2), "{log}");
    assert!(
        log.contains("`--embeddings-url` finds tools by meaning"),
        "{log}"
    );
    let _ = std::fs::remove_file(&config);
    let output = Command::new(env!("CARGO_BIN_EXE_ai-tools"))
        .args([
            "mcp",
            "--grpc",
            "http://127.0.0.1:1",
            "--proto",
            "x.proto",
            "--stdio",
        ])
        .env("AI_TOOLS_EMBEDDING_MODEL", "/models/minilm")
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs");
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("`--embedding-model` finds tools by meaning"),
        "{output:?}"
    );

    let missing = std::env::temp_dir().join(format!("ai-tools-no-model-{}", std::process::id()));
    let (code, log) = refused(&[
        "--tool-search",
        "--embedding-model",
        missing.to_str().expect("UTF-8"),
    ]);
    assert_eq!(code, Some(1), "{log}");
    assert!(
        log.contains(&format!(
            "the embedding model directory {} does not exist: give a directory that holds a sentence-transformers model",
            missing.display()
        )),
        "{log}"
    );

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a port")
        .local_addr()
        .expect("its address")
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let cache = std::env::temp_dir().join(format!("ai-tools-no-endpoint-{}", std::process::id()));
    let (code, log) = refused(&[
        "--tool-search",
        "--embeddings-url",
        &url,
        "--embeddings-model",
        "m",
        "--embeddings-cache",
        cache.to_str().expect("UTF-8"),
    ]);
    assert_eq!(code, Some(1), "{log}");
    assert!(
        log.contains(&format!(
            "retrieval by meaning cannot start: the embeddings endpoint {url}/v1/embeddings could not be reached ("
        )),
        "{log}"
    );
    let _ = std::fs::remove_dir_all(&cache);
    let _ = Path::new(&missing);
}
