//! What the model saw, call by call, and the check of it against the
//! backend's log: "one alias, one UUID, ever", per scope.
//!
//! Every pair (alias → UUID) the model was shown comes from a successful
//! result, mapped to a UUID through what the backend logged it returned
//! for that call; every pair the gateway resolved comes from an alias the
//! model sent, mapped through the UUID the backend logged it received. The
//! union must be a function per scope. Besides that, an alias the model was
//! shown and sends back must be resolved or told lost: never told expired
//! (the suite runs minutes, the idle expiry is 30) nor unknown. And no
//! error text may carry an address or a store's internals.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::backend::Entry;
use super::mcp::{self, Reply, Scope};

/// A gateway as callers address it.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    pub name: &'static str,
    pub addr: SocketAddr,
}

impl From<&super::gateway::Gateway> for Target {
    fn from(g: &super::gateway::Gateway) -> Self {
        Self {
            name: g.name,
            addr: g.addr,
        }
    }
}

/// How one call ended, as the model saw it.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// A result, with the aliases it showed for the link and its theme.
    Ok {
        link: Option<String>,
        theme: Option<String>,
    },
    /// An error result: its text.
    Error(String),
    /// An HTTP refusal (status, body).
    Http(String, String),
    /// No answer.
    Transport(String),
}

#[derive(Debug, Clone)]
pub struct Record {
    pub call: u64,
    pub scope: String,
    pub gateway: &'static str,
    pub tool: &'static str,
    /// The alias the model sent, for an update.
    pub sent: Option<String>,
    pub at: Instant,
    pub took: Duration,
    pub outcome: Outcome,
}

impl Record {
    pub fn ok(&self) -> bool {
        matches!(self.outcome, Outcome::Ok { .. })
    }
}

/// Every call of a run, shared by the callers' threads.
#[derive(Clone)]
pub struct Ledger {
    records: Arc<Mutex<Vec<Record>>>,
    marks: Arc<Mutex<Vec<(String, Instant)>>>,
    next: Arc<AtomicU64>,
    pub epoch: Instant,
}

impl Default for Ledger {
    fn default() -> Self {
        Self {
            records: Arc::default(),
            marks: Arc::default(),
            next: Arc::new(AtomicU64::new(1)),
            epoch: Instant::now(),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The kind of an error the model was told, for the counts.
pub fn kind(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Ok { .. } => "ok",
        // A refused connection sent nothing; the caller's next gateway got it.
        Outcome::Transport(e) if e.starts_with("connect") => "connection refused (nothing sent)",
        Outcome::Transport(_) => "no answer from the gateway",
        Outcome::Http(status, _) if status == "404" => "session not found (404)",
        // A stopping gateway's refusal; the caller's next gateway got it.
        Outcome::Http(status, body) if status == "503" && body.contains("is stopping") => {
            "gateway stopping (503, nothing run)"
        }
        Outcome::Http(..) => "refused over HTTP",
        Outcome::Error(text) => {
            if text.contains("lost") && !text.contains("lost its connection") {
                "alias told lost"
            } else if text.contains("has expired") {
                "alias told expired"
            } else if text.contains("this conversation has seen") || text.contains("has never seen")
            {
                "alias told unknown"
            } else if text.contains("withheld") {
                "answer withheld (store after the call)"
            } else if text.contains("store") {
                "refused before the call (store)"
            } else {
                "other error result"
            }
        }
    }
}

/// Signs of an address or a store's internals in a text for the model.
fn internals(text: &str) -> Option<&'static str> {
    [
        "127.0.0.1",
        "os error",
        "Moved",
        "MOVED",
        "TRYAGAIN",
        "CLUSTERDOWN",
        "Connection refused",
        "redis://",
    ]
    .into_iter()
    .find(|sign| text.contains(sign))
}

impl Ledger {
    pub fn next_call(&self) -> u64 {
        self.next.fetch_add(1, Ordering::SeqCst)
    }

    /// Notes an event of the fault (`SIGKILL master 21775`) for the report.
    pub fn mark(&self, what: impl Into<String>) -> Instant {
        let now = Instant::now();
        lock(&self.marks).push((what.into(), now));
        now
    }

    pub fn records(&self) -> Vec<Record> {
        lock(&self.records).clone()
    }

    fn push(&self, record: Record) {
        lock(&self.records).push(record);
    }

    /// `+3.21 s`, from the start of the run.
    pub fn when(&self, at: Instant) -> String {
        format!("+{:.2} s", at.duration_since(self.epoch).as_secs_f64())
    }

