//! What the masters of a [`RedisStore`](super::RedisStore) are and how many
//! replicas copy each, as the servers say it (`INFO replication`,
//! `CLUSTER NODES`): what [`RedisStore::replication`](super::RedisStore::replication)
//! answers and what the in-sync wait learns from.

use super::StoreError;

/// The masters of a [`RedisStore`](super::RedisStore) and how many replicas copy each
/// ([`RedisStore::replication`](super::RedisStore::replication)).
///
/// # Examples
///
/// ```
/// use proto_ai_tools::store::{MasterReplicas, Replication};
///
/// let replication = Replication::new(vec![
///     MasterReplicas::new(Some("10.0.0.1:6379".into()), 1),
///     MasterReplicas::new(Some("10.0.0.2:6379".into()), 0),
/// ]);
/// assert_eq!(replication.fewest_replicas(), 0);
/// assert_eq!(replication.without_replicas().count(), 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Replication {
    /// Each master, in the order the server listed them.
    pub masters: Vec<MasterReplicas>,
}

/// One master and the replicas that copy it.
///
/// # Examples
///
/// See [`Replication`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MasterReplicas {
    /// The master's `host:port` as the cluster names it; `None` for one
    /// server, which is the one the store's URL names.
    pub address: Option<String>,
    /// The replicas in sync with it (one server) or not marked failed (a
    /// cluster).
    pub replicas: usize,
    /// The slot ranges it serves, first and last (a cluster's masters).
    slots: Vec<(u16, u16)>,
    /// The ids of the replicas the cluster lists for it marked failed:
    /// one cut off a moment ago may still be promoted once it is back.
    pub(super) failed_replicas: Vec<String>,
}

impl MasterReplicas {
    /// A master at `address` with `replicas` replicas.
    ///
    /// # Examples
    ///
    /// See [`Replication`].
    pub fn new(address: Option<String>, replicas: usize) -> Self {
        Self {
            address,
            replicas,
            slots: Vec::new(),
            failed_replicas: Vec::new(),
        }
    }

    /// The ids of the replicas the cluster lists for this master marked
    /// failed; none for one server.
    pub(super) fn failed_replicas(&self) -> &[String] {
        &self.failed_replicas
    }

    /// The slot ranges it serves, each first and last; none for one server.
    #[cfg_attr(not(feature = "redis-cluster"), allow(dead_code))]
    pub(super) fn slots(&self) -> &[(u16, u16)] {
        &self.slots
    }
}

impl Replication {
    /// The replication of `masters`.
    ///
    /// # Examples
    ///
    /// See [`Replication`].
    pub fn new(masters: Vec<MasterReplicas>) -> Self {
        Self { masters }
    }

    /// The fewest replicas any master has (0 when there is no master):
    /// the most replicas every registration can wait for.
    ///
    /// # Examples
    ///
    /// See [`Replication`].
    pub fn fewest_replicas(&self) -> usize {
        self.masters.iter().map(|m| m.replicas).min().unwrap_or(0)
    }

    /// The masters that no replica copies: a crash of one loses the
    /// registrations it held that no gateway saw (see
    /// [`RedisStoreOptions::wait_for_replicas`](super::RedisStoreOptions::wait_for_replicas)).
    ///
    /// # Examples
    ///
    /// See [`Replication`].
    pub fn without_replicas(&self) -> impl Iterator<Item = &MasterReplicas> {
        self.masters.iter().filter(|m| m.replicas == 0)
    }

    /// One server's `INFO replication`: `role:master`, and a line
    /// `slaveN:ip=…,port=…,state=online,…` per replica.
    pub(super) fn of_info(text: &str) -> Result<Self, StoreError> {
        let field = |name: &str| {
            text.lines()
                .find_map(|line| line.trim().strip_prefix(name)?.strip_prefix(':'))
        };
        match field("role") {
            Some("master") => {}
            Some(role) => {
                return Err(StoreError::unavailable(format!(
                    "the server is a {role}, not a master: give the master's URL"
                )));
            }
            None => return Err(malformed("INFO replication has no role")),
        }
        if field("connected_slaves").is_none() {
            return Err(malformed("INFO replication has no connected_slaves"));
        }
        let replicas = text
            .lines()
            .filter(|line| line.trim_start().starts_with("slave"))
            .filter(|line| line.split([':', ',']).any(|part| part == "state=online"))
            .count();
        Ok(Self::new(vec![MasterReplicas::new(None, replicas)]))
    }

