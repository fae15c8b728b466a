//! The alias store of `mcp`: in memory, or Redis or a Redis Cluster
//! connected here, and how many replicas a registration waits for
//! (`--redis-wait-replicas`, `--redis-wait-timeout`); the flags that say
//! so, and whose aliases a stateless request uses ([`ScopeFlags`]).

use std::sync::Arc;
use std::time::Duration;

use proto_ai_tools::Sessions;
use proto_ai_tools::store::{RedisStore, RedisStoreOptions, Replication};
use proto_ai_tools_mcp::{self as mcp, McpServer};

use crate::checked::{Checked, seconds};
use crate::failure::Failure;

/// Where `mcp` keeps aliases and whose they are: the scope of a stateless
/// request, and a store shared by replicas.
#[derive(clap::Args, Default, Debug, PartialEq)]
#[command(
    next_help_heading = "Aliases (the guide's \"MCP sessions and aliases\", guide/src/mcp.md, has the details)"
)]
pub(crate) struct ScopeFlags {
    /// (--http) A stateless request (MCP 2026-07-28, no session) keeps its
    /// aliases under this header's value: only behind a proxy that sets it
    /// on every request (after the OAuth principal, if any)
    #[arg(long, value_name = "NAME")]
    pub(crate) alias_scope_header: Option<String>,
    /// (--http, loopback only) Stateless requests with no other identity
    /// share one alias scope
    #[arg(long)]
    pub(crate) single_user: bool,
    /// Keep the aliases in Redis (redis://host:port), so that several
    /// gateways share them
    #[arg(long, value_name = "URL", hide_env_values = true)]
    pub(crate) redis: Option<String>,
    /// The same on a Redis Cluster (a seed node; repeatable;
    /// AI_TOOLS_REDIS_CLUSTER holds one)
    #[arg(long = "redis-cluster", value_name = "URL", hide_env_values = true)]
    pub(crate) redis_cluster: Vec<String>,
    /// (--redis, --redis-cluster) How many replicas must hold a new alias
    /// before the model sees it, so that a master's crash loses none: a
    /// number, or auto (default): every replica in sync with the alias's
    /// master at that moment (none for a master without one, with a
    /// warning)
    #[arg(long, value_name = "N|auto", value_parser = Checked::new(wait_replicas, &["auto"]))]
    pub(crate) redis_wait_replicas: Option<WaitReplicas>,
    /// (--redis, --redis-cluster) How long a registration waits for those
    /// replicas before it fails (default 1; a store request may take 1 s
    /// more)
    #[arg(long, value_name = "SECS", value_parser = Checked::new(seconds, &[]))]
    pub(crate) redis_wait_timeout: Option<Duration>,
}

/// `--redis-wait-replicas`: a number, or the replicas in sync with each
/// master at each registration
/// ([`RedisStoreOptions::wait_for_in_sync_replicas`](proto_ai_tools::store::RedisStoreOptions::wait_for_in_sync_replicas)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitReplicas {
    Auto,
    Exactly(usize),
}

/// `--redis-wait-replicas`: `auto`, or a whole number (0 waits for none).
pub(crate) fn wait_replicas(flag: &str, text: &str) -> Result<WaitReplicas, String> {
    if text == "auto" {
        return Ok(WaitReplicas::Auto);
    }
    text.parse::<usize>()
        .map(WaitReplicas::Exactly)
        .map_err(|_| format!("`{flag} {text}`: give a whole number of replicas, or auto"))
}

