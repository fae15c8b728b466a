//! The streamable-HTTP edge of an [`McpServer`](super::McpServer): what a
//! request meets before rmcp parses it, and the connections it comes on.
//!
//! - [`gate`], an axum middleware in front of rmcp's service: a `POST` or
//!   `DELETE` naming a session the server does not hold is answered 404
//!   before its body is read; a `POST` without a session is stateless, and
//!   gets its alias scope here ([`scope::of_stateless_request`]); without
//!   one it may only be an `initialize` (or `server/discover`), read to at
//!   most [`MAX_SESSIONLESS_BODY_BYTES`]; every body is bounded in size and time,
//!   and checked to be JSON without building anything, before rmcp parses
//!   it.
//! - [`CappedSessions`], rmcp's [`LocalSessionManager`] with a cap on the
//!   sessions it holds, and (feature `redis`, with
//!   [`McpServer::with_session_store`](super::McpServer::with_session_store))
//!   sessions that roam: a session this gateway does not hold is looked up
//!   in the store, checked to be the caller's and within the caps, and
//!   restored by rmcp ([`RoamingStore`]); one it holds is given its TTL in
//!   the store again at each request, and ended here when the store no
//!   longer has it.
//! - [`serve`], the accept loop: a cap on open connections, a header-read
//!   timeout and an idle timeout per connection, and a graceful stop that
//!   lets the calls in flight finish before sessions end.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use futures_core::Stream;
use http::{Method, StatusCode};
use http_body::{Frame, SizeHint};
use rmcp::model::{ClientJsonRpcMessage, GetExtensions, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId,
};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::{TaskTracker, task_tracker::TaskTrackerToken};

/// The header that carries the MCP session id.
pub(super) const SESSION_HEADER: &str = "mcp-session-id";

use super::limits::{
    DRAIN_RETRY_AFTER_SECS, HTTP_CLOSE, MAX_SESSIONLESS_BODY_BYTES, SESSIONS_RETRY_AFTER_SECS,
};
use super::scope::{self, ScopeSources};
#[cfg(feature = "redis")]
use super::session_store::{LoadError, SessionRecords, owner_digest};

/// rmcp's in-memory session manager, refusing a new session while it holds
/// `max` of them. A session's slot is given back when the session closes: on
/// the client's `DELETE`, at its idle expiry, or when the server stops. A
/// session restored from the store takes a slot as a new one does.
pub(super) struct CappedSessions {
    inner: LocalSessionManager,
    slots: Arc<Semaphore>,
    held: Mutex<HashMap<SessionId, OwnedSemaphorePermit>>,
    /// Who each session belongs to, when the server checks tokens: only its
    /// owner's requests may name it, whatever their method.
    owners: Mutex<HashMap<SessionId, String>>,
    /// The sessions held here whose record the store has (written at their
    /// handshake, or read to restore them): the others, whose record could
    /// not be written, live on this gateway only.
    persisted: Mutex<HashSet<SessionId>>,
    /// Where sessions roam, when they do.
    #[cfg(feature = "redis")]
    records: Option<Arc<SessionRecords>>,
    max: usize,
}

/// Why a [`CappedSessions`] refused.
#[derive(Debug, thiserror::Error)]
pub(super) enum SessionsError {
    /// At the cap.
    #[error("the server already holds its maximum of {0} MCP sessions")]
    Full(usize),
    /// rmcp's own.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

impl CappedSessions {
    /// At most `max` sessions (at least one), each closed after
    /// `idle_timeout` without a message.
    pub(super) fn new(max: usize, idle_timeout: Duration) -> Self {
        let max = max.max(1);
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(idle_timeout);
        Self {
            inner,
            slots: Arc::new(Semaphore::new(max)),
            held: Mutex::new(HashMap::new()),
            owners: Mutex::new(HashMap::new()),
            persisted: Mutex::new(HashSet::new()),
            #[cfg(feature = "redis")]
            records: None,
            max,
        }
    }

    /// The same, with sessions that roam through `records`.
    #[cfg(feature = "redis")]
    pub(super) fn with_records(mut self, records: Option<Arc<SessionRecords>>) -> Self {
        self.records = records;
        self
    }

    /// Whether sessions roam: a session this server does not hold may be
    /// in the store.
    fn roams(&self) -> bool {
        #[cfg(feature = "redis")]
        return self.records.is_some();
        #[cfg(not(feature = "redis"))]
        false
    }

    fn persisted(&self) -> MutexGuard<'_, HashSet<SessionId>> {
        self.persisted
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The sessions held now.
    #[cfg_attr(not(feature = "admin"), allow(dead_code))]
    pub(super) fn len(&self) -> usize {
        self.held().len()
    }

