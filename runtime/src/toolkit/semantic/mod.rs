//! Retrieval by meaning (feature `semantic-search`): a
//! [`ToolIndex`](super::search::ToolIndex) that ranks tools by the meaning
//! of the model's words as well as by the words themselves, for requests
//! that say "reboot the database server" of a method called `restart`.
//!
//! Each tool's search text (the BM25 document, see
//! [`search`](super::search)) is turned into a vector by an
//! [`EmbeddingSource`]:
//!
//! - [`LocalModel`]: a sentence-transformers model directory
//!   (`model.safetensors`, `tokenizer.json`, `config.json`, and optionally
//!   `modules.json`, `1_Pooling/config.json`, `sentence_bert_config.json`):
//!   all-MiniLM-L6-v2, bge-small and other BERT encoders, computed on the
//!   CPU in pure Rust (candle), nothing fetched;
//! - [`EmbeddingsEndpoint`]: an OpenAI-compatible `POST /v1/embeddings`
//!   (text-embeddings-inference, Ollama, vLLM, OpenAI).
//!
//! A query is embedded the same way, and the tools are ranked by cosine
//! similarity to it. That ranking and BM25's are fused by reciprocal rank
//! fusion (Cormack, Clarke and Büttcher, 2009): a tool's score is the sum,
//! over the two rankings, of `1 / (k + rank)` (rank 1 the best; a ranking
//! that misses the tool adds nothing), with `k` = [`RRF_K`] = 60, the
//! paper's value. Fusing ranks rather than scores needs no calibration
//! between a BM25 score and a cosine; a tool both rankings put near the top
//! wins, and one that only the meaning finds still comes up.
//!
//! The tools' vectors are computed once per toolkit and model and kept in
//! a cache directory ([`Embeddings::cache_dir`]), in a file named by the
//! SHA-256 of the tool documents and the model's identity (the hash of its
//! files, or the endpoint's URL and model name): a tool whose text changes,
//! or another model, misses the cache and is computed again. A file that
//! cannot be read is computed again and rewritten; one that cannot be
//! written is said in a warning, and the index works without it.
//!
//! When a query cannot be embedded (an endpoint that stops answering), that
//! search falls back on BM25 alone and says so in a warning: a search
//! never fails for want of a model.
//!
//! # Examples
//!
//! ```no_run
//! use proto_ai_tools::toolkit::search::ToolIndex;
//! use proto_ai_tools::toolkit::semantic::{Embeddings, LocalModel};
//!
//! mod links {
//!     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
//! }
//! let executor = links::Executor::new(proto_ai_tools::transport::InProcessTransport::new());
//! let toolkit = proto_ai_tools::Toolkit::builder().generated(executor).build()?;
//!
//! let model = LocalModel::open("models/all-MiniLM-L6-v2")?;
//! let embeddings = Embeddings::new(model).cache_dir("/var/cache/ai-tools");
//! let index = ToolIndex::with_embeddings(&toolkit, &embeddings)?;
//! // No word of it is in the links tools: BM25 alone finds nothing.
//! let found = index.search("notify me by mail when someone clicks", 3);
//! assert_eq!(found[0].name, "workflow_steps_create");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod cache;
mod endpoint;
mod local;

use std::path::PathBuf;
use std::sync::Arc;

pub use endpoint::{EmbeddingsEndpoint, MAX_RESPONSE_BYTES, REQUEST_TIMEOUT};
pub use local::LocalModel;

/// The `k` of reciprocal rank fusion: a tool ranked `r`-th by one ranking
/// gets `1 / (k + r)` from it. 60 is the value of the paper that defined
/// the method, and the usual one: large enough that the first few ranks of
/// one ranking do not drown the other's.
pub const RRF_K: f32 = 60.0;

/// Something that turns texts into vectors of one dimension: a model that
/// puts texts of like meaning near each other.
pub trait EmbeddingSource: Send + Sync + std::fmt::Debug {
    /// Who makes the vectors, as the cache's key takes it: two sources of
    /// one identity give the same vector for a text. [`LocalModel`]'s is
    /// the SHA-256 of its files, [`EmbeddingsEndpoint`]'s its URL and
    /// model name.
    fn identity(&self) -> &str;

    /// What the source is, for a log line: `local model all-MiniLM-L6-v2`.
    fn describe(&self) -> String;

    /// One vector per text, in the texts' order, all of one length.
    ///
    /// # Errors
    ///
    /// [`EmbeddingError`]: the model failed, or the endpoint could not be
    /// reached or answered something else.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError>;
}

