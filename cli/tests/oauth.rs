//! `ai-tools mcp --http` as an OAuth 2.1 resource server: the binary with
//! `--oauth-issuer`, `--oauth-audience`, `--required-scope`,
//! `--tool-scopes`, `--claim-header` and `--backend-token-file` or
//! `--backend-token-env`, in front of a grpcio backend that logs the
//! metadata of every call (`tests/oauth/backend.py`), trusting a real
//! authorization server (`tests/oauth/authorization_server.mjs`). The
//! flags reach the server: a request without a token is answered 401 with
//! the challenge that names the resource metadata, the metadata names the
//! issuer, and a valid token's call reaches the backend as its subject with
//! the gateway's own credential, never the MCP token. What the flags rule
//! out exits 2 with its message; an issuer that cannot be reached exits 1
//! naming it. (The resource server itself is tested against the library
//! in `tests/tests/oauth.rs`, with the same support.)
//!
//! The end-to-end tests need Node.js with `npm ci` run in `tests/node`, and
//! a Python with `grpc` (`.ci/run` makes both). Without them they skip
//! saying why, unless `AI_TOOLS_REQUIRE_NODE` or `AI_TOOLS_REQUIRE_PYTHON`
//! is set, as `.ci/run` does: then they fail.

// An integration test: its helpers are not `#[test]` functions, so
// `clippy.toml`'s `allow-*-in-tests` does not reach them, and they fail
// the test by panicking as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::net::SocketAddr;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use proto_ai_tools_mcp::AUTHORIZATION_SERVER_TIMEOUT;
use proto_ai_tools_tests::oauth::{
    AuthorizationServer, BACKEND_MODULES, Backend, Expected, INITIALIZE, PATIENCE, TempDir,
    assert_backend_saw, assert_called, assert_resource_metadata, assert_unauthorized, list_links,
    metadata_url, post, session, tool_names, tools_or_skip,
};
use support::{Gateway, free_loopback_addr, links_mcp_command, spawn_gateway};

const REQUIRED_SCOPE: &str = "mcp:use";
const READ_SCOPE: &str = "tools:read";
const WRITE_SCOPE: &str = "tools:write";
/// Every scope a full user holds.
const ALL_SCOPES: &str = "mcp:use tools:read tools:write";

