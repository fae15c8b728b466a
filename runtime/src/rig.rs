//! A [`Toolkit`]'s tools for [rig](https://docs.rs/rig-core) agents
//! (feature `rig`): generated and native tools as rig tools, one alias
//! namespace per agent conversation, and each tool's retrieval documents for
//! rig's tool retrieval over large APIs.
//!
//! # Which rig
//!
//! `rig-core` and `rig-agent` **0.44.0**, pinned. rig 0.45 and 0.46 (the
//! current release) declare `rust-version = "1.97.1"`, past the toolchain
//! this workspace builds with; 0.44.0 is the newest rig that builds on it.
//! The feature needs Rust 1.95, rig's own floor (the rest of the crate
//! builds on 1.88). The umbrella crate `rig` re-exports the same types
//! (`rig::agent::AgentBuilder` is `rig_agent::AgentBuilder`), so an agent
//! written against either takes these tools.
//!
//! # One conversation, one namespace
//!
//! The model sees `link-1`, never a UUID, and `link-1` means something
//! only inside one conversation (see the crate docs, "Scope one executor
//! per conversation"). So tools are handed out per conversation and never
//! for a process: [`RigTools`] holds how a conversation's [`Toolkit`] is
//! built and the [`Sessions`] that keep each conversation's
//! [`AliasManager`], and [`RigTools::conversation`] gives the tools of one
//! conversation, [`ConversationTools`]. [`ConversationTools::agent`] puts
//! them on an agent and names the agent's conversation with the same id, so
//! the id that keys rig's conversation memory also keys the aliases. Two
//! agents built from two conversations never resolve each other's aliases;
//! a conversation id asked for twice (two turns, two processes over a
//! shared store) gives the same namespace.
//!
//! # What the model gets back
//!
//! A call runs through [`Toolkit::execute_with`], so it passes every check a
//! call from any other host does (bounds, alias prefixes, unknown fields).
//! A successful call's result is the executor's JSON text; a failed one (an
//! invented alias, a bad argument, a gRPC error) is a failed rig
//! [`ToolResult`](rig_core::tool::ToolResult) whose model-visible text is
//! ai-tools' sentence naming what was wrong and what to do (the valid
//! aliases, the field at fault): the model reads it and corrects itself.
//! Nothing panics.
//!
//! # Retrieval over large APIs
//!
//! rig chooses tools per request with an embedding index
//! (`AgentBuilder::retrieved_tools`). Each tool is registered with its
//! retrieval documents, [`embedding_documents`]: its name, its description
//! and the text the `tool-search` index ranks it by (service and method in
//! words, the method verb's everyday words, the description's first
//! sentence, the service's title).
//! rig's `ToolEmbedding` trait is for a type that is one tool, its name a
//! constant; a toolkit's tools are known at run time, so each is
//! registered with the same descriptor `ToolEmbedding` produces
//! ([`ToolEmbeddingDescriptor`]), and [`ConversationTools::tool_schemas`]
//! gives what rig's `EmbeddingsBuilder` embeds.
//!
//! # Examples
//!
//! An agent over the links service, one per conversation:
//!
//! ```no_run
//! use std::{sync::Arc, time::Duration};
//! # #[cfg(feature = "tonic")] // the transport over tonic
//! use proto_ai_tools::{Sessions, Toolkit, rig::RigTools, transport::TonicTransport};
//! use rig_core::DynModel;
//! use rig_core::operation::Completion;
//!
//! mod links {
//!     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
//! }
//!
//! # #[cfg(feature = "tonic")] // the transport over tonic
//! # async fn run(model: DynModel<Completion>) -> Result<(), Box<dyn std::error::Error>> {
//! let channel = tonic::transport::Channel::from_static("http://127.0.0.1:50051").connect().await?;
//! let sessions = Arc::new(Sessions::new(TonicTransport::new(channel), Duration::from_secs(1800)));
//! let transport = sessions.transport().clone();
//! // How one conversation's toolkit is built, on that conversation's aliases.
//! let tools = RigTools::new(sessions, move |aliases| {
//!     Toolkit::builder()
//!         .alias_manager(aliases)
//!         .executor::<links::Executor<_>>(transport.clone())
//!         .build()
//! });
//!
//! // Per conversation: its tools, on an agent named for it.
//! let conversation = tools.conversation("conversation-42")?;
//! let agent = conversation
//!     .agent(rig_agent::AgentBuilder::new(model))
//!     .preamble("You manage short links.")
//!     .build();
//! let answer = agent.prompt("Shorten https://example.com").max_turns(5).await?;
//! println!("{}", answer.output());
//! # Ok(())
//! # }
//! ```
//!
//! The tools of a toolkit built by hand, without an agent:
//!
//! ```
//! use proto_ai_tools::{NativeTool, Toolkit, ToolInput, rig::ConversationTools};
//!
//! /// Shout the text.
//! #[derive(serde::Deserialize, ToolInput)]
//! struct Input {
//!     /// What to shout.
//!     text: String,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let shout = NativeTool::new::<Input, _, _>("shout", "Shout the text.", |_, i: Input| async move { i.text + "!" });
//! let toolkit = Toolkit::builder().native(shout).build().unwrap();
//! let tools = ConversationTools::new("conversation-42", toolkit);
//!
//! let dynamic = tools.dynamic_tools();
//! assert_eq!(dynamic[0].name().as_str(), "shout");
//! let output = dynamic[0].execute(serde_json::json!({"text": "hi"})).await.unwrap();
//! assert_eq!(output.as_text(), Some("hi!"));
//!
//! // A bad argument comes back as a result the model reads, naming the field.
//! let refused = dynamic[0].execute(serde_json::json!({"txt": "hi"})).await.unwrap_err();
//! assert!(refused.model_output().render().contains("txt"));
//!
//! let set = tools.tool_set();
//! assert_eq!(set.schemas().unwrap()[0].embedding_docs[..2], ["shout".to_owned(), "Shout the text.".to_owned()]);
//! # }
//! ```

