//! How a tool call reaches its service: the [`Transport`] trait, its error
//! type, per-call options and an in-process implementation.

#[cfg(feature = "tonic")]
mod tonic_builder;
#[cfg(feature = "tonic")]
mod tonic_transport;
pub(crate) mod wire;

#[cfg(feature = "tonic")]
pub use tonic_builder::{TonicTransportBuilder, TransportError};
#[cfg(feature = "tonic")]
pub use tonic_transport::TonicTransport;

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use prost_reflect::{DynamicMessage, MethodDescriptor, ReflectMessage};
use proto_ai_tools_schema::HostProfile;

/// A boxed, sendable future, as [`Transport::unary`] returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Carries one RPC to a service and brings back its response: a unary
/// call, or (where the transport can) a server-streaming one.
///
/// Object safe: `Arc<dyn Transport>` is itself a `Transport`. Implementations
/// ship with the crate for tonic ([`TonicTransport`],
/// feature `tonic`) and for in-process handlers ([`InProcessTransport`]).
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use proto_ai_tools::{Transport, transport::InProcessTransport};
///
/// let shared: Arc<dyn Transport> = Arc::new(InProcessTransport::new());
/// fn takes_transport<T: Transport>(_: T) {}
/// takes_transport(shared);
/// ```
pub trait Transport: Send + Sync + 'static {
    /// Calls `method` with `request` (a message of the method's input type)
    /// and returns the response (a message of its output type).
    fn unary<'a>(
        &'a self,
        method: &'a MethodDescriptor,
        request: DynamicMessage,
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<DynamicMessage, Status>>;

    /// Calls `method` as [`unary`](Self::unary) does and returns the
    /// response in protobuf's wire format, as the service sent it. The
    /// executor writes those bytes straight out as aliased JSON, which is
    /// faster than decoding them into a `DynamicMessage` first.
    ///
    /// The default encodes what [`unary`](Self::unary) returns; a transport
    /// that receives bytes (as [`TonicTransport`]
    /// does) returns them instead.
    fn unary_encoded<'a>(
        &'a self,
        method: &'a MethodDescriptor,
        request: DynamicMessage,
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<Vec<u8>, Status>> {
        Box::pin(async move {
            let response = self.unary(method, request, options).await?;
            Ok(prost::Message::encode_to_vec(&response))
        })
    }

    /// Calls the server-streaming `method` with `request` and returns its
    /// messages as they arrive. Dropping the stream cancels the call.
    ///
    /// The default answers `UNIMPLEMENTED`: a transport that cannot stream
    /// still carries every unary tool.
    fn server_streaming<'a>(
        &'a self,
        method: &'a MethodDescriptor,
        request: DynamicMessage,
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<Box<dyn MessageStream + 'a>, Status>> {
        let _ = (request, options);
        Box::pin(async move {
            Err(Status::new(
                Code::Unimplemented,
                format!(
                    "this transport cannot call the server-streaming method `{}`",
                    method.full_name()
                ),
            ))
        })
    }
}

/// The messages of one server-streaming call, in order; dropping it cancels
/// the call.
pub trait MessageStream: Send {
    /// The next message, `None` once the service has ended the stream, or
    /// the status it ended with.
    fn next(&mut self) -> BoxFuture<'_, Option<Result<DynamicMessage, Status>>>;