/// Why retrieval by meaning cannot be had: each says what failed and where
/// (the file and directory, or the URL), in a sentence.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum EmbeddingError {
    /// A model directory that cannot be used: a file missing or unreadable,
    /// or weights the config does not describe.
    #[error("{0}")]
    Model(String),
    /// An embeddings endpoint that could not be reached, refused, or
    /// answered something other than embeddings.
    #[error("{0}")]
    Endpoint(String),
    /// Vectors that cannot be compared: none, of different lengths, or not
    /// finite.
    #[error("{0}")]
    Vectors(String),
}

/// How a [`ToolIndex`](super::search::ToolIndex) finds tools by meaning:
/// where the vectors come from and where they are kept. See the [module
/// docs](self).
#[derive(Debug, Clone)]
pub struct Embeddings {
    source: Arc<dyn EmbeddingSource>,
    cache_dir: Option<PathBuf>,
}

impl Embeddings {
    /// Vectors from `source`, kept in no cache until
    /// [`cache_dir`](Self::cache_dir) says where.
    pub fn new(source: impl EmbeddingSource + 'static) -> Self {
        Self::shared(Arc::new(source))
    }

    /// [`new`](Self::new) with a source that is shared already.
    pub fn shared(source: Arc<dyn EmbeddingSource>) -> Self {
        Self {
            source,
            cache_dir: None,
        }
    }

    /// Keeps the tools' vectors in `dir` (made when missing), one file per
    /// toolkit and model, so that the next start reads them instead of
    /// computing them.
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// Where the vectors come from.
    pub fn source(&self) -> &dyn EmbeddingSource {
        self.source.as_ref()
    }

    /// The cache directory, if any.
    pub fn cache(&self) -> Option<&std::path::Path> {
        self.cache_dir.as_deref()
    }
}

/// How a [`ToolIndex`](super::search::ToolIndex) with embeddings got its
/// tools' vectors ([`ToolIndex::embeddings`](super::search::ToolIndex::embeddings)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct EmbeddingsInfo {
    /// The source, as [`EmbeddingSource::describe`] says it.
    pub source: String,
    /// The length of each vector.
    pub dimensions: usize,
    /// The cache file, when there is a cache directory.
    pub cache_file: Option<PathBuf>,
    /// Whether the vectors were read from the cache file rather than
    /// computed.
    pub from_cache: bool,
}

/// The tools' vectors, and what embeds a query.
pub(crate) struct Meaning {
    source: Arc<dyn EmbeddingSource>,
    /// `len × dimensions` numbers, each tool's vector of length 1.
    vectors: Vec<f32>,
    info: EmbeddingsInfo,
}

impl Meaning {
    /// The vectors of `documents` (one per tool, in toolkit order): from
    /// the cache when it holds them, else computed (and cached).
    pub(crate) fn build(
        documents: &[String],
        embeddings: &Embeddings,
    ) -> Result<Self, EmbeddingError> {
        let source = &embeddings.source;
        let key = cache::key(source.identity(), documents);
        let file = embeddings
            .cache_dir
            .as_ref()
            .map(|dir| cache::file(dir, &key));
        if let Some(file) = &file
            && let Some((dimensions, vectors)) = cache::read(file, &key, documents.len())
        {
            return Ok(Self {
                source: Arc::clone(source),
                vectors,
                info: EmbeddingsInfo {
                    source: source.describe(),
                    dimensions,
                    cache_file: Some(file.clone()),
                    from_cache: true,
                },
            });
        }
        let started = std::time::Instant::now();
        tracing::info!(
            tools = documents.len(),
            source = source.describe(),
            "computing the tools' embeddings"
        );
        let texts: Vec<&str> = documents.iter().map(String::as_str).collect();
        let computed = if texts.is_empty() {
            Vec::new()
        } else {
            source.embed(&texts)?
        };
        if computed.len() != documents.len() {
            return Err(EmbeddingError::Vectors(format!(
                "{} gave {} vectors for {} tools",
                source.describe(),
                computed.len(),
                documents.len()
            )));
        }
        let dimensions = computed.first().map_or(0, Vec::len);
        let mut vectors = Vec::with_capacity(dimensions * documents.len());
        for vector in computed {
            vectors.extend(unit(vector, dimensions, &source.describe())?);
        }
        tracing::info!(
            tools = documents.len(),
            elapsed_s = started.elapsed().as_secs_f64(),
            "computed the tools' embeddings"
        );
        if let Some(file) = &file
            && let Err(e) = cache::write(file, &key, dimensions, &vectors)
        {
            tracing::warn!(
                "the tools' embeddings could not be cached in {}: {e}; the next start computes them again",
                file.display()
            );
        }
        Ok(Self {
            source: Arc::clone(source),
            vectors,
            info: EmbeddingsInfo {
                source: source.describe(),
                dimensions,
                cache_file: file,
                from_cache: false,
            },
        })
    }

