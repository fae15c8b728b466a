//! [`Transport`] over a tonic [`Channel`](tonic::transport::Channel).

use prost::bytes::Buf as _;
use prost_reflect::{DynamicMessage, MessageDescriptor, MethodDescriptor};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::metadata::{AsciiMetadataValue, Binary, BinaryMetadataValue, MetadataKey};

use std::sync::Arc;

use crate::transport::tonic_builder::{Peer, classify};
use crate::transport::{
    BoxFuture, CallOptions, Code, MessageStream, Status, Transport, method_path,
};

/// Calls gRPC services through a tonic channel. Cheap to clone: clones share
/// the channel's connection.
///
/// The request path is `/{service}/{method}`; [`CallOptions`] metadata is
/// sent as ASCII request metadata and the timeout both as `grpc-timeout`
/// and as a local deadline (a server that ignores the header still cannot
/// hold the tool call longer).
///
/// [`TonicTransport::builder`] makes one from a URL, over TLS and mTLS
/// with feature `tls`; [`TonicTransport::new`] wraps a channel made with
/// tonic.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let channel = tonic::transport::Channel::from_static("http://127.0.0.1:50051").connect_lazy();
/// let transport = proto_ai_tools::transport::TonicTransport::new(channel);
/// # let _ = transport;
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct TonicTransport {
    pub(super) channel: tonic::transport::Channel,
    /// Where it goes when the builder made it: a failure to connect is then
    /// said as a [`TransportError`](crate::transport::TransportError) naming
    /// the host.
    pub(super) peer: Option<Arc<Peer>>,
}

impl TonicTransport {
    /// A transport over `channel`.
    ///
    /// # Examples
    ///
    /// See [`TonicTransport`].
    pub fn new(channel: tonic::transport::Channel) -> Self {
        Self {
            channel,
            peer: None,
        }
    }

    /// The underlying channel.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let channel = tonic::transport::Channel::from_static("http://127.0.0.1:50051").connect_lazy();
    /// let transport = proto_ai_tools::transport::TonicTransport::new(channel);
    /// let _channel: &tonic::transport::Channel = transport.channel();
    /// # }
    /// ```
    pub fn channel(&self) -> &tonic::transport::Channel {
        &self.channel
    }
}

impl Transport for TonicTransport {
    fn unary<'a>(
        &'a self,
        method: &'a MethodDescriptor,
        request: DynamicMessage,
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<DynamicMessage, Status>> {
        let codec = DynamicCodec {
            response: method.output(),
        };
        Box::pin(self.unary_with(method, request, options, codec))
    }

    fn unary_encoded<'a>(
        &'a self,
        method: &'a MethodDescriptor,
        request: DynamicMessage,
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<Vec<u8>, Status>> {
        Box::pin(self.unary_with(method, request, options, EncodedCodec))
    }

    fn server_streaming<'a>(
        &'a self,
        method: &'a MethodDescriptor,
        request: DynamicMessage,
        options: &'a CallOptions,
    ) -> BoxFuture<'a, Result<Box<dyn MessageStream + 'a>, Status>> {
        Box::pin(async move {
            let (mut grpc, req, path) = self.prepare(method, request, options).await?;
            let response = match grpc.server_streaming(req, path, EncodedCodec).await {
                Ok(response) => response,
                Err(e) => return Err(self.failed(e).await),
            };
            Ok(Box::new(TonicStream {
                messages: response.into_inner(),
                output: method.output(),
            }) as Box<dyn MessageStream>)
        })
    }
}

