//! Serve a [`Toolkit`] over the [Model Context Protocol](https://modelcontextprotocol.io),
//! with the official Rust SDK [`rmcp`]: the gateway of
//! [`proto-ai-tools`](proto_ai_tools), and what the `ai-tools` command runs.
//!
//! An MCP host (Claude Desktop, an IDE, an agent framework) lists the tools
//! and calls them; each call runs through [`Toolkit::execute`], so a
//! generated tool is a real gRPC call and UUIDs reach the host as aliases
//! (`link-1`).
//!
//! ```no_run
//! mod links {
//!     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let channel = tonic::transport::Channel::from_static("http://127.0.0.1:50051").connect_lazy();
//! let transport = proto_ai_tools::transport::TonicTransport::new(channel);
//!
//! // One toolkit per alias scope (an MCP session, or a stateless caller), built on its namespace.
//! let server = proto_ai_tools_mcp::McpServer::new(move |aliases| {
//!     proto_ai_tools::Toolkit::builder()
//!         .alias_manager(aliases)
//!         .executor::<links::Executor<_>>(transport.clone())
//!         .build()
//! });
//! server.serve_http("127.0.0.1:8080").await?; // or .serve_stdio() for desktop hosts
//! # Ok(())
//! # }
//! ```
//!
//! # One alias namespace per caller
//!
//! `link-1` means something only to whoever was shown it. MCP has two eras,
//! and the server serves both side by side (`server/discover` lists every
//! version up to [`MAX_PROTOCOL_VERSION`], `2026-07-28`):
//!
//! - **The handshake era** (protocol up to `2025-11-25`,
//!   [`MAX_SESSION_PROTOCOL_VERSION`]): a client sends `initialize` and
//!   then names its MCP session (`Mcp-Session-Id`) on every request. The
//!   session is the namespace: two sessions never resolve each other's
//!   aliases, even of one user, and the namespace is forgotten when the
//!   session ends (HTTP `DELETE`, or the server drops it).
//! - **Protocol `2026-07-28`** has no sessions: each request stands alone.
//!   Its namespace, its *scope*, is who is calling, decided per request in
//!   one place (`scope.rs`), in this order: the token's issuer, subject
//!   and OAuth client id when the server [checks tokens](McpServer::with_oauth);
//!   else the value of a header a trusted front proxy sets
//!   ([`with_alias_scope_header`](McpServer::with_alias_scope_header));
//!   else, on a loopback server started [single-user](McpServer::with_single_user),
//!   one local scope. A caller's aliases live across requests, clients and
//!   tokens, for as long as the [`Sessions`] (or its store) keeps them, and
//!   are never another caller's: a scope's key is a SHA-256 of who is
//!   calling, so no value a caller sends reaches a store key as text.
//!   A stateless request with none of these is refused, `400`, naming what
//!   it lacks; and a server on an address that is not loopback refuses to
//!   start without a way to tell callers apart
//!   ([`ServeError::NoCallerIdentity`]).
//!
//! Over stdio the scope is the process (its id is
//! [`with_stdio_session_id`](McpServer::with_stdio_session_id)). The MCP
//! spec tells clients not to tie one stdio process to one conversation, so
//! several conversations of one host may share it, and its aliases.
//!
//! Several gateways share their callers' aliases through one store
//! ([`with_sessions`](McpServer::with_sessions) over
//! [`Sessions::with_store`], a `RedisStore` on a server or a cluster): a
//! stateless request can then go to any of them, with no sticky routing.
//! With [`with_session_store`](McpServer::with_session_store) (feature
//! `redis`) handshake-era sessions roam as well: each session's record is
//! kept in the same Redis, so a session started on one gateway goes on on
//! another, with its aliases and enabled toolsets, and outlives a
//! gateway's restart. Without it a session lives in the gateway that
//! started it.
//!
//! # The tool list
//!
//! MCP's `inputSchema` is JSON Schema and a host forwards it to its model
//! provider, most often Anthropic's. The tools are listed in the
//! [`Dialect::Anthropic`] rendering by default ([`MCP_DIALECT`]): a plain
//! object at the root, optional fields left out of `required` rather than
//! typed `["T","null"]`, and, for strict tools, no open objects (maps as
//! `[{key, value}]` entries, which the executor turns back into maps). Pick
//! another with [`McpServer::with_dialect`]; the executor accepts the
//! arguments of every dialect.
//!
//! The rendering is for the hosts the server is for
//! ([`McpServer::with_host_profile`], default [`HostProfile::JavaScript`]):
//! most hosts are JavaScript and parse the model's arguments with
//! `JSON.parse`, which rounds an integer past 2^53, and several refuse
//! `$ref`. So by default 64-bit integers are listed as strings of digits
//! and no schema holds `$ref`; a call that still sends a 64-bit integer as
//! a number past 2^53 is refused as possibly rounded, asking for its digits.
//!
//! A successful output that is a JSON object is sent both as text (what
//! hosts show the model) and as `structuredContent`. With
//! [`McpServer::with_output_schemas`] each tool also declares its
//! `outputSchema`: not the response message's shape but the form the
//! executor writes it in (protojson, ids as aliases, fields at their default
//! left out; `proto_ai_tools_schema::output`), so a host that validates
//! `structuredContent` against it never refuses a result.
//!
//! # Limits of the HTTP edge
//!
//! Anyone who reaches the port can spend the server's memory, sockets and
//! time, so [`McpServer::serve_http_until`] holds every request to limits
//! before rmcp parses it, each with a default and a builder method (the
//! guide's "Limits" chapter has them in one table, with the CLI flags):
//!
//! - **Body size** ([`with_max_request_body_bytes`](McpServer::with_max_request_body_bytes),
//!   default [`DEFAULT_MAX_REQUEST_BODY_BYTES`], the argument limit plus
//!   [`REQUEST_ENVELOPE_BYTES`]): past it, `413 Payload Too Large` naming
//!   the limit, before the body is read when its `Content-Length` says so,
//!   else as soon as it streams past.
//! - **The scope before the arguments.** A `POST` or `DELETE` with an
//!   `Mcp-Session-Id` the server does not hold is answered `404 Not Found`
//!   without its body being read (the spec's status for an ended session:
//!   the client starts a new one); when sessions roam
//!   ([`with_session_store`](McpServer::with_session_store)) the store is
//!   asked first, and the session is restored only for its owner. A `POST` without one is stateless: its
//!   scope is found from its headers (and token) first. Without a scope it
//!   is read to at most [`MAX_SESSIONLESS_BODY_BYTES`] and must be an
//!   `initialize` (or `server/discover`): its `method` is found by a scan
//!   that builds nothing, and anything else is `400 Bad Request`, saying
//!   which identity it lacks. So no request's arguments are parsed before
//!   its scope is known, and the most a client without one makes the
//!   server parse is 16 KiB.
//! - **JSON first.** Every body is checked to be JSON (syntax, and nesting
//!   within 128 levels) by the same scan before rmcp parses it into a
//!   message: not JSON is `400` with a JSON-RPC `-32700` parse error, JSON
//!   that is not a message `400` with `-32600`. A `tools/call` whose
//!   `arguments` is not an object is `-32602` (invalid params).
//! - **Sessions** ([`with_max_sessions`](McpServer::with_max_sessions),
//!   default [`DEFAULT_MAX_SESSIONS`], per server; there is no principal to
//!   count per, since the server authenticates no one): at the cap a new
//!   `initialize` is refused, `503 Service Unavailable` with `Retry-After`,
//!   and no session is evicted. Evicting the oldest idle one would let
//!   anyone who can send `initialize` end other clients' conversations,
//!   and with them their aliases. A session ends at its client's `DELETE`
//!   or after [`with_session_idle_timeout`](McpServer::with_session_idle_timeout)
//!   without a message, which gives its slot back.
//! - **Connections** ([`with_max_connections`](McpServer::with_max_connections),
//!   default [`DEFAULT_MAX_CONNECTIONS`]): past the cap a connection waits
//!   unaccepted in the listen backlog until one closes.
//!   [`with_header_timeout`](McpServer::with_header_timeout) closes a
//!   connection whose headers are late (slowloris) and answers a late body
//!   `408`; [`with_idle_timeout`](McpServer::with_idle_timeout) closes one
//!   with no request in progress. An event stream in progress is not idle.
//! - **Origin**: browsers' requests are accepted from loopback pages
//!   ([`LOOPBACK_ORIGINS`]) and those given to
//!   [`with_allowed_origins`](McpServer::with_allowed_origins); any other
//!   `Origin` is `403 Forbidden`, as the transport spec requires. A request
//!   without `Origin` passes, and the `Host` header is checked as before
//!   ([`with_allowed_hosts`](McpServer::with_allowed_hosts)).
//!
//! # Forwarded headers, deadlines and cancellation
//!
//! What a tool call carries and how long it may run, over stdio and HTTP:
//!
//! - **Forwarded headers fail closed**
//!   ([`forward_headers`](McpServer::forward_headers)). A forwarded header
//!   whose value gRPC metadata cannot carry (not printable ASCII, or a
//!   `-bin` value that is not base64), or one that appears more than once
//!   in the request, refuses the call: the model gets an error result that
//!   names the header (never its value) and says nothing was sent, and the
//!   service sees nothing. Every forwarded header is single-valued.
//! - **Every call has a deadline** ([`with_call_timeout`](McpServer::with_call_timeout),
//!   default [`DEFAULT_CALL_TIMEOUT`], 50 seconds;
//!   [`with_tool_timeout`](McpServer::with_tool_timeout) per tool, then
//!   the tool's own `rpc_tool.timeout`, [`Tool::timeout`](proto_ai_tools::toolkit::Tool::timeout)). A
//!   generated tool sends it as `grpc-timeout` and holds the call to it
//!   locally; a service that stalls past it ends the call with a
//!   `DEADLINE_EXCEEDED` error result that tells the model what to do.
//! - **A client that goes away cancels its call.** An MCP
//!   `notifications/cancelled` for the request, or, over HTTP, the
//!   client's connection closing before the result was sent
//!   ([`with_cancel_on_disconnect`](McpServer::with_cancel_on_disconnect)),
//!   drops the call's future, which resets its gRPC stream: the service's
//!   handler is cancelled, and nothing of the call is registered in the
//!   conversation's aliases.
//!
//! # Long-running operations as tasks
//!
//! A tool whose method returns `google.longrunning.Operation` and names its
//! types in `google.longrunning.operation_info` is long-running
//! ([`proto_ai_tools_schema::proto::long_running`]). Serving one, the server
//! advertises the MCP tasks extension (`io.modelcontextprotocol/tasks`,
//! through rmcp) unless [`McpServer::with_tasks`] turns it off:
//!
//! - a `tools/call` from a client that declares the extension (at
//!   `initialize` or in the request's `_meta`) makes the gRPC call and
//!   answers with a task; `tasks/get` calls
//!   `google.longrunning.Operations/GetOperation` on the same backend, with
//!   the options the tool's calls have (forwarded headers, claims,
//!   deadline), and once the operation is done its result is the tool's:
//!   the response unpacked from its `Any` and written as any answer is
//!   (protojson, ids as aliases), or an error result with the operation's
//!   status. `tasks/cancel` calls `CancelOperation`;
//! - a task id works only in the scope (session or caller) it was given
//!   in, and the server keeps no state for it: the operation lives at the
//!   service;
//! - every other client gets the operation itself as the call's result and
//!   follows it with the tool [`OPERATIONS_GET`], listed beside the
//!   long-running tools, which takes the operation's name or its alias.
//!
//! # Errors and shutdown
//!
//! Every failure of a call — bad arguments, an invented alias, a gRPC error,
//! a native tool's error — is a tool result with `isError: true` whose text
//! tells the model what to do, never a protocol error; only a tool name the
//! server does not have is a protocol error (`-32602`), as MCP specifies,
//! and so is a `tools/call` that is not one (`arguments` that are not an
//! object: the host, not the model, sent it).
//! Nothing is written to stdout but the protocol. [`McpServer::serve_stdio`]
//! returns when stdin closes or on ctrl-c / `SIGTERM`;
//! [`McpServer::serve_http`] on ctrl-c / `SIGTERM`; the `_until` variants
//! take any shutdown future. An HTTP server drains first: each new request
//! is answered `503` with `Retry-After`, the calls in flight run for up to
//! the [drain timeout](McpServer::with_drain_timeout), and a call still
//! running then is answered that it did not finish (it may or may not have
//! taken effect), so no client is left with a half-written answer.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use proto_ai_tools_schema::{Dialect, HostProfile};
pub use rmcp;
use rmcp::ServiceExt;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use proto_ai_tools::Sessions;
use proto_ai_tools::alias::AliasManager;
use proto_ai_tools::toolkit::{Tool, Toolkit, ToolkitError};
use proto_ai_tools::transport::CallOptions;

