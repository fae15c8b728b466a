//! The bounds of an [`McpServer`](super::McpServer): the deadlines of tool
//! calls and the limits of the HTTP edge, with their defaults (see the
//! [module docs](super#limits-of-the-http-edge)). They sit below the server,
//! the handler and the edge, which all read them.

use std::collections::HashMap;
use std::time::Duration;

/// The room a request body has beyond its arguments: the JSON-RPC envelope
/// (`jsonrpc`, `id`, `method`, the tool's `name`, `_meta`) and the escaping
/// of the arguments' text, 64 KiB.
///
/// # Examples
///
/// ```
/// assert_eq!(proto_ai_tools_mcp::REQUEST_ENVELOPE_BYTES, 64 * 1024);
/// ```
pub const REQUEST_ENVELOPE_BYTES: usize = 64 * 1024;

/// The largest request body over HTTP unless
/// [`McpServer::with_max_request_body_bytes`](super::McpServer::with_max_request_body_bytes)
/// says otherwise: the argument limit
/// ([`Limits::default`](proto_ai_tools::schema::inbound::Limits)`.max_bytes`, 256 KiB)
/// plus [`REQUEST_ENVELOPE_BYTES`], 320 KiB. A larger body is answered
/// `413 Payload Too Large`, naming the limit, before it is parsed (and, when
/// its `Content-Length` says so, before it is read).
///
/// # Examples
///
/// ```
/// use proto_ai_tools::schema::inbound::Limits;
/// assert_eq!(
///     proto_ai_tools_mcp::DEFAULT_MAX_REQUEST_BODY_BYTES,
///     Limits::default().max_bytes + proto_ai_tools_mcp::REQUEST_ENVELOPE_BYTES
/// );
/// ```
pub const DEFAULT_MAX_REQUEST_BODY_BYTES: usize = 256 * 1024 + REQUEST_ENVELOPE_BYTES;

/// The largest body of a `POST` without an `Mcp-Session-Id`, 16 KiB. Such a
/// request can only be an `initialize` (or `server/discover`), a few
/// hundred bytes from every SDK, and it is parsed before any session exists,
/// so it is held to this rather than to the argument-sized limit.
///
/// # Examples
///
/// ```
/// assert!(proto_ai_tools_mcp::MAX_SESSIONLESS_BODY_BYTES < proto_ai_tools_mcp::DEFAULT_MAX_REQUEST_BODY_BYTES);
/// ```
pub const MAX_SESSIONLESS_BODY_BYTES: usize = 16 * 1024;

/// The most MCP sessions an HTTP server holds at once unless
/// [`McpServer::with_max_sessions`](super::McpServer::with_max_sessions) says otherwise: 1,000.
///
/// # Examples
///
/// ```
/// assert_eq!(proto_ai_tools_mcp::DEFAULT_MAX_SESSIONS, 1_000);
/// ```
pub const DEFAULT_MAX_SESSIONS: usize = 1_000;

/// The `Retry-After` (seconds) of the `503` that refuses an `initialize`
/// while the server holds its maximum of sessions: 5.
///
/// # Examples
///
/// ```
/// assert_eq!(proto_ai_tools_mcp::SESSIONS_RETRY_AFTER_SECS, 5);
/// ```
pub const SESSIONS_RETRY_AFTER_SECS: u64 = 5;

/// How long an MCP session lives without a message unless
/// [`McpServer::with_session_idle_timeout`](super::McpServer::with_session_idle_timeout)
/// says otherwise: 5 minutes (rmcp's default).
///
/// # Examples
///
/// ```
/// assert_eq!(proto_ai_tools_mcp::DEFAULT_SESSION_IDLE_TIMEOUT.as_secs(), 300);
/// ```
pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// The most open HTTP connections unless
/// [`McpServer::with_max_connections`](super::McpServer::with_max_connections)
/// says otherwise: 1,024.
///
/// # Examples
///
/// ```
/// assert_eq!(proto_ai_tools_mcp::DEFAULT_MAX_CONNECTIONS, 1_024);
/// ```
pub const DEFAULT_MAX_CONNECTIONS: usize = 1_024;

/// How long a client has to send a request's headers once it has sent their
/// first byte, and then its body, unless
/// [`McpServer::with_header_timeout`](super::McpServer::with_header_timeout)
/// says otherwise: 10 seconds.
///
/// # Examples
///
/// ```
/// assert_eq!(proto_ai_tools_mcp::DEFAULT_HEADER_TIMEOUT.as_secs(), 10);
/// ```
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a connection stays open with no request in progress and no byte
/// from the client unless
/// [`McpServer::with_idle_timeout`](super::McpServer::with_idle_timeout) says
/// otherwise: 60 seconds.
///
/// # Examples
///
/// ```
/// assert_eq!(proto_ai_tools_mcp::DEFAULT_IDLE_TIMEOUT.as_secs(), 60);
/// ```
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The browser origins an HTTP server always accepts: loopback pages, on any
/// port. A request whose `Origin` is neither one of these nor one given to
/// [`McpServer::with_allowed_origins`](super::McpServer::with_allowed_origins)
/// is answered `403 Forbidden`; a request without `Origin` (not from a browser)
/// passes.
///
/// # Examples
///
/// ```
/// assert!(proto_ai_tools_mcp::LOOPBACK_ORIGINS.contains(&"http://localhost:*"));
/// ```
pub const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// How long an HTTP server that is stopping lets the calls in flight run
/// unless [`McpServer::with_drain_timeout`](super::McpServer::with_drain_timeout)
/// says otherwise: 25 seconds. A call still running then is answered that
/// it did not finish.
///
/// Why 25: a service manager gives a process a grace period between
/// `SIGTERM` and `SIGKILL`, Kubernetes 30 seconds unless told otherwise.
/// The drain must end inside it, with time left to answer the calls that
/// did not finish, end the sessions and write the last logs; a `SIGKILL`
/// mid-drain would leave every client of a call in flight without an
/// answer. For every call to finish, set the drain timeout above the call
/// timeout ([`DEFAULT_CALL_TIMEOUT`], 50 seconds) and the grace period above
/// both.
///
/// # Examples
///
/// ```
/// assert!(proto_ai_tools_mcp::DEFAULT_DRAIN_TIMEOUT.as_secs() + 5 <= 30);
/// ```
pub const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_secs(25);

