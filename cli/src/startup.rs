//! What `mcp` says of itself once it is ready: one INFO event whose fields
//! name the alias store, the replication wait, whose aliases a request
//! uses, and every limit in force (the guide's "Logs", guide/src/observability.md).

use std::time::Duration;

use proto_ai_tools_mcp as mcp;

use crate::flags::Args;
use crate::limits::Deadline;
use crate::store::{StoreSummary, without_password};

/// Writes the start-up event of a gateway serving `backend` over
/// `transport` (`stdio`, or `http` at `address`), with its sessions kept in
/// the store when `sessions_roam`, and its admin endpoints at `admin`.
pub(crate) fn log(
    args: &Args,
    store: &StoreSummary,
    transport: &'static str,
    address: Option<String>,
    sessions_roam: bool,
    admin: Option<std::net::SocketAddr>,
) {
    let serve = &args.serve;
    let http = serve.http.is_some();
    let limits = &serve.http_limits;
    let oauth = serve.auth.issuer.is_some();
    let secs = |d: Duration| d.as_secs_f64();
    // Only what applies is said: over stdio there is no HTTP edge, and
    // without Redis no wait.
    let when_http = |value: f64| http.then_some(value);
    let counted = |n: usize| http.then_some(n);
    let redis = store.kind != "memory";
    let call_timeout = match serve.calls.timeout {
        Some(Deadline(timeout)) => timeout,
        None => Some(mcp::DEFAULT_CALL_TIMEOUT),
    };
    tracing::info!(
        transport,
        address,
        admin = admin.map(|admin| format!("http://{admin}")),
        otlp_endpoint = serve.otlp_endpoint.as_deref(),
        backend = without_password(args.common.source.grpc.as_deref().unwrap_or_default()),
        alias_store = store.kind,
        alias_store_urls = redis.then(|| store.urls.join(",")),
        redis_wait_replicas = redis.then_some(store.wait_replicas),
        redis_wait_auto = redis.then_some(store.wait_auto),
        redis_wait_timeout_s = redis.then(|| secs(store.wait_timeout)),
        redis_fewest_replicas = store.fewest_replicas,
        sessions_roam,
        tool_search = crate::embeddings::retrieval(serve),
        alias_scope = scope_source(args),
        oauth,
        max_aliases_per_scope = proto_ai_tools::AliasManager::DEFAULT_LIMIT,
        alias_idle_s = secs(mcp::ALIAS_IDLE_TTL),
        scope_idle_s = secs(mcp::SCOPE_IDLE_TTL),
        call_timeout_s = call_timeout.map_or(0.0, secs),
        tool_timeouts = serve.calls.per_tool.len(),
        max_body_bytes = counted(
            limits
                .max_body_bytes
                .unwrap_or(mcp::DEFAULT_MAX_REQUEST_BODY_BYTES)
        ),
        max_sessions = counted(limits.max_sessions.unwrap_or(mcp::DEFAULT_MAX_SESSIONS)),
        max_sessions_per_caller = (http && oauth).then(|| {
            serve
                .auth
                .max_sessions_per_caller
                .unwrap_or(mcp::DEFAULT_MAX_SESSIONS_PER_CALLER)
        }),
        session_idle_timeout_s = when_http(secs(
            limits
                .session_idle_timeout
                .unwrap_or(mcp::DEFAULT_SESSION_IDLE_TIMEOUT)
        )),
        max_connections = counted(
            limits
                .max_connections
                .unwrap_or(mcp::DEFAULT_MAX_CONNECTIONS)
        ),
        header_timeout_s = when_http(secs(
            limits.header_timeout.unwrap_or(mcp::DEFAULT_HEADER_TIMEOUT)
        )),
        idle_timeout_s = when_http(secs(
            limits.idle_timeout.unwrap_or(mcp::DEFAULT_IDLE_TIMEOUT)
        )),
        drain_timeout_s = when_http(secs(drain_timeout(limits))),
        cancel_on_disconnect = http.then_some(!limits.keep_calls_on_disconnect),
        "gateway ready"
    );
}

/// Whose aliases a request uses, in the order they are tried: over stdio
/// the process; over HTTP a handshake-era request's session, and a
/// stateless one's OAuth principal, header or single local user (else it
/// is refused).
fn scope_source(args: &Args) -> String {
    let serve = &args.serve;
    if serve.http.is_none() {
        return "process".to_owned();
    }
    let mut stateless = Vec::new();
    if serve.auth.issuer.is_some() {
        stateless.push("oauth principal".to_owned());
    }
    if let Some(name) = &serve.scopes.alias_scope_header {
        stateless.push(format!("header {}", name.to_ascii_lowercase()));
    }
    if serve.scopes.single_user {
        stateless.push("single user".to_owned());
    }
    if stateless.is_empty() {
        stateless.push("none (refused)".to_owned());
    }
    format!("session; stateless: {}", stateless.join(", else "))
}

/// How long a stopping HTTP gateway lets the calls in flight run.
pub(crate) fn drain_timeout(limits: &crate::limits::HttpLimits) -> Duration {
    limits.drain_timeout.unwrap_or(mcp::DEFAULT_DRAIN_TIMEOUT)
}