    fn held(&self) -> MutexGuard<'_, HashMap<SessionId, OwnedSemaphorePermit>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn owners(&self) -> MutexGuard<'_, HashMap<SessionId, String>> {
        self.owners.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records that session `id`, just created or restored, belongs to
    /// `owner`.
    fn set_owner(&self, id: &str, owner: String) {
        if let Some((id, _)) = self.held().get_key_value(id) {
            let id = id.clone();
            self.owners().insert(id, owner);
        }
    }

    /// How many sessions held now belong to `owner`.
    #[cfg_attr(not(feature = "oauth"), allow(dead_code))]
    pub(super) fn owned_by(&self, owner: &str) -> usize {
        self.owners().values().filter(|o| *o == owner).count()
    }

    /// Who session `id` belongs to, if the server knows.
    #[cfg_attr(not(feature = "oauth"), allow(dead_code))]
    pub(super) fn owner(&self, id: &str) -> Option<String> {
        self.owners().get(id).cloned()
    }

    /// Whether a new session would be refused now.
    fn is_full(&self) -> bool {
        self.slots.available_permits() == 0
    }

    /// Whether the server holds session `id`.
    async fn exists(&self, id: &SessionId) -> bool {
        SessionManager::has_session(&self.inner, id)
            .await
            .unwrap_or(false)
    }

    /// What a request of `caller` naming session `id` meets: the session
    /// held here, one to restore from the store (when `restore`: a `POST`
    /// or a `GET`, which rmcp restores; a `DELETE` only ends it), or no
    /// session at all.
    async fn named(&self, id: &SessionId, caller: Option<&CallerSessions>, restore: bool) -> Named {
        let held = self.exists(id).await;
        #[cfg(feature = "redis")]
        if let Some(records) = &self.records {
            return if held {
                self.still_stored(records, id).await
            } else {
                self.stored(records, id, caller, restore).await
            };
        }
        let _ = (caller, restore);
        if held { Named::Held } else { Named::Unknown }
    }

    /// A session held here, which roams: its record's TTL is set again. A
    /// record gone means the session ended elsewhere (its client's
    /// `DELETE` reached another gateway) or went idle past its timeout
    /// everywhere: this copy ends too.
    #[cfg(feature = "redis")]
    async fn still_stored(&self, records: &SessionRecords, id: &SessionId) -> Named {
        if !self.persisted().contains(id) {
            // Its record was never written: it lives here only.
            return Named::Held;
        }
        match records.touch(id).await {
            Ok(true) => Named::Held,
            Ok(false) => {
                let _ = SessionManager::close_session(self, id).await;
                Named::Unknown
            }
            Err(e) => {
                // The session is held here and its owner checked here: a
                // store that does not answer does not end it.
                tracing::warn!(
                    error = %e,
                    "the MCP session store did not answer; the session goes on on this gateway"
                );
                Named::Held
            }
        }
    }

    /// A session not held here: restorable if the store has it, it is the
    /// caller's (an owner that differs, or one on one side only, is refused
    /// as a session that does not exist, as on the gateway that holds it),
    /// and (for a restore) the caps have room.
    #[cfg(feature = "redis")]
    async fn stored(
        &self,
        records: &SessionRecords,
        id: &SessionId,
        caller: Option<&CallerSessions>,
        restore: bool,
    ) -> Named {
        let stored = match records.load(id).await {
            Ok(Some(stored)) => stored,
            Ok(None) => return Named::Unknown,
            Err(LoadError::Corrupt(why)) => {
                tracing::warn!(
                    problem = %why,
                    "a stored MCP session is unreadable and is refused; its client must start a new session"
                );
                return Named::Unknown;
            }
            Err(LoadError::Unavailable(e)) => {
                tracing::warn!(
                    error = %e,
                    "the MCP session store did not answer; a session not held on this gateway cannot be restored"
                );
                return Named::Refused(Refusal::store_unavailable());
            }
        };
        if stored.owner != caller.map(|c| owner_digest(&c.owner)) {
            return Named::Unknown;
        }
        if restore {
            if self.is_full() {
                return Named::Refused(Refusal::sessions_full(self.max));
            }
            if let Some(caller) = caller
                && self.owned_by(&caller.owner) >= caller.max
            {
                return Named::Refused(caller_sessions_full(caller.max));
            }
        }
        Named::Restorable
    }
}

/// What a request naming a session meets ([`CappedSessions::named`]).
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
enum Named {
    /// The session is held here.
    Held,
    /// rmcp restores it from the store before serving the request.
    Restorable,
    /// No such session, or not the caller's: `404`.
    Unknown,
    /// Refused for another reason.
    Refused(Refusal),
}

/// The owner an `initialize` binds its session to: the caller the
/// authentication layer put on the request, if the server checks tokens.
/// A restore replays the `initialize` with the request that named the
/// session, whose caller the edge found to be the stored owner.
fn caller_of(message: &ClientJsonRpcMessage) -> Option<String> {
    let ClientJsonRpcMessage::Request(request) = message else {
        return None;
    };
    request
        .request
        .extensions()
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<CallerSessions>())
        .map(|caller| caller.owner.clone())
}

impl SessionManager for CappedSessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let slot = self
            .slots
            .clone()
            .try_acquire_owned()
            .map_err(|_| SessionsError::Full(self.max))?;
        let (id, transport) = SessionManager::create_session(&self.inner).await?;
        self.held().insert(id.clone(), slot);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        // Bound before the session answers anything, and before rmcp
        // writes its record, which carries the owner.
        if let Some(owner) = caller_of(&message) {
            self.set_owner(id, owner);
        }
        Ok(SessionManager::initialize_session(&self.inner, id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(SessionManager::has_session(&self.inner, id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let closed = SessionManager::close_session(&self.inner, id).await;
        // The slot is free whatever the worker said: the session is gone
        // from the map either way.
        self.held().remove(id);
        self.owners().remove(id);
        self.persisted().remove(id);
        Ok(closed?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(SessionManager::create_stream(&self.inner, id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(SessionManager::accept_message(&self.inner, id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(SessionManager::create_standalone_stream(&self.inner, id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(SessionManager::resume(&self.inner, id, last_event_id).await?)
    }

    /// A session of the store, not held here: it takes a slot, as a new
    /// one does (the edge checked there was one; a restore that lost the
    /// race for it is refused here).
    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        let slot = self
            .slots
            .clone()
            .try_acquire_owned()
            .map_err(|_| SessionsError::Full(self.max))?;
        let outcome = SessionManager::restore_session(&self.inner, id.clone()).await?;
        if let RestoreOutcome::Restored(_) = &outcome {
            self.held().insert(id.clone(), slot);
            self.persisted().insert(id);
        }
        Ok(outcome)
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        SessionManager::event_store(&self.inner)
    }
}

/// rmcp's session store over the records of [`SessionRecords`]: rmcp
/// writes a session's state after its handshake (with the owner the
/// `initialize` bound), reads it to restore a session it does not hold,
/// and deletes it at the client's `DELETE`.
#[cfg(feature = "redis")]
pub(super) struct RoamingStore {
    pub(super) sessions: Arc<CappedSessions>,
    pub(super) records: Arc<SessionRecords>,
}

/// What rmcp's `#[async_trait]` methods return.
#[cfg(feature = "redis")]
type StoreFuture<'a, T> = Pin<
    Box<
        dyn Future<
                Output = Result<
                    T,
                    rmcp::transport::streamable_http_server::session::SessionStoreError,
                >,
            > + Send
            + 'a,
    >,
>;

// Written out as `#[async_trait]` expands rmcp's trait, rather than taking
// the macro as one more dependency for three methods.
#[cfg(feature = "redis")]
impl rmcp::transport::streamable_http_server::session::SessionStore for RoamingStore {
    fn load<'life0, 'life1, 'async_trait>(
        &'life0 self,
        session_id: &'life1 str,
    ) -> StoreFuture<
        'async_trait,
        Option<rmcp::transport::streamable_http_server::session::SessionState>,
    >
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(async move {
            match self.records.load(session_id).await {
                Ok(found) => Ok(found.map(|stored| stored.state)),
                // The edge refused the request already; one that raced a
                // change of the record is refused the same way.
                Err(LoadError::Corrupt(why)) => {
                    tracing::warn!(
                        problem = %why,
                        "a stored MCP session is unreadable and is refused; its client must start a new session"
                    );
                    Ok(None)
                }
                Err(LoadError::Unavailable(e)) => Err(e.into()),
            }
        })
    }

    fn store<'life0, 'life1, 'life2, 'async_trait>(
        &'life0 self,
        session_id: &'life1 str,
        state: &'life2 rmcp::transport::streamable_http_server::session::SessionState,
    ) -> StoreFuture<'async_trait, ()>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        'life2: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(async move {
            let owner = self.sessions.owner(session_id);
            self.records
                .save(session_id, state, owner.as_deref())
                .await?;
            // Only a session still held: one that closed meanwhile must
            // not be counted.
            if let Some((id, _)) = self.sessions.held().get_key_value(session_id) {
                let id = id.clone();
                self.sessions.persisted().insert(id);
            }
            Ok(())
        })
    }

    fn delete<'life0, 'life1, 'async_trait>(
        &'life0 self,
        session_id: &'life1 str,
    ) -> StoreFuture<'async_trait, ()>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(async move { Ok(self.records.delete(session_id).await?) })
    }
}

/// The answer to an `initialize` of a caller that already holds `max`
/// sessions (the OAuth per-caller bound), in the shape of the server-wide
/// one ([`Refusal::sessions_full`]) but `429`: it is this caller's, not the
/// server's.
#[cfg_attr(not(feature = "oauth"), allow(dead_code))]
fn caller_sessions_full(max: usize) -> Refusal {
    Refusal {
        retry_after: Some(SESSIONS_RETRY_AFTER_SECS),
        limit: "sessions_per_caller",
        ..Refusal::new(
            StatusCode::TOO_MANY_REQUESTS,
            INVALID_REQUEST,
            format!(
                "this user already holds the maximum of {max} MCP sessions on this server; end one (DELETE) or wait for one to expire"
            ),
        )
    }
}

/// Who is asking, and how many sessions they may hold: put on every request
/// by the authentication layer; the edge applies the cap to an
/// `initialize` (the one request that starts a session) and to a restore,
/// and binds a new session to the owner.
#[derive(Clone, Debug)]
pub(super) struct CallerSessions {
    /// The caller, as [`CappedSessions::owned_by`] counts them.
    pub(super) owner: String,
    /// The most sessions one caller holds at once.
    pub(super) max: usize,
}

/// The answer to a request naming a session this server does not hold, or
/// (when it checks tokens) one that is not the caller's: the two look alike,
/// so that a refusal says nothing of whose a session is.
#[cfg_attr(not(feature = "oauth"), allow(dead_code))]
pub(super) fn unknown_session() -> axum::response::Response {
    Refusal::unknown_session().into_response()
}

/// What [`gate`] needs: the sessions and the bounds of a request body.
#[derive(Clone)]
pub(super) struct Gate {
    pub(super) sessions: Arc<CappedSessions>,
    /// The largest body of a request in a session.
    pub(super) max_body: usize,
    /// How long a body may take to arrive once its headers have.
    pub(super) read_timeout: Duration,
    /// Where a stateless request's alias scope comes from.
    pub(super) scopes: Arc<ScopeSources>,
}

/// What refused a request the edge answered itself, put on the response
/// for the metrics ([`serve`] counts it).
#[derive(Debug, Clone, Copy)]
pub(super) struct Refused(pub(super) &'static str);

/// Told of each request the edge refused, by the limit that did
/// ([`McpServer::with_metrics`](super::McpServer::with_metrics)).
pub(super) type RefusalCounter = Arc<dyn Fn(&'static str) + Send + Sync>;

/// A refusal, answered with a JSON-RPC error body (`id: null`).
struct Refusal {
    status: StatusCode,
    code: i32,
    message: String,
    retry_after: Option<u64>,
    /// Whether the connection closes after this answer.
    close: bool,
    /// Which limit or rule refused it, as the metrics count it
    /// ([`Refused`]).
    limit: &'static str,
    /// The id of the request refused, when its body was read far enough
    /// to know it: a client matches the error to its request by it.
    /// Boxed: a refusal is an `Err` that is passed along, and seldom
    /// carries one.
    id: Box<serde_json::Value>,
}

/// Whether the request names MCP protocol 2026-07-28 or later in its
/// `MCP-Protocol-Version` header (the stateless era; versions are dates,
/// so they compare as text).
fn stateless_protocol(headers: &http::HeaderMap) -> bool {
    headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|version| version >= "2026-07-28")
}

/// JSON-RPC's "Parse error".
const PARSE_ERROR: i32 = -32700;
/// JSON-RPC's "Invalid Request".
const INVALID_REQUEST: i32 = -32600;

impl Refusal {
    fn new(status: StatusCode, code: i32, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            retry_after: None,
            close: false,
            limit: "invalid_request",
            id: Box::default(),
        }
    }

    fn unknown_session() -> Self {
        Self {
            limit: "unknown_session",
            ..Self::new(
                StatusCode::NOT_FOUND,
                INVALID_REQUEST,
                "Not Found: this server holds no session with that Mcp-Session-Id (it ended or expired); start a new one with initialize",
            )
        }
    }

    /// A request without a session that is not `initialize` (or
    /// `server/discover`), from a caller with no scope: `why` says what
    /// identity it lacks.
    fn scope_required(why: &str) -> Self {
        Self {
            limit: "caller_identity",
            ..Self::new(StatusCode::BAD_REQUEST, INVALID_REQUEST, why)
        }
    }

    fn too_large(limit: usize, sessionless: bool) -> Self {
        let message = if sessionless {
            format!(
                "Payload Too Large: a request without an Mcp-Session-Id or a caller identity (an initialize) may be at most {limit} bytes"
            )
        } else {
            format!(
                "Payload Too Large: the request body is larger than the limit of {limit} bytes; send smaller arguments"
            )
        };
        Self {
            limit: "body_size",
            ..Self::new(StatusCode::PAYLOAD_TOO_LARGE, INVALID_REQUEST, message)
        }
    }

    fn too_slow(timeout: Duration) -> Self {
        Self {
            limit: "body_time",
            ..Self::new(
                StatusCode::REQUEST_TIMEOUT,
                INVALID_REQUEST,
                format!(
                    "Request Timeout: the request body did not arrive within {} s",
                    timeout.as_secs_f64()
                ),
            )
        }
    }

    /// A session not held here whose record the store did not give.
    #[cfg(feature = "redis")]
    fn store_unavailable() -> Self {
        Self {
            limit: "session_store",
            ..Self::sessions_unavailable(
                "the server cannot reach the store of MCP sessions to continue this session",
            )
        }
    }

    fn sessions_full(max: usize) -> Self {
        Self::sessions_unavailable(&format!(
            "the server already holds its maximum of {max} MCP sessions"
        ))
    }

    /// `503` with `Retry-After` and `Connection: close`: the server is
    /// stopping, and answers no new request.
    fn draining() -> Self {
        Self {
            retry_after: Some(DRAIN_RETRY_AFTER_SECS),
            close: true,
            limit: "draining",
            ..Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                INVALID_REQUEST,
                format!(
                    "Service Unavailable: this server is stopping and takes no new request; \
                     send it again in {DRAIN_RETRY_AFTER_SECS} s (to this address, which a new \
                     server or another replica will answer)"
                ),
            )
        }
    }

    /// `503` with `Retry-After`: a session cannot be had now, for `reason`.
    fn sessions_unavailable(reason: &str) -> Self {
        Self {
            retry_after: Some(SESSIONS_RETRY_AFTER_SECS),
            limit: "sessions",
            ..Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                INVALID_REQUEST,
                format!("Service Unavailable: {reason}; retry after {SESSIONS_RETRY_AFTER_SECS} s"),
            )
        }
    }

    fn into_response(self) -> axum::response::Response {
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": {"code": self.code, "message": self.message},
        });
        let mut response = http::Response::builder()
            .status(self.status)
            .header(http::header::CONTENT_TYPE, "application/json");
        if let Some(secs) = self.retry_after {
            response = response.header(http::header::RETRY_AFTER, secs);
        }
        if self.close {
            response = response.header(http::header::CONNECTION, "close");
        }
        let response = response.extension(Refused(self.limit));
        response
            .body(Body::from(body.to_string()))
            .unwrap_or_default()
    }
}