/// Where the gateway's own credential to the backend comes from.
enum BackendToken {
    /// `--backend-token-file`, holding the token and a newline.
    File(&'static str),
    /// `--backend-token-env`, the variable set for the gateway only.
    Env(&'static str),
}

/// Everything one test runs against; the processes end when it is dropped.
struct Setup {
    authorization: AuthorizationServer,
    backend: Backend,
    /// Where the gateway listens.
    addr: SocketAddr,
    /// `http://ADDR/mcp`, the audience every token must name.
    resource: String,
    _gateway: Gateway,
    _dir: TempDir,
}

/// The authorization server, the backend, and the binary in front of the
/// backend protected by OAuth, with its credential to the backend from
/// `token`; `None` (the test skips) when Node.js or Python is missing and
/// not required.
fn setup(test: &str, token: &BackendToken) -> Option<Setup> {
    let (node, python) = tools_or_skip(BACKEND_MODULES)?;
    let dir = TempDir::new(&format!("cli-{test}"));
    let authorization = AuthorizationServer::start(&node, &[]);
    let backend = Backend::start(&python, &dir.0);
    // The audience names the address, so the port is chosen first.
    let addr = free_loopback_addr();
    let resource = format!("http://{addr}/mcp");
    let mut command = Command::new(env!("CARGO_BIN_EXE_ai-tools"));
    command
        .args(["mcp", "--grpc", &format!("http://{}", backend.addr)])
        .arg("--descriptor-set")
        .arg(&backend.descriptor_set)
        .args(["--http", &addr.to_string()])
        .args(["--oauth-issuer", &authorization.issuer])
        .args(["--oauth-audience", &resource])
        .args(["--required-scope", REQUIRED_SCOPE])
        .args(["--tool-scopes", &format!("{READ_SCOPE},{WRITE_SCOPE}")])
        .args(["--claim-header", "sub=x-user-id"]);
    match token {
        BackendToken::File(token) => {
            let file = dir.0.join("backend-token");
            std::fs::write(&file, format!("{token}\n")).expect("the token file written");
            command.arg("--backend-token-file").arg(file);
        }
        BackendToken::Env(token) => {
            command
                .args(["--backend-token-env", "AI_TOOLS_TEST_BACKEND_TOKEN"])
                .env("AI_TOOLS_TEST_BACKEND_TOKEN", token);
        }
    }
    let gateway = spawn_gateway(&mut command);
    assert_eq!(
        gateway.addr,
        addr.to_string(),
        "the gateway listens where its audience says"
    );
    Some(Setup {
        authorization,
        backend,
        addr,
        resource,
        _gateway: gateway,
        _dir: dir,
    })
}

impl Setup {
    /// A token for the gateway, of `sub` with `scope`.
    async fn token_for(&self, sub: &str, scope: &str) -> String {
        self.authorization
            .token(&[
                ("sub", sub),
                ("scope", scope),
                ("resource", self.resource.as_str()),
            ])
            .await
    }

    /// A valid token's `links_list` reaches the backend as the first call,
    /// as `sub` by `x-user-id`, with `authorization: Bearer <backend
    /// token>` and without the MCP token.
    async fn call_reaches_backend_with(&self, sub: &str, backend_token: &str) {
        let token = self.token_for(sub, ALL_SCOPES).await;
        let id = session(self.addr, &token).await;
        let called = post(self.addr, Some(&token), Some(&id), &list_links()).await;
        assert_called(&called, "a valid token's call");
        let calls = self.backend.calls_when(1).await;
        assert_eq!(calls.len(), 1, "one call reached the backend: {calls:?}");
        assert_backend_saw(
            &calls[0],
            Expected {
                sub,
                email: None,
                token: &token,
                credential: &format!("Bearer {backend_token}"),
            },
        );
    }
}

/// No token: 401 with `WWW-Authenticate: Bearer
/// resource_metadata="http://ADDR/.well-known/oauth-protected-resource/mcp"`
/// (and the scope of `--required-scope`), and nothing sent. The metadata there names the audience, the issuer and
/// the scopes of the flags. A token without `--required-scope` is 403
/// `insufficient_scope`; one with only the read scope of `--tool-scopes` is
/// shown only the read-only tool. A valid token's call reaches the backend
/// as its `sub` (`--claim-header sub=x-user-id`) with the token of
/// `--backend-token-file` as `authorization: Bearer …`, and never the MCP
/// token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_checks_tokens_and_sends_the_backend_claims_and_the_token_of_its_file() {
    const FILE_TOKEN: &str = "backend-token-from-a-file";
    let Some(setup) = setup("file", &BackendToken::File(FILE_TOKEN)) else {
        return;
    };
    let addr = setup.addr;
    let metadata = metadata_url(addr);
    assert_eq!(
        metadata,
        format!("http://{addr}/.well-known/oauth-protected-resource/mcp")
    );

    let bare = post(addr, None, None, INITIALIZE).await;
    assert_unauthorized(&bare, &metadata, false, "initialize without a token");
    let challenge = bare.header("www-authenticate").unwrap_or_default();
    assert!(
        challenge.starts_with(&format!("Bearer resource_metadata=\"{metadata}\""))
            && challenge.contains(&format!("scope=\"{ALL_SCOPES}\"")),
        "the challenge names the metadata, and the scopes to ask for: {bare:?}"
    );
    let bare = post(addr, None, None, &list_links()).await;
    assert_unauthorized(&bare, &metadata, false, "a call without a token");

    assert_resource_metadata(
        addr,
        "/.well-known/oauth-protected-resource/mcp",
        (&setup.resource, &setup.authorization.issuer),
        &[REQUIRED_SCOPE, READ_SCOPE, WRITE_SCOPE],
    )
    .await;

    let unscoped = setup
        .token_for("mallory", &format!("{READ_SCOPE} {WRITE_SCOPE}"))
        .await;
    let refused = post(addr, Some(&unscoped), None, INITIALIZE).await;
    assert_eq!(refused.status, 403, "without {REQUIRED_SCOPE}: {refused:?}");
    let challenge = refused.header("www-authenticate").unwrap_or_default();
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{refused:?}"
    );

