//! Where the proto file and its include directories are.
//!
//! The rule: a relative path is looked up, in order, under
//! 1. the invoking crate's `CARGO_MANIFEST_DIR`,
//! 2. the directory of the source file that invokes the macro,
//! 3. each ancestor of `CARGO_MANIFEST_DIR`, nearest first (a workspace that
//!    keeps its protos at the root).
//!
//! The first directory holding the file is the *base*; include directories
//! are relative to it. Step 2 is what makes a case of `trybuild` work: there
//! the manifest directory is generated under `target/`, but the invoking file
//! is the case itself.

use std::path::{Component, Path, PathBuf};

/// The proto file found on disk, and where its imports are looked up.
#[derive(Debug, PartialEq, Eq)]
pub struct Located {
    /// Absolute path of the proto file.
    pub file: PathBuf,
    /// Absolute include directories, in lookup order.
    pub includes: Vec<PathBuf>,
    /// The base the user's paths are relative to (see the module docs).
    pub base: PathBuf,
}

impl Located {
    /// A proto named as the compiler names it (relative to the include
    /// directory that holds it: `links/v1/links.proto`) as the user would
    /// write it, relative to the base (`proto/links/v1/links.proto`), so a
    /// diagnostic's `file:line:col` opens from the crate. A name found under
    /// no include directory (an overlay's path, a well-known type) is kept.
    pub fn shown(&self, name: &str) -> String {
        let found = self.includes.iter().find(|dir| dir.join(name).is_file());
        match found.and_then(|dir| dir.strip_prefix(&self.base).ok()) {
            Some(dir) if dir.as_os_str().is_empty() => name.to_owned(),
            Some(dir) => {
                let mut shown: Vec<String> = dir
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                shown.push(name.to_owned());
                shown.join("/")
            }
            None => name.to_owned(),
        }
    }

    /// `location` (`name:line:col`, or a bare name) with its name [`shown`](Self::shown).
    pub fn shown_location(&self, location: &str) -> String {
        let mut parts = location.rsplitn(3, ':');
        let (col, line, name) = (parts.next(), parts.next(), parts.next());
        match (name, line, col) {
            (Some(name), Some(line), Some(col))
                if line.parse::<u32>().is_ok() && col.parse::<u32>().is_ok() =>
            {
                format!("{}:{line}:{col}", self.shown(name))
            }
            _ => self.shown(location),
        }
    }
}

/// Finds `path` by the rule of this module.
///
/// `includes` empty means the default: the first directory of `path` when it
/// has one (`proto` in `proto/links/v1/links.proto`), else the base itself.
pub fn locate(
    path: &str,
    includes: &[String],
    manifest_dir: &Path,
    invoking_file_dir: Option<&Path>,
) -> Result<Located, String> {
    let relative = Path::new(path);
    if relative.is_absolute() {
        return Err(format!(
            "`{path}` is an absolute path; give a path relative to the crate's `Cargo.toml` so the crate builds on every machine"
        ));
    }
    if relative
        .extension()
        .is_none_or(|extension| extension != "proto")
    {
        return Err(format!(
            "`{path}` is not a `.proto` file; give the path of the proto file that declares the annotated services"
        ));
    }
    let candidates = candidate_bases(manifest_dir, invoking_file_dir);
    let Some(base) = candidates.iter().find(|base| base.join(relative).is_file()) else {
        let beside_invoking_file = invoking_file_dir
            .map(|dir| format!(", the invoking file's directory `{}`", dir.display()))
            .unwrap_or_default();
        return Err(format!(
            "proto file `{path}` not found; looked under the crate's directory `{}`{beside_invoking_file} and the crate's parent directories. Give a path relative to the crate's `Cargo.toml`",
            manifest_dir.display()
        ));
    };
    let includes = if includes.is_empty() {
        vec![match default_include(relative) {
            Some(top) => base.join(top),
            None => base.clone(),
        }]
    } else {
        includes.iter().map(|dir| base.join(dir)).collect()
    };
    for dir in &includes {
        if !dir.is_dir() {
            return Err(format!(
                "include directory `{}` does not exist; include directories are relative to `{}`",
                dir.display(),
                base.display()
            ));
        }
    }
    Ok(Located {
        file: base.join(relative),
        includes,
        base: base.clone(),
    })
}

fn candidate_bases(manifest_dir: &Path, invoking_file_dir: Option<&Path>) -> Vec<PathBuf> {
    let mut bases = vec![manifest_dir.to_path_buf()];
    bases.extend(invoking_file_dir.map(Path::to_path_buf));
    bases.extend(manifest_dir.ancestors().skip(1).map(Path::to_path_buf));
    bases.dedup();
    bases
}