/// What reading a gated body found, for [`gate`] to act on once rmcp has
/// answered.
#[derive(Default)]
struct Verdict {
    /// The body was refused: this is the answer, whatever rmcp made of the
    /// error it was given instead of the body.
    refusal: Option<Refusal>,
    /// The whole body was read and is JSON.
    json: bool,
    /// It is an `initialize` without a session.
    initialize: bool,
}

/// In front of rmcp's service: refuses what must not be parsed before it is
/// parsed (see the [module docs](self)), and gives the statuses and JSON-RPC
/// codes rmcp does not.
pub(super) async fn gate(
    axum::extract::State(gate): axum::extract::State<Gate>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let session: Option<SessionId> = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(Into::into);
    let method = request.method().clone();
    // A `GET` (a session's event stream) is rmcp's to answer unless
    // sessions roam: then it may restore one, so it is checked as a `POST`.
    let checked = method == Method::POST
        || method == Method::DELETE
        || (method == Method::GET && gate.sessions.roams());
    let mut restoring = false;
    if let Some(id) = &session
        && checked
    {
        let caller = request.extensions().get::<CallerSessions>();
        match gate
            .sessions
            .named(id, caller, method != Method::DELETE)
            .await
        {
            Named::Held => {}
            Named::Restorable => restoring = true,
            Named::Unknown => return Refusal::unknown_session().into_response(),
            Named::Refused(refusal) => return refusal.into_response(),
        }
    }
    if method != Method::POST {
        let response = next.run(request).await;
        return restore_refused(response, restoring, &gate.sessions);
    }
    // A request of protocol 2026-07-28 or later is stateless; with a
    // session id too, rmcp would serve it outside the session while the
    // id named the session's aliases: refuse the mix.
    if session.is_some() && stateless_protocol(request.headers()) {
        return Refusal::new(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            "Bad Request: a request of MCP protocol 2026-07-28 or later is stateless and carries no Mcp-Session-Id; send it without one, or speak the session's protocol",
        )
        .into_response();
    }
    let sessionless = session.is_none();
    let (mut parts, body) = request.into_parts();
    // A request without a session is stateless (protocol 2026-07-28) unless
    // it starts one: its scope is who is calling. One with a scope may
    // carry arguments; one without may only be an initialize or a
    // discover, read to the small bound.
    let unscoped = if sessionless {
        match scope::of_stateless_request(&parts.headers, &parts.extensions, &gate.scopes) {
            Ok(scope) => {
                parts.extensions.insert(scope);
                None
            }
            Err(why) => Some(why),
        }
    } else {
        None
    };
    // Cancelled when this request's response is dropped before its end:
    // the connection closed (or the server stopped) first.
    let gone = ClientGone(CancellationToken::new());
    let armed = gone.0.clone().drop_guard();
    let limit = if unscoped.is_some() {
        gate.max_body.min(MAX_SESSIONLESS_BODY_BYTES)
    } else {
        gate.max_body
    };
    let verdict = Arc::new(Mutex::new(Verdict::default()));
    parts.extensions.insert(gone);
    let caller = parts.extensions.get::<CallerSessions>().cloned();
    let body = GatedBody {
        inner: body,
        limit,
        sessionless,
        unscoped,
        caller,
        timeout: gate.read_timeout,
        deadline: Box::pin(tokio::time::sleep(gate.read_timeout)),
        buf: Vec::new(),
        started: false,
        done: false,
        sessions: gate.sessions.clone(),
        verdict: verdict.clone(),
    };
    let response = next
        .run(http::Request::from_parts(parts, Body::new(body)))
        .await;
    let verdict = std::mem::take(&mut *verdict.lock().unwrap_or_else(PoisonError::into_inner));
    if let Some(refusal) = verdict.refusal {
        return refusal.into_response();
    }
    // rmcp answers 415 to a body that is JSON but not a JSON-RPC message
    // (its content type was checked before the body was read).
    if verdict.json && response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return Refusal::new(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            "Invalid Request: the body is JSON but not a JSON-RPC message MCP knows",
        )
        .into_response();
    }
    // Another initialize took the last slot after this one was let in.
    if verdict.initialize
        && response.status() == StatusCode::INTERNAL_SERVER_ERROR
        && gate.sessions.is_full()
    {
        return Refusal::sessions_full(gate.sessions.max).into_response();
    }
    let response = restore_refused(response, restoring, &gate.sessions);
    response.map(|inner| Body::new(UntilEnd::new(inner, armed)))
}

