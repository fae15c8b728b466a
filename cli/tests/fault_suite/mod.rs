//! The fault suite's parts: a Redis Cluster of its own, a backend that
//! logs every call, `ai-tools mcp` gateway processes, MCP callers, and the
//! ledger of what the model saw, checked against the backend's log.

pub mod backend;
pub mod cluster;
pub mod gateway;
pub mod ledger;
pub mod mcp;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use backend::{Entry, Served};
use cluster::Cluster;
use gateway::Gateway;
use ledger::{Caller, Ledger, Outcome, Target};

pub fn workspace() -> PathBuf {
    crate::support::workspace()
}

/// A name no other run or test shares: a shared Redis or temp dir holds
/// nothing of another's under it.
pub fn unique(stem: &str) -> String {
    static COUNT: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!(
        "{stem}-{}-{nanos}-{}",
        std::process::id(),
        COUNT.fetch_add(1, Ordering::SeqCst)
    )
}

/// The faults take turns: each times a failover against the node timeout,
/// which two clusters and four gateways at once on two cores would blur.
pub fn turn() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A run: the cluster, the backend, gateways A and B in front of both,
/// and the ledger of every call.
pub struct Rig {
    pub test: &'static str,
    pub ledger: Ledger,
    pub gateways: Vec<Gateway>,
    pub served: Served,
    pub cluster: Cluster,
    dir: PathBuf,
}

impl Rig {
    /// The cluster, the backend and two gateways with the command's own
    /// flags plus `extra`; `None` when the test is skipped.
    pub fn start(test: &'static str, extra: &[&str]) -> Result<Option<Self>, String> {
        let Some(cluster) = Cluster::start(test)? else {
            return Ok(None);
        };
        let served = backend::serve()?;
        let dir = cluster.dir().join("gateways");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut flags = vec![
            "--alias-scope-header".to_owned(),
            mcp::SCOPE_HEADER.to_owned(),
        ];
        for url in &cluster.urls {
            flags.extend(["--redis-cluster".to_owned(), url.clone()]);
        }
        flags.extend(extra.iter().map(|f| (*f).to_owned()));
        let gateways = vec![
            Gateway::start("A", &served.url, &flags, dir.clone())?,
            Gateway::start("B", &served.url, &flags, dir.clone())?,
        ];
        Ok(Some(Self {
            test,
            ledger: Ledger::default(),
            gateways,
            served,
            cluster,
            dir,
        }))
    }

    pub fn a(&self) -> Target {
        Target::from(&self.gateways[0])
    }

    pub fn b(&self) -> Target {
        Target::from(&self.gateways[1])
    }

    pub fn both(&self) -> [Target; 2] {
        [self.a(), self.b()]
    }

    /// `n` stateless callers, each its own scope.
    pub fn header_callers(&self, n: usize) -> Vec<Caller> {
        (0..n)
            .map(|i| Caller::header(unique(&format!("{}-{i}", self.test)), &self.ledger))
            .collect()
    }

    /// `n` handshake-era sessions, started on A and B in turn; each is its
    /// own scope.
    pub fn session_callers(&self, n: usize) -> Result<Vec<Caller>, String> {
        let both = self.both();
        (0..n)
            .map(|i| {
                let label = unique(&format!("{}-session-{i}", self.test));
                Caller::session(label, &self.ledger, both[i % 2])
                    .map_err(|e| self.fail(&format!("a session: {e}")))
            })
            .collect()
    }

    /// No session of `sessions` ended: none was answered `404` (a session
    /// the gateway does not hold), whatever the fault.
    pub fn assert_no_session_ended(&self, sessions: &[String]) {
        let ended: Vec<String> = self
            .ledger
            .records()
            .iter()
            .filter(|r| {
                sessions.contains(&r.scope)
                    && matches!(&r.outcome, Outcome::Http(status, _) if status == "404")
            })
            .map(|r| {
                format!(
                    "{} in call {} via gateway {} at {}",
                    r.scope,
                    r.call,
                    r.gateway,
                    self.ledger.when(r.at)
                )
            })
            .collect();
        assert!(
            ended.is_empty(),
            "{}",
            self.fail(&format!(
                "a session ended with the fault (its id answered 404): {}",
                ended.join(", ")
            ))
        );
    }

    /// Before the fault: each caller creates a link through A and one
    /// through B, and updates its first through the other; all must work.
    pub fn warm_up(&self, callers: &mut [Caller]) -> Result<(), String> {
        let [a, b] = self.both();
        for caller in callers.iter_mut() {
            for (target, then) in [(a, b), (b, a)] {
                if !matches!(caller.create(&[target]), Outcome::Ok { .. }) {
                    return Err(self.fail(&format!(
                        "{}: a create before the fault failed",
                        caller.label
                    )));
                }
                let first = caller.shown[0].clone();
                if !matches!(caller.update(&[then], &first), Outcome::Ok { .. }) {
                    return Err(self.fail(&format!(
                        "{}: an update before the fault failed",
                        caller.label
                    )));
                }
            }
        }
        Ok(())
    }

    /// The UUID the backend returned for the first link `caller` was shown.
    pub fn first_uuid(&self, caller: &Caller) -> Option<String> {
        self.uuid_shown(&caller.label, caller.ever.first()?)
    }

