//! What the tests of the gateway as an OAuth 2.1 resource server share,
//! whether the gateway runs in the test's process (`tests/tests/oauth.rs`)
//! or as the `ai-tools` binary (`cli/tests/oauth.rs`):
//!
//! - [`tools_or_skip`]: Node.js with `oauth2-mock-server` installed in
//!   `tests/node`, and a Python importing what the test needs; the test
//!   skips saying why when they are missing, and fails instead when
//!   `AI_TOOLS_REQUIRE_NODE` or `AI_TOOLS_REQUIRE_PYTHON` is set (as
//!   `.ci/run` does);
//! - [`AuthorizationServer`]: `tests/oauth/authorization_server.mjs`, a real
//!   authorization server on loopback, asked for tokens at its token endpoint
//!   and for what it saw on its stdin;
//! - [`Backend`]: `tests/oauth/backend.py`, a grpcio server of the links
//!   services that logs the metadata of every call;
//! - raw HTTP/1.1 to the gateway ([`exchange`], [`post`], [`session`]) and
//!   the assertions on what it answers and what reached the backend.

use std::io::{BufRead, BufReader as StdBufReader, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::http::{self, Response, http_request};
use crate::support::{node_at_least, node_required, python_importing, python_required};

/// How long any one wait of a test may last before it fails.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// The gateway's client at the authorization server's introspection (and
/// revocation) endpoint, which checks them (HTTP Basic).
pub const INTROSPECTION_CLIENT: &str = "mcp-gateway";
/// The secret of [`INTROSPECTION_CLIENT`].
pub const INTROSPECTION_SECRET: &str = "introspection-secret";

/// What the backend needs of Python ([`Backend`]); a test that also runs
/// the MCP SDK's client adds `mcp`.
pub const BACKEND_MODULES: &str = "grpc, google.protobuf";

/// The oldest Node.js `oauth2-mock-server` supports (`engines` in its
/// `package.json`; 20.19 and later of 20).
const NODE_MIN: u32 = 20;

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

/// `node` (20 or later) with `oauth2-mock-server` installed in `tests/node`, and a
/// Python that imports `python_modules`; or why not.
///
/// # Errors
///
/// Why `node`, the package or such a Python is missing.
pub fn tools(python_modules: &str) -> Result<(PathBuf, PathBuf), String> {
    let node = node_at_least(NODE_MIN)?;
    let package = workspace().join("tests/node/node_modules/oauth2-mock-server/package.json");
    if !package.is_file() {
        return Err(format!(
            "oauth2-mock-server is not installed ({} is missing): run `npm ci` in tests/node",
            package.display()
        ));
    }
    let python = python_importing(python_modules)?;
    Ok((node, python))
}

/// [`tools`], or `None` when they are missing and not required (the test
/// then skips, saying why on stderr).
///
/// # Panics
///
/// When they are missing and `AI_TOOLS_REQUIRE_NODE` or
/// `AI_TOOLS_REQUIRE_PYTHON` is set.
pub fn tools_or_skip(python_modules: &str) -> Option<(PathBuf, PathBuf)> {
    match tools(python_modules) {
        Ok(found) => Some(found),
        Err(reason) if node_required() || python_required() => {
            panic!("AI_TOOLS_REQUIRE_NODE or AI_TOOLS_REQUIRE_PYTHON is set: {reason}")
        }
        Err(reason) => {
            let _ = writeln!(std::io::stderr().lock(), "SKIPPED: {reason}");
            None
        }
    }
}

/// A child process killed (and reaped) when dropped.
#[derive(Debug)]
pub struct Process(pub Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A child process of the test that says on its stdout when it is ready,
/// started from `command` with stdin and stdout piped (stderr is the
/// test's): the process, its stdin, its first line and the rest of its
/// stdout.
struct Started {
    process: Process,
    stdin: ChildStdin,
    first_line: String,
    stdout: StdBufReader<ChildStdout>,
}

impl Started {
    /// Starts `command`, named `what` in failures, and waits for its first
    /// line (see [`first_line`]).
    fn new(command: &mut Command, what: &str) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("{what} does not start: {e}"));
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take().expect("stdin");
        let process = Process(child);
        let (first_line, stdout) = first_line(stdout, what);
        Self {
            process,
            stdin,
            first_line,
            stdout,
        }
    }
}