/// rmcp's answer to a request whose session it was to restore, unless the
/// restore failed for want of a slot (another session took the last one
/// after the edge looked): then the server's "full" answer, not rmcp's
/// `500`.
fn restore_refused(
    response: axum::response::Response,
    restoring: bool,
    sessions: &CappedSessions,
) -> axum::response::Response {
    if restoring && response.status() == StatusCode::INTERNAL_SERVER_ERROR && sessions.is_full() {
        return Refusal::sessions_full(sessions.max).into_response();
    }
    response
}

/// Cancelled when the response to the request that carries it (in its
/// extensions) is dropped before it ends: the client's connection closed
/// first. The handler of a `tools/call` cancels its call on it.
#[derive(Clone, Debug)]
pub(super) struct ClientGone(CancellationToken);

impl ClientGone {
    /// The token, cancelled when the client is gone.
    pub(super) fn token(&self) -> &CancellationToken {
        &self.0
    }
}

/// What a response body does when it has been sent whole: its
/// [`UntilEnd`] body runs it at the end, and only drops it if the body is
/// dropped first.
trait AtEnd {
    fn at_end(self);
}

/// A client that stays to the end has not gone: the guard that would
/// cancel its request's [`ClientGone`] on drop is disarmed.
impl AtEnd for tokio_util::sync::DropGuard {
    fn at_end(self) {
        self.disarm();
    }
}

