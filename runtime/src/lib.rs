//! ai-tools: proto files as the single source of truth for what an LLM agent may do.
//!
//! `ai_tools!` turns annotated RPCs into [`AgentTool`] definitions and a
//! typed executor. This crate holds what runs: the
//! [`ProtoExecutor`](executor::ProtoExecutor) behind
//! every generated executor (model arguments → gRPC call → aliased JSON),
//! the per-conversation [`AliasManager`] that shows UUIDs to the model as
//! `link-1`, [`Sessions`] that scope one alias namespace per conversation,
//! and the [`Transport`]s calls travel over
//! ([`TonicTransport`](transport::TonicTransport),
//! [`InProcessTransport`](transport::InProcessTransport)).
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
//!     ai_tools::ai_tools!("proto/links/v1/links.proto");
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! let channel = tonic::transport::Channel::from_static("http://127.0.0.1:50051").connect().await?;
//! let sessions = ai_tools::Sessions::new(ai_tools::transport::TonicTransport::new(channel), Duration::from_secs(1800));
//!
//! let exec = sessions.for_conversation::<gentools::Executor<_>>("conversation-42");
//! let result = exec.execute("links_create", r#"{"destination":"https://x.y"}"#).await;
//! // {"link":{"id":"link-1","pageThemeId":"theme-1","workspaceId":"9c1d…",…}}
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
//! (camelCase field names, the form the Go plugin's tooling expects) with
//! the UUIDs of `alias_prefix` fields registered under their own field's
//! prefix and replaced by aliases; other fields (a `workspaceId`) stay raw.
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
//! use ai_tools::{Sessions, transport::InProcessTransport};
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
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// `#[derive(ToolInput)]` expands to paths under `::ai_tools`: this name lets
// the crate's own tests use it.
#[cfg(test)]
extern crate self as ai_tools;

#[doc = include_str!("ai_tools_macro.md")]
pub use ai_tools_macros::ai_tools;
pub use ai_tools_schema as schema;
/// The reflection types in this crate's signatures (`DescriptorPool`,
/// `DynamicMessage`, `MethodDescriptor`), at the version this crate uses.
pub use prost_reflect;

pub mod alias;
#[cfg(feature = "build")]
pub use ai_tools_schema::build;
pub mod executor;
mod expiring;
mod inbound;
pub mod input;
#[cfg(feature = "mcp")]
pub mod mcp;
mod memo;
#[cfg(feature = "async-openai")]
pub mod openai;
mod result;
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
pub use transport::{CallOptions, Transport};

/// The README's Rust examples, compiled (and, unless marked `no_run`, run)
/// as doctests so that the README cannot drift from the API. Its examples
/// use the `tonic`, `tls`, `mcp` and `redis-cluster` features, on in
/// `cargo test --workspace --all-features`. `README.md` beside this crate's
/// `Cargo.toml` links to the workspace's README, and is packaged with it.
#[cfg(all(
    doctest,
    feature = "tonic",
    feature = "tls",
    feature = "mcp",
    feature = "redis-cluster"
))]
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
    use ai_tools_schema::ir::Object;

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
    /// from the bytes with its ids given aliases by `aliases`, or `None`
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
    ) -> Option<Result<String, crate::alias::AliasError>> {
        crate::executor::transcoded(aliases, prefixes, response, bytes)
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
