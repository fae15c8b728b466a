//! Fingerprints the sources an expansion depends on, for the expansion
//! cache (`src/cache.rs`): this crate's own, and the schema crate's where it
//! sits beside this one (a workspace; a published crate is told apart by its
//! version, which the user's `Cargo.lock` records).

use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};

fn main() {
    let mut hasher = DefaultHasher::new();
    hasher.write(env!("CARGO_PKG_VERSION").as_bytes());
    for dir in ["src", "../schema/src", "../schema/proto"] {
        let dir = Path::new(dir);
        if !dir.is_dir() {
            continue;
        }
        println!("cargo:rerun-if-changed={}", dir.display());
        let mut files = Vec::new();
        walk(dir, &mut files);
        files.sort();
        for file in files {
            hasher.write(file.to_string_lossy().as_bytes());
            hasher.write(&std::fs::read(&file).unwrap_or_default());
        }
    }
    println!(
        "cargo:rustc-env=AI_TOOLS_MACROS_FINGERPRINT={:016x}",
        hasher.finish()
    );
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, files);
        } else {
            files.push(path);
        }
    }
}
