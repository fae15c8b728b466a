//! The file resolver a `.proto` is compiled with, by `ai_tools!` and by the
//! `ai-tools` CLI alike.

use std::path::PathBuf;

use protox::file::{ChainFileResolver, GoogleFileResolver, IncludeFileResolver};

use crate::AnnotationFileResolver;

/// The resolver `ai_tools!` and `ai-tools --proto` compile a proto with: the
/// directories of `includes` (paths, or references to them) in order, then the well-known
/// `google/protobuf/*` files, then the annotation protos
/// ([`AnnotationFileResolver`]). A copy of a well-known or annotation proto
/// under an include directory wins over the served one. Feature `protox`.
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
/// let resolver = ai_tools_schema::proto_resolver([&dir]);
/// let mut compiler = protox::Compiler::with_file_resolver(resolver);
/// compiler.open_file("ping.proto")?;
/// let tools = ai_tools_schema::tools_in_file(&compiler.descriptor_pool(), "ping.proto")
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
    for include in includes {
        resolver.add(IncludeFileResolver::new(include.into()));
    }
    resolver.add(GoogleFileResolver::new());
    resolver.add(AnnotationFileResolver);
    resolver
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
