//! The admin listener (feature `admin`): Prometheus metrics at `/metrics`,
//! liveness at `/healthz` and readiness at `/readyz`, on an address of its
//! own, never the MCP port, so that what it tells is for the operator's
//! network only.
//!
//! # Metrics
//!
//! [`Metrics`] is one registry, handed to
//! [`McpServer::with_metrics`](crate::McpServer::with_metrics) and to
//! [`serve_admin`]. Names and labels are OpenTelemetry's MCP semantic
//! conventions as Prometheus spells them (dots become underscores, the
//! unit a suffix):
//!
//! | metric | type | labels | what |
//! |---|---|---|---|
//! | `mcp_server_operation_duration_seconds` | histogram | `mcp_method_name`, `gen_ai_tool_name`, `gen_ai_operation_name`, `error_type`, `rpc_response_status_code`, `rpc_grpc_status_code` | each MCP request, from its arrival at the server to its answer |
//! | `ai_tools_tool_calls_total` | counter | `gen_ai_tool_name`, `outcome` | each tool call, by the `outcome` its log line says |
//! | `ai_tools_backend_duration_seconds` | histogram | `gen_ai_tool_name`, `rpc_grpc_status_code` | the gRPC part of each call: from sending the request to its answer |
//! | `ai_tools_gateway_duration_seconds` | histogram | `gen_ai_tool_name` | the rest of each call: arguments, aliases, the answer's JSON |
//! | `ai_tools_consent_decisions_total` | counter | `gen_ai_tool_name`, `decision` | each consent decision of a call (`accepted`, `declined`, `cancelled`, `unsupported`, `refused-by-policy`, `allowed-by-policy`, `unapproved`, `asked`) |
//! | `ai_tools_http_refusals_total` | counter | `limit` | each request the HTTP edge refused itself, by what refused it: `body_size` (413), `body_time` (408), `unknown_session` (404), `sessions` (503 at the cap), `sessions_per_caller` (429), `session_store` (503), `caller_identity`, `not_json`, `invalid_request` (400), `draining` (503 while stopping), `token`, `token_scope`, `token_check_unavailable` (OAuth) |
//! | `ai_tools_mcp_sessions` | gauge | | the handshake-era MCP sessions held, read at each scrape |
//! | `ai_tools_alias_scopes` | gauge | | the alias namespaces (sessions, callers) kept in memory, read at each scrape |
//! | `ai_tools_aliases_given_total` | counter | | aliases given out, each new to its scope in this process ([`AliasCounts`](proto_ai_tools::alias::AliasCounts)) |
//! | `ai_tools_aliases_resolved_total`, `_expired_total`, `_lost_total` | counter | | aliases models sent back: resolved to their UUID, refused as expired, refused as lost by the alias store |
//!
//! [`Metrics::watch_gauge`] and [`Metrics::watch_counter`] add more, read at
//! each scrape: `ai-tools mcp` adds the alias store's
//! `ai_tools_store_round_trips_total` and
//! `ai_tools_store_registrations_without_replica_total` with Redis. A store
//! that fails a call is counted by the call's `outcome`
//! (`store_before_call`, `store_after_call`).
//!
//! `error_type` is `tool_error` for a call whose result is an error (the
//! model was told why), else the JSON-RPC error code of a refused request;
//! `rpc_grpc_status_code` is the gRPC code's number (`0` for OK), where the
//! service was reached. A tool name is a label only for a tool the server
//! lists; any other name a client sends is `_OTHER`, so a client cannot
//! grow the label sets. The requests measured are those the gateway
//! answers itself: `initialize`, `tools/list` and `tools/call`; with tool
//! search, a `search_tools` call is a `tools/call` of that name, so its
//! latency is the search's.
//!
//! # Readiness
//!
//! [`Readiness`] holds named checks (the backend's channel, the alias
//! store, ...) and a draining flag: `/readyz` answers `200` when every
//! check passes and the server is not draining, else `503`; with
//! `?verbose` it says each check's result, one line each.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};
use proto_ai_tools::CallRecord;

