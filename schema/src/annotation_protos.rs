//! The annotations as this crate ships them: their protos (and the
//! `buf.yaml` that makes them a buf module), a resolver that serves them,
//! their compiled descriptors, and the extension numbers they are read by.

/// Every annotation proto this crate ships, as `(import path, source text)`.
///
/// A proto compiler that serves these (besides the `google/protobuf/*` files
/// every compiler serves) lets a proto import the annotations without copying
/// them:
///
/// - `ai/context/v1/annotations.proto`: `(ai.context.v1.rpc_tool)`, the method
///   annotation as the Go plugin `protoc-gen-ai-tools` spells it;
/// - `ai/tools/v1/annotations.proto`: `(ai.tools.v1.tool_field)`, the field
///   annotation;
/// - `ai/tools/v1/rpc_tool.proto`: `(ai.tools.v1.rpc_tool)`, the same method
///   annotation in the `ai.tools.v1` package, under a number of its own
///   ([`TOOLS_RPC_TOOL_EXTENSION`]): a file may import both `rpc_tool`s, and a
///   method carries one of them;
/// - `google/api/field_behavior.proto`: `(google.api.field_behavior)`, for
///   `OUTPUT_ONLY` and `REQUIRED`.
pub const ANNOTATION_PROTOS: &[(&str, &str)] = &[
    (
        "ai/context/v1/annotations.proto",
        include_str!("../proto/ai/context/v1/annotations.proto"),
    ),
    (
        "ai/tools/v1/annotations.proto",
        include_str!("../proto/ai/tools/v1/annotations.proto"),
    ),
    (
        "ai/tools/v1/rpc_tool.proto",
        include_str!("../proto/ai/tools/v1/rpc_tool.proto"),
    ),
    (
        "google/api/field_behavior.proto",
        include_str!("../proto/google/api/field_behavior.proto"),
    ),
];

/// The `buf.yaml` (v2) that makes a directory holding [`ANNOTATION_PROTOS`]
/// a buf module that `buf build` and `buf lint` take as it is: buf's
/// STANDARD lint rules, and the exceptions the protos need, each with its
/// reason (enum values written by name in annotated protos).
/// `ai-tools protos --out DIR` writes it beside them.
pub const ANNOTATION_BUF_YAML: &str = include_str!("../proto/buf.yaml");

/// A protox resolver that serves [`ANNOTATION_PROTOS`] by their import
/// paths, so a proto importing the annotations compiles without copies of
/// them on disk. Add it to a `ChainFileResolver` after the user's own
/// include directories (a user's copy then wins) and before or after
/// `GoogleFileResolver`, as [`proto_resolver`](crate::proto_resolver) does. Feature `protox`.
///
/// # Examples
///
/// ```
/// use proto_ai_tools_schema::AnnotationFileResolver;
/// use protox::file::{ChainFileResolver, GoogleFileResolver};
///
/// let mut resolver = ChainFileResolver::new();
/// resolver.add(AnnotationFileResolver);
/// resolver.add(GoogleFileResolver::new());
/// let mut compiler = protox::Compiler::with_file_resolver(resolver);
/// compiler.open_file("ai/tools/v1/annotations.proto").expect("served");
/// assert!(compiler.descriptor_pool().get_extension_by_name("ai.tools.v1.tool_field").is_some());
/// ```
#[cfg(feature = "protox")]
#[derive(Debug, Clone, Copy, Default)]
pub struct AnnotationFileResolver;

#[cfg(feature = "protox")]
impl protox::file::FileResolver for AnnotationFileResolver {
    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        match ANNOTATION_PROTOS.iter().find(|(path, _)| *path == name) {
            Some((path, source)) => protox::file::File::from_source(path, source),
            None => Err(protox::Error::file_not_found(name)),
        }
    }
}

/// The annotation protos an overlay or whole-service mode writes options
/// of: compiled into a pool that lacks them. Not `ai/tools/v1/rpc_tool.proto`:
/// an overlay writes `ai.context.v1.rpc_tool`, and a pool that declares
/// `ai.tools.v1.ToolDefinition` in a file of its own keeps it.
pub const OVERLAY_ANNOTATION_PROTOS: &[&str] = &[
    "ai/context/v1/annotations.proto",
    "ai/tools/v1/annotations.proto",
];

/// `ai/context/v1/annotations.proto` and `ai/tools/v1/annotations.proto`
/// (with `google/protobuf/descriptor.proto` and `duration.proto`, which they import) compiled: an
/// encoded `FileDescriptorSet` for a pool built at run time that lacks them
/// (an overlay or whole-service mode writes these options into it).
/// `schema/tests/annotation_descriptors.rs` keeps it equal to the sources.
pub const ANNOTATION_DESCRIPTORS: &[u8] = include_bytes!("../proto/annotations.binpb");

/// Extension number of `rpc_tool` (a `ToolDefinition { name = 1, description = 2,
/// strict = 3 }`) on `google.protobuf.MethodOptions`, as the Go plugin
/// declares it: `ai.context.v1.rpc_tool`. The same annotation is read under
/// [`TOOLS_RPC_TOOL_EXTENSION`] too (see [`RPC_TOOL_EXTENSIONS`]).
pub const RPC_TOOL_EXTENSION: u32 = 52104;

/// Extension number of `ai.tools.v1.rpc_tool` (`ai/tools/v1/rpc_tool.proto`)
/// on `google.protobuf.MethodOptions`: the same `ToolDefinition` as
/// [`RPC_TOOL_EXTENSION`], in the `ai.tools.v1` package, under a number of
/// its own so that one file may import both declarations and one buf module
/// may hold both. A method that carries both is an error.
pub const TOOLS_RPC_TOOL_EXTENSION: u32 = 52106;

/// The numbers `rpc_tool` is read under, whichever package declares them:
/// [`RPC_TOOL_EXTENSION`], then [`TOOLS_RPC_TOOL_EXTENSION`].
pub const RPC_TOOL_EXTENSIONS: [u32; 2] = [RPC_TOOL_EXTENSION, TOOLS_RPC_TOOL_EXTENSION];

/// Extension number of `tool_field` (a `ToolFieldOptions { skip = 1,
/// alias_prefix = 2, usage_notes = 3, description = 4 }`) on
/// `google.protobuf.FieldOptions`.
pub const TOOL_FIELD_EXTENSION: u32 = 52105;

/// Extension number of `google.api.field_behavior` (a repeated
/// `google.api.FieldBehavior`) on `google.protobuf.FieldOptions`.
pub const FIELD_BEHAVIOR_EXTENSION: u32 = 1052;

/// Extension number of `google.api.http` (a `google.api.HttpRule`, whose
/// `get = 2` and `delete = 5` bind a method to HTTP `GET` and `DELETE`) on
/// `google.protobuf.MethodOptions`: where a method says nothing else, the
/// API's own word on whether it is read-only or destructive (AIP-131, 132,
/// 135; see [`ToolHints`](crate::ToolHints)).
pub const HTTP_RULE_EXTENSION: u32 = 72_295_728;