/// The request is no longer in flight, whether its body ended or was
/// dropped; nor is the call it carried, if any (see [`serve`]).
impl AtEnd for (InFlight, Option<TaskTrackerToken>) {
    fn at_end(self) {}
}

/// A response body that holds `guard` until it ends (then
/// [`AtEnd::at_end`]) or is dropped (then the guard's own drop).
struct UntilEnd<G> {
    inner: Body,
    guard: Option<G>,
}

impl<G> UntilEnd<G> {
    fn new(inner: Body, guard: G) -> Self {
        UntilEnd {
            inner,
            guard: Some(guard),
        }
    }
}

impl<G: AtEnd + Send + Unpin + 'static> http_body::Body for UntilEnd<G> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled
            && let Some(guard) = this.guard.take()
        {
            guard.at_end();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Why a gated body ended early.
#[derive(Debug, thiserror::Error)]
enum GateError {
    /// Refused; the refusal is in the verdict.
    #[error("the request body was refused")]
    Refused,
    /// The client's body failed (it went away).
    #[error(transparent)]
    Body(#[from] axum::Error),
}

/// A request body as rmcp reads it: collected here within `limit` bytes and
/// the read timeout, checked to be JSON (and, without a session, to be an
/// `initialize`), then handed on in one frame. A refusal ends it with an
/// error and leaves the answer in the verdict.
struct GatedBody {
    inner: Body,
    limit: usize,
    /// No `Mcp-Session-Id`: an initialize, a discover or a stateless request.
    sessionless: bool,
    /// Without a session and without a scope: why no scope (the refusal of
    /// anything but an initialize or a discover).
    unscoped: Option<String>,
    /// The caller's cap on sessions, for an `initialize` (with OAuth).
    caller: Option<CallerSessions>,
    timeout: Duration,
    deadline: Pin<Box<tokio::time::Sleep>>,
    buf: Vec<u8>,
    started: bool,
    done: bool,
    sessions: Arc<CappedSessions>,
    verdict: Arc<Mutex<Verdict>>,
}

impl GatedBody {
    fn refuse(&mut self, refusal: Refusal) -> Poll<Option<Result<Frame<Bytes>, GateError>>> {
        self.done = true;
        self.buf = Vec::new();
        self.verdict
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .refusal = Some(refusal);
        Poll::Ready(Some(Err(GateError::Refused)))
    }

    /// The checks on a whole body; whether it is a sessionless `initialize`.
    fn check(&self) -> Result<bool, Refusal> {
        // Checks the syntax and the nesting (serde_json's limit of 128
        // levels) without building anything.
        if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(&self.buf) {
            return Err(Refusal {
                limit: "not_json",
                ..Refusal::new(
                    StatusCode::BAD_REQUEST,
                    PARSE_ERROR,
                    format!("Parse error: the request body is not JSON: {e}"),
                )
            });
        }
        if !self.sessionless {
            return Ok(false);
        }
        #[derive(serde::Deserialize)]
        struct Method<'a> {
            #[serde(borrow, default)]
            method: Option<Cow<'a, str>>,
            /// A JSON-RPC id is a string or a number.
            #[serde(default)]
            id: Option<serde_json::Value>,
        }
        let (method, id) = serde_json::from_slice::<Method<'_>>(&self.buf)
            .ok()
            .map_or((None, None), |m| (m.method, m.id));
        match method.as_deref() {
            Some("initialize") if self.sessions.is_full() => {
                Err(Refusal::sessions_full(self.sessions.max))
            }
            Some("initialize")
                if self
                    .caller
                    .as_ref()
                    .is_some_and(|c| self.sessions.owned_by(&c.owner) >= c.max) =>
            {
                Err(caller_sessions_full(
                    self.caller.as_ref().map_or(0, |c| c.max),
                ))
            }
            Some("initialize") => Ok(true),
            Some("server/discover") => Ok(false),
            _ => match &self.unscoped {
                Some(why) => Err(Refusal {
                    id: Box::new(
                        id.filter(|id| id.is_string() || id.is_number())
                            .unwrap_or_default(),
                    ),
                    ..Refusal::scope_required(why)
                }),
                None => Ok(false),
            },
        }
    }
}

impl http_body::Body for GatedBody {
    type Data = Bytes;
    type Error = GateError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, GateError>>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        if !this.started {
            this.started = true;
            // A declared length past the limit is refused before a byte is read.
            if this.inner.size_hint().lower() > this.limit as u64 {
                return this.refuse(Refusal::too_large(this.limit, this.unscoped.is_some()));
            }
        }
        loop {
            match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => {
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    if data.len() > this.limit - this.buf.len() {
                        return this
                            .refuse(Refusal::too_large(this.limit, this.unscoped.is_some()));
                    }
                    this.buf.extend_from_slice(&data);
                }
                Poll::Ready(Some(Err(e))) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(e.into())));
                }
                Poll::Ready(None) => break,
                Poll::Pending => {
                    if this.deadline.as_mut().poll(cx).is_ready() {
                        return this.refuse(Refusal::too_slow(this.timeout));
                    }
                    return Poll::Pending;
                }
            }
        }
        match this.check() {
            Err(refusal) => this.refuse(refusal),
            Ok(initialize) => {
                this.done = true;
                {
                    let mut verdict = this.verdict.lock().unwrap_or_else(PoisonError::into_inner);
                    verdict.json = true;
                    verdict.initialize = initialize;
                }
                let body = Bytes::from(std::mem::take(&mut this.buf));
                Poll::Ready(Some(Ok(Frame::data(body))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done
    }
}

/// The bounds on connections.
#[derive(Clone, Copy, Debug)]
pub(super) struct ConnectionLimits {
    /// Open connections at most; past it, new ones wait to be accepted.
    pub(super) max_connections: usize,
    /// From a request's first byte to the end of its headers.
    pub(super) header_timeout: Duration,
    /// Without a request in progress and without a byte from the client.
    pub(super) idle_timeout: Duration,
}

/// How the server stops: how long the calls in flight get, and the token
/// that tells the ones still running that their time is up.
pub(super) struct Drain {
    /// How long the calls in flight get once the stop begins.
    pub(super) timeout: Duration,
    /// Cancelled when [`timeout`](Self::timeout) has passed: each call
    /// still running answers that it did not finish (the handler's
    /// sentence), so no client is left with a half-written answer.
    pub(super) over: CancellationToken,
}

/// Serves `router` on `listener` within `limits` until `shutdown`
/// completes. Then it stops in four steps:
///
/// 1. Each request that arrives from then on, on a new connection or a
///    kept-alive one, is answered `503 Service Unavailable` with
///    `Retry-After` (the listener stays open, so a client hears why rather
///    than finding the port closed), and each open connection closes once
///    it has answered the request it is serving.
/// 2. The calls in flight (every request but a `GET`, whose event stream
///    never ends by itself) run to their end and are answered, for at most
///    the drain's timeout: a rolling restart costs no call that ends within
///    it. The edge does not read a request's JSON-RPC method, so a `POST`
///    that opens a long-lived stream (`subscriptions/listen`) counts as a
///    call and holds the stop for the whole wait.
/// 3. Past the timeout, [`Drain::over`] is cancelled: each call still
///    running is answered that it did not finish, within [`HTTP_CLOSE`].
/// 4. `stopping` is cancelled: rmcp ends its sessions and their streams;
///    after [`HTTP_CLOSE`] the connections left are closed.
pub(super) async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send,
    drain: Drain,
    refusals: Option<RefusalCounter>,
    stopping: CancellationToken,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let mut connections = tokio::task::JoinSet::new();
    let draining = CancellationToken::new();
    let calls = TaskTracker::new();
    let mut shutdown = std::pin::pin!(shutdown);
    let accept = |connections: &mut tokio::task::JoinSet<()>, stream, slot| {
        connections.spawn(connection(
            stream,
            router.clone(),
            limits,
            draining.clone(),
            calls.clone(),
            refusals.clone(),
            slot,
        ));
    };
    tokio::select! {
        () = accept_loop(&listener, &slots, &mut connections, &accept) => {}
        () = &mut shutdown => {}
    }
    draining.cancel();
    calls.close();
    let in_flight = calls.len();
    if in_flight > 0 {
        tracing::info!(
            calls_in_flight = in_flight,
            drain_timeout_s = drain.timeout.as_secs_f64(),
            "draining: new requests are answered 503; the calls in flight are given time to end"
        );
    }
    let drained = async {
        if tokio::time::timeout(drain.timeout, calls.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                outcome = "did_not_finish",
                calls = calls.len(),
                drain_timeout_s = drain.timeout.as_secs_f64(),
                "calls still running at the end of the drain are answered that they did not finish"
            );
            drain.over.cancel();
            let _ = tokio::time::timeout(HTTP_CLOSE, calls.wait()).await;
        }
    };
    // Still accepting: what comes during the drain hears 503, not a
    // refused connection.
    tokio::select! {
        () = drained => {}
        () = accept_loop(&listener, &slots, &mut connections, &accept) => {}
    }
    drop(listener);
    stopping.cancel();
    let closed = async { while connections.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(HTTP_CLOSE, closed).await;
    // Dropping the set closes what is left.
}

/// Accepts connections on `listener` within the cap of `slots`, handing
/// each to `accept`; returns only if the semaphore is closed.
async fn accept_loop(
    listener: &TcpListener,
    slots: &Arc<Semaphore>,
    connections: &mut tokio::task::JoinSet<()>,
    accept: &impl Fn(&mut tokio::task::JoinSet<()>, TcpStream, OwnedSemaphorePermit),
) {
    loop {
        while connections.try_join_next().is_some() {}
        // Past the cap a connection waits in the listen backlog, not
        // accepted, until one closes.
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        match listener.accept().await {
            Ok((stream, _)) => accept(connections, stream, slot),
            Err(e) if is_connection_error(&e) => {}
            // Out of file descriptors, most likely: wait for some to close
            // rather than spin (as axum::serve does).
            Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
        }
    }
}

fn is_connection_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}