/// The label of any tool name the server does not list.
const OTHER: &str = "_OTHER";

/// The buckets of the request and backend histograms, in seconds:
/// OpenTelemetry's advice for the MCP durations (10 ms to 300 s), with
/// 0.5 to 5 ms before it for services on the same network.
const DURATION_BUCKETS: [f64; 18] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0,
    120.0, 300.0,
];

/// The buckets of the gateway's own time per call, in seconds: tens of
/// microseconds to a second.
const GATEWAY_BUCKETS: [f64; 13] = [
    0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1,
    1.0,
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OperationLabels {
    mcp_method_name: &'static str,
    gen_ai_tool_name: Option<Arc<String>>,
    gen_ai_operation_name: Option<&'static str>,
    error_type: Option<&'static str>,
    rpc_response_status_code: Option<i32>,
    rpc_grpc_status_code: Option<i32>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    gen_ai_tool_name: Arc<String>,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BackendLabels {
    gen_ai_tool_name: Arc<String>,
    rpc_grpc_status_code: Option<i32>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabels {
    gen_ai_tool_name: Arc<String>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ConsentLabels {
    gen_ai_tool_name: Arc<String>,
    decision: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RefusalLabels {
    limit: &'static str,
}

/// A value read at each scrape: a gauge's, or a counter's total.
enum Reading {
    Gauge(Box<dyn Fn() -> i64 + Send + Sync>),
    Counter(Box<dyn Fn() -> u64 + Send + Sync>),
}

/// The metrics read at each scrape, by name, with their help.
#[derive(Default)]
struct Live(Mutex<Vec<(&'static str, &'static str, Reading)>>);

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live").finish_non_exhaustive()
    }
}

impl prometheus_client::collector::Collector for Live {
    fn encode(
        &self,
        mut encoder: prometheus_client::encoding::DescriptorEncoder,
    ) -> Result<(), std::fmt::Error> {
        use prometheus_client::encoding::EncodeMetric as _;
        let readings = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (name, help, reading) in readings.iter() {
            match reading {
                Reading::Gauge(read) => {
                    let gauge = prometheus_client::metrics::gauge::ConstGauge::new(read());
                    let metric =
                        encoder.encode_descriptor(name, help, None, gauge.metric_type())?;
                    gauge.encode(metric)?;
                }
                Reading::Counter(read) => {
                    let counter = prometheus_client::metrics::counter::ConstCounter::new(read());
                    let metric =
                        encoder.encode_descriptor(name, help, None, counter.metric_type())?;
                    counter.encode(metric)?;
                }
            }
        }
        Ok(())
    }
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

fn duration_histogram() -> Histogram {
    Histogram::new(DURATION_BUCKETS)
}

fn gateway_histogram() -> Histogram {
    Histogram::new(GATEWAY_BUCKETS)
}

/// The gateway's metrics, in one Prometheus registry (see the [module
/// docs](self) for what each is). Clones share it.
///
/// # Examples
///
/// ```
/// let metrics = proto_ai_tools_mcp::admin::Metrics::new();
/// // A metric is written once it has a series: none before a request.
/// assert_eq!(metrics.encode(), "# EOF\n");
/// ```
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

struct Inner {
    registry: Registry,
    operations: Histograms<OperationLabels>,
    calls: Family<CallLabels, Counter>,
    backend: Histograms<BackendLabels>,
    gateway: Histograms<ToolLabels>,
    consent: Family<ConsentLabels, Counter>,
    refusals: Family<RefusalLabels, Counter>,
    live: Arc<Live>,
    /// The label of each tool the server lists, made once.
    tool_names: Mutex<HashMap<String, Arc<String>>>,
    /// The label of any other tool name.
    other: Arc<String>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// An empty registry with the gateway's metrics in it.
    pub fn new() -> Self {
        let operations: Histograms<OperationLabels> =
            Family::new_with_constructor(duration_histogram);
        let calls = Family::<CallLabels, Counter>::default();
        let backend: Histograms<BackendLabels> = Family::new_with_constructor(duration_histogram);
        let gateway: Histograms<ToolLabels> = Family::new_with_constructor(gateway_histogram);
        let consent = Family::<ConsentLabels, Counter>::default();
        let refusals = Family::<RefusalLabels, Counter>::default();
        let live = Arc::new(Live::default());
        let mut registry = Registry::default();
        registry.register_with_unit(
            "mcp_server_operation_duration",
            "MCP request duration as observed on the server, from its arrival to its answer",
            Unit::Seconds,
            operations.clone(),
        );
        registry.register(
            "ai_tools_tool_calls",
            "Tool calls by how they ended (the outcome of the tool call log line)",
            calls.clone(),
        );
        registry.register_with_unit(
            "ai_tools_backend_duration",
            "The gRPC part of each tool call, from sending the request to its answer",
            Unit::Seconds,
            backend.clone(),
        );
        registry.register_with_unit(
            "ai_tools_gateway_duration",
            "The gateway's own part of each tool call: the arguments, the aliases, the answer's JSON",
            Unit::Seconds,
            gateway.clone(),
        );
        registry.register(
            "ai_tools_consent_decisions",
            "Consent decisions on tool calls",
            consent.clone(),
        );
        registry.register(
            "ai_tools_http_refusals",
            "Requests the HTTP edge refused itself, by the limit or rule that did",
            refusals.clone(),
        );
        registry.register_collector(Box::new(live.clone()));
        Self {
            inner: Arc::new(Inner {
                registry,
                operations,
                calls,
                backend,
                gateway,
                consent,
                refusals,
                live,
                tool_names: Mutex::new(HashMap::new()),
                other: Arc::new(OTHER.to_owned()),
            }),
        }
    }

    /// Every metric in the OpenMetrics text format (which Prometheus
    /// scrapes), what `/metrics` answers.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing to a String does not fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.inner.registry);
        text
    }

    /// Makes `names` the tools whose names are labels; any other is
    /// `_OTHER`.
    pub(crate) fn know_tools<'a>(&self, names: impl IntoIterator<Item = &'a str>) {
        let mut known = self
            .inner
            .tool_names
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for name in names {
            known
                .entry(name.to_owned())
                .or_insert_with(|| Arc::new(name.to_owned()));
        }
    }

    /// The label of tool `name`: its own when listed, else `_OTHER`.
    fn tool_label(&self, name: &str) -> Arc<String> {
        let known = self
            .inner
            .tool_names
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        known.get(name).unwrap_or(&self.inner.other).clone()
    }

    /// Records one MCP request: its method, the tool of a `tools/call`,
    /// how it ended and how long it took.
    pub(crate) fn record_operation(&self, operation: &Operation<'_>, elapsed: Duration) {
        let labels = OperationLabels {
            mcp_method_name: operation.method,
            gen_ai_tool_name: operation.tool.map(|name| self.tool_label(name)),
            gen_ai_operation_name: operation.tool.map(|_| "execute_tool"),
            error_type: operation.error_type,
            rpc_response_status_code: operation.json_rpc_code,
            rpc_grpc_status_code: operation.grpc_status,
        };
        self.inner
            .operations
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
    }

    /// Counts a consent `decision` on a call of `tool`.
    pub(crate) fn record_consent(&self, tool: &str, decision: &'static str) {
        self.inner
            .consent
            .get_or_create(&ConsentLabels {
                gen_ai_tool_name: self.tool_label(tool),
                decision,
            })
            .inc();
    }

    /// Counts a request the HTTP edge refused, by the `limit` that did.
    pub(crate) fn record_refusal(&self, limit: &'static str) {
        self.inner
            .refusals
            .get_or_create(&RefusalLabels { limit })
            .inc();
    }

    /// Adds (or replaces) the gauge `name`, read with `read` at each
    /// scrape: a value already kept elsewhere (sessions held, a pool's
    /// size) costs nothing to follow between scrapes.
    ///
    /// # Examples
    ///
    /// ```
    /// let metrics = proto_ai_tools_mcp::admin::Metrics::new();
    /// metrics.watch_gauge("my_queue_length", "Requests waiting", || 3);
    /// assert!(metrics.encode().contains("my_queue_length 3\n"));
    /// ```
    pub fn watch_gauge(
        &self,
        name: &'static str,
        help: &'static str,
        read: impl Fn() -> i64 + Send + Sync + 'static,
    ) {
        self.watch(name, help, Reading::Gauge(Box::new(read)));
    }

    /// Adds (or replaces) the counter `name` (written `name_total`), its
    /// total read with `read` at each scrape, such as
    /// [`RedisStore::round_trips`](proto_ai_tools::store::RedisStore::round_trips).
    ///
    /// # Examples
    ///
    /// ```
    /// let metrics = proto_ai_tools_mcp::admin::Metrics::new();
    /// metrics.watch_counter("my_retries", "Retries so far", || 7);
    /// assert!(metrics.encode().contains("my_retries_total 7\n"));
    /// ```
    pub fn watch_counter(
        &self,
        name: &'static str,
        help: &'static str,
        read: impl Fn() -> u64 + Send + Sync + 'static,
    ) {
        self.watch(name, help, Reading::Counter(Box::new(read)));
    }

    fn watch(&self, name: &'static str, help: &'static str, reading: Reading) {
        let mut readings = self
            .inner
            .live
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        readings.retain(|(known, _, _)| *known != name);
        readings.push((name, help, reading));
    }

    /// Records one tool call as the toolkit tells it.
    pub(crate) fn record_call(&self, record: &CallRecord<'_>) {
        let tool = self.tool_label(record.tool);
        self.inner
            .calls
            .get_or_create(&CallLabels {
                gen_ai_tool_name: tool.clone(),
                outcome: record.outcome,
            })
            .inc();
        let mut own = record.duration;
        if let Some(backend) = record.backend {
            own = own.saturating_sub(backend);
            self.inner
                .backend
                .get_or_create(&BackendLabels {
                    gen_ai_tool_name: tool.clone(),
                    rpc_grpc_status_code: record.grpc_status.map(|code| code as i32),
                })
                .observe(backend.as_secs_f64());
        }
        self.inner
            .gateway
            .get_or_create(&ToolLabels {
                gen_ai_tool_name: tool,
            })
            .observe(own.as_secs_f64());
    }
}

/// One MCP request as the metrics label it.
pub(crate) struct Operation<'a> {
    /// The method.
    pub(crate) method: &'static str,
    /// The tool of a `tools/call`, as the client named it.
    pub(crate) tool: Option<&'a str>,
    /// `tool_error`, a JSON-RPC code, or none.
    pub(crate) error_type: Option<&'static str>,
    /// The JSON-RPC error code of a refused request.
    pub(crate) json_rpc_code: Option<i32>,
    /// The gRPC status of the call a `tools/call` made.
    pub(crate) grpc_status: Option<i32>,
}

/// A named readiness check: `Ok` with a detail (perhaps empty) when
/// ready, else why not.
pub type Check =
    Arc<dyn Fn() -> Pin<Box<dyn Future<Output = Result<String, String>> + Send>> + Send + Sync>;

/// What `/readyz` asks: named checks, and whether the server drains.
/// Clones share it.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use proto_ai_tools_mcp::admin::Readiness;
/// let readiness = Readiness::new().check("backend", || async { Ok(String::new()) });
/// assert!(readiness.report().await.ready);
/// readiness.drain();
/// let report = readiness.report().await;
/// assert!(!report.ready);
/// assert!(report.text().contains("[-]draining"));
/// # }
/// ```
#[derive(Clone, Default)]
pub struct Readiness {
    checks: Vec<(String, Check)>,
    /// What the server is, said by `/readyz?verbose` before the checks.
    settings: Vec<(String, String)>,
    draining: Arc<AtomicBool>,
    /// Whether an [`McpServer`](crate::McpServer) it was given to serves
    /// yet: [`UNTIED`], [`STARTING`] or [`SERVING`].
    server: Arc<AtomicU8>,
}

/// Not given to a server: no `serving` check.
const UNTIED: u8 = 0;
/// Given to a server that has not started serving.
const STARTING: u8 = 1;
/// Given to a server that serves: its tools listed, its search index built.
const SERVING: u8 = 2;

impl std::fmt::Debug for Readiness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.checks.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("Readiness")
            .field("checks", &names)
            .field("draining", &self.draining.load(Ordering::Relaxed))
            .finish()
    }
}

