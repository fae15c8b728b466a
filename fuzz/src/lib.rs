//! Shared pieces of the fuzz targets: the links.proto tools through
//! `ai_tools!`, an in-process service that answers every method, and a
//! poll-to-completion helper (the in-process transport needs no runtime).

#![forbid(unsafe_code)]

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use proto_ai_tools::{AliasManager, executor::ProtoExecutor, transport::InProcessTransport};
use prost_reflect::{DynamicMessage, Value};

/// The expansion of `ai_tools!` for the example proto.
pub mod links {
    proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
}

/// UUIDs the fuzz targets register up front, so that alias resolution is exercised.
pub const KNOWN: [&str; 4] = [
    "d290f1ee-6c54-4b01-90e6-d701748f0851",
    "5a0c6a43-1c39-4d8e-9c54-0d1f51a3b0b7",
    "0b4e7c9a-2f1d-4c3b-8a5e-6d7f8e9a0b1c",
    "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a",
];

/// Polls `future` to completion with a no-op waker; `None` if it never
/// finishes within a bound (an in-process call always does).
pub fn run<F: Future>(future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1_000 {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return Some(out);
        }
    }
    None
}

/// An in-process service for every method of links.proto: each returns a
/// response of its output type holding a fresh id per alias field.
pub fn transport() -> InProcessTransport {
    let pool = links::descriptor_pool();
    let mut transport = InProcessTransport::new();
    for service in pool.services() {
        for method in service.methods() {
            let path = format!("/{}/{}", service.full_name(), method.name());
            let output = method.output();
            transport = transport.with_handler(path, move |_request, _options| {
                let output = output.clone();
                async move {
                    let mut response = DynamicMessage::new(output.clone());
                    for field in output.fields() {
                        if let prost_reflect::Kind::Message(m) = field.kind()
                            && m.full_name().starts_with("links.v1.")
                        {
                            let mut inner = DynamicMessage::new(m.clone());
                            for f in m.fields() {
                                if f.kind() == prost_reflect::Kind::String && !f.is_list() {
                                    inner.set_field(&f, Value::String(KNOWN[2].to_owned()));
                                }
                            }
                            let v = if field.is_list() {
                                Value::List(vec![Value::Message(inner)])
                            } else {
                                Value::Message(inner)
                            };
                            response.set_field(&field, v);
                        }
                    }
                    Ok(response)
                }
            });
        }
    }
    transport
}

/// An executor over [`transport`] with [`KNOWN`] registered as links and steps.
pub fn executor() -> ProtoExecutor<InProcessTransport> {
    let aliases = Arc::new(AliasManager::new());
    for (i, uuid) in KNOWN.iter().enumerate() {
        let prefix = if i % 2 == 0 { "link" } else { "step" };
        let _ = run(aliases.register(prefix, uuid));
    }
    ProtoExecutor::with_alias_manager(
        links::all_tools(),
        links::descriptor_pool(),
        transport(),
        aliases,
    )
}
