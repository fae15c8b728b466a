//! What alias managers did, counted for an operator's metrics.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counts of what the alias managers that share it did since it was made:
/// the aliases they gave out, and what became of the aliases models sent
/// back. Every manager of one [`Sessions`](crate::Sessions) shares its
/// [`alias_counts`](crate::Sessions::alias_counts); a metrics exporter reads
/// them as counters. Each count is one relaxed atomic add where it happens.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::alias::Resolution;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let sessions = proto_ai_tools::Sessions::new((), std::time::Duration::from_secs(60));
/// let aliases = sessions.alias_manager("conversation-1");
/// aliases.register("link", "d290f1ee-6c54-4b01-90e6-d701748f0851").await.unwrap();
/// assert!(matches!(aliases.resolve_for_field("link", "link-1"), Resolution::Uuid(_)));
/// assert_eq!(aliases.resolve_for_field("link", "link-7"), Resolution::UnknownAlias);
///
/// let counts = sessions.alias_counts();
/// assert_eq!((counts.given(), counts.resolved()), (1, 1));
/// assert_eq!((counts.expired(), counts.lost()), (0, 0));
/// # }
/// ```
#[derive(Debug, Default)]
pub struct AliasCounts {
    given: AtomicU64,
    resolved: AtomicU64,
    expired: AtomicU64,
    lost: AtomicU64,
}

impl AliasCounts {
    /// Aliases given out: each one a conversation held for the first time
    /// in this process. With a shared store, an alias that another replica
    /// gave first counts here too when this process learns it by giving it
    /// out, so the sum over replicas may exceed the store's count.
    pub fn given(&self) -> u64 {
        self.given.load(Ordering::Relaxed)
    }

    /// Aliases a model sent in an id field that resolved to their UUID
    /// ([`Resolution::Uuid`](super::Resolution::Uuid) from an alias; a raw
    /// UUID the conversation knows is not counted).
    pub fn resolved(&self) -> u64 {
        self.resolved.load(Ordering::Relaxed)
    }

    /// Aliases a model sent that the conversation had given out and no
    /// longer holds because they went unused or were the least recently
    /// used at the limit ([`Resolution::Expired`](super::Resolution::Expired)).
    pub fn expired(&self) -> u64 {
        self.expired.load(Ordering::Relaxed)
    }

    /// Aliases a model sent that the alias store had lost in a failure
    /// ([`Resolution::Lost`](super::Resolution::Lost)): each is a model told
    /// to get an object again.
    pub fn lost(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }

    pub(crate) fn add_given(&self, count: u64) {
        if count > 0 {
            self.given.fetch_add(count, Ordering::Relaxed);
        }
    }

    pub(crate) fn add_resolved(&self) {
        self.resolved.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn add_expired(&self) {
        self.expired.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn add_lost(&self) {
        self.lost.fetch_add(1, Ordering::Relaxed);
    }
}