/// The answer of `/readyz`: each check's result.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadinessReport {
    /// Whether every check passed and the server is not draining.
    pub ready: bool,
    /// Each check by name: `Ok` with a detail (perhaps empty), or why it
    /// failed.
    pub checks: Vec<(String, Result<String, String>)>,
    /// What the server is ([`Readiness::setting`]), by name.
    pub settings: Vec<(String, String)>,
}

impl ReadinessReport {
    /// One line a setting, `[=]name: value`, then one a check, `[+]name
    /// ok`, `[+]name ok: detail` or `[-]name failed: why`, then
    /// `ready` or `not ready`: what `/readyz?verbose` answers.
    pub fn text(&self) -> String {
        let mut text = String::new();
        for (name, value) in &self.settings {
            text.push_str(&format!("[=]{name}: {value}\n"));
        }
        for (name, result) in &self.checks {
            match result {
                Ok(detail) if detail.is_empty() => text.push_str(&format!("[+]{name} ok\n")),
                Ok(detail) => text.push_str(&format!("[+]{name} ok: {detail}\n")),
                Err(why) => text.push_str(&format!("[-]{name} failed: {why}\n")),
            }
        }
        text.push_str(if self.ready { "ready\n" } else { "not ready\n" });
        text
    }
}

/// How long one readiness check may take before it counts as failed.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

