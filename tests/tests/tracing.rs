//! The executor's spans (`executor` module docs, "Tracing"), recorded by a
//! subscriber of the test's own: one `ai_tools.call` per call with the
//! tool, service and method, over `ai_tools.arguments`, `ai_tools.grpc`
//! and `ai_tools.response`; a refused call records the kind of failure and
//! makes no gRPC span; no span holds the model's arguments.

use std::sync::{Arc, Mutex};

use proto_ai_tools::executor::ProtoExecutor;
use proto_ai_tools::transport::TonicTransport;
use proto_ai_tools_tests::{LINKS_POOL, LinksBackend, serve, tools};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// One span as recorded: its name, its parent's name, its fields as text.
#[derive(Debug, Clone)]
struct Recorded {
    name: &'static str,
    parent: Option<&'static str>,
    fields: Vec<(String, String)>,
}

/// Records every span and the fields recorded on it later.
#[derive(Default, Clone)]
struct Recorder {
    spans: Arc<Mutex<Vec<Recorded>>>,
    stack: Arc<Mutex<Vec<u64>>>,
}

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut fields = Vec::new();
        span.record(&mut Fields(&mut fields));
        let mut spans = self.spans.lock().unwrap();
        let parent = self
            .stack
            .lock()
            .unwrap()
            .last()
            .map(|id| spans[(*id - 1) as usize].name);
        spans.push(Recorded {
            name: span.metadata().name(),
            parent,
            fields,
        });
        Id::from_u64(spans.len() as u64)
    }
    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut spans = self.spans.lock().unwrap();
        let recorded = &mut spans[(span.into_u64() - 1) as usize];
        values.record(&mut Fields(&mut recorded.fields));
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, span: &Id) {
        self.stack.lock().unwrap().push(span.into_u64());
    }
    fn exit(&self, _: &Id) {
        self.stack.lock().unwrap().pop();
    }
}

impl Recorder {
    fn spans(&self) -> Vec<Recorded> {
        self.spans.lock().unwrap().clone()
    }
}

fn field<'a>(span: &'a Recorded, name: &str) -> Option<&'a str> {
    span.fields
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn a_call_is_a_span_over_its_steps_and_a_refusal_says_its_kind() {
    let recorder = Recorder::default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _guard = tracing::subscriber::set_default(recorder.clone());
    runtime.block_on(async {
        let server = serve(LinksBackend::default()).await.unwrap();
        let exec = ProtoExecutor::new(
            tools::ALL,
            &LINKS_POOL,
            TonicTransport::new(server.channel().unwrap()),
        );
        let made = exec
            .execute(
                "links_create",
                r#"{"destination": "https://secret.example/x"}"#,
            )
            .await;
        assert!(!made.is_error, "{}", made.output);
        let calls_so_far = recorder.spans().len();

        let refused = exec.execute("links_create", r#"{"destination": 5}"#).await;
        assert!(refused.is_error);

        let spans = recorder.spans();
        let (first, second) = spans.split_at(calls_so_far);
        let names = |spans: &[Recorded]| spans.iter().map(|s| s.name).collect::<Vec<_>>();
        assert_eq!(
            names(first)
                .into_iter()
                .filter(|n| n.starts_with("ai_tools."))
                .collect::<Vec<_>>(),
            [
                "ai_tools.call",
                "ai_tools.arguments",
                "ai_tools.grpc",
                "ai_tools.response"
            ]
        );
        let call = first
            .iter()
            .find(|s| s.name == "ai_tools.call")
            .expect("the call's span");
        assert_eq!(field(call, "tool"), Some("links_create"));
        assert_eq!(field(call, "rpc.service"), Some("links.v1.LinksService"));
        assert_eq!(field(call, "rpc.method"), Some("CreateLink"));
        assert_eq!(field(call, "error"), None, "a call that succeeded");
        for step in first
            .iter()
            .filter(|s| s.name != "ai_tools.call" && s.name.starts_with("ai_tools."))
        {
            assert_eq!(step.parent, Some("ai_tools.call"), "{step:?}");
        }

        assert_eq!(
            names(second)
                .into_iter()
                .filter(|n| n.starts_with("ai_tools."))
                .collect::<Vec<_>>(),
            ["ai_tools.call", "ai_tools.arguments"],
            "refused before any gRPC call"
        );
        let refused_call = second
            .iter()
            .find(|s| s.name == "ai_tools.call")
            .expect("the refused call's span");
        assert_eq!(field(refused_call, "error"), Some("arguments"));
        let everything = format!("{spans:?}");
        assert!(
            !everything.contains("secret.example"),
            "no span holds the arguments: {everything}"
        );
        server.shutdown().await;
    });
}
