//! What the model is told when a call fails: a sentence for each way a call
//! can fail, and for a gRPC status, what its code means and the server's
//! message made fit to pass on.

use crate::alias::{AliasError, AliasManager};
use crate::result::{store_after_call, store_before_call, warn_failure};
use crate::store::StoreError;
use crate::transport::{Code, Origin, Status};

/// Why a call gave no answer for the model.
pub(super) enum CallError {
    /// The model's arguments are wrong; the message says how.
    Arguments(String),
    /// The service answered with an error status.
    Status(Status),
    /// The service answered, but its answer does not decode as the tool's
    /// response type: the call took effect, and what it returned is lost.
    Unreadable(String),
    /// The service answered, but the conversation cannot take its ids.
    AliasLimit(AliasError),
    /// The alias store was down before the call: nothing was sent. Its
    /// cause goes to the logs, never to the model.
    StoreBeforeCall(StoreError),
    /// The alias store was down after the call: the answer is withheld. Its
    /// cause goes to the logs, never to the model.
    StoreAfterCall(StoreError),
    /// Our bug or a broken pool; nothing the model can fix.
    Internal(String),
}

impl CallError {
    /// The kind of failure, as a trace records it and as the `outcome` of
    /// the logs (guide/src/observability.md, "Logs": a stable list); never the message, which
    /// may hold what the model or the service sent.
    pub(super) fn kind(&self) -> &'static str {
        match self {
            CallError::Arguments(_) => "arguments",
            CallError::Status(status) => status_outcome(status),
            CallError::Unreadable(_) => "unreadable_response",
            CallError::AliasLimit(_) => "alias_limit",
            CallError::StoreBeforeCall(_) => "store_before_call",
            CallError::StoreAfterCall(_) => "store_after_call",
            CallError::Internal(_) => "internal",
        }
    }
}

/// The `outcome` of a call that ended with `status`: the service's answer,
/// or the transport's own failure (guide/src/observability.md, "Logs").
pub(super) fn status_outcome(status: &Status) -> &'static str {
    match status.origin {
        Origin::Service => "status",
        Origin::Unreached => "unreachable",
        Origin::Lost => "connection_lost",
    }
}

/// What the model is told when `tool`'s call failed with `error`; a
/// failure an operator acts on (the store, an unreadable answer, an
/// internal error) is logged at WARN with its cause first.
pub(super) async fn failure_sentence(
    tool: &str,
    aliases: &AliasManager,
    error: CallError,
) -> String {
    match &error {
        CallError::StoreBeforeCall(e) | CallError::StoreAfterCall(e) => {
            warn_failure(tool, error.kind(), e.message());
        }
        CallError::Unreadable(cause) | CallError::Internal(cause) => {
            warn_failure(tool, error.kind(), cause);
        }
        // A transport's failure is logged by `status_sentence`, which
        // every status passes through.
        CallError::Arguments(_) | CallError::Status(_) | CallError::AliasLimit(_) => {}
    }
    match error {
        CallError::Arguments(message) => {
            format!("{tool}: {message}")
        }
        CallError::Status(status) => {
            // Best effort: a store that is down leaves unknown ids as they are.
            let _ = aliases.fetch_text(&status.message).await;
            status_sentence(tool, aliases, &status)
        }
        CallError::Unreadable(problem) => format!(
            "{} ran and the service answered, but the answer cannot be read: {problem}. A retry would fail the same way, and the call took effect: do not repeat it (when it creates or changes something, check first, for example by listing); tell the user.",
            tool
        ),
        CallError::StoreBeforeCall(_) => store_before_call(tool),
        CallError::StoreAfterCall(_) => store_after_call(tool),
        CallError::AliasLimit(e) => format!(
            "{} ran and the service answered, but the answer is withheld: {e}. Do not retry; tell the user.",
            tool
        ),
        CallError::Internal(message) => format!(
            "{} could not run because of an internal error ({message}); do not retry, tell the user",
            tool
        ),
    }
}

/// What the model is told when `tool`'s call ended with `status`: the
/// server's message, its ids given aliases, and what the code means. A
/// transport's own failure ([`Origin`]) is said without its message, which
/// names hosts and system errors; that goes to the logs at WARN.
pub(super) fn status_sentence(tool: &str, aliases: &AliasManager, status: &Status) -> String {
    match status.origin {
        Origin::Service => {}
        Origin::Unreached => {
            warn_failure(tool, status_outcome(status), &status.message);
            return format!(
                "{tool} could not reach its service, so nothing was sent. The service is unreachable right now; a retry may help: try again in a moment, or tell the user if it keeps failing."
            );
        }
        Origin::Lost => {
            warn_failure(tool, status_outcome(status), &status.message);
            return format!(
                "{tool} lost its connection to the service after the call was sent, so it may or may not have taken effect. When it creates or changes something, check before repeating it (for example by listing); a retry may help: try again in a moment, or tell the user if it keeps failing."
            );
        }
    }
    let message = aliases.aliasify_text(&clean_message(&status.message));
    let message = message.trim().trim_end_matches('.');
    let hint = status_hint(status.code);
    if message.is_empty() {
        format!("{} failed with gRPC status {}. {hint}", tool, status.code)
    } else {
        format!(
            "{} failed with gRPC status {}: {message}. {hint}",
            tool, status.code
        )
    }
}