impl Readiness {
    /// No checks: ready until [`drain`](Self::drain).
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the check `name`: ready when `check` answers `Ok` within
    /// [`CHECK_TIMEOUT`]; what `Ok` holds is said with `?verbose` (a
    /// master without a replica, say), what `Err` holds is why not.
    #[must_use]
    pub fn check<F, Fut>(mut self, name: impl Into<String>, check: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, String>> + Send + 'static,
    {
        self.checks
            .push((name.into(), Arc::new(move || Box::pin(check()))));
        self
    }

    /// Adds a setting `/readyz?verbose` names, such as where the metrics
    /// are served or how long a drain lasts; it decides nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let readiness = proto_ai_tools_mcp::admin::Readiness::new().setting("drain_timeout", "25 s");
    /// assert!(readiness.report().await.text().starts_with("[=]drain_timeout: 25 s\n"));
    /// # }
    /// ```
    #[must_use]
    pub fn setting(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings.push((name.into(), value.into()));
        self
    }

    /// Ties readiness to a server: not ready until it serves
    /// ([`McpServer::with_readiness`](crate::McpServer::with_readiness)).
    pub(crate) fn starting(&self) {
        self.server.store(STARTING, Ordering::Relaxed);
    }

    /// The server serves: its tools are listed, its search index built,
    /// its listener open.
    pub(crate) fn serving(&self) {
        self.server.store(SERVING, Ordering::Relaxed);
    }

    /// Turns readiness off for good: the server drains.
    pub fn drain(&self) {
        self.draining.store(true, Ordering::Relaxed);
    }

    /// Whether [`drain`](Self::drain) was called.
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    /// Runs every check, one after another, each within
    /// [`CHECK_TIMEOUT`].
    pub async fn report(&self) -> ReadinessReport {
        let mut checks = Vec::with_capacity(self.checks.len() + 2);
        match self.server.load(Ordering::Relaxed) {
            UNTIED => {}
            SERVING => checks.push(("serving".to_owned(), Ok(String::new()))),
            _ => checks.push((
                "serving".to_owned(),
                Err("the server is starting (tools, search index, listener)".to_owned()),
            )),
        }
        for (name, check) in &self.checks {
            let result = match tokio::time::timeout(CHECK_TIMEOUT, check()).await {
                Ok(result) => result,
                Err(_) => Err(format!("no answer within {} s", CHECK_TIMEOUT.as_secs())),
            };
            checks.push((name.clone(), result));
        }
        if self.is_draining() {
            checks.push((
                "draining".to_owned(),
                Err("the server is shutting down".to_owned()),
            ));
        }
        let ready = checks.iter().all(|(_, result)| result.is_ok());
        ReadinessReport {
            ready,
            checks,
            settings: self.settings.clone(),
        }
    }
}

/// Serves `/metrics` (when `metrics` is given), `/healthz` and `/readyz`
/// on `listener` until `shutdown` completes.
///
/// `/healthz` answers `200 ok` while the process serves; `/readyz` `200`
/// or `503` as [`Readiness::report`] says, its lines with `?verbose`;
/// `/metrics` the registry in the OpenMetrics text format. Anything else is
/// `404`.
///
/// # Errors
///
/// The listener's own I/O error.
///
/// # Examples
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// use proto_ai_tools_mcp::admin::{Metrics, Readiness, serve_admin};
/// let metrics = Metrics::new();
/// // the same `metrics` goes to `McpServer::with_metrics`
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:9090").await?;
/// serve_admin(listener, Some(metrics), Readiness::new(), std::future::pending()).await
/// # }
/// ```
pub async fn serve_admin(
    listener: tokio::net::TcpListener,
    metrics: Option<Metrics>,
    readiness: Readiness,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use axum::extract::RawQuery;
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse;
    use axum::routing::get;

    let mut router = axum::Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route(
            "/readyz",
            get(move |RawQuery(query): RawQuery| {
                let readiness = readiness.clone();
                async move {
                    let report = readiness.report().await;
                    let status = if report.ready {
                        StatusCode::OK
                    } else {
                        StatusCode::SERVICE_UNAVAILABLE
                    };
                    let verbose = query.as_deref().is_some_and(|q| {
                        q.split('&')
                            .any(|p| p == "verbose" || p.starts_with("verbose="))
                    });
                    let body = match (verbose, report.ready) {
                        (true, _) => report.text(),
                        (false, true) => "ready\n".to_owned(),
                        (false, false) => "not ready\n".to_owned(),
                    };
                    (status, body)
                }
            }),
        );
    if let Some(metrics) = metrics {
        router = router.route(
            "/metrics",
            get(move || {
                let text = metrics.encode();
                async move {
                    (
                        [(
                            header::CONTENT_TYPE,
                            "application/openmetrics-text; version=1.0.0; charset=utf-8",
                        )],
                        text,
                    )
                        .into_response()
                }
            }),
        );
    }
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name a client sends is a label only when the server knows it: a
    /// client cannot grow the series.
    #[test]
    fn unknown_tools_are_other() {
        let metrics = Metrics::new();
        metrics.know_tools(["links_create"]);
        assert_eq!(*metrics.tool_label("links_create"), "links_create");
        assert_eq!(*metrics.tool_label("links_create2"), OTHER);
        metrics.record_call(&CallRecord::new("made_up", "ok", Duration::from_millis(1)));
        let text = metrics.encode();
        assert!(
            text.contains(r#"ai_tools_tool_calls_total{gen_ai_tool_name="_OTHER",outcome="ok"} 1"#),
            "{text}"
        );
        assert!(!text.contains("made_up"), "{text}");
    }
}
