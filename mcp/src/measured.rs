//! Each MCP request the gateway answers, measured (feature `admin`):
//! `initialize`, `tools/list` and `tools/call` are timed and recorded in
//! the server's [`Metrics`], a tool call's gRPC status included (which the
//! toolkit tells through the call's observer while the request runs, into
//! the request's [audit notes](crate::audit)). The methods rmcp answers by
//! itself (`ping`, ...) are not.

use std::future::Future;
use std::time::{Duration, Instant};

use rmcp::ErrorData;

use crate::admin::{Metrics, Operation};

/// Runs `answer`, the request `method` (`initialize`, `tools/list`), and
/// records how long it took and how it ended.
pub(crate) async fn measure<T>(
    metrics: &Metrics,
    method: &'static str,
    answer: impl Future<Output = Result<T, ErrorData>>,
) -> Result<T, ErrorData> {
    let started = Instant::now();
    let result = answer.await;
    record(
        metrics,
        method,
        None,
        &result,
        |_| false,
        None,
        started.elapsed(),
    );
    result
}

/// Records the request `method` (of `tool`, for a `tools/call`) that took
/// `took` and ended with `result`: `tool_error` where `tool_error` says the
/// result is one the model is told, the JSON-RPC code of a refusal; with
/// the gRPC status of the call it made.
pub(crate) fn record<T>(
    metrics: &Metrics,
    method: &'static str,
    tool: Option<&str>,
    result: &Result<T, ErrorData>,
    tool_error: impl FnOnce(&T) -> bool,
    grpc_status: Option<i32>,
    took: Duration,
) {
    let (error_type, json_rpc_code) = match result {
        Ok(answer) if tool_error(answer) => (Some("tool_error"), None),
        Ok(_) => (None, None),
        Err(error) => (Some(json_rpc_error_type(error.code.0)), Some(error.code.0)),
    };
    metrics.record_operation(
        &Operation {
            method,
            tool,
            error_type,
            json_rpc_code,
            grpc_status,
        },
        took,
    );
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