    pub(crate) fn info(&self) -> &EmbeddingsInfo {
        &self.info
    }

    /// `lexical` (tool ids with their BM25 scores, best first) fused with
    /// the ranking by meaning of `query`: ids with their fused scores, best
    /// first, ties in toolkit order. BM25's alone when the query cannot be
    /// embedded.
    pub(crate) fn fuse(&self, query: &str, lexical: Vec<(usize, f32)>) -> Vec<(usize, f32)> {
        let Some(by_meaning) = self.rank(query) else {
            return lexical;
        };
        let mut fused = vec![0.0f32; by_meaning.len()];
        for (rank, id) in by_meaning.iter().enumerate() {
            if let Some(score) = fused.get_mut(*id) {
                *score += 1.0 / (RRF_K + rank as f32 + 1.0);
            }
        }
        for (rank, (id, _)) in lexical.iter().enumerate() {
            if let Some(score) = fused.get_mut(*id) {
                *score += 1.0 / (RRF_K + rank as f32 + 1.0);
            }
        }
        let mut ranked: Vec<(usize, f32)> = fused.into_iter().enumerate().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked
    }

    /// Every tool's id by cosine similarity to `query`, best first (ties
    /// in toolkit order); `None`, said in a warning, when the query cannot
    /// be embedded.
    fn rank(&self, query: &str) -> Option<Vec<usize>> {
        let dimensions = self.info.dimensions;
        let embedded = self
            .source
            .embed(&[query])
            .and_then(|mut vectors| match vectors.pop() {
                Some(vector) if vectors.is_empty() => unit(vector, dimensions, &self.info.source),
                _ => Err(EmbeddingError::Vectors(format!(
                    "{} did not give one vector for one query",
                    self.info.source
                ))),
            });
        let query = match embedded {
            Ok(query) => query,
            Err(e) => {
                tracing::warn!(
                    "the search is by words alone: the query could not be embedded: {e}"
                );
                return None;
            }
        };
        if dimensions == 0 {
            return Some(Vec::new());
        }
        let mut scored: Vec<(usize, f32)> = self
            .vectors
            .chunks_exact(dimensions)
            .map(|tool| tool.iter().zip(&query).map(|(a, b)| a * b).sum::<f32>())
            .enumerate()
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Some(scored.into_iter().map(|(id, _)| id).collect())
    }
}

/// `vector` scaled to length 1, checked to have `dimensions` finite
/// numbers; `source` names who gave it.
fn unit(mut vector: Vec<f32>, dimensions: usize, source: &str) -> Result<Vec<f32>, EmbeddingError> {
    if vector.is_empty() || vector.len() != dimensions {
        return Err(EmbeddingError::Vectors(format!(
            "{source} gave a vector of {} numbers where {dimensions} were expected",
            vector.len()
        )));
    }
    if vector.iter().any(|x| !x.is_finite()) {
        return Err(EmbeddingError::Vectors(format!(
            "{source} gave a vector with a number that is not finite"
        )));
    }
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
    Ok(vector)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Vectors by hand: each text's vector is looked up, the query
    /// "broken" fails.
    #[derive(Debug)]
    struct Table;

    impl EmbeddingSource for Table {
        fn identity(&self) -> &str {
            "table"
        }
        fn describe(&self) -> String {
            "a table".into()
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
            texts
                .iter()
                .map(|t| match *t {
                    "a" | "near a" => Ok(vec![1.0, 0.0]),
                    "b" => Ok(vec![0.0, 2.0]),
                    "c" | "near c" => Ok(vec![0.6, 0.8]),
                    _ => Err(EmbeddingError::Endpoint(format!("no vector for {t}"))),
                })
                .collect()
        }
    }

    #[test]
    fn the_rankings_are_fused_by_reciprocal_rank() {
        let documents = ["a", "b", "c"].map(String::from);
        let meaning = Meaning::build(&documents, &Embeddings::new(Table)).expect("built");
        assert_eq!(meaning.info().dimensions, 2);
        // By meaning "near c": c (1.0), a (0.6), b (0.8·1 = 0.8) → c, b, a.
        // BM25 found only a: a is 1st there, 3rd by meaning.
        let fused = meaning.fuse("near c", vec![(0, 3.0)]);
        let at = |rank: f32| 1.0 / (RRF_K + rank);
        assert_eq!(
            fused,
            vec![(0, at(1.0) + at(3.0)), (2, at(1.0)), (1, at(2.0))]
        );
        // A query that cannot be embedded: BM25's ranking as it was.
        assert_eq!(meaning.fuse("broken", vec![(1, 2.0)]), vec![(1, 2.0)]);
        // Vectors are kept of length 1: "b" was [0, 2].
        assert_eq!(&meaning.vectors[2..4], &[0.0, 1.0]);
    }
}