    /// The events marked, with their times.
    pub fn timeline(&self) -> String {
        lock(&self.marks)
            .iter()
            .map(|(what, at)| format!("{} {what}", self.when(*at)))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// Everything wrong with the run, checked against the backend's `log`:
    /// each a sentence naming the scope, the alias and the calls.
    pub fn violations(&self, log: &[Entry]) -> Vec<String> {
        let records = self.records();
        let mut problems = Vec::new();
        let mut by_call: HashMap<u64, Vec<&Entry>> = HashMap::new();
        for entry in log {
            by_call.entry(entry.call).or_default().push(entry);
        }
        // (scope, alias) → UUID → the calls that say so.
        let mut pairs: BTreeMap<(String, String), BTreeMap<String, Vec<String>>> = BTreeMap::new();
        let mut add = |scope: &str, alias: &str, uuid: &str, evidence: String| {
            pairs
                .entry((scope.to_owned(), alias.to_owned()))
                .or_default()
                .entry(uuid.to_owned())
                .or_default()
                .push(evidence);
        };
        let mut shown_at: HashMap<(String, String), Instant> = HashMap::new();
        for r in &records {
            let entries = by_call.get(&r.call).cloned().unwrap_or_default();
            if entries.len() > 1 {
                problems.push(format!(
                    "call {} ({} via gateway {}) reached the backend {} times",
                    r.call,
                    r.tool,
                    r.gateway,
                    entries.len()
                ));
            }
            let entry = entries.first();
            if let (Some(sent), Some(received)) = (&r.sent, entry.and_then(|e| e.received.as_ref()))
            {
                add(
                    &r.scope,
                    sent,
                    received,
                    format!(
                        "resolved from the model's {sent} in call {} via gateway {} at {}",
                        r.call,
                        r.gateway,
                        self.when(r.at)
                    ),
                );
            }
            if let Outcome::Ok { link, theme } = &r.outcome {
                let Some((id, theme_id)) = entry.and_then(|e| e.returned.as_ref()) else {
                    problems.push(format!(
                        "call {} ({} via gateway {} at {}) showed the model a result, but the backend logged no answer for it",
                        r.call,
                        r.tool,
                        r.gateway,
                        self.when(r.at)
                    ));
                    continue;
                };
                for (alias, uuid) in [(link, id), (theme, theme_id)] {
                    let Some(alias) = alias else { continue };
                    shown_at
                        .entry((r.scope.clone(), alias.clone()))
                        .or_insert(r.at);
                    add(
                        &r.scope,
                        alias,
                        uuid,
                        format!(
                            "shown in the result of call {} ({} via gateway {}) at {}",
                            r.call,
                            r.tool,
                            r.gateway,
                            self.when(r.at)
                        ),
                    );
                }
            }
        }
        for ((scope, alias), uuids) in &pairs {
            if uuids.len() > 1 {
                let each: Vec<String> = uuids
                    .iter()
                    .map(|(uuid, evidence)| {
                        // The first calls say when; the rest only repeat it.
                        let mut said = evidence[..evidence.len().min(3)].join("; ");
                        if evidence.len() > 3 {
                            said.push_str(&format!("; and {} more calls", evidence.len() - 3));
                        }
                        format!("{uuid} ({said})")
                    })
                    .collect();
                problems.push(format!(
                    "scope {scope}: {alias} stands for {} objects: {}",
                    uuids.len(),
                    each.join(" and ")
                ));
            }
        }
        for r in &records {
            if let Outcome::Http(status, body) = &r.outcome
                && let Some(sign) = internals(body)
            {
                problems.push(format!(
                    "call {} ({} via gateway {} at {}) was refused with {status} and a body carrying internals ({sign:?}): {body}",
                    r.call,
                    r.tool,
                    r.gateway,
                    self.when(r.at)
                ));
            }
            if let Outcome::Error(text) = &r.outcome {
                if let Some(sign) = internals(text) {
                    problems.push(format!(
                        "call {} ({} via gateway {} at {}) told the model a store's or a transport's internals ({sign:?}): {text}",
                        r.call,
                        r.tool,
                        r.gateway,
                        self.when(r.at)
                    ));
                }
                let Some(sent) = &r.sent else { continue };
                let Some(shown) = shown_at.get(&(r.scope.clone(), sent.clone())) else {
                    continue;
                };
                let told = kind(&r.outcome);
                if told == "alias told expired" || told == "alias told unknown" {
                    problems.push(format!(
                        "scope {}: {sent}, shown to the model at {}, was {} in call {} via gateway {} at {} (only \"lost\" or its object may answer an alias the model was given): {text}",
                        r.scope,
                        self.when(*shown),
                        told.trim_start_matches("alias "),
                        r.call,
                        r.gateway,
                        self.when(r.at)
                    ));
                }
            }
        }
        problems
    }
}

/// One caller: its scope, and the link aliases it was shown.
pub struct Caller {
    pub label: String,
    scope: Scope,
    ledger: Ledger,
    /// Link aliases shown, in order; those told lost are dropped.
    pub shown: Vec<String>,
    /// Every link alias ever shown, lost ones too.
    pub ever: Vec<String>,
    pub patience: Duration,
}

impl Caller {
    /// A stateless caller whose scope is the header value `label`.
    pub fn header(label: String, ledger: &Ledger) -> Self {
        Self {
            scope: Scope::Header(label.clone()),
            label,
            ledger: ledger.clone(),
            shown: Vec::new(),
            ever: Vec::new(),
            patience: Duration::from_secs(20),
        }
    }