/// This crate's README, its example compiled as a doctest so that it cannot
/// drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(feature = "admin")]
pub mod admin;
mod approvals;
mod audit;
#[cfg(feature = "oauth")]
mod auth;
mod convert;
mod edge;
mod handler;
mod limits;
mod scope;
mod serve;
#[cfg(feature = "redis")]
mod session_store;
mod tasks;
#[cfg(feature = "tool-search")]
pub mod tool_search;
mod traced;
mod views;

#[cfg(feature = "oauth")]
pub use auth::{
    AUTHORIZATION_SERVER_TIMEOUT, DEFAULT_LEEWAY, DEFAULT_MAX_SESSIONS_PER_CALLER,
    JWKS_REFRESH_INTERVAL, MAX_INTROSPECTIONS_IN_FLIGHT, MAX_JWKS_KEYS, OAuth,
};

pub use audit::AUDIT_TARGET;
pub use convert::{MCP_DIALECT, agent_tool_to_mcp, to_mcp_tool, to_mcp_tool_for_host};
use handler::{Handler, Namespaces, Shared, Source, unforwardable};
pub use handler::{MAX_PROTOCOL_VERSION, MAX_SESSION_PROTOCOL_VERSION};
use limits::{CallLimits, HttpLimits};
pub use limits::{
    DEFAULT_CALL_TIMEOUT, DEFAULT_DRAIN_TIMEOUT, DEFAULT_HEADER_TIMEOUT, DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_REQUEST_BODY_BYTES, DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_TIMEOUT, DRAIN_RETRY_AFTER_SECS, LOOPBACK_ORIGINS,
    MAX_SESSIONLESS_BODY_BYTES, REQUEST_ENVELOPE_BYTES, SESSIONS_RETRY_AFTER_SECS,
};
pub use scope::MAX_SCOPE_HEADER_BYTES;
use scope::ScopeSources;
pub use tasks::OPERATIONS_GET;
#[cfg(feature = "tool-search")]
pub use tool_search::ToolSearch;

/// How long the server's own [`Sessions`] keeps an alias scope after its
/// last use: a caller's numbering lives this long, so no number is given
/// out twice within it.
pub const SCOPE_IDLE_TTL: Duration = Duration::from_secs(24 * 3600);

/// How long an alias of the server's own [`Sessions`] is kept unused before
/// it expires (the model is then told to get the id again).
pub const ALIAS_IDLE_TTL: Duration = Duration::from_secs(30 * 60);