/// Reads the first line of a child's stdout within [`PATIENCE`], on a
/// thread (a child that hangs fails the test instead of hanging it).
fn first_line(stdout: ChildStdout, what: &str) -> (String, StdBufReader<ChildStdout>) {
    let (sent, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = StdBufReader::new(stdout);
        let mut line = String::new();
        let read = reader.read_line(&mut line);
        let _ = sent.send((read.map(|_| line), reader));
    });
    let (line, reader) = received
        .recv_timeout(PATIENCE)
        .unwrap_or_else(|_| panic!("{what} did not say it was ready within {PATIENCE:?}"));
    let line = line.unwrap_or_else(|e| panic!("{what}'s stdout: {e}"));
    assert!(
        !line.is_empty(),
        "{what} exited before it was ready (see its stderr above)"
    );
    (line.trim().to_owned(), reader)
}

/// `tests/oauth/authorization_server.mjs`, on loopback; it exits when
/// dropped.
#[derive(Debug)]
pub struct AuthorizationServer {
    /// `http://127.0.0.1:PORT`.
    pub issuer: String,
    /// Where it listens.
    pub addr: SocketAddr,
    commands: ChildStdin,
    answers: StdBufReader<ChildStdout>,
    _process: Process,
}

impl AuthorizationServer {
    /// Starts it with `node`, [`INTROSPECTION_CLIENT`] as the client of its
    /// introspection endpoint, and `extra` arguments; returns once it
    /// listens.
    pub fn start(node: &Path, extra: &[&str]) -> Self {
        let Started {
            process,
            stdin: commands,
            first_line: line,
            stdout: answers,
        } = Started::new(
            Command::new(node)
                .arg(workspace().join("tests/oauth/authorization_server.mjs"))
                .arg("--introspection-client")
                .arg(format!("{INTROSPECTION_CLIENT}:{INTROSPECTION_SECRET}"))
                .args(extra),
            "the authorization server",
        );
        let ready: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the authorization server's first line {line:?}: {e}"));
        let issuer = ready["issuer"].as_str().expect("an issuer").to_owned();
        let addr = issuer
            .strip_prefix("http://")
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("the issuer {issuer} is http://127.0.0.1:PORT"));
        Self {
            issuer,
            addr,
            commands,
            answers,
            _process: process,
        }
    }

    /// A command on stdin; its one-line JSON answer.
    pub fn command(&mut self, command: &str) -> Value {
        writeln!(self.commands, "{command}").expect("a command to the authorization server");
        self.commands.flush().expect("flushed");
        let mut line = String::new();
        self.answers
            .read_line(&mut line)
            .expect("the authorization server's answer");
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the answer to {command}: {line:?}: {e}"))
    }

    /// A new signing key, published in place of the old; its `kid`.
    pub fn rotate(&mut self) -> String {
        let answer = self.command("rotate");
        answer["rotated"]
            .as_str()
            .unwrap_or_else(|| panic!("rotate answered {answer}"))
            .to_owned()
    }

    /// Every request to `/introspect` so far, in order: `client`,
    /// `authenticated`, and the `active` it answered (null when the
    /// client was refused).
    pub fn introspections(&mut self) -> Vec<Value> {
        let answer = self.command("introspections");
        answer["introspections"]
            .as_array()
            .unwrap_or_else(|| panic!("introspections answered {answer}"))
            .clone()
    }

    /// Revokes `token` at the revocation endpoint (RFC 7009), as the
    /// gateway's client.
    pub async fn revoke(&self, token: &str) {
        use base64::Engine;
        let credentials = base64::engine::general_purpose::STANDARD
            .encode(format!("{INTROSPECTION_CLIENT}:{INTROSPECTION_SECRET}"));
        let response = exchange(
            self.addr,
            &http_request(
                "POST",
                "/revoke",
                &[
                    ("Content-Type", "application/x-www-form-urlencoded"),
                    ("Authorization", &format!("Basic {credentials}")),
                ],
                &format!("token={}", encode(token)),
            ),
        )
        .await;
        assert_eq!(
            response.status, 200,
            "the revocation endpoint: {response:?}"
        );
    }

    /// An access token from the token endpoint's client_credentials
    /// grant, with these form parameters (`sub`, `scope`, `resource`,
    /// `expires_in`, `claims`, ...).
    pub async fn token(&self, params: &[(&str, &str)]) -> String {
        let mut form = vec![("grant_type", "client_credentials")];
        form.extend_from_slice(params);
        let body = form
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        let response = exchange(
            self.addr,
            &http_request(
                "POST",
                "/token",
                &[("Content-Type", "application/x-www-form-urlencoded")],
                &body,
            ),
        )
        .await;
        assert_eq!(response.status, 200, "the token endpoint: {response:?}");
        let answer: Value = serde_json::from_str(&response.body).expect("a token response");
        answer["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no access_token in {answer}"))
            .to_owned()
    }
}

