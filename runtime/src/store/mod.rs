//! Where a conversation's aliases live when they must outlive one process
//! or be shared by several: the [`AliasStore`] trait, the in-process
//! [`MemoryStore`] and, behind the `redis` feature, the `RedisStore`.
//!
//! An [`AliasManager`](crate::AliasManager) without a store keeps its maps in
//! memory and is the default. One built over a store
//! ([`AliasManager::with_store`](crate::AliasManager::with_store), or
//! [`Sessions::with_store`](crate::Sessions::with_store) for every
//! conversation) keeps a local copy of what it has learnt for the fast,
//! synchronous rewriting, and asks the store once per step of a tool call
//! for what that step needs: one batched lookup of the aliases and UUIDs in
//! the arguments before the call, one batched get-or-assign of the ids of the
//! response after it.

use proto_ai_tools_schema::names::split_alias;
use std::fmt;
use std::time::Duration;

use crate::transport::BoxFuture;

#[cfg(feature = "redis")]
mod in_sync;
mod memory;
#[cfg(feature = "redis")]
mod redis_store;
#[cfg(feature = "redis")]
mod replication;
mod table;
pub(crate) mod uuid;

pub use memory::MemoryStore;
#[cfg(feature = "redis")]
pub use redis_store::{RedisStore, RedisStoreOptions};
#[cfg(feature = "redis")]
pub use replication::{MasterReplicas, Replication};
pub use table::AliasEntry;
pub(crate) use table::{AliasTable, idle_secs};

/// The alias store could not be reached or answered with something unusable.
/// Nothing of the request that failed was written.
///
/// # Examples
///
/// ```
/// let e = proto_ai_tools::store::StoreError::unavailable("connection refused");
/// assert_eq!(e.to_string(), "the alias store is unavailable (connection refused)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the alias store is unavailable ({message})")]
pub struct StoreError {
    message: String,
}

impl StoreError {
    /// An error saying why the store is unavailable.
    ///
    /// # Examples
    ///
    /// See [`StoreError`].
    pub fn unavailable(message: impl fmt::Display) -> Self {
        let mut message = message.to_string();
        if message.len() > 200 {
            let mut cut = 200;
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            message.truncate(cut);
            message.push('…');
        }
        Self { message }
    }

    /// Why the store is unavailable.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(proto_ai_tools::store::StoreError::unavailable("down").message(), "down");
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// What [`AliasStore::assign`] gave out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// The conversation's epoch (see [`Lookup::epoch`]).
    pub epoch: String,
    /// The alias of every requested `(prefix, uuid)`, in request order.
    pub aliases: Vec<String>,
}

/// What [`AliasStore::lookup`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lookup {
    /// An id of this life of the conversation in the store, given when its
    /// first alias is assigned; `None` when the store holds nothing for it.
    /// When it changes (the conversation expired and began again), what a
    /// process learnt before is stale and is dropped.
    pub epoch: Option<String>,
    /// For each requested alias, the UUID behind it.
    pub aliases: Vec<Option<String>>,
    /// For each requested UUID, its aliases (one per prefix), in the order
    /// they were given out; empty when unknown.
    pub uuids: Vec<Vec<String>>,
    /// For each requested alias, whether it was given out in this
    /// conversation and is held no longer (it expired, or was evicted at
    /// the limit): numbers are never given twice, so the answer is sure.
    /// Empty is read as all `false` (a store that expires nothing).
    pub expired: Vec<bool>,
    /// For each requested alias, whether the store knows it lost it: the
    /// number was given out, but the write that held it did not survive (a
    /// failover promoted a replica that lagged behind). It is never given
    /// out again. Empty is read as all `false`.
    pub lost: Vec<bool>,
}

/// What a caller has already seen of a conversation, sent with every
/// request so that the store never runs behind it.
///
/// A store that lost writes (a failover to a lagging replica) may hold a
/// lower counter than the numbers a process has already shown to a model.
/// With the caller's counters as a floor, the store raises its own before
/// it gives out a number, so that `book-4` is never given to a second
/// object, and keeps the numbers it skipped as *lost*
/// ([`Lookup::lost`]). A store that holds nothing of the conversation (it
/// lost it whole) takes the caller's epoch, so that the caller's copy
/// stays valid.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use proto_ai_tools::store::{AliasStore, Floor, MemoryStore};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let store = MemoryStore::new(Duration::from_secs(1800));
/// // a process that has seen `link-3` given out in epoch "e1"
/// let floor = Floor { epoch: Some("e1".into()), counters: vec![("link".into(), 3)] };
/// let uuid = "d290f1ee-6c54-4b01-90e6-d701748f0851".to_owned();
/// let got = store.assign("c1", &[("link".into(), uuid)], 100, &floor).await.unwrap();
/// assert_eq!(got.aliases, ["link-4"]);
/// let found = store.lookup("c1", &["link-2".into()], &[], &Floor::default()).await.unwrap();
/// assert_eq!(found.lost, [true]);
/// # }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Floor {
    /// The epoch the caller's copy was learnt in (see [`Lookup::epoch`]);
    /// `None` when the caller knows nothing of the conversation, or its
    /// copy is older than the store's TTL. Without an epoch the counters
    /// are not applied.
    pub epoch: Option<String>,
    /// For each prefix, the highest number the caller has seen given out.
    pub counters: Vec<(String, u64)>,
}

