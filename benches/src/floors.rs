//! The floors a gateway `tools/call` is measured against (BENCHMARKS.md,
//! section 15): servers that do the same work as the gateway's call of
//! `links_list` and nothing else, each forwarding `ListLinks` over tonic to
//! the bench's backend and writing the answer as an MCP tool result.
//!
//! - [`serve_hyper_floor`]: bare hyper, no MCP library. What the work
//!   itself costs: read an HTTP/1.1 request, parse its JSON-RPC body,
//!   make the RPC, write a JSON-RPC result.
//! - [`serve_rmcp_floor`]: a minimal rmcp server with one tool, served by
//!   rmcp's streamable HTTP service configured as the gateway configures
//!   it. What the MCP library costs before anything of ours runs; with no
//!   channel it answers a fixed result without the backend, which isolates
//!   rmcp's own per-request cost from the cost of leaving it for the RPC.
//!
//! Bench code only: no limits, no timeouts, no shutdown; the servers run
//! until the process ends.

use std::borrow::Cow;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper_util::rt::TokioIo;
use proto_ai_tools_tests::pb::links_service_client::LinksServiceClient;
use proto_ai_tools_tests::pb::{ListLinksRequest, ListLinksResponse};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::Deserialize;
use tokio::net::{TcpListener, TcpStream};
use tonic::transport::Channel;

/// The one tool of the floors, named as the gateway names it.
pub const TOOL: &str = "links_list";

/// The text of a `links_list` result: the links as JSON (the proto's
/// JSON names, as the gateway writes them, without aliases).
pub fn links_json(response: &ListLinksResponse) -> String {
    let links: Vec<_> = response
        .links
        .iter()
        .map(|link| {
            serde_json::json!({
                "id": link.id,
                "pageThemeId": link.page_theme_id,
                "workspaceId": link.workspace_id,
                "destination": link.destination,
                "name": link.name,
                "shortlink": link.shortlink,
                "tags": link.tags,
            })
        })
        .collect();
    serde_json::json!({ "links": links }).to_string()
}

/// Binds a loopback port and serves each accepted connection (`TCP_NODELAY`,
/// as the gateway sets it) with `serve` on a task of its own.
async fn accept_loop<F, Fut>(serve: F) -> SocketAddr
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            stream.set_nodelay(true).expect("nodelay");
            tokio::spawn(serve(stream));
        }
    });
    addr
}

// ---------------------------------------------------------------------------
// Bare hyper.

/// What the hyper floor reads of a JSON-RPC request: typed, as rmcp reads
/// one (the arguments are parsed but `links_list` takes none it uses).
#[derive(Deserialize)]
struct Request {
    id: serde_json::Value,
    method: String,
    #[serde(default)]
    params: Option<Params>,
}

#[derive(Deserialize)]
struct Params {
    name: String,
    #[serde(default)]
    #[allow(dead_code)]
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Serves JSON-RPC `tools/call` of [`TOOL`] over HTTP/1.1 with hyper alone
/// (one `http1` connection per client, as the gateway's edge serves them):
/// parses the body with serde_json, calls `ListLinks` on `channel`, and
/// answers `application/json` with the tool result. Anything else is a
/// JSON-RPC error. No MCP: this is what the gateway's work costs on the
/// same HTTP stack with nothing around it.
pub async fn serve_hyper_floor(channel: Channel) -> SocketAddr {
    let client = LinksServiceClient::new(channel);
    accept_loop(move |stream| {
        let client = client.clone();
        async move {
            let service =
                hyper::service::service_fn(move |request| hyper_forward(client.clone(), request));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        }
    })
    .await
}

async fn hyper_forward(
    mut client: LinksServiceClient<Channel>,
    request: hyper::Request<Incoming>,
) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => return Ok(json_response(rpc_error(None, -32700, "unreadable"))),
    };
    let answer = match serde_json::from_slice::<Request>(&body) {
        Err(e) => rpc_error(None, -32700, &e.to_string()),
        Ok(call) => match (call.method.as_str(), call.params) {
            ("tools/call", Some(params)) if params.name == TOOL => {
                match client.list_links(ListLinksRequest { page_size: 0 }).await {
                    Ok(response) => serde_json::json!({
                        "jsonrpc": "2.0",
                        "id": call.id,
                        "result": {
                            "content": [{"type": "text", "text": links_json(response.get_ref())}],
                            "isError": false,
                        },
                    }),
                    Err(status) => rpc_error(Some(call.id), -32603, status.message()),
                }
            }
            _ => rpc_error(Some(call.id), -32601, "not links_list"),
        },
    };
    Ok(json_response(answer))
}

