//! [`LocalModel`]: a sentence-transformers BERT model computed on the CPU
//! with candle.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::{EmbeddingError, EmbeddingSource};

/// How many texts one forward pass takes when the tools are embedded: the
/// texts are sorted by length first, so a batch pads little.
const BATCH: usize = 32;

/// How a text's token vectors become one vector (`1_Pooling/config.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pooling {
    /// Their mean (all-MiniLM-L6-v2's, and the default).
    Mean,
    /// The first token's (`[CLS]`; bge's).
    Cls,
    /// The largest of each dimension.
    Max,
    /// Their sum over the square root of their count.
    MeanSqrtLen,
}

/// A sentence-embedding model read from a directory in the
/// sentence-transformers layout, computed on the CPU in pure Rust
/// (candle's BERT, HuggingFace's `tokenizers`): all-MiniLM-L6-v2,
/// bge-small and other BERT encoders.
///
/// The directory holds `config.json` (a BERT config), `tokenizer.json` and
/// `model.safetensors`; optionally `modules.json` and the pooling module's
/// `config.json` (`1_Pooling/config.json`), which say how token vectors
/// are pooled (default: their mean) and whether the result is normalised
/// (default: yes, to length 1), and `sentence_bert_config.json`, whose
/// `max_seq_length` cuts long texts (default: the model's
/// `max_position_embeddings`). That is what sentence-transformers computes
/// for the same directory. Nothing is fetched: the weights are read into
/// memory once, at [`open`](Self::open).
///
/// # Examples
///
/// ```no_run
/// use proto_ai_tools::toolkit::semantic::{EmbeddingSource, LocalModel};
///
/// let model = LocalModel::open("models/all-MiniLM-L6-v2")?;
/// let vectors = model.embed(&["stop a virtual machine", "shut down a VM"])?;
/// let cosine: f32 = vectors[0].iter().zip(&vectors[1]).map(|(a, b)| a * b).sum();
/// assert!(cosine > 0.5);
/// # Ok::<(), proto_ai_tools::toolkit::semantic::EmbeddingError>(())
/// ```
pub struct LocalModel {
    dir: PathBuf,
    name: String,
    identity: String,
    model: BertModel,
    tokenizer: Tokenizer,
    pooling: Pooling,
    normalize: bool,
}

impl std::fmt::Debug for LocalModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalModel")
            .field("dir", &self.dir)
            .field("pooling", &self.pooling)
            .field("normalize", &self.normalize)
            .finish_non_exhaustive()
    }
}

impl LocalModel {
    /// Reads the model in `dir`.
    ///
    /// # Errors
    ///
    /// [`EmbeddingError::Model`], naming the directory and the file: the
    /// directory or one of its three files is missing or unreadable,
    /// `config.json` is not a BERT model's, or the weights are not the ones
    /// it describes.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, EmbeddingError> {
        let dir = dir.as_ref().to_path_buf();
        let shown = dir.display().to_string();
        let problem = |file: &str, what: String| {
            EmbeddingError::Model(format!(
                "the embedding model directory {shown}: {file} {what}"
            ))
        };
        if !dir.is_dir() {
            return Err(EmbeddingError::Model(format!(
                "the embedding model directory {shown} {}: give a directory that holds a sentence-transformers model (model.safetensors, tokenizer.json, config.json)",
                if dir.exists() {
                    "is not a directory"
                } else {
                    "does not exist"
                }
            )));
        }
        let read = |file: &str| {
            std::fs::read(dir.join(file)).map_err(|e| {
                problem(
                    file,
                    if e.kind() == std::io::ErrorKind::NotFound {
                        "is missing (a sentence-transformers model directory holds model.safetensors, tokenizer.json and config.json)".to_owned()
                    } else {
                        format!("cannot be read: {e}")
                    },
                )
            })
        };
        let optional = |file: &str| -> Result<Option<Value>, EmbeddingError> {
            match std::fs::read(dir.join(file)) {
                Ok(bytes) => serde_json::from_slice(&bytes)
                    .map(Some)
                    .map_err(|e| problem(file, format!("is not JSON: {e}"))),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(problem(file, format!("cannot be read: {e}"))),
            }
        };

        let mut hash = Sha256::new();
        let config_bytes = read("config.json")?;
        hash.update(&config_bytes);
        let config_json: Value = serde_json::from_slice(&config_bytes)
            .map_err(|e| problem("config.json", format!("is not JSON: {e}")))?;
        if let Some(kind) = config_json.get("model_type").and_then(Value::as_str)
            && !matches!(kind, "bert" | "BertModel")
        {
            return Err(problem(
                "config.json",
                format!(
                    "describes a `{kind}` model; only BERT encoders (all-MiniLM-L6-v2, bge-small, …) are computed here: serve another with an embeddings endpoint"
                ),
            ));
        }
        let config: Config = serde_json::from_value(config_json.clone())
            .map_err(|e| problem("config.json", format!("is not a BERT config: {e}")))?;

        let tokenizer_bytes = read("tokenizer.json")?;
        hash.update(&tokenizer_bytes);
        let mut tokenizer = Tokenizer::from_bytes(&tokenizer_bytes)
            .map_err(|e| problem("tokenizer.json", format!("is not a tokenizer: {e}")))?;