    /// The UUID of the link first shown as `alias` in `scope`, by the
    /// backend's log.
    pub fn uuid_shown(&self, scope: &str, alias: &str) -> Option<String> {
        let log = self.served.backend.log();
        self.ledger
            .records()
            .iter()
            .filter(|r| r.scope == scope)
            .find_map(|r| match &r.outcome {
                Outcome::Ok { link: Some(l), .. } if l == alias => log
                    .iter()
                    .find(|e: &&Entry| e.call == r.call)
                    .and_then(|e| e.returned.as_ref())
                    .map(|(id, _)| id.clone()),
                _ => None,
            })
    }

    /// The callers whose scope lives on the master `master_id`, and the others.
    pub fn split_by_master(
        &self,
        callers: Vec<Caller>,
        master_id: &str,
    ) -> Result<(Vec<Caller>, Vec<Caller>), String> {
        let mut on = Vec::new();
        let mut off = Vec::new();
        for caller in callers {
            let uuid = self
                .first_uuid(&caller)
                .ok_or_else(|| format!("{}: no link shown yet", caller.label))?;
            let master = self
                .cluster
                .master_holding(&uuid)
                .ok_or_else(|| format!("{}: no master holds {uuid}", caller.label))?;
            if master.id == master_id {
                on.push(caller);
            } else {
                off.push(caller);
            }
        }
        Ok((on, off))
    }

    /// After the fault: every caller sends every alias it was ever shown
    /// through each of `targets`, so that each is resolved (or told lost)
    /// where the model may send it.
    pub fn send_back_every_alias(&self, callers: &mut [Caller], targets: &[Target]) {
        for caller in callers.iter_mut() {
            for alias in caller.ever.clone() {
                for target in targets {
                    caller.update(&[*target], &alias);
                }
            }
        }
    }

    /// `what`, with the run's timeline and where its logs are kept.
    pub fn fail(&self, what: &str) -> String {
        format!(
            "{}: {what}\ntimeline: {}\nlogs of the gateways and the cluster: {}",
            self.test,
            self.ledger.timeline(),
            self.dir.display()
        )
    }

    /// Checks the run against the backend's log; the violations, each a
    /// sentence, with the timeline.
    pub fn violations(&self) -> Vec<String> {
        self.ledger.violations(&self.served.backend.log())
    }

    /// Prints the figures of `scopes` (all when empty) and asserts the
    /// invariant over every scope.
    pub fn report_and_check(&self, title: &str, parts: &[(&str, Vec<String>)], fault: Instant) {
        let records = self.ledger.records();
        println!("FAULT {title} ({})", self.test);
        println!("  timeline: {}", self.ledger.timeline());
        for (name, scopes) in parts {
            let figures = ledger::Figures::of(&records, scopes, fault);
            println!("  {name}: {}", figures.summary());
        }
        // What the failed calls were told, once per distinct text.
        let mut told: std::collections::BTreeMap<String, (usize, Instant, Instant)> =
            std::collections::BTreeMap::new();
        for r in records.iter().filter(|r| !r.ok()) {
            let text = match &r.outcome {
                Outcome::Error(text) => text.clone(),
                Outcome::Http(status, body) => format!("HTTP {status}: {body}"),
                Outcome::Transport(e) => e.clone(),
                Outcome::Ok { .. } => continue,
            };
            // Aliases and lists differ from call to call; the sentence does not.
            let text: String = text.chars().take(110).collect();
            let seen = told
                .entry(format!("{}: {text}", r.tool))
                .or_insert((0, r.at, r.at));
            seen.0 += 1;
            seen.1 = seen.1.min(r.at);
            seen.2 = seen.2.max(r.at);
        }
        for (text, (n, first, last)) in &told {
            println!(
                "  told {n}× ({} to {}): {text}",
                self.ledger.when(*first),
                self.ledger.when(*last)
            );
        }
        let warnings: usize = self.gateways.iter().map(|g| g.warnings().len()).sum();
        println!("  gateway WARN lines: {warnings}");
        let violations = self.violations();
        assert!(
            violations.is_empty(),
            "{}",
            self.fail(&format!(
                "{} violation(s) of \"one alias, one UUID, ever\" and of what the model must be told:\n- {}",
                violations.len(),
                violations.join("\n- ")
            ))
        );
    }
}

impl Rig {
    /// With the command's own flags a registration waits for a replica, so
    /// no fault of one node may take an alias the model was shown.
    pub fn assert_nothing_lost(&self) {
        let lost = ledger::Figures::of(&self.ledger.records(), &[], self.ledger.epoch).lost;
        assert!(
            lost.is_empty(),
            "{}",
            self.fail(&format!(
                "with the command's own flags (a replica waited for), aliases the model was shown were lost: {lost:?}"
            ))
        );
    }
}

/// Polls `ready` every 50 ms for up to `limit`; how long it took, or an
/// error naming `what`.
pub fn wait_for(
    limit: Duration,
    what: &str,
    mut ready: impl FnMut() -> bool,
) -> Result<Duration, String> {
    let began = Instant::now();
    while began.elapsed() < limit {
        if ready() {
            return Ok(began.elapsed());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(format!("{what}: not within {} s", limit.as_secs()))
}
