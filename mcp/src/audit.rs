//! The audit trail: one event per `tools/call`, on the log target
//! [`AUDIT_TARGET`] (`ai_tools::audit`), at INFO, whatever came of it: who
//! called (the OAuth principal), whose aliases it used (the scope, as a
//! digest), the tool, the gRPC method and status, whether it was an error,
//! how long it took, and the consent decision. It never carries an
//! argument's value nor a result's.
//!
//! What the call learns as it runs (the toolkit's record of the gRPC call,
//! the consent decision, a call ended by the drain or the client) is noted
//! in a task-local slot of the request ([`noted`]), so nothing is shared
//! between requests and no signature in between carries it.

use std::cell::RefCell;
use std::future::Future;
use std::time::Duration;

use sha2::{Digest as _, Sha256};

/// The log target of the audit events: filter on it to keep them apart
/// (`RUST_LOG=ai_tools::audit=info`, or a collector's rule on `target`).
///
/// # Examples
///
/// ```
/// assert_eq!(proto_ai_tools_mcp::AUDIT_TARGET, "ai_tools::audit");
/// ```
pub const AUDIT_TARGET: &str = "ai_tools::audit";

/// The longest tool name an event writes as given: a name the server does
/// not have is the model's text.
const MAX_TOOL_NAME_CHARS: usize = 128;

/// What a `tools/call` learned as it ran, for its audit event (and the
/// request's measure).
#[derive(Debug, Default, Clone)]
pub(crate) struct CallNotes {
    /// `links.v1.LinksService/CreateLink`, when a gRPC method was called.
    pub(crate) rpc_method: Option<String>,
    /// The gRPC status of that call ([`proto_ai_tools::CallRecord::grpc_status`]).
    pub(crate) grpc_status: Option<proto_ai_tools::transport::Code>,
    /// How the call ended, as the `tool call` log line says it, or how it
    /// was ended before (`did_not_finish`, `cancelled`).
    pub(crate) outcome: Option<&'static str>,
    /// The consent decision, when the tool's policy asked for one.
    pub(crate) consent: Option<&'static str>,
}

tokio::task_local! {
    static NOTES: RefCell<CallNotes>;
}

/// Runs `call` with a slot for its notes; what it returns, and the notes.
pub(crate) async fn noted<T>(call: impl Future<Output = T>) -> (T, CallNotes) {
    NOTES
        .scope(RefCell::new(CallNotes::default()), async {
            let answer = call.await;
            (answer, NOTES.with(|notes| notes.take()))
        })
        .await
}

/// Notes in the current request's slot, if it has one (a task's call
/// runs apart: none).
pub(crate) fn note(write: impl FnOnce(&mut CallNotes)) {
    let _ = NOTES.try_with(|notes| write(&mut notes.borrow_mut()));
}

/// Notes the toolkit's record of the call.
pub(crate) fn note_call(record: &proto_ai_tools::CallRecord<'_>) {
    note(|notes| {
        notes.rpc_method = match (record.rpc_service, record.rpc_method) {
            (Some(service), Some(method)) => Some(format!("{service}/{method}")),
            _ => None,
        };
        notes.grpc_status = record.grpc_status;
        notes.outcome = Some(record.outcome);
    });
}

/// Who made a call, as the event says it.
#[derive(Debug, Default)]
pub(crate) struct Caller {
    /// The OAuth principal: `sub` (else the client id) and `iss`.
    pub(crate) subject: Option<String>,
    pub(crate) issuer: Option<String>,
    pub(crate) client_id: Option<String>,
    /// Whose aliases the call used: the scope's key, a session's as a
    /// digest (a session id lets whoever holds it continue the session).
    pub(crate) scope: Option<String>,
}

impl Caller {
    /// The scope key `key` as the event writes it: the keys built from a
    /// principal or a header are digests already; a session's is the
    /// session id itself, written as the first 16 hex digits of its SHA-256.
    pub(crate) fn scope_of(key: &str, session: bool) -> String {
        if !session {
            return key.to_owned();
        }
        let digest = Sha256::digest(key.as_bytes());
        let mut text = String::from("session-");
        for byte in &digest[..8] {
            text.push_str(&format!("{byte:02x}"));
        }
        text
    }
}

/// Writes the audit event of one `tools/call` of `tool`: `error` when its
/// answer was an error (a tool error or a refused request), after `took`.
pub(crate) fn record(tool: &str, caller: &Caller, notes: &CallNotes, error: bool, took: Duration) {
    let tool: String = tool.chars().take(MAX_TOOL_NAME_CHARS).collect();
    tracing::info!(
        target: AUDIT_TARGET,
        tool = tool.as_str(),
        principal = caller.subject.as_deref(),
        issuer = caller.issuer.as_deref(),
        client_id = caller.client_id.as_deref(),
        scope = caller.scope.as_deref(),
        rpc.method = notes.rpc_method.as_deref(),
        rpc.grpc.status_code = notes.grpc_status.map(|code| code as i32),
        grpc_status = notes.grpc_status.map(proto_ai_tools::transport::Code::name),
        outcome = notes.outcome,
        error,
        duration_ms = took.as_secs_f64() * 1e3,
        consent = notes.consent.unwrap_or("none"),
        "tools/call"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_scope_is_written_as_a_digest_and_others_as_they_are() {
        let id = "5f0c6f0e-0a4c-4c59-9a53-6a4f6d7c1e2b";
        let written = Caller::scope_of(id, true);
        assert!(written.starts_with("session-") && written.len() == "session-".len() + 16);
        assert!(!written.contains(id));
        assert_eq!(written, Caller::scope_of(id, true));
        assert_eq!(Caller::scope_of("header-ab12", false), "header-ab12");
    }

    #[tokio::test]
    async fn notes_reach_only_the_request_that_made_them() {
        let ((), notes) = noted(async { note(|n| n.consent = Some("accepted")) }).await;
        assert_eq!(notes.consent, Some("accepted"));
        let ((), other) = noted(async {}).await;
        assert_eq!(other.consent, None);
        // Outside a request nothing is noted, and nothing fails.
        note(|n| n.consent = Some("declined"));
    }
}
