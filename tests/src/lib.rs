//! Integration tests of ai-tools: a real in-memory links service served by
//! tonic on loopback, the descriptor pools of the test protos, and the tool
//! definitions of `links.proto`.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};
use std::time::Duration;

use proto_ai_tools::__private::DescriptorPool;
use tonic::{Request, Response, Status};

/// The code tonic generates for `links.proto`.
#[allow(missing_docs, clippy::all)]
pub mod pb {
    tonic::include_proto!("links.v1");
}

/// The server and client code tonic generates for `feed.proto` (a server
/// stream).
#[allow(missing_docs, clippy::all)]
pub mod feed_pb {
    tonic::include_proto!("feed.v1");
}

use feed_pb::feed_service_server::{FeedService, FeedServiceServer};
use pb::links_service_server::{LinksService, LinksServiceServer};
use pb::workflow_steps_service_server::{WorkflowStepsService, WorkflowStepsServiceServer};

/// The descriptor pool of `links.proto`, custom options included.
pub static LINKS_POOL: LazyLock<DescriptorPool> = LazyLock::new(|| {
    DescriptorPool::decode(&include_bytes!(concat!(env!("OUT_DIR"), "/links_descriptor.bin"))[..])
        .expect("the build script's descriptor set decodes")
});

/// Tool definitions: the expansions of `ai_tools!` for `links.proto`,
/// `shapes.proto` and googleapis' `operations.proto`.
pub mod tools {
    use proto_ai_tools::AgentTool;

    /// The expansion of `ai_tools!("proto/links/v1/links.proto")`.
    pub mod links {
        proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
    }

    /// The expansion of `ai_tools!("proto/conformance/v1/conformance.proto")`:
    /// a tool for every shape the renderings and the executor handle.
    pub mod conformance {
        proto_ai_tools::ai_tools!("proto/conformance/v1/conformance.proto");
    }

    /// The expansion of `ai_tools!("proto/feed/v1/feed.proto")`: a
    /// server-streaming method as a tool.
    pub mod feed {
        proto_ai_tools::ai_tools!("proto/feed/v1/feed.proto");
    }

    /// Every `google/type` message and enum in tool requests. googleapis
    /// comes first, so its `google/api/field_behavior.proto` wins over the
    /// copy in `proto/google` (the one ai-tools serves).
    pub mod google_types {
        proto_ai_tools::ai_tools!(
            "proto/corpus/v1/google_types.proto",
            includes = ["proto/third_party/googleapis", "proto"]
        );
    }

    /// The annotated copy of etcd's `api/etcdserverpb/rpc.proto`; its
    /// `google.api.http` options resolve against googleapis.
    pub mod etcd {
        proto_ai_tools::ai_tools!(
            "proto/third_party/etcd/etcd/api/etcdserverpb/rpc.proto",
            includes = ["proto/third_party/etcd", "proto/third_party/googleapis"]
        );
    }

    /// The expansion of `ai_tools!("proto/shapes/v1/shapes.proto")`: the
    /// echo service whose request and response have every shape providers
    /// reshape (maps, `Struct`, `Value`, recursion, a oneof, 64-bit integers).
    pub mod shapes {
        proto_ai_tools::ai_tools!("proto/shapes/v1/shapes.proto");
    }

    /// googleapis' `google/longrunning/operations.proto` exactly as the
    /// `googleapis-common-protos` wheel ships it (no annotation in it),
    /// annotated by `tests/overlays/operations.tools.toml`.
    pub mod longrunning_overlay {
        proto_ai_tools::ai_tools!(
            "proto/third_party/googleapis/google/longrunning/operations_proto.proto",
            includes = ["proto/third_party/googleapis"],
            overlay = "overlays/operations.tools.toml"
        );
    }