/// `proto` for `proto/links/v1/links.proto`; `None` (the base) for `links.proto`.
fn default_include(relative: &Path) -> Option<&std::ffi::OsStr> {
    let mut components = relative.components();
    match (components.next(), components.next()) {
        (Some(Component::Normal(first)), Some(_)) => Some(first),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    struct TempTree(PathBuf);

    impl TempTree {
        fn new(name: &str, files: &[&str]) -> TempTree {
            let root =
                std::env::temp_dir().join(format!("ai-tools-locate-{name}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&root);
            for file in files {
                let path = root.join(file);
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                fs::write(path, "syntax = \"proto3\";").unwrap();
            }
            TempTree(root)
        }
    }

    impl Drop for TempTree {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn manifest_dir_first_with_the_top_directory_as_include() {
        let tree = TempTree::new("manifest", &["crate/proto/links/v1/links.proto"]);
        let manifest = tree.0.join("crate");
        let located = locate("proto/links/v1/links.proto", &[], &manifest, None).unwrap();
        assert_eq!(located.file, manifest.join("proto/links/v1/links.proto"));
        assert_eq!(located.includes, [manifest.join("proto")]);
    }

    #[test]
    fn invoking_file_dir_before_ancestors() {
        let tree = TempTree::new("invoking", &["cases/bad.proto", "bad.proto"]);
        let manifest = tree.0.join("target/tests/generated");
        let located = locate("bad.proto", &[], &manifest, Some(&tree.0.join("cases"))).unwrap();
        assert_eq!(located.file, tree.0.join("cases/bad.proto"));
        assert_eq!(located.includes, [tree.0.join("cases")]);
        assert!(!located.includes[0].to_string_lossy().ends_with('/'));
    }

    #[test]
    fn workspace_root_through_ancestors() {
        let tree = TempTree::new("ancestors", &["proto/a/v1/a.proto"]);
        fs::create_dir_all(tree.0.join("member/src")).unwrap();
        let located = locate("proto/a/v1/a.proto", &[], &tree.0.join("member"), None).unwrap();
        assert_eq!(located.file, tree.0.join("proto/a/v1/a.proto"));
    }

    #[test]
    fn explicit_includes_are_relative_to_the_base() {
        let tree = TempTree::new("includes", &["proto/a.proto", "third_party/x/x.proto"]);
        let includes = ["proto".to_owned(), "third_party".to_owned()];
        let located = locate("proto/a.proto", &includes, &tree.0, None).unwrap();
        assert_eq!(
            located.includes,
            [tree.0.join("proto"), tree.0.join("third_party")]
        );
        let error = locate("proto/a.proto", &["nope".to_owned()], &tree.0, None).unwrap_err();
        assert!(error.contains("include directory"), "{error}");
    }

    #[test]
    fn not_found_says_where_it_looked() {
        let tree = TempTree::new("missing", &[]);
        fs::create_dir_all(tree.0.join("member")).unwrap();
        let error = locate("proto/none.proto", &[], &tree.0.join("member"), None).unwrap_err();
        assert!(
            error.starts_with("proto file `proto/none.proto` not found"),
            "{error}"
        );
        assert!(error.contains(&tree.0.join("member").display().to_string()));
        assert!(error.contains("parent directories"));
    }

    #[test]
    fn absolute_and_non_proto_paths_are_refused() {
        assert!(
            locate("/etc/a.proto", &[], Path::new("/tmp"), None)
                .unwrap_err()
                .contains("absolute")
        );
        assert!(
            locate("a.txt", &[], Path::new("/tmp"), None)
                .unwrap_err()
                .contains("not a `.proto`")
        );
    }

    #[test]
    fn a_name_under_an_include_directory_is_shown_from_the_base() {
        let tree = TempTree::new("shown", &["proto/links/v1/links.proto", "top.proto"]);
        let located = locate("proto/links/v1/links.proto", &[], &tree.0, None).unwrap();
        assert_eq!(
            located.shown("links/v1/links.proto"),
            "proto/links/v1/links.proto"
        );
        assert_eq!(
            located.shown_location("links/v1/links.proto:9:23"),
            "proto/links/v1/links.proto:9:23"
        );
        // Found under no include directory: kept as it is.
        assert_eq!(
            located.shown("google/protobuf/empty.proto"),
            "google/protobuf/empty.proto"
        );
        assert_eq!(located.shown_location("overlay.toml:3"), "overlay.toml:3");
        // The include directory is the base itself: the name is the path.
        let top = locate("top.proto", &[], &tree.0, None).unwrap();
        assert_eq!(top.shown_location("top.proto:1:1"), "top.proto:1:1");
    }
}
