//! A Redis Cluster of the suite's own (three masters, a replica each,
//! started with `scripts/redis-cluster.sh`), whose nodes the faults stop,
//! kill and start again, read through `redis-cli`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// `cluster-node-timeout`: a master unreachable this long is failed over.
/// Short, so that a fault and its recovery take seconds.
pub const NODE_TIMEOUT: Duration = Duration::from_millis(1000);

/// A node as `CLUSTER NODES` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub id: String,
    pub port: u16,
    pub master: bool,
    /// Marked failed (`fail`, not `fail?`) by the node asked.
    pub failed: bool,
    /// A replica's master.
    pub master_id: Option<String>,
    pub slots: bool,
}

/// The cluster, stopped and removed when dropped (kept when the test
/// failed, for its logs).
pub struct Cluster {
    dir: PathBuf,
    pub urls: Vec<String>,
}

fn script() -> PathBuf {
    super::workspace().join("scripts/redis-cluster.sh")
}

fn has(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

impl Cluster {
    /// Three masters with a replica each, or `None` when `redis-server`
    /// and `redis-cli` are not on the PATH (the test then says why and is
    /// skipped, unless `AI_TOOLS_REQUIRE_REDIS_CLUSTER` is set: then it
    /// fails). A cluster that cannot start is an error either way.
    pub fn start(test: &str) -> Result<Option<Self>, String> {
        if !has("redis-server") || !has("redis-cli") {
            let reason = "`redis-server` or `redis-cli` is not on the PATH (Debian's `redis-server` has both; .ci/run installs it): the fault suite stops and kills nodes of a cluster of its own";
            if std::env::var_os("AI_TOOLS_REQUIRE_REDIS_CLUSTER").is_some() {
                return Err(format!("AI_TOOLS_REQUIRE_REDIS_CLUSTER is set: {reason}"));
            }
            eprintln!("SKIPPED {test}: {reason}");
            return Ok(None);
        }
        let dir = std::env::temp_dir().join(format!("ai-tools-{}", super::unique(test)));
        let mut cluster = Self {
            dir,
            urls: Vec::new(),
        };
        let urls = cluster.script("start")?;
        cluster.urls = urls.split(',').map(str::to_owned).collect();
        if cluster.urls.len() != 3 {
            return Err(format!("three masters expected, the script printed {urls}"));
        }
        Ok(Some(cluster))
    }

    fn script(&self, action: &str) -> Result<String, String> {
        let out = Command::new("bash")
            .arg(script())
            .arg(action)
            .arg(&self.dir)
            .env("REDIS_CLUSTER_REPLICAS", "1")
            .env(
                "REDIS_CLUSTER_NODE_TIMEOUT",
                NODE_TIMEOUT.as_millis().to_string(),
            )
            .output()
            .map_err(|e| format!("bash scripts/redis-cluster.sh {action}: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "scripts/redis-cluster.sh {action} {} failed: {}",
                self.dir.display(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// Starts the nodes that are down (a killed master comes back as its
    /// successor's replica) and waits until every replica is in sync.
    pub fn restart_stopped(&self) -> Result<(), String> {
        self.script("restart").map(|_| ())
    }

    /// The ports of every node, up or down.
    pub fn ports(&self) -> Vec<u16> {
        let mut ports: Vec<u16> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                e.file_name()
                    .to_string_lossy()
                    .strip_prefix("node-")
                    .and_then(|p| p.parse().ok())
            })
            .collect();
        ports.sort_unstable();
        ports
    }

    fn pid(&self, port: u16) -> Result<String, String> {
        std::fs::read_to_string(self.dir.join(format!("node-{port}/redis.pid")))
            .map(|p| p.trim().to_owned())
            .map_err(|e| format!("the pid file of the node on port {port}: {e}"))
    }

    /// Sends `signal` (`STOP`, `CONT`, `KILL`) to the node on `port`.
    pub fn signal(&self, port: u16, signal: &str) -> Result<(), String> {
        let pid = self.pid(port)?;
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(&pid)
            .status()
            .map_err(|e| format!("kill -{signal} {pid}: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!(
                "kill -{signal} {pid} (the node on port {port}) failed"
            ))
        }
    }

    /// `redis-cli -p PORT ARGS…`, its stdout; `None` when the node does not
    /// answer within a second.
    pub fn cli(port: u16, args: &[&str]) -> Option<String> {
        let out = Command::new("timeout")
            .args(["1", "redis-cli", "-p", &port.to_string()])
            .args(args)
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        (out.status.success() && !text.starts_with("Could not connect")).then_some(text)
    }

    /// The nodes as the first node that answers, other than `skip`, sees them.
    pub fn nodes(&self, skip: &[u16]) -> Option<Vec<Node>> {
        self.ports()
            .into_iter()
            .filter(|p| !skip.contains(p))
            .find_map(|p| Self::cli(p, &["cluster", "nodes"]))
            .map(|text| text.lines().filter_map(parse_node).collect())
    }

    /// The master whose slot holds the scope in which `uuid` was given an
    /// alias (found by the UUID in the `…:uuids` hash of each master).
    pub fn master_holding(&self, uuid: &str) -> Option<Node> {
        let nodes = self.nodes(&[])?;
        nodes
            .into_iter()
            .filter(|n| n.master && n.slots)
            .find(|n| self.holds(n.port, uuid))
    }

    /// Whether the node on `port` holds an alias for `uuid` in any scope.
    pub fn holds(&self, port: u16, uuid: &str) -> bool {
        Self::cli(port, &["--scan", "--pattern", "*:uuids"])
            .unwrap_or_default()
            .lines()
            .any(|key| {
                Self::cli(port, &["hexists", key.trim(), uuid]).is_some_and(|a| a.trim() == "1")
            })
    }

    /// The replica of `master`.
    pub fn replica_of(&self, master: &Node) -> Option<Node> {
        self.nodes(&[])?
            .into_iter()
            .find(|n| n.master_id.as_deref() == Some(master.id.as_str()))
    }

    /// Whether `node` is now a master serving slots and the cluster, asked
    /// through any node but `skip`, says `cluster_state:ok`.
    pub fn serves_as_master(&self, node: &Node, skip: &[u16]) -> bool {
        let promoted = self.nodes(skip).is_some_and(|nodes| {
            nodes
                .iter()
                .any(|n| n.id == node.id && n.master && n.slots && !n.failed)
        });
        promoted
            && Self::cli(node.port, &["cluster", "info"])
                .is_some_and(|info| info.contains("cluster_state:ok"))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // A node left stopped would never exit on SIGTERM.
        for port in self.ports() {
            let _ = self.signal(port, "CONT");
        }
        let _ = self.script("stop");
        if std::thread::panicking() {
            eprintln!("the cluster's files are kept in {}", self.dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A line of `CLUSTER NODES`: `ID HOST:PORT@BUS FLAGS MASTER PING PONG
/// EPOCH LINK SLOTS…`.
fn parse_node(line: &str) -> Option<Node> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.len() < 8 {
        return None;
    }
    let port = fields[1]
        .split('@')
        .next()?
        .rsplit(':')
        .next()?
        .parse()
        .ok()?;
    let flags: Vec<&str> = fields[2].split(',').collect();
    Some(Node {
        id: fields[0].to_owned(),
        port,
        master: flags.contains(&"master"),
        failed: flags.contains(&"fail"),
        master_id: (fields[3] != "-").then(|| fields[3].to_owned()),
        slots: fields.len() > 8,
    })
}
