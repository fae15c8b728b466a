//! A model's host, as the gateways see it: MCP over HTTP, one connection
//! per request. A caller is either stateless (protocol 2026-07-28, its
//! scope named by the header a front proxy would set) or a handshake-era
//! session (2025-11-25: `initialize`, then `Mcp-Session-Id` on every
//! request), whose requests may go to any gateway.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::{Value, json};

/// The header the gateways read a stateless caller's scope from.
pub const SCOPE_HEADER: &str = "x-fault-scope";

/// How a caller names its scope.
#[derive(Debug, Clone)]
pub enum Scope {
    /// Stateless requests carrying `SCOPE_HEADER: value`.
    Header(String),
    /// An MCP session, once started.
    Session(Option<String>),
}

/// What came back from one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A tool result (`isError` or not).
    Result(Value),
    /// An HTTP status other than 200, and the start of the body.
    Http(String, String),
    /// No answer: the connection was refused, reset or timed out.
    Transport(String),
}

/// An HTTP response: status, headers (lower-case names), body.
type Response = (String, Vec<(String, String)>, String);

/// A request of `headers` and `body` to `addr`'s `/mcp`; the response.
fn exchange(
    addr: SocketAddr,
    headers: &str,
    body: &str,
    patience: Duration,
) -> Result<Response, String> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1))
        .map_err(|e| format!("connect: {}", e.kind()))?;
    let _ = stream.set_read_timeout(Some(patience));
    let _ = stream.set_nodelay(true);
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n{body}",
        body.len()
    )
    .map_err(|e| format!("send: {}", e.kind()))?;
    let mut raw = Vec::new();
    if let Err(e) = stream.read_to_end(&mut raw)
        && raw.is_empty()
    {
        return Err(format!("read: {}", e.kind()));
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        return Err(if text.is_empty() {
            "the connection closed with no answer".to_owned()
        } else {
            format!("a cut answer: {}", shorten(&text))
        });
    };
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or_default()
        .to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Ok((status, headers, body))
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            out.push_str(rest.get(..size.min(rest.len())).unwrap_or_default());
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

fn shorten(text: &str) -> String {
    text.chars().take(300).collect()
}

/// The JSON-RPC answer in a body: JSON, or the `data:` line of an event
/// stream that carries an id.
fn answer(body: &str) -> Option<Value> {
    serde_json::from_str::<Value>(body.trim())
        .ok()
        .into_iter()
        .chain(
            body.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok()),
        )
        .find(|message| message.get("id").is_some())
}

/// Starts an MCP session (protocol 2025-11-25) at `addr`: its id.
pub fn start_session(addr: SocketAddr) -> Result<String, String> {
    let init = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "fault-suite", "version": "1"},
        },
    });
    let (status, headers, body) = exchange(addr, "", &init.to_string(), Duration::from_secs(10))?;
    if status != "200" {
        return Err(format!("initialize: {status} {}", shorten(&body)));
    }
    let session = headers
        .iter()
        .find(|(k, _)| k == "mcp-session-id")
        .map(|(_, v)| v.clone())
        .ok_or_else(|| format!("initialize answered no Mcp-Session-Id: {}", shorten(&body)))?;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _, body) = exchange(
        addr,
        &format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n"),
        &initialized.to_string(),
        Duration::from_secs(10),
    )?;
    if status != "202" && status != "200" {
        return Err(format!(
            "notifications/initialized: {status} {}",
            shorten(&body)
        ));
    }
    Ok(session)
}

/// `tools/call` of `tool` with `arguments` at `addr`, in `scope`.
pub fn call(
    addr: SocketAddr,
    scope: &Scope,
    tool: &str,
    arguments: &Value,
    patience: Duration,
) -> Reply {
    let (headers, params) = match scope {
        Scope::Header(value) => (
            format!(
                "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {tool}\r\n{SCOPE_HEADER}: {value}\r\n"
            ),
            json!({
                "name": tool,
                "arguments": arguments,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            }),
        ),
        Scope::Session(session) => (
            format!(
                "Mcp-Session-Id: {}\r\nMCP-Protocol-Version: 2025-11-25\r\n",
                session.as_deref().unwrap_or_default()
            ),
            json!({"name": tool, "arguments": arguments}),
        ),
    };
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params});
    match exchange(addr, &headers, &body.to_string(), patience) {
        Err(e) => Reply::Transport(e),
        Ok((status, _, body)) if status != "200" => Reply::Http(status, shorten(&body)),
        Ok((_, _, body)) => match answer(&body) {
            Some(message) if message.get("result").is_some() => {
                Reply::Result(message["result"].clone())
            }
            Some(message) => Reply::Http("200".to_owned(), shorten(&message.to_string())),
            None => Reply::Transport(format!("no JSON-RPC answer in {}", shorten(&body))),
        },
    }
}