    /// A handshake-era session started at `first`; its scope is the session.
    pub fn session(label: String, ledger: &Ledger, first: Target) -> Result<Self, String> {
        let id = mcp::start_session(first.addr)?;
        Ok(Self {
            scope: Scope::Session(Some(id)),
            label,
            ledger: ledger.clone(),
            shown: Vec::new(),
            ever: Vec::new(),
            patience: Duration::from_secs(20),
        })
    }

    /// Sends one call to the first of `targets` that takes the connection
    /// (as a load balancer does: a refused connection sent nothing, so the
    /// next gateway may have it; an answer that never came is not sent
    /// again). Each attempt is recorded.
    fn send(
        &mut self,
        targets: &[Target],
        tool: &'static str,
        sent: Option<&str>,
        hold: bool,
    ) -> Outcome {
        let mut outcome = Outcome::Transport("no gateway to call".to_owned());
        for target in targets {
            let call = self.ledger.next_call();
            let name = format!("{}c{call}", if hold { "hold:" } else { "" });
            let arguments = match sent {
                Some(alias) => json!({"link_id": alias, "name": name}),
                None => json!({
                    "destination": format!("https://{}.example/{call}", self.label),
                    "name": name,
                }),
            };
            let at = Instant::now();
            let reply = mcp::call(target.addr, &self.scope, tool, &arguments, self.patience);
            outcome = match reply {
                Reply::Result(result) => read_result(&result),
                Reply::Http(status, body) => Outcome::Http(status, body),
                Reply::Transport(e) => Outcome::Transport(e),
            };
            self.ledger.push(Record {
                call,
                scope: self.label.clone(),
                gateway: target.name,
                tool,
                sent: sent.map(str::to_owned),
                at,
                took: at.elapsed(),
                outcome: outcome.clone(),
            });
            // What a load balancer sends elsewhere: a refused connection,
            // and a stopping gateway's 503.
            match &outcome {
                Outcome::Transport(e) if e.starts_with("connect") => continue,
                Outcome::Http(status, body) if status == "503" && body.contains("is stopping") => {
                    continue;
                }
                _ => break,
            }
        }
        if let Outcome::Ok {
            link: Some(alias), ..
        } = &outcome
            && !self.ever.contains(alias)
        {
            self.shown.push(alias.clone());
            self.ever.push(alias.clone());
        }
        if let (Some(alias), "alias told lost") = (sent, kind(&outcome)) {
            self.shown.retain(|a| a != alias);
        }
        outcome
    }

    /// `links_create` of a new link.
    pub fn create(&mut self, targets: &[Target]) -> Outcome {
        self.send(targets, "links_create", None, false)
    }

    /// `links_update` of the link `alias` stands for.
    pub fn update(&mut self, targets: &[Target], alias: &str) -> Outcome {
        self.send(targets, "links_update", Some(alias), false)
    }

    /// The same, held open by the backend until it is released.
    pub fn update_held(&mut self, target: Target, alias: &str) -> Outcome {
        self.send(&[target], "links_update", Some(alias), true)
    }

