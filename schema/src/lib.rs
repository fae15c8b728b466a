//! The schema rules of ai-tools, with no proc-macro and no I/O.
//!
//! This crate turns annotated protobuf descriptors into LLM tool definitions:
//!
//! 1. [`proto`] reads a [`prost_reflect::DescriptorPool`] and finds every method
//!    annotated with `rpc_tool` (extension [`RPC_TOOL_EXTENSION`] or
//!    [`TOOLS_RPC_TOOL_EXTENSION`] on `google.protobuf.MethodOptions`),
//!    producing a [`ToolSpec`] per tool, with its request message converted
//!    to the typed schema IR of [`ir`].
//! 2. [`render`] turns that IR into the JSON Schema each provider accepts
//!    ([`Dialect`]).
//! 3. [`check`] verifies that any JSON Schema value obeys a provider's
//!    documented limits, so a rendering can be tested against them.
//! 4. [`names`] is the one home of the tool-name and alias-prefix rules.
//! 5. [`examples`] checks a tool's example arguments (`rpc_tool.examples`)
//!    with the inbound pipeline and the canonical schema, and writes them
//!    in a rendering's form (Anthropic's `input_examples`).
//!
//! The same rules run at compile time (inside the `ai_tools!` macro) and at run
//! time (for hand-written tools whose schema a derive composes from [`ir`]).
//!
//! # Examples
//!
//! ```
//! use proto_ai_tools_schema::{AnnotationFileResolver, Dialect};
//! use protox::file::{ChainFileResolver, File, FileResolver, GoogleFileResolver};
//!
//! // An in-memory resolver serving one service.
//! struct Memory(&'static str);
//! impl FileResolver for Memory {
//!     fn open_file(&self, name: &str) -> Result<File, protox::Error> {
//!         match name {
//!             "echo.proto" => File::from_source(name, self.0),
//!             _ => Err(protox::Error::file_not_found(name)),
//!         }
//!     }
//! }
//!
//! let echo = Memory(r#"
//!     syntax = "proto3";
//!     package echo.v1;
//!     import "ai/tools/v1/rpc_tool.proto";
//!     message EchoRequest {
//!       // The text to echo.
//!       string text = 1;
//!     }
//!     message EchoResponse { string text = 1; }
//!     service Echo {
//!       rpc Echo(EchoRequest) returns (EchoResponse) {
//!         option (ai.tools.v1.rpc_tool) = { name: "echo" description: "Echo a text." };
//!       }
//!     }
//! "#);
//!
//! let mut resolver = ChainFileResolver::new();
//! resolver.add(echo);
//! resolver.add(AnnotationFileResolver);
//! resolver.add(GoogleFileResolver::new());
//! let mut compiler = protox::Compiler::with_file_resolver(resolver);
//! compiler.include_imports(true).include_source_info(true);
//! compiler.open_file("echo.proto").expect("compiles");
//! let pool = compiler.descriptor_pool();
//!
//! let tools = proto_ai_tools_schema::tools_in_file(&pool, "echo.proto").expect("valid");
//! assert_eq!(tools[0].name, "echo");
//! assert_eq!(
//!     tools[0].render(Dialect::Anthropic),
//!     serde_json::json!({
//!         "type": "object",
//!         "properties": { "text": { "type": "string", "description": "The text to echo." } },
//!         "required": ["text"],
//!         "additionalProperties": false
//!     })
//! );
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod annotation_protos;
#[cfg(feature = "build")]
pub mod build;
pub mod check;
pub mod deferred;
mod diagnostic;
mod dialect;
pub mod examples;
pub mod host;
pub mod inbound;
pub mod ir;
pub mod names;
mod nested;
pub mod output;
pub mod overlay;
pub mod proto;
pub mod render;
#[cfg(feature = "protox")]
mod resolver;
pub mod select;
mod tool_spec;

#[cfg(test)]
mod test_support;

// The root defines nothing: each item lives in the module of its job and
// is re-exported here, and modules name that module rather than the root,
// so that imports inside the crate run one way, down.
#[cfg(feature = "protox")]
pub use annotation_protos::AnnotationFileResolver;
pub use annotation_protos::{
    ANNOTATION_BUF_YAML, ANNOTATION_DESCRIPTORS, ANNOTATION_PROTOS, FIELD_BEHAVIOR_EXTENSION,
    HTTP_RULE_EXTENSION, OVERLAY_ANNOTATION_PROTOS, RPC_TOOL_EXTENSION, RPC_TOOL_EXTENSIONS,
    TOOL_FIELD_EXTENSION, TOOLS_RPC_TOOL_EXTENSION,
};
pub use diagnostic::Diagnostic;
pub use dialect::Dialect;
pub use host::HostProfile;
pub use proto::tools_in_file;
#[cfg(feature = "protox")]
pub use resolver::{ProtoSource, error_location, error_message, proto_resolver, proto_source};
pub use tool_spec::{ConsentPolicy, FieldAlias, RenderedTool, ToolHints, ToolSpec};
