//! Each MCP request the gateway answers, measured (feature `admin`):
//! `initialize`, `tools/list` and `tools/call` are timed and recorded in
//! the server's [`Metrics`], a tool call's gRPC status included, which the
//! toolkit tells through the call's observer while the request runs (a
//! task-local slot, so nothing is shared between requests). The methods
//! rmcp answers by itself (`ping`, ...) are not.

use std::cell::Cell;
use std::future::Future;
use std::time::Instant;

use rmcp::ErrorData;

use crate::admin::{Metrics, Operation};

tokio::task_local! {
    /// The gRPC status of the tool call the current request made.
    static GRPC_STATUS: Cell<Option<i32>>;
}

/// Notes the gRPC status of the current request's tool call, when it
/// runs inside a measured request (a task's call runs apart: no slot).
pub(crate) fn note_grpc_status(code: Option<i32>) {
    let _ = GRPC_STATUS.try_with(|slot| slot.set(code));
}

/// Runs `answer`, the request `method` (of `tool`, for a `tools/call`),
/// and records how long it took and how it ended: `tool_error` where
/// `tool_error` says the result is one the model is told, the JSON-RPC
/// code of a refusal.
pub(crate) async fn measure<T>(
    metrics: &Metrics,
    method: &'static str,
    tool: Option<&str>,
    answer: impl Future<Output = Result<T, ErrorData>>,
    tool_error: impl FnOnce(&T) -> bool,
) -> Result<T, ErrorData> {
    let started = Instant::now();
    let (result, grpc_status) = GRPC_STATUS
        .scope(Cell::new(None), async {
            let result = answer.await;
            (result, GRPC_STATUS.with(Cell::get))
        })
        .await;
    let (error_type, json_rpc_code) = match &result {
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
        started.elapsed(),
    );
    result
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