    /// The next message as [`next`](Self::next) gives it, but in protobuf's
    /// wire format, as the service sent it: the executor writes those bytes
    /// straight out as aliased JSON, as it does a unary response
    /// ([`Transport::unary_encoded`]).
    ///
    /// The default encodes what [`next`](Self::next) returns; a stream that
    /// receives bytes (as [`TonicTransport`]'s does)
    /// returns them instead.
    ///
    /// # Examples
    ///
    /// A stream that only decodes still gives bytes:
    ///
    /// ```
    /// use proto_ai_tools::transport::{BoxFuture, MessageStream, Status};
    /// use prost_reflect::{DescriptorPool, DynamicMessage, Value};
    ///
    /// struct Decoded(Vec<DynamicMessage>);
    ///
    /// impl MessageStream for Decoded {
    ///     fn next(&mut self) -> BoxFuture<'_, Option<Result<DynamicMessage, Status>>> {
    ///         let next = self.0.pop().map(Ok);
    ///         Box::pin(async move { next })
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// // A `google.protobuf.Duration` of 3 s, from prost-reflect's own pool.
    /// let duration = DescriptorPool::global()
    ///     .get_message_by_name("google.protobuf.Duration")
    ///     .expect("a well-known type");
    /// let mut three_seconds = DynamicMessage::new(duration);
    /// three_seconds.set_field_by_name("seconds", Value::I64(3));
    /// let mut stream = Decoded(vec![three_seconds]);
    /// let bytes = stream.next_encoded().await.expect("a message").expect("ok");
    /// assert_eq!(bytes, [0x08, 0x03]);
    /// assert!(stream.next_encoded().await.is_none());
    /// # }
    /// ```
    fn next_encoded(&mut self) -> BoxFuture<'_, Option<Result<Vec<u8>, Status>>> {
        Box::pin(async move {
            let message = self.next().await?;
            Some(message.map(|message| prost::Message::encode_to_vec(&message)))
        })
    }
}

/// `Arc<T>` and `Box<T>` carry calls as the `T` inside does.
macro_rules! forward_transport {
    ($($pointer:ident),*) => {$(
        impl<T: Transport + ?Sized> Transport for $pointer<T> {
            fn unary<'a>(
                &'a self,
                method: &'a MethodDescriptor,
                request: DynamicMessage,
                options: &'a CallOptions,
            ) -> BoxFuture<'a, Result<DynamicMessage, Status>> {
                (**self).unary(method, request, options)
            }

            fn unary_encoded<'a>(
                &'a self,
                method: &'a MethodDescriptor,
                request: DynamicMessage,
                options: &'a CallOptions,
            ) -> BoxFuture<'a, Result<Vec<u8>, Status>> {
                (**self).unary_encoded(method, request, options)
            }

            fn server_streaming<'a>(
                &'a self,
                method: &'a MethodDescriptor,
                request: DynamicMessage,
                options: &'a CallOptions,
            ) -> BoxFuture<'a, Result<Box<dyn MessageStream + 'a>, Status>> {
                (**self).server_streaming(method, request, options)
            }
        }
    )*};
}

forward_transport!(Arc, Box);

/// Options of one call: a deadline and request metadata (headers), for
/// example the end user's credentials and tenant.
///
/// A [`Toolkit`](crate::Toolkit), a [`ProtoExecutor`](crate::executor::ProtoExecutor)
/// or an MCP server can hold defaults; the options of one call override them
/// key by key ([`overriding`](Self::overriding)). Generated tools send them as
/// gRPC metadata; native tools read them from their
/// [`ToolContext`](crate::ToolContext). Keys are checked before anything is
/// sent ([`check`](Self::check)); values never appear in errors or in `Debug`
/// output.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// let options = proto_ai_tools::CallOptions::new()
///     .timeout(Duration::from_secs(5))
///     .metadata("authorization", "Bearer t0ken")
///     .binary_metadata("trace-bin", [1, 2, 3]);
/// assert_eq!(options.metadata.len(), 1);
/// assert!(!format!("{options:?}").contains("t0ken"));
/// assert!(options.check().is_ok());
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct CallOptions {
    /// How long the call may take; sent as `grpc-timeout` and enforced locally.
    pub timeout: Option<Duration>,
    /// ASCII metadata sent with the request, in order (keys lowercase).
    pub metadata: Vec<(String, String)>,
    /// Binary metadata (keys ending in `-bin`), sent base64-encoded as gRPC
    /// requires.
    pub binary_metadata: Vec<(String, Vec<u8>)>,
    /// Told the count of messages received so far, after each message of a
    /// server-streaming call (an MCP server turns it into progress
    /// notifications).
    pub progress: Option<Progress>,
    /// Told how the call ended, once, before its result is returned (see
    /// [`CallRecord`]): what an MCP server makes its
    /// metrics and audit events of.
    pub observer: Option<CallObserver>,
    /// Asked for metadata as the request is sent, inside the call's
    /// `ai_tools.grpc` span: its answer goes over the options' own of the
    /// same keys. An MCP server with OpenTelemetry on sends that span's
    /// trace context this way (see [`Propagator`]).
    pub propagator: Option<Propagator>,
    /// The host the model's arguments came through, if known. Where it
    /// parses numbers as doubles ([`HostProfile::JavaScript`]), an integer
    /// sent as a JSON number past ±(2^53 − 1) may have been rounded on the
    /// way, so it is refused, asking for the string of its digits (the form
    /// such a host's schema gives). An MCP server sets it to its own
    /// profile.
    pub host: Option<HostProfile>,
}

