//! The limits of `mcp` given on the command line: the deadlines of tool
//! calls (`--call-timeout`, `--tool-timeout`) and the limits of the HTTP
//! edge (`--max-body-bytes` to `--keep-calls-on-disconnect`), their checks,
//! and the server they apply to. The guide's Limits chapter,
//! guide/src/limits.md, has them all.

use std::time::Duration;

use proto_ai_tools_mcp::McpServer;

use crate::checked::{Checked, count, seconds};

/// A deadline, or none (`--call-timeout 0`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Deadline(pub(crate) Option<Duration>);

/// The deadlines of `mcp`'s tool calls given on the command line.
#[derive(clap::Args, Default, Debug, PartialEq)]
#[command(
    next_help_heading = "Calls (the guide's Limits chapter, guide/src/limits.md, has them all)"
)]
pub(crate) struct CallLimits {
    /// The deadline of every tool call, sent to the service as grpc-timeout
    /// (default 50: under the 60 s after which most MCP hosts give up; 0 for
    /// none)
    #[arg(long = "call-timeout", value_name = "SECS", value_parser = Checked::new(deadline, &[]))]
    pub(crate) timeout: Option<Deadline>,
    /// The deadline of one tool's calls, over --call-timeout (repeatable;
    /// AI_TOOLS_TOOL_TIMEOUT takes several, comma-separated)
    #[arg(long = "tool-timeout", value_name = "NAME=SECS", value_delimiter = ',', value_parser = Checked::new(tool_timeout, &[]))]
    pub(crate) per_tool: Vec<(String, Duration)>,
}

impl CallLimits {
    pub(crate) fn apply(&self, mut server: McpServer) -> McpServer {
        if let Some(Deadline(timeout)) = self.timeout {
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
#[derive(clap::Args, Default, Debug, PartialEq)]
#[command(
    next_help_heading = "HTTP limits (mcp --http; the guide's Limits chapter, guide/src/limits.md, has them all)"
)]
pub(crate) struct HttpLimits {
    /// The largest request body (default 327680: the 256 KiB argument limit
    /// plus 64 KiB of JSON-RPC envelope); larger is refused with 413 unread
    #[arg(long, value_name = "N", value_parser = Checked::new(count, &[]))]
    pub(crate) max_body_bytes: Option<usize>,
    /// MCP sessions held at once (default 1000); past it initialize gets 503
    /// with Retry-After
    #[arg(long, value_name = "N", value_parser = Checked::new(count, &[]))]
    pub(crate) max_sessions: Option<usize>,
    /// A session without a message ends (default 300)
    #[arg(long, value_name = "SECS", value_parser = Checked::new(seconds, &[]))]
    pub(crate) session_idle_timeout: Option<Duration>,
    /// Open connections (default 1024); past it new ones wait, unaccepted,
    /// until one closes
    #[arg(long, value_name = "N", value_parser = Checked::new(count, &[]))]
    pub(crate) max_connections: Option<usize>,
    /// A request's headers, then its body, must arrive within this (default
    /// 10)
    #[arg(long, value_name = "SECS", value_parser = Checked::new(seconds, &[]))]
    pub(crate) header_timeout: Option<Duration>,
    /// A connection with no request in progress and no byte sent is closed
    /// (default 60)
    #[arg(long, value_name = "SECS", value_parser = Checked::new(seconds, &[]))]
    pub(crate) idle_timeout: Option<Duration>,
    /// Once told to stop (SIGTERM, ctrl-c), the calls in flight get this
    /// long to end while new requests get 503 with Retry-After; a call still
    /// running is then answered that it did not finish (default 25)
    #[arg(long, value_name = "SECS", value_parser = Checked::new(seconds, &[]))]
    pub(crate) drain_timeout: Option<Duration>,
    /// A browser Origin accepted besides loopback ones, e.g.
    /// https://app.example.com:443 or https://app.example.com:* (repeatable;
    /// AI_TOOLS_ALLOWED_ORIGIN takes several, comma-separated); any other
    /// Origin gets 403, none at all passes
    #[arg(long = "allowed-origin", value_name = "ORIGIN", value_delimiter = ',', value_parser = Checked::new(origin, &[]))]
    pub(crate) allowed_origins: Vec<String>,
    /// Let a tool call run to its end when its client's connection closes
    /// (default: cancel it at the service)
    #[arg(long)]
    pub(crate) keep_calls_on_disconnect: bool,
}

impl HttpLimits {
    pub(crate) fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    pub(crate) fn apply(&self, mut server: McpServer) -> McpServer {
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
        if let Some(t) = self.drain_timeout {
            server = server.with_drain_timeout(t);
        }
        server
            .with_allowed_origins(self.allowed_origins.iter().cloned())
            .with_cancel_on_disconnect(!self.keep_calls_on_disconnect)
    }
}

/// `--call-timeout`: seconds, or 0 for none.
pub(crate) fn deadline(flag: &str, text: &str) -> Result<Deadline, String> {
    if text.parse::<f64>() == Ok(0.0) {
        return Ok(Deadline(None));
    }
    seconds(flag, text).map(|d| Deadline(Some(d))).map_err(|_| {
        format!("`{flag} {text}`: give a positive number of seconds, or 0 for no deadline")
    })
}

/// `--tool-timeout NAME=SECS`.
pub(crate) fn tool_timeout(flag: &str, given: &str) -> Result<(String, Duration), String> {
    let (tool, secs) = given
        .split_once('=')
        .filter(|(tool, _)| !tool.is_empty())
        .ok_or_else(|| format!("`{flag} {given}`: give NAME=SECS, e.g. reports_generate=300"))?;
    let timeout = seconds(flag, secs)
        .map_err(|_| format!("`{flag} {given}`: give a positive number of seconds after `=`"))?;
    Ok((tool.to_owned(), timeout))
}

/// `--allowed-origin`: an origin with its scheme, or `null`.
pub(crate) fn origin(flag: &str, origin: &str) -> Result<String, String> {
    if origin != "null" && !origin.contains("://") {
        return Err(format!(
            "`{flag} {origin}`: give scheme://host:port, scheme://host:* for any port, or null"
        ));
    }
    Ok(origin.to_owned())
}
