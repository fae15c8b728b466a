//! `--proto` compiled once: the descriptor set protox made, kept on disk
//! with the inputs it was made from, and used again while every one of them
//! is the same.
//!
//! Parsing is most of what a large proto costs at start-up: Compute
//! Engine's `compute.proto` (3 MB of text) takes protox about 1.7 s, and the
//! rest of the start-up under 0.7 s (BENCHMARKS.md). A gateway restarts far
//! more often than its protos change.
//!
//! An entry is named by a SHA-256 of what the compilation was asked (this
//! build's version, the proto's name and the include directories); it holds
//! the encoded `FileDescriptorSet` and a manifest of every file that went
//! into it, each with where it was found ([`proto_source`], the resolver's
//! own order, so a file that now shadows another is a change) and a
//! SHA-256 of its text. An entry is used only when all of that still holds
//! and the set's own digest matches; anything else (a changed, added or
//! removed file, a damaged entry, a directory that cannot be read) compiles
//! again, as if there were no cache. Writing is best effort: a cache that
//! cannot be written is a warning, never a failure.

use std::path::{Path, PathBuf};

use proto_ai_tools_schema::{ProtoSource, proto_source};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The cache's directory: `--proto-cache DIR`, else
/// `$XDG_CACHE_HOME/ai-tools/descriptors`, else
/// `$HOME/.cache/ai-tools/descriptors`; `None` when none can be named.
pub(crate) fn default_dir() -> Option<PathBuf> {
    let set = |name: &str| {
        std::env::var_os(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    set("XDG_CACHE_HOME")
        .or_else(|| set("HOME").map(|home| home.join(".cache")))
        .map(|root| root.join("ai-tools").join("descriptors"))
}

/// A descriptor set and the files it was compiled from (`name`, and the
/// path protox read it from, `None` for a bundled file).
pub(crate) struct Compiled {
    pub bytes: Vec<u8>,
    pub files: Vec<String>,
}

/// The descriptor set of `name` under `includes`: from the cache in `dir`
/// when an entry there still holds, else from `compile`, then kept there.
///
/// # Errors
///
/// `compile`'s; the cache itself never fails a compilation.
pub(crate) fn compiled<E>(
    dir: Option<&Path>,
    name: &str,
    includes: &[PathBuf],
    compile: impl FnOnce() -> Result<Compiled, E>,
) -> Result<Vec<u8>, E> {
    let Some(dir) = dir else {
        return compile().map(|c| c.bytes);
    };
    let key = key(name, includes);
    let (manifest_path, set_path) = (
        dir.join(format!("{key}.json")),
        dir.join(format!("{key}.binpb")),
    );
    if let Some(bytes) = read_entry(&manifest_path, &set_path, includes) {
        tracing::info!(
            "the descriptors of {name} from the cache ({}): no file changed",
            dir.display()
        );
        return Ok(bytes);
    }
    let compiled = compile()?;
    if let Err(e) = write_entry(dir, &manifest_path, &set_path, includes, &compiled) {
        tracing::warn!(
            "the compiled descriptors of {name} are not kept in {} ({e}): the next start compiles again",
            dir.display()
        );
    }
    Ok(compiled.bytes)
}

/// What an entry is named by: this build and what it was asked to compile.
fn key(name: &str, includes: &[PathBuf]) -> String {
    let mut hash = Sha256::new();
    for part in [env!("CARGO_PKG_VERSION"), name]
        .into_iter()
        .map(str::to_owned)
        .chain(
            includes
                .iter()
                .map(|dir| absolute(dir).display().to_string()),
        )
    {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    hex(&hash.finalize())
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn digest(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Where `name` is found now and the digest of its text, as the manifest
/// records it; `None` when nothing serves it or it cannot be read.
fn source_record(includes: &[PathBuf], name: &str) -> Option<Value> {
    Some(match proto_source(includes, name)? {
        // Bundled with protox, fixed for this build (part of the key).
        ProtoSource::Bundled => json!({"name": name, "source": "bundled"}),
        ProtoSource::Annotation(text) => {
            json!({"name": name, "source": "annotation", "sha256": digest(text.as_bytes())})
        }
        ProtoSource::File(path) => {
            let text = std::fs::read(&path).ok()?;
            json!({"name": name, "source": absolute(&path).display().to_string(), "sha256": digest(&text)})
        }
    })
}

/// The entry's descriptor set, when the manifest's every file is still
/// found where it was, with the same text, and the set is whole.
fn read_entry(manifest_path: &Path, set_path: &Path, includes: &[PathBuf]) -> Option<Vec<u8>> {
    let manifest: Value = serde_json::from_slice(&std::fs::read(manifest_path).ok()?).ok()?;
    let files = manifest["files"].as_array()?;
    for recorded in files {
        let name = recorded["name"].as_str()?;
        if source_record(includes, name).as_ref() != Some(recorded) {
            return None;
        }
    }
    let bytes = std::fs::read(set_path).ok()?;
    (manifest["descriptor_set_sha256"].as_str() == Some(digest(&bytes).as_str())).then_some(bytes)
}

/// Keeps `compiled` under `dir`: the set first, then the manifest that
/// vouches for it, each written whole to a temporary file and renamed, so
/// that a reader never sees half an entry.
fn write_entry(
    dir: &Path,
    manifest_path: &Path,
    set_path: &Path,
    includes: &[PathBuf],
    compiled: &Compiled,
) -> std::io::Result<()> {
    let files: Vec<Value> = compiled
        .files
        .iter()
        .map(|name| {
            source_record(includes, name).ok_or_else(|| {
                std::io::Error::other(format!("{name} is no longer where it was compiled from"))
            })
        })
        .collect::<Result<_, _>>()?;
    let manifest = json!({
        "descriptor_set_sha256": digest(&compiled.bytes),
        "files": files,
    });
    std::fs::create_dir_all(dir)?;
    write_whole(set_path, &compiled.bytes)?;
    write_whole(manifest_path, manifest.to_string().as_bytes())
}

fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let partial = path.with_extension(format!("partial-{}", std::process::id()));
    std::fs::write(&partial, bytes)?;
    std::fs::rename(&partial, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&partial);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory under the system's temporary directory.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "ai-tools-proto-cache-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        dir
    }

    /// Compiles `ping.proto` under `includes` through the cache in `cache`,
    /// saying whether protox ran.
    fn compile(cache: &Path, includes: &[PathBuf]) -> (Result<Vec<u8>, String>, bool) {
        let mut ran = false;
        let result = compiled(Some(cache), "ping.proto", includes, || {
            ran = true;
            let mut compiler = protox::Compiler::with_file_resolver(
                proto_ai_tools_schema::proto_resolver(includes),
            );
            compiler.include_imports(true);
            compiler
                .open_file("ping.proto")
                .map_err(|e| e.to_string())?;
            Ok::<_, String>(Compiled {
                bytes: compiler.encode_file_descriptor_set(),
                files: compiler.files().map(|f| f.name().to_owned()).collect(),
            })
        });
        (result, ran)
    }

    #[test]
    fn an_entry_is_used_while_every_input_holds_and_never_after_one_changed() {
        let (root, cache) = (scratch("inputs"), scratch("cache"));
        let (first, second) = (root.join("first"), root.join("second"));
        std::fs::create_dir_all(&first).expect("dir");
        std::fs::create_dir_all(&second).expect("dir");
        std::fs::write(
            first.join("ping.proto"),
            "syntax = \"proto3\";\nimport \"common.proto\";\nimport \"google/protobuf/empty.proto\";\nmessage Ping { Common c = 1; }\n",
        )
        .expect("write");
        std::fs::write(
            second.join("common.proto"),
            "syntax = \"proto3\";\nmessage Common {}\n",
        )
        .expect("write");
        let includes = vec![first.clone(), second.clone()];

        let (made, ran) = compile(&cache, &includes);
        assert!(ran, "nothing cached yet");
        let (again, ran) = compile(&cache, &includes);
        assert!(!ran, "every input is the same");
        assert_eq!(made, again);

        // An import's text changes.
        std::fs::write(
            second.join("common.proto"),
            "syntax = \"proto3\";\nmessage Common { int32 n = 1; }\n",
        )
        .expect("write");
        let (changed, ran) = compile(&cache, &includes);
        assert!(ran, "an import changed");
        assert_ne!(changed, made);
        assert!(!compile(&cache, &includes).1, "kept again");

        // A file in an earlier directory now shadows the import.
        std::fs::write(
            first.join("common.proto"),
            "syntax = \"proto3\";\nmessage Common {}\n",
        )
        .expect("write");
        assert!(
            compile(&cache, &includes).1,
            "the import is found elsewhere now"
        );

        // A damaged set is never used.
        let key = key("ping.proto", &includes);
        std::fs::write(cache.join(format!("{key}.binpb")), b"damaged").expect("write");
        let (repaired, ran) = compile(&cache, &includes);
        assert!(ran, "the set no longer matches its digest");
        assert_ne!(repaired.expect("compiles"), b"damaged".to_vec());

        // A proto that no longer compiles is an error, not the old entry.
        std::fs::write(first.join("ping.proto"), "syntax = \"proto3\";\nmessage {").expect("write");
        let (broken, ran) = compile(&cache, &includes);
        assert!(ran && broken.is_err(), "{broken:?}");
        let _ = std::fs::remove_dir_all(&root);
        let _ = std::fs::remove_dir_all(&cache);
    }

    #[test]
    fn a_cache_that_cannot_be_written_compiles_all_the_same() {
        let root = scratch("unwritable");
        std::fs::write(
            root.join("ping.proto"),
            "syntax = \"proto3\";\nmessage Ping {}\n",
        )
        .expect("write");
        // A file where the cache's directory should be.
        let blocked = root.join("blocked");
        std::fs::write(&blocked, b"").expect("write");
        let includes = vec![root.clone()];
        let (first, ran) = compile(&blocked.join("descriptors"), &includes);
        assert!(ran && first.is_ok(), "{first:?}");
        let (second, ran) = compile(&blocked.join("descriptors"), &includes);
        assert!(ran && second.is_ok(), "nothing could be kept: {second:?}");
        let _ = std::fs::remove_dir_all(&root);
    }
}