/// A per-call observer of a server stream's progress: called with the count
/// of messages received so far. Equal only to its own clones.
///
/// # Examples
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::sync::Arc;
/// let seen = Arc::new(AtomicU64::new(0));
/// let counter = seen.clone();
/// let options = proto_ai_tools::CallOptions::new()
///     .progress(move |received| counter.store(received, Ordering::Relaxed));
/// options.progress.as_ref().expect("set").report(3);
/// assert_eq!(seen.load(Ordering::Relaxed), 3);
/// ```
#[derive(Clone)]
pub struct Progress(Arc<dyn Fn(u64) + Send + Sync>);

impl Progress {
    /// Reports `received` messages so far.
    pub fn report(&self, received: u64) {
        (self.0)(received);
    }
}

impl PartialEq for Progress {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Progress {}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Progress(..)")
    }
}

/// Metadata made as a request is sent, inside its `ai_tools.grpc` span:
/// what carries a trace on to the service (W3C `traceparent` and
/// `tracestate`) names that span, which exists only then. Equal only to its
/// own clones.
///
/// # Examples
///
/// ```
/// let options = proto_ai_tools::CallOptions::new()
///     .metadata("traceparent", "from-the-caller")
///     .propagate(|| vec![("traceparent".to_owned(), "of-this-call".to_owned())]);
/// let sent = options.propagated();
/// assert_eq!(sent.metadata, [("traceparent".to_owned(), "of-this-call".to_owned())]);
/// ```
#[derive(Clone)]
pub struct Propagator(Arc<dyn Fn() -> Vec<(String, String)> + Send + Sync>);

impl Propagator {
    /// The metadata to send now.
    pub fn metadata(&self) -> Vec<(String, String)> {
        (self.0)()
    }
}

impl PartialEq for Propagator {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Propagator {}

impl fmt::Debug for Propagator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Propagator(..)")
    }
}

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
/// ([`CallOptions::observe`]): called once,
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

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Values are credentials more often than not: keys only.
        let keys: Vec<&str> = self
            .metadata
            .iter()
            .map(|(k, _)| k.as_str())
            .chain(self.binary_metadata.iter().map(|(k, _)| k.as_str()))
            .collect();
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("metadata_keys", &keys)
            .field("progress", &self.progress.is_some())
            .field("observer", &self.observer.is_some())
            .field("propagator", &self.propagator.is_some())
            .field("host", &self.host)
            .finish()
    }
}

