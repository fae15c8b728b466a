//! A raw HTTP/1.1 client for the MCP benches: one keep-alive connection to
//! `/mcp`, with nothing between the bench and the bytes on the wire (no
//! client library's pooling or buffering to measure along).

use std::borrow::Cow;
use std::net::SocketAddr;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// One keep-alive HTTP/1.1 connection to `/mcp` (`TCP_NODELAY`). Its
/// buffers are kept from one request to the next.
#[derive(Debug)]
pub struct Client {
    stream: BufReader<TcpStream>,
    line: String,
    request: Vec<u8>,
    body: Vec<u8>,
}

impl Client {
    /// Connects to `addr`.
    pub async fn connect(addr: SocketAddr) -> Self {
        let stream = TcpStream::connect(addr).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        Self {
            stream: BufReader::new(stream),
            line: String::new(),
            request: Vec::new(),
            body: Vec::new(),
        }
    }

    /// POSTs `body` (JSON) to `/mcp` with the `extra` header lines (each
    /// ending in CRLF) and reads the whole response (an event stream to
    /// its end, chunked or with a length) into [`body`](Self::body); its
    /// status and `Mcp-Session-Id`.
    pub async fn post(&mut self, extra: &str, body: &str) -> (u16, Option<String>) {
        self.request.clear();
        self.request.extend_from_slice(
            format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\n\
                 Content-Type: application/json\r\nContent-Length: {}\r\n{extra}\r\n{body}",
                body.len()
            )
            .as_bytes(),
        );
        self.stream
            .get_mut()
            .write_all(&self.request)
            .await
            .expect("sent");
        self.line.clear();
        self.stream.read_line(&mut self.line).await.expect("status");
        let status = self
            .line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("a status line");
        let (mut chunked, mut length, mut session) = (false, None, None);
        loop {
            self.line.clear();
            self.stream.read_line(&mut self.line).await.expect("header");
            let line = self.line.trim_end();
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').expect("a header");
            let value = value.trim();
            if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.contains("chunked");
            } else if name.eq_ignore_ascii_case("content-length") {
                length = value.parse::<usize>().ok();
            } else if name.eq_ignore_ascii_case("mcp-session-id") {
                session = Some(value.to_owned());
            }
        }
        self.body.clear();
        if chunked {
            loop {
                self.line.clear();
                self.stream.read_line(&mut self.line).await.expect("chunk");
                let size = usize::from_str_radix(self.line.trim(), 16).expect("a chunk size");
                let start = self.body.len();
                self.body.resize(start + size, 0);
                self.stream
                    .read_exact(&mut self.body[start..])
                    .await
                    .expect("chunk");
                self.line.clear();
                self.stream.read_line(&mut self.line).await.expect("crlf");
                if size == 0 {
                    break;
                }
            }
        } else if let Some(length) = length {
            self.body.resize(length, 0);
            self.stream.read_exact(&mut self.body).await.expect("body");
        }
        (status, session)
    }

    /// The body of the last response.
    pub fn body(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.body)
    }
}
