use std::time::Duration;

use super::handler::{custom_request_error, decode_binary_header, metadata_text, trace_context};
use super::limits::{CallLimits, DEFAULT_CALL_TIMEOUT};

#[test]
fn only_printable_ascii_is_forwarded_as_metadata_text() {
    assert_eq!(metadata_text(b"Bearer abc ~!"), Some("Bearer abc ~!"));
    assert_eq!(metadata_text(b""), Some(""));
    assert_eq!(metadata_text("t\u{e9}nant".as_bytes()), None);
    assert_eq!(metadata_text(b"a\tb"), None);
    assert_eq!(metadata_text(b"a\x7fb"), None);
    assert_eq!(metadata_text(b"a\x1fb"), None);
}

#[test]
fn the_deadline_is_the_most_specific_one_set() {
    let s = Duration::from_secs;
    let mut limits = CallLimits::default();
    assert_eq!(
        limits.deadline("a", None, None, None),
        Some(DEFAULT_CALL_TIMEOUT)
    );
    // The server's call options, then the toolkit's, come first.
    assert_eq!(limits.deadline("a", None, Some(s(3)), None), Some(s(3)));
    assert_eq!(
        limits.deadline("a", None, Some(s(3)), Some(s(9))),
        Some(s(3))
    );
    assert_eq!(limits.deadline("a", None, None, Some(s(9))), None);
    // The server's deadline for one tool comes before them all.
    limits.per_tool.insert("a".to_owned(), s(120));
    assert_eq!(
        limits.deadline("a", None, Some(s(3)), Some(s(9))),
        Some(s(120))
    );
    assert_eq!(
        limits.deadline("b", None, None, None),
        Some(DEFAULT_CALL_TIMEOUT)
    );
    // The tool's own (`rpc_tool.timeout`) comes after the server's per
    // tool and before every call options' and the default.
    assert_eq!(
        limits.deadline("a", Some(s(7)), Some(s(3)), Some(s(9))),
        Some(s(120))
    );
    assert_eq!(
        limits.deadline("b", Some(s(7)), Some(s(3)), Some(s(9))),
        Some(s(7))
    );
    assert_eq!(limits.deadline("b", Some(s(7)), None, None), Some(s(7)));
    // No default: the toolkit's, or none.
    limits.timeout = None;
    assert_eq!(limits.deadline("b", None, None, None), None);
    assert_eq!(limits.deadline("b", None, Some(s(3)), None), Some(s(3)));
    assert_eq!(limits.deadline("b", Some(s(7)), None, None), Some(s(7)));
}

#[test]
fn params_that_do_not_fit_a_method_served_are_invalid_params() {
    let array = serde_json::json!({"name": "count", "arguments": ["a"]});
    let error = custom_request_error("tools/call", Some(&array));
    assert_eq!(error.code.0, -32602);
    assert!(
        error
            .message
            .contains("`arguments` must be a JSON object, not an array"),
        "{error:?}"
    );
    let nameless = serde_json::json!({"arguments": {}});
    let error = custom_request_error("tools/call", Some(&nameless));
    assert_eq!(error.code.0, -32602);
    assert!(error.message.contains("name"), "{error:?}");
    assert_eq!(
        custom_request_error("tools/list", Some(&array)).code.0,
        -32602
    );
    let unknown = custom_request_error("tools/frobnicate", None);
    assert_eq!(unknown.code.0, -32601);
    assert_eq!(unknown.message, "tools/frobnicate");
}

#[test]
fn a_bin_header_is_base64_padded_or_not_and_may_list_values() {
    let bytes = vec![0x00, 0xff, b'a', 0x01];
    assert_eq!(decode_binary_header(b"AP9hAQ=="), Some(vec![bytes.clone()]));
    assert_eq!(decode_binary_header(b"AP9hAQ"), Some(vec![bytes.clone()]));
    assert_eq!(
        decode_binary_header(b"AP9hAQ, AQ=="),
        Some(vec![bytes, vec![0x01]])
    );
    assert_eq!(decode_binary_header(b""), Some(vec![Vec::new()]));
    assert_eq!(decode_binary_header(b"not base64!"), None);
    assert_eq!(decode_binary_header(b"AP9hAQ,%%"), None);
    // URL-safe base64 is not gRPC's alphabet.
    assert_eq!(decode_binary_header(b"AP9h-_"), None);
}

#[test]
fn a_valid_trace_context_goes_on_as_metadata_and_an_invalid_one_not_at_all() {
    let trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let mut meta = rmcp::model::RequestMetaObject::new();
    meta.set_traceparent(trace);
    meta.set_tracestate("vendor=opaque");
    let options = trace_context(&meta);
    assert_eq!(
        options.metadata,
        [
            ("traceparent".to_owned(), trace.to_owned()),
            ("tracestate".to_owned(), "vendor=opaque".to_owned())
        ]
    );
    for bad in [
        "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\nx: y",
    ] {
        let mut meta = rmcp::model::RequestMetaObject::new();
        meta.set_traceparent(bad);
        meta.set_tracestate("vendor=opaque");
        assert!(trace_context(&meta).metadata.is_empty(), "{bad}");
    }
    let mut meta = rmcp::model::RequestMetaObject::new();
    meta.set_traceparent(trace);
    meta.set_tracestate("caf\u{e9}=1");
    assert_eq!(
        trace_context(&meta).metadata.len(),
        1,
        "a tracestate metadata cannot carry is dropped"
    );
}

/// A tool call carrying a W3C trace context in `_meta` runs with it in its
/// call options (the metadata a generated tool sends to the service); one
/// without runs without.
#[tokio::test]
async fn the_callers_trace_context_reaches_the_call() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    /// No arguments.
    #[derive(serde::Deserialize, proto_ai_tools::ToolInput)]
    struct Nothing {}
    let echo = proto_ai_tools::NativeTool::new::<Nothing, _, _>(
        "trace_echo",
        "Echo the trace context.",
        |ctx, _: Nothing| async move {
            ctx.call_options()
                .metadata
                .iter()
                .filter(|(k, _)| k.starts_with("trace"))
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(";")
        },
    );
    let toolkit = proto_ai_tools::Toolkit::builder()
        .native(echo)
        .build()
        .unwrap();
    let server = super::McpServer::from_toolkit(toolkit);
    let (client, server_end) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_end);
    let serving = tokio::spawn(server.serve_io(read, write, std::future::pending()));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = BufReader::new(client_read).lines();
    let mut send = async |message: serde_json::Value| {
        client_write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    };
    send(serde_json::json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})).await;
    send(serde_json::json!({"jsonrpc":"2.0","method":"notifications/initialized"})).await;
    let trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    send(serde_json::json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"trace_echo","arguments":{},"_meta":{"traceparent":trace,"tracestate":"v=1"}}})).await;
    send(serde_json::json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"trace_echo","arguments":{}}})).await;
    let mut texts = std::collections::HashMap::new();
    while texts.len() < 2 {
        let line = lines.next_line().await.unwrap().unwrap();
        let reply: serde_json::Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = reply["id"].as_u64().filter(|id| *id >= 2) {
            texts.insert(
                id,
                reply["result"]["content"][0]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            );
        }
    }
    assert_eq!(texts[&2], format!("traceparent={trace};tracestate=v=1"));
    assert_eq!(texts[&3], "");
    drop(lines);
    serving.abort();
}
