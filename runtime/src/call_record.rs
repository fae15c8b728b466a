//! What one tool call did, told to an observer when it ends
//! ([`CallOptions::observe`](crate::CallOptions::observe)): what metrics,
//! traces and an audit trail are made of. Never the arguments nor the
//! answer: a record holds names, an outcome, a status and times.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::transport::Code;

/// One tool call as it ended: which tool, how it ended, what the service
/// answered and how long each part took.
///
/// The `outcome` is the one the `tool call` log line writes (a stable list:
/// `ok`, `arguments`, `status`, `unreachable`, `connection_lost`,
/// `alias_limit`, `unreadable_response`, `store_before_call`,
/// `store_after_call`, `internal`, and for native tools `error`,
/// `store_in_tool`, `options`; guide/src/observability.md, "Logs").
///
/// # Examples
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use proto_ai_tools::{CallOptions, CallRecord};
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let kept = seen.clone();
/// let options = CallOptions::new().observe(move |record: &CallRecord<'_>| {
///     kept.lock().unwrap().push((record.tool.to_owned(), record.outcome));
/// });
/// // A toolkit or an executor calls it once the call has ended:
/// let observer = options.observer.as_ref().expect("set");
/// observer.record(&CallRecord::new("links_get", "ok", std::time::Duration::from_millis(3)));
/// assert_eq!(seen.lock().unwrap()[0], ("links_get".to_owned(), "ok"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallRecord<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// The gRPC service (`links.v1.LinkService`); `None` for a native tool.
    pub rpc_service: Option<&'a str>,
    /// The gRPC method (`CreateLink`); `None` for a native tool.
    pub rpc_method: Option<&'a str>,
    /// How it ended, as the `tool call` log line says it.
    pub outcome: &'static str,
    /// The gRPC status of the call to the service: [`Code::Ok`] when it
    /// answered (the answer may still have been withheld: see `outcome`),
    /// the code of its error, or the transport's when the service was not
    /// reached or the connection broke; `None` when nothing was sent (the
    /// arguments were refused, the alias store was down first) or for a
    /// native tool.
    pub grpc_status: Option<Code>,
    /// The whole call, from its arguments to its result.
    pub duration: Duration,
    /// The part spent in the gRPC call: from sending the request to its
    /// answer, or to a server stream's end (its messages' aliases
    /// included); `None` when nothing was sent.
    pub backend: Option<Duration>,
}

impl<'a> CallRecord<'a> {
    /// A record of `tool`'s call that ended with `outcome` after
    /// `duration`, with no gRPC method, status nor backend time.
    ///
    /// # Examples
    ///
    /// ```
    /// let record = proto_ai_tools::CallRecord::new("lookup", "error", std::time::Duration::ZERO);
    /// assert_eq!(record.grpc_status, None);
    /// ```
    pub fn new(tool: &'a str, outcome: &'static str, duration: Duration) -> Self {
        Self {
            tool,
            rpc_service: None,
            rpc_method: None,
            outcome,
            grpc_status: None,
            duration,
            backend: None,
        }
    }

    /// Whether the call failed (any outcome but `ok`).
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::CallRecord;
    /// assert!(!CallRecord::new("t", "ok", std::time::Duration::ZERO).is_error());
    /// assert!(CallRecord::new("t", "status", std::time::Duration::ZERO).is_error());
    /// ```
    pub fn is_error(&self) -> bool {
        self.outcome != "ok"
    }
}

/// A per-call observer of how the call ended
/// ([`CallOptions::observe`](crate::CallOptions::observe)): called once,
/// with the [`CallRecord`], before the result is returned. Equal only to
/// its own clones.
#[derive(Clone)]
pub struct CallObserver(Arc<dyn Fn(&CallRecord<'_>) + Send + Sync>);

impl CallObserver {
    /// An observer that calls `record`.
    pub fn new(record: impl Fn(&CallRecord<'_>) + Send + Sync + 'static) -> Self {
        Self(Arc::new(record))
    }

    /// Tells the observer how a call ended.
    pub fn record(&self, record: &CallRecord<'_>) {
        (self.0)(record);
    }
}

impl PartialEq for CallObserver {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for CallObserver {}

impl fmt::Debug for CallObserver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CallObserver(..)")
    }
}