    /// The same unedited file, every unary method of its service a tool.
    pub mod longrunning_whole {
        proto_ai_tools::ai_tools!(
            "proto/third_party/googleapis/google/longrunning/operations_proto.proto",
            includes = ["proto/third_party/googleapis"],
            services = ["google.longrunning.Operations"]
        );
    }

    pub use links::{
        LINKS_CREATE, LINKS_LIST, LINKS_UPDATE, WORKFLOW_STEPS_CREATE, WORKFLOW_STEPS_DELETE,
    };
    pub use shapes::SHAPES_ECHO;

    /// Every tool of `links.proto`.
    pub static ALL: &[&AgentTool] = &links::ALL_TOOLS;

    /// The tools of `shapes.proto`: its one method, `shapes_echo`.
    pub static SHAPES: &[&AgentTool] = &shapes::ALL_TOOLS;
}

/// The links tools as an MCP server, calling the links services through
/// `channel` (with no server info of its own: callers name it if they wish).
#[cfg(feature = "mcp")]
pub fn links_mcp_server(channel: tonic::transport::Channel) -> proto_ai_tools_mcp::McpServer {
    let transport = proto_ai_tools::transport::TonicTransport::new(channel);
    proto_ai_tools_mcp::McpServer::new(move |aliases| {
        proto_ai_tools::Toolkit::builder()
            .alias_manager(aliases.clone())
            .generated(tools::links::Executor::with_alias_manager(
                transport.clone(),
                aliases,
            ))
            .build()
    })
}

/// A request the service received, as the server decoded it.
#[derive(Debug, Clone, PartialEq)]
pub enum Received {
    /// `CreateLink`.
    CreateLink(pb::CreateLinkRequest),
    /// `UpdateLink`.
    UpdateLink(pb::UpdateLinkRequest),
    /// `ListLinks`.
    ListLinks(pb::ListLinksRequest),
    /// `CreateWorkflowStep`.
    CreateWorkflowStep(pb::CreateWorkflowStepRequest),
    /// `DeleteWorkflowStep`.
    DeleteWorkflowStep(pb::DeleteWorkflowStepRequest),
}

/// One metadata value a request carried, as the server received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetadataValue {
    /// An ASCII value (not visible ASCII: its bytes read lossily as UTF-8).
    Ascii(String),
    /// The bytes of a `-bin` value, decoded from the base64 of the wire.
    Binary(Vec<u8>),
    /// A `-bin` value that is not base64: its text as it arrived.
    Undecodable(Vec<u8>),
}

/// Every metadata entry of one request as the server received it, in
/// order, keys lowercase: `authorization`, `-bin` keys and the entries
/// gRPC itself sends (`te`, `content-type`, `user-agent`, `grpc-*`) included.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Metadata(pub Vec<(String, MetadataValue)>);

impl Metadata {
    fn of(metadata: &tonic::metadata::MetadataMap) -> Self {
        use tonic::metadata::KeyAndValueRef;
        Self(
            metadata
                .iter()
                .map(|kv| match kv {
                    KeyAndValueRef::Ascii(k, v) => (
                        k.as_str().to_owned(),
                        MetadataValue::Ascii(
                            String::from_utf8_lossy(v.as_encoded_bytes()).into_owned(),
                        ),
                    ),
                    KeyAndValueRef::Binary(k, v) => (
                        k.as_str().to_owned(),
                        match v.to_bytes() {
                            Ok(bytes) => MetadataValue::Binary(bytes.to_vec()),
                            Err(_) => MetadataValue::Undecodable(v.as_encoded_bytes().to_vec()),
                        },
                    ),
                })
                .collect(),
        )
    }