/// The `Retry-After` (seconds) of the `503` that answers each request that
/// arrives while an HTTP server is stopping: 1. Behind a load balancer the
/// retry reaches another replica; after a restart, the new process.
///
/// # Examples
///
/// ```
/// assert_eq!(proto_ai_tools_mcp::DRAIN_RETRY_AFTER_SECS, 1);
/// ```
pub const DRAIN_RETRY_AFTER_SECS: u64 = 1;

/// How long a stopping HTTP server waits for the answers that say a call
/// did not finish, and, once the sessions are ended, for the open
/// connections to write their last bytes.
pub(super) const HTTP_CLOSE: Duration = Duration::from_secs(1);

/// The deadline of a tool call unless
/// [`McpServer::with_call_timeout`](super::McpServer::with_call_timeout),
/// [`McpServer::with_tool_timeout`](super::McpServer::with_tool_timeout), the
/// tool's own `rpc_tool.timeout`, the server's [call
/// options](super::McpServer::with_call_options) or the toolkit's say
/// otherwise: 50 seconds.
///
/// Why 50 and not 60: most MCP hosts call through the official TypeScript
/// SDK, which gives up on a request after 60 seconds
/// (`DEFAULT_REQUEST_TIMEOUT_MSEC`), counted from before the request left
/// the host. A server deadline of 60 seconds would pass after the host had
/// already stopped listening, so the model would read the host's bare
/// "Request timed out" instead of a result that says what happened. At 50
/// seconds the server's own error result, `DEADLINE_EXCEEDED` with what to
/// do next, reaches the host first, with 10 seconds to spare for the trip
/// and the response's aliases. The backend is told the deadline too, as
/// `grpc-timeout`, so it can stop the work itself.
///
/// # Examples
///
/// ```
/// assert_eq!(proto_ai_tools_mcp::DEFAULT_CALL_TIMEOUT.as_secs(), 50);
/// ```
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(50);

/// The deadlines of tool calls, and what a client's going away does to
/// them (see the [module docs](super#forwarded-headers-deadlines-and-cancellation)).
#[derive(Clone, Debug)]
pub(super) struct CallLimits {
    /// The deadline of a call that sets none; `None`: no deadline.
    pub(super) timeout: Option<Duration>,
    /// Per tool, over every other deadline.
    pub(super) per_tool: HashMap<String, Duration>,
    /// Whether a client whose HTTP connection closes mid-call cancels it.
    pub(super) cancel_on_disconnect: bool,
}

impl Default for CallLimits {
    fn default() -> Self {
        Self {
            timeout: Some(DEFAULT_CALL_TIMEOUT),
            per_tool: HashMap::new(),
            cancel_on_disconnect: true,
        }
    }
}

impl CallLimits {
    /// The deadline to give a call of `tool`, over the server's own call
    /// options: the server's for this tool, else the tool's own (`own`,
    /// `rpc_tool.timeout`), else one the server's options set, else the
    /// default unless the toolkit sets one (`toolkit`), which then applies.
    /// `None` leaves the call's deadline to the toolkit and its executors.
    pub(super) fn deadline(
        &self,
        tool: &str,
        own: Option<Duration>,
        server: Option<Duration>,
        toolkit: Option<Duration>,
    ) -> Option<Duration> {
        self.per_tool
            .get(tool)
            .copied()
            .or(own)
            .or(server)
            .or(if toolkit.is_some() {
                None
            } else {
                self.timeout
            })
    }
}

/// The bounds of the HTTP edge (see the [module docs](super#limits-of-the-http-edge)).
#[derive(Clone, Debug)]
pub(super) struct HttpLimits {
    pub(super) max_body: usize,
    pub(super) max_sessions: usize,
    pub(super) session_idle_timeout: Duration,
    pub(super) max_connections: usize,
    pub(super) header_timeout: Duration,
    pub(super) idle_timeout: Duration,
    pub(super) drain_timeout: Duration,
    /// Beyond [`LOOPBACK_ORIGINS`].
    pub(super) origins: Vec<String>,
}

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            max_body: DEFAULT_MAX_REQUEST_BODY_BYTES,
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_idle_timeout: DEFAULT_SESSION_IDLE_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            drain_timeout: DEFAULT_DRAIN_TIMEOUT,
            origins: Vec::new(),
        }
    }
}