use std::sync::{Arc, Mutex};

use proto_ai_tools_schema::Dialect;
use rig_agent::AgentBuilder;
use rig_agent::agent::{NoToolConfig, WithBuilderTools};
use rig_agent::tool::{RegisteredTool, ToolSet};
use rig_core::effect::{
    EffectKind, FamilyDescriptor, HandlerDescriptor, Outcome, ToolEmbeddingDescriptor, family,
    tool_key,
};
use rig_core::embeddings::ToolSchema;
use rig_core::error::{ErrorKind, ErrorReport};
use rig_core::message::ToolName;
use rig_core::serve::{Dispatch, Reply, Serve};
use rig_core::tool::{DynamicTool, ToolExecutionError, ToolOutput};
use rig_core::vector_store::VectorStoreIndex;
use rig_core::vector_store::request::DynamicSearchFilter;
use serde_json::{Value, json};

use crate::alias::AliasManager;
use crate::result::ToolResult;
use crate::sessions::Sessions;
use crate::toolkit::{Tool, Toolkit, ToolkitError};
use crate::transport::CallOptions;

/// How a conversation's toolkit is built, on that conversation's aliases.
type Factory = dyn Fn(Arc<AliasManager>) -> Result<Toolkit, ToolkitError> + Send + Sync;

/// Where a conversation's aliases live: a [`Sessions`] of any transport.
type Namespaces = dyn Fn(&str) -> Arc<AliasManager> + Send + Sync;

/// Hands out each conversation's tools for rig agents: the toolkit built
/// per conversation, on that conversation's alias namespace (see the
/// [module docs](self)).
///
/// Build one per process and share it; ask it for a conversation's tools
/// with [`conversation`](Self::conversation) for every agent (or every
/// turn: a conversation id gives the same namespace each time). What the
/// model is told of the tools (their schemas and retrieval documents) is
/// made once and shared by every conversation whose toolkit holds the same
/// tools: for the 988 tools of Compute Engine, the first conversation
/// takes about 270 ms in a debug build and the next ones about 2 ms.
///
/// # Examples
///
/// ```
/// use std::{sync::Arc, time::Duration};
/// use proto_ai_tools::{Sessions, Toolkit, rig::RigTools, transport::InProcessTransport};
///
/// mod links {
///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
/// }
/// let sessions = Arc::new(Sessions::new(InProcessTransport::new(), Duration::from_secs(1800)));
/// let transport = sessions.transport().clone();
/// let tools = RigTools::new(sessions.clone(), move |aliases| {
///     Toolkit::builder()
///         .alias_manager(aliases)
///         .executor::<links::Executor<_>>(transport.clone())
///         .build()
/// });
///
/// let a = tools.conversation("conversation-a").unwrap();
/// let b = tools.conversation("conversation-b").unwrap();
/// assert!(!Arc::ptr_eq(a.toolkit().alias_manager(), b.toolkit().alias_manager()));
/// assert!(Arc::ptr_eq(
///     a.toolkit().alias_manager(),
///     tools.conversation("conversation-a").unwrap().toolkit().alias_manager()
/// ));
/// ```
#[derive(Clone)]
pub struct RigTools {
    factory: Arc<Factory>,
    namespaces: Arc<Namespaces>,
    dialect: Dialect,
    call_options: CallOptions,
    /// The definitions of the last conversation's tools, reused by the
    /// next conversation whose toolkit holds the same tools.
    definitions: Arc<Mutex<Option<Arc<Definitions>>>>,
}