impl CallOptions {
    /// No deadline, no metadata.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(proto_ai_tools::CallOptions::new(), proto_ai_tools::CallOptions::default());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the deadline of the call.
    ///
    /// # Examples
    ///
    /// ```
    /// let o = proto_ai_tools::CallOptions::new().timeout(std::time::Duration::from_millis(250));
    /// assert!(o.timeout.is_some());
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Adds one ASCII metadata entry (the key is lowercased).
    ///
    /// # Examples
    ///
    /// ```
    /// let o = proto_ai_tools::CallOptions::new().metadata("X-Tenant", "acme");
    /// assert_eq!(o.metadata[0], ("x-tenant".to_owned(), "acme".to_owned()));
    /// ```
    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata
            .push((key.into().to_ascii_lowercase(), value.into()));
        self
    }

    /// Adds one binary metadata entry; its key must end in `-bin`.
    ///
    /// # Examples
    ///
    /// ```
    /// let o = proto_ai_tools::CallOptions::new().binary_metadata("trace-bin", [0xff, 0]);
    /// assert_eq!(o.binary_metadata[0].1, [0xff, 0]);
    /// ```
    pub fn binary_metadata(mut self, key: impl Into<String>, value: impl Into<Vec<u8>>) -> Self {
        self.binary_metadata
            .push((key.into().to_ascii_lowercase(), value.into()));
        self
    }

    /// Sets the observer of a server stream's progress (see [`Progress`]).
    pub fn progress(mut self, report: impl Fn(u64) + Send + Sync + 'static) -> Self {
        self.progress = Some(Progress(Arc::new(report)));
        self
    }

    /// Sets what makes metadata as the request is sent (see
    /// [`Propagator`]).
    pub fn propagate(
        mut self,
        metadata: impl Fn() -> Vec<(String, String)> + Send + Sync + 'static,
    ) -> Self {
        self.propagator = Some(Propagator(Arc::new(metadata)));
        self
    }

    /// Sets the observer told how the call ended (see
    /// [`CallRecord`]).
    pub fn observe(mut self, record: impl Fn(&CallRecord<'_>) + Send + Sync + 'static) -> Self {
        self.observer = Some(CallObserver::new(record));
        self
    }

    /// Sets the host the model's arguments came through (see
    /// [`host`](Self::host)).
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::schema::HostProfile;
    /// let o = proto_ai_tools::CallOptions::new().through_host(HostProfile::JavaScript);
    /// assert_eq!(o.host, Some(HostProfile::JavaScript));
    /// ```
    pub fn through_host(mut self, host: HostProfile) -> Self {
        self.host = Some(host);
        self
    }

    /// These options with `call`'s on top: `call`'s deadline if it has one,
    /// and for every metadata key `call` sets, only `call`'s values.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::CallOptions;
    /// let defaults = CallOptions::new().metadata("x-tenant", "acme").metadata("authorization", "service");
    /// let call = CallOptions::new().metadata("authorization", "Bearer user-42");
    /// let merged = defaults.overriding(&call);
    /// assert_eq!(merged.metadata, [
    ///     ("x-tenant".to_owned(), "acme".to_owned()),
    ///     ("authorization".to_owned(), "Bearer user-42".to_owned()),
    /// ]);
    /// ```
    pub fn overriding(&self, call: &CallOptions) -> CallOptions {
        let mut metadata: Vec<(String, String)> = self
            .metadata
            .iter()
            .filter(|(k, _)| !call.metadata.iter().any(|(c, _)| c == k))
            .cloned()
            .collect();
        metadata.extend(call.metadata.iter().cloned());
        let mut binary_metadata: Vec<(String, Vec<u8>)> = self
            .binary_metadata
            .iter()
            .filter(|(k, _)| !call.binary_metadata.iter().any(|(c, _)| c == k))
            .cloned()
            .collect();
        binary_metadata.extend(call.binary_metadata.iter().cloned());
        CallOptions {
            timeout: call.timeout.or(self.timeout),
            metadata,
            binary_metadata,
            progress: call.progress.clone().or_else(|| self.progress.clone()),
            observer: call.observer.clone().or_else(|| self.observer.clone()),
            propagator: call.propagator.clone().or_else(|| self.propagator.clone()),
            host: call.host.or(self.host),
        }
    }

    /// The options a request is sent with: these, with the
    /// [propagator](Self::propagate)'s metadata over their own of the same
    /// keys. Called inside the call's `ai_tools.grpc` span.
    pub fn propagated(&self) -> std::borrow::Cow<'_, CallOptions> {
        let Some(propagator) = &self.propagator else {
            return std::borrow::Cow::Borrowed(self);
        };
        let mut made = CallOptions::new();
        for (key, value) in propagator.metadata() {
            made = made.metadata(key, value);
        }
        std::borrow::Cow::Owned(self.overriding(&made))
    }

    /// The options one call of a tool runs with, worked out in one place
    /// for every caller (an executor, a toolkit): `self` (the call's own)
    /// over `defaults` key by key, with the deadline the call's own, else the
    /// tool's (`tool_timeout`), else the defaults'; then checked.
    pub(crate) fn for_tool(
        &self,
        defaults: &CallOptions,
        tool_timeout: Option<Duration>,
    ) -> Result<CallOptions, String> {
        let mut merged = defaults.overriding(self);
        merged.timeout = self.timeout.or(tool_timeout).or(defaults.timeout);
        merged.check()?;
        Ok(merged)
    }

    /// Checks every key (lowercase `0-9a-z_.-`, not `grpc-` reserved; binary
    /// keys end in `-bin`, ASCII keys do not) and every ASCII value (visible
    /// ASCII and spaces). The error names the key, never the value.
    ///
    /// # Errors
    ///
    /// A sentence naming the first key at fault.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::CallOptions;
    /// assert!(CallOptions::new().metadata("x-user", "42").check().is_ok());
    /// let err = CallOptions::new().metadata("x user", "secret").check().unwrap_err();
    /// assert!(err.contains("`x user`") && !err.contains("secret"));
    /// assert!(CallOptions::new().metadata("trace-bin", "x").check().is_err());
    /// ```
    pub fn check(&self) -> Result<(), String> {
        let key_ok = |k: &str| {
            !k.is_empty()
                && !k.starts_with("grpc-")
                && k.bytes()
                    .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase() || b"_.-".contains(&b))
        };
        for (key, value) in &self.metadata {
            if !key_ok(key) || key.ends_with("-bin") {
                return Err(format!(
                    "metadata key `{key}` is not a valid ASCII gRPC metadata key (lowercase letters, digits, `_`, `.`, `-`; not `grpc-…`; `-bin` keys take binary values)"
                ));
            }
            if !value.bytes().all(|b| (0x20..=0x7e).contains(&b)) {
                return Err(format!(
                    "the value of metadata key `{key}` is not printable ASCII; send it under a `-bin` key as bytes"
                ));
            }
        }
        for (key, _) in &self.binary_metadata {
            if !key_ok(key) || !key.ends_with("-bin") {
                return Err(format!(
                    "binary metadata key `{key}` must be a valid gRPC metadata key ending in `-bin`"
                ));
            }
        }
        Ok(())
    }
}

