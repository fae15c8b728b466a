//! `--admin ADDR`: the gateway's metrics, liveness and readiness on a
//! listener of their own ([`proto_ai_tools_mcp::admin`]).
//!
//! Readiness asks, besides the server's own `serving` (its tools listed,
//! its search index built, its listener open) and `draining`:
//! - `backend`: a new connection to the `--grpc` URL, TLS and all, within
//!   the check's time;
//! - `alias_store` (with `--redis`/`--redis-cluster`): the store answers
//!   and says its replication; with `--redis-wait-replicas N`, a master
//!   with fewer than `N` replicas fails it (its registrations would), and
//!   with `auto` a master without one is a detail, not a failure.

use std::net::SocketAddr;

use proto_ai_tools::store::RedisStore;
use proto_ai_tools::transport::TonicTransportBuilder;
use proto_ai_tools_mcp::McpServer;
use proto_ai_tools_mcp::admin::{Metrics, Readiness, serve_admin};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::failure::Failure;
use crate::flags::Serve;

/// The admin listener, bound, and what it serves.
pub(crate) struct Admin {
    listener: TcpListener,
    address: SocketAddr,
    metrics: Metrics,
    readiness: Readiness,
}

/// The admin listener serving, until [`Running::stop`].
pub(crate) struct Running {
    stop: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
}

impl Admin {
    /// Binds `--admin`'s address, when given, with its readiness checks:
    /// the backend reached through `backend`, the alias store `store`
    /// waiting for `strict_replicas` (`None`: as many as each master has).
    pub(crate) async fn new(
        serve: &Serve,
        backend: TonicTransportBuilder,
        store: Option<RedisStore>,
        strict_replicas: Option<usize>,
    ) -> Result<Option<Self>, Failure> {
        let Some(addr) = &serve.admin else {
            return Ok(None);
        };
        // The same address twice cannot be bound, but for port 0: each
        // listener then gets a free port of its own.
        let any_port = addr
            .parse::<std::net::SocketAddr>()
            .is_ok_and(|a| a.port() == 0);
        if !any_port && serve.http.as_deref() == Some(addr.as_str()) {
            return Err(Failure::Usage(format!(
                "--admin {addr} is the MCP address (--http): the admin endpoints need a listener of their own"
            )));
        }
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|e| Failure::Run(format!("cannot listen on --admin {addr}: {e}")))?;
        let address = listener
            .local_addr()
            .map_err(|e| Failure::Run(e.to_string()))?;
        // What the ready line says too (startup.rs).
        let mut readiness = Readiness::new()
            .setting("admin", format!("http://{address}"))
            .setting(
                "otlp_endpoint",
                serve.otlp_endpoint.as_deref().unwrap_or("none"),
            );
        if serve.http.is_some() {
            readiness = readiness.setting(
                "drain_timeout_s",
                crate::startup::drain_timeout(&serve.http_limits)
                    .as_secs_f64()
                    .to_string(),
            );
        }
        let mut readiness = readiness.check("backend", move || {
            let backend = backend.clone();
            async move {
                backend
                    .connect()
                    .await
                    .map(|_| String::new())
                    .map_err(|e| e.to_string())
            }
        });
        let metrics = Metrics::new();
        if let Some(store) = &store {
            let counted = store.clone();
            metrics.watch_counter(
                "ai_tools_store_round_trips",
                "Requests sent to the alias store (Redis), each one round trip",
                move || counted.round_trips(),
            );
            let counted = store.clone();
            metrics.watch_counter(
                "ai_tools_store_registrations_without_replica",
                "Aliases given by a master with no replica in sync (--redis-wait-replicas auto)",
                move || counted.registrations_without_replica(),
            );
        }
        if let Some(store) = store {
            readiness = readiness.check("alias_store", move || {
                let store = store.clone();
                async move { alias_store_ready(&store, strict_replicas).await }
            });
        }
        Ok(Some(Self {
            listener,
            address,
            metrics,
            readiness,
        }))
    }

    /// Where the admin endpoints are served.
    pub(crate) fn address(&self) -> SocketAddr {
        self.address
    }

    /// `server`, measured and tied to the readiness.
    pub(crate) fn apply(&self, server: McpServer) -> McpServer {
        server
            .with_metrics(self.metrics.clone())
            .with_readiness(self.readiness.clone())
    }

    /// Serves the admin endpoints in the background.
    pub(crate) fn start(self) -> Running {
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(serve_admin(
            self.listener,
            Some(self.metrics),
            self.readiness,
            async {
                let _ = stopped.await;
            },
        ));
        Running { stop, task }
    }
}

impl Running {
    /// Stops the admin endpoints: after the MCP server, so that
    /// `/readyz` says it drains until the end.
    pub(crate) async fn stop(self) {
        let _ = self.stop.send(());
        match self.task.await {
            Ok(Err(e)) => tracing::warn!(cause = %e, "the admin listener failed"),
            Err(e) => tracing::warn!(cause = %e, "the admin listener's task failed"),
            Ok(Ok(())) => {}
        }
    }
}

/// The alias store's readiness: it answers, and no master has fewer
/// replicas than a strict wait needs; with `auto`, the masters without
/// a replica are named as a detail.
async fn alias_store_ready(store: &RedisStore, strict: Option<usize>) -> Result<String, String> {
    let replication = store
        .replication()
        .await
        .map_err(|e| format!("the alias store does not answer: {}", e.message()))?;
    let short: Vec<String> = replication
        .masters
        .iter()
        .filter(|master| strict.map_or(master.replicas == 0, |n| master.replicas < n))
        .map(|master| {
            format!(
                "{} has {} replica(s)",
                master.address.as_deref().unwrap_or("the server"),
                master.replicas
            )
        })
        .collect();
    match (strict, short.is_empty()) {
        (_, true) => Ok(String::new()),
        (Some(n), false) => Err(format!(
            "--redis-wait-replicas {n}: {}, so its registrations fail",
            short.join(", ")
        )),
        (None, false) => Ok(format!(
            "{}: the aliases given there are held by one node alone",
            short.join(", ")
        )),
    }
}