/// The alias namespaces an [`McpServer::new`] keeps, before any
/// [`with_sessions`](McpServer::with_sessions): scopes kept
/// [`SCOPE_IDLE_TTL`] after their last use, aliases expiring after
/// [`ALIAS_IDLE_TTL`] unused. Start from it to keep them in a store, as the
/// same server would.
///
/// # Examples
///
/// ```
/// use std::{sync::Arc, time::Duration};
/// let store = Arc::new(proto_ai_tools::store::MemoryStore::new(Duration::from_secs(60)));
/// let sessions = proto_ai_tools_mcp::default_sessions().with_store(store);
/// assert_eq!(sessions.alias_manager("a").expiry(), Some(proto_ai_tools_mcp::ALIAS_IDLE_TTL));
/// ```
pub fn default_sessions() -> Sessions<()> {
    Sessions::new((), SCOPE_IDLE_TTL).with_alias_expiry(ALIAS_IDLE_TTL)
}

/// The path the streamable-HTTP endpoint is served at: `http://ADDR/mcp`.
pub const HTTP_PATH: &str = "/mcp";

/// The most bytes of one tool's `outputSchema` (minified JSON) that
/// [`McpServer::with_output_schemas`] lists unless
/// [`McpServer::with_max_output_schema_bytes`] says otherwise: 8 KiB, about
/// 2,000 tokens, beyond which a response type costs the model more to read
/// than most results it describes.
pub const DEFAULT_MAX_OUTPUT_SCHEMA_BYTES: usize = 8 * 1024;

/// `tool`'s output schema, when it has one no longer than `max_bytes`; a
/// longer one is left out, with a warning naming the tool.
fn output_schema_within(
    tool: &Tool,
    host: HostProfile,
    max_bytes: usize,
) -> Option<Arc<rmcp::model::JsonObject>> {
    let schema = output_schema_object(tool, host)?;
    let bytes = serde_json::to_string(&schema).map_or(usize::MAX, |text| text.len());
    if bytes > max_bytes {
        tracing::warn!(
            tool = tool.name(),
            bytes,
            max_bytes,
            "the tool's output schema is longer than the most listed; it is listed without one"
        );
        return None;
    }
    Some(schema)
}

/// `tool`'s output schema as MCP lists it for `host`, whatever its size.
fn output_schema_object(tool: &Tool, host: HostProfile) -> Option<Arc<rmcp::model::JsonObject>> {
    match tool.output_schema_for_host(host)? {
        Value::Object(schema) => Some(Arc::new(schema)),
        _ => None,
    }
}

/// Why an MCP server could not start or stopped with an error.
///
/// # Examples
///
/// ```
/// let err = proto_ai_tools_mcp::ServeError::SharedToolkit;
/// assert!(err.to_string().contains("McpServer::new"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The per-session toolkit could not be built (checked once at start).
    #[error("the toolkit cannot be built: {0}")]
    Toolkit(#[from] ToolkitError),
    /// A socket or stdio error.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// The client never completed the MCP handshake.
    #[error("the MCP session did not start: {0}")]
    Handshake(String),
    /// The task that ran the session failed.
    #[error("the MCP session task failed: {0}")]
    Task(String),
    /// A tool's rendering for the server's host profile breaks its
    /// dialect's documented limits (checked once, before serving).
    #[error(
        "tool `{tool}` cannot be listed in the {dialect} rendering for {} {host} host: {violations}",
        proto_ai_tools_schema::names::article(.host.as_str())
    )]
    Rendering {
        /// The tool.
        tool: String,
        /// The server's dialect.
        dialect: Dialect,
        /// The server's host profile.
        host: HostProfile,
        /// What the dialect's checker found, joined with `; `.
        violations: String,
    },
    /// A header that can never be forwarded was named in
    /// [`McpServer::forward_headers`].
    #[error("header `{name}` cannot be forwarded: {why}")]
    Header {
        /// The header, lowercased.
        name: String,
        /// Why not.
        why: &'static str,
    },
    /// [`McpServer::with_tool_timeout`] named a tool the server does not
    /// have (a typo would otherwise leave that tool at the default deadline).
    #[error(
        "a deadline is set for `{tool}`, which is not a tool of this server; its tools are: {known}"
    )]
    UnknownTool {
        /// The name given.
        tool: String,
        /// The server's tools, joined with `, `.
        known: String,
    },
    /// OAuth is on and the server was also told to forward the caller's
    /// `Authorization` header: that would pass the MCP token through to
    /// the backend, which the MCP authorization spec forbids.
    #[cfg(feature = "oauth")]
    #[error(
        "with OAuth on, the caller's `authorization` header cannot be forwarded: it holds the token issued for this server, which must never reach the backend (MCP authorization: no token passthrough). Send the backend the caller's identity with claim headers, and the gateway's own credential as a call option"
    )]
    TokenPassthrough,
    /// The OAuth configuration is wrong, or the authorization server could
    /// not be asked for its keys at start.
    #[cfg(feature = "oauth")]
    #[error("OAuth cannot start: {0}")]
    OAuth(String),
    /// OAuth protects the HTTP transport; a stdio server has no requests to
    /// carry tokens.
    #[cfg(feature = "oauth")]
    #[error(
        "OAuth protects the streamable-HTTP transport; over stdio the client runs the server itself and sends no tokens: serve HTTP, or leave OAuth off"
    )]
    OAuthOverStdio,
    /// The key of [`McpServer::with_consent_key`] cannot sign approvals.
    #[error("the consent key cannot sign approvals: {0}")]
    ConsentKey(String),
    /// [`McpServer::with_single_user`] on an address that is not loopback:
    /// anyone who reaches it would share the one user's aliases.
    #[error(
        "one local user (single-user) is for a loopback address, and {addr} is not one: anyone who reaches it would share that user's aliases; bind 127.0.0.1 or ::1, or identify callers with OAuth or a trusted proxy's scope header instead"
    )]
    SingleUserNotLoopback {
        /// The address bound.
        addr: std::net::SocketAddr,
    },
    /// An HTTP server on an address that is not loopback, with no way to
    /// tell the callers of stateless requests (protocol `2026-07-28`)
    /// apart, which it would have to refuse or mix up.
    #[error(
        "{addr} is reachable from other machines, and the server has no way to tell stateless callers apart (MCP 2026-07-28 has no sessions): check tokens (McpServer::with_oauth; --oauth-issuer and --oauth-audience on the command line), or read the caller from a trusted proxy's header (McpServer::with_alias_scope_header; --alias-scope-header NAME)"
    )]
    NoCallerIdentity {
        /// The address bound.
        addr: std::net::SocketAddr,
    },
    /// `serve_http` was given one toolkit: HTTP serves many sessions, and
    /// one toolkit means one alias namespace shared by all of them.
    #[error(
        "serving HTTP needs a toolkit per MCP session so that sessions never share aliases; build the server with McpServer::new(|aliases| …)"
    )]
    SharedToolkit,
    /// [`McpServer::with_tool_search`] named a toolset no tool belongs to.
    #[cfg(feature = "tool-search")]
    #[error("there is no toolset `{toolset}`; the toolsets are: {known}")]
    UnknownToolset {
        /// The name given.
        toolset: String,
        /// The toolsets there are, joined with `, `.
        known: String,
    },
    /// A toolset of [`ToolSearch::define`] cannot be made: its name is
    /// taken, or a pattern is not a glob or matches no tool.
    #[cfg(feature = "tool-search")]
    #[error("{0}")]
    ToolsetDefinition(String),
    /// A tool has the name of one of tool-search mode's meta-tools.
    #[cfg(feature = "tool-search")]
    #[error(
        "tool `{0}` has the name of a meta-tool of tool search (search_tools, list_toolsets, enable_toolset, call_tool); rename it, or serve without tool search"
    )]
    MetaToolName(String),
    /// [`ToolSearch::embeddings`]: the tools' vectors for retrieval by
    /// meaning could not be had (the model failed, the endpoint could not
    /// be reached).
    #[cfg(feature = "semantic-search")]
    #[error("retrieval by meaning cannot start: {0}")]
    Embeddings(proto_ai_tools::toolkit::semantic::EmbeddingError),
}

