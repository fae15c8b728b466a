//! A raw HTTP/1.1 client over loopback, for the tests that check what an
//! HTTP endpoint answers byte for byte: the MCP server's HTTP edge
//! (`tests/http_edge.rs`) and the gateway as an OAuth 2.1 resource server
//! ([`crate::oauth`]). It writes exactly the bytes it is given and reads one
//! response whole: its status, its headers and its body.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// One HTTP/1.1 response, read whole.
#[derive(Debug)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The headers in order, names lowercase.
    pub headers: Vec<(String, String)>,
    /// The body (lossy UTF-8).
    pub body: String,
}

impl Response {
    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC message of the body: the body itself, or the one
    /// `data:` line of an event stream that holds one.
    ///
    /// # Panics
    ///
    /// When the body holds no JSON-RPC message.
    pub fn message(&self) -> Value {
        if let Ok(value) = serde_json::from_str::<Value>(&self.body) {
            return value;
        }
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|v| v.get("jsonrpc").is_some())
            .unwrap_or_else(|| panic!("no JSON-RPC message in {self:?}"))
    }
}

/// The bytes of one HTTP/1.1 request with `Connection: close`.
pub fn http_request(method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body.as_bytes());
    bytes
}

/// Reads one HTTP/1.1 response: its head, then a chunked body, one of
/// `Content-Length`, or everything to the end.
///
/// # Errors
///
/// When reading fails or the connection closes before a status line.
///
/// # Panics
///
/// When the status line, a header, a chunk size or the length is malformed.
pub async fn read_response(reader: &mut (impl AsyncBufRead + Unpin)) -> std::io::Result<Response> {
    let mut line = String::new();
    if reader.read_line(&mut line).await? == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a status line: {line:?}"));
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).await?;
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        let (name, value) = trimmed.split_once(':').expect("a header");
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let find = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v);
    let mut body = Vec::new();
    if status == 204 || status == 304 {
        // No body.
    } else if find("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        loop {
            line.clear();
            reader.read_line(&mut line).await?;
            let size = usize::from_str_radix(line.trim(), 16).expect("a chunk size");
            if size == 0 {
                line.clear();
                reader.read_line(&mut line).await?;
                break;
            }
            let start = body.len();
            body.resize(start + size, 0);
            reader.read_exact(&mut body[start..]).await?;
            line.clear();
            reader.read_line(&mut line).await?;
        }
    } else if let Some(length) = find("content-length") {
        body.resize(length.parse().expect("a length"), 0);
        reader.read_exact(&mut body).await?;
    } else {
        reader.read_to_end(&mut body).await?;
    }
    Ok(Response {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

/// Sends `request` on a new connection to `addr`; its response, within
/// `patience`. The request is written while the response is read: a server
/// may answer (and close) before it has read the whole body.
///
/// # Panics
///
/// When the connection fails, or no whole response comes within `patience`.
pub async fn exchange(addr: SocketAddr, request: &[u8], patience: Duration) -> Response {
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (read, mut write) = stream.into_split();
    let request = request.to_vec();
    let writer = tokio::spawn(async move {
        let _ = write.write_all(&request).await;
        // Kept open until the response is read.
        std::future::pending::<()>().await;
    });
    let response = tokio::time::timeout(patience, read_response(&mut BufReader::new(read)))
        .await
        .expect("an answer in time")
        .expect("a response");
    writer.abort();
    response
}