    let reader = setup
        .token_for("reader", &format!("{REQUIRED_SCOPE} {READ_SCOPE}"))
        .await;
    assert_eq!(
        tool_names(addr, &reader).await,
        ["links_list"],
        "--tool-scopes: the read scope opens only the read-only tool"
    );
    let calls = setup.backend.calls();
    assert!(calls.is_empty(), "nothing was sent: {calls:?}");

    setup.call_reaches_backend_with("alice", FILE_TOKEN).await;
}

/// `--backend-token-env` works as the file does: the variable's token
/// reaches the backend as `authorization: Bearer …`, with the caller's
/// `x-user-id`, and the MCP token does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_backend_token_can_come_from_an_environment_variable() {
    const ENV_TOKEN: &str = "backend-token-from-the-environment";
    let Some(setup) = setup("env", &BackendToken::Env(ENV_TOKEN)) else {
        return;
    };
    setup.call_reaches_backend_with("bob", ENV_TOKEN).await;
}

/// `ai-tools mcp` over `links.proto` with `flags`, run to its end within
/// [`PATIENCE`]; its output and how long it took.
fn run(flags: &[&str]) -> (Output, Duration) {
    let started = Instant::now();
    let mut child = links_mcp_command("http://127.0.0.1:1")
        .args(flags)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    while child.try_wait().expect("its status").is_none() {
        if started.elapsed() > PATIENCE {
            let _ = child.kill();
            panic!(
                "`ai-tools mcp {}` still runs after {PATIENCE:?}",
                flags.join(" ")
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().expect("its output");
    (output, started.elapsed())
}

/// What OAuth rules out is a usage error (exit 2) with its message, before
/// anything listens: the caller's `authorization` forwarded to the service,
/// an issuer without an audience, and OAuth over stdio.
#[test]
fn oauth_flags_that_cannot_work_are_usage_errors() {
    let oauth = [
        "--oauth-issuer",
        "http://127.0.0.1:1",
        "--oauth-audience",
        "http://127.0.0.1:2/mcp",
    ];
    let http = ["--http", "127.0.0.1:0"];
    let forwarding = [&http[..], &oauth, &["--forward-header", "authorization"]].concat();
    let cases: [(&[&str], &str); 3] = [
        (
            &forwarding,
            "`--forward-header authorization` with `--oauth-issuer` would pass the caller's token",
        ),
        (
            &[&http[..], &oauth[..2]].concat(),
            "OAuth needs both `--oauth-issuer URL`",
        ),
        (
            &[&["--stdio"][..], &oauth].concat(),
            "the OAuth flags protect `mcp --http`",
        ),
    ];
    for (flags, message) in cases {
        let (output, _) = run(flags);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(stderr.contains(message), "{flags:?}: {stderr}");
        assert!(!stderr.contains("serving"), "{flags:?}: {stderr}");
    }
}

/// An issuer nothing listens at: the binary exits 1 at once (well within
/// the authorization server timeout), saying it could not be reached and
/// naming it.
#[test]
fn an_unreachable_issuer_exits_1_naming_it() {
    let issuer = format!("http://{}", free_loopback_addr());
    let (output, took) = run(&[
        "--http",
        "127.0.0.1:0",
        "--oauth-issuer",
        &issuer,
        "--oauth-audience",
        "http://127.0.0.1:2/mcp",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("`{issuer}`")) && stderr.contains("could not be reached"),
        "{stderr}"
    );
    assert!(
        took < AUTHORIZATION_SERVER_TIMEOUT,
        "a refused connection ends the binary at once, not after {took:?}"
    );
}
