//! The servers the MCP benches call, each on a port of its own on loopback.

use std::net::SocketAddr;

use proto_ai_tools_mcp::McpServer;
use proto_ai_tools_tests::LinksBackend;
use proto_ai_tools_tests::pb::links_service_server::LinksServiceServer;

/// Serves the links service on loopback (`TCP_NODELAY`, as the executor
/// bench does); its address.
pub async fn serve_grpc(backend: LinksBackend) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
    let server = tonic::transport::Server::builder().add_service(LinksServiceServer::new(backend));
    tokio::spawn(async move {
        let _ = server.serve_with_incoming(incoming).await;
    });
    addr
}

/// Serves `server` over streamable HTTP on loopback, until the process
/// ends; its address.
pub async fn serve_mcp(server: McpServer) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(server.serve_http_until(listener, std::future::pending()));
    addr
}