/// What a status code means for the model: what happened, and whether a retry may help.
pub(super) fn status_hint(code: Code) -> &'static str {
    match code {
        Code::Ok => {
            "The service reported success but sent no usable answer; do not retry, tell the user."
        }
        Code::Cancelled => {
            "The call was cancelled before it finished and may or may not have taken effect; a retry may help, but check first (for example by listing) when the call creates or changes something."
        }
        Code::Unknown => {
            "The service failed for an unknown reason; a retry is unlikely to help, tell the user if it happens again."
        }
        Code::InvalidArgument => {
            "The service rejected the arguments; do not retry as is: fix the arguments and call the tool again."
        }
        Code::DeadlineExceeded => {
            "The call took too long and may or may not have taken effect; try again later (check first when it creates or changes something) or tell the user."
        }
        Code::NotFound => {
            "Something the call refers to does not exist; do not retry with the same ids: check the ids you passed and use only ids returned by tools."
        }
        Code::AlreadyExists => {
            "What the call would create exists already; do not retry: use the existing one."
        }
        Code::PermissionDenied => {
            "The user is not allowed to do this; do not retry, tell the user."
        }
        Code::ResourceExhausted => {
            "A quota or rate limit was reached; a retry after a pause may help, or tell the user."
        }
        Code::FailedPrecondition => {
            "The system is not in a state that allows this; do not retry as is: fix the arguments or change what the call depends on first."
        }
        Code::Aborted => "The call conflicted with a concurrent change; a retry may help.",
        Code::OutOfRange => {
            "A value is outside the valid range; do not retry as is: fix the arguments and call the tool again."
        }
        Code::Unimplemented => {
            "The service does not support this operation; do not retry, tell the user."
        }
        Code::Internal => {
            "The service failed internally; a retry is unlikely to help, tell the user."
        }
        Code::Unavailable => {
            "The service is unreachable right now; a retry may help: try again later or tell the user."
        }
        Code::DataLoss => "Data was lost or corrupted; do not retry, tell the user.",
        Code::Unauthenticated => "The call was not authenticated; do not retry, tell the user.",
    }
}

/// The longest server message passed on, in characters.
pub(super) const MAX_STATUS_CHARS: usize = 300;

/// A server's (or transport's) status message made fit for the model: its
/// first line only (no stack trace), file-system paths replaced by `<path>`,
/// at most [`MAX_STATUS_CHARS`] characters.
pub(super) fn clean_message(message: &str) -> String {
    let first = message
        .split(['\n', '\r'])
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut out = String::with_capacity(first.len());
    for (i, token) in first.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let core = token.trim_matches(|c: char| PATH_PUNCTUATION.contains(c));
        if looks_like_path(core) {
            // Keep the punctuation around the path: `(see <path>)`.
            let start = token.len()
                - token
                    .trim_start_matches(|c: char| PATH_PUNCTUATION.contains(c))
                    .len();
            out.push_str(&token[..start]);
            out.push_str("<path>");
            out.push_str(&token[start + core.len()..]);
        } else {
            out.push_str(token);
        }
    }
    match out.char_indices().nth(MAX_STATUS_CHARS) {
        None => out,
        Some((cut, _)) => format!("{}…", &out[..cut]),
    }
}

const PATH_PUNCTUATION: &str = "()[]{}<>'\"`,;";

/// A file-system path or source location: `/home/u/x.rs:12`, `C:\\src\\a.go`,
/// `src/main.rs:40:7`. A gRPC method path (`/pkg.Service/Method`) is not one.
fn looks_like_path(t: &str) -> bool {
    let windows = t.len() > 2 && t.as_bytes()[1] == b':' && t[2..].starts_with('\\');
    let absolute = [
        "/home/",
        "/root/",
        "/usr/",
        "/var/",
        "/tmp/",
        "/opt/",
        "/etc/",
        "/srv/",
        "/Users/",
        "/app/",
        "/build/",
        "/src/",
        "/workspace/",
        "/rustc/",
        "/proc/",
    ]
    .iter()
    .any(|p| t.starts_with(p));
    let no_line = t.trim_end_matches(|c: char| c.is_ascii_digit() || c == ':');
    let source = (t.contains('/') || t.contains('\\'))
        && [
            ".rs", ".go", ".py", ".java", ".kt", ".js", ".ts", ".rb", ".cs", ".cc", ".cpp", ".c",
            ".h", ".php", ".scala", ".swift",
        ]
        .iter()
        .any(|ext| no_line.ends_with(ext));
    windows || absolute || source
}