/// A gRPC status code.
///
/// # Examples
///
/// ```
/// assert_eq!(proto_ai_tools::transport::Code::NotFound.name(), "NOT_FOUND");
/// assert_eq!(proto_ai_tools::transport::Code::from_i32(14), proto_ai_tools::transport::Code::Unavailable);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // the names are the gRPC codes
pub enum Code {
    Ok,
    Cancelled,
    Unknown,
    InvalidArgument,
    DeadlineExceeded,
    NotFound,
    AlreadyExists,
    PermissionDenied,
    ResourceExhausted,
    FailedPrecondition,
    Aborted,
    OutOfRange,
    Unimplemented,
    Internal,
    Unavailable,
    DataLoss,
    Unauthenticated,
}

impl Code {
    const ALL: [Code; 17] = [
        Code::Ok,
        Code::Cancelled,
        Code::Unknown,
        Code::InvalidArgument,
        Code::DeadlineExceeded,
        Code::NotFound,
        Code::AlreadyExists,
        Code::PermissionDenied,
        Code::ResourceExhausted,
        Code::FailedPrecondition,
        Code::Aborted,
        Code::OutOfRange,
        Code::Unimplemented,
        Code::Internal,
        Code::Unavailable,
        Code::DataLoss,
        Code::Unauthenticated,
    ];