impl std::fmt::Debug for RigTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RigTools")
            .field("dialect", &self.dialect)
            .finish_non_exhaustive()
    }
}

impl RigTools {
    /// Tools built per conversation by `per_conversation`, on the alias
    /// manager `sessions` keeps for that conversation. The factory must build
    /// the toolkit on the manager it is given (`ToolkitBuilder::alias_manager`,
    /// with the executors added by `ToolkitBuilder::executor`); a toolkit on any other
    /// namespace is refused by [`conversation`](Self::conversation).
    ///
    /// # Examples
    ///
    /// See [`RigTools`].
    pub fn new<T, F>(sessions: Arc<Sessions<T>>, per_conversation: F) -> Self
    where
        T: Send + Sync + 'static,
        F: Fn(Arc<AliasManager>) -> Result<Toolkit, ToolkitError> + Send + Sync + 'static,
    {
        Self {
            factory: Arc::new(per_conversation),
            namespaces: Arc::new(move |id: &str| sessions.alias_manager(id)),
            dialect: Dialect::JsonSchema,
            call_options: CallOptions::new(),
            definitions: Arc::default(),
        }
    }

    /// The dialect the tools' parameters are rendered in (default
    /// [`Dialect::JsonSchema`], the canonical JSON Schema, which rig hands
    /// to any provider). Name the provider's when the agent's model is
    /// known (`Dialect::OpenAi`, `Dialect::Anthropic`, `Dialect::Gemini`):
    /// its rendering is the one checked against that provider's limits.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::{sync::Arc, time::Duration};
    /// # use proto_ai_tools::{Sessions, Toolkit, rig::RigTools};
    /// let sessions = Arc::new(Sessions::new((), Duration::from_secs(60)));
    /// let tools = RigTools::new(sessions, |aliases| Toolkit::builder().alias_manager(aliases).build())
    ///     .with_dialect(proto_ai_tools::schema::Dialect::OpenAi);
    /// assert_eq!(tools.conversation("c").unwrap().dialect(), proto_ai_tools::schema::Dialect::OpenAi);
    /// ```
    pub fn with_dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = dialect;
        self
    }

    /// Options every call of every conversation carries unless the
    /// conversation's own override them
    /// ([`ConversationTools::with_call_options`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::{sync::Arc, time::Duration};
    /// # use proto_ai_tools::{CallOptions, Sessions, Toolkit, rig::RigTools};
    /// let sessions = Arc::new(Sessions::new((), Duration::from_secs(60)));
    /// let tools = RigTools::new(sessions, |aliases| Toolkit::builder().alias_manager(aliases).build())
    ///     .with_call_options(CallOptions::new().timeout(Duration::from_secs(5)));
    /// let conversation = tools.conversation("c").unwrap();
    /// assert_eq!(conversation.call_options().timeout, Some(Duration::from_secs(5)));
    /// ```
    pub fn with_call_options(mut self, options: CallOptions) -> Self {
        self.call_options = options;
        self
    }

    /// The tools of conversation `conversation_id`, on its alias namespace.
    /// An empty id gets a throwaway namespace, never a shared one (as
    /// [`Sessions::alias_manager`] gives).
    ///
    /// # Errors
    ///
    /// What the factory returned, or
    /// [`ToolkitError::SeparateAliasManagers`] naming a tool when the
    /// factory built the toolkit on another namespace than the one it was
    /// given (its aliases would not be the conversation's).
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::{sync::Arc, time::Duration};
    /// use proto_ai_tools::{NativeTool, Sessions, Toolkit, ToolInput, rig::RigTools, toolkit::ToolkitError};
    /// #[derive(serde::Deserialize, ToolInput)]
    /// struct Input { text: String }
    /// let echo = || NativeTool::new::<Input, _, _>("echo", "Echo.", |_, i: Input| async move { i.text });
    ///
    /// let sessions = Arc::new(Sessions::new((), Duration::from_secs(60)));
    /// // A toolkit that ignores the namespace it was given is refused.
    /// let careless = RigTools::new(sessions, move |_aliases| Toolkit::builder().native(echo()).build());
    /// assert_eq!(
    ///     careless.conversation("c").unwrap_err(),
    ///     ToolkitError::SeparateAliasManagers("echo".into())
    /// );
    /// ```
    pub fn conversation(&self, conversation_id: &str) -> Result<ConversationTools, ToolkitError> {
        let aliases = (self.namespaces)(conversation_id);
        let toolkit = (self.factory)(aliases.clone())?;
        if !Arc::ptr_eq(toolkit.alias_manager(), &aliases) {
            let first = toolkit
                .tools()
                .first()
                .map(|tool| tool.name().to_owned())
                .unwrap_or_default();
            return Err(ToolkitError::SeparateAliasManagers(first));
        }
        let definitions = {
            let mut kept = self
                .definitions
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match kept.as_ref() {
                Some(definitions) if definitions.describe(&toolkit, self.dialect) => {
                    definitions.clone()
                }
                _ => {
                    let definitions = Arc::new(Definitions::of(&toolkit, self.dialect));
                    *kept = Some(definitions.clone());
                    definitions
                }
            }
        };
        Ok(ConversationTools {
            conversation_id: conversation_id.to_owned(),
            definitions,
            shared: Arc::new(Shared {
                toolkit: Arc::new(toolkit),
                call_options: self.call_options.clone(),
            }),
        })
    }
}