/// The tools as listed, each with whether it is strict.
type Listed = Vec<(rmcp::model::Tool, bool)>;

/// An MCP server of one [`Toolkit`] per alias scope (an MCP session, or a
/// stateless caller): configure it, then serve it
/// over stdio ([`serve_stdio`](Self::serve_stdio)) or streamable HTTP
/// ([`serve_http`](Self::serve_http)).
///
/// # Examples
///
/// ```no_run
/// use proto_ai_tools::{NativeTool, Toolkit, ToolInput};
///
/// /// Say hello.
/// #[derive(serde::Deserialize, ToolInput)]
/// struct Hello {
///     /// Whom to greet.
///     name: String,
/// }
///
/// # async fn run() -> Result<(), proto_ai_tools_mcp::ServeError> {
/// proto_ai_tools_mcp::McpServer::new(|aliases| {
///     let hello = NativeTool::new::<Hello, _, _>("hello", "Say hello.", |_, h: Hello| async move {
///         format!("Hello, {}!", h.name)
///     });
///     Toolkit::builder().alias_manager(aliases).native(hello).build()
/// })
/// .with_server_info("hello", "1.0.0")
/// .with_instructions("Greet whoever the user names.")
/// .serve_stdio()
/// .await
/// # }
/// ```
pub struct McpServer {
    source: Source,
    dialect: Dialect,
    host: HostProfile,
    info: Implementation,
    instructions: Option<String>,
    stdio_session: String,
    allowed_hosts: Option<Vec<String>>,
    forward_headers: Vec<String>,
    call_options: CallOptions,
    calls: CallLimits,
    http: HttpLimits,
    scopes: ScopeSources,
    #[cfg(feature = "oauth")]
    oauth: Option<OAuth>,
    #[cfg(feature = "tool-search")]
    tool_search: Option<tool_search::ToolSearch>,
    /// Whether tools are listed with their `outputSchema`.
    output_schemas: bool,
    /// The most bytes of an `outputSchema` listed.
    max_output_schema_bytes: usize,
    /// Whether long-running tools' calls may become tasks.
    tasks: bool,
    /// Where handshake-era sessions are kept so that they roam.
    #[cfg(feature = "redis")]
    session_store: Option<proto_ai_tools::store::RedisStore>,
    /// Which tools a person must approve, and what happens where no one
    /// can be asked.
    consent: handler::ConsentSettings,
    /// The key that signs stateless clients' approvals; random when unset.
    consent_key: Option<Vec<u8>>,
    /// Where requests and tool calls are measured.
    #[cfg(feature = "admin")]
    metrics: Option<admin::Metrics>,
    /// Told when the server serves and when it drains.
    #[cfg(feature = "admin")]
    readiness: Option<admin::Readiness>,
    /// Whether requests join the traces they carry and send theirs on.
    #[cfg(feature = "otel")]
    opentelemetry: bool,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("dialect", &self.dialect)
            .field("host", &self.host)
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// A server that builds the toolkit of each alias scope (an MCP
    /// session, or the caller of a stateless request; see
    /// [One alias namespace per caller](self#one-alias-namespace-per-caller))
    /// with `per_session`, given the scope's alias namespace: pass it to
    /// [`ToolkitBuilder::alias_manager`](proto_ai_tools::toolkit::ToolkitBuilder::alias_manager),
    /// and add the generated executors with
    /// [`ToolkitBuilder::executor`](proto_ai_tools::toolkit::ToolkitBuilder::executor),
    /// which builds them on it.
    ///
    /// `per_session` is called once when serving starts (a toolkit that does
    /// not build is a [`ServeError::Toolkit`] then), and its tools are the
    /// list every scope gets: build the same tools every time. It is called
    /// once per session, and once per active stateless scope: the toolkit
    /// it makes for a stateless caller is kept and shared by the caller's
    /// requests while the caller is active (5 minutes unused, at most 1,024
    /// callers at once), when it is built on the namespace it is given.
    /// Keep it cheap all the same (clone what it needs, the native tools
    /// too: a clone's schema checks are not repeated).
    ///
    /// The namespaces are kept in a `Sessions` of their own: a scope is
    /// kept [`SCOPE_IDLE_TTL`] (a day) after its last use, each alias in it
    /// [`ALIAS_IDLE_TTL`] (30 minutes), and at the alias limit the least
    /// recently used aliases expire instead of new ones being refused, so a
    /// caller's scope never stops working ([`Sessions::with_alias_expiry`]).
    /// A session's namespace is forgotten when the session ends. Share
    /// yours with [`with_sessions`](Self::with_sessions).
    ///
    /// # Examples
    ///
    /// See [`McpServer`].
    pub fn new<F>(per_session: F) -> Self
    where
        F: Fn(Arc<AliasManager>) -> Result<Toolkit, ToolkitError> + Send + Sync + 'static,
    {
        let sessions: Arc<dyn Namespaces> = Arc::new(default_sessions());
        Self::with_source(Source::PerSession {
            factory: Arc::new(per_session),
            sessions,
        })
    }

    /// A server of one toolkit, for stdio, where the process serves one
    /// client: its alias namespace is the toolkit's. [`serve_http`](Self::serve_http)
    /// refuses it ([`ServeError::SharedToolkit`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let server = proto_ai_tools_mcp::McpServer::from_toolkit(proto_ai_tools::Toolkit::builder().build().unwrap());
    /// assert_eq!(server.tools().unwrap().len(), 0);
    /// ```
    pub fn from_toolkit(toolkit: Toolkit) -> Self {
        Self::with_source(Source::Fixed(Arc::new(toolkit)))
    }

    fn with_source(source: Source) -> Self {
        Self {
            source,
            dialect: MCP_DIALECT,
            host: HostProfile::default(),
            info: Implementation::new("ai-tools", env!("CARGO_PKG_VERSION")),
            instructions: None,
            stdio_session: "stdio".to_owned(),
            allowed_hosts: None,
            forward_headers: Vec::new(),
            call_options: CallOptions::new(),
            calls: CallLimits::default(),
            http: HttpLimits::default(),
            scopes: ScopeSources::default(),
            #[cfg(feature = "oauth")]
            oauth: None,
            #[cfg(feature = "tool-search")]
            tool_search: None,
            output_schemas: false,
            max_output_schema_bytes: DEFAULT_MAX_OUTPUT_SCHEMA_BYTES,
            tasks: true,
            #[cfg(feature = "redis")]
            session_store: None,
            consent: handler::ConsentSettings::default(),
            consent_key: None,
            #[cfg(feature = "admin")]
            metrics: None,
            #[cfg(feature = "admin")]
            readiness: None,
            #[cfg(feature = "otel")]
            opentelemetry: false,
        }
    }

    /// Shows a model a few tools at a time (feature `tool-search`):
    /// `tools/list` gives the meta-tools `search_tools`, `list_toolsets`,
    /// `enable_toolset` and `call_tool`, the tools without a toolset, and
    /// the tools of the toolsets `search` starts with; the model finds the
    /// others by searching. See [`tool_search`] for how it works and why.
    ///
    /// For hosts without a tool search of their own, on APIs with more tools
    /// than a model chooses well from. A toolset `search` names that no tool
    /// belongs to, or a tool named like a meta-tool, stops the server from
    /// starting ([`ServeError::UnknownToolset`], [`ServeError::MetaToolName`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools_mcp::{McpServer, ToolSearch};
    ///
    /// mod links {
    ///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
    /// }
    /// let transport = proto_ai_tools::transport::InProcessTransport::new();
    /// let server = McpServer::new(move |aliases| {
    ///     proto_ai_tools::Toolkit::builder()
    ///         .alias_manager(aliases)
    ///         .executor::<links::Executor<_>>(transport.clone())
    ///         .build()
    /// })
    /// .with_tool_search(ToolSearch::new().toolset("links.v1.LinksService"));
    /// # drop(server);
    /// ```
    #[cfg(feature = "tool-search")]
    pub fn with_tool_search(mut self, search: ToolSearch) -> Self {
        self.tool_search = Some(search);
        self
    }