/// One connection: HTTP/1.1 served until the client closes it, a timeout
/// closes it, or the server stops (`draining`: then it closes once the
/// request in progress is answered). Each request but a `GET` holds a token
/// of `calls` until its response ends.
async fn connection(
    stream: TcpStream,
    router: axum::Router,
    limits: ConnectionLimits,
    draining: CancellationToken,
    calls: TaskTracker,
    refusals: Option<RefusalCounter>,
    _slot: OwnedSemaphorePermit,
) {
    // An event stream is written in small pieces (a priming event, the
    // result, the end): with Nagle's algorithm on, each piece after the
    // first waits for the client's delayed ACK, some 40 ms.
    let _ = stream.set_nodelay(true);
    let activity = Arc::new(Activity::new());
    let io = hyper_util::rt::TokioIo::new(Watched {
        inner: stream,
        activity: activity.clone(),
    });
    let requests = activity.clone();
    // A connection opened during the drain is not shut down with the
    // others: it stays open to hear its request's 503.
    let opened_before_the_drain = !draining.is_cancelled();
    let drain_began = draining.clone();
    let service =
        hyper::service::service_fn(move |request: http::Request<hyper::body::Incoming>| {
            let in_flight = InFlight::begin(&requests);
            let refused = drain_began.is_cancelled();
            let call = (!refused && request.method() != http::Method::GET).then(|| calls.token());
            let mut router = router.clone();
            let refusals = refusals.clone();
            async move {
                let response = if refused {
                    Refusal::draining().into_response()
                } else {
                    tower_service::Service::call(&mut router, request)
                        .await
                        .unwrap_or_else(|never| match never {})
                };
                if let (Some(count), Some(Refused(limit))) =
                    (&refusals, response.extensions().get::<Refused>())
                {
                    count(limit);
                }
                Ok::<_, Infallible>(response.map(|inner| UntilEnd::new(inner, (in_flight, call))))
            }
        });
    let mut builder = hyper::server::conn::http1::Builder::new();
    // The timeouts are the watchdog's: hyper's own header timer also runs
    // while a kept-alive connection waits for its next request.
    builder.header_read_timeout(None);
    let conn = builder.serve_connection(io, service);
    let mut conn = std::pin::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        () = activity.expired(limits.header_timeout, limits.idle_timeout) => {}
        () = draining.cancelled(), if opened_before_the_drain => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}