/// What every tool of one conversation runs with: the toolkit and the
/// options of every call.
struct Shared {
    toolkit: Arc<Toolkit>,
    call_options: CallOptions,
}

/// One conversation's tools as rig tools: every tool of its [`Toolkit`],
/// on the toolkit's alias namespace. From [`RigTools::conversation`], or
/// from a toolkit built for one conversation with [`new`](Self::new).
///
/// Cloning shares the toolkit: clones are the same conversation. Give a
/// clone only to agents of that conversation.
///
/// # Examples
///
/// See the [module docs](self).
#[derive(Clone)]
pub struct ConversationTools {
    conversation_id: String,
    /// What the model is told of each tool, in toolkit order.
    definitions: Arc<Definitions>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for ConversationTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConversationTools")
            .field("conversation_id", &self.conversation_id)
            .field("toolkit", &self.shared.toolkit)
            .finish_non_exhaustive()
    }
}

impl ConversationTools {
    /// The tools of `toolkit`, built for the conversation
    /// `conversation_id` (on its aliases, from
    /// [`Sessions::alias_manager`]). The toolkit is taken, not borrowed, so
    /// that it cannot also serve another conversation.
    ///
    /// # Examples
    ///
    /// ```
    /// let tools = proto_ai_tools::rig::ConversationTools::new("c-1", proto_ai_tools::Toolkit::builder().build().unwrap());
    /// assert_eq!(tools.conversation_id(), "c-1");
    /// assert!(tools.dynamic_tools().is_empty());
    /// ```
    pub fn new(conversation_id: impl Into<String>, toolkit: Toolkit) -> Self {
        Self {
            conversation_id: conversation_id.into(),
            definitions: Arc::new(Definitions::of(&toolkit, Dialect::JsonSchema)),
            shared: Arc::new(Shared {
                toolkit: Arc::new(toolkit),
                call_options: CallOptions::new(),
            }),
        }
    }

    /// The same tools with their parameters rendered in `dialect` (see
    /// [`RigTools::with_dialect`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::schema::Dialect;
    /// let tools = proto_ai_tools::rig::ConversationTools::new("c", proto_ai_tools::Toolkit::builder().build().unwrap())
    ///     .with_dialect(Dialect::Anthropic);
    /// assert_eq!(tools.dialect(), Dialect::Anthropic);
    /// ```
    pub fn with_dialect(mut self, dialect: Dialect) -> Self {
        if dialect != self.definitions.dialect {
            self.definitions = Arc::new(Definitions::of(&self.shared.toolkit, dialect));
        }
        self
    }