    /// Every value of `key`, in order.
    pub fn values(&self, key: &str) -> Vec<&MetadataValue> {
        self.0
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v)
            .collect()
    }

    /// The first ASCII value of `key`.
    pub fn ascii(&self, key: &str) -> Option<&str> {
        self.0.iter().find_map(|(k, v)| match v {
            MetadataValue::Ascii(text) if k == key => Some(text.as_str()),
            _ => None,
        })
    }

    /// The first binary value of `key`, decoded.
    pub fn binary(&self, key: &str) -> Option<&[u8]> {
        self.0.iter().find_map(|(k, v)| match v {
            MetadataValue::Binary(bytes) if k == key => Some(bytes.as_slice()),
            _ => None,
        })
    }

    /// The keys, in order (a key sent twice is listed twice).
    pub fn keys(&self) -> Vec<&str> {
        self.0.iter().map(|(k, _)| k.as_str()).collect()
    }
}

#[derive(Debug, Default)]
struct State {
    links: Vec<pb::Link>,
    steps: HashMap<String, pb::WorkflowStep>,
    received: Vec<Received>,
    /// Each request with every metadata entry it carried.
    requests: Vec<(Received, Metadata)>,
    metadata: Vec<(String, String)>,
    delay: Option<Duration>,
    workspace_id: String,
}

/// An in-memory links and workflow-steps service. Clones share state.
#[derive(Debug, Clone, Default)]
pub struct LinksBackend {
    state: Arc<Mutex<State>>,
}

/// A fresh random UUID (v4 layout), without a UUID crate.
pub fn new_uuid() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut bytes = [0u8; 16];
    for chunk in bytes.chunks_mut(8) {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos(),
        );
        chunk.copy_from_slice(&h.finish().to_le_bytes());
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

impl LinksBackend {
    /// A service holding `existing` links (listed newest first, after created ones).
    pub fn with_links(existing: usize) -> Self {
        let backend = Self::default();
        {
            let mut s = backend.lock();
            s.workspace_id = new_uuid();
            for n in 0..existing {
                let link = backend.new_link(
                    &s.workspace_id,
                    format!("https://example.com/{n}"),
                    format!("Link {n}"),
                );
                s.links.push(link);
            }
        }
        backend
    }