    /// `links_create`, held open by the backend after the link exists.
    pub fn create_held(&mut self, target: Target) -> Outcome {
        self.send(&[target], "links_create", None, true)
    }
}

/// The aliases in a tool result: the link's own and its theme's.
fn read_result(result: &Value) -> Outcome {
    if result["isError"] == json!(true) {
        return Outcome::Error(
            result["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        );
    }
    let link = &result["structuredContent"]["link"];
    Outcome::Ok {
        link: link["id"].as_str().map(str::to_owned),
        theme: link["page_theme_id"].as_str().map(str::to_owned),
    }
}

/// Callers calling on their own threads until stopped: each creates a link
/// every other call and updates one it holds in between, going round the
/// gateways.
pub struct Load {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<Caller>>,
}

impl Load {
    pub fn start(callers: Vec<Caller>, targets: &[Target], pace: Duration) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = callers
            .into_iter()
            .enumerate()
            .map(|(n, mut caller)| {
                let stop = stop.clone();
                let targets = targets.to_vec();
                std::thread::spawn(move || {
                    let mut step = n;
                    while !stop.load(Ordering::SeqCst) {
                        // Round robin, the next gateway taking over when
                        // one refuses the connection.
                        let order: Vec<Target> = (0..targets.len())
                            .map(|i| targets[(step + i) % targets.len()])
                            .collect();
                        if step % 2 == 0 || caller.shown.is_empty() {
                            caller.create(&order);
                        } else {
                            let alias = caller.shown[(step / 2) % caller.shown.len()].clone();
                            caller.update(&order, &alias);
                        }
                        step += 1;
                        std::thread::sleep(pace);
                    }
                    caller
                })
            })
            .collect();
        Self { stop, threads }
    }

    /// Stops the callers after their current call; gives them back.
    pub fn stop(self) -> Vec<Caller> {
        self.stop.store(true, Ordering::SeqCst);
        self.threads
            .into_iter()
            .filter_map(|t| t.join().ok())
            .collect()
    }
}

/// What a fault cost the model, from the records.
pub struct Figures {
    pub calls: usize,
    pub ok: usize,
    /// Calls that did not succeed, by what the model was told.
    pub failed: BTreeMap<&'static str, usize>,
    /// (scope, alias) told lost.
    pub lost: BTreeSet<(String, String)>,
    /// From the fault to the first success after the last failure, per tool
    /// (`None`: no call of it failed after the fault).
    pub recovered: BTreeMap<&'static str, Option<Duration>>,
}

impl Figures {
    /// The figures of the calls in `scopes` (all when empty), recovery
    /// counted from `fault`.
    pub fn of(records: &[Record], scopes: &[String], fault: Instant) -> Self {
        let mine: Vec<&Record> = records
            .iter()
            .filter(|r| scopes.is_empty() || scopes.contains(&r.scope))
            .collect();
        let mut failed = BTreeMap::new();
        let mut lost = BTreeSet::new();
        for r in &mine {
            let kind = kind(&r.outcome);
            if kind != "ok" {
                *failed.entry(kind).or_insert(0) += 1;
            }
            if kind == "alias told lost"
                && let Some(alias) = &r.sent
            {
                lost.insert((r.scope.clone(), alias.clone()));
            }
        }
        let mut recovered = BTreeMap::new();
        for tool in ["links_create", "links_update"] {
            let after: Vec<&&Record> = mine
                .iter()
                .filter(|r| r.tool == tool && r.at >= fault)
                .collect();
            let last_failure = after
                .iter()
                .filter(|r| !r.ok() && kind(&r.outcome) != "alias told lost")
                .map(|r| r.at)
                .max();
            recovered.insert(
                tool,
                last_failure.map(|last| {
                    after
                        .iter()
                        .filter(|r| r.ok() && r.at > last)
                        .map(|r| (r.at + r.took).duration_since(fault))
                        .min()
                        .unwrap_or(Duration::MAX)
                }),
            );
        }
        Self {
            calls: mine.len(),
            ok: mine.iter().filter(|r| r.ok()).count(),
            failed,
            lost,
            recovered,
        }
    }

    pub fn summary(&self) -> String {
        let failed: Vec<String> = self
            .failed
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        let recovered: Vec<String> = self
            .recovered
            .iter()
            .map(|(tool, d)| match d {
                None => format!("{tool}: no failure after the fault"),
                Some(d) if *d == Duration::MAX => format!("{tool}: not recovered"),
                Some(d) => format!("{tool} recovered {:.1} s after the fault", d.as_secs_f64()),
            })
            .collect();
        format!(
            "{} calls, {} ok; failed: {}; aliases told lost: {}; {}",
            self.calls,
            self.ok,
            if failed.is_empty() {
                "none".to_owned()
            } else {
                failed.join(", ")
            },
            self.lost.len(),
            recovered.join(", ")
        )
    }
}