fn rpc_error(id: Option<serde_json::Value>, code: i64, message: &str) -> serde_json::Value {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn json_response(value: serde_json::Value) -> hyper::Response<Full<Bytes>> {
    hyper::Response::builder()
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(value.to_string())))
        .expect("a response")
}

// ---------------------------------------------------------------------------
// Minimal rmcp.

/// A `ServerHandler` with one tool, [`TOOL`]: forwards each call to the
/// backend, or with no client answers `answer` without it.
#[derive(Clone)]
struct Floor {
    client: Option<LinksServiceClient<Channel>>,
    answer: Arc<str>,
    tool: Tool,
}

impl ServerHandler for Floor {
    // As the gateway's handler: tools only, up to protocol `2026-07-28`.
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_protocol_version(ProtocolVersion::V_2026_07_28)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![self.tool.clone()]))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        (name == TOOL).then(|| self.tool.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != TOOL {
            return Err(ErrorData::invalid_params("not links_list", None));
        }
        let text = match &self.client {
            None => self.answer.to_string(),
            Some(client) => {
                let response = client
                    .clone()
                    .list_links(ListLinksRequest { page_size: 0 })
                    .await
                    .map_err(|status| {
                        ErrorData::internal_error(status.message().to_owned(), None)
                    })?;
                links_json(response.get_ref())
            }
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

/// Serves a minimal rmcp server of one tool, [`TOOL`], over streamable HTTP
/// as the gateway does: rmcp's `StreamableHttpService` with the gateway's
/// configuration (sessions for the handshake era, stateless requests of
/// `2026-07-28`, the default body limit, loopback origins enforced) and
/// rmcp's `LocalSessionManager`, on hyper `http1` connections. Without the
/// gateway's edge (connection limits, watchdog, scope header) or anything
/// of the toolkit. With `channel` each call is forwarded to the backend;
/// without, each call answers `answer` (the same bytes) at once.
///
/// With `json_response`, rmcp answers a stateless request whose handler
/// sends nothing before its result as one `application/json` body instead
/// of an event stream (`StreamableHttpServerConfig::with_json_response`;
/// the gateway does not set it): what the stream itself costs.
pub async fn serve_rmcp_floor(
    channel: Option<Channel>,
    answer: String,
    json_response: bool,
) -> SocketAddr {
    let floor = Floor {
        client: channel.map(LinksServiceClient::new),
        answer: answer.into(),
        tool: Tool::new(
            TOOL,
            "Lists the links, newest first.",
            serde_json::json!({"type": "object", "properties": {"page_size": {"type": "integer"}}})
                .as_object()
                .cloned()
                .expect("an object"),
        ),
    };
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(true)
        .with_json_response(json_response)
        .with_max_request_body_bytes(proto_ai_tools_mcp::DEFAULT_MAX_REQUEST_BODY_BYTES)
        .with_allowed_origins(proto_ai_tools_mcp::LOOPBACK_ORIGINS)
        .enforce_origin_validation();
    let service = StreamableHttpService::new(
        move || Ok(floor.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    accept_loop(move |stream| {
        let service = service.clone();
        async move {
            let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                let service = service.clone();
                async move { Ok::<_, Infallible>(service.handle(request).await) }
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            // As the gateway's edge.
            builder.header_read_timeout(None);
            let _ = builder
                .serve_connection(TokioIo::new(stream), service)
                .await;
        }
    })
    .await
}