    /// Reads the alias scope of a stateless request (protocol `2026-07-28`,
    /// no MCP session) from this request header, which a trusted front
    /// proxy sets to the caller's identity (`x-user-id`): two requests with
    /// the same value share aliases, two with different values never do.
    /// A token's principal comes first when the server
    /// [checks tokens](Self::with_oauth). A stateless request without the
    /// header (or with it twice, empty, or longer than
    /// [`MAX_SCOPE_HEADER_BYTES`]) is refused with `400`.
    ///
    /// **Only behind a proxy that sets this header on every request and
    /// drops any a client sent**: anyone who can reach the server directly
    /// can name any scope with it and use that caller's aliases. Without
    /// this method the header is never read, whatever a request carries.
    ///
    /// # Errors
    ///
    /// [`ServeError::Header`] when `name` is not a valid header name, or is
    /// one that could never be forwarded either (the transport's own
    /// `mcp-*` and `content-*`, hop-by-hop ones, `grpc-*`).
    ///
    /// # Examples
    ///
    /// ```
    /// let server = proto_ai_tools_mcp::McpServer::new(|a| proto_ai_tools::Toolkit::builder().alias_manager(a).build())
    ///     .with_alias_scope_header("X-User-Id")
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    pub fn with_alias_scope_header(mut self, name: &str) -> Result<Self, ServeError> {
        let lower = name.to_ascii_lowercase();
        let header =
            http::HeaderName::from_bytes(lower.as_bytes()).map_err(|_| ServeError::Header {
                name: lower.clone(),
                why: "it is not a valid HTTP header name",
            })?;
        if let Some(why) = unforwardable(&lower) {
            return Err(ServeError::Header { name: lower, why });
        }
        self.scopes.header = Some(header);
        Ok(self)
    }

    /// Serves every stateless request (protocol `2026-07-28`) in one local
    /// alias scope, unless a token identifies its caller; with an
    /// [alias scope header](Self::with_alias_scope_header) configured, that
    /// header decides instead (a request without it is refused). For one
    /// user on their own machine, whose host speaks only the new protocol. The
    /// server then refuses to start on an address that is not loopback
    /// ([`ServeError::SingleUserNotLoopback`]): there, anyone who can reach
    /// the port would share that user's aliases.
    ///
    /// # Examples
    ///
    /// ```
    /// let server = proto_ai_tools_mcp::McpServer::new(|a| proto_ai_tools::Toolkit::builder().alias_manager(a).build())
    ///     .with_single_user(true);
    /// # let _ = server;
    /// ```
    pub fn with_single_user(mut self, single_user: bool) -> Self {
        self.scopes.single_user = single_user;
        self
    }

    /// Serves HTTP as an OAuth 2.1 resource server (feature `oauth`), the
    /// way the MCP authorization spec asks: every request needs a bearer
    /// token issued for this server's resource URI, checked against the
    /// issuer's keys (or by introspection); the protected resource metadata
    /// is served for clients to discover the authorization server; and the
    /// token itself is never passed on (forwarding `authorization` is
    /// refused at start). What the backend learns of the caller is the
    /// claims named by [`OAuth::claim_header`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn run(server: proto_ai_tools_mcp::McpServer) -> Result<(), proto_ai_tools_mcp::ServeError> {
    /// use proto_ai_tools_mcp::OAuth;
    /// let token = std::fs::read_to_string("/run/secrets/backend-token")?;
    /// server
    ///     .with_oauth(
    ///         OAuth::new("https://tools.example.com/mcp", "https://auth.example.com")
    ///             .required_scope("mcp:use")
    ///             .claim_header("sub", "x-user-id"),
    ///     )
    ///     // the gateway's own credential to the backend
    ///     .with_call_options(proto_ai_tools::CallOptions::new().metadata("authorization", format!("Bearer {}", token.trim())))
    ///     .serve_http("0.0.0.0:8080")
    ///     .await
    /// # }
    /// ```
    #[cfg(feature = "oauth")]
    pub fn with_oauth(mut self, oauth: OAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// Copies these request headers of each MCP request over streamable HTTP
    /// into the metadata of the tool call it makes (a user's
    /// `authorization`, a tenant), over the [call options](Self::with_call_options).
    /// Nothing is forwarded unless named here; a header a request does not
    /// carry is not sent. One session's headers only ever reach that
    /// request's own call.
    ///
    /// A header whose name ends in `-bin` is binary metadata. Its HTTP value
    /// is the standard base64 of the bytes, padding optional, several values
    /// joined by commas, as in gRPC over HTTP/2. It is forwarded as the bytes
    /// it encodes, which the gRPC server reads back as they were.
    ///
    /// Forwarding fails closed: a header that cannot be forwarded as it was
    /// sent refuses the tool call, which is then an error result (`isError`)
    /// that names the header, never its value, and says that nothing was
    /// sent and that retrying will not help. Nothing reaches the service.
    /// A header cannot be forwarded when
    ///
    /// - its value is not what gRPC metadata can carry: printable ASCII
    ///   (`0x20`–`0x7E`; no tab, no UTF-8) for a header not ending in
    ///   `-bin`, base64 for a `-bin` one. Dropping it instead would run the
    ///   call without, say, its tenant;
    /// - it appears more than once in the request. Every forwarded header is
    ///   single-valued: which of two `authorization` values was meant cannot
    ///   be known, and passing both on leaves the choice to the service.
    ///   (A `-bin` header's one value may still list several base64 values
    ///   joined by commas, as above.)
    ///
    /// # Errors
    ///
    /// [`ServeError::Header`] for a name that can never be forwarded:
    /// hop-by-hop headers (`connection`, `transfer-encoding`, …), `host`,
    /// `content-*`, `mcp-*` and `grpc-*` headers, and names that are not
    /// valid gRPC metadata keys.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools_mcp::McpServer;
    /// let server = McpServer::new(|aliases| proto_ai_tools::Toolkit::builder().alias_manager(aliases).build());
    /// let server = server.forward_headers(["Authorization", "x-tenant"]).unwrap();
    /// # let server = McpServer::new(|aliases| proto_ai_tools::Toolkit::builder().alias_manager(aliases).build());
    /// assert!(server.forward_headers(["mcp-session-id"]).is_err());
    /// ```
    pub fn forward_headers<I, S>(mut self, names: I) -> Result<Self, ServeError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        for name in names {
            let name = name.into().to_ascii_lowercase();
            if let Some(why) = unforwardable(&name) {
                return Err(ServeError::Header { name, why });
            }
            if !self.forward_headers.contains(&name) {
                self.forward_headers.push(name);
            }
        }
        Ok(self)
    }

    /// Options every tool call of this server carries (metadata, deadline):
    /// over stdio the only context a call gets, over HTTP the defaults that
    /// [forwarded headers](Self::forward_headers) override.
    ///
    /// # Examples
    ///
    /// ```
    /// let server = proto_ai_tools_mcp::McpServer::from_toolkit(proto_ai_tools::Toolkit::builder().build().unwrap())
    ///     .with_call_options(proto_ai_tools::CallOptions::new().metadata("x-tenant", "acme"));
    /// # let _ = server;
    /// ```
    pub fn with_call_options(mut self, options: CallOptions) -> Self {
        self.call_options = options;
        self
    }

