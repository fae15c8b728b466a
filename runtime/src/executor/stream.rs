//! A server stream collected into one tool result, within bounds.

use std::future::Future;
use std::time::Duration;

use serde_json::Value;

use super::sentences::{CallError, status_sentence};
use crate::alias::AliasManager;
use crate::transport::{BoxFuture, CallOptions, Code, MessageStream, Status};

/// Bounds on collecting a server stream into one tool result. The call
/// stops at the first bound reached (the service sees it cancelled), and
/// the result says which one it was.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// let mut options = proto_ai_tools::executor::ExecutorOptions::default();
/// options.stream.max_messages = 20;
/// options.stream.max_time = Duration::from_secs(5);
/// assert_eq!(options.stream.max_bytes, 1024 * 1024);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StreamLimits {
    /// The most messages collected (default 100).
    pub max_messages: usize,
    /// The most bytes of messages collected, as encoded on the wire
    /// (default 1 MiB); the message that would pass it is left out.
    pub max_bytes: usize,
    /// The longest time spent collecting (default 30 s).
    pub max_time: Duration,
}

impl Default for StreamLimits {
    fn default() -> Self {
        Self {
            max_messages: 100,
            max_bytes: 1024 * 1024,
            max_time: Duration::from_secs(30),
        }
    }
}

/// A server stream collected into `{"messages": [...]}`, within `limits`;
/// `"stopped_early"` says why when a bound, or the service failing after
/// some messages, ended it first. `open` opens the stream, `to_json` writes
/// one message's bytes as aliased JSON, and a status that ends the stream
/// after some messages is told as `tool`'s, its ids given aliases by
/// `aliases`. Dropping the stream on the way out cancels the call at the
/// service.
pub(super) async fn collect_stream<'s, J, F>(
    tool: &str,
    aliases: &AliasManager,
    limits: &StreamLimits,
    options: &CallOptions,
    open: impl FnOnce() -> BoxFuture<'s, Result<Box<dyn MessageStream + 's>, Status>>,
    to_json: J,
) -> Result<String, CallError>
where
    J: Fn(Vec<u8>) -> F,
    F: Future<Output = Result<String, CallError>>,
{
    let started = tokio::time::Instant::now();
    // The call's own deadline, when it comes first, ends the collection
    // as a deadline does: with `DEADLINE_EXCEEDED` if nothing arrived.
    let call_deadline = options.timeout.filter(|t| *t < limits.max_time);
    let deadline = started + call_deadline.unwrap_or(limits.max_time);
    // The same bound covers opening the stream: a server slow to answer
    // at all holds the call no longer than one slow to send.
    let deadline_exceeded = || Status::new(Code::DeadlineExceeded, "deadline exceeded");
    let opened = tokio::time::timeout_at(deadline, open()).await;
    let mut stream = opened
        .map_err(|_| CallError::Status(deadline_exceeded()))?
        .map_err(CallError::Status)?;
    let mut messages: Vec<String> = Vec::new();
    let mut bytes = 0usize;
    let stopped_early = loop {
        if messages.len() >= limits.max_messages {
            break Some(format!(
                "after {}, the most one call collects; more may follow",
                messages_counted(limits.max_messages)
            ));
        }
        let message = match tokio::time::timeout_at(deadline, stream.next_encoded()).await {
            Err(_) if call_deadline.is_some() => {
                let status = deadline_exceeded();
                if messages.is_empty() {
                    return Err(CallError::Status(status));
                }
                break Some(status_sentence(tool, aliases, &status));
            }
            Err(_) => {
                break Some(format!(
                    "after {} s, the longest one call collects; more may follow",
                    limits.max_time.as_secs_f64()
                ));
            }
            Ok(None) => break None,
            Ok(Some(Err(status))) if messages.is_empty() => {
                return Err(CallError::Status(status));
            }
            Ok(Some(Err(status))) => break Some(status_sentence(tool, aliases, &status)),
            Ok(Some(Ok(message))) => message,
        };
        let size = message.len();
        if bytes + size > limits.max_bytes {
            break Some(format!(
                "after {}: the next one would pass {} bytes, the most one call collects; more may follow",
                messages_counted(messages.len()),
                limits.max_bytes
            ));
        }
        bytes += size;
        let json = match to_json(message).await {
            Ok(json) => json,
            // A message that does not decode ends the collection; what
            // came before it stands.
            Err(CallError::Unreadable(problem)) if !messages.is_empty() => {
                break Some(format!(
                    "after {}: the next one cannot be read ({problem}); the rest of the stream was not collected",
                    messages_counted(messages.len())
                ));
            }
            Err(e) => return Err(e),
        };
        messages.push(json);
        if let Some(progress) = &options.progress {
            progress.report(messages.len() as u64);
        }
    };
    drop(stream);
    let mut out = String::with_capacity(bytes + 32);
    out.push_str("{\"messages\":[");
    out.push_str(&messages.join(","));
    out.push(']');
    if let Some(reason) = stopped_early {
        out.push_str(",\"stopped_early\":");
        out.push_str(&Value::String(reason).to_string());
    }
    out.push('}');
    Ok(out)
}

/// "1 message", "2 messages": how many a stream had brought when it stopped.
fn messages_counted(n: usize) -> String {
    if n == 1 {
        "1 message".to_owned()
    } else {
        format!("{n} messages")
    }
}
