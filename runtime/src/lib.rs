//! Proto files as the single source of truth for what an LLM agent may do.
//!
//! Annotate the RPCs a model may call in a `.proto`; [`ai_tools!`] reads it
//! at compile time (pure Rust, no `protoc`) and generates the tool
//! definitions (name, description, the JSON Schema of the arguments for
//! OpenAI, Anthropic and Gemini, checked against each provider's limits)
//! and an executor that runs a model's tool call as the gRPC call, showing
//! the model short aliases (`link-1`) instead of UUIDs.
//!
//! # From a proto to tools
//!
//! An annotated RPC (from the repository's `proto/links/v1/links.proto`;
//! the annotation protos are served by the macro: import them, do not copy
//! them):
//!
//! ```proto
//! import "ai/context/v1/annotations.proto";
//!
//! service LinksService {
//!   rpc CreateLink(CreateLinkRequest) returns (CreateLinkResponse) {
//!     option (ai.context.v1.rpc_tool) = {
//!       name: "links_create"
//!       description: "Create a short link that redirects to a destination URL."
//!       strict: true
//!     };
//!   }
//! }
//! ```
//!
//! [`ai_tools!`] expands it in a module of your crate (the path is relative
//! to the crate's directory, `CARGO_MANIFEST_DIR`), and `all_tools()` gives
//! every tool of the file, an [`AgentTool`] each, to hand to a model:
//!
//! ```
//! mod gentools {
//!     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
//! }
//!
//! for tool in gentools::all_tools() {
//!     // the JSON Schema of the arguments, for OpenAI's `parameters`
//!     let parameters = tool.parameters_for(proto_ai_tools::schema::Dialect::OpenAi);
//!     println!("{} {} {parameters}", tool.name, tool.description);
//! }
//!
//! let create = &gentools::LINKS_CREATE;
//! assert_eq!(create.name, "links_create");
//! assert_eq!(create.description, "Create a short link that redirects to a destination URL.");
//! assert!(create.strict);
//! ```
//!
//! The guide's Quickstart builds this in a new crate, step by step, and
//! serves the proto with tonic ([`build`], with feature `build`).
//!
//! # Executing tool calls
//!
//! The expansion of `ai_tools!` holds an `Executor<T>` over any
//! [`Transport`]. Hand it the tool name and the arguments JSON exactly as the
//! model sent them; what comes back is a [`ToolResult`] whose `output` goes
//! back to the model as the tool result, error or not:
//!
//! ```no_run
//! mod gentools {
//!     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
//! }
//!
//! # #[cfg(feature = "tonic")] // the transport over tonic
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! let channel = tonic::transport::Channel::from_static("http://127.0.0.1:50051").connect().await?;
//! let sessions = proto_ai_tools::Sessions::new(proto_ai_tools::transport::TonicTransport::new(channel), Duration::from_secs(1800));
//!
//! let exec = sessions.for_conversation::<gentools::Executor<_>>("conversation-42");
//! let result = exec.execute("links_create", r#"{"destination":"https://x.y"}"#).await;
//! // {"link":{"id":"link-1","page_theme_id":"theme-1","workspace_id":"9c1d…",…}}
//! println!("{} {}", result.is_error, result.output);
//!
//! let result = exec.execute("workflow_steps_create", r#"{"link_id":"link-1","action":"ACTION_EMAIL"}"#).await;
//! // the server received the UUID behind link-1
//! # let _ = result;
//! # Ok(())
//! # }
//! ```
//!
//! On the way in, the arguments are parsed with bounds
//! ([`ExecutorOptions`](executor::ExecutorOptions)),
//! provider shaping is undone by the request descriptor (`null` for an
//! absent optional field, maps sent as `[{key, value}]`, messages and
//! `Struct`s sent as JSON strings), unknown or hidden fields are refused by
//! name, and the aliases in `alias_prefix` fields are resolved with their
//! prefix checked: an alias the conversation never issued (`step-0`), one of
//! another prefix, or a raw UUID it never saw is refused before any call,
//! with the valid aliases named. On the way out, the response is protojson
//! with the proto field names the arguments use (`link_id`; camelCase
//! with [`JsonNames::Camel`](executor::JsonNames)) and the UUIDs of
//! `alias_prefix` fields registered under their own field's prefix and
//! replaced by aliases; other fields (a `workspace_id`) stay raw.
//! A gRPC error becomes a sentence with the status code, the server's
//! message (its known UUIDs aliased) and what to do next.
//!
//! # Scope one executor per conversation
//!
//! Aliases are numbered per [`AliasManager`]: `link-1` means something only
//! inside one conversation. A process-wide executor would let one user's
//! `link-1` resolve to another user's link. [`Sessions`] keys alias managers
//! by conversation id over one shared transport, forgets idle conversations
//! after a TTL and the least recently used past a capacity, and gives an
//! empty id a throwaway namespace. Executors are cheap: build one per turn
//! with [`Sessions::for_conversation`]; every executor (and hand-written
//! tool, through [`Sessions::alias_manager`]) of a conversation shares its
//! aliases. [`AliasManager::snapshot`] and [`Sessions::restore`] carry a
//! conversation across a restart.
//!
//! ```
//! use std::time::Duration;
//! use proto_ai_tools::{Sessions, transport::InProcessTransport};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let sessions = Sessions::new(InProcessTransport::new(), Duration::from_secs(1800));
//! let uuid = "d290f1ee-6c54-4b01-90e6-d701748f0851";
//! // context injected into the prompt: register its ids, then aliasify the text
//! let aliases = sessions.alias_manager("conversation-42");
//! aliases.register("link", uuid).await.unwrap();
//! let prompt = aliases.aliasify_text(&format!("The user is editing link {uuid}."));
//! assert_eq!(prompt, "The user is editing link link-1.");
//! assert!(sessions.alias_manager("another-conversation").resolve("link-1").is_none());
//! # }
//! ```
//!
//! # Cargo features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `tonic` | yes | [`TonicTransport`](transport::TonicTransport): calls over a `tonic::transport::Channel` |
//! | `tls` | no | TLS and mTLS to backends: `TonicTransport::builder` with `https://` URLs (rustls with ring) |
//! | `redis` | no | [`RedisStore`]: a conversation's aliases in Redis, shared by replicas and kept across restarts |
//! | `redis-cluster` | no | [`RedisStore::connect_cluster`]: the same store on a Redis Cluster |
//! | `reflection` | no | [`ToolSet::from_reflection`]: tools from a live server's gRPC reflection |
//! | `tool-search` | no | [`ToolIndex`]: ranked search over a toolkit's tools, for large APIs |
//! | `semantic-search` | no | `ToolIndex::with_embeddings`: retrieval by meaning beside BM25, fused (a local sentence-transformers model on candle, or an `/v1/embeddings` endpoint), cached on disk |
//! | `async-openai` | no | [`openai`]: conversions into `async-openai`'s tool types |
//! | `rig` | no | [`rig`]: a toolkit's tools for rig agents (rig 0.44), one alias namespace per conversation, retrieval documents for rig's tool retrieval |
//! | `build` | no | [`build`]: annotated protos compiled in a build script for `tonic-prost-build` (for `[build-dependencies]`) |
//! | `genai` | no | [`genai`]: a toolkit's tools as genai `Tool`s, a model's `ToolCall` run into a `ToolResponse`, one alias namespace per conversation (genai 0.7) |
//!
//! # Where to go next
//!
//! - **The macro**: [`ai_tools!`] (arguments, where it looks for the proto,
//!   what it generates, its compile errors) and the [`AgentTool`]s it
//!   generates; the schema rules and provider dialects are in [`schema`].
//! - **Running calls**: the generated executor wraps an
//!   [`executor::ProtoExecutor`]; calls travel over a [`Transport`]
//!   ([`transport::TonicTransport`], [`transport::InProcessTransport`]) with
//!   per-call [`CallOptions`] (credentials, deadlines), and come back as a
//!   [`ToolResult`].
//! - **Aliases and conversations**: [`Sessions`], [`AliasManager`], and the
//!   [`store`]s that keep aliases beyond one process.
//! - **Tools of your own and tools at run time**: [`NativeTool`] with
//!   `#[derive(ToolInput)]` ([`input`]) for hand-written tools, a
//!   [`Toolkit`] that holds generated and native tools together, and
//!   [`tool_set::ToolSet`] for tools from descriptors known only at run time.
//! - **Serving**: the `proto-ai-tools-mcp` crate serves a toolkit over the
//!   Model Context Protocol (stdio, streamable HTTP, OAuth 2.1), and is
//!   what the `ai-tools` command runs; [`build`] (feature `build`) compiles
//!   your protos for a tonic server.
//! - **The guide**: the repository's `guide/` walks through all of it, from
//!   the Quickstart to running several replicas, securing the gateway and
//!   large APIs, one chapter per task.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
// The links to items behind a feature: to the item where the feature is
// on (docs.rs builds them all), else to the feature table above.
#![doc = ""]
#![cfg_attr(feature = "build", doc = "[`build`]: crate::build")]
#![cfg_attr(not(feature = "build"), doc = "[`build`]: #cargo-features")]
#![cfg_attr(feature = "genai", doc = "[`genai`]: crate::genai")]
#![cfg_attr(not(feature = "genai"), doc = "[`genai`]: #cargo-features")]
#![cfg_attr(feature = "async-openai", doc = "[`openai`]: crate::openai")]
#![cfg_attr(not(feature = "async-openai"), doc = "[`openai`]: #cargo-features")]
#![cfg_attr(feature = "rig", doc = "[`rig`]: crate::rig")]
#![cfg_attr(not(feature = "rig"), doc = "[`rig`]: #cargo-features")]
#![cfg_attr(feature = "redis", doc = "[`RedisStore`]: crate::store::RedisStore")]
#![cfg_attr(not(feature = "redis"), doc = "[`RedisStore`]: #cargo-features")]
#![cfg_attr(
    feature = "redis-cluster",
    doc = "[`RedisStore::connect_cluster`]: crate::store::RedisStore::connect_cluster"
)]
#![cfg_attr(
    not(feature = "redis-cluster"),
    doc = "[`RedisStore::connect_cluster`]: #cargo-features"
)]
#![cfg_attr(
    feature = "reflection",
    doc = "[`ToolSet::from_reflection`]: crate::tool_set::ToolSet::from_reflection"
)]
#![cfg_attr(
    not(feature = "reflection"),
    doc = "[`ToolSet::from_reflection`]: #cargo-features"
)]
#![cfg_attr(
    feature = "tool-search",
    doc = "[`ToolIndex`]: crate::toolkit::search::ToolIndex"
)]
#![cfg_attr(not(feature = "tool-search"), doc = "[`ToolIndex`]: #cargo-features")]

