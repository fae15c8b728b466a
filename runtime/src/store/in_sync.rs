//! What [`RedisStoreOptions::wait_for_in_sync_replicas`] waits for: the
//! replicas in sync with the master that holds a conversation, as the
//! store's topology last said.
//!
//! The set is every replica that could be promoted in the master's place
//! with what it holds. On one server, the replicas `INFO replication`
//! lists online. On a cluster, the replicas `CLUSTER NODES` lists for the
//! master that are not marked failed, and those marked failed while Redis
//! may still promote them once they are back: a replica cut off a moment
//! ago is marked failed after the node timeout, yet stands for election
//! while its data is at most `cluster-node-timeout` ×
//! `cluster-replica-validity-factor` + `repl-ping-replica-period` old (the
//! promotion window, read from the servers once). Past that window since
//! it was first seen failed, a replica leaves the set: one gone for good
//! holds registrations on its master back for that long, not for ever. A
//! master promoted in place of a failed one starts with none: its old
//! master, when it comes back, is its replica and copies everything. So,
//! as Kafka's `acks=all` over its in-sync replicas, a registration waits
//! for every replica that could take over with what it holds, and the
//! loss of a master is not an outage for the conversations it held.
//!
//! A registration's round trip is `EVAL`, then `WAIT n` when `n`, the set's
//! size as last known for the conversation's slot, is more than 0. When
//! fewer replicas acknowledge, the topology is asked again at once (at most
//! once a second), and the registration holds when they are at least as
//! many as the set has now. The topology is also asked again every few
//! seconds while registrations come, so a replica that joins is waited for
//! from then on.
//!
//! [`RedisStoreOptions::wait_for_in_sync_replicas`]: super::RedisStoreOptions::wait_for_in_sync_replicas

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::replication::Replication;

/// How often the topology may be asked again when a wait falls short.
const REFRESH_AT_MOST_EVERY: Duration = Duration::from_secs(1);

/// How old the topology may grow while registrations come.
const REFRESH_AT_LEAST_EVERY: Duration = Duration::from_secs(5);

/// How often a registration that no replica holds is said as a WARN.
const WARN_EVERY: Duration = Duration::from_secs(30);

/// The in-sync replicas last known of each master, by the slots it serves.
#[derive(Debug, Default)]
pub(super) struct InSync {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// One server: its replicas in sync.
    single: Option<usize>,
    /// A cluster: each slot's master's replicas in sync.
    #[cfg(feature = "redis-cluster")]
    by_slot: std::collections::HashMap<::redis::cluster_routing::Slot, usize>,
    /// When the topology was last asked.
    refreshed: Option<Instant>,
    /// When a registration without a replica was last said.
    warned: Option<Instant>,
    /// Each replica marked failed, by id, and when it was first seen so.
    failed_since: HashMap<String, Instant>,
    /// How long after it is cut off a replica may still be promoted
    /// (`Some(None)`: always); `None` until read.
    promotion_window: Option<Option<Duration>>,
}

impl InSync {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The replicas to wait for on the master of `key`, `None` when that
    /// master was never heard from.
    pub(super) fn expected(&self, cluster: bool, key: &str) -> Option<usize> {
        let state = self.lock();
        if !cluster {
            return state.single;
        }
        #[cfg(feature = "redis-cluster")]
        {
            state
                .by_slot
                .get(&::redis::cluster_routing::Slot::for_key(key))
                .copied()
        }
        #[cfg(not(feature = "redis-cluster"))]
        {
            let _ = key;
            None
        }
    }

    /// Whether the promotion window was read.
    pub(super) fn knows_promotion_window(&self) -> bool {
        self.lock().promotion_window.is_some()
    }

    /// How long after it is cut off a replica may still be promoted,
    /// `None` for always.
    pub(super) fn set_promotion_window(&self, window: Option<Duration>) {
        self.lock().promotion_window = Some(window);
    }

    /// Takes in the whole topology: every master's replicas, by its slots.
    pub(super) fn learn(&self, replication: &Replication) {
        let now = Instant::now();
        let mut state = self.lock();
        state.refreshed = Some(now);
        let window = state.promotion_window.flatten();
        let mut failed_since = HashMap::new();
        for master in &replication.masters {
            let promotable_failed = master
                .failed_replicas()
                .iter()
                .filter(|id| {
                    let since = state.failed_since.get(*id).copied().unwrap_or(now);
                    failed_since.insert((*id).clone(), since);
                    window.is_none_or(|window| now.duration_since(since) < window)
                })
                .count();
            let in_sync = master.replicas + promotable_failed;
            if master.address.is_none() {
                state.single = Some(in_sync);
                continue;
            }
            #[cfg(feature = "redis-cluster")]
            for &(first, last) in master.slots() {
                for slot in first..=last {
                    if let Some(slot) = ::redis::cluster_routing::Slot::new(slot) {
                        state.by_slot.insert(slot, in_sync);
                    }
                }
            }
        }
        // A replica no longer failed (back, or forgotten) starts afresh.
        state.failed_since = failed_since;
    }