    /// The same tools, every call carrying `options` (credentials, the end
    /// user, a deadline) over the toolkit's defaults; see
    /// [`Toolkit::execute_with`]. Tools handed out before keep theirs.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::CallOptions;
    /// let tools = proto_ai_tools::rig::ConversationTools::new("c", proto_ai_tools::Toolkit::builder().build().unwrap())
    ///     .with_call_options(CallOptions::new().metadata("x-user", "user-42"));
    /// assert_eq!(tools.call_options().metadata, [("x-user".to_owned(), "user-42".to_owned())]);
    /// ```
    pub fn with_call_options(mut self, options: CallOptions) -> Self {
        self.shared = Arc::new(Shared {
            toolkit: self.shared.toolkit.clone(),
            call_options: options,
        });
        self
    }

    /// The conversation these tools belong to.
    ///
    /// # Examples
    ///
    /// See [`new`](Self::new).
    pub fn conversation_id(&self) -> &str {
        &self.conversation_id
    }

    /// The toolkit behind the tools, and through it the conversation's
    /// [`AliasManager`] (to register ids put into the prompt, or to
    /// snapshot the conversation).
    ///
    /// # Examples
    ///
    /// See [`RigTools`].
    pub fn toolkit(&self) -> &Toolkit {
        &self.shared.toolkit
    }

    /// The dialect of the tools' parameters.
    ///
    /// # Examples
    ///
    /// See [`with_dialect`](Self::with_dialect).
    pub fn dialect(&self) -> Dialect {
        self.definitions.dialect
    }

    /// The options every call carries.
    ///
    /// # Examples
    ///
    /// See [`with_call_options`](Self::with_call_options).
    pub fn call_options(&self) -> &CallOptions {
        &self.shared.call_options
    }

    /// `builder` with every tool, offered to the model on every request,
    /// and its conversation named with this conversation's id (the id rig's
    /// conversation memory keys its history by, when the agent has a
    /// memory). An empty id, whose aliases are thrown away with the tools,
    /// names no conversation, so that no memory is shared under it either.
    /// For an API with more tools than a model should see at once, see
    /// [`agent_retrieving`](Self::agent_retrieving).
    ///
    /// # Examples
    ///
    /// See the [module docs](self).
    pub fn agent(&self, builder: AgentBuilder<NoToolConfig>) -> AgentBuilder<WithBuilderTools> {
        self.named(builder).dynamic_tools(self.dynamic_tools())
    }

    /// `builder` with its conversation named by this conversation's id,
    /// unless it is empty (see [`agent`](Self::agent)).
    fn named(&self, builder: AgentBuilder<NoToolConfig>) -> AgentBuilder<NoToolConfig> {
        if self.conversation_id.is_empty() {
            builder
        } else {
            builder.conversation(self.conversation_id.as_str())
        }
    }

    /// `builder` with the tools chosen per request: the `sample` tools
    /// whose retrieval documents ([`embedding_documents`]) `index` finds
    /// nearest to the prompt, with the conversation named as in
    /// [`agent`](Self::agent). `index` holds [`tool_schemas`](Self::tool_schemas)
    /// embedded with their tool's name as id (rig's
    /// `InMemoryVectorStore::from_documents_with_id_f(embedded, |tool| tool.name.clone())`,
    /// or any vector store with those ids).
    ///
    /// # Examples
    ///
    /// The repository's `tests/tests/rig.rs` builds an index with a toy
    /// embedding model and checks which tool a request is offered.
    pub fn agent_retrieving<I, F>(
        &self,
        builder: AgentBuilder<NoToolConfig>,
        sample: usize,
        index: I,
    ) -> AgentBuilder<WithBuilderTools>
    where
        I: VectorStoreIndex<Filter = F> + 'static,
        F: DynamicSearchFilter + Send + Sync + 'static,
    {
        self.named(builder)
            .retrieved_tools(sample, index, self.tool_set())
    }