// `#[derive(ToolInput)]` expands to paths under `::proto_ai_tools`: this name lets
// the crate's own tests use it.
#[cfg(test)]
extern crate self as proto_ai_tools;

/// The reflection types in this crate's signatures (`DescriptorPool`,
/// `DynamicMessage`, `MethodDescriptor`), at the version this crate uses.
pub use prost_reflect;
#[doc = include_str!("ai_tools_macro.md")]
pub use proto_ai_tools_macros::ai_tools;
pub use proto_ai_tools_schema as schema;

pub mod alias;
pub mod consent;
#[cfg(feature = "build")]
pub use proto_ai_tools_schema::build;
pub mod executor;
mod expiring;
#[cfg(feature = "genai")]
pub mod genai;
mod inbound;
pub mod input;
mod memo;
#[cfg(feature = "async-openai")]
pub mod openai;
mod result;
#[cfg(feature = "rig")]
pub mod rig;
mod sessions;
pub mod store;
pub mod tool;
pub mod tool_set;
pub mod toolkit;
pub mod transport;

pub use alias::AliasManager;
pub use input::ToolInput;
pub use result::ToolResult;
pub use sessions::Sessions;
pub use tool::{AgentTool, NativeTool, ToolContext, ToolError};
pub use toolkit::Toolkit;
pub use transport::{CallObserver, CallOptions, CallRecord, Propagator, Transport};