    /// The code for a numeric value; out of range is `Unknown`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(proto_ai_tools::transport::Code::from_i32(99), proto_ai_tools::transport::Code::Unknown);
    /// ```
    pub fn from_i32(n: i32) -> Code {
        usize::try_from(n)
            .ok()
            .and_then(|i| Self::ALL.get(i).copied())
            .unwrap_or(Code::Unknown)
    }

    /// The canonical name, e.g. `NOT_FOUND`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(proto_ai_tools::transport::Code::DeadlineExceeded.name(), "DEADLINE_EXCEEDED");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Code::Ok => "OK",
            Code::Cancelled => "CANCELLED",
            Code::Unknown => "UNKNOWN",
            Code::InvalidArgument => "INVALID_ARGUMENT",
            Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
            Code::NotFound => "NOT_FOUND",
            Code::AlreadyExists => "ALREADY_EXISTS",
            Code::PermissionDenied => "PERMISSION_DENIED",
            Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Code::FailedPrecondition => "FAILED_PRECONDITION",
            Code::Aborted => "ABORTED",
            Code::OutOfRange => "OUT_OF_RANGE",
            Code::Unimplemented => "UNIMPLEMENTED",
            Code::Internal => "INTERNAL",
            Code::Unavailable => "UNAVAILABLE",
            Code::DataLoss => "DATA_LOSS",
            Code::Unauthenticated => "UNAUTHENTICATED",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed call: a gRPC code, a message, and who said it. Transport-neutral,
/// so [`Transport`] does not depend on tonic.
///
/// # Examples
///
/// ```
/// let s = proto_ai_tools::transport::Status::new(proto_ai_tools::transport::Code::NotFound, "no such link");
/// assert_eq!(s.to_string(), "NOT_FOUND: no such link");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct Status {
    /// The gRPC code.
    pub code: Code,
    /// The server's (or transport's) message.
    pub message: String,
    /// Whether the service said it, or the transport on its way there.
    pub origin: Origin,
}

/// Who failed a call ([`Status::origin`]), which decides what the model is
/// told: a service's message, made fit to pass on, or for a transport's own
/// failure only what happened and what to do (its message, which names
/// hosts, addresses and system errors, goes to the logs at WARN).
///
/// # Examples
///
/// ```
/// use proto_ai_tools::transport::{Code, Origin, Status};
/// assert_eq!(Status::new(Code::Unavailable, "maintenance").origin, Origin::Service);
/// let refused = Status::unreached(Code::Unavailable, "cannot connect to 10.0.0.7:50051: connection refused");
/// assert_eq!(refused.origin, Origin::Unreached);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Origin {
    /// The service answered with this status.
    #[default]
    Service,
    /// The transport could not reach the service (refused, unresolved, a
    /// TLS handshake that failed, not ready): nothing was sent.
    Unreached,
    /// The transport lost the call after it was sent (the connection
    /// broke): it may have taken effect.
    Lost,
}

impl Status {
    /// A status the service answered with `code` and `message`.
    ///
    /// # Examples
    ///
    /// ```
    /// let s = proto_ai_tools::transport::Status::new(proto_ai_tools::transport::Code::Internal, "boom");
    /// assert_eq!(s.code, proto_ai_tools::transport::Code::Internal);
    /// ```
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            origin: Origin::Service,
        }
    }

    /// A transport's own failure to reach the service: nothing was sent.
    /// `message` says why, for the logs; the model is not shown it.
    ///
    /// # Examples
    ///
    /// See [`Origin`].
    pub fn unreached(code: Code, message: impl Into<String>) -> Self {
        Self {
            origin: Origin::Unreached,
            ..Self::new(code, message)
        }
    }

    /// A call the transport lost after sending it (the connection broke):
    /// it may have taken effect. `message` says why, for the logs; the
    /// model is not shown it.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::transport::{Code, Origin, Status};
    /// let lost = Status::lost(Code::Unavailable, "connection reset by peer");
    /// assert_eq!(lost.origin, Origin::Lost);
    /// ```
    pub fn lost(code: Code, message: impl Into<String>) -> Self {
        Self {
            origin: Origin::Lost,
            ..Self::new(code, message)
        }
    }
}