    /// Every tool as a rig [`DynamicTool`] (for `AgentBuilder::dynamic_tools`
    /// or `ToolServer::dynamic_tools`): the name, the description, the
    /// parameters in [`dialect`](Self::dialect), and a call that runs
    /// through the toolkit. A tool's arguments reach it as rig parsed them;
    /// [`tool_set`](Self::tool_set)'s tools take the model's text as sent.
    ///
    /// # Examples
    ///
    /// See the [module docs](self).
    pub fn dynamic_tools(&self) -> Vec<DynamicTool> {
        self.definitions
            .tools
            .iter()
            .map(|definition| {
                let shared = self.shared.clone();
                let called = definition.name.to_string();
                DynamicTool::new(
                    definition.name.clone(),
                    definition.description.clone(),
                    definition.parameters.clone(),
                    move |arguments: Value| {
                        let shared = shared.clone();
                        let called = called.clone();
                        Box::pin(async move {
                            let result = shared
                                .toolkit
                                .execute_with(&called, arguments, &shared.call_options)
                                .await;
                            into_rig(result)
                        })
                    },
                )
            })
            .collect()
    }

    /// Every tool as a retrievable rig registration, in toolkit order: its
    /// definition and its [`ToolEmbeddingDescriptor`] (the
    /// [`embedding_documents`], and as context `{"name", "toolset"}`), so
    /// that `ToolSet::schemas` gives what an embedding index is built from
    /// and `AgentBuilder::retrieved_tools` can offer it.
    ///
    /// # Examples
    ///
    /// See the [module docs](self).
    pub fn tool_set(&self) -> ToolSet {
        let mut set = ToolSet::default();
        for tool in self.registered_tools() {
            set.add_registered_tool(tool);
        }
        set
    }

    /// Every tool as a [`RegisteredTool`] (what [`tool_set`](Self::tool_set)
    /// holds), for a `ToolServer` or a `ToolServerHandle` of one's own.
    ///
    /// # Examples
    ///
    /// ```
    /// let tools = proto_ai_tools::rig::ConversationTools::new("c", proto_ai_tools::Toolkit::builder().build().unwrap());
    /// assert!(tools.registered_tools().is_empty());
    /// ```
    pub fn registered_tools(&self) -> Vec<RegisteredTool> {
        self.definitions
            .tools
            .iter()
            .filter_map(|definition| {
                let handler = ToolHandler {
                    shared: self.shared.clone(),
                    definition: definition.clone(),
                };
                // Refused only for a handler of another family or an
                // empty name; this one is a tool's, and names are checked.
                RegisteredTool::from_handler(handler).ok()
            })
            .collect()
    }

    /// What rig's `EmbeddingsBuilder` embeds for tool retrieval: one
    /// [`ToolSchema`] per tool, its `embedding_docs` the
    /// [`embedding_documents`].
    ///
    /// # Examples
    ///
    /// See the [module docs](self).
    pub fn tool_schemas(&self) -> Vec<ToolSchema> {
        self.definitions
            .tools
            .iter()
            .map(|definition| ToolSchema {
                name: definition.name.to_string(),
                context: definition.embedding.context.clone(),
                embedding_docs: definition.embedding.embedding_docs.clone(),
            })
            .collect()
    }
}

/// What a model is told of a toolkit's tools, rendered in one dialect:
/// the same for every conversation whose toolkit holds the same tools, so
/// it is made once and shared (a large API's schemas and documents are
/// megabytes).
struct Definitions {
    dialect: Dialect,
    tools: Vec<Arc<Definition>>,
}

/// One tool, as rig registers it.
struct Definition {
    name: ToolName,
    description: String,
    parameters: Value,
    embedding: ToolEmbeddingDescriptor,
    /// The generated tool's static definition: the identity of a
    /// generated tool across conversations (a native one is compared by
    /// what it says of itself).
    agent_tool: Option<&'static crate::tool::AgentTool>,
}

impl Definitions {
    fn of(toolkit: &Toolkit, dialect: Dialect) -> Self {
        let tools = toolkit
            .tools()
            .iter()
            .filter_map(|tool| {
                // `ToolName` refuses only an empty name, which a toolkit
                // never holds (every name was checked when it was built).
                let name = ToolName::new(tool.name()).ok()?;
                Some(Arc::new(Definition {
                    name,
                    description: tool.description().to_owned(),
                    parameters: tool.parameters(dialect),
                    embedding: embedding_descriptor(tool),
                    agent_tool: tool.agent_tool(),
                }))
            })
            .collect();
        Self { dialect, tools }
    }

