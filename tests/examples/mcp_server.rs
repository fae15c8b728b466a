// The links service as an MCP server: a real tonic links server on
// loopback (started in-process), and a `Toolkit` of the tools `ai_tools!`
// generates from `links.proto` and `feed.proto` (a server stream) plus two
// native tools, served over stdio or
// streamable HTTP.
//
// ```text
// cargo run -p proto-ai-tools-tests --features mcp --example mcp_server -- stdio
// cargo run -p proto-ai-tools-tests --features mcp --example mcp_server -- http 127.0.0.1:8080
// ```
//
// Over HTTP the endpoint is `http://ADDR/mcp`; with port 0 (the default
// address is `127.0.0.1:0`) the server picks a free port and prints
// `listening on http://127.0.0.1:PORT/mcp` on stderr. Nothing but the
// protocol is ever written to stdout. Stops on ctrl-c / SIGTERM, and in
// stdio mode when stdin closes.

use std::sync::Arc;

use proto_ai_tools::{
    AliasManager, NativeTool, ToolError, ToolInput, Toolkit, toolkit::ToolkitError,
};
use proto_ai_tools_mcp::McpServer;
use proto_ai_tools_tests::{LinksBackend, serve};

mod links {
    proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
}

mod feed {
    proto_ai_tools::ai_tools!("proto/feed/v1/feed.proto");
}

/// Write the text a user can paste to share a link.
#[derive(serde::Deserialize, ToolInput)]
struct ShareInput {
    /// The link to share.
    #[tool(
        alias_prefix = "link",
        usage_notes = "Use an id returned by a links tool; never invent one."
    )]
    link_id: String,
}

/// The toolkit of one MCP session: the generated links tools and the
/// native `links_share_text`, all on the session's alias namespace.
/// No arguments.
#[derive(serde::Deserialize, ToolInput)]
struct WhoAmI {}

fn toolkit(
    transport: &proto_ai_tools::transport::TonicTransport,
    backend: &LinksBackend,
    aliases: Arc<AliasManager>,
) -> Result<Toolkit, ToolkitError> {
    let backend = backend.clone();
    let share = NativeTool::new::<ShareInput, _, _>(
        "links_share_text",
        "Write the text a user can paste to share a link.",
        move |_ctx, input: ShareInput| {
            // `input.link_id` is the UUID behind the alias the model sent.
            let link = backend.links().into_iter().find(|l| l.id == input.link_id);
            async move {
                let link = link.ok_or_else(|| ToolError::new("that link no longer exists"))?;
                let name = if link.name.is_empty() {
                    "this link"
                } else {
                    &link.name
                };
                Ok(format!(
                    "Check out {name}: https://sho.rt/{} (goes to {})",
                    link.shortlink, link.destination
                ))
            }
        },
    );
    // Who is calling: the `x-user` header of the MCP request, forwarded into
    // the call's options (see `forward_headers` below).
    let whoami = NativeTool::new::<WhoAmI, _, _>(
        "whoami",
        "Say which user this session acts for.",
        |ctx, _| async move {
            let user = ctx
                .call_options()
                .metadata
                .iter()
                .find(|(key, _)| key == "x-user")
                .map(|(_, value)| value.clone());
            user.unwrap_or_else(|| "nobody".to_owned())
        },
    );
    Toolkit::builder()
        .alias_manager(aliases.clone())
        .native(whoami)
        .generated(links::Executor::with_alias_manager(
            transport.clone(),
            aliases.clone(),
        ))
        .generated(feed::Executor::with_alias_manager(
            transport.clone(),
            aliases,
        ))
        .native(share)
        .build()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "stdio".to_owned());

    let grpc = serve(LinksBackend::with_links(0)).await?;
    let channel = grpc.channel()?;
    let transport = proto_ai_tools::transport::TonicTransport::new(channel);
    let backend = grpc.backend.clone();
    let server = McpServer::new(move |aliases| toolkit(&transport, &backend, aliases))
        .with_server_info("links", env!("CARGO_PKG_VERSION"))
        .with_instructions(
            "Short links, the workflow steps that run when a link is visited, and a feed of events. \
             Ids look like link-1: pass them back exactly as a tool returned them.",
        )
        // Over HTTP each request's `x-user` header reaches that request's
        // calls as metadata (gRPC for generated tools, `ToolContext` here).
        .forward_headers(["x-user"])?;
    eprintln!("links gRPC service on {}", grpc.url());

    match mode.as_str() {
        "stdio" => {
            eprintln!("serving MCP over stdio");
            server.serve_stdio().await?;
        }
        "http" => {
            let addr = args.next().unwrap_or_else(|| "127.0.0.1:0".to_owned());
            // `--alias-scope-header NAME`: a stateless request (protocol
            // 2026-07-28) keeps its aliases under that header's value.
            let server = match (args.next().as_deref(), args.next()) {
                (Some("--alias-scope-header"), Some(name)) => {
                    server.with_alias_scope_header(&name)?
                }
                (None, _) => server,
                (Some(other), _) => return Err(format!("unknown option `{other}`").into()),
            };
            let listener = tokio::net::TcpListener::bind(&addr).await?;
            eprintln!("listening on http://{}/mcp", listener.local_addr()?);
            server
                .serve_http_until(listener, proto_ai_tools_mcp::shutdown_signal())
                .await?;
        }
        other => {
            return Err(format!(
                "unknown mode `{other}`: use `stdio` or `http [ADDR [--alias-scope-header NAME]]`"
            )
            .into());
        }
    }
    eprintln!("MCP server stopped");
    grpc.shutdown().await;
    Ok(())
}
