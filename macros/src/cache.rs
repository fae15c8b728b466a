//! Expansions kept under the target dir, keyed by everything they depend on,
//! so that an edit to a crate's Rust code does not pay for protox and every
//! rendering again.
//!
//! Cargo runs proc macros unoptimised in dev builds, where the whole pipeline
//! on a large proto takes many seconds; it reruns them on every rebuild of
//! the invoking crate, although the proto rarely changed. An entry holds the
//! expansion's text and what it was made from:
//! - the key: this macro's own sources and those of the schema crate (a
//!   fingerprint made by `build.rs`), the crate's `Cargo.lock` (the versions
//!   of protox and prost-reflect), the macro's arguments, the crate's and the
//!   invoking file's directories, and where the proto was found;
//! - the length and hash of every file the expansion read (the proto, its
//!   imports, the overlay).
//!
//! An entry is used only when all of these match, so a stale expansion is
//! never used: an edited proto misses, and is expanded and stored again.
//! Only an expansion without errors is stored. One entry per invocation,
//! replaced whenever anything it was made from changes.
//!
//! The cache lives in `ai-tools-macro-cache/` of the target dir: the
//! directory `CARGO_TARGET_DIR` names, else `target/` beside the nearest
//! `Cargo.lock` above the crate, and only if cargo made it (it holds cargo's
//! `CACHEDIR.TAG`). `AI_TOOLS_MACRO_CACHE=off` turns the cache off. What it
//! does not see: a new file that would shadow an import the entry resolved
//! elsewhere (an edit to any read file, or `cargo clean`, picks it up).

use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};

/// This crate's and the schema crate's sources, hashed by `build.rs`; none
/// where this module is compiled without it (the macro bench), and then no
/// cache.
const FINGERPRINT: Option<&str> = option_env!("AI_TOOLS_MACROS_FINGERPRINT");

/// The first line of every entry, before the key's hash.
const MAGIC: &str = "ai-tools macro cache 2";

/// One invocation's entry.
pub struct Cache {
    /// The entry's file.
    entry: PathBuf,
    /// The hash and length of the key, as the entry's first line writes them.
    key_line: String,
}

impl Cache {
    /// The entry of the invocation `key` describes, or `None` when there is
    /// no target dir of cargo's to keep it in or the cache is turned off.
    pub fn open(manifest_dir: &Path, key: &str) -> Option<Cache> {
        FINGERPRINT?;
        if std::env::var_os("AI_TOOLS_MACRO_CACHE").is_some_and(|v| v == "off") {
            return None;
        }
        let root = manifest_dir
            .ancestors()
            .find(|dir| dir.join("Cargo.lock").is_file())?;
        let target = match std::env::var_os("CARGO_TARGET_DIR") {
            Some(dir) => root.join(dir),
            None => root.join("target"),
        };
        if !target.join("CACHEDIR.TAG").is_file() {
            return None;
        }
        let lock = std::fs::read(root.join("Cargo.lock")).ok()?;
        Some(Cache::in_target(&target, &lock, key))
    }

    /// The entry for `key` in the target dir `target`, whose crate is
    /// locked by `lock` (the lock file's content).
    ///
    /// The file is named after the invocation alone, so that a new version
    /// of the macro or of the lock file replaces the entry rather than
    /// leaving it behind; they are part of the key the entry must match.
    fn in_target(target: &Path, lock: &[u8], key: &str) -> Cache {
        let file = format!("{}.txt", hash(key.as_bytes()));
        let fingerprint = FINGERPRINT.unwrap_or_default();
        let key = format!("{fingerprint}\n{}\n{key}", hash(lock));
        Cache {
            entry: target.join("ai-tools-macro-cache").join(file),
            key_line: format!("{MAGIC} {} {}", hash(key.as_bytes()), key.len()),
        }
    }