/// What the MCP gateway (`proto-ai-tools-mcp`) takes from this crate's
/// inner modules. Not public API: anything here may change in any release
/// (the gateway depends on this crate at its exact version).
#[doc(hidden)]
pub mod __gateway {
    pub use crate::expiring::ExpiringMap;
    pub use crate::result::unknown_tool_message;
}

/// The README's Rust example (the Quickstart's `src/main.rs`), compiled and
/// run as a doctest so that the README cannot drift from the API; it needs
/// no feature. The guide's examples are the doctests of the
/// `proto-ai-tools-guide` crate (`guide/` in the repository). `README.md`
/// beside this crate's `Cargo.toml` links to the workspace's README, and is
/// packaged with it.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// Items that code generated by `ai_tools!` and `#[derive(ToolInput)]`
/// names. Not public API: anything here may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use prost_reflect::DescriptorPool;
    pub use serde_json;
    pub use std::sync::LazyLock;

    use crate::alias::FieldPrefix;
    pub use crate::input::AliasString;
    use crate::input::{SchemaGenerator, ToolInput};
    pub use crate::tool::{ExpandedSchemas, Schemas};
    use proto_ai_tools_schema::ir::Object;

    /// Decodes the descriptor pool `ai_tools!` embedded, as standard base64
    /// text (a third the size of the same bytes as an escaped byte string).
    /// The text was produced by the macro from a pool that compiled, so a
    /// failure here is a bug of ai-tools, not of the user's input:
    /// panicking names it.
    #[allow(clippy::panic)]
    pub fn decode_pool(base64_text: &str) -> DescriptorPool {
        use base64::Engine as _;
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(base64_text)
            .map_err(|e| e.to_string())
            .and_then(|bytes| DescriptorPool::decode(bytes.as_slice()).map_err(|e| e.to_string()));
        match decoded {
            Ok(pool) => pool,
            Err(e) => panic!(
                "ai-tools bug: the descriptor pool embedded by `ai_tools!` does not decode ({e}); please report it"
            ),
        }
    }

    /// The executor's JSON of the response in `bytes`, written straight
    /// from the bytes with its fields under `names` and its ids given
    /// aliases by `aliases`, or `None`
    /// where the executor leaves the response to `DynamicMessage` (the type,
    /// or these bytes, are outside what it writes directly). For the tests
    /// that hold the two paths to the same text.
    ///
    /// # Errors
    ///
    /// What [`AliasManager`](crate::AliasManager) refuses (the limit, a store
    /// that is down).
    pub async fn transcode(
        aliases: &crate::alias::AliasManager,
        response: &prost_reflect::MessageDescriptor,
        prefixes: &'static [FieldPrefix],
        bytes: &[u8],
        names: crate::executor::JsonNames,
    ) -> Option<Result<String, crate::alias::AliasError>> {
        crate::executor::transcoded(aliases, prefixes, response, bytes, names)
            .await
            .transpose()
    }

    pub use crate::tool::construct::*;

    // The derive's plumbing.

    /// Merges the properties of `T`, a `#[serde(flatten)]` field, into
    /// `object`; see `SchemaGenerator::flatten`.
    pub fn flatten<T: ToolInput>(
        generator: &mut SchemaGenerator,
        object: &mut Object,
        optional: bool,
    ) {
        generator.flatten::<T>(object, optional);
    }

    /// Records that the property `property` of the object named `object`
    /// carries alias prefix `prefix`.
    pub fn alias_field(
        generator: &mut SchemaGenerator,
        object: &str,
        property: &str,
        prefix: &str,
    ) {
        generator.alias_field(object, property, prefix);
    }
}