    /// Whether the topology may be asked again now, a wait having fallen
    /// short (at most once a second); true marks it asked.
    pub(super) fn refresh_allowed(&self) -> bool {
        self.refresh_if_older_than(REFRESH_AT_MOST_EVERY)
    }

    /// Whether the topology is old enough to be asked again after a
    /// registration (every 5 s); true marks it asked.
    pub(super) fn refresh_due(&self) -> bool {
        self.refresh_if_older_than(REFRESH_AT_LEAST_EVERY)
    }

    fn refresh_if_older_than(&self, age: Duration) -> bool {
        let mut state = self.lock();
        let due = state.refreshed.is_none_or(|at| at.elapsed() >= age);
        if due {
            state.refreshed = Some(Instant::now());
        }
        due
    }

    /// Whether a registration without a replica should be said now (at
    /// most once in 30 s); true marks it said.
    pub(super) fn warn_due(&self) -> bool {
        let mut state = self.lock();
        let due = state.warned.is_none_or(|at| at.elapsed() >= WARN_EVERY);
        if due {
            state.warned = Some(Instant::now());
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::MasterReplicas;

    #[test]
    fn the_last_topology_says_what_a_server_waits_for() {
        let in_sync = InSync::default();
        assert_eq!(in_sync.expected(false, "k"), None);
        in_sync.learn(&Replication::new(vec![MasterReplicas::new(None, 1)]));
        assert_eq!(in_sync.expected(false, "k"), Some(1));
        assert!(
            !in_sync.refresh_allowed(),
            "learn() just asked the topology"
        );
        assert!(!in_sync.refresh_due());
        in_sync.learn(&Replication::new(vec![MasterReplicas::new(None, 0)]));
        assert_eq!(in_sync.expected(false, "k"), Some(0));
        assert!(in_sync.warn_due());
        assert!(!in_sync.warn_due(), "said at most once in 30 s");
    }

    /// A replica marked failed stays in the set while Redis may still
    /// promote it, and leaves it past the promotion window.
    #[test]
    fn a_failed_replica_counts_within_the_promotion_window_only() {
        let with_failed = || {
            let mut master = MasterReplicas::new(None, 0);
            master.failed_replicas = vec!["r1".to_owned()];
            Replication::new(vec![master])
        };
        let in_sync = InSync::default();
        assert!(!in_sync.knows_promotion_window());
        in_sync.set_promotion_window(Some(Duration::from_secs(3600)));
        assert!(in_sync.knows_promotion_window());
        in_sync.learn(&with_failed());
        assert_eq!(in_sync.expected(false, "k"), Some(1), "failed a moment ago");

        let in_sync = InSync::default();
        in_sync.set_promotion_window(Some(Duration::ZERO));
        in_sync.learn(&with_failed());
        assert_eq!(in_sync.expected(false, "k"), Some(0), "past the window");
        // Back and healthy, then failed again: its window starts afresh.
        in_sync.learn(&Replication::new(vec![MasterReplicas::new(None, 1)]));
        assert_eq!(in_sync.expected(false, "k"), Some(1));
        in_sync.set_promotion_window(Some(Duration::from_secs(3600)));
        in_sync.learn(&with_failed());
        assert_eq!(in_sync.expected(false, "k"), Some(1));
    }

    /// `wait_for_in_sync_replicas` on a cluster: each key waits for the
    /// replicas of the master that serves its slot, as `CLUSTER NODES`
    /// says (a replica marked failed too, within the promotion window).
    #[cfg(feature = "redis-cluster")]
    #[test]
    fn a_cluster_waits_for_the_replicas_of_the_master_serving_the_keys_slot() {
        let nodes = "\
a1 127.0.0.1:7001@17001 master - 0 0 1 connected 0-8191
b1 127.0.0.1:7002@17002 master - 0 1 2 connected 8192-16383
r1 127.0.0.1:7003@17003 slave a1 0 1 1 connected
r2 127.0.0.1:7004@17004 slave,fail b1 0 1 2 disconnected
";
        let in_sync = InSync::default();
        assert_eq!(in_sync.expected(true, "p:{b}:aliases"), None);
        in_sync.learn(&Replication::of_cluster_nodes(nodes).unwrap());
        // CLUSTER KEYSLOT b is 3300 (a1's), a is 15495 (b1's). b1's replica
        // is marked failed, and still waited for: it may be promoted once
        // back, without what it missed.
        assert_eq!(in_sync.expected(true, "p:{b}:aliases"), Some(1));
        assert_eq!(in_sync.expected(true, "p:{a}:aliases"), Some(1));
        let promoted = "\
a1 127.0.0.1:7001@17001 master - 0 0 1 connected 0-8191
r2 127.0.0.1:7004@17004 master - 0 1 3 connected 8192-16383
b1 127.0.0.1:7002@17002 master,fail - 0 1 2 disconnected
r1 127.0.0.1:7003@17003 slave a1 0 1 1 connected
";
        in_sync.learn(&Replication::of_cluster_nodes(promoted).unwrap());
        // r2, promoted, has no replica: its slots wait for none.
        assert_eq!(in_sync.expected(true, "p:{a}:aliases"), Some(0));
    }
}