    /// The deadline of every tool call that sets none (default
    /// [`DEFAULT_CALL_TIMEOUT`], 50 seconds; see there why). A generated
    /// tool sends it to the service as `grpc-timeout` and holds the call to
    /// it locally too; when it passes, the call ends and the model gets an
    /// error result, `DEADLINE_EXCEEDED`, saying the call may or may not
    /// have taken effect and what to do next. Native tools read it from
    /// [`ToolContext::call_options`](proto_ai_tools::ToolContext::call_options).
    ///
    /// A deadline set elsewhere comes first, most specific first:
    /// [`with_tool_timeout`](Self::with_tool_timeout), then the tool's own
    /// (`rpc_tool.timeout` in the proto or an overlay,
    /// [`Tool::timeout`](proto_ai_tools::toolkit::Tool::timeout)), then the server's
    /// [call options](Self::with_call_options), then the toolkit's
    /// ([`ToolkitBuilder::call_options`](proto_ai_tools::toolkit::ToolkitBuilder::call_options)).
    /// This one also takes the place of a deadline in an executor's
    /// [`ExecutorOptions::call`](proto_ai_tools::executor::ExecutorOptions::call): set a longer
    /// one here or per tool instead.
    ///
    /// `None` sets no deadline. Then a service that stalls holds the call,
    /// its HTTP request and the client's wait until the client gives up or
    /// goes away (which [cancels the call](Self::with_cancel_on_disconnect)),
    /// and a stdio client that never cancels waits forever: use it only
    /// when the toolkit or its services bound every call themselves.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// let server = proto_ai_tools_mcp::McpServer::new(|a| proto_ai_tools::Toolkit::builder().alias_manager(a).build())
    ///     .with_call_timeout(Some(Duration::from_secs(20)));
    /// # let _ = server;
    /// ```
    pub fn with_call_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.calls.timeout = timeout;
        self
    }

    /// The deadline of every call of the tool `name`, over every other
    /// deadline ([`with_call_timeout`](Self::with_call_timeout), the call
    /// options of the server and of the toolkit): a slow report generator
    /// gets minutes while the rest keep the default. Call again for more
    /// tools. A name the server does not list is an error when serving
    /// starts ([`ServeError::UnknownTool`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// let server = proto_ai_tools_mcp::McpServer::new(|a| proto_ai_tools::Toolkit::builder().alias_manager(a).build())
    ///     .with_tool_timeout("reports_generate", Duration::from_secs(300))
    ///     .with_tool_timeout("links_get", Duration::from_secs(5));
    /// # let _ = server;
    /// ```
    pub fn with_tool_timeout(mut self, name: impl Into<String>, timeout: Duration) -> Self {
        self.calls.per_tool.insert(name.into(), timeout);
        self
    }

    /// Whether a client whose HTTP connection closes while its tool call
    /// runs cancels the call (default `true`). The call's future is
    /// dropped, which resets its gRPC stream, so a tonic service's handler
    /// is dropped in turn and other services see `CANCELLED`; nothing is
    /// written to the conversation's aliases. An MCP `notifications/cancelled`
    /// for the request cancels it the same way, whatever this says.
    ///
    /// The MCP transport spec says a server SHOULD NOT read a disconnection
    /// as a cancellation, since a client may reconnect and resume the
    /// stream. The default reads it as one all the same: a client that gave
    /// up would otherwise leave the call running to its deadline, its side
    /// effect happening with no one to hear of it. A client that resumes
    /// (`GET` with `Last-Event-ID`) finds at best an error result saying
    /// the call was cancelled when its connection closed, never the call's
    /// own result. `false` keeps the call running to its end (or its
    /// deadline), so a client that resumes before then can still read the
    /// result.
    ///
    /// # Examples
    ///
    /// ```
    /// let server = proto_ai_tools_mcp::McpServer::new(|a| proto_ai_tools::Toolkit::builder().alias_manager(a).build())
    ///     .with_cancel_on_disconnect(false);
    /// # let _ = server;
    /// ```
    pub fn with_cancel_on_disconnect(mut self, cancel: bool) -> Self {
        self.calls.cancel_on_disconnect = cancel;
        self
    }

    /// Keeps the alias namespaces in `sessions` (its TTL, capacity and alias
    /// limit apply), keyed by MCP session id for a handshake-era session, by
    /// a hash of who is calling for a stateless request (`principal-…`,
    /// `header-…`, or `local`; see [One alias namespace per caller](self#one-alias-namespace-per-caller)),
    /// and by `"stdio"` over stdio ([`with_stdio_session_id`](Self::with_stdio_session_id)).
    /// Only the namespaces are used, not the transport. With
    /// [`Sessions::with_store`] they live in the store, which is how
    /// several gateways share them.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::{sync::Arc, time::Duration};
    /// let sessions = Arc::new(proto_ai_tools::Sessions::new((), Duration::from_secs(600)).with_alias_limit(1000));
    /// let server = proto_ai_tools_mcp::McpServer::new(|aliases| proto_ai_tools::Toolkit::builder().alias_manager(aliases).build())
    ///     .with_sessions(sessions.clone());
    /// # let _ = server;
    /// ```
    pub fn with_sessions<T: Send + Sync + 'static>(mut self, sessions: Arc<Sessions<T>>) -> Self {
        if let Source::PerSession { sessions: kept, .. } = &mut self.source {
            *kept = sessions;
        }
        self
    }

    /// Lets handshake-era MCP sessions (protocol up to `2025-11-25`, with an
    /// `Mcp-Session-Id`) roam between gateways (feature `redis`): each
    /// session's record is kept in `store`, so that a session started on
    /// one gateway goes on on any other that shares the store, behind a
    /// load balancer that does not stick, and a gateway's restart does not
    /// end it. Give it the [`RedisStore`](proto_ai_tools::store::RedisStore) (a
    /// server or a Redis Cluster) that holds the aliases
    /// ([`with_sessions`](Self::with_sessions) over
    /// [`Sessions::with_store`]): a session's aliases are kept under its
    /// id, so they follow it there. Without it, sessions live in the
    /// gateway that started them: another answers their id `404`.
    ///
    /// What is kept, per session, for as long as it may go without a
    /// message ([`with_session_idle_timeout`](Self::with_session_idle_timeout)):
    /// the client's `initialize` parameters (rmcp's
    /// [`SessionState`](rmcp::transport::streamable_http_server::session::SessionState)),
    /// which a gateway that does not hold the session replays to restore
    /// it; a digest of the OAuth caller who started it
    /// ([`with_oauth`](Self::with_oauth)), so that another caller naming it
    /// anywhere is answered as for a session that does not exist; and the
    /// toolsets its model enabled ([`with_tool_search`](Self::with_tool_search)).
    /// Every request naming a session sets its record's TTL again (one
    /// more round trip); a client's `DELETE`, on any gateway, ends it on
    /// all of them. A restored session takes a slot of
    /// [`with_max_sessions`](Self::with_max_sessions) (and of the caller's
    /// cap with OAuth) on the gateway that restores it, as a new one does.
    /// What is in flight on a gateway that stops (a call, an open event
    /// stream) ends with it: the client's next request goes on elsewhere.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use proto_ai_tools::{Toolkit, store::RedisStore};
    /// use proto_ai_tools_mcp::McpServer;
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = RedisStore::connect("redis://127.0.0.1:6379").await?;
    /// // The aliases and the sessions in the same Redis.
    /// let sessions = proto_ai_tools_mcp::default_sessions().with_store(Arc::new(store.clone()));
    /// McpServer::new(|aliases| Toolkit::builder().alias_manager(aliases).build())
    ///     .with_sessions(Arc::new(sessions))
    ///     .with_session_store(store)
    ///     .serve_http("127.0.0.1:8080")
    ///     .await?;
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "redis")]
    pub fn with_session_store(mut self, store: proto_ai_tools::store::RedisStore) -> Self {
        self.session_store = Some(store);
        self
    }

    /// The conversation id of the stdio session in the `Sessions` (default
    /// `"stdio"`): set it when several processes share one alias store.
    ///
    /// # Examples
    ///
    /// ```
    /// let server = proto_ai_tools_mcp::McpServer::new(|a| proto_ai_tools::Toolkit::builder().alias_manager(a).build())
    ///     .with_stdio_session_id("desktop-user-7");
    /// # let _ = server;
    /// ```
    pub fn with_stdio_session_id(mut self, id: impl Into<String>) -> Self {
        self.stdio_session = id.into();
        self
    }

    /// The dialect of the listed `inputSchema`s (default [`MCP_DIALECT`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::schema::Dialect;
    /// let server = proto_ai_tools_mcp::McpServer::from_toolkit(proto_ai_tools::Toolkit::builder().build().unwrap())
    ///     .with_dialect(Dialect::JsonSchema);
    /// # let _ = server;
    /// ```
    pub fn with_dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = dialect;
        self
    }

    /// The profile of the hosts the server is for (default
    /// [`HostProfile::JavaScript`]): what they do to the tools' schemas and
    /// to the model's arguments. The default is exact through a JavaScript
    /// host (64-bit integers as strings of digits, which `JSON.parse`
    /// cannot round) and works in hosts that refuse `$ref` (none is
    /// listed). Every call is also read as coming through that host: an
    /// integer sent as a JSON number past 2^53 is refused, as possibly
    /// rounded, where the profile parses numbers as doubles.
    /// [`HostProfile::Exact`] lists what [`to_mcp_tool`] gives, for a
    /// client that changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::schema::HostProfile;
    /// let server = proto_ai_tools_mcp::McpServer::from_toolkit(proto_ai_tools::Toolkit::builder().build().unwrap())
    ///     .with_host_profile(HostProfile::Exact);
    /// # let _ = server;
    /// ```
    pub fn with_host_profile(mut self, host: HostProfile) -> Self {
        self.host = host;
        self
    }

    /// Lists each tool's `outputSchema` ([`Tool::output_schema_for_host`],
    /// for the server's host profile: by default without `$ref`): the
    /// JSON Schema of its result, which every successful result's
    /// `structuredContent` validates against, for hosts and programs that
    /// take results as data (default off, as some hosts count output
    /// schemas against the model's context). Results carry
    /// `structuredContent` either way.
    ///
    /// A schema longer than [`with_max_output_schema_bytes`](Self::with_max_output_schema_bytes)
    /// (default [`DEFAULT_MAX_OUTPUT_SCHEMA_BYTES`]) is left out of the list,
    /// with a warning naming the tool: that tool is listed without one, as
    /// every tool is with this off, and its results are the same. A tool
    /// whose proto or overlay sets `rpc_tool.output_schema` is listed as
    /// that says, over this and the cap: `true` with its schema, `false`
    /// without. A long-running tool (the guide's "Streaming and long-running
    /// methods") is listed without one while the server serves tasks
    /// ([`with_tasks`](Self::with_tasks), on by default): its result is the
    /// operation for a client without tasks and the unpacked response for
    /// one with them, and no one schema is true of both.
    ///
    /// # Examples
    ///
    /// ```
    /// mod gentools {
    ///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
    /// }
    /// use proto_ai_tools::transport::InProcessTransport;
    ///
    /// let toolkit = proto_ai_tools::Toolkit::builder()
    ///     .generated(gentools::Executor::new(InProcessTransport::new()))
    ///     .build()
    ///     .unwrap();
    /// let server = proto_ai_tools_mcp::McpServer::from_toolkit(toolkit).with_output_schemas(true);
    /// let tools = server.tools().unwrap();
    /// let schema = tools[0].output_schema.as_ref().unwrap();
    /// assert_eq!(schema["type"], "object");
    /// ```
    pub fn with_output_schemas(mut self, enabled: bool) -> Self {
        self.output_schemas = enabled;
        self
    }

    /// The most bytes of one tool's `outputSchema` (as minified JSON) that
    /// [`with_output_schemas`](Self::with_output_schemas) lists (default
    /// [`DEFAULT_MAX_OUTPUT_SCHEMA_BYTES`]); a tool whose schema is longer is
    /// listed without one.
    ///
    /// # Examples
    ///
    /// ```
    /// let server = proto_ai_tools_mcp::McpServer::from_toolkit(proto_ai_tools::Toolkit::builder().build().unwrap())
    ///     .with_output_schemas(true)
    ///     .with_max_output_schema_bytes(32 * 1024);
    /// # let _ = server;
    /// ```
    pub fn with_max_output_schema_bytes(mut self, bytes: usize) -> Self {
        self.max_output_schema_bytes = bytes;
        self
    }

    /// Whether a call of a long-running tool (one whose method returns
    /// `google.longrunning.Operation` and names its types in
    /// `operation_info`) becomes an MCP task for a client that declares the
    /// tasks extension (default on; the server advertises the extension
    /// only when it lists such a tool). Off, every client gets the
    /// operation as the call's result and follows it with
    /// [`OPERATIONS_GET`], as a client without tasks does either way. See
    /// the guide's chapter "Streaming and long-running methods".
    ///
    /// # Examples
    ///
    /// ```
    /// let server = proto_ai_tools_mcp::McpServer::from_toolkit(proto_ai_tools::Toolkit::builder().build().unwrap())
    ///     .with_tasks(false);
    /// # let _ = server;
    /// ```
    pub fn with_tasks(mut self, enabled: bool) -> Self {
        self.tasks = enabled;
        self
    }

    /// Which tools a person must approve before each call when the tool
    /// itself says nothing (`rpc_tool.consent`, an overlay's `consent`):
    /// [`ConfirmClass::Destructive`](proto_ai_tools::consent::ConfirmClass) by
    /// default, over stdio and HTTP alike. The server asks the user
    /// through the host (MCP elicitation) where the client declared it
    /// can; see [`proto_ai_tools::consent`] and the guide's "Consent for destructive
    /// calls".
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::consent::ConfirmClass;
    /// let server = proto_ai_tools_mcp::McpServer::from_toolkit(proto_ai_tools::Toolkit::builder().build().unwrap())
    ///     .with_confirm(ConfirmClass::Writes);
    /// # let _ = server;
    /// ```
    pub fn with_confirm(mut self, class: proto_ai_tools::consent::ConfirmClass) -> Self {
        self.consent.class = class;
        self
    }

    /// What a call that needs a person's approval does when the client
    /// cannot ask for it (it declared no elicitation, in its handshake or a
    /// stateless request): [`Unsupported::Refuse`](proto_ai_tools::consent::Unsupported)
    /// by default, with a sentence saying that a person must approve the
    /// call in a client that can ask; or run unasked.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::consent::Unsupported;
    /// let server = proto_ai_tools_mcp::McpServer::from_toolkit(proto_ai_tools::Toolkit::builder().build().unwrap())
    ///     .with_confirm_unsupported(Unsupported::Allow);
    /// # let _ = server;
    /// ```
    pub fn with_confirm_unsupported(
        mut self,
        unsupported: proto_ai_tools::consent::Unsupported,
    ) -> Self {
        self.consent.unsupported = unsupported;
        self
    }

    /// The key (32 bytes or more) that signs the approvals a stateless
    /// client (protocol `2026-07-28`) sends back with a call it asked the
    /// user about. Without one, a random key is made at start: an approval
    /// then counts only on the replica that asked. Give every replica the
    /// same key when the requests of one client may reach several. A
    /// shorter key stops the server from starting ([`ServeError::ConsentKey`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let server = proto_ai_tools_mcp::McpServer::from_toolkit(proto_ai_tools::Toolkit::builder().build().unwrap())
    ///     .with_consent_key(*b"a key of thirty-two bytes or more");
    /// # let _ = server;
    /// ```
    pub fn with_consent_key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.consent_key = Some(key.into());
        self
    }

    /// The name and version the server reports in `initialize`
    /// (default `ai-tools` and this crate's version).
    ///
    /// # Examples
    ///
    /// See [`McpServer`].
    pub fn with_server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info = Implementation::new(name, version);
        self
    }

    /// Instructions for the host's model, sent in `initialize`.
    ///
    /// # Examples
    ///
    /// See [`McpServer`].
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The `Host` header values the HTTP server accepts. By default only
    /// loopback names (`localhost`, `127.0.0.1`, `::1`), which guards a
    /// local server against DNS rebinding; a public deployment lists its own
    /// host names.
    ///
    /// # Examples
    ///
    /// ```
    /// let server = proto_ai_tools_mcp::McpServer::new(|a| proto_ai_tools::Toolkit::builder().alias_manager(a).build())
    ///     .with_allowed_hosts(["tools.example.com"]);
    /// # let _ = server;
    /// ```
    pub fn with_allowed_hosts(
        mut self,
        hosts: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// Browser origins the HTTP server accepts besides [`LOOPBACK_ORIGINS`]
    /// (added to those; call again to add more). Each is
    /// `scheme://host:port`, or `scheme://host:*` for any port, e.g.
    /// `https://app.example.com:443`; `null` accepts the `Origin: null` of
    /// sandboxed pages. A request whose `Origin` is not accepted is answered
    /// `403 Forbidden`, as the MCP transport requires ("Servers MUST
    /// validate the Origin header"); one without `Origin` (a client that is
    /// not a browser) passes.
    ///
    /// # Examples
    ///
    /// ```
    /// let server = proto_ai_tools_mcp::McpServer::new(|a| proto_ai_tools::Toolkit::builder().alias_manager(a).build())
    ///     .with_allowed_origins(["https://app.example.com:443"]);
    /// # let _ = server;
    /// ```
    pub fn with_allowed_origins(
        mut self,
        origins: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.http
            .origins
            .extend(origins.into_iter().map(Into::into));
        self
    }

    /// The largest request body over HTTP, in bytes (default
    /// [`DEFAULT_MAX_REQUEST_BODY_BYTES`], 320 KiB: the argument limit plus
    /// [`REQUEST_ENVELOPE_BYTES`]). A larger body is answered
    /// `413 Payload Too Large`, naming the limit, before it is parsed. A
    /// request without a session is held to at most
    /// [`MAX_SESSIONLESS_BODY_BYTES`].
    ///
    /// # Examples
    ///
    /// ```
    /// let server = proto_ai_tools_mcp::McpServer::new(|a| proto_ai_tools::Toolkit::builder().alias_manager(a).build())
    ///     .with_max_request_body_bytes(1 << 20);
    /// # let _ = server;
    /// ```
    pub fn with_max_request_body_bytes(mut self, bytes: usize) -> Self {
        self.http.max_body = bytes;
        self
    }

    /// The most MCP sessions the HTTP server holds at once (default
    /// [`DEFAULT_MAX_SESSIONS`]; at least 1). At the cap an `initialize` is
    /// answered `503 Service Unavailable` with `Retry-After:`
    /// [`SESSIONS_RETRY_AFTER_SECS`]; the sessions held are never evicted
    /// for it. A slot comes back when a session ends: the client's `DELETE`,
    /// or [idle expiry](Self::with_session_idle_timeout). When sessions roam
    /// ([`with_session_store`](Self::with_session_store)) a session restored
    /// from the store takes a slot too, and at the cap its request is
    /// refused in the same way.
    ///
    /// # Examples
    ///
    /// ```
    /// let server = proto_ai_tools_mcp::McpServer::new(|a| proto_ai_tools::Toolkit::builder().alias_manager(a).build())
    ///     .with_max_sessions(100);
    /// # let _ = server;
    /// ```
    pub fn with_max_sessions(mut self, sessions: usize) -> Self {
        self.http.max_sessions = sessions.max(1);
        self
    }

    /// How long an MCP session lives without a message from its client
    /// (default [`DEFAULT_SESSION_IDLE_TIMEOUT`], 5 minutes). An open
    /// `GET` event stream is not a message. After it, the session's
    /// requests are answered `404 Not Found` (the client starts a new
    /// session) and its alias namespace is forgotten. When sessions roam
    /// ([`with_session_store`](Self::with_session_store)) this is also how
    /// long the store keeps a session after its last request on any
    /// gateway; a gateway's own copy of a session it has not served for
    /// this long ends, and is restored from the store if the session comes
    /// back to it.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// let server = proto_ai_tools_mcp::McpServer::new(|a| proto_ai_tools::Toolkit::builder().alias_manager(a).build())
    ///     .with_session_idle_timeout(Duration::from_secs(30 * 60));
    /// # let _ = server;
    /// ```
    pub fn with_session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.http.session_idle_timeout = timeout;
        self
    }

    /// The most open HTTP connections (default [`DEFAULT_MAX_CONNECTIONS`];
    /// at least 1). Past it a new connection is not accepted: it waits in
    /// the listen backlog until one closes (a client sees a slow connect,
    /// and once the kernel's backlog is full, a connect that times out).
    /// An open event stream holds its connection.
    ///
    /// # Examples
    ///
    /// ```
    /// let server = proto_ai_tools_mcp::McpServer::new(|a| proto_ai_tools::Toolkit::builder().alias_manager(a).build())
    ///     .with_max_connections(256);
    /// # let _ = server;
    /// ```
    pub fn with_max_connections(mut self, connections: usize) -> Self {
        self.http.max_connections = connections.max(1);
        self
    }

    /// How long a client has to send a request's headers, counted from
    /// their first byte, and then, for a `POST`, its body (default
    /// [`DEFAULT_HEADER_TIMEOUT`], 10 seconds). A connection whose headers
    /// are late is closed; a late body is answered `408 Request Timeout`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// let server = proto_ai_tools_mcp::McpServer::new(|a| proto_ai_tools::Toolkit::builder().alias_manager(a).build())
    ///     .with_header_timeout(Duration::from_secs(5));
    /// # let _ = server;
    /// ```
    pub fn with_header_timeout(mut self, timeout: Duration) -> Self {
        self.http.header_timeout = timeout;
        self
    }

    /// How long a connection stays open with no request in progress and no
    /// byte from its client (default [`DEFAULT_IDLE_TIMEOUT`], 60 seconds);
    /// then it is closed. A request in progress, an event stream included,
    /// is never idle.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// let server = proto_ai_tools_mcp::McpServer::new(|a| proto_ai_tools::Toolkit::builder().alias_manager(a).build())
    ///     .with_idle_timeout(Duration::from_secs(120));
    /// # let _ = server;
    /// ```
    pub fn with_idle_timeout(mut self, timeout: Duration) -> Self {
        self.http.idle_timeout = timeout;
        self
    }

    /// How long the HTTP server, once told to stop, lets the calls in
    /// flight run (default [`DEFAULT_DRAIN_TIMEOUT`], 25 seconds). Each
    /// request that arrives meanwhile is answered `503` with `Retry-After:`
    /// [`DRAIN_RETRY_AFTER_SECS`]; a call still running at the end is
    /// answered that it did not finish and may or may not have taken effect
    /// (a tool error the model can act on), never left half-written.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// let server = proto_ai_tools_mcp::McpServer::new(|a| proto_ai_tools::Toolkit::builder().alias_manager(a).build())
    ///     .with_drain_timeout(Duration::from_secs(55));
    /// # let _ = server;
    /// ```
    pub fn with_drain_timeout(mut self, timeout: Duration) -> Self {
        self.http.drain_timeout = timeout;
        self
    }
}

/// Completes on ctrl-c, or on `SIGTERM` on Unix: the signals a host or a
/// service manager stops a server with. If a handler cannot be installed,
/// that signal is not waited for.
///
/// # Examples
///
/// ```no_run
/// # async fn run() {
/// proto_ai_tools_mcp::shutdown_signal().await;
/// eprintln!("stopping");
/// # }
/// ```
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}

#[cfg(test)]
mod tests;
