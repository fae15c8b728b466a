//! `ai-tools`: any gRPC service as an MCP server, and tool definitions as
//! JSON for agents written in other languages. Logs go to stderr only.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use ai_tools::mcp::{self, McpServer};
use ai_tools::schema::overlay::{Overlay, PlainFields};
use ai_tools::store::{RedisStore, RedisStoreOptions};
use ai_tools::{
    Sessions, Toolkit,
    tool_set::{ToolSet, ToolSetOptions},
    transport::{TonicTransport, TonicTransportBuilder, TransportError},
};

const HELP: &str = "\
ai-tools: any gRPC service as tools for LLM agents

USAGE:
    ai-tools mcp   --grpc URL SOURCE [OPTIONS] (--stdio | --http ADDR)
    ai-tools tools SOURCE [OPTIONS] [--dialect DIALECT] [--stats]

SOURCE (where the service's descriptors come from; exactly one):
    --reflection            the server's gRPC reflection (v1, else v1alpha); needs --grpc
    --descriptor-set FILE   an encoded FileDescriptorSet with its imports
                            (protoc --include_imports --include_source_info
                            --descriptor_set_out, or buf build -o)
    --proto FILE [-I DIR]…  a .proto compiled here, imports under the -I directories
                            (default: the path's first directory, as ai_tools!
                            does: proto for proto/links/v1/links.proto)

OPTIONS:
    --grpc URL              the gRPC server, e.g. http://127.0.0.1:50051, or
                            https://host:port over TLS, verified against the
                            system's roots
    --ca-cert FILE          trust this CA (PEM) for the https:// server's
                            certificate, instead of the system's roots
    --client-cert FILE      with --client-key: present this certificate (PEM)
                            to the https:// server (mTLS)
    --client-key FILE       the private key (PEM) of --client-cert
    --reflection-timeout SECS
                            how long --reflection may take in all, connecting
                            included (default 30; fractions allowed)
    --overlay FILE          tool annotations from outside the protos (TOML)
    --service NAME          expose every unary and server-streaming method of
                            this service (fully qualified, or a glob such as
                            'google.cloud.compute.v1.*'; repeatable)
    --plain-fields optional|required
                            whether the --service tools require the fields that
                            are not optional, in a oneof or marked
                            field_behavior = REQUIRED (default optional: the
                            model sends only what it means to set)
    --include GLOB          keep only the tools that match this or another
                            --include (repeatable): a glob on the tool name
                            (links_*) or, with a /, on the method written
                            package.Service/Method (links.v1.LinksService/*)
    --exclude GLOB          drop the tools that match (repeatable; wins over
                            --include)
    --read-only             keep only the read-only tools (methods with
                            idempotency_level = NO_SIDE_EFFECTS), after
                            --include and --exclude; a glob that matches no
                            tool, or a choice that leaves none, is an error
    --tool-search           (mcp) list only search_tools, enable_toolset and
                            call_tool (and the --toolset tools): the model
                            searches the others, for APIs with more tools than
                            a model or host takes (README \"Large APIs\")
    --toolset NAME          (mcp --tool-search) list this toolset's tools from
                            the start: a service (fully qualified) or a
                            --define-toolset name (repeatable)
    --define-toolset NAME=GLOB[,GLOB...]
                            (mcp --tool-search) a toolset of the tools that
                            match the globs (as --include's), beside the one
                            per service (repeatable)
    --forward-header NAME   (mcp --http) copy this request header into each call's
                            gRPC metadata (repeatable)
    --dialect DIALECT       (tools) the shape of the list: mcp (default: what
                            ai-tools mcp lists), openai, anthropic, gemini, or
                            a provider's deferred loading: openai_tool_search
                            (namespaces, defer_loading, tool_search) or
                            anthropic_tool_search (defer_loading, the BM25
                            tool search tool)
    --stats                 (tools) instead of the list, what it costs per
                            dialect (or the one --dialect names): its tools,
                            bytes and tokens (o200k_base), and the largest
                            tools
    --host-profile NAME     what the MCP host does to schemas and arguments:
                            javascript (default: 64-bit integers as strings of
                            digits, which JSON.parse cannot round; no $ref) or
                            exact (a client that changes nothing)
    --log-format text|json  the logs on stderr: lines of text (default) or one
                            JSON object a line; RUST_LOG filters them (default
                            warn,ai_tools=info; ai_tools=debug adds a span per
                            step of each tool call)
    -h, --help              this help
    -V, --version           the version

SECURITY (mcp --http; the README's \"Securing the gateway\" has the details):
    --oauth-issuer URL      check every request's bearer token: an OAuth 2.1
                            resource server trusting this authorization server
    --oauth-audience URI    this server's resource URI as clients reach it
                            (https://tools.example.com/mcp): the audience every
                            token must name
    --oauth-jwks URL        the issuer's key set (default: from its metadata)
    --oauth-introspection URL
                            check opaque tokens at this RFC 7662 endpoint, as
                            --oauth-client-id with the secret read from
                            --oauth-client-secret-file FILE
    --required-scope S      a scope every token needs, else 403 (repeatable)
    --tool-scopes READ,WRITE
                            read-only tools need READ (or WRITE), others WRITE;
                            tools/list shows each caller what its token opens
    --claim-header CLAIM=HEADER
                            send the token's validated claim to the service as
                            this gRPC metadata (repeatable); the token itself
                            is never sent, and --forward-header authorization
                            is refused with --oauth-issuer
    --max-sessions-per-caller N
                            MCP sessions one caller (token issuer and
                            subject) holds at once (default 16); past it
                            initialize gets 429 with Retry-After
    --backend-token-file FILE, --backend-token-env VAR
                            (mcp) the gateway's own credential to the service,
                            sent as authorization: Bearer <token> (a file or an
                            environment variable: a flag's value would show
                            in ps)

ALIASES (mcp; the README's \"MCP sessions and aliases\" has the details):
    --alias-scope-header NAME
                            (mcp --http) a stateless request (MCP 2026-07-28,
                            no session) keeps its aliases under this header's
                            value: only behind a proxy that sets it on every
                            request (after the OAuth principal, if any)
    --single-user           (mcp --http, loopback only) stateless requests
                            with no other identity share one alias scope
    --redis URL             keep the aliases in Redis (redis://host:port), so
                            that several gateways share them
    --redis-cluster URL     the same on a Redis Cluster (a seed node;
                            repeatable)

CALLS (mcp; the README's Limits section has them all):
    --call-timeout SECS     the deadline of every tool call, sent to the service
                            as grpc-timeout (default 50: under the 60 s after
                            which most MCP hosts give up; 0 for none)
    --tool-timeout NAME=SECS
                            the deadline of one tool's calls, over
                            --call-timeout (repeatable)

HTTP LIMITS (mcp --http; the README's Limits section has them all):
    --max-body-bytes N      the largest request body (default 327680: the
                            256 KiB argument limit plus 64 KiB of JSON-RPC
                            envelope); larger is refused with 413 unread
    --max-sessions N        MCP sessions held at once (default 1000); past
                            it initialize gets 503 with Retry-After
    --session-idle-timeout SECS
                            a session without a message ends (default 300)
    --max-connections N     open connections (default 1024); past it new
                            ones wait, unaccepted, until one closes
    --header-timeout SECS   a request's headers, then its body, must arrive
                            within this (default 10)
    --idle-timeout SECS     a connection with no request in progress and no
                            byte sent is closed (default 60)
    --allowed-origin ORIGIN a browser Origin accepted besides loopback ones,
                            e.g. https://app.example.com:443 or
                            https://app.example.com:* (repeatable); any other
                            Origin gets 403, none at all passes
    --keep-calls-on-disconnect
                            let a tool call run to its end when its client's
                            connection closes (default: cancel it at the
                            service)

Methods annotated with rpc_tool in the protos are tools; --overlay and
--service add tools to protos you cannot edit; --include, --exclude and
--read-only choose among them. Ids in fields marked with an
alias_prefix reach the model as aliases (link-1), one namespace per MCP
session or, for a stateless request, per caller. On an address that is
not loopback, mcp --http needs a way to tell callers apart: --oauth-issuer
or --alias-scope-header.

EXAMPLES:
    # Serve a server with reflection over MCP on stdio, every method of one service:
    ai-tools mcp --grpc http://127.0.0.1:50051 --reflection --service pkg.v1.Things --stdio

    # The same over streamable HTTP at http://127.0.0.1:8080/mcp, per-user auth:
    ai-tools mcp --grpc http://127.0.0.1:50051 --descriptor-set api.binpb \\
        --overlay tools.toml --http 127.0.0.1:8080 --forward-header authorization

    # Only callers with a token from auth.example.com, who the service sees by id:
    ai-tools mcp --grpc https://api.internal:443 --reflection --http 0.0.0.0:8080 \\
        --oauth-issuer https://auth.example.com \\
        --oauth-audience https://tools.example.com/mcp --required-scope mcp:use \\
        --claim-header sub=x-user-id --backend-token-file /run/secrets/backend-token

    # A server over mTLS, its certificate signed by a private CA:
    ai-tools mcp --grpc https://links.internal:443 --reflection --stdio \\
        --ca-cert ca.pem --client-cert gateway.pem --client-key gateway.key

    # Only the tools of one service that change nothing, every other one left out:
    ai-tools mcp --grpc http://127.0.0.1:50051 --reflection --service pkg.v1.Things \\
        --include 'pkg.v1.Things/*' --read-only --stdio

    # Tool definitions for OpenAI, from a proto on disk:
    ai-tools tools --proto api/v1/service.proto -I proto --dialect openai

EXIT STATUS:
    0 success, 1 the tools could not be built or served, 2 a usage error
";

/// A usage error (exit 2) or a failure (exit 1).
#[derive(Debug)]
enum Failure {
    Usage(String),
    Run(String),
}

#[derive(Default)]
struct Args {
    command: String,
    grpc: Option<String>,
    tls: TlsFiles,
    reflection: bool,
    reflection_timeout: Option<Duration>,
    descriptor_set: Option<PathBuf>,
    proto: Option<PathBuf>,
    includes: Vec<PathBuf>,
    overlay: Option<PathBuf>,
    services: Vec<String>,
    plain_fields: Option<PlainFields>,
    /// `--include`, `--exclude` and `--read-only`: which tools are kept.
    include_tools: Vec<String>,
    exclude_tools: Vec<String>,
    read_only: bool,
    /// `--tool-search` and its `--toolset`s.
    tool_search: bool,
    toolsets: Vec<String>,
    /// `--define-toolset NAME=GLOB[,GLOB…]`.
    defined_toolsets: Vec<(String, Vec<String>)>,
    forward_headers: Vec<String>,
    stdio: bool,
    http: Option<String>,
    dialect: Option<String>,
    /// `tools --stats`: what the list costs, not the list.
    stats: bool,
    /// `--log-format`.
    log_format: LogFormat,
    host_profile: Option<ai_tools::schema::HostProfile>,
    calls: CallLimits,
    http_limits: HttpLimits,
    auth: AuthFlags,
    scopes: ScopeFlags,
}

/// Where `mcp` keeps aliases and whose they are: the scope of a stateless
/// request, and a store shared by replicas.
#[derive(Default, Debug, PartialEq)]
struct ScopeFlags {
    alias_scope_header: Option<String>,
    single_user: bool,
    redis: Option<String>,
    redis_cluster: Vec<String>,
}

impl ScopeFlags {
    fn check(&self, args: &Args) -> Result<(), Failure> {
        let usage = |m: &str| Err(Failure::Usage(m.to_owned()));
        if (self.alias_scope_header.is_some() || self.single_user) && args.http.is_none() {
            return usage(
                "`--alias-scope-header` and `--single-user` choose the alias scope of stateless HTTP requests: they are for `mcp --http` (over stdio the scope is the process)",
            );
        }
        if (self.redis.is_some() || !self.redis_cluster.is_empty()) && args.command != "mcp" {
            return usage(
                "`--redis` and `--redis-cluster` keep `mcp`'s aliases: they are for `mcp`",
            );
        }
        if self.redis.is_some() && !self.redis_cluster.is_empty() {
            return usage("give one alias store: `--redis URL` or `--redis-cluster URL`…");
        }
        Ok(())
    }

    /// The alias namespaces of the server: in memory, or in Redis; either
    /// way a scope is kept a day after its last use and each alias in it 30
    /// minutes, the least recently used expiring at the limit.
    async fn sessions(&self) -> Result<Sessions<()>, Failure> {
        let sessions = mcp::default_sessions();
        let mut options = RedisStoreOptions::default();
        options.ttl = mcp::SCOPE_IDLE_TTL;
        options.alias_idle = Some(mcp::ALIAS_IDLE_TTL);
        let store = if let Some(url) = &self.redis {
            RedisStore::connect_with(url, options).await
        } else if !self.redis_cluster.is_empty() {
            RedisStore::connect_cluster(self.redis_cluster.iter().map(String::as_str), options)
                .await
        } else {
            return Ok(sessions);
        };
        let store = store.map_err(|e| Failure::Run(format!("the alias store: {e}")))?;
        Ok(sessions.with_store(Arc::new(store)))
    }

    fn apply(&self, mut server: McpServer) -> Result<McpServer, Failure> {
        if let Some(name) = &self.alias_scope_header {
            server = server
                .with_alias_scope_header(name)
                .map_err(|e| Failure::Usage(format!("`--alias-scope-header {name}`: {e}")))?;
        }
        if self.single_user {
            tracing::info!(
                "--single-user: stateless requests (MCP 2026-07-28) share one local alias scope"
            );
            server = server.with_single_user(true);
        }
        Ok(server)
    }
}

/// The security flags of `mcp`: OAuth for the callers, a credential for the
/// service.
#[derive(Default, Debug, PartialEq)]
struct AuthFlags {
    issuer: Option<String>,
    audience: Option<String>,
    jwks: Option<String>,
    introspection: Option<String>,
    client_id: Option<String>,
    client_secret_file: Option<PathBuf>,
    required_scopes: Vec<String>,
    tool_scopes: Option<(String, String)>,
    claim_headers: Vec<(String, String)>,
    max_sessions_per_caller: Option<usize>,
    backend_token_file: Option<PathBuf>,
    backend_token_env: Option<String>,
}

impl AuthFlags {
    /// Whether any flag of OAuth (not the backend credential) was given.
    fn oauth_given(&self) -> bool {
        self.issuer.is_some()
            || self.audience.is_some()
            || self.jwks.is_some()
            || self.introspection.is_some()
            || self.client_id.is_some()
            || self.client_secret_file.is_some()
            || !self.required_scopes.is_empty()
            || self.tool_scopes.is_some()
            || !self.claim_headers.is_empty()
            || self.max_sessions_per_caller.is_some()
    }

    fn backend_token_given(&self) -> bool {
        self.backend_token_file.is_some() || self.backend_token_env.is_some()
    }

    /// A usage error for flags given without what they need.
    fn check(&self, args: &Args) -> Result<(), Failure> {
        let usage = |m: &str| Err(Failure::Usage(m.to_owned()));
        if self.backend_token_file.is_some() && self.backend_token_env.is_some() {
            return usage(
                "give the backend token once: `--backend-token-file` or `--backend-token-env`",
            );
        }
        if self.backend_token_given() && args.command != "mcp" {
            return usage("`--backend-token-file` and `--backend-token-env` are for `mcp`");
        }
        let forwards_authorization = args
            .forward_headers
            .iter()
            .any(|h| h.eq_ignore_ascii_case("authorization"));
        if self.backend_token_given() && forwards_authorization {
            return usage(
                "`--forward-header authorization` and a backend token both set the service's `authorization`: a caller's header would replace the gateway's credential, and a caller without one would get it; keep one",
            );
        }
        if !self.oauth_given() {
            return Ok(());
        }
        if args.command != "mcp" || args.http.is_none() {
            return usage(
                "the OAuth flags protect `mcp --http`: over stdio the client runs the server itself and sends no tokens",
            );
        }
        if self.issuer.is_none() || self.audience.is_none() {
            return usage(
                "OAuth needs both `--oauth-issuer URL` (who issues the tokens) and `--oauth-audience URI` (this server's resource URI, which every token must name)",
            );
        }
        let introspection = [
            self.introspection.is_some(),
            self.client_id.is_some(),
            self.client_secret_file.is_some(),
        ];
        if introspection.contains(&true) && introspection.contains(&false) {
            return usage(
                "`--oauth-introspection URL`, `--oauth-client-id ID` and `--oauth-client-secret-file FILE` go together: give all three",
            );
        }
        if forwards_authorization {
            return usage(
                "`--forward-header authorization` with `--oauth-issuer` would pass the caller's token, issued for this server, on to the service, which the MCP authorization spec forbids: send who the caller is with `--claim-header`, and the gateway's own credential with `--backend-token-file`",
            );
        }
        Ok(())
    }

    /// The OAuth configuration, secrets read.
    fn oauth(&self) -> Result<Option<ai_tools::mcp::OAuth>, Failure> {
        let (Some(issuer), Some(audience)) = (&self.issuer, &self.audience) else {
            return Ok(None);
        };
        let mut oauth = ai_tools::mcp::OAuth::new(audience, issuer);
        if let Some(jwks) = &self.jwks {
            oauth = oauth.jwks_uri(jwks);
        }
        if let (Some(endpoint), Some(client_id), Some(secret_file)) = (
            &self.introspection,
            &self.client_id,
            &self.client_secret_file,
        ) {
            let secret = read_secret("--oauth-client-secret-file", secret_file)?;
            if secret.is_empty() {
                return Err(Failure::Run(format!(
                    "`--oauth-client-secret-file {}` is empty",
                    secret_file.display()
                )));
            }
            oauth = oauth.introspection(endpoint, client_id, secret);
        }
        for scope in &self.required_scopes {
            oauth = oauth.required_scope(scope);
        }
        if let Some((read, write)) = &self.tool_scopes {
            oauth = oauth.tool_scopes(read, write);
        }
        for (claim, header) in &self.claim_headers {
            oauth = oauth.claim_header(claim, header);
        }
        if let Some(max) = self.max_sessions_per_caller {
            oauth = oauth.max_sessions_per_caller(max);
        }
        Ok(Some(oauth))
    }

    /// `authorization: Bearer <token>` for every call, from the file or the
    /// environment variable.
    fn backend_credential(&self) -> Result<Option<ai_tools::CallOptions>, Failure> {
        let token = match (&self.backend_token_file, &self.backend_token_env) {
            (Some(path), _) => read_secret("--backend-token-file", path)?,
            (None, Some(var)) => std::env::var(var).map_err(|_| {
                Failure::Run(format!(
                    "`--backend-token-env {var}`: the environment variable `{var}` is not set or not UTF-8"
                ))
            })?,
            (None, None) => return Ok(None),
        };
        let token = token.trim();
        if token.is_empty() || !token.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
            return Err(Failure::Run(
                "the backend token is empty or holds characters gRPC metadata cannot carry (give printable ASCII without spaces)"
                    .into(),
            ));
        }
        Ok(Some(
            ai_tools::CallOptions::new().metadata("authorization", format!("Bearer {token}")),
        ))
    }
}

/// A secret read from a file (trailing newline and spaces trimmed).
fn read_secret(flag: &str, path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map(|text| text.trim().to_owned())
        .map_err(|e| Failure::Run(format!("`{flag} {}`: {e}", path.display())))
}

/// `--ca-cert`, `--client-cert` and `--client-key`: TLS to the `--grpc`
/// server.
#[derive(Default, Debug, PartialEq)]
struct TlsFiles {
    ca_cert: Option<PathBuf>,
    client_cert: Option<PathBuf>,
    client_key: Option<PathBuf>,
}

impl TlsFiles {
    fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// A usage error for files given without their pair, or without an
    /// `https://` server.
    fn check(&self, grpc: Option<&str>) -> Result<(), Failure> {
        if self.client_cert.is_some() != self.client_key.is_some() {
            return Err(Failure::Usage(
                "`--client-cert FILE` and `--client-key FILE` go together: give both".into(),
            ));
        }
        match grpc {
            _ if self.is_empty() => Ok(()),
            None => Err(Failure::Usage(
                "`--ca-cert`, `--client-cert` and `--client-key` are for the server of `--grpc URL`: give it"
                    .into(),
            )),
            Some(url) if !url.starts_with("https://") => Err(Failure::Usage(format!(
                "`--ca-cert`, `--client-cert` and `--client-key` are for TLS: use an https:// URL, not `--grpc {url}`"
            ))),
            Some(_) => Ok(()),
        }
    }

    /// A transport builder for `url`, the files read.
    fn builder(&self, url: &str) -> Result<TonicTransportBuilder, Failure> {
        let read = |what: &str, path: &Path| {
            std::fs::read(path)
                .map_err(|e| Failure::Run(format!("the {what} {}: {e}", path.display())))
        };
        let mut builder = TonicTransport::builder(url);
        if let Some(path) = &self.ca_cert {
            builder = builder.ca_certificate(read("CA certificate", path)?);
        }
        if let (Some(cert), Some(key)) = (&self.client_cert, &self.client_key) {
            builder = builder
                .client_identity(read("client certificate", cert)?, read("client key", key)?);
        }
        Ok(builder)
    }
}

/// A transport error: of the URL, a usage error; else a failure.
fn transport_failure(e: TransportError) -> Failure {
    match e {
        TransportError::InvalidUrl { .. } | TransportError::TlsNeedsHttps { .. } => {
            Failure::Usage(format!("`--grpc`: {e}"))
        }
        _ => Failure::Run(e.to_string()),
    }
}

/// The deadlines of `mcp`'s tool calls given on the command line.
#[derive(Default, Debug, PartialEq)]
struct CallLimits {
    /// `Some(None)`: no deadline; `None` keeps the server's default.
    timeout: Option<Option<Duration>>,
    per_tool: Vec<(String, Duration)>,
}

impl CallLimits {
    fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    fn apply(&self, mut server: McpServer) -> McpServer {
        if let Some(timeout) = self.timeout {
            server = server.with_call_timeout(timeout);
        }
        for (tool, timeout) in &self.per_tool {
            server = server.with_tool_timeout(tool.clone(), *timeout);
        }
        server
    }
}

/// The `mcp --http` limits given on the command line; `None` keeps the
/// server's default.
#[derive(Default, Debug, PartialEq)]
struct HttpLimits {
    max_body_bytes: Option<usize>,
    max_sessions: Option<usize>,
    session_idle_timeout: Option<Duration>,
    max_connections: Option<usize>,
    header_timeout: Option<Duration>,
    idle_timeout: Option<Duration>,
    allowed_origins: Vec<String>,
    keep_calls_on_disconnect: bool,
}

impl HttpLimits {
    fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    fn apply(&self, mut server: McpServer) -> McpServer {
        if let Some(n) = self.max_body_bytes {
            server = server.with_max_request_body_bytes(n);
        }
        if let Some(n) = self.max_sessions {
            server = server.with_max_sessions(n);
        }
        if let Some(t) = self.session_idle_timeout {
            server = server.with_session_idle_timeout(t);
        }
        if let Some(n) = self.max_connections {
            server = server.with_max_connections(n);
        }
        if let Some(t) = self.header_timeout {
            server = server.with_header_timeout(t);
        }
        if let Some(t) = self.idle_timeout {
            server = server.with_idle_timeout(t);
        }
        server
            .with_allowed_origins(self.allowed_origins.iter().cloned())
            .with_cancel_on_disconnect(!self.keep_calls_on_disconnect)
    }
}

/// A positive number of seconds, fractions allowed.
fn seconds(flag: &str, text: &str) -> Result<Duration, Failure> {
    text.parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| {
            Failure::Usage(format!(
                "`{flag} {text}`: give a positive number of seconds"
            ))
        })
}

/// A positive whole number.
fn count(flag: &str, text: &str) -> Result<usize, Failure> {
    text.parse::<usize>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| Failure::Usage(format!("`{flag} {text}`: give a positive whole number")))
}

fn parse(mut argv: impl Iterator<Item = String>) -> Result<Option<Args>, Failure> {
    let mut args = Args::default();
    let usage = |m: String| Failure::Usage(m);
    while let Some(arg) = argv.next() {
        let mut value = |name: &str| {
            argv.next()
                .ok_or_else(|| usage(format!("`{name}` needs a value")))
        };
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "-V" | "--version" => {
                println!("ai-tools {}", env!("CARGO_PKG_VERSION"));
                std::process::exit(0);
            }
            "--grpc" => args.grpc = Some(value("--grpc")?),
            "--ca-cert" => args.tls.ca_cert = Some(value(&arg)?.into()),
            "--client-cert" => args.tls.client_cert = Some(value(&arg)?.into()),
            "--client-key" => args.tls.client_key = Some(value(&arg)?.into()),
            "--reflection" => args.reflection = true,
            "--reflection-timeout" => {
                let secs = value("--reflection-timeout")?;
                let timeout = secs
                    .parse::<f64>()
                    .ok()
                    .filter(|s| *s > 0.0)
                    .and_then(|s| Duration::try_from_secs_f64(s).ok())
                    .ok_or_else(|| {
                        usage(format!(
                            "`--reflection-timeout {secs}`: give a positive number of seconds"
                        ))
                    })?;
                args.reflection_timeout = Some(timeout);
            }
            "--descriptor-set" => args.descriptor_set = Some(value("--descriptor-set")?.into()),
            "--proto" => args.proto = Some(value("--proto")?.into()),
            "-I" => args.includes.push(value("-I")?.into()),
            "--include" => args.include_tools.push(value(&arg)?),
            "--exclude" => args.exclude_tools.push(value(&arg)?),
            "--read-only" => args.read_only = true,
            "--tool-search" => args.tool_search = true,
            "--log-format" => {
                let format = value(&arg)?;
                args.log_format = match format.as_str() {
                    "text" => LogFormat::Text,
                    "json" => LogFormat::Json,
                    _ => {
                        return Err(usage(format!(
                            "`--log-format {format}`: use `text` or `json`"
                        )));
                    }
                };
            }
            "--toolset" => args.toolsets.push(value(&arg)?),
            "--define-toolset" => {
                let given = value(&arg)?;
                let (name, globs) = given
                    .split_once('=')
                    .filter(|(name, globs)| !name.is_empty() && !globs.is_empty())
                    .ok_or_else(|| {
                        usage(format!(
                            "`--define-toolset {given}`: give NAME=GLOB[,GLOB...], e.g. reading='*_list,*_get'"
                        ))
                    })?;
                args.defined_toolsets.push((
                    name.to_owned(),
                    globs.split(',').map(str::to_owned).collect(),
                ));
            }
            "--overlay" => args.overlay = Some(value("--overlay")?.into()),
            "--service" => args.services.push(value("--service")?),
            "--plain-fields" => {
                let choice = value("--plain-fields")?;
                args.plain_fields = Some(match choice.as_str() {
                    "optional" => PlainFields::Optional,
                    "required" => PlainFields::Required,
                    _ => {
                        return Err(usage(format!(
                            "`--plain-fields {choice}`: use `optional` (only fields marked field_behavior = REQUIRED are required) or `required` (every field that is not optional or in a oneof)"
                        )));
                    }
                });
            }
            "--forward-header" => args.forward_headers.push(value("--forward-header")?),
            "--oauth-issuer" => args.auth.issuer = Some(value(&arg)?),
            "--oauth-audience" => args.auth.audience = Some(value(&arg)?),
            "--oauth-jwks" => args.auth.jwks = Some(value(&arg)?),
            "--oauth-introspection" => args.auth.introspection = Some(value(&arg)?),
            "--oauth-client-id" => args.auth.client_id = Some(value(&arg)?),
            "--oauth-client-secret-file" => {
                args.auth.client_secret_file = Some(value(&arg)?.into());
            }
            "--required-scope" => args.auth.required_scopes.push(value(&arg)?),
            "--tool-scopes" => {
                let given = value(&arg)?;
                let pair = given
                    .split_once(',')
                    .filter(|(read, write)| {
                        !read.is_empty() && !write.is_empty() && !write.contains(',')
                    })
                    .ok_or_else(|| {
                        usage(format!(
                            "`--tool-scopes {given}`: give READ,WRITE, e.g. tools:read,tools:write"
                        ))
                    })?;
                args.auth.tool_scopes = Some((pair.0.to_owned(), pair.1.to_owned()));
            }
            "--claim-header" => {
                let given = value(&arg)?;
                let pair = given
                    .split_once('=')
                    .filter(|(claim, header)| !claim.is_empty() && !header.is_empty())
                    .ok_or_else(|| {
                        usage(format!(
                            "`--claim-header {given}`: give CLAIM=HEADER, e.g. sub=x-user-id"
                        ))
                    })?;
                args.auth
                    .claim_headers
                    .push((pair.0.to_owned(), pair.1.to_ascii_lowercase()));
            }
            "--max-sessions-per-caller" => {
                args.auth.max_sessions_per_caller = Some(count(&arg, &value(&arg)?)?);
            }
            "--backend-token-file" => args.auth.backend_token_file = Some(value(&arg)?.into()),
            "--backend-token-env" => args.auth.backend_token_env = Some(value(&arg)?),
            "--max-body-bytes" => {
                args.http_limits.max_body_bytes = Some(count(&arg, &value(&arg)?)?);
            }
            "--max-sessions" => args.http_limits.max_sessions = Some(count(&arg, &value(&arg)?)?),
            "--session-idle-timeout" => {
                args.http_limits.session_idle_timeout = Some(seconds(&arg, &value(&arg)?)?);
            }
            "--max-connections" => {
                args.http_limits.max_connections = Some(count(&arg, &value(&arg)?)?);
            }
            "--header-timeout" => {
                args.http_limits.header_timeout = Some(seconds(&arg, &value(&arg)?)?);
            }
            "--idle-timeout" => {
                args.http_limits.idle_timeout = Some(seconds(&arg, &value(&arg)?)?);
            }
            "--allowed-origin" => {
                let origin = value(&arg)?;
                if origin != "null" && !origin.contains("://") {
                    return Err(usage(format!(
                        "`--allowed-origin {origin}`: give scheme://host:port, scheme://host:* for any port, or null"
                    )));
                }
                args.http_limits.allowed_origins.push(origin);
            }
            "--keep-calls-on-disconnect" => args.http_limits.keep_calls_on_disconnect = true,
            "--alias-scope-header" => {
                args.scopes.alias_scope_header = Some(value("--alias-scope-header")?);
            }
            "--single-user" => args.scopes.single_user = true,
            "--redis" => args.scopes.redis = Some(value("--redis")?),
            "--redis-cluster" => args.scopes.redis_cluster.push(value("--redis-cluster")?),
            "--call-timeout" => {
                let secs = value(&arg)?;
                args.calls.timeout = Some(if secs.parse::<f64>() == Ok(0.0) {
                    None
                } else {
                    Some(seconds(&arg, &secs).map_err(|_| {
                        usage(format!(
                            "`--call-timeout {secs}`: give a positive number of seconds, or 0 for no deadline"
                        ))
                    })?)
                });
            }
            "--tool-timeout" => {
                let given = value(&arg)?;
                let (tool, secs) = given
                    .split_once('=')
                    .filter(|(tool, _)| !tool.is_empty())
                    .ok_or_else(|| {
                        usage(format!(
                            "`--tool-timeout {given}`: give NAME=SECS, e.g. reports_generate=300"
                        ))
                    })?;
                let timeout = seconds(&arg, secs).map_err(|_| {
                    usage(format!(
                        "`--tool-timeout {given}`: give a positive number of seconds after `=`"
                    ))
                })?;
                args.calls.per_tool.push((tool.to_owned(), timeout));
            }
            "--stdio" => args.stdio = true,
            "--http" => args.http = Some(value("--http")?),
            "--dialect" => args.dialect = Some(value("--dialect")?),
            "--stats" => args.stats = true,
            "--host-profile" => {
                let name = value("--host-profile")?;
                args.host_profile = Some(name.parse().map_err(|e| usage(format!("{e}")))?);
            }
            command @ ("mcp" | "tools") if args.command.is_empty() => {
                args.command = command.to_owned();
            }
            other => {
                return Err(usage(format!(
                    "unexpected argument `{other}`; see `ai-tools --help`"
                )));
            }
        }
    }
    if args.command.is_empty() {
        return Err(usage(
            "name a command: `mcp` or `tools`; see `ai-tools --help`".into(),
        ));
    }
    let sources = usize::from(args.reflection)
        + usize::from(args.descriptor_set.is_some())
        + usize::from(args.proto.is_some());
    if sources != 1 {
        return Err(usage(
            "give exactly one of `--reflection`, `--descriptor-set FILE` and `--proto FILE`".into(),
        ));
    }
    if args.reflection_timeout.is_some() && !args.reflection {
        return Err(usage("`--reflection-timeout` is for `--reflection`".into()));
    }
    if args.plain_fields.is_some() && args.services.is_empty() {
        return Err(usage(
            "`--plain-fields` is for the services exposed whole: give `--service NAME`".into(),
        ));
    }
    if !args.defined_toolsets.is_empty() && !args.tool_search {
        return Err(usage(
            "`--define-toolset` makes a toolset for `--tool-search`: give `--tool-search`".into(),
        ));
    }
    if !args.toolsets.is_empty() && !args.tool_search {
        return Err(usage(
            "`--toolset` says which tools `--tool-search` lists from the start: give `--tool-search`"
                .into(),
        ));
    }
    if args.tool_search && args.command != "mcp" {
        return Err(usage("`--tool-search` is for `mcp`".into()));
    }
    args.tls.check(args.grpc.as_deref())?;
    args.auth.check(&args)?;
    args.scopes.check(&args)?;
    if args.reflection && args.grpc.is_none() {
        return Err(usage(
            "`--reflection` asks the server: give `--grpc URL`".into(),
        ));
    }
    if args.command == "mcp" {
        if args.grpc.is_none() {
            return Err(usage("`mcp` calls a server: give `--grpc URL`".into()));
        }
        if args.stdio == args.http.is_some() {
            return Err(usage(
                "`mcp` serves over one transport: give `--stdio` or `--http ADDR`".into(),
            ));
        }
        if args.dialect.is_some() || args.stats {
            return Err(usage("`--dialect` and `--stats` are for `tools`".into()));
        }
        if args.stdio && !args.http_limits.is_empty() {
            return Err(usage(
                "the HTTP limits (`--max-body-bytes`, `--max-sessions`, …) are for `mcp --http`"
                    .into(),
            ));
        }
    } else if args.stdio
        || args.http.is_some()
        || !args.forward_headers.is_empty()
        || !args.http_limits.is_empty()
        || !args.calls.is_empty()
    {
        return Err(usage(
            "`--stdio`, `--http`, `--forward-header`, the deadlines and the HTTP limits are for `mcp`"
                .into(),
        ));
    }
    Ok(Some(args))
}

/// `--proto`: `proto` compiled as `ai_tools!` compiles it
/// ([`ai_tools_schema::proto_resolver`]), under `includes` or else the
/// proto's own directory.
fn compile_proto(proto: &Path, includes: &[PathBuf]) -> Result<Vec<u8>, Failure> {
    let includes: Vec<PathBuf> = if includes.is_empty() {
        vec![default_include(proto)]
    } else {
        includes.to_vec()
    };
    let mut compiler =
        protox::Compiler::with_file_resolver(ai_tools_schema::proto_resolver(&includes));
    compiler.include_imports(true).include_source_info(true);
    // protox names a file by its path under an include directory.
    let name = includes
        .iter()
        .find_map(|dir| proto.strip_prefix(dir).ok())
        .unwrap_or(proto);
    compiler.open_file(name).map_err(|e| {
        // Where the error is (an imported file's line and column), else
        // the proto asked for.
        let at = ai_tools_schema::error_location(&e).map_or_else(
            || proto.display().to_string(),
            |at| as_reached(&at, &includes),
        );
        Failure::Run(format!("{at}: {e}"))
    })?;
    Ok(compiler.encode_file_descriptor_set())
}

/// The include directory of `--proto` without `-I`, by `ai_tools!`'s rule:
/// the first directory of a relative path (`proto` for
/// `proto/links/v1/links.proto`, so that its imports, written from that
/// root, resolve), the current directory for a bare file name; an absolute
/// path's own directory.
fn default_include(proto: &Path) -> PathBuf {
    if proto.is_absolute() {
        return proto.parent().map(PathBuf::from).unwrap_or_default();
    }
    let mut parts = proto.components();
    match (parts.next(), parts.next()) {
        (Some(first), Some(_)) => PathBuf::from(first.as_os_str()),
        _ => PathBuf::from("."),
    }
}

/// `location` (`file:line:column`, or a file, named as protox names it:
/// under its include directory) with the file as the user reaches it from
/// here: joined to the include directory that holds it
/// (`proto/links/v1/links.proto:9:23`, not `links/v1/links.proto:9:23`).
fn as_reached(location: &str, includes: &[PathBuf]) -> String {
    let mut parts = location.rsplitn(3, ':');
    let (column, line, file) = (parts.next(), parts.next(), parts.next());
    let (file, position) = match (file, line, column) {
        (Some(file), Some(line), Some(column))
            if line.parse::<u32>().is_ok() && column.parse::<u32>().is_ok() =>
        {
            (file, format!(":{line}:{column}"))
        }
        _ => (location, String::new()),
    };
    let reached = includes
        .iter()
        .map(|dir| dir.join(file))
        .find(|path| path.is_file())
        .map_or_else(|| file.to_owned(), |path| path.display().to_string());
    format!("{reached}{position}")
}

async fn tool_set(args: &Args) -> Result<ToolSet, Failure> {
    let mut options = ToolSetOptions::new();
    if let Some(path) = &args.overlay {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::Run(format!("the overlay {}: {e}", path.display())))?;
        let overlay = Overlay::parse(&path.display().to_string(), &text).map_err(|d| {
            Failure::Run(
                d.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
        })?;
        options = options.overlay(overlay);
    }
    for service in &args.services {
        options = options.service(service.clone());
    }
    if let Some(plain_fields) = args.plain_fields {
        options = options.plain_fields(plain_fields);
    }
    for pattern in &args.include_tools {
        options = options.include(pattern.clone());
    }
    for pattern in &args.exclude_tools {
        options = options.exclude(pattern.clone());
    }
    options = options.read_only(args.read_only);
    if let Some(timeout) = args.reflection_timeout {
        options = options.reflection_timeout(timeout);
    }
    let set = if args.reflection {
        let url = args.grpc.as_deref().unwrap_or_default();
        tracing::info!(
            "reading the descriptors of {url} by reflection (at most {:?})",
            options.reflection_timeout
        );
        let report = |n: usize| {
            if n.is_multiple_of(25) {
                tracing::info!("{n} files fetched");
            }
        };
        let builder = args.tls.builder(url)?;
        // Over TLS, connect first: a certificate that does not verify is
        // said as such, naming the host, and the reflection has what is
        // left of its timeout.
        let transport = if url.starts_with("https://") {
            let started = std::time::Instant::now();
            let transport = builder
                .connect_timeout(options.reflection_timeout)
                .connect()
                .await
                .map_err(transport_failure)?;
            let left = options.reflection_timeout.saturating_sub(started.elapsed());
            options = options.reflection_timeout(left.max(Duration::from_millis(1)));
            transport
        } else {
            builder.connect_lazy().map_err(transport_failure)?
        };
        // The library cannot name the server (a channel does not say where
        // it goes): the error does here.
        ToolSet::from_reflection(transport.channel().clone(), &options, &report)
            .await
            .map_err(|e| Failure::Run(format!("{url}: {e}")))?
    } else {
        let bytes = match (&args.descriptor_set, &args.proto) {
            (Some(path), _) => std::fs::read(path)
                .map_err(|e| Failure::Run(format!("the descriptor set {}: {e}", path.display())))?,
            (None, Some(proto)) => compile_proto(proto, &args.includes)?,
            (None, None) => unreachable!("parse requires a source"),
        };
        ToolSet::from_descriptor_set(&bytes, &options).map_err(|e| Failure::Run(e.to_string()))?
    };
    tracing::info!("{} tools", set.tools().len());
    for method in set.left_out() {
        tracing::warn!(
            "{method} is not a tool: client- and bidirectional-streaming methods cannot be"
        );
    }
    Ok(set)
}

async fn run(args: Args) -> Result<(), Failure> {
    let set = tool_set(&args).await?;
    if args.command == "tools" {
        // Only listed, never called.
        let transport = TonicTransport::builder("http://127.0.0.1:1")
            .connect_lazy()
            .map_err(transport_failure)?;
        let toolkit = Toolkit::builder()
            .generated(set.executor(transport))
            .build()
            .map_err(|e| Failure::Run(e.to_string()))?;
        let host = args.host_profile.unwrap_or_default();
        // The provider's shape, each tool's parameters rendered for the host.
        let for_host = |mut all: serde_json::Value, list: &str, at: &str, dialect| {
            let tools = toolkit.tools();
            let items = if list.is_empty() {
                all.as_array_mut()
            } else {
                all[list].as_array_mut()
            };
            for (item, tool) in items.into_iter().flatten().zip(tools) {
                if let Some(slot) = item.pointer_mut(at) {
                    *slot = tool.parameters_for_host(dialect, host);
                }
            }
            all
        };
        use ai_tools::schema::Dialect;
        let listing = |dialect: &str| -> Result<serde_json::Value, Failure> {
            Ok(match dialect {
                "openai" => for_host(
                    toolkit.to_openai(),
                    "",
                    "/function/parameters",
                    Dialect::OpenAi,
                ),
                "anthropic" => for_host(
                    toolkit.to_anthropic(),
                    "",
                    "/input_schema",
                    Dialect::Anthropic,
                ),
                "gemini" => for_host(
                    toolkit.to_gemini(),
                    "functionDeclarations",
                    "/parameters",
                    Dialect::Gemini,
                ),
                // Deferred loading: the provider's tool search loads a
                // definition when the model searches for it.
                "openai_tool_search" => toolkit.to_openai_tool_search(),
                "anthropic_tool_search" => toolkit.to_anthropic_tool_search(
                    ai_tools::toolkit::deferred::AnthropicToolSearch::Bm25,
                ),
                // What `ai-tools mcp` lists.
                "mcp" => serde_json::Value::Array(
                    toolkit
                        .tools()
                        .iter()
                        .map(|tool| {
                            serde_json::to_value(ai_tools::mcp::to_mcp_tool_for_host(
                                tool,
                                ai_tools::mcp::MCP_DIALECT,
                                host,
                            ))
                            .unwrap_or_default()
                        })
                        .collect(),
                ),
                other => {
                    return Err(Failure::Usage(format!(
                        "unknown dialect `{other}`: use openai, anthropic, gemini, mcp, openai_tool_search or anthropic_tool_search"
                    )));
                }
            })
        };
        let text = if args.stats {
            let dialects: Vec<&str> = match args.dialect.as_deref() {
                Some(one) => vec![one],
                None => vec![
                    "openai",
                    "anthropic",
                    "gemini",
                    "mcp",
                    "openai_tool_search",
                    "anthropic_tool_search",
                ],
            };
            let mut text = String::new();
            for dialect in dialects {
                text.push_str(&stats::of_listing(dialect, &listing(dialect)?));
            }
            text
        } else {
            format!("{:#}", listing(args.dialect.as_deref().unwrap_or("mcp"))?)
        };
        // A closed pipe (`| head`) is the reader's choice, not a failure.
        let mut out = std::io::stdout().lock();
        return match writeln!(out, "{}", text.trim_end()) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                Err(Failure::Run(format!("writing the tools: {e}")))
            }
            _ => Ok(()),
        };
    }
    let url = args.grpc.clone().unwrap_or_default();
    let transport = args
        .tls
        .builder(&url)?
        .connect_lazy()
        .map_err(transport_failure)?;
    let sessions = Arc::new(args.scopes.sessions().await?);
    let server = McpServer::new(move |aliases| {
        Toolkit::builder()
            .alias_manager(aliases.clone())
            .generated(set.executor_with_alias_manager(transport.clone(), aliases))
            .build()
    })
    .with_sessions(sessions)
    .with_server_info("ai-tools", env!("CARGO_PKG_VERSION"))
    .with_host_profile(args.host_profile.unwrap_or_default())
    .forward_headers(args.forward_headers.iter().map(String::as_str))
    .map_err(|e| Failure::Usage(e.to_string()))?;
    let mut server = args
        .scopes
        .apply(args.calls.apply(args.http_limits.apply(server)))?;
    if let Some(credential) = args.auth.backend_credential()? {
        server = server.with_call_options(credential);
    }
    if let Some(oauth) = args.auth.oauth()? {
        server = server.with_oauth(oauth);
    }
    if args.tool_search {
        let search = args
            .defined_toolsets
            .iter()
            .fold(ai_tools::mcp::ToolSearch::new(), |search, (name, globs)| {
                search.define(name.clone(), globs.clone())
            });
        let search = args
            .toolsets
            .iter()
            .fold(search, |search, toolset| search.toolset(toolset.clone()));
        server = server.with_tool_search(search);
    }
    if args.stdio {
        tracing::info!("serving {url} over MCP on stdio");
        server
            .serve_stdio()
            .await
            .map_err(|e| Failure::Run(e.to_string()))
    } else {
        let addr = args.http.unwrap_or_default();
        let listener = tokio::net::TcpListener::bind(&addr)
            .await
            .map_err(|e| Failure::Run(format!("cannot listen on {addr}: {e}")))?;
        let local = listener
            .local_addr()
            .map_err(|e| Failure::Run(e.to_string()))?;
        server
            .check_address(local)
            .map_err(|e| Failure::Usage(e.to_string()))?;
        tracing::info!("serving {url} over MCP at http://{local}/mcp");
        server
            .serve_http_until(listener, ai_tools::mcp::shutdown_signal())
            .await
            .map_err(|e| Failure::Run(e.to_string()))
    }
}

mod stats;

/// The format of the logs on stderr (`--log-format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum LogFormat {
    /// Lines of text.
    #[default]
    Text,
    /// One JSON object a line, for a log collector.
    Json,
}

/// The filter of the logs when `RUST_LOG` says nothing: the command's own
/// news and the runtime's, warnings of everything else.
const DEFAULT_LOG_FILTER: &str = "warn,ai_tools=info";

/// Logs to stderr (stdout carries MCP over stdio, or the tools), as
/// `format` says, filtered by `RUST_LOG` or else [`DEFAULT_LOG_FILTER`].
/// A `RUST_LOG` that does not parse is said, and the default used.
fn logs(format: LogFormat) {
    use tracing_subscriber::EnvFilter;
    let (filter, bad) = match std::env::var("RUST_LOG") {
        Ok(text) if !text.trim().is_empty() => match EnvFilter::try_new(&text) {
            Ok(filter) => (filter, None),
            Err(e) => (
                EnvFilter::new(DEFAULT_LOG_FILTER),
                Some(format!("{text}: {e}")),
            ),
        },
        _ => (EnvFilter::new(DEFAULT_LOG_FILTER), None),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false);
    let installed = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
    if let Err(e) = installed {
        eprintln!("ai-tools: the logs could not be set up: {e}");
    }
    if let Some(bad) = bad {
        tracing::warn!("RUST_LOG is not a filter ({bad}); using {DEFAULT_LOG_FILTER}");
    }
}

/// jemalloc with background threads, not the system allocator: it returns
/// the memory of expired sessions to the OS, which glibc's malloc kept (see
/// RELIABILITY.md, "Memory after sessions expire").
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(Failure::Usage(message) | Failure::Run(message)) => {
            eprintln!("ai-tools: {message}");
            return ExitCode::from(2);
        }
    };
    logs(args.log_format);
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(message)) => {
            eprintln!("ai-tools: {message}");
            ExitCode::from(2)
        }
        Err(Failure::Run(message)) => {
            eprintln!("ai-tools: {message}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(line: &str) -> Result<Option<Args>, Failure> {
        parse(line.split_whitespace().map(str::to_owned))
    }

    fn usage_error(line: &str) -> String {
        match parsed(line) {
            Err(Failure::Usage(m)) => m,
            Err(Failure::Run(m)) => panic!("not a usage error: {m}"),
            Ok(_) => panic!("`{line}` parsed"),
        }
    }

    #[test]
    fn a_whole_command_line() {
        let args = parsed("mcp --grpc http://h:1 --reflection --service a.B --service c.D --http 127.0.0.1:0 --forward-header authorization")
            .ok()
            .flatten()
            .expect("parses");
        assert_eq!(args.command, "mcp");
        assert!(args.reflection);
        assert_eq!(args.services, ["a.B", "c.D"]);
        assert_eq!(args.forward_headers, ["authorization"]);
        assert!(matches!(parsed("--help"), Ok(None)));
    }

    #[test]
    fn mistakes_are_usage_errors_that_say_what_to_do() {
        assert!(usage_error("").contains("name a command"));
        assert!(usage_error("tools").contains("exactly one of"));
        assert!(usage_error("tools --reflection").contains("--grpc URL"));
        assert!(usage_error("mcp --descriptor-set x --stdio").contains("--grpc URL"));
        assert!(usage_error("mcp --grpc u --descriptor-set x").contains("--stdio"));
        assert!(usage_error("tools --descriptor-set x --stdio").contains("are for `mcp`"));
        assert!(usage_error("tools --descriptor-set").contains("needs a value"));
        assert!(usage_error("tools --frobnicate").contains("unexpected argument"));
        assert!(
            usage_error("tools --grpc u --reflection --reflection-timeout 0")
                .contains("positive number of seconds")
        );
        assert!(
            usage_error("tools --grpc u --reflection --reflection-timeout soon")
                .contains("positive number of seconds")
        );
        assert!(
            usage_error("tools --descriptor-set x --reflection-timeout 5")
                .contains("is for `--reflection`")
        );
        let args = parsed("tools --grpc u --reflection --reflection-timeout 2.5")
            .ok()
            .flatten()
            .expect("parses");
        assert_eq!(args.reflection_timeout, Some(Duration::from_millis(2500)));
    }

    #[test]
    fn http_limits_are_for_mcp_over_http() {
        let args = parsed(
            "mcp --grpc u --proto x --http 127.0.0.1:0 --max-body-bytes 1000 --max-sessions 50 \
             --session-idle-timeout 600 --max-connections 64 --header-timeout 2.5 --idle-timeout 30 \
             --allowed-origin https://app.example.com:443 --allowed-origin http://dev.example:*",
        )
        .ok()
        .flatten()
        .expect("parses");
        assert_eq!(
            args.http_limits,
            HttpLimits {
                max_body_bytes: Some(1000),
                max_sessions: Some(50),
                session_idle_timeout: Some(Duration::from_secs(600)),
                max_connections: Some(64),
                header_timeout: Some(Duration::from_millis(2500)),
                idle_timeout: Some(Duration::from_secs(30)),
                allowed_origins: vec![
                    "https://app.example.com:443".to_owned(),
                    "http://dev.example:*".to_owned()
                ],
                keep_calls_on_disconnect: false,
            }
        );
        let keep = parsed("mcp --grpc u --proto x --http a --keep-calls-on-disconnect")
            .ok()
            .flatten()
            .expect("parses");
        assert!(keep.http_limits.keep_calls_on_disconnect);
        assert!(
            usage_error("mcp --grpc u --proto x --stdio --keep-calls-on-disconnect")
                .contains("are for `mcp --http`")
        );
        assert!(
            usage_error("mcp --grpc u --proto x --http a --max-sessions 0")
                .contains("positive whole number")
        );
        assert!(
            usage_error("mcp --grpc u --proto x --http a --max-body-bytes lots")
                .contains("positive whole number")
        );
        assert!(
            usage_error("mcp --grpc u --proto x --http a --idle-timeout -1")
                .contains("positive number of seconds")
        );
        assert!(
            usage_error("mcp --grpc u --proto x --http a --allowed-origin app.example.com")
                .contains("scheme://host:port")
        );
        assert!(
            usage_error("mcp --grpc u --proto x --stdio --max-connections 5")
                .contains("are for `mcp --http`")
        );
        assert!(usage_error("tools --proto x --max-sessions 5").contains("are for `mcp`"));
    }

    #[test]
    fn deadlines_are_for_mcp_over_either_transport() {
        let calls = |line: &str| parsed(line).ok().flatten().expect("parses").calls;
        assert_eq!(
            calls(
                "mcp --grpc u --proto x --stdio --call-timeout 20 --tool-timeout a_b=300 --tool-timeout c=0.5"
            ),
            CallLimits {
                timeout: Some(Some(Duration::from_secs(20))),
                per_tool: vec![
                    ("a_b".to_owned(), Duration::from_secs(300)),
                    ("c".to_owned(), Duration::from_millis(500)),
                ],
            }
        );
        assert_eq!(
            calls("mcp --grpc u --proto x --http a --call-timeout 0").timeout,
            Some(None),
            "0: no deadline"
        );
        assert_eq!(calls("mcp --grpc u --proto x --http a").timeout, None);
        assert!(
            usage_error("mcp --grpc u --proto x --http a --call-timeout -1")
                .contains("or 0 for no deadline")
        );
        assert!(
            usage_error("mcp --grpc u --proto x --http a --tool-timeout a_b")
                .contains("give NAME=SECS")
        );
        assert!(
            usage_error("mcp --grpc u --proto x --http a --tool-timeout =5")
                .contains("give NAME=SECS")
        );
        assert!(
            usage_error("mcp --grpc u --proto x --http a --tool-timeout a_b=0")
                .contains("positive number of seconds after `=`")
        );
        assert!(usage_error("tools --proto x --call-timeout 5").contains("are for `mcp`"));
    }

    #[test]
    fn tls_files_are_for_an_https_server() {
        let tls = |line: &str| parsed(line).ok().flatten().expect("parses").tls;
        assert_eq!(
            tls(
                "mcp --grpc https://h:443 --proto x --stdio --ca-cert ca.pem --client-cert c.pem --client-key c.key"
            ),
            TlsFiles {
                ca_cert: Some("ca.pem".into()),
                client_cert: Some("c.pem".into()),
                client_key: Some("c.key".into()),
            }
        );
        assert!(tls("tools --grpc https://h:443 --reflection").is_empty());
        assert_eq!(
            tls("tools --grpc https://h:443 --reflection --ca-cert ca.pem").ca_cert,
            Some("ca.pem".into())
        );
        for half in ["--client-cert c.pem", "--client-key c.key"] {
            let e = usage_error(&format!(
                "mcp --grpc https://h:443 --proto x --stdio {half}"
            ));
            assert_eq!(
                e,
                "`--client-cert FILE` and `--client-key FILE` go together: give both"
            );
        }
        let e = usage_error("mcp --grpc http://h:80 --proto x --stdio --ca-cert ca.pem");
        assert!(
            e.contains("are for TLS: use an https:// URL, not `--grpc http://h:80`"),
            "{e}"
        );
        assert!(
            usage_error("tools --proto x --ca-cert ca.pem").contains("give it"),
            "TLS files without a server"
        );
        assert!(
            usage_error("tools --grpc https://h --reflection --ca-cert").contains("needs a value")
        );
    }

    #[test]
    fn includes_excludes_and_read_only_choose_tools() {
        let args = parsed(
            "mcp --grpc u --proto x -I proto --stdio --include links_* --include a.v1.S/* \
             --exclude *_delete --read-only",
        )
        .ok()
        .flatten()
        .expect("parses");
        assert_eq!(args.include_tools, ["links_*", "a.v1.S/*"]);
        assert_eq!(args.exclude_tools, ["*_delete"]);
        assert!(args.read_only);
        assert_eq!(
            args.includes,
            [PathBuf::from("proto")],
            "-I is the proto path"
        );
        let none = parsed("tools --proto x").ok().flatten().expect("parses");
        assert!(none.include_tools.is_empty() && none.exclude_tools.is_empty() && !none.read_only);
        assert!(usage_error("tools --proto x --include").contains("`--include` needs a value"));
        assert!(usage_error("tools --proto x --exclude").contains("`--exclude` needs a value"));
    }

    #[test]
    fn the_default_include_is_the_macros() {
        assert_eq!(
            default_include(Path::new("proto/links/v1/links.proto")),
            PathBuf::from("proto")
        );
        assert_eq!(
            default_include(Path::new("links.proto")),
            PathBuf::from(".")
        );
        assert_eq!(
            default_include(Path::new("/srv/api/v1/api.proto")),
            PathBuf::from("/srv/api/v1")
        );
    }

    #[test]
    fn a_location_names_the_file_as_reached_from_here() {
        // The tests run in the crate's directory; the protos are one up.
        let includes = [PathBuf::from("../proto")];
        assert_eq!(
            as_reached("links/v1/links.proto:9:23", &includes),
            "../proto/links/v1/links.proto:9:23"
        );
        assert_eq!(
            as_reached("links/v1/links.proto", &includes),
            "../proto/links/v1/links.proto"
        );
        assert_eq!(
            as_reached("nowhere.proto:1:2", &includes),
            "nowhere.proto:1:2"
        );
    }

    #[test]
    fn tool_search_and_its_toolsets() {
        let args = parsed(
            "mcp --grpc u --proto x --stdio --tool-search --toolset a.v1.S --toolset b.v1.T",
        )
        .ok()
        .flatten()
        .expect("parses");
        assert!(args.tool_search);
        assert_eq!(args.toolsets, ["a.v1.S", "b.v1.T"]);
        assert!(
            usage_error("mcp --grpc u --proto x --stdio --toolset a.v1.S")
                .contains("give `--tool-search`")
        );
        assert!(usage_error("tools --proto x --tool-search").contains("is for `mcp`"));
        let defined = parsed(
            "mcp --grpc u --proto x --stdio --tool-search --define-toolset reading=*_list,a.v1.S/Get*",
        )
        .ok()
        .flatten()
        .expect("parses");
        assert_eq!(
            defined.defined_toolsets,
            [(
                "reading".to_owned(),
                vec!["*_list".to_owned(), "a.v1.S/Get*".to_owned()]
            )]
        );
        assert!(
            usage_error("mcp --grpc u --proto x --stdio --tool-search --define-toolset reading")
                .contains("give NAME=GLOB[,GLOB...]")
        );
        assert!(
            usage_error("mcp --grpc u --proto x --stdio --define-toolset r=x")
                .contains("give `--tool-search`")
        );
    }

    #[test]
    fn plain_fields_of_whole_services() {
        let plain = |line: &str| parsed(line).ok().flatten().expect("parses").plain_fields;
        assert_eq!(plain("tools --proto x --service a.B"), None);
        assert_eq!(
            plain("tools --proto x --service a.B --plain-fields required"),
            Some(PlainFields::Required)
        );
        assert_eq!(
            plain("tools --proto x --service a.B --plain-fields optional"),
            Some(PlainFields::Optional)
        );
        let bad = usage_error("tools --proto x --service a.B --plain-fields mandatory");
        assert!(
            bad.contains("`--plain-fields mandatory`: use `optional`")
                && bad.contains("or `required`"),
            "{bad}"
        );
        assert!(
            usage_error("tools --proto x --plain-fields required")
                .contains("give `--service NAME`")
        );
        assert!(
            usage_error("tools --proto x --service a.B --plain-fields").contains("needs a value")
        );
    }

    #[test]
    fn scope_and_store_flags_are_for_mcp_and_one_store() {
        let base = "mcp --grpc http://h:1 --proto x";
        let args = parsed(&format!(
            "{base} --http 127.0.0.1:0 --alias-scope-header X-User --single-user \
             --redis-cluster redis://a:1 --redis-cluster redis://b:2"
        ))
        .unwrap()
        .unwrap();
        assert_eq!(args.scopes.alias_scope_header.as_deref(), Some("X-User"));
        assert!(args.scopes.single_user);
        assert_eq!(args.scopes.redis_cluster, ["redis://a:1", "redis://b:2"]);
        for flags in ["--alias-scope-header x", "--single-user"] {
            assert!(usage_error(&format!("{base} --stdio {flags}")).contains("mcp --http"));
        }
        assert!(
            usage_error(&format!(
                "{base} --stdio --redis redis://a:1 --redis-cluster redis://b:2"
            ))
            .contains("one alias store")
        );
        assert!(usage_error("tools --proto x --redis redis://a:1").contains("are for `mcp`"));
        // The header name is checked when the server is built.
        let server = McpServer::new(|a| Toolkit::builder().alias_manager(a).build());
        let flags = ScopeFlags {
            alias_scope_header: Some("mcp-session-id".to_owned()),
            ..ScopeFlags::default()
        };
        assert!(
            matches!(flags.apply(server), Err(Failure::Usage(m)) if m.contains("mcp-session-id"))
        );
    }

    #[test]
    fn oauth_flags_need_each_other_and_http() {
        let base = "mcp --grpc http://h:1 --proto x --http 127.0.0.1:0";
        let args = parsed(&format!(
            "{base} --oauth-issuer https://auth.example --oauth-audience https://t.example/mcp \
             --required-scope mcp:use --tool-scopes tools:read,tools:write \
             --claim-header sub=X-User-Id --backend-token-env TOKEN --max-sessions-per-caller 3"
        ))
        .unwrap()
        .unwrap();
        assert_eq!(
            args.auth.claim_headers,
            [("sub".to_owned(), "x-user-id".to_owned())]
        );
        assert_eq!(
            args.auth.tool_scopes,
            Some(("tools:read".to_owned(), "tools:write".to_owned()))
        );
        assert!(args.auth.oauth().unwrap().is_some());
        assert!(
            usage_error(&format!("{base} --oauth-issuer https://auth.example"))
                .contains("--oauth-audience URI")
        );
        assert!(
            usage_error(
                "mcp --grpc http://h:1 --proto x --stdio --oauth-issuer i --oauth-audience a"
            )
            .contains("mcp --http")
        );
        assert!(
            usage_error(&format!(
                "{base} --oauth-issuer i --oauth-audience a --forward-header authorization"
            ))
            .contains("forbids")
        );
        assert!(
            usage_error(&format!(
                "{base} --oauth-issuer i --oauth-audience a --oauth-introspection https://auth.example/introspect"
            ))
            .contains("give all three")
        );
        assert!(usage_error(&format!("{base} --tool-scopes read")).contains("READ,WRITE"));
        assert!(usage_error(&format!("{base} --tool-scopes a,b,c")).contains("READ,WRITE"));
        assert!(
            usage_error(&format!(
                "{base} --oauth-issuer i --oauth-audience a --forward-header Authorization"
            ))
            .contains("forbids")
        );
        assert!(
            usage_error(&format!(
                "{base} --forward-header authorization --backend-token-env V"
            ))
            .contains("keep one")
        );
        assert!(usage_error(&format!("{base} --claim-header sub")).contains("CLAIM=HEADER"));
        assert!(
            usage_error(&format!(
                "{base} --backend-token-file f --backend-token-env V"
            ))
            .contains("once")
        );
        assert!(usage_error("tools --proto x --backend-token-env V").contains("for `mcp`"));
    }

    #[test]
    fn the_backend_token_is_read_trimmed_and_refused_when_unsendable() {
        let dir = std::env::temp_dir().join(format!("ai-tools-token-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("token");
        std::fs::write(&file, "s3cret\n").unwrap();
        let flags = AuthFlags {
            backend_token_file: Some(file.clone()),
            ..AuthFlags::default()
        };
        let options = flags.backend_credential().unwrap().unwrap();
        assert_eq!(
            options.metadata,
            [("authorization".to_owned(), "Bearer s3cret".to_owned())]
        );
        std::fs::write(&file, "two words").unwrap();
        assert!(
            matches!(flags.backend_credential(), Err(Failure::Run(m)) if m.contains("printable ASCII"))
        );
        let missing = AuthFlags {
            backend_token_env: Some("AI_TOOLS_SURELY_UNSET_VARIABLE".to_owned()),
            ..AuthFlags::default()
        };
        assert!(
            matches!(missing.backend_credential(), Err(Failure::Run(m)) if m.contains("not set"))
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
