//! `mcp --otlp-endpoint URL`, or the standard `OTEL_*` variables: the
//! gateway's spans to an OpenTelemetry collector over OTLP/gRPC.
//!
//! What is exported: the span of each MCP request (`tools/call
//! links_create`, kind server, as OpenTelemetry's MCP conventions name it)
//! and under it the gRPC call's (`links.v1.LinksService/CreateLink`, kind
//! client), whose context the backend receives as `traceparent`; the tool
//! call's inner spans (`ai_tools.call`, its arguments, its answer) stay in
//! the logs: exported, they were three of the five spans of every call.
//! A request's own `traceparent` (in `_meta`, or its HTTP headers) is the
//! parent: one trace from the host to the service. Besides those two spans
//! only the WARN and ERROR events of the gateway's own crates go out: the
//! DEBUG event that holds a call's arguments never does.
//!
//! The SDK and its exporter read the standard variables themselves:
//! `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
//! (where, when the flag is not given), `_HEADERS`, `_TIMEOUT`,
//! `OTEL_SERVICE_NAME` (default here `ai-tools`), `OTEL_RESOURCE_ATTRIBUTES`,
//! `OTEL_TRACES_SAMPLER` and `_ARG`, and `OTEL_BSP_*` for the batches.
//! `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` turn them off.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::FilterExt as _;

/// The exporter of a gateway whose traces are on.
pub(crate) struct Traces {
    provider: SdkTracerProvider,
    /// Where the spans go, as the ready line says it.
    pub(crate) endpoint: String,
}

/// The layer of `tracing` that turns the gateway's spans into
/// OpenTelemetry's.
pub(crate) type TraceLayer =
    Box<dyn tracing_subscriber::Layer<tracing_subscriber::Registry> + Send + Sync>;

/// The spans exported, by their `tracing` names: the MCP request's
/// (`proto_ai_tools_mcp`'s `traced::request_span`) and the gRPC call's
/// (the runtime's `executor::grpc_span`).
const EXPORTED_SPANS: [&str; 2] = ["mcp.request", "ai_tools.grpc"];

/// The variables that name the collector when the flag does not.
const ENDPOINT_VARIABLES: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
];

/// The traces `flag` (`--otlp-endpoint`) or the environment ask for, their
/// exporter built (it connects at the first export); `None` when off. Must
/// run inside the tokio runtime: the exporter's channel lives on it.
pub(crate) fn start(flag: Option<&str>) -> Result<Option<Traces>, String> {
    let variable = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    if variable("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
        || variable("OTEL_TRACES_EXPORTER").is_some_and(|v| v.eq_ignore_ascii_case("none"))
    {
        return Ok(None);
    }
    // Where it came from, as the error names it.
    let (endpoint, given_as) = match flag {
        Some(url) => (url.to_owned(), "--otlp-endpoint ".to_owned()),
        None => match ENDPOINT_VARIABLES
            .iter()
            .find_map(|name| variable(name).map(|url| (url, format!("{name}="))))
        {
            Some(found) => found,
            None => return Ok(None),
        },
    };
    if !endpoint.starts_with("http://") {
        return Err(format!(
            "`{given_as}{endpoint}`: give an http:// URL of an OTLP/gRPC collector (plaintext, \
             such as a collector or agent beside the gateway); https is not supported by this build, \
             and OTEL_TRACES_EXPORTER=none turns traces off"
        ));
    }
    let mut exporter = opentelemetry_otlp::SpanExporter::builder().with_tonic();
    if let Some(url) = flag {
        use opentelemetry_otlp::WithExportConfig as _;
        exporter = exporter.with_endpoint(url);
    }
    let exporter = exporter
        .build()
        .map_err(|e| format!("the OTLP exporter to {endpoint} could not be built: {e}"))?;
    let mut resource = Resource::builder();
    if variable("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name("ai-tools");
    }
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource.build())
        .build();
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    Ok(Some(Traces { provider, endpoint }))
}

impl Traces {
    /// The layer that exports the request's and the gRPC call's spans
    /// ([`EXPORTED_SPANS`]), and the WARN and ERROR events of the gateway's
    /// own crates.
    pub(crate) fn layer(&self) -> TraceLayer {
        // The attributes the conventions name, not the layer's extras
        // (source file and line, thread, busy and idle time).
        tracing_opentelemetry::layer()
            .with_tracer(self.provider.tracer("ai-tools"))
            .with_location(false)
            .with_threads(false)
            .with_tracked_inactivity(false)
            .with_target(false)
            .with_filter(
                // By target first, which decides once per callsite (and
                // gives the level hint): the other crates' DEBUG and TRACE
                // events stay off at their callsites. Then the two spans
                // the conventions name (a span left out is skipped: the gRPC
                // span's parent is the request's), and only the WARN and
                // ERROR events.
                tracing_subscriber::filter::Targets::new()
                    .with_target("proto_ai_tools", tracing::Level::DEBUG)
                    .with_target("ai_tools", tracing::Level::DEBUG)
                    .and(tracing_subscriber::filter::filter_fn(|meta| {
                        if meta.is_span() {
                            EXPORTED_SPANS.contains(&meta.name())
                        } else {
                            *meta.level() <= tracing::Level::WARN
                        }
                    })),
            )
            .boxed()
    }

    /// Sends the spans still batched, and stops the exporter.
    pub(crate) async fn flush(self) {
        let provider = self.provider;
        // The SDK blocks until the batch is sent, which the runtime's other
        // threads carry: off the runtime's own.
        let flushed = tokio::task::spawn_blocking(move || provider.shutdown()).await;
        match flushed {
            Ok(Ok(())) => tracing::info!("traces flushed"),
            Ok(Err(e)) => tracing::warn!(
                outcome = "traces_not_flushed",
                "the last traces were not sent: {e}"
            ),
            Err(e) => tracing::warn!(
                outcome = "traces_not_flushed",
                "the last traces were not sent: {e}"
            ),
        }
    }
}