    fn new_link(&self, workspace_id: &str, destination: String, name: String) -> pb::Link {
        let id = new_uuid();
        pb::Link {
            shortlink: id[..8].to_owned(),
            id,
            page_theme_id: new_uuid(),
            workspace_id: workspace_id.to_owned(),
            destination,
            name,
            tags: Vec::new(),
            create_time: None,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Every request received, in order.
    pub fn received(&self) -> Vec<Received> {
        self.lock().received.clone()
    }

    /// The metadata of the last request (lowercase keys, ASCII values, `x-` keys only).
    pub fn last_metadata(&self) -> Vec<(String, String)> {
        self.lock().metadata.clone()
    }

    /// Every request received, in order, each with all the metadata it
    /// carried: which request carried which metadata, under concurrency too.
    pub fn requests(&self) -> Vec<(Received, Metadata)> {
        self.lock().requests.clone()
    }

    /// The links held, in list order (newest first).
    pub fn links(&self) -> Vec<pb::Link> {
        let mut links = self.lock().links.clone();
        links.reverse();
        links
    }

    /// The workspace every link belongs to.
    pub fn workspace_id(&self) -> String {
        self.lock().workspace_id.clone()
    }

    /// Deletes a link behind the model's back.
    pub fn remove_link(&self, id: &str) {
        self.lock().links.retain(|l| l.id != id);
    }

    /// Makes every call take `delay` first.
    pub fn set_delay(&self, delay: Duration) {
        self.lock().delay = Some(delay);
    }

    async fn begin<T>(&self, request: &Request<T>, received: Received) {
        let delay = {
            let mut s = self.lock();
            s.requests
                .push((received.clone(), Metadata::of(request.metadata())));
            s.received.push(received);
            s.metadata = x_metadata(request.metadata());
            s.delay
        };
        if let Some(d) = delay {
            tokio::time::sleep(d).await;
        }
    }
}

/// The `x-` entries of `metadata` (ASCII values), in order.
fn x_metadata(metadata: &tonic::metadata::MetadataMap) -> Vec<(String, String)> {
    metadata
        .iter()
        .filter_map(|kv| match kv {
            tonic::metadata::KeyAndValueRef::Ascii(k, v) if k.as_str().starts_with("x-") => Some((
                k.as_str().to_owned(),
                v.to_str().unwrap_or_default().to_owned(),
            )),
            _ => None,
        })
        .collect()
}

/// A feed service whose one method streams events, recording what each call
/// carried and how its stream ended. Clones share state.
#[derive(Debug, Clone, Default)]
pub struct FeedBackend {
    state: Arc<Mutex<FeedState>>,
}

#[derive(Debug, Default)]
struct FeedState {
    metadata: Vec<Vec<(String, String)>>,
    sent: u64,
    cancelled: u64,
}

impl FeedBackend {
    fn lock(&self) -> MutexGuard<'_, FeedState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The `x-` metadata of every call, in order.
    pub fn metadata(&self) -> Vec<Vec<(String, String)>> {
        self.lock().metadata.clone()
    }

    /// Events sent, over every call.
    pub fn sent(&self) -> u64 {
        self.lock().sent
    }

    /// Streams that ended because the caller stopped listening.
    pub fn cancelled(&self) -> u64 {
        self.lock().cancelled
    }
}

#[tonic::async_trait]
impl FeedService for FeedBackend {
    type FollowStream =
        tonic::codegen::tokio_stream::wrappers::ReceiverStream<Result<feed_pb::Event, Status>>;

    async fn follow(
        &self,
        request: Request<feed_pb::FollowRequest>,
    ) -> Result<Response<Self::FollowStream>, Status> {
        self.lock().metadata.push(x_metadata(request.metadata()));
        let r = request.into_inner();
        if r.open_delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(u64::from(r.open_delay_ms))).await;
        }
        // Room for one event: the sender learns at once that nobody listens.
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        let backend = self.clone();
        tokio::spawn(async move {
            let mut n = 0;
            let endless = r.count == 0 && r.fail_with.is_empty();
            while endless || n < r.count {
                if r.interval_ms > 0 {
                    tokio::time::sleep(Duration::from_millis(u64::from(r.interval_ms))).await;
                }
                n += 1;
                let event = feed_pb::Event {
                    id: new_uuid(),
                    text: format!("event {n}"),
                };
                if tx.send(Ok(event)).await.is_err() {
                    backend.lock().cancelled += 1;
                    return;
                }
                backend.lock().sent += 1;
            }
            if !r.fail_with.is_empty() {
                let _ = tx.send(Err(Status::unavailable(r.fail_with))).await;
            }
        });
        Ok(Response::new(
            tonic::codegen::tokio_stream::wrappers::ReceiverStream::new(rx),
        ))
    }
}

#[tonic::async_trait]
impl LinksService for LinksBackend {
    async fn create_link(
        &self,
        request: Request<pb::CreateLinkRequest>,
    ) -> Result<Response<pb::CreateLinkResponse>, Status> {
        self.begin(&request, Received::CreateLink(request.get_ref().clone()))
            .await;
        let r = request.into_inner();
        if r.destination.is_empty() {
            return Err(Status::invalid_argument("destination is required"));
        }
        let mut s = self.lock();
        let mut link = self.new_link(&s.workspace_id, r.destination, r.name.unwrap_or_default());
        link.tags = r.tags;
        if let Some(slug) = r.shortlink {
            link.shortlink = slug;
        }
        s.links.push(link.clone());
        Ok(Response::new(pb::CreateLinkResponse { link: Some(link) }))
    }