/// Percent-encoding of a form value (everything but unreserved).
fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// One call the backend logged.
#[derive(Debug, Clone)]
pub struct BackendCall {
    /// `/package.Service/Method`.
    pub method: String,
    /// Every metadata entry, in order, keys lowercase.
    pub metadata: Vec<(String, String)>,
    /// The request as proto JSON.
    pub request: Value,
}

impl BackendCall {
    /// Every value of `key`, in order.
    pub fn values(&self, key: &str) -> Vec<&str> {
        self.metadata
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

/// `tests/oauth/backend.py`: grpcio serving the links services, logging
/// the metadata of every call; it exits when dropped.
#[derive(Debug)]
pub struct Backend {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The encoded descriptor set of `links.proto` it serves, written in
    /// the directory it was started with.
    pub descriptor_set: PathBuf,
    calls: Arc<Mutex<Vec<BackendCall>>>,
    _stdin: ChildStdin,
    _process: Process,
}

impl Backend {
    /// Starts it with `python` (which imports [`BACKEND_MODULES`]), writing
    /// the descriptor set into `dir`; returns once it listens.
    pub fn start(python: &Path, dir: &Path) -> Self {
        let set = dir.join("links_descriptor.bin");
        std::fs::write(
            &set,
            include_bytes!(concat!(env!("OUT_DIR"), "/links_descriptor.bin")),
        )
        .expect("the descriptor set written");
        let Started {
            process,
            stdin,
            first_line: line,
            stdout: mut reader,
        } = Started::new(
            Command::new(python)
                .arg(workspace().join("tests/oauth/backend.py"))
                .arg(&set)
                .args(["links.v1.LinksService", "links.v1.WorkflowStepsService"]),
            "the grpcio backend",
        );
        let port: u16 = line
            .strip_prefix("PORT ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the grpcio backend's first line: {line:?}"));
        let calls = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&calls);
        std::thread::spawn(move || {
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                let entry: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("the backend's log line {line:?}: {e}"));
                let metadata = entry["metadata"]
                    .as_array()
                    .expect("metadata")
                    .iter()
                    .map(|pair| {
                        (
                            pair[0].as_str().expect("a key").to_owned(),
                            pair[1].as_str().expect("a value").to_owned(),
                        )
                    })
                    .collect();
                log.lock().expect("the log").push(BackendCall {
                    method: entry["method"].as_str().expect("a method").to_owned(),
                    metadata,
                    request: entry["request"].clone(),
                });
                line.clear();
            }
        });
        Self {
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            descriptor_set: set,
            calls,
            _stdin: stdin,
            _process: process,
        }
    }

    /// The calls logged so far.
    pub fn calls(&self) -> Vec<BackendCall> {
        self.calls.lock().expect("the log").clone()
    }

    /// The calls once there are `n` (the log is read on another thread),
    /// or those there are after [`PATIENCE`].
    pub async fn calls_when(&self, n: usize) -> Vec<BackendCall> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let calls = self.calls();
            if calls.len() >= n || Instant::now() > deadline {
                return calls;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// A directory of one test, removed when dropped.
#[derive(Debug)]
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A new directory named after `test`.
    pub fn new(test: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "ai-tools-oauth-{test}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The MCP `initialize` request.
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"oauth-test","version":"1"}}}"#;
/// The MCP `notifications/initialized` notification.
pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A `tools/call` of `name` with `arguments`, as JSON-RPC request `id`.
pub fn tool_call(id: u64, name: &str, arguments: &Value) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":arguments}})
        .to_string()
}