impl ScopeFlags {
    /// The alias namespaces of the server: in memory, or in Redis; either
    /// way a scope is kept a day after its last use and each alias in it 30
    /// minutes, the least recently used expiring at the limit. With Redis,
    /// the store too: MCP sessions over HTTP are kept in it beside their
    /// aliases, so that they roam between gateways.
    pub(crate) async fn sessions(
        &self,
    ) -> Result<(Sessions<()>, Option<RedisStore>, StoreSummary), Failure> {
        let sessions = mcp::default_sessions();
        let mut options = RedisStoreOptions::default();
        options.ttl = mcp::SCOPE_IDLE_TTL;
        options.alias_idle = Some(mcp::ALIAS_IDLE_TTL);
        let (store, summary) = connect(self, options).await?;
        let Some(store) = store else {
            return Ok((sessions, None, summary));
        };
        Ok((
            sessions.with_store(Arc::new(store.clone())),
            Some(store),
            summary,
        ))
    }

    pub(crate) fn apply(&self, mut server: McpServer) -> Result<McpServer, Failure> {
        if let Some(name) = &self.alias_scope_header {
            server = server
                .with_alias_scope_header(name)
                .map_err(|e| Failure::Usage(format!("`--alias-scope-header {name}`: {e}")))?;
        }
        if self.single_user {
            tracing::info!(
                "--single-user: stateless requests (MCP 2026-07-28) share one local alias scope"
            );
            server = server.with_single_user(true);
        }
        Ok(server)
    }
}

/// What the start-up log says of the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoreSummary {
    /// `memory`, `redis` or `redis-cluster`.
    pub(crate) kind: &'static str,
    /// The server's URL, or the cluster's seeds, each without a password.
    pub(crate) urls: Vec<String>,
    /// The replicas each registration waits for (`auto`: the fewest a
    /// master had in sync at start; each master's own, as it changes).
    pub(crate) wait_replicas: usize,
    /// Whether `auto` chose [`wait_replicas`](Self::wait_replicas).
    pub(crate) wait_auto: bool,
    /// How long the server may hold that wait.
    pub(crate) wait_timeout: Duration,
    /// The fewest replicas a master has, when the servers said.
    pub(crate) fewest_replicas: Option<usize>,
}

impl StoreSummary {
    fn memory() -> Self {
        Self {
            kind: "memory",
            urls: Vec::new(),
            wait_replicas: 0,
            wait_auto: false,
            wait_timeout: Duration::ZERO,
            fewest_replicas: None,
        }
    }
}

/// Connects to the store the flags name, `None` for memory; with Redis,
/// decides how many replicas to wait for and warns when a master's crash
/// would lose aliases.
pub(crate) async fn connect(
    flags: &ScopeFlags,
    mut options: RedisStoreOptions,
) -> Result<(Option<RedisStore>, StoreSummary), Failure> {
    let (kind, urls): (&'static str, &[String]) = if let Some(url) = &flags.redis {
        ("redis", std::slice::from_ref(url))
    } else if !flags.redis_cluster.is_empty() {
        ("redis-cluster", &flags.redis_cluster)
    } else {
        return Ok((None, StoreSummary::memory()));
    };
    if let Some(wait) = flags.redis_wait_timeout {
        options.wait_timeout = Some(wait);
        // The WAIT rides in a store request, which must outlast it: give
        // the request a second past the wait.
        options.response_timeout = options
            .response_timeout
            .max(wait.saturating_add(Duration::from_secs(1)));
    }
    let wait_timeout = options.wait_timeout.unwrap_or(options.response_timeout / 2);
    let chosen = flags.redis_wait_replicas.unwrap_or(WaitReplicas::Auto);
    if let WaitReplicas::Exactly(n) = chosen {
        options.wait_for_replicas = n;
    }
    let store = if kind == "redis" {
        RedisStore::connect_with(&urls[0], options).await
    } else {
        RedisStore::connect_cluster(urls.iter().map(String::as_str), options).await
    }
    .map_err(|e| Failure::Run(format!("the alias store: {e}")))?;
    let replication = store.replication().await;
    let named: Vec<String> = urls.iter().map(|u| without_password(u)).collect();
    let (wait_replicas, fewest) = match (chosen, &replication) {
        (WaitReplicas::Auto, Ok(replication)) => {
            let fewest = replication.fewest_replicas();
            if fewest == 0 {
                warn_unprotected(replication, &named);
            }
            (fewest, Some(fewest))
        }
        (WaitReplicas::Auto, Err(e)) => {
            tracing::warn!(
                cause = e.message(),
                "--redis-wait-replicas auto: the alias store did not say how many replicas its masters have at start; each registration waits for the replicas its master lists as in sync when it answers (the first on each master waits for 1)"
            );
            (0, None)
        }
        (WaitReplicas::Exactly(n), Ok(replication)) => {
            let fewest = replication.fewest_replicas();
            if fewest < n {
                let short: Vec<String> = replication
                    .masters
                    .iter()
                    .filter(|m| m.replicas < n)
                    .map(|m| master_name(m.address.as_deref(), &named))
                    .collect();
                tracing::warn!(
                    masters = short.join(", "),
                    fewest_replicas = fewest,
                    wait_replicas = n,
                    "--redis-wait-replicas {n}: these masters have fewer replicas, so every new alias kept on them fails to register (the model is told the store is unavailable) until they have {n}"
                );
            } else if n == 0 && fewest > 0 {
                tracing::info!(
                    "--redis-wait-replicas 0: registrations do not wait for the replicas, so a master's crash loses the aliases it gave out that no replica holds yet"
                );
            }
            (n, Some(fewest))
        }
        (WaitReplicas::Exactly(n), Err(_)) => (n, None),
    };
    let store = match chosen {
        WaitReplicas::Auto => store.with_wait_for_in_sync_replicas(),
        WaitReplicas::Exactly(_) => store.with_wait_for_replicas(wait_replicas),
    };
    Ok((
        Some(store),
        StoreSummary {
            kind,
            urls: named,
            wait_replicas,
            wait_auto: chosen == WaitReplicas::Auto,
            wait_timeout,
            fewest_replicas: fewest,
        },
    ))
}