impl TonicTransport {
    /// One unary call whose response `codec` decodes, within the call's
    /// deadline.
    async fn unary_with<C>(
        &self,
        method: &MethodDescriptor,
        request: DynamicMessage,
        options: &CallOptions,
        codec: C,
    ) -> Result<C::Decode, Status>
    where
        C: Codec<Encode = DynamicMessage> + Send + 'static,
        C::Decode: Send + Sync + 'static,
    {
        let call = async {
            let (mut grpc, req, path) = self.prepare(method, request, options).await?;
            let response = match grpc.unary(req, path, codec).await {
                Ok(response) => response,
                Err(e) => return Err(self.failed(e).await),
            };
            Ok(response.into_inner())
        };
        let Some(t) = options.timeout else {
            return call.await;
        };
        let started = tokio::time::Instant::now();
        let exceeded = || format!("no answer within the deadline of {} s", t.as_secs_f64());
        match tokio::time::timeout(t, call).await {
            Err(_) => Err(Status::new(Code::DeadlineExceeded, exceeded())),
            // A tonic server enforces `grpc-timeout` by cancelling the call.
            Ok(Err(status)) if status.code == Code::Cancelled && started.elapsed() >= t => {
                Err(Status::new(
                    Code::DeadlineExceeded,
                    format!("{} ({})", exceeded(), status.message),
                ))
            }
            Ok(result) => result,
        }
    }

    /// A ready client and the request with its path, deadline and metadata.
    async fn prepare(
        &self,
        method: &MethodDescriptor,
        request: DynamicMessage,
        options: &CallOptions,
    ) -> Result<
        (
            tonic::client::Grpc<tonic::transport::Channel>,
            tonic::Request<DynamicMessage>,
            http::uri::PathAndQuery,
        ),
        Status,
    > {
        let path = method_path(method);
        let path = http::uri::PathAndQuery::try_from(path.as_str())
            .map_err(|e| Status::new(Code::Internal, format!("invalid gRPC path {path}: {e}")))?;
        let mut req = tonic::Request::new(request);
        if let Some(t) = options.timeout {
            req.set_timeout(t);
        }
        for (key, value) in &options.metadata {
            let k = MetadataKey::from_bytes(key.as_bytes()).map_err(|_| {
                Status::new(Code::Internal, format!("invalid metadata key `{key}`"))
            })?;
            let v = AsciiMetadataValue::try_from(value.as_str()).map_err(|_| {
                Status::new(
                    Code::Internal,
                    format!("invalid metadata value for `{key}`"),
                )
            })?;
            req.metadata_mut().append(k, v);
        }
        for (key, value) in &options.binary_metadata {
            let k = MetadataKey::<Binary>::from_bytes(key.as_bytes()).map_err(|_| {
                Status::new(
                    Code::Internal,
                    format!("invalid binary metadata key `{key}`"),
                )
            })?;
            req.metadata_mut()
                .append_bin(k, BinaryMetadataValue::from_bytes(value));
        }
        let mut grpc = tonic::client::Grpc::new(self.channel.clone());
        grpc.ready().await.map_err(|e| {
            let known = self
                .peer
                .as_deref()
                .and_then(|peer| classify(&peer.host, &e));
            Status::unreached(
                Code::Unavailable,
                known.map_or_else(|| format!("service not ready: {e}"), |e| e.to_string()),
            )
        })?;
        Ok((grpc, req, path))
    }

    /// A call's failure; one to connect (refused, a certificate that does
    /// not verify) said as the builder's error, naming the host. A TLS
    /// connection that broke without a reason (the request written as the
    /// server's alert came) is checked again to hear the reason. The
    /// client's own failures are marked so ([`Origin`](crate::transport::Origin)):
    /// their text, which names hosts and system errors, is for the logs,
    /// not the model.
    async fn failed(&self, status: tonic::Status) -> Status {
        if !is_own_failure(&status) {
            return Status::from(status);
        }
        let known = match self.peer.as_deref() {
            Some(peer) => match classify(&peer.host, &status) {
                Some(e) => Some(e),
                None => peer.check_tls().await.err(),
            },
            None => classify("the service", &status),
        };
        match known {
            // A connection refused or a handshake that failed: the request
            // never left.
            Some(e) => Status::unreached(Code::Unavailable, e.to_string()),
            None => {
                let code = Code::from_i32(status.code() as i32);
                Status::lost(code, lost_cause(&status))
            }
        }
    }
}

/// Whether `status` is the client's own failure, not a server's answer: a
/// status with a source is the client's (a server's has none); a
/// connection that broke cancels its streams.
fn is_own_failure(status: &tonic::Status) -> bool {
    matches!(
        status.code(),
        tonic::Code::Unavailable | tonic::Code::Unknown | tonic::Code::Cancelled
    ) && std::error::Error::source(status).is_some()
}

