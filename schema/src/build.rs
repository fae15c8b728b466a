//! Annotated protos compiled in a build script, for `tonic-prost-build`
//! (feature `build`; `proto_ai_tools::build` with the `proto-ai-tools` crate's `build`
//! feature).
//!
//! A proto annotated for ai-tools imports `ai/context/v1/annotations.proto`
//! and friends, which are served by ai-tools rather than copied into your
//! tree. `protoc`, and so `tonic_prost_build::compile_protos`, cannot find
//! them (`Import "ai/context/v1/annotations.proto" was not found`). This
//! module compiles the protos with protox (pure Rust, no `protoc`) and the
//! same resolver `ai_tools!` uses ([`proto_resolver`](crate::proto_resolver):
//! the well-known types, your include directories, then the annotation
//! protos), and hands the result to `tonic-prost-build`'s `compile_fds`.
//!
//! Only the build script needs this: depend on it under
//! `[build-dependencies]`, and the crate your service runs in pulls no
//! proto compiler.
//!
//! # Examples
//!
//! A `build.rs` next to `proto/links/v1/links.proto`:
//!
//! ```no_run
//! # mod tonic_prost_build {
//! #     pub struct Builder;
//! #     pub fn configure() -> Builder { Builder }
//! #     impl Builder {
//! #         pub fn compile_fds(self, _: proto_ai_tools_schema::build::FileDescriptorSet) -> std::io::Result<()> { Ok(()) }
//! #     }
//! # }
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // with the `proto-ai-tools` crate: proto_ai_tools::build::compile_protos
//!     let descriptors = proto_ai_tools_schema::build::compile_protos(
//!         &["proto/links/v1/links.proto"],
//!         &["proto"],
//!     )?;
//!     tonic_prost_build::configure().compile_fds(descriptors)?;
//!     Ok(())
//! }
//! ```
//!
//! For a reflection service, whose descriptors should keep the
//! annotations (so that `ai-tools mcp --reflection` finds the tools), use
//! [`compiler`] and write
//! [`encode_file_descriptor_set`](protox::Compiler::encode_file_descriptor_set)
//! to `OUT_DIR`: `file_descriptor_set` (what `compile_fds` takes) drops
//! custom options.

use std::fmt;
use std::path::Path;

/// The descriptors `tonic_prost_build`'s `compile_fds` takes
/// (`prost-types`' `FileDescriptorSet`).
pub use prost_types::FileDescriptorSet;

/// Compiles `protos` and what they import, with the annotation protos
/// served, into the descriptors `tonic_prost_build::configure().compile_fds`
/// takes: imports and source info (the comments tonic turns into doc
/// comments) included.
///
/// `protos` and `includes` are as `tonic_prost_build::compile_protos` takes
/// them: each proto a path (relative to the crate's directory, where a
/// build script runs) under one of `includes`, or a name relative to one of
/// them. Under cargo, prints `cargo:rerun-if-changed` for every file it read
/// from disk, so the build script reruns when one of them changes.
///
/// # Errors
///
/// The first error of the compiler: a file not found under `includes`, a
/// syntax error, an unresolved import or type, with where it is.
///
/// # Examples
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = std::env::temp_dir().join(format!("ai-tools-build-doc-{}", std::process::id()));
/// std::fs::create_dir_all(dir.join("proto/ping/v1"))?;
/// std::fs::write(
///     dir.join("proto/ping/v1/ping.proto"),
///     r#"syntax = "proto3";
///     package ping.v1;
///     import "ai/context/v1/annotations.proto";
///     message PingRequest { string text = 1; }
///     message PingResponse { string text = 1; }
///     service PingService {
///       rpc Ping(PingRequest) returns (PingResponse) {
///         option (ai.context.v1.rpc_tool) = { name: "ping" description: "Ping." };
///       }
///     }"#,
/// )?;
///
/// let descriptors = proto_ai_tools_schema::build::compile_protos(
///     &[dir.join("proto/ping/v1/ping.proto")],
///     &[dir.join("proto")],
/// )?;
/// let names: Vec<_> = descriptors.file.iter().filter_map(|file| file.name.as_deref()).collect();
/// assert!(names.contains(&"ping/v1/ping.proto"));
/// assert!(names.contains(&"ai/context/v1/annotations.proto"));
/// std::fs::remove_dir_all(&dir)?;
/// # Ok(())
/// # }
/// ```
pub fn compile_protos<P: AsRef<Path>>(
    protos: &[P],
    includes: &[P],
) -> Result<FileDescriptorSet, Error> {
    Ok(compiler(protos, includes)?.file_descriptor_set())
}