/// The start-up WARN of `auto` when a master has no replica: which, and
/// what a crash of one costs.
fn warn_unprotected(replication: &Replication, named: &[String]) {
    let masters: Vec<String> = replication
        .without_replicas()
        .map(|m| master_name(m.address.as_deref(), named))
        .collect();
    tracing::warn!(
        masters = masters.join(", "),
        wait_replicas = 0,
        "--redis-wait-replicas auto: these alias store masters have no replica, so registrations on them wait for none. A crash of one loses every alias it gave out since its last save: the aliases a gateway saw are told to the model as lost (it must get those ids again), and handshake-era sessions kept there end. Give each master a replica (auto then waits for the replicas in sync with it), or accept this loss with --redis-wait-replicas 0"
    );
}

/// A master as the log names it: its cluster address, or the one server's
/// URL.
fn master_name(address: Option<&str>, named: &[String]) -> String {
    match address {
        Some(address) => address.to_owned(),
        None => named.first().cloned().unwrap_or_default(),
    }
}

/// `url` without the password of its user information
/// (`redis://user:secret@host:6379/0` → `redis://user@host:6379/0`); a
/// URL that does not parse is not said at all.
pub(crate) fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "(not a URL)".to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    // A query may carry settings the log need not repeat: left out.
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let Some((user_info, host)) = authority.rsplit_once('@') else {
        return url.to_owned();
    };
    let user = user_info.split(':').next().unwrap_or_default();
    if user.is_empty() {
        format!("{scheme}://{host}{path}")
    } else {
        format!("{scheme}://{user}@{host}{path}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_password_only() {
        for (url, said) in [
            ("redis://127.0.0.1:6379", "redis://127.0.0.1:6379"),
            ("redis://:hunter2@h:1/0", "redis://h:1/0"),
            ("redis://app:hunter2@h:1", "redis://app@h:1"),
            ("rediss://app@h:1/2?x=@", "rediss://app@h:1/2"),
            ("redis://a:p@ss@h:1", "redis://a@h:1"),
            ("h:1", "(not a URL)"),
        ] {
            assert_eq!(without_password(url), said, "{url}");
        }
    }
}