        // What sentence-transformers would do with the directory.
        let modules = optional("modules.json")?;
        let mut normalize = true;
        let mut pooling_file = "1_Pooling/config.json".to_owned();
        if let Some(modules) = &modules {
            hash.update(modules.to_string());
            let listed = modules.as_array().map(Vec::as_slice).unwrap_or_default();
            let kind = |m: &Value| {
                m.get("type")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            normalize = listed.iter().any(|m| kind(m).ends_with("Normalize"));
            if let Some(path) = listed
                .iter()
                .find(|m| kind(m).ends_with("Pooling"))
                .and_then(|m| m.get("path").and_then(Value::as_str))
            {
                pooling_file = format!("{path}/config.json");
            }
        }
        let pooling = match optional(&pooling_file)? {
            Some(config) => {
                hash.update(config.to_string());
                let on = |key: &str| config.get(key).and_then(Value::as_bool) == Some(true);
                if on("pooling_mode_cls_token") {
                    Pooling::Cls
                } else if on("pooling_mode_max_tokens") {
                    Pooling::Max
                } else if on("pooling_mode_mean_sqrt_len_tokens") {
                    Pooling::MeanSqrtLen
                } else {
                    Pooling::Mean
                }
            }
            None => Pooling::Mean,
        };
        let mut max_length = config.max_position_embeddings;
        if let Some(sbert) = optional("sentence_bert_config.json")? {
            hash.update(sbert.to_string());
            if let Some(length) = sbert.get("max_seq_length").and_then(Value::as_u64) {
                max_length = max_length.min(usize::try_from(length).unwrap_or(max_length));
            }
        }
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length,
                ..TruncationParams::default()
            }))
            .map_err(|e| problem("tokenizer.json", format!("cannot cut texts: {e}")))?;
        let mut padding = tokenizer.get_padding().cloned().unwrap_or_default();
        padding.strategy = PaddingStrategy::BatchLongest;
        padding.pad_to_multiple_of = None;
        tokenizer.with_padding(Some(PaddingParams { ..padding }));

        let weights = read("model.safetensors")?;
        hash.update(&weights);
        let identity = format!(
            "local-model:{}",
            hash.finalize()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        );
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu).map_err(
            |e| {
                problem(
                    "model.safetensors",
                    format!("is not a safetensors file: {e}"),
                )
            },
        )?;
        let model = BertModel::load(vb, &config).map_err(|e| {
            problem(
                "model.safetensors",
                format!("does not hold the BERT weights config.json describes: {e}"),
            )
        })?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| shown.clone());
        Ok(Self {
            dir,
            name,
            identity,
            model,
            tokenizer,
            pooling,
            normalize,
        })
    }

    /// The directory the model was read from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// One forward pass over `texts`: their vectors, in order.
    fn batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        let failed = |e: String| {
            EmbeddingError::Model(format!(
                "the embedding model in {} failed on a text: {e}",
                self.dir.display()
            ))
        };
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| failed(e.to_string()))?;
        let rows = encodings.len();
        let width = encodings.first().map_or(0, |e| e.get_ids().len());
        let mut ids = Vec::with_capacity(rows * width);
        let mut mask = Vec::with_capacity(rows * width);
        for encoding in &encodings {
            ids.extend_from_slice(encoding.get_ids());
            mask.extend_from_slice(encoding.get_attention_mask());
        }
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let device = &Device::Cpu;
            let ids = Tensor::from_vec(ids, (rows, width), device)?;
            let types = ids.zeros_like()?;
            let mask = Tensor::from_vec(mask, (rows, width), device)?;
            let hidden = self.model.forward(&ids, &types, Some(&mask))?;
            let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let pooled = match self.pooling {
                Pooling::Cls => hidden.narrow(1, 0, 1)?.squeeze(1)?,
                Pooling::Max => {
                    // Padding pushed far below any real value first.
                    let low = ((&mask - 1.0)? * 1e9)?;
                    hidden.broadcast_add(&low)?.max(1)?
                }
                Pooling::Mean | Pooling::MeanSqrtLen => {
                    let sum = hidden.broadcast_mul(&mask)?.sum(1)?;
                    let count = mask.sum(1)?.clamp(1e-9, f32::MAX)?;
                    let count = if self.pooling == Pooling::Mean {
                        count
                    } else {
                        count.sqrt()?
                    };
                    sum.broadcast_div(&count)?
                }
            };
            let pooled = if self.normalize {
                let norm = pooled
                    .sqr()?
                    .sum_keepdim(1)?
                    .sqrt()?
                    .clamp(1e-12, f32::MAX)?;
                pooled.broadcast_div(&norm)?
            } else {
                pooled
            };
            pooled.to_vec2::<f32>()
        };
        run().map_err(|e| failed(e.to_string()))
    }
}

impl EmbeddingSource for LocalModel {
    fn identity(&self) -> &str {
        &self.identity
    }

    fn describe(&self) -> String {
        format!("local model {} ({})", self.name, self.dir.display())
    }

    /// The texts' vectors, computed in batches of texts of like length.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(texts.get(i).map_or(0, |t| t.len())));
        let mut vectors: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&str> = chunk
                .iter()
                .filter_map(|&i| texts.get(i).copied())
                .collect();
            for (&i, vector) in chunk.iter().zip(self.batch(&batch)?) {
                if let Some(slot) = vectors.get_mut(i) {
                    *slot = vector;
                }
            }
        }
        Ok(vectors)
    }
}
