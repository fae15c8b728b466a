//! The file resolver a `.proto` is compiled with, by `ai_tools!` and by the
//! `ai-tools` CLI alike.

use std::path::PathBuf;

use protox::file::{ChainFileResolver, GoogleFileResolver, IncludeFileResolver};

use crate::annotation_protos::{ANNOTATION_DESCRIPTORS, ANNOTATION_PROTOS, AnnotationFileResolver};

/// The resolver `ai_tools!` and `ai-tools --proto` compile a proto with: the
/// well-known `google/protobuf/*` files protox bundles, then the
/// directories of `includes` (paths, or references to them) in order, then
/// the annotation protos ([`AnnotationFileResolver`]). Feature `protox`.
///
/// The bundled well-known types come first: a proto tree as Google's
/// packages publish it carries its own `google/protobuf/descriptor.proto`,
/// whose tooling declarations (`extensions 536000000 [declaration = {…}]`)
/// protox's parser does not read, while the types every other file uses
/// are the same. A copy of an annotation proto under an include directory
/// still wins over the served one, and a `google/protobuf/` file protox
/// does not bundle (`cpp_features.proto`) comes from the include
/// directories.
///
/// # Examples
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = std::env::temp_dir().join(format!("ai-tools-resolver-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// // No copy of the annotations or of the well-known types on disk.
/// std::fs::write(
///     dir.join("ping.proto"),
///     r#"syntax = "proto3";
///     package ping.v1;
///     import "ai/context/v1/annotations.proto";
///     import "google/protobuf/empty.proto";
///     service Ping {
///       rpc Ping(google.protobuf.Empty) returns (google.protobuf.Empty) {
///         option (ai.context.v1.rpc_tool) = { name: "ping" description: "Ping." };
///       }
///     }"#,
/// )?;
///
/// let resolver = proto_ai_tools_schema::proto_resolver([&dir]);
/// let mut compiler = protox::Compiler::with_file_resolver(resolver);
/// compiler.open_file("ping.proto")?;
/// let tools = proto_ai_tools_schema::tools_in_file(&compiler.descriptor_pool(), "ping.proto")
///     .map_err(|diagnostics| format!("{diagnostics:?}"))?;
/// assert_eq!(tools[0].name, "ping");
/// std::fs::remove_dir_all(&dir)?;
/// # Ok(())
/// # }
/// ```
pub fn proto_resolver<P: Into<PathBuf>>(
    includes: impl IntoIterator<Item = P>,
) -> ChainFileResolver {
    let mut resolver = ChainFileResolver::new();
    resolver.add(GoogleFileResolver::new());
    for include in includes {
        resolver.add(IncludeFileResolver::new(include.into()));
    }
    resolver.add(AnnotationFileResolver);
    resolver
}

/// Where [`proto_resolver`] over `includes` finds the file imported as
/// `name`, by the same order, without reading or parsing it: for a caller
/// that must know whether a compiled proto's inputs are still the same
/// (`ai-tools --proto` keeps the descriptors it compiled, keyed by them).
/// `None` where nothing serves `name`.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::{ProtoSource, proto_source};
///
/// let dir = std::env::temp_dir().join(format!("ai-tools-source-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// std::fs::write(dir.join("ping.proto"), "syntax = \"proto3\";")?;
/// let includes = [dir.clone()];
/// assert_eq!(proto_source(&includes, "ping.proto"), Some(ProtoSource::File(dir.join("ping.proto"))));
/// assert_eq!(proto_source(&includes, "google/protobuf/empty.proto"), Some(ProtoSource::Bundled));
/// assert!(matches!(
///     proto_source(&includes, "ai/context/v1/annotations.proto"),
///     Some(ProtoSource::Annotation(text)) if text.contains("rpc_tool")
/// ));
/// assert_eq!(proto_source(&includes, "absent.proto"), None);
/// std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn proto_source(includes: &[PathBuf], name: &str) -> Option<ProtoSource> {
    use protox::file::FileResolver as _;
    if GoogleFileResolver::new().open_file(name).is_ok() {
        return Some(ProtoSource::Bundled);
    }
    if let Some(path) = includes
        .iter()
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
    {
        return Some(ProtoSource::File(path));
    }
    ANNOTATION_PROTOS
        .iter()
        .find(|(path, _)| *path == name)
        .map(|(_, text)| ProtoSource::Annotation(text))
}

/// What serves an imported file ([`proto_source`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtoSource {
    /// A well-known `google/protobuf/*` type protox bundles: the same for
    /// one build of ai-tools.
    Bundled,
    /// A file under an include directory.
    File(PathBuf),
    /// An annotation proto this crate serves ([`crate::ANNOTATION_PROTOS`]),
    /// with its text.
    Annotation(&'static str),
}

/// `file:line:column` (1-based) of where a protox error points, when it
/// points somewhere: the first labelled span of its source, else its
/// file. What `ai_tools!` and `ai-tools --proto` put before every error of
/// a proto they cannot compile.
///
/// # Examples
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = std::env::temp_dir().join(format!("ai-tools-location-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// std::fs::write(dir.join("bad.proto"), "syntax = \"proto3\";\nmessage A {\n  int32 x = 1\n}\n")?;
/// let mut compiler = protox::Compiler::with_file_resolver(proto_ai_tools_schema::proto_resolver([&dir]));
/// let err = compiler.open_file("bad.proto").unwrap_err();
/// assert_eq!(proto_ai_tools_schema::error_location(&err).as_deref(), Some("bad.proto:4:1"));
/// std::fs::remove_dir_all(&dir)?;
/// # Ok(())
/// # }
/// ```
pub fn error_location(error: &protox::Error) -> Option<String> {
    use miette::Diagnostic;
    let located = error.source_code().and_then(|source| {
        let label = error.labels()?.next()?;
        let contents = source.read_span(label.inner(), 0, 0).ok()?;
        let file = contents
            .name()
            .map(str::to_owned)
            .or_else(|| error.file().map(str::to_owned))?;
        Some(format!(
            "{file}:{}:{}",
            contents.line() + 1,
            contents.column() + 1
        ))
    });
    located.or_else(|| error.file().map(str::to_owned))
}

/// A protox error's message with its causes after it, each after `: `:
/// where protox's own message is only where it went wrong (`invalid value
/// of type 'ai.context.v1.ToolDefinition' for option
/// '(ai.context.v1.rpc_tool)'`), the cause says what (`field 'descripton'
/// not found for message 'ai.context.v1.ToolDefinition'`). What
/// `ai_tools!`, `ai-tools --proto` and [`build`](crate::build) (feature
/// `build`) show after the location.
///
/// A field an annotation message does not have is followed by the
/// message's fields, the nearest first.
///
/// The causes are the error's diagnostic sources (miette's
/// `diagnostic_source`, through which protox passes on the cause of an
/// option it could not read) and its [`std::error::Error::source`] chain,
/// each message once.
///
/// # Examples
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = std::env::temp_dir().join(format!("ai-tools-message-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// std::fs::write(
///     dir.join("typo.proto"),
///     "syntax = \"proto3\";\nimport \"ai/context/v1/annotations.proto\";\n\
///      message A {}\nservice S {\n  rpc Get(A) returns (A) {\n\
///      option (ai.context.v1.rpc_tool) = { name: \"get\" descripton: \"Get.\" };\n  }\n}\n",
/// )?;
/// let mut compiler = protox::Compiler::with_file_resolver(proto_ai_tools_schema::proto_resolver([&dir]));
/// let err = compiler.open_file("typo.proto").unwrap_err();
/// let message = proto_ai_tools_schema::error_message(&err);
/// assert!(message.contains(
///     ": field 'descripton' not found for message 'ai.context.v1.ToolDefinition' \
///      (did you mean 'description'?"
/// ), "{message}");
/// std::fs::remove_dir_all(&dir)?;
/// # Ok(())
/// # }
/// ```
pub fn error_message(error: &protox::Error) -> String {
    use miette::Diagnostic;
    let mut message = error.to_string();
    let mut seen = vec![message.clone()];
    let mut add = |cause: String, message: &mut String| {
        if !cause.is_empty() && !seen.contains(&cause) {
            message.push_str(": ");
            message.push_str(&cause);
            seen.push(cause);
        }
    };
    let mut diagnostic = error.diagnostic_source();
    while let Some(cause) = diagnostic {
        add(cause.to_string(), &mut message);
        diagnostic = cause.diagnostic_source();
    }
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        add(cause.to_string(), &mut message);
        source = cause.source();
    }
    if let Some(hint) = seen.iter().find_map(|cause| annotation_field_hint(cause)) {
        message.push_str(&hint);
    }
    message
}

/// For a cause `field 'X' not found for message 'M'` where `M` is one of
/// the annotation messages: `M`'s fields, the nearest first when `X` is a
/// slip of it (` (did you mean 'description'? the fields of ... are ...)`).
fn annotation_field_hint(cause: &str) -> Option<String> {
    let rest = cause.strip_prefix("field '")?;
    let (field, rest) = rest.split_once("' not found for message '")?;
    let message_name = rest.strip_suffix('\'')?;
    let pool = prost_reflect::DescriptorPool::decode(ANNOTATION_DESCRIPTORS).ok()?;
    if !message_name.starts_with("ai.") {
        return None;
    }
    let message = pool.get_message_by_name(message_name)?;
    let names: Vec<String> = message.fields().map(|f| f.name().to_owned()).collect();
    let nearest = names
        .iter()
        .map(|name| (edit_distance(field, name), name))
        .filter(|(distance, _)| *distance <= 2)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| format!("did you mean '{name}'? "))
        .unwrap_or_default();
    Some(format!(
        " ({nearest}the fields of '{message_name}' are {})",
        names
            .iter()
            .map(|name| format!("'{name}'"))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// Levenshtein distance, for short field names.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(previous + 1).min(row[j] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh temporary directory holding `files`.
    fn directory(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("ai-tools-resolver-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (path, source) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, source).unwrap();
        }
        dir
    }

    #[test]
    fn edit_distance_counts_single_character_edits() {
        assert_eq!(edit_distance("descripton", "description"), 1);
        assert_eq!(edit_distance("nmae", "name"), 2);
        assert_eq!(edit_distance("", "name"), 4);
        assert_eq!(edit_distance("strict", "strict"), 0);
        // a field of another message is not an annotation's
        assert_eq!(
            annotation_field_hint("field 'x' not found for message 'foo.Bar'"),
            None
        );
    }

    #[test]
    fn a_typo_in_an_option_block_is_named_in_the_message() {
        let dir = directory(
            "typo",
            &[(
                "typo.proto",
                "syntax = \"proto3\";\nimport \"ai/context/v1/annotations.proto\";\nmessage A {}\nservice S {\n  rpc Get(A) returns (A) {\n    option (ai.context.v1.rpc_tool) = {\n      name: \"get\"\n      descripton: \"Get.\"\n    };\n  }\n}\n",
            )],
        );
        let mut compiler = protox::Compiler::with_file_resolver(proto_resolver([&dir]));
        let error = compiler.open_file("typo.proto").unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        let message = error_message(&error);
        assert!(
            message.starts_with(
                "invalid value of type 'ai.context.v1.ToolDefinition' for option \
                 '(ai.context.v1.rpc_tool)': field 'descripton' not found for message \
                 'ai.context.v1.ToolDefinition' (did you mean 'description'? the fields of \
                 'ai.context.v1.ToolDefinition' are 'name', 'description', "
            ),
            "{message}"
        );
        assert_eq!(error_location(&error).as_deref(), Some("typo.proto:6:5"));
    }

    #[test]
    fn a_proto_imports_the_annotations_and_well_known_types_unwritten() {
        let dir = directory(
            "served",
            &[(
                "links/v1/links.proto",
                r#"syntax = "proto3";
                package links.v1;
                import "ai/context/v1/annotations.proto";
                import "ai/tools/v1/annotations.proto";
                import "google/api/field_behavior.proto";
                import "google/protobuf/timestamp.proto";
                message CreateLinkRequest {
                  string url = 1 [(google.api.field_behavior) = REQUIRED];
                  string page_id = 2 [(ai.tools.v1.tool_field) = { alias_prefix: "page" }];
                  google.protobuf.Timestamp expires = 3;
                }
                message Link { string id = 1; }
                service Links {
                  rpc CreateLink(CreateLinkRequest) returns (Link) {
                    option (ai.context.v1.rpc_tool) = { name: "links_create" description: "Create a link." };
                  }
                }"#,
            )],
        );
        let mut compiler = protox::Compiler::with_file_resolver(proto_resolver([&dir]));
        compiler.open_file("links/v1/links.proto").unwrap();
        let tools =
            crate::tools_in_file(&compiler.descriptor_pool(), "links/v1/links.proto").unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].name, "links_create");
        assert_eq!(tools[0].request_aliases[0].prefix, "page");
    }

    #[test]
    fn the_bundled_well_known_types_win_over_a_published_trees_copy() {
        // A descriptor.proto as Google's packages publish it: a tooling
        // declaration protox's parser does not read.
        let dir = directory(
            "published",
            &[
                (
                    "google/protobuf/descriptor.proto",
                    "syntax = \"proto2\";\npackage google.protobuf;\nmessage MethodOptions {\n  extensions 1000 to max;\n  extensions 536000000 [declaration = { number: 536000000 type: \".x.Y\" full_name: \".x.y\" }];\n}\n",
                ),
                (
                    "api/v1/api.proto",
                    "syntax = \"proto3\";\npackage api.v1;\nimport \"google/protobuf/descriptor.proto\";\nextend google.protobuf.MethodOptions { string tag = 50001; }\nmessage M { string id = 1; }\n",
                ),
            ],
        );
        let mut compiler = protox::Compiler::with_file_resolver(proto_resolver([&dir]));
        let compiled = compiler.open_file("api/v1/api.proto");
        std::fs::remove_dir_all(&dir).unwrap();
        compiled.unwrap();
        let pool = compiler.descriptor_pool();
        assert!(pool.get_message_by_name("api.v1.M").is_some());
        assert!(pool.get_extension_by_name("api.v1.tag").is_some());
        // the bundled descriptor.proto, which has every option message
        assert!(
            pool.get_message_by_name("google.protobuf.FieldOptions")
                .is_some()
        );
    }

    #[test]
    fn include_directories_come_first_in_their_order() {
        // A copy of an annotation proto in the second include directory
        // wins over the served one; a file in both directories is the
        // first one's.
        let first = directory(
            "first",
            &[("shared.proto", "syntax = \"proto3\"; package first;")],
        );
        let second = directory(
            "second",
            &[
                ("shared.proto", "syntax = \"proto3\"; package second;"),
                (
                    "ai/tools/v1/annotations.proto",
                    "syntax = \"proto3\"; package mine;",
                ),
            ],
        );
        let mut compiler = protox::Compiler::with_file_resolver(proto_resolver([&first, &second]));
        compiler.open_file("shared.proto").unwrap();
        compiler.open_file("ai/tools/v1/annotations.proto").unwrap();
        let pool = compiler.descriptor_pool();
        let packages: Vec<String> = ["shared.proto", "ai/tools/v1/annotations.proto"]
            .iter()
            .map(|name| {
                pool.get_file_by_name(name)
                    .unwrap()
                    .package_name()
                    .to_owned()
            })
            .collect();
        std::fs::remove_dir_all(&first).unwrap();
        std::fs::remove_dir_all(&second).unwrap();
        assert_eq!(packages, ["first", "mine"]);
    }
}