    async fn update_link(
        &self,
        request: Request<pb::UpdateLinkRequest>,
    ) -> Result<Response<pb::UpdateLinkResponse>, Status> {
        self.begin(&request, Received::UpdateLink(request.get_ref().clone()))
            .await;
        let r = request.into_inner();
        let mut s = self.lock();
        let Some(link) = s.links.iter_mut().find(|l| l.id == r.link_id) else {
            return Err(Status::not_found(format!("link {} not found", r.link_id)));
        };
        if let Some(name) = r.name {
            link.name = name;
        }
        if let Some(destination) = r.destination {
            link.destination = destination;
        }
        Ok(Response::new(pb::UpdateLinkResponse {
            link: Some(link.clone()),
        }))
    }

    async fn list_links(
        &self,
        request: Request<pb::ListLinksRequest>,
    ) -> Result<Response<pb::ListLinksResponse>, Status> {
        self.begin(&request, Received::ListLinks(*request.get_ref()))
            .await;
        let r = request.into_inner();
        let mut links = self.links();
        if r.page_size > 0 {
            links.truncate(usize::try_from(r.page_size).unwrap_or(usize::MAX));
        }
        Ok(Response::new(pb::ListLinksResponse { links }))
    }
}

#[tonic::async_trait]
impl WorkflowStepsService for LinksBackend {
    async fn create_workflow_step(
        &self,
        request: Request<pb::CreateWorkflowStepRequest>,
    ) -> Result<Response<pb::CreateWorkflowStepResponse>, Status> {
        self.begin(
            &request,
            Received::CreateWorkflowStep(request.get_ref().clone()),
        )
        .await;
        let r = request.into_inner();
        let mut s = self.lock();
        if !s.links.iter().any(|l| l.id == r.link_id) {
            return Err(Status::not_found(format!("link {} not found", r.link_id)));
        }
        let step = pb::WorkflowStep {
            id: new_uuid(),
            link_id: r.link_id,
            action: r.action,
        };
        s.steps.insert(step.id.clone(), step.clone());
        Ok(Response::new(pb::CreateWorkflowStepResponse {
            step: Some(step),
        }))
    }

    async fn delete_workflow_step(
        &self,
        request: Request<pb::DeleteWorkflowStepRequest>,
    ) -> Result<Response<pb::DeleteWorkflowStepResponse>, Status> {
        self.begin(
            &request,
            Received::DeleteWorkflowStep(request.get_ref().clone()),
        )
        .await;
        let r = request.into_inner();
        match self.lock().steps.remove(&r.step_id) {
            Some(_) => Ok(Response::new(pb::DeleteWorkflowStepResponse {})),
            None => Err(Status::not_found(format!("step {} not found", r.step_id))),
        }
    }
}

/// A gRPC server on loopback; dropping it does not stop it, [`stop`](Self::stop) does.
#[derive(Debug)]
pub struct Server {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Whether it speaks TLS ([`tls::serve_tls`]).
    pub https: bool,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    /// `http://127.0.0.1:PORT`, or `https://` over TLS.
    pub fn url(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// Stops the server and waits for it.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}

/// Serves `router` on `addr` (port 0 for any) until stopped. The port of a
/// just-stopped server may linger briefly, so the bind is retried for about
/// a second; a server can come back on the port it had.
///
/// # Errors
///
/// When the address cannot be bound.
pub async fn serve_router(
    addr: SocketAddr,
    router: tonic::transport::server::Router,
) -> std::io::Result<Server> {
    let mut tries = 0;
    let listener = loop {
        match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => break l,
            Err(_) if tries < 50 => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => return Err(e),
        }
    };
    let addr = listener.local_addr()?;
    let (stop, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        // Without TCP_NODELAY, Nagle and delayed ACKs stall larger responses by ~40 ms.
        let incoming =
            tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
        let _ = router
            .serve_with_incoming_shutdown(incoming, async {
                let _ = rx.await;
            })
            .await;
    });
    Ok(Server {
        addr,
        https: false,
        stop,
        task,
    })
}

/// The links and feed services running; dropping it does not stop them,
/// [`shutdown`](Self::shutdown) does.
#[derive(Debug)]
pub struct RunningServer {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The service's state.
    pub backend: LinksBackend,
    /// The feed service's state (served on the same address).
    pub feed: FeedBackend,
    server: Server,
}