    /// Whether these definitions are those of `toolkit`'s tools in
    /// `dialect`: the same tools in the same order, a generated one the
    /// same static definition, a native one the same name, description and
    /// parameters (a native tool's are rendered from its type, cheaply).
    fn describe(&self, toolkit: &Toolkit, dialect: Dialect) -> bool {
        self.dialect == dialect
            && self.tools.len() == toolkit.tools().len()
            && self
                .tools
                .iter()
                .zip(toolkit.tools())
                .all(
                    |(definition, tool)| match (definition.agent_tool, tool.agent_tool()) {
                        (Some(kept), Some(agent)) => std::ptr::eq(kept, agent),
                        (None, None) => {
                            definition.name.as_str() == tool.name()
                                && definition.description == tool.description()
                                && definition.parameters == tool.parameters(dialect)
                        }
                        _ => false,
                    },
                )
    }
}

/// The documents a tool is retrieved by, in this order: its name, its
/// description, and the text the `tool-search` index ranks it by (its name
/// and, for a generated tool, its service and method split into words, the
/// everyday words of the method's verb, its title, its description's first
/// sentence and its service's title; see
/// [`ToolIndex`](crate::toolkit::search::ToolIndex)).
/// rig embeds each document and ranks a tool by its nearest one.
///
/// # Examples
///
/// ```
/// mod links {
///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
/// }
/// let executor = links::Executor::new(proto_ai_tools::transport::InProcessTransport::new());
/// let toolkit = proto_ai_tools::Toolkit::builder().generated(executor).build().unwrap();
/// let update = toolkit.get("links_update").unwrap();
///
/// let documents = proto_ai_tools::rig::embedding_documents(update);
/// assert_eq!(documents[0], "links_update");
/// assert_eq!(documents[1], update.description());
/// assert!(documents[2].contains("links service update link"));
/// assert!(documents[2].contains("change modify edit"));
/// ```
pub fn embedding_documents(tool: &Tool) -> Vec<String> {
    vec![
        tool.name().to_owned(),
        tool.description().to_owned(),
        crate::toolkit::search::document(tool),
    ]
}

/// The descriptor rig keeps for a retrievable tool.
fn embedding_descriptor(tool: &Tool) -> ToolEmbeddingDescriptor {
    ToolEmbeddingDescriptor {
        context: json!({ "name": tool.name(), "toolset": tool.toolset() }),
        embedding_docs: embedding_documents(tool),
    }
}

/// Our result as rig's: the executor's JSON text, or a failure whose
/// model-visible text is our sentence (an explicit `ToolExecutionError`
/// shows its message to the model; `Other`, because the sentence, not a
/// kind, says what went wrong).
fn into_rig(result: ToolResult) -> Result<ToolOutput, ToolExecutionError> {
    if result.is_error {
        Err(ToolExecutionError::other(result.output))
    } else {
        Ok(ToolOutput::text(result.output))
    }
}

/// One tool as a rig handler of the tool family, with its retrieval
/// descriptor: the runtime form of a `ToolEmbedding` tool.
struct ToolHandler {
    shared: Arc<Shared>,
    definition: Arc<Definition>,
}

impl Serve for ToolHandler {
    type Family = family::Tool;

    fn descriptor(&self) -> HandlerDescriptor {
        let definition = &self.definition;
        HandlerDescriptor {
            key: tool_key(definition.name.as_str()),
            family: FamilyDescriptor::Tool {
                name: definition.name.to_string(),
                description: definition.description.clone(),
                parameters: definition.parameters.clone(),
                embedding: Some(definition.embedding.clone()),
            },
            layers: Vec::new(),
        }
    }

    async fn serve(&self, kind: EffectKind, _dispatch: Dispatch) -> Reply {
        let own = self.definition.name.as_str();
        match kind {
            EffectKind::ToolCall { name, args } if name == own => {
                let result = self
                    .shared
                    .toolkit
                    .execute_with(own, args.as_str(), &self.shared.call_options)
                    .await;
                let result = match into_rig(result) {
                    Ok(output) => rig_core::tool::ToolResult::success(output),
                    Err(error) => rig_core::tool::ToolResult::failed(error),
                };
                Reply::Outcome(Ok(Outcome::ToolResult { result }))
            }
            // Routing by key must never run another tool than this one.
            EffectKind::ToolCall { name, .. } => Reply::Outcome(Err(ErrorReport::new(
                ErrorKind::Internal,
                format!("the handler of tool `{own}` was asked to run `{name}`"),
            ))),
            other => Reply::Outcome(Err(ErrorReport::new(
                ErrorKind::HandlerUnavailable,
                format!(
                    "the handler of tool `{own}` cannot serve a `{}` effect",
                    other.name()
                ),
            ))),
        }
    }
}