impl Floor {
    /// Whether the floor asks nothing of the store.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(proto_ai_tools::store::Floor::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.epoch.is_none()
    }
}

/// Why an [`AliasStore`] gave out no aliases; in either case nothing was
/// written.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::store::{AssignError, StoreError};
/// let down: AssignError = StoreError::unavailable("connection refused").into();
/// assert!(down.to_string().contains("connection refused"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssignError {
    /// The new ids would take the conversation past its limit.
    #[error("the conversation already holds the maximum of {limit} ids")]
    LimitReached {
        /// The limit asked for.
        limit: usize,
    },
    /// The store is unavailable.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A conversation-keyed store of aliases, shared by every process that
/// serves the conversation.
///
/// Every method is one request to the store (one round trip for a remote
/// one), whatever the size of the batch. Implementations must make
/// [`assign`](Self::assign) atomic: two processes assigning the same UUID
/// under the same prefix at once get one alias, and two UUIDs never share one.
/// Every call that touches a conversation refreshes its idle TTL. Both
/// [`assign`](Self::assign) and [`lookup`](Self::lookup) first apply the
/// caller's [`Floor`], in the same atomic step: a number a caller has seen
/// is never given out again, even by a store that lost the write.
///
/// Inputs are canonical: prefixes match `^[a-z][a-z0-9_]*$`, UUIDs are
/// lowercase, aliases are lowercase and trimmed, batches hold no duplicates.
///
/// # Examples
///
/// A store used directly (the [`AliasManager`](crate::AliasManager) does this for you):
///
/// ```
/// use std::time::Duration;
/// use proto_ai_tools::store::{AliasStore, Floor, MemoryStore};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let store = MemoryStore::new(Duration::from_secs(1800));
/// let uuid = "d290f1ee-6c54-4b01-90e6-d701748f0851".to_owned();
/// let got = store.assign("c1", &[("link".into(), uuid.clone())], 100, &Floor::default()).await.unwrap();
/// assert_eq!(got.aliases, ["link-1"]);
/// let found = store.lookup("c1", &["link-1".into()], &[uuid], &Floor::default()).await.unwrap();
/// assert_eq!(found.aliases[0].as_deref(), Some("d290f1ee-6c54-4b01-90e6-d701748f0851"));
/// assert_eq!(found.uuids[0], ["link-1"]);
/// assert_eq!(store.list("c1", "link").await.unwrap(), ["link-1"]);
/// # }
/// ```
pub trait AliasStore: Send + Sync + fmt::Debug {
    /// Gets or assigns, atomically, the alias of every `(prefix, uuid)` of
    /// `ids` in `conversation`. All or nothing: when the new ones would take
    /// the conversation past `limit` aliases, nothing is written and the
    /// answer is [`AssignError::LimitReached`] — unless the store expires
    /// aliases (an alias idle time is configured), when the least recently
    /// used ones that are not in `ids` are evicted to make room, and only a
    /// batch of more new ids than `limit` is refused. A store that expires
    /// aliases never gives a number out twice in one conversation. Every
    /// new number is past the caller's `floor` (see [`Floor`]), which is
    /// applied first, and kept even when the batch is refused.
    ///
    /// # Errors
    ///
    /// [`AssignError::LimitReached`], or [`AssignError::Store`] when the
    /// store is unavailable (then nothing was written).
    fn assign<'a>(
        &'a self,
        conversation: &'a str,
        ids: &'a [(String, String)],
        limit: usize,
        floor: &'a Floor,
    ) -> BoxFuture<'a, Result<Assignment, AssignError>>;

    /// Looks up, in one request, the UUIDs behind `aliases` and the aliases
    /// of `uuids`, after applying the caller's `floor` (so that an alias
    /// the store lost is answered as lost, [`Lookup::lost`]).
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the store is unavailable.
    fn lookup<'a>(
        &'a self,
        conversation: &'a str,
        aliases: &'a [String],
        uuids: &'a [String],
        floor: &'a Floor,
    ) -> BoxFuture<'a, Result<Lookup, StoreError>>;

    /// Every alias of `prefix` in `conversation`, in the order given out
    /// (for error messages that name the valid choices).
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the store is unavailable.
    fn list<'a>(
        &'a self,
        conversation: &'a str,
        prefix: &'a str,
    ) -> BoxFuture<'a, Result<Vec<String>, StoreError>>;

    /// Forgets `conversation` now.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the store is unavailable.
    fn remove<'a>(&'a self, conversation: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;

    /// How long a conversation is kept after its last use.
    fn ttl(&self) -> Duration;
}

/// The prefix of an alias (`link` of `link-3`), if it is alias-shaped.
pub(crate) fn prefix_of(alias: &str) -> Option<&str> {
    split_alias(alias).map(|(prefix, _)| prefix)
}

/// The number of an alias (`3` of `link-3`); not alias-shaped: last.
#[cfg(feature = "redis")]
pub(crate) fn number_of(alias: &str) -> u64 {
    split_alias(alias).map_or(u64::MAX, |(_, n)| n)
}

/// A fresh epoch: unique across processes and restarts in practice (time,
/// process id and a counter).
pub(crate) fn new_epoch() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!(
        "{nanos:x}-{:x}-{:x}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}