/// A `links_list` call (`page_size` 7).
pub fn list_links() -> String {
    tool_call(3, "links_list", &json!({"page_size": 7}))
}

/// The URL of the protected resource metadata of the gateway at `addr`
/// (its resource is `http://ADDR/mcp`).
pub fn metadata_url(addr: SocketAddr) -> String {
    format!("http://{addr}/.well-known/oauth-protected-resource/mcp")
}

/// A JSON-RPC message to `/mcp` at `addr`, with `token` as the bearer and
/// in MCP session `session`.
pub async fn post(
    addr: SocketAddr,
    token: Option<&str>,
    session: Option<&str>,
    body: &str,
) -> Response {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
    ];
    if let Some(bearer) = &bearer {
        headers.push(("Authorization", bearer));
    }
    if let Some(id) = session {
        headers.push(("Mcp-Session-Id", id));
    }
    exchange(addr, &http_request("POST", "/mcp", &headers, body)).await
}

/// A stateless `tools/call` (MCP 2026-07-28: no session, the protocol
/// version in the headers and in `_meta`) of `name` with `arguments` at
/// `addr`, with `token` as the bearer.
pub async fn stateless_call(
    addr: SocketAddr,
    token: &str,
    name: &str,
    arguments: &Value,
) -> Response {
    let body = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    })
    .to_string();
    let bearer = format!("Bearer {token}");
    let headers = [
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
        ("Authorization", bearer.as_str()),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", name),
    ];
    exchange(addr, &http_request("POST", "/mcp", &headers, &body)).await
}

/// A session at `addr` of the user of `token`, initialized; its id.
pub async fn session(addr: SocketAddr, token: &str) -> String {
    let init = post(addr, Some(token), None, INITIALIZE).await;
    assert_eq!(init.status, 200, "initialize with a valid token: {init:?}");
    let id = init
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let note = post(addr, Some(token), Some(&id), INITIALIZED).await;
    assert_eq!(note.status, 202, "{note:?}");
    id
}