/// [`compile_protos`], with the compiler given back rather than its
/// descriptors: for
/// [`encode_file_descriptor_set`](protox::Compiler::encode_file_descriptor_set)
/// (the descriptors with their custom options, the annotations among them,
/// for a reflection service or an encoded pool) or
/// [`descriptor_pool`](protox::Compiler::descriptor_pool), as well as
/// [`file_descriptor_set`](protox::Compiler::file_descriptor_set).
///
/// # Errors
///
/// As [`compile_protos`].
///
/// # Examples
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
/// let compiler = proto_ai_tools_schema::build::compiler(&["proto/links/v1/links.proto"], &["proto"])?;
/// // for `tonic_reflection`'s `register_encoded_file_descriptor_set`
/// std::fs::write(out.join("links_descriptor.bin"), compiler.encode_file_descriptor_set())?;
/// let descriptors = compiler.file_descriptor_set(); // for `compile_fds`
/// # let _ = descriptors;
/// # Ok(())
/// # }
/// ```
pub fn compiler<P: AsRef<Path>>(protos: &[P], includes: &[P]) -> Result<protox::Compiler, Error> {
    let resolver =
        crate::resolver::proto_resolver(includes.iter().map(|p| p.as_ref().to_path_buf()));
    let mut compiler = protox::Compiler::with_file_resolver(resolver);
    compiler.include_imports(true).include_source_info(true);
    for proto in protos {
        compiler.open_file(proto).map_err(|error| {
            let includes: Vec<&Path> = includes.iter().map(AsRef::as_ref).collect();
            let diagnosis = (error.is_file_not_found()
                || error.to_string().contains("is not in any include path"))
            .then(|| diagnosis(proto.as_ref(), &includes));
            Error { error, diagnosis }
        })?;
    }
    if std::env::var_os("CARGO").is_some() {
        for file in compiler.files() {
            if let Some(path) = file.path() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    Ok(compiler)
}

/// Why [`compile_protos`] or [`compiler`] could not compile: the compiler's
/// error, shown after the `file:line:column` it points at. A proto not
/// found says which part is wrong (an include directory that does not
/// exist, a proto under none of them, a proto that does not exist) and
/// lists the include paths.
pub struct Error {
    error: protox::Error,
    /// For a proto not found: which part is wrong, and the include paths.
    diagnosis: Option<String>,
}

impl Error {
    /// The compiler's own error.
    pub fn protox_error(&self) -> &protox::Error {
        &self.error
    }
}

/// Which part of `proto` and `includes` is wrong, for a proto protox did
/// not find, and the include paths, each as given (a relative one is from
/// the working directory, a build script's the crate's directory).
fn diagnosis(proto: &Path, includes: &[&Path]) -> String {
    let relative = proto.is_relative() || includes.iter().any(|dir| dir.is_relative());
    let here = std::env::current_dir()
        .ok()
        .filter(|_| relative)
        .map(|dir| format!(" (relative paths are from {})", dir.display()))
        .unwrap_or_default();
    let mut parts: Vec<String> = includes
        .iter()
        .filter(|dir| !dir.is_dir())
        .map(|dir| format!("the include directory {} does not exist", dir.display()))
        .collect();
    let under_an_include = includes.iter().any(|dir| proto.starts_with(dir));
    if proto.is_file() {
        parts.push(format!(
            "{} exists, but under none of the include paths: add the directory its imports are written from to the include paths",
            proto.display()
        ));
    } else if under_an_include || proto.is_absolute() {
        parts.push(format!("{} does not exist", proto.display()));
    } else {
        parts.push(format!(
            "{} is under none of the include paths, nor a file from the working directory",
            proto.display()
        ));
    }
    let listed: Vec<String> = includes
        .iter()
        .map(|dir| dir.display().to_string())
        .collect();
    let listed = if listed.is_empty() {
        "none".to_owned()
    } else {
        listed.join(", ")
    };
    format!("{}; the include paths: {listed}{here}", parts.join("; "))
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = crate::resolver::error_message(&self.error);
        match crate::resolver::error_location(&self.error) {
            Some(location) => write!(f, "{location}: {message}")?,
            None => write!(f, "{message}")?,
        }
        match &self.diagnosis {
            Some(diagnosis) => write!(f, ": {diagnosis}"),
            None => Ok(()),
        }
    }
}

// `?` in a `main` returning `Result<_, Box<dyn Error>>` prints the error
// with `Debug`: the same text as `Display`, which names the place.
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_names_where_it_is() {
        let dir = std::env::temp_dir().join(format!("ai-tools-build-error-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("proto")).unwrap();
        std::fs::write(
            dir.join("proto/bad.proto"),
            "syntax = \"proto3\";\nimport \"ai/context/v1/annotations.proto\";\nmessage A {\n  Missing x = 1;\n}\n",
        )
        .unwrap();
        let error = compile_protos(&[dir.join("proto/bad.proto")], &[dir.join("proto")])
            .unwrap_err()
            .to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(error.starts_with("bad.proto:4:3: "), "{error}");
        assert!(error.contains("Missing"), "{error}");
    }

    /// Which part of a proto's path or the include paths is wrong, with
    /// the include paths listed: the include directory is missing, the
    /// proto is not under any of them, or the proto does not exist.
    #[test]
    fn a_proto_not_found_says_which_part_is_missing() {
        let dir =
            std::env::temp_dir().join(format!("ai-tools-build-missing-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("proto/ping/v1")).unwrap();
        std::fs::create_dir_all(dir.join("other")).unwrap();
        let ping = dir.join("proto/ping/v1/ping.proto");
        std::fs::write(
            &ping,
            "syntax = \"proto3\";\npackage ping.v1;\nmessage A {}\n",
        )
        .unwrap();
        let error = |proto: &Path, include: &Path| {
            compile_protos(&[proto], &[include])
                .unwrap_err()
                .to_string()
        };

        // The include directory does not exist (a typo: `protos`).
        let wrong_include = dir.join("protos");
        let message = error(&ping, &wrong_include);
        assert!(
            message.contains(&format!(
                "the include directory {} does not exist",
                wrong_include.display()
            )) && message.contains(&format!("the include paths: {}", wrong_include.display())),
            "{message}"
        );

        // The file exists, under none of the include directories.
        let other = dir.join("other");
        let message = error(&ping, &other);
        assert!(
            message.contains(&format!(
                "{} exists, but under none of the include paths",
                ping.display()
            )) && message.contains(&format!("the include paths: {}", other.display())),
            "{message}"
        );

        // The file does not exist, under an include directory that does.
        let missing = dir.join("proto/ping/v1/pong.proto");
        let message = error(&missing, &dir.join("proto"));
        assert!(
            message.contains(&format!("{} does not exist", missing.display()))
                && message.contains(&format!(
                    "the include paths: {}",
                    dir.join("proto").display()
                )),
            "{message}"
        );

        // A name under the include directories that none of them holds.
        let message = error(Path::new("ping/v1/pong.proto"), &dir.join("proto"));
        assert!(
            message.contains("ping/v1/pong.proto is under none of the include paths")
                && message.contains(&format!(
                    "the include paths: {}",
                    dir.join("proto").display()
                )),
            "{message}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_proto_outside_the_includes_is_refused() {
        let error = compile_protos(&["nowhere/links.proto"], &["also-nowhere"])
            .unwrap_err()
            .to_string();
        assert!(error.contains("nowhere/links.proto"), "{error}");
    }
}
