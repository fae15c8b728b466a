//! The example links service (`proto/links/v1/links.proto`, in memory) with
//! gRPC reflection (v1) on, to try the `ai-tools` gateway against:
//!
//! ```sh
//! cargo run -p proto-ai-tools-tests --example links_server            # 127.0.0.1:50051
//! cargo run -p proto-ai-tools-tests --example links_server -- 127.0.0.1:50052
//! ai-tools mcp --grpc http://127.0.0.1:50051 --reflection --stdio
//! ```
//!
//! It serves until interrupted (Ctrl-C).

use std::net::SocketAddr;

use proto_ai_tools_tests::LinksBackend;
use proto_ai_tools_tests::pb::links_service_server::LinksServiceServer;
use proto_ai_tools_tests::pb::workflow_steps_service_server::WorkflowStepsServiceServer;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr: SocketAddr = std::env::args()
        .nth(1)
        .as_deref()
        .unwrap_or("127.0.0.1:50051")
        .parse()?;
    // links.proto and its imports, comments kept (they are the descriptions).
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(include_bytes!(concat!(
            env!("OUT_DIR"),
            "/links_descriptor.bin"
        )))
        .build_v1()?;
    let backend = LinksBackend::default();
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!(
        "links service with gRPC reflection at http://{}",
        listener.local_addr()?
    );
    tonic::transport::Server::builder()
        .add_service(LinksServiceServer::new(backend.clone()))
        .add_service(WorkflowStepsServiceServer::new(backend))
        .add_service(reflection)
        .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener))
        .await?;
    Ok(())
}