/// The tools the user of `token` is shown at `addr`, in a new session,
/// sorted.
pub async fn tool_names(addr: SocketAddr, token: &str) -> Vec<String> {
    let id = session(addr, token).await;
    let listed = post(
        addr,
        Some(token),
        Some(&id),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    )
    .await;
    assert_eq!(listed.status, 200, "{listed:?}");
    let message = listed.message();
    let mut names: Vec<String> = message["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("a tools/list result: {message}"))
        .iter()
        .map(|t| t["name"].as_str().expect("a name").to_owned())
        .collect();
    names.sort();
    names
}

/// Asserts that the protected resource metadata (RFC 9728) at `path` of
/// the gateway at `addr` is served without a token, naming `resource`,
/// `issuer` as its one authorization server, the bearer header as the one
/// way to send a token, and each of `scopes` among those supported.
pub async fn assert_resource_metadata(
    addr: SocketAddr,
    path: &str,
    (resource, issuer): (&str, &str),
    scopes: &[&str],
) {
    let response = exchange(addr, &http_request("GET", path, &[], "")).await;
    assert_eq!(response.status, 200, "{path}: {response:?}");
    let metadata: Value = serde_json::from_str(&response.body)
        .unwrap_or_else(|e| panic!("{path}: JSON: {e}: {response:?}"));
    assert_eq!(metadata["resource"], resource, "{metadata}");
    assert_eq!(
        metadata["authorization_servers"],
        json!([issuer]),
        "{metadata}"
    );
    assert_eq!(
        metadata["bearer_methods_supported"],
        json!(["header"]),
        "{metadata}"
    );
    let supported: Vec<&str> = metadata["scopes_supported"]
        .as_array()
        .unwrap_or_else(|| panic!("scopes_supported: {metadata}"))
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for scope in scopes {
        assert!(supported.contains(scope), "{scope} in {metadata}");
    }
}

/// Asserts a 401 whose challenge names the resource metadata, and, for
/// a token that was sent, `error="invalid_token"`.
pub fn assert_unauthorized(response: &Response, metadata_url: &str, token_sent: bool, case: &str) {
    assert_eq!(response.status, 401, "{case}: {response:?}");
    // Answered before its body was read: the connection is not reused.
    assert_eq!(
        response.header("connection"),
        Some("close"),
        "{case}: a refusal closes the connection: {response:?}"
    );
    let challenge = response
        .header("www-authenticate")
        .unwrap_or_else(|| panic!("{case}: a 401 without WWW-Authenticate: {response:?}"));
    assert!(
        challenge.starts_with("Bearer "),
        "{case}: a Bearer challenge: {challenge}"
    );
    assert!(
        challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{case}: the challenge names the resource metadata {metadata_url}: {challenge}"
    );
    if token_sent {
        assert!(
            challenge.contains("error=\"invalid_token\""),
            "{case}: the challenge says the token is invalid: {challenge}"
        );
    } else {
        assert!(
            !challenge.contains("error="),
            "{case}: a request without a token is no error of a token (RFC 6750 3.1): {challenge}"
        );
    }
}

/// Asserts an accepted `links_list`: 200, a result that is no error.
pub fn assert_called(response: &Response, case: &str) {
    assert_eq!(response.status, 200, "{case}: {response:?}");
    let message = response.message();
    assert_eq!(message["result"]["isError"], false, "{case}: {message}");
}

/// What the backend must see of an accepted `links_list`.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    /// The caller, as `x-user-id`.
    pub sub: &'a str,
    /// Its email as `x-user-email`, or no such header.
    pub email: Option<&'a str>,
    /// The MCP token, which must appear nowhere in the metadata.
    pub token: &'a str,
    /// The gateway's own credential, the one `authorization` value.
    pub credential: &'a str,
}

/// Asserts what the backend saw of an accepted `links_list`: the caller as
/// `x-user-id` (and the email as `x-user-email`, if given), the gateway's
/// own credential once, and nowhere the MCP token.
pub fn assert_backend_saw(call: &BackendCall, expected: Expected<'_>) {
    assert_eq!(call.method, "/links.v1.LinksService/ListLinks", "{call:?}");
    assert_eq!(call.values("x-user-id"), [expected.sub], "{call:?}");
    assert_eq!(
        call.values("x-user-email"),
        expected.email.into_iter().collect::<Vec<_>>(),
        "{call:?}"
    );
    assert_eq!(
        call.values("authorization"),
        [expected.credential],
        "the backend sees the gateway's own credential, once: {call:?}"
    );
    for (key, value) in &call.metadata {
        assert!(
            !value.contains(expected.token),
            "the MCP token reached the backend in `{key}`: {call:?}"
        );
    }
}

/// Sends one request on a new connection; its response, within
/// [`PATIENCE`].
pub async fn exchange(addr: SocketAddr, request: &[u8]) -> Response {
    http::exchange(addr, request, PATIENCE).await
}
