//! The tools' vectors on disk: one file per toolkit and model, named by
//! the SHA-256 of both, holding that hash again (a file cut short or
//! written for other tools is not taken), the count and length of the
//! vectors, and the numbers as little-endian `f32`s. Written to a
//! temporary file renamed into place, so that a reader never sees half a
//! file.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The first bytes of a cache file: what it is, and the layout's version.
const MAGIC: &[u8; 16] = b"ai-tools-emb-v1\n";

/// The SHA-256 of the source's `identity` and the `documents`, each
/// length-prefixed so that no two lists hash alike.
pub(super) fn key(identity: &str, documents: &[String]) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(MAGIC);
    hash.update((identity.len() as u64).to_le_bytes());
    hash.update(identity.as_bytes());
    hash.update((documents.len() as u64).to_le_bytes());
    for document in documents {
        hash.update((document.len() as u64).to_le_bytes());
        hash.update(document.as_bytes());
    }
    hash.finalize().into()
}

/// The cache file of `key` in `dir`.
pub(super) fn file(dir: &Path, key: &[u8; 32]) -> PathBuf {
    dir.join(format!("tools-{}.emb", hex(key)))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The vectors `file` holds for `key`, `count` of them, with their length;
/// `None` when there is no such file or it is not one of ours for `key`
/// (a file that is there but wrong is said in a warning).
pub(super) fn read(file: &Path, key: &[u8; 32], count: usize) -> Option<(usize, Vec<f32>)> {
    let bytes = match std::fs::read(file) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            tracing::warn!(
                "the embeddings cache {} cannot be read: {e}",
                file.display()
            );
            return None;
        }
    };
    let parsed = parse(&bytes, key, count);
    if parsed.is_none() {
        tracing::warn!(
            "the embeddings cache {} is not a cache of these tools (cut short, or written by another version); computing the embeddings again",
            file.display()
        );
    }
    parsed
}

fn parse(bytes: &[u8], key: &[u8; 32], count: usize) -> Option<(usize, Vec<f32>)> {
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let rest = rest.strip_prefix(key.as_slice())?;
    let (header, numbers) = rest.split_at_checked(16)?;
    let (stored_count, dimensions) = header.split_at(8);
    let stored_count = u64::from_le_bytes(stored_count.try_into().ok()?);
    let dimensions = usize::try_from(u64::from_le_bytes(dimensions.try_into().ok()?)).ok()?;
    if stored_count != count as u64
        || numbers.len() != count.checked_mul(dimensions)?.checked_mul(4)?
    {
        return None;
    }
    let vectors: Vec<f32> = numbers
        .chunks_exact(4)
        .map(|n| f32::from_le_bytes([n[0], n[1], n[2], n[3]]))
        .collect();
    vectors
        .iter()
        .all(|x| x.is_finite())
        .then_some((dimensions, vectors))
}

/// Writes `vectors` (each `dimensions` long) to `file` for `key`.
pub(super) fn write(
    file: &Path,
    key: &[u8; 32],
    dimensions: usize,
    vectors: &[f32],
) -> std::io::Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let count = vectors.len().checked_div(dimensions).unwrap_or(0);
    let mut bytes = Vec::with_capacity(MAGIC.len() + 32 + 16 + vectors.len() * 4);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(key);
    bytes.extend_from_slice(&(count as u64).to_le_bytes());
    bytes.extend_from_slice(&(dimensions as u64).to_le_bytes());
    for x in vectors {
        bytes.extend_from_slice(&x.to_le_bytes());
    }
    let temporary = file.with_extension(format!("emb.{}.tmp", std::process::id()));
    let written = std::fs::File::create(&temporary).and_then(|mut out| {
        out.write_all(&bytes)?;
        out.sync_all()
    });
    match written.and_then(|()| std::fs::rename(&temporary, file)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&temporary);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_round_trips_and_is_only_taken_for_its_key() {
        let dir = std::env::temp_dir().join(format!("ai-tools-emb-cache-{}", std::process::id()));
        let documents = vec!["stop a vm".to_owned(), "start a vm".to_owned()];
        let key = key("model-a", &documents);
        let path = file(&dir, &key);
        let vectors = [0.6f32, 0.8, 1.0, 0.0];
        write(&path, &key, 2, &vectors).expect("written");
        assert_eq!(read(&path, &key, 2), Some((2, vectors.to_vec())));
        assert_eq!(read(&path, &key, 3), None, "another count");
        let other = super::key("model-b", &documents);
        assert_ne!(other, key, "another model, another key");
        assert_eq!(read(&path, &other, 2), None, "another key");
        let bytes = std::fs::read(&path).expect("read");
        std::fs::write(&path, &bytes[..bytes.len() - 1]).expect("cut");
        assert_eq!(read(&path, &key, 2), None, "a file cut short");
        assert_ne!(
            super::key("m", &["ab".to_owned(), "c".to_owned()]),
            super::key("m", &["a".to_owned(), "bc".to_owned()]),
            "documents are length-prefixed"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