    /// The stored expansion, if the entry is for this key and every file it
    /// read is as it was.
    pub fn lookup(&self) -> Option<String> {
        let text = std::fs::read_to_string(&self.entry).ok()?;
        let mut lines = text.split_inclusive('\n');
        if lines.next()?.trim_end() != self.key_line {
            return None;
        }
        let count: usize = lines
            .next()?
            .trim_end()
            .strip_prefix("files ")?
            .parse()
            .ok()?;
        for _ in 0..count {
            let line = lines.next()?.trim_end_matches('\n');
            let mut fields = line.splitn(3, ' ');
            let (digest, len, path) = (fields.next()?, fields.next()?, fields.next()?);
            let content = std::fs::read(path).ok()?;
            if content.len().to_string() != len || hash(&content) != digest {
                return None;
            }
        }
        // The length guards against an entry cut short, which would
        // otherwise read as a shorter expansion.
        let len: usize = lines
            .next()?
            .trim_end()
            .strip_prefix("expansion ")?
            .parse()
            .ok()?;
        let expansion: String = lines.collect();
        (expansion.len() == len).then_some(expansion)
    }

    /// Keeps `expansion`, made from `read_files`; a failure to write only
    /// means the next build expands again.
    pub fn store(&self, read_files: &[PathBuf], expansion: &str) {
        let mut text = format!("{}\nfiles {}\n", self.key_line, read_files.len());
        for path in read_files {
            let (Some(path_text), Ok(content)) = (path.to_str(), std::fs::read(path)) else {
                return;
            };
            if path_text.contains('\n') {
                return;
            }
            text.push_str(&format!(
                "{} {} {path_text}\n",
                hash(&content),
                content.len()
            ));
        }
        text.push_str(&format!("expansion {}\n", expansion.len()));
        text.push_str(expansion);
        let Some(dir) = self.entry.parent() else {
            return;
        };
        // Written aside and renamed: rustc may expand the same invocation
        // in several crates at once (a crate's tests), and a reader must
        // never see half an entry.
        let aside = dir.join(format!(
            ".{}.{}",
            std::process::id(),
            self.entry
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("entry")
        ));
        let written = std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(&aside, text))
            .and_then(|()| std::fs::rename(&aside, &self.entry));
        if written.is_err() {
            let _ = std::fs::remove_file(&aside);
        }
    }
}

/// 64 bits of SipHash as 16 hex digits: enough to tell versions of one file
/// apart (the length is compared too), and stable for a given toolchain.
fn hash(bytes: &[u8]) -> String {
    let mut hasher = DefaultHasher::new();
    hasher.write(bytes);
    format!("{:016x}", hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_used_only_while_its_key_and_files_match() {
        let dir = std::env::temp_dir().join(format!("ai-tools-macro-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let proto = dir.join("a.proto");
        std::fs::write(&proto, "syntax = \"proto3\";\n").unwrap();
        let cache = Cache::in_target(&dir, b"lock", "args");
        assert_eq!(cache.lookup(), None, "nothing stored yet");
        cache.store(std::slice::from_ref(&proto), "pub fn f() {}\n// two lines");
        assert_eq!(
            cache.lookup().as_deref(),
            Some("pub fn f() {}\n// two lines")
        );
        // Other arguments, or another lock file: another entry.
        assert_eq!(Cache::in_target(&dir, b"lock", "other args").lookup(), None);
        assert_eq!(
            Cache::in_target(&dir, b"lock, updated", "args").lookup(),
            None
        );
        // A changed read file: a miss, until the entry is stored again.
        std::fs::write(&proto, "syntax = \"proto3\";\npackage p;\n").unwrap();
        assert_eq!(cache.lookup(), None);
        cache.store(std::slice::from_ref(&proto), "pub fn g() {}");
        assert_eq!(cache.lookup().as_deref(), Some("pub fn g() {}"));
        // An entry cut short or garbled (a crash mid-write elsewhere, a
        // hand edit): a miss, never a half expansion.
        let whole = std::fs::read_to_string(&cache.entry).unwrap();
        let cut_in_header = &whole[..whole.len() / 2];
        let cut_in_expansion = &whole[..whole.len() - 3];
        for broken in [cut_in_header, cut_in_expansion, "garbage\n", ""] {
            std::fs::write(&cache.entry, broken).unwrap();
            assert_eq!(cache.lookup(), None, "{broken:?}");
        }
        cache.store(std::slice::from_ref(&proto), "pub fn g() {}");
        // A read file gone: a miss.
        std::fs::remove_file(&proto).unwrap();
        assert_eq!(cache.lookup(), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
