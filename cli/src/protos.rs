//! `ai-tools protos --out DIR`: the annotation protos this binary ships,
//! written under their import paths, for toolchains that do not serve them
//! (protoc, buf, grpcio-tools, protoc-gen-go), and a `buf.yaml` that makes
//! DIR a buf module `buf build` and `buf lint` take as it is.
//!
//! Nothing is written unless everything can be: a file already at one of
//! the paths with other content (edited, or from another version of
//! ai-tools) stops the command before it writes anything, unless `--force`.
//! A file with the same content is left as it is, and no other file in DIR
//! is touched.

use std::path::{Path, PathBuf};

use proto_ai_tools::schema::{ANNOTATION_BUF_YAML, ANNOTATION_PROTOS};

use crate::failure::Failure;

/// What happens to one annotation proto.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// Not there yet.
    Write,
    /// There with the same content.
    Keep,
    /// There with other content (written only under `--force`).
    Replace,
}

/// What is written under DIR, by path: the annotation protos at their import
/// paths, then the module's `buf.yaml`.
fn files() -> impl Iterator<Item = (&'static str, &'static str)> {
    ANNOTATION_PROTOS
        .iter()
        .copied()
        .chain([("buf.yaml", ANNOTATION_BUF_YAML)])
}

/// Writes every annotation proto under `out`, and the `buf.yaml` of the
/// module they make, creating the directories it needs, and prints one line
/// per file on stdout: `written PATH`, `unchanged PATH` or `overwritten PATH`.
pub(crate) fn write(out: &Path, force: bool) -> Result<String, Failure> {
    if out.exists() && !out.is_dir() {
        return Err(Failure::Run(format!(
            "--out {}: not a directory; give a directory, which is created if missing",
            out.display()
        )));
    }
    let mut plans = Vec::with_capacity(ANNOTATION_PROTOS.len() + 1);
    for (import, source) in files() {
        let path = out.join(import);
        let plan = match std::fs::read(&path) {
            Ok(existing) if existing == source.as_bytes() => Plan::Keep,
            Ok(_) => Plan::Replace,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Plan::Write,
            Err(e) => {
                return Err(Failure::Run(format!(
                    "{} cannot be read ({e}); nothing was written",
                    path.display()
                )));
            }
        };
        plans.push((path, source, plan));
    }
    let differing: Vec<&PathBuf> = plans
        .iter()
        .filter(|(_, _, plan)| *plan == Plan::Replace)
        .map(|(path, _, _)| path)
        .collect();
    if !differing.is_empty() && !force {
        let list: Vec<String> = differing
            .iter()
            .map(|path| path.display().to_string())
            .collect();
        return Err(Failure::Run(format!(
            "{} already there and different from the annotation protos of this ai-tools {} (edited, or from another version): nothing was written; compare them, or give --force to replace {}",
            list.join(", "),
            env!("CARGO_PKG_VERSION"),
            if differing.len() == 1 { "it" } else { "them" },
        )));
    }
    let mut report = String::new();
    for (path, source, plan) in &plans {
        if *plan != Plan::Keep {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| {
                    Failure::Run(format!("cannot create {} ({e})", parent.display()))
                })?;
            }
            std::fs::write(path, source)
                .map_err(|e| Failure::Run(format!("cannot write {} ({e})", path.display())))?;
        }
        let word = match plan {
            Plan::Write => "written",
            Plan::Keep => "unchanged",
            Plan::Replace => "overwritten",
        };
        report.push_str(&format!("{word} {}\n", path.display()));
    }
    Ok(report)
}