#[cfg(feature = "tonic")]
impl From<tonic::Status> for Status {
    fn from(s: tonic::Status) -> Self {
        Status::new(Code::from_i32(s.code() as i32), s.message())
    }
}

type Handler = Arc<
    dyn Fn(DynamicMessage, CallOptions) -> BoxFuture<'static, Result<DynamicMessage, Status>>
        + Send
        + Sync,
>;

/// Calls services in the same process, without a network: one async
/// handler per method path (`/package.Service/Method`). Cheap to clone.
///
/// A method without a handler fails with `UNIMPLEMENTED`; a handler that
/// returns a message of the wrong type fails with `INTERNAL`.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::transport::{InProcessTransport, Status, Code};
///
/// let transport = InProcessTransport::new().with_handler(
///     "/links.v1.LinksService/CreateLink",
///     |_request, _options| async move { Err::<prost_reflect::DynamicMessage, _>(Status::new(Code::Unavailable, "maintenance")) },
/// );
/// assert!(transport.has_handler("/links.v1.LinksService/CreateLink"));
/// ```
#[derive(Clone, Default)]
pub struct InProcessTransport {
    handlers: HashMap<String, Handler>,
}

impl fmt::Debug for InProcessTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut paths: Vec<_> = self.handlers.keys().collect();
        paths.sort();
        f.debug_struct("InProcessTransport")
            .field("methods", &paths)
            .finish()
    }
}

impl InProcessTransport {
    /// A transport with no handlers.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!proto_ai_tools::transport::InProcessTransport::new().has_handler("/a.B/C"));
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the handler of `path` (`/package.Service/Method`).
    ///
    /// # Examples
    ///
    /// See [`InProcessTransport`].
    pub fn with_handler<F, Fut>(mut self, path: impl Into<String>, handler: F) -> Self
    where
        F: Fn(DynamicMessage, CallOptions) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<DynamicMessage, Status>> + Send + 'static,
    {
        self.handlers.insert(
            path.into(),
            Arc::new(move |req, opts| Box::pin(handler(req, opts))),
        );
        self
    }

    /// Whether a handler is registered for `path`.
    ///
    /// # Examples
    ///
    /// See [`InProcessTransport`].
    pub fn has_handler(&self, path: &str) -> bool {
        self.handlers.contains_key(path)
    }
}

/// The gRPC path of a method: `/package.Service/Method`.
pub(crate) fn method_path(method: &MethodDescriptor) -> String {
    format!("/{}/{}", method.parent_service().full_name(), method.name())
}

impl Transport for InProcessTransport {
    fn unary<'a>(
        &'a self,
        method: &'a MethodDescriptor,
        request: DynamicMessage,
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<DynamicMessage, Status>> {
        Box::pin(async move {
            let path = method_path(method);
            let Some(handler) = self.handlers.get(&path) else {
                return Err(Status::new(
                    Code::Unimplemented,
                    format!("no in-process handler for {path}"),
                ));
            };
            let call = handler(request, options.clone());
            let response = match options.timeout {
                Some(t) => tokio::time::timeout(t, call)
                    .await
                    .map_err(|_| Status::new(Code::DeadlineExceeded, "deadline exceeded"))??,
                None => call.await?,
            };
            let expected = method.output();
            if response.descriptor() != expected {
                return Err(Status::new(
                    Code::Internal,
                    format!(
                        "handler of {path} returned {} {} instead of {} {}",
                        proto_ai_tools_schema::names::article(response.descriptor().full_name()),
                        response.descriptor().full_name(),
                        proto_ai_tools_schema::names::article(expected.full_name()),
                        expected.full_name()
                    ),
                ));
            }
            Ok(response)
        })
    }
}