/// Where a connection is, for its timeouts.
#[derive(Clone, Copy)]
enum Phase {
    /// No request in progress since this instant.
    Idle(Instant),
    /// A request's first bytes came at this instant; its headers have not
    /// all come.
    Head(Instant),
    /// This many requests being served (their responses not yet all sent).
    Busy(usize),
}

struct Activity {
    phase: Mutex<Phase>,
    changed: Notify,
}

impl Activity {
    fn new() -> Self {
        Self {
            phase: Mutex::new(Phase::Idle(Instant::now())),
            changed: Notify::new(),
        }
    }

    fn phase(&self) -> MutexGuard<'_, Phase> {
        self.phase.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Bytes came from the client.
    fn read(&self) {
        let mut phase = self.phase();
        if let Phase::Idle(_) = *phase {
            *phase = Phase::Head(Instant::now());
            drop(phase);
            self.changed.notify_one();
        }
    }

    /// Completes when the connection has been idle for `idle`, or has spent
    /// `header` on a request's headers.
    async fn expired(&self, header: Duration, idle: Duration) {
        loop {
            let changed = self.changed.notified();
            let mut changed = std::pin::pin!(changed);
            changed.as_mut().enable();
            let deadline = match *self.phase() {
                Phase::Idle(since) => Some(since + idle),
                Phase::Head(since) => Some(since + header),
                Phase::Busy(_) => None,
            };
            match deadline {
                Some(deadline) if Instant::now() >= deadline => return,
                Some(deadline) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(deadline) => {}
                        () = changed => {}
                    }
                }
                None => changed.await,
            }
        }
    }
}

/// A request being served, from its headers to the end of its response.
struct InFlight(Arc<Activity>);

impl InFlight {
    fn begin(activity: &Arc<Activity>) -> Self {
        {
            let mut phase = activity.phase();
            *phase = match *phase {
                Phase::Busy(n) => Phase::Busy(n + 1),
                Phase::Idle(_) | Phase::Head(_) => Phase::Busy(1),
            };
        }
        activity.changed.notify_one();
        Self(activity.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        {
            let mut phase = self.0.phase();
            *phase = match *phase {
                Phase::Busy(n) if n > 1 => Phase::Busy(n - 1),
                _ => Phase::Idle(Instant::now()),
            };
        }
        self.0.changed.notify_one();
    }
}

/// The connection's socket, telling its [`Activity`] when bytes come.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.activity.read();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