    /// A cluster's `CLUSTER NODES`: a line a node, `id address flags
    /// master-id ping pong epoch link slot…`; a master counts when it
    /// serves a slot and is not marked failed, and so does a replica.
    pub(super) fn of_cluster_nodes(text: &str) -> Result<Self, StoreError> {
        struct Node<'t> {
            id: &'t str,
            address: &'t str,
            master: bool,
            failed: bool,
            of: &'t str,
            slots: Vec<(u16, u16)>,
        }
        let nodes: Vec<Node<'_>> = text
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let [id, address, flags, of, ..] = fields[..] else {
                    return Err(malformed("a CLUSTER NODES line has too few fields"));
                };
                let flags: Vec<&str> = flags.split(',').collect();
                Ok(Node {
                    id,
                    // `ip:port@cport[,hostname]`: the clients' address
                    address: address.split(['@', ',']).next().unwrap_or(address),
                    master: flags.contains(&"master"),
                    failed: flags.contains(&"fail") || flags.contains(&"noaddr"),
                    of,
                    slots: fields[8.min(fields.len())..]
                        .iter()
                        .filter_map(|range| slot_range(range))
                        .collect(),
                })
            })
            .collect::<Result<_, _>>()?;
        let masters = nodes
            .iter()
            .filter(|n| n.master && !n.slots.is_empty() && !n.failed)
            .map(|m| {
                let replicas = nodes
                    .iter()
                    .filter(|r| !r.master && !r.failed && r.of == m.id)
                    .count();
                let mut master = MasterReplicas::new(Some(m.address.to_owned()), replicas);
                master.slots.clone_from(&m.slots);
                master.failed_replicas = nodes
                    .iter()
                    .filter(|r| !r.master && r.failed && r.of == m.id)
                    .map(|r| r.id.to_owned())
                    .collect();
                master
            })
            .collect();
        Ok(Self::new(masters))
    }
}

/// One slot field of a `CLUSTER NODES` line, `first-last` or one slot;
/// `None` for a slot being moved (`[slot->-id]`, `[slot-<-id]`), which the
/// node does not serve yet or no more.
fn slot_range(field: &str) -> Option<(u16, u16)> {
    if field.starts_with('[') {
        return None;
    }
    let (first, last) = field.split_once('-').unwrap_or((field, field));
    Some((first.parse().ok()?, last.parse().ok()?))
}

/// An answer Redis should not have given.
pub(super) fn malformed(what: &str) -> StoreError {
    StoreError::unavailable(format!("unexpected answer from Redis: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_nodes_count_live_replicas_of_masters_that_serve_slots() {
        // As Redis 7 writes it: a master with a replica, one whose replica
        // failed, one replaced (failed, no slots), a master without slots.
        let nodes = "\
a1 127.0.0.1:7001@17001 myself,master - 0 0 1 connected 0-5460
b1 127.0.0.1:7002@17002,redis-b master - 0 1 2 connected 5461-10922
c1 127.0.0.1:7003@17003 master,fail - 0 1 3 disconnected
c2 127.0.0.1:7006@17006 master - 0 1 7 connected 10923-16383
r1 127.0.0.1:7004@17004 slave a1 0 1 1 connected
r2 127.0.0.1:7005@17005 slave,fail b1 0 1 2 disconnected
e1 127.0.0.1:7007@17007 master - 0 1 0 connected
";
        let replication = Replication::of_cluster_nodes(nodes).unwrap();
        // Each master's address, replicas and slot ranges.
        type Seen<'a> = (Option<&'a str>, usize, &'a [(u16, u16)]);
        let masters: Vec<Seen<'_>> = replication
            .masters
            .iter()
            .map(|m| (m.address.as_deref(), m.replicas, m.slots()))
            .collect();
        assert_eq!(
            masters,
            [
                (Some("127.0.0.1:7001"), 1, &[(0, 5460)][..]),
                (Some("127.0.0.1:7002"), 0, &[(5461, 10922)][..]),
                (Some("127.0.0.1:7006"), 0, &[(10923, 16383)][..]),
            ]
        );
        assert_eq!(slot_range("42"), Some((42, 42)));
        assert_eq!(slot_range("[93->-e1]"), None);
        assert_eq!(replication.fewest_replicas(), 0);
        assert!(Replication::of_cluster_nodes("a1 127.0.0.1:7001").is_err());
    }

    #[test]
    fn one_server_counts_the_replicas_in_sync_and_refuses_a_replica() {
        let info = "# Replication\r\nrole:master\r\nconnected_slaves:2\r\n\
slave0:ip=127.0.0.1,port=7001,state=online,offset=42,lag=0\r\n\
slave1:ip=127.0.0.1,port=7002,state=wait_bgsave,offset=0,lag=0\r\n";
        let replication = Replication::of_info(info).unwrap();
        assert_eq!(replication.masters, [MasterReplicas::new(None, 1)]);
        let replica = "# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\n";
        assert!(
            Replication::of_info(replica)
                .unwrap_err()
                .message()
                .contains("not a master")
        );
    }
}