/// What broke a call the client lost: tonic's message and each cause
/// below it (`h2 protocol error: … connection reset`), for the logs.
fn lost_cause(status: &tonic::Status) -> String {
    let mut cause = status.message().to_owned();
    let mut source = std::error::Error::source(status);
    while let Some(e) = source {
        let text = e.to_string();
        if !cause.contains(&text) {
            cause.push_str(": ");
            cause.push_str(&text);
        }
        source = e.source();
    }
    cause
}

/// A tonic response stream, its messages kept as the bytes that came;
/// dropping it resets the HTTP/2 stream, which the server sees as a
/// cancelled call.
struct TonicStream {
    messages: tonic::Streaming<Vec<u8>>,
    /// The method's output type, which [`MessageStream::next`] decodes.
    output: MessageDescriptor,
}

impl MessageStream for TonicStream {
    fn next(&mut self) -> BoxFuture<'_, Option<Result<DynamicMessage, Status>>> {
        Box::pin(async move {
            let bytes = self.next_encoded().await?;
            Some(bytes.and_then(|bytes| {
                DynamicMessage::decode(self.output.clone(), bytes.as_slice()).map_err(|e| {
                    Status::new(
                        Code::Internal,
                        crate::transport::wire::undecodable_response(&self.output, &e),
                    )
                })
            }))
        })
    }

    fn next_encoded(&mut self) -> BoxFuture<'_, Option<Result<Vec<u8>, Status>>> {
        Box::pin(async move {
            self.messages
                .message()
                .await
                .map_err(|status| {
                    // Mid-stream, a failure of the client's own is a
                    // connection that broke.
                    if is_own_failure(&status) {
                        let code = Code::from_i32(status.code() as i32);
                        Status::lost(code, lost_cause(&status))
                    } else {
                        Status::from(status)
                    }
                })
                .transpose()
        })
    }
}

/// Encodes any [`DynamicMessage`], decodes the method's output type.
struct DynamicCodec {
    response: MessageDescriptor,
}

impl Codec for DynamicCodec {
    type Encode = DynamicMessage;
    type Decode = DynamicMessage;
    type Encoder = DynamicEncoder;
    type Decoder = DynamicDecoder;

    fn encoder(&mut self) -> Self::Encoder {
        DynamicEncoder
    }

    fn decoder(&mut self) -> Self::Decoder {
        DynamicDecoder {
            desc: self.response.clone(),
        }
    }
}

struct DynamicEncoder;

impl Encoder for DynamicEncoder {
    type Item = DynamicMessage;
    type Error = tonic::Status;

    fn encode(&mut self, item: Self::Item, buf: &mut EncodeBuf<'_>) -> Result<(), Self::Error> {
        crate::transport::wire::encode(&item, buf)
            .map_err(|e| tonic::Status::internal(format!("encoding the request: {e}")))
    }
}

/// Encodes any [`DynamicMessage`], passes the response's bytes through.
struct EncodedCodec;

impl Codec for EncodedCodec {
    type Encode = DynamicMessage;
    type Decode = Vec<u8>;
    type Encoder = DynamicEncoder;
    type Decoder = EncodedDecoder;

    fn encoder(&mut self) -> Self::Encoder {
        DynamicEncoder
    }

    fn decoder(&mut self) -> Self::Decoder {
        EncodedDecoder
    }
}

struct EncodedDecoder;

impl Decoder for EncodedDecoder {
    type Item = Vec<u8>;
    type Error = tonic::Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<Self::Item>, Self::Error> {
        let mut bytes = vec![0; buf.remaining()];
        buf.copy_to_slice(&mut bytes);
        Ok(Some(bytes))
    }
}

struct DynamicDecoder {
    desc: MessageDescriptor,
}

impl Decoder for DynamicDecoder {
    type Item = DynamicMessage;
    type Error = tonic::Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<Self::Item>, Self::Error> {
        DynamicMessage::decode(self.desc.clone(), buf)
            .map(Some)
            .map_err(|e| {
                tonic::Status::internal(crate::transport::wire::undecodable_response(
                    &self.desc, &e,
                ))
            })
    }
}