impl RunningServer {
    /// `http://127.0.0.1:PORT`, or `https://` over TLS.
    pub fn url(&self) -> String {
        self.server.url()
    }

    /// A lazily connecting channel to the server.
    ///
    /// # Errors
    ///
    /// When the URL does not parse (it always does).
    pub fn channel(&self) -> Result<tonic::transport::Channel, tonic::transport::Error> {
        Ok(tonic::transport::Endpoint::from_shared(self.url())?.connect_lazy())
    }

    /// Stops the server and waits for it.
    pub async fn shutdown(self) {
        self.server.stop().await;
    }
}

/// Which gRPC reflection service [`serve_with_reflection`] offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reflection {
    /// `grpc.reflection.v1`.
    V1,
    /// Only the older `grpc.reflection.v1alpha`.
    V1Alpha,
}

/// [`serve`], plus a reflection service describing the links and feed
/// services (comments included).
///
/// # Errors
///
/// When the port cannot be bound or the descriptors do not load.
pub async fn serve_with_reflection(
    backend: LinksBackend,
    version: Reflection,
) -> std::io::Result<RunningServer> {
    serve_routes(LOOPBACK_ANY, backend, Some(version), None).await
}

/// Serves `backend` (and a fresh feed service) on `127.0.0.1:0` until shut
/// down.
///
/// # Errors
///
/// When the port cannot be bound.
pub async fn serve(backend: LinksBackend) -> std::io::Result<RunningServer> {
    serve_routes(LOOPBACK_ANY, backend, None, None).await
}

/// [`serve`] on `addr`: a server can stop and come back on the port it had.
///
/// # Errors
///
/// When the address cannot be bound (see [`serve_router`]).
pub async fn serve_at(addr: SocketAddr, backend: LinksBackend) -> std::io::Result<RunningServer> {
    serve_routes(addr, backend, None, None).await
}

/// `127.0.0.1:0`: any free port on loopback.
const LOOPBACK_ANY: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 0);

async fn serve_routes(
    addr: SocketAddr,
    backend: LinksBackend,
    reflection: Option<Reflection>,
    tls: Option<tonic::transport::ServerTlsConfig>,
) -> std::io::Result<RunningServer> {
    let feed = FeedBackend::default();
    let described = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(include_bytes!(concat!(
                env!("OUT_DIR"),
                "/links_descriptor.bin"
            )))
            .register_encoded_file_descriptor_set(include_bytes!(concat!(
                env!("OUT_DIR"),
                "/feed_descriptor.bin"
            )))
    };
    let invalid = |e: tonic_reflection::server::Error| std::io::Error::other(e.to_string());
    let v1 = match reflection {
        Some(Reflection::V1) => Some(described().build_v1().map_err(invalid)?),
        _ => None,
    };
    let v1alpha = match reflection {
        Some(Reflection::V1Alpha) => Some(described().build_v1alpha().map_err(invalid)?),
        _ => None,
    };
    let mut builder = tonic::transport::Server::builder();
    let https = tls.is_some();
    if let Some(tls) = tls {
        builder = builder
            .tls_config(tls)
            .map_err(|e| std::io::Error::other(e.to_string()))?;
    }
    let router = builder
        .add_service(LinksServiceServer::new(backend.clone()))
        .add_service(WorkflowStepsServiceServer::new(backend.clone()))
        .add_service(FeedServiceServer::new(feed.clone()))
        .add_optional_service(v1)
        .add_optional_service(v1alpha);
    let mut server = serve_router(addr, router).await?;
    server.https = https;
    Ok(RunningServer {
        addr: server.addr,
        backend,
        feed,
        server,
    })
}

pub mod arguments;
pub mod http;
pub mod large_api;
pub mod oauth;
pub mod redis_suite;
pub mod support;
pub mod tls;
