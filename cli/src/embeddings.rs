//! Retrieval by meaning for `--tool-search` (`--embedding-model DIR` or
//! `--embeddings-url URL`): the source of the tools' embeddings, where they
//! are cached, and how the start-up log names the retrieval.

use std::path::PathBuf;

use proto_ai_tools::toolkit::semantic::{Embeddings, EmbeddingsEndpoint, LocalModel};

use crate::failure::Failure;
use crate::flags::Serve;

/// The embeddings the flags ask for, with their cache directory; `None`
/// for a search by words alone. A model directory that cannot be read, or
/// a URL that is not one, stops the start here, saying why.
pub(crate) fn embeddings(serve: &Serve) -> Result<Option<Embeddings>, Failure> {
    let embeddings = if let Some(dir) = &serve.embedding_model {
        Embeddings::new(LocalModel::open(dir).map_err(|e| Failure::Run(e.to_string()))?)
    } else if let Some(url) = &serve.embeddings_url {
        let model = serve.embeddings_model.as_deref().unwrap_or_default();
        Embeddings::new(
            EmbeddingsEndpoint::new(url, model).map_err(|e| Failure::Usage(e.to_string()))?,
        )
    } else {
        return Ok(None);
    };
    Ok(Some(match cache_dir(serve) {
        Some(dir) => embeddings.cache_dir(dir),
        None => {
            tracing::warn!(
                "no cache directory for the tools' embeddings (neither XDG_CACHE_HOME nor HOME is set): every start computes them; give --embeddings-cache DIR"
            );
            embeddings
        }
    }))
}

/// `--embeddings-cache`, else `$XDG_CACHE_HOME/ai-tools`, else
/// `$HOME/.cache/ai-tools`.
pub(crate) fn cache_dir(serve: &Serve) -> Option<PathBuf> {
    if let Some(dir) = &serve.embeddings_cache {
        return Some(dir.clone());
    }
    let set = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    set("XDG_CACHE_HOME")
        .or_else(|| set("HOME").map(|home| home.join(".cache")))
        .map(|dir| dir.join("ai-tools"))
}

/// How `search_tools` ranks, for the start-up log: `None` without
/// `--tool-search`.
pub(crate) fn retrieval(serve: &Serve) -> Option<String> {
    if !serve.tool_search {
        return None;
    }
    Some(if let Some(dir) = &serve.embedding_model {
        format!("bm25 + meaning (local model {}), fused", dir.display())
    } else if let Some(url) = &serve.embeddings_url {
        format!(
            "bm25 + meaning (endpoint {url}, model {}), fused",
            serve.embeddings_model.as_deref().unwrap_or_default()
        )
    } else {
        "bm25".to_owned()
    })
}
