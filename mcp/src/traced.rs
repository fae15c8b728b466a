//! One span per MCP request the gateway answers (`initialize`,
//! `tools/list`, `tools/call`), named and attributed as OpenTelemetry's MCP
//! conventions say: `{mcp.method.name} {target}` (`tools/call
//! links_create`), kind `server`, with `mcp.method.name`,
//! `gen_ai.tool.name`, `gen_ai.operation.name` (`execute_tool`),
//! `jsonrpc.request.id`, `mcp.protocol.version`, and once answered
//! `error.type` and `rpc.response.status_code`. A tool call's
//! `ai_tools.call` and its gRPC call's `ai_tools.grpc` (kind `client`) are
//! its children.
//!
//! The span is a `tracing` span at DEBUG: it costs nothing unless a
//! subscriber enables it. With OpenTelemetry on
//! ([`McpServer::with_opentelemetry`](crate::McpServer::with_opentelemetry),
//! feature `otel`) its parent is the trace context the request carries, in
//! its `_meta` (`traceparent`, `tracestate`) or else its HTTP headers, and
//! the gRPC call sends its own span's context on as `traceparent`
//! metadata: one trace runs from the host through the gateway to the
//! service. No span holds an argument's value.

use rmcp::RoleServer;
use rmcp::service::RequestContext;

/// The longest tool name a span's name holds: a name the server does not
/// have is the model's text.
const MAX_TARGET_CHARS: usize = 128;

/// The span of one request `method` (of `tool`, for a `tools/call`).
pub(crate) fn request_span(
    method: &'static str,
    tool: Option<&str>,
    context: &RequestContext<RoleServer>,
) -> tracing::Span {
    // The fields are made only when the span is enabled.
    let target = |tool: &str| -> String { tool.chars().take(MAX_TARGET_CHARS).collect() };
    let span = tracing::debug_span!(
        "mcp.request",
        otel.name = %match tool {
            Some(tool) => format!("{method} {}", target(tool)),
            None => method.to_owned(),
        },
        otel.kind = "server",
        otel.status_code = tracing::field::Empty,
        mcp.method.name = method,
        gen_ai.tool.name = tool.map(target),
        gen_ai.operation.name = tool.map(|_| "execute_tool"),
        jsonrpc.request.id = %context.id,
        mcp.protocol.version = context.protocol_version().map(|v| v.as_str().to_owned()),
        error.type = tracing::field::Empty,
        rpc.response.status_code = tracing::field::Empty,
    );
    span
}

/// How a request ended, as the conventions say it (in its span and the
/// metrics).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ended {
    /// `error.type`: `tool_error` for a result the model is told is an
    /// error, a refusal's JSON-RPC code as text, or none.
    pub(crate) error_type: Option<&'static str>,
    /// `rpc.response.status_code`: a refusal's JSON-RPC code.
    pub(crate) json_rpc_code: Option<i32>,
}

/// How the request that answered `result` ended; `tool_error` says whether
/// an answer is an error the model is told of.
pub(crate) fn ended<T>(
    result: &Result<T, rmcp::ErrorData>,
    tool_error: impl FnOnce(&T) -> bool,
) -> Ended {
    match result {
        Ok(answer) if tool_error(answer) => Ended {
            error_type: Some("tool_error"),
            json_rpc_code: None,
        },
        Ok(_) => Ended {
            error_type: None,
            json_rpc_code: None,
        },
        Err(error) => Ended {
            error_type: Some(json_rpc_error_type(error.code.0)),
            json_rpc_code: Some(error.code.0),
        },
    }
}

/// Records in `span` how its request ended.
pub(crate) fn record_end(span: &tracing::Span, ended: Ended) {
    if let Some(error_type) = ended.error_type {
        span.record("error.type", error_type);
        span.record("otel.status_code", "ERROR");
    }
    if let Some(code) = ended.json_rpc_code {
        span.record("rpc.response.status_code", code);
    }
}

/// `error.type` of a refused request: its JSON-RPC code, as text, for the
/// codes JSON-RPC and MCP define; `_OTHER` for any other.
fn json_rpc_error_type(code: i32) -> &'static str {
    match code {
        -32700 => "-32700",
        -32600 => "-32600",
        -32601 => "-32601",
        -32602 => "-32602",
        -32603 => "-32603",
        -32002 => "-32002",
        -32042 => "-32042",
        -32001 => "-32001",
        _ => "_OTHER",
    }
}

#[cfg(feature = "otel")]
mod otel {
    use opentelemetry::propagation::{Extractor, Injector};
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    use super::*;

    /// The trace context a request carries: its `_meta`'s, else its HTTP
    /// headers'.
    struct Carried {
        traceparent: Option<String>,
        tracestate: Option<String>,
    }

    impl Extractor for Carried {
        fn get(&self, key: &str) -> Option<&str> {
            match key {
                "traceparent" => self.traceparent.as_deref(),
                "tracestate" => self.tracestate.as_deref(),
                _ => None,
            }
        }

        fn keys(&self) -> Vec<&str> {
            ["traceparent", "tracestate"]
                .into_iter()
                .filter(|key| self.get(key).is_some())
                .collect()
        }
    }

    /// Metadata as the propagator writes it.
    #[derive(Default)]
    struct Written(Vec<(String, String)>);

    impl Injector for Written {
        fn set(&mut self, key: &str, value: String) {
            self.0.push((key.to_owned(), value));
        }
    }

    /// Makes the trace context `context`'s request carries the parent of
    /// `span`.
    pub(crate) fn adopt_parent(span: &tracing::Span, context: &RequestContext<RoleServer>) {
        let meta = &context.meta;
        let carried = if meta.get_traceparent().is_some() {
            Carried {
                traceparent: meta.get_traceparent().map(str::to_owned),
                tracestate: meta.get_tracestate().map(str::to_owned),
            }
        } else {
            let header = |name: &str| {
                context
                    .extensions
                    .get::<http::request::Parts>()
                    .and_then(|parts| parts.headers.get(name))
                    .and_then(|value| value.to_str().ok())
                    .map(str::to_owned)
            };
            Carried {
                traceparent: header("traceparent"),
                tracestate: header("tracestate"),
            }
        };
        if carried.traceparent.is_none() {
            return;
        }
        let parent = opentelemetry::global::get_text_map_propagator(|propagator| {
            propagator.extract(&carried)
        });
        // Refused only once the span has started, which it has not.
        let _ = span.set_parent(parent);
    }

    /// The trace context of the span current when called (a gRPC call's
    /// `ai_tools.grpc`), as metadata.
    pub(crate) fn current_trace_context() -> Vec<(String, String)> {
        let context = tracing::Span::current().context();
        let mut written = Written::default();
        opentelemetry::global::get_text_map_propagator(|propagator| {
            propagator.inject_context(&context, &mut written);
        });
        written.0
    }
}

#[cfg(feature = "otel")]
pub(crate) use otel::{adopt_parent, current_trace_context};
