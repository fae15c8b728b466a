//! Short aliases (`link-1`) for the UUIDs a model sees, one namespace per conversation.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use prost_reflect::{DynamicMessage, ReflectMessage};
use serde::{Deserialize, Serialize};

use crate::store::{AliasStore, AssignError, Floor, StoreError, prefix_of};

mod counts;
mod walk;

pub use crate::store::AliasEntry;
use crate::store::AliasTable;
use crate::store::uuid::uuid_bytes;
pub(crate) use crate::store::uuid::{canonical_uuid, uuid_tokens};
pub use counts::AliasCounts;
pub use walk::FieldPrefix;
pub(crate) use walk::{MAX_WALK_DEPTH, WalkPlan};

/// Why an alias could not be registered or a snapshot restored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AliasError {
    /// The prefix is not of the form `^[a-z][a-z0-9_]*$`.
    #[error(
        "invalid alias prefix `{0}`: expected a lowercase letter followed by lowercase letters, digits or `_`"
    )]
    InvalidPrefix(String),
    /// The value is not a UUID (`8-4-4-4-12` hex digits).
    #[error("`{0}` is not a UUID")]
    NotAUuid(String),
    /// A snapshot entry is inconsistent (bad alias, duplicate, counter too low).
    #[error("invalid alias snapshot: {0}")]
    InvalidSnapshot(String),
    /// The conversation already holds its maximum number of aliases; nothing
    /// of the refused registration was kept.
    #[error(
        "this conversation already holds the maximum of {limit} ids; nothing more can be registered in it (start a new conversation)"
    )]
    LimitReached {
        /// The limit in force ([`AliasManager::limit`]).
        limit: usize,
    },
    /// The conversation's [`AliasStore`] could not be reached; nothing was written.
    #[error("{0}")]
    Store(#[from] StoreError),
}

/// The UUID ↔ alias maps of one conversation.
///
/// An alias is `PREFIX-N`, with `N` counted from 1 separately for every
/// prefix, in registration order. UUIDs are matched case-insensitively and
/// stored in lowercase. All replacement is structural: only a whole string
/// value (or, in text, a whole UUID token) is ever replaced, so `link-1` is
/// never confused with `link-10` and free text is never rewritten.
///
/// The manager is thread-safe; share it with an [`Arc`]. Use
/// one per conversation (see [`Sessions`](crate::Sessions)), never one per process.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::AliasManager;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let aliases = AliasManager::new();
/// let id = "D290F1EE-6C54-4B01-90E6-D701748F0851";
/// assert_eq!(aliases.register("link", id).await.unwrap(), "link-1");
/// assert_eq!(aliases.register("link", &id.to_lowercase()).await.unwrap(), "link-1");
/// assert_eq!(aliases.resolve("link-1").as_deref(), Some("d290f1ee-6c54-4b01-90e6-d701748f0851"));
/// assert_eq!(aliases.resolve("link-10"), None);
/// # }
/// ```
///
/// # One API for both back ends
///
/// What gives out aliases (the `register*` methods) and what asks a store
/// ([`fetch`](Self::fetch), [`list`](Self::list)) is async; what reads the
/// aliases already known (`resolve*`, `aliasify*`, [`aliases_of`](Self::aliases_of))
/// is not. Without a store every async method is ready at once: it never
/// waits, so any executor (even a no-op waker polled once) completes it.
///
/// # Bounds
///
/// A manager holds at most [`limit`](Self::limit) aliases (default
/// [`DEFAULT_LIMIT`](Self::DEFAULT_LIMIT)), so that one conversation cannot
/// grow without bound. At the limit, a registration of a new UUID fails
/// with [`AliasError::LimitReached`] and keeps nothing: [`register_all`](Self::register_all),
/// [`register_new_uuids`](Self::register_new_uuids) and
/// [`register_message`](Self::register_message) are all-or-nothing.
/// Already known UUIDs keep resolving and aliasing.
///
/// # Shared conversations
///
/// A manager built [`with_store`](Self::with_store) keeps the conversation in
/// an [`AliasStore`] (a [`RedisStore`](crate::store) shared by replicas, say)
/// and holds a local copy of what it has learnt. The `register*` methods
/// ask the store for their aliases (one atomic get-or-assign per call); the
/// synchronous reads work on the local copy, so before them
/// [`fetch`](Self::fetch) what a step is about to resolve or show, once.
/// Generated executors, native tools and the [`Toolkit`](crate::Toolkit)
/// do this themselves. Without a store, `fetch` does nothing.
#[derive(Debug)]
pub struct AliasManager {
    state: Mutex<AliasTable>,
    limit: usize,
    shared: Option<Shared>,
    /// With [`with_expiry`](Self::with_expiry): how long an alias is kept
    /// unused, in whole seconds (the limit then evicts instead of refusing).
    idle: Option<u32>,
    /// With [`with_counts`](Self::with_counts): where what it does is counted.
    counts: Option<Arc<AliasCounts>>,
}

impl From<AssignError> for AliasError {
    fn from(error: AssignError) -> Self {
        match error {
            AssignError::LimitReached { limit } => AliasError::LimitReached { limit },
            AssignError::Store(e) => AliasError::Store(e),
        }
    }
}

/// The store and key of a shared conversation.
#[derive(Debug, Clone)]
struct Shared {
    store: Arc<dyn AliasStore>,
    conversation: String,
}

impl Default for AliasManager {
    fn default() -> Self {
        Self {
            state: Mutex::default(),
            limit: Self::DEFAULT_LIMIT,
            shared: None,
            idle: None,
            counts: None,
        }
    }
}

/// A serialisable copy of an [`AliasManager`], so that a conversation's
/// aliases survive a process restart. Counters are kept, so the alias after
/// `link-3` is `link-4` after a restore.
///
/// # Examples
///
/// ```
/// use proto_ai_tools::AliasManager;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let before = AliasManager::new();
/// before.register("link", "d290f1ee-6c54-4b01-90e6-d701748f0851").await.unwrap();
/// let json = serde_json::to_string(&before.snapshot()).unwrap();
///
/// let after = AliasManager::from_snapshot(serde_json::from_str(&json).unwrap()).unwrap();
/// assert_eq!(after.register("link", "5a0c6a43-1c39-4d8e-9c54-0d1f51a3b0b7").await.unwrap(), "link-2");
/// # }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AliasSnapshot {
    /// Every registration, in order.
    pub entries: Vec<AliasEntry>,
    /// The last number given out per prefix.
    pub counters: BTreeMap<String, u64>,
}

/// How an inbound value in an alias-carrying field was judged by
/// [`AliasManager::resolve_for_field`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// The value is a known alias or UUID of the expected prefix; here is the UUID.
    Uuid(String),
    /// The value is empty and passes unchanged.
    Empty,
    /// The value is an alias of another prefix.
    WrongPrefix {
        /// The prefix the alias belongs to.
        actual: String,
    },
    /// A UUID this conversation has never seen under the expected prefix.
    UnknownUuid(String),
    /// Not an alias this conversation issued (for example an invented `step-0`).
    UnknownAlias,
    /// An alias this conversation issued and no longer holds: it went
    /// unused too long, or was the least recently used when the limit was
    /// reached ([`AliasManager::with_expiry`]). Its number is never given
    /// out again.
    Expired,
    /// An alias this conversation issued that its store lost (a failover
    /// promoted a replica that lagged behind the write), or that the store
    /// answered for a second object: it is never resolved, nor given out,
    /// again. The model should get the object again from a tool that lists
    /// or returns it.
    Lost,
}

impl AliasManager {
    /// The default bound on the aliases of one manager (one conversation):
    /// about 5 MB of maps at most.
    pub const DEFAULT_LIMIT: usize = 10_000;

    /// An empty manager.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(proto_ai_tools::AliasManager::new().is_empty());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Restores a manager from a [`snapshot`](Self::snapshot), checking that
    /// every entry is well formed and the counters are not behind the entries.
    ///
    /// # Errors
    ///
    /// [`AliasError`] when an entry has a bad prefix, alias or UUID, or is a duplicate.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::{AliasManager, alias::AliasSnapshot};
    /// let restored = AliasManager::from_snapshot(AliasSnapshot::default()).unwrap();
    /// assert!(restored.is_empty());
    /// ```
    pub fn from_snapshot(snapshot: AliasSnapshot) -> Result<Self, AliasError> {
        let mut state = AliasTable::default();
        for (prefix, n) in &snapshot.counters {
            check_prefix(prefix)?;
            state.set_counter(prefix, *n);
        }
        for entry in snapshot.entries {
            check_prefix(&entry.prefix)?;
            let uuid = canonical_uuid(&entry.uuid)
                .ok_or_else(|| AliasError::NotAUuid(entry.uuid.clone()))?;
            entry
                .alias
                .strip_prefix(entry.prefix.as_str())
                .and_then(|rest| rest.strip_prefix('-'))
                .and_then(|n| n.parse::<u64>().ok())
                .filter(|n| *n > 0)
                .ok_or_else(|| {
                    AliasError::InvalidSnapshot(format!(
                        "alias `{}` does not match prefix `{}`",
                        entry.alias, entry.prefix
                    ))
                })?;
            if state.lookup_alias(&entry.alias).is_some() {
                return Err(AliasError::InvalidSnapshot(format!(
                    "alias `{}` appears twice",
                    entry.alias
                )));
            }
            if state.alias_of(&entry.prefix, &uuid).is_some() {
                return Err(AliasError::InvalidSnapshot(format!(
                    "UUID `{uuid}` has two `{}` aliases",
                    entry.prefix
                )));
            }
            state.learn(&entry.prefix, uuid, entry.alias);
        }
        Ok(Self {
            state: Mutex::new(state),
            limit: Self::DEFAULT_LIMIT,
            shared: None,
            idle: None,
            counts: None,
        })
    }

    /// A manager of `conversation` whose aliases live in `store`, shared
    /// with every process that uses the same store (see [Shared
    /// conversations](Self#shared-conversations)). It starts with an empty
    /// local copy and learns from the store as it goes.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::{sync::Arc, time::Duration};
    /// use proto_ai_tools::{AliasManager, store::MemoryStore};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let store = Arc::new(MemoryStore::new(Duration::from_secs(1800)));
    /// let replica_a = AliasManager::with_store(store.clone(), "c1");
    /// let replica_b = AliasManager::with_store(store, "c1");
    /// let uuid = "d290f1ee-6c54-4b01-90e6-d701748f0851";
    /// assert_eq!(replica_a.register_all(&[("link", uuid)]).await.unwrap(), ["link-1"]);
    /// replica_b.fetch(&["link-1"]).await.unwrap();
    /// assert_eq!(replica_b.resolve("link-1").as_deref(), Some(uuid));
    /// # }
    /// ```
    pub fn with_store(store: Arc<dyn AliasStore>, conversation: impl Into<String>) -> Self {
        Self {
            state: Mutex::default(),
            limit: Self::DEFAULT_LIMIT,
            shared: Some(Shared {
                store,
                conversation: conversation.into(),
            }),
            idle: None,
            counts: None,
        }
    }

    /// The store the conversation lives in, if it is shared.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(proto_ai_tools::AliasManager::new().store().is_none());
    /// ```
    pub fn store(&self) -> Option<&Arc<dyn AliasStore>> {
        self.shared.as_ref().map(|s| &s.store)
    }

    /// Whether the conversation lives in a store (see [`with_store`](Self::with_store)).
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!proto_ai_tools::AliasManager::new().is_shared());
    /// ```
    pub fn is_shared(&self) -> bool {
        self.shared.is_some()
    }

    /// Sets the bound on the number of aliases (at least 1). A manager
    /// restored from a larger snapshot keeps every entry but registers no
    /// new UUID until it is under the bound.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::{AliasManager, alias::AliasError};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let aliases = AliasManager::new().with_limit(1);
    /// aliases.register("link", "d290f1ee-6c54-4b01-90e6-d701748f0851").await.unwrap();
    /// assert_eq!(
    ///     aliases.register("link", "5a0c6a43-1c39-4d8e-9c54-0d1f51a3b0b7").await,
    ///     Err(AliasError::LimitReached { limit: 1 })
    /// );
    /// // a known UUID keeps its alias
    /// assert_eq!(aliases.register("link", "d290f1ee-6c54-4b01-90e6-d701748f0851").await.unwrap(), "link-1");
    /// # }
    /// ```
    pub fn with_limit(mut self, limit: usize) -> Self {
        self.limit = limit.max(1);
        self
    }

    /// Makes this a namespace that never stops working, for one that lives
    /// long (an MCP caller's scope, across many conversations and days): an
    /// alias unused for `idle` (whole seconds; at least one) expires, and at
    /// the [limit](Self::with_limit) a registration of new UUIDs evicts the
    /// least recently used aliases instead of failing. Given out, shown in
    /// a result or resolved in arguments counts as used.
    ///
    /// Alias numbers are never given out twice, so an expired `link-7` is
    /// known as expired ([`Resolution::Expired`]; the model is told to get
    /// the id again), never confused with an invented alias, and never
    /// silently points at a new object. A batch of more new UUIDs than the
    /// limit is still refused whole ([`AliasError::LimitReached`]).
    ///
    /// A manager over a store holds only a copy: there the store's own
    /// expiry decides (`RedisStoreOptions::alias_idle`,
    /// [`MemoryStore::with_alias_idle`](crate::store::MemoryStore::with_alias_idle)).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use proto_ai_tools::{AliasManager, alias::Resolution};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let aliases = AliasManager::new().with_limit(2).with_expiry(Duration::from_secs(1800));
    /// aliases.register("link", "d290f1ee-6c54-4b01-90e6-d701748f0851").await.unwrap();
    /// aliases.register("link", "5a0c6a43-1c39-4d8e-9c54-0d1f51a3b0b7").await.unwrap();
    /// aliases.resolve("link-1"); // link-2 is now the least recently used
    /// // at the limit the least recently used expires, and numbers go on
    /// assert_eq!(aliases.register("link", "9b2f5c2e-4c1d-4f6e-8a3b-2d7c1e0f9a11").await.unwrap(), "link-3");
    /// assert_eq!(aliases.resolve_for_field("link", "link-2"), Resolution::Expired);
    /// assert!(aliases.resolve("link-1").is_some());
    /// # }
    /// ```
    pub fn with_expiry(mut self, idle: Duration) -> Self {
        self.idle = Some(crate::store::idle_secs(idle));
        self
    }

    /// Counts what this manager does in `counts` (aliases given, and
    /// resolved, expired or lost as models send them back), which other
    /// managers may share: every manager of a [`Sessions`](crate::Sessions)
    /// counts in its [`alias_counts`](crate::Sessions::alias_counts).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use proto_ai_tools::{AliasManager, alias::AliasCounts};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let counts = Arc::new(AliasCounts::default());
    /// let aliases = AliasManager::new().with_counts(counts.clone());
    /// aliases.register("link", "d290f1ee-6c54-4b01-90e6-d701748f0851").await.unwrap();
    /// // the same UUID again is no new alias
    /// aliases.register("link", "D290F1EE-6C54-4B01-90E6-D701748F0851").await.unwrap();
    /// assert_eq!(counts.given(), 1);
    /// # }
    /// ```
    pub fn with_counts(mut self, counts: Arc<AliasCounts>) -> Self {
        self.counts = Some(counts);
        self
    }

    /// How long an alias is kept unused, if it expires ([`with_expiry`](Self::with_expiry)).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// assert_eq!(proto_ai_tools::AliasManager::new().expiry(), None);
    /// let aliases = proto_ai_tools::AliasManager::new().with_expiry(Duration::from_secs(60));
    /// assert_eq!(aliases.expiry(), Some(Duration::from_secs(60)));
    /// ```
    pub fn expiry(&self) -> Option<Duration> {
        self.idle.map(|secs| Duration::from_secs(u64::from(secs)))
    }

    /// The bound on the number of aliases.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(proto_ai_tools::AliasManager::new().limit(), proto_ai_tools::AliasManager::DEFAULT_LIMIT);
    /// ```
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// A copy of every registration and counter, for [`from_snapshot`](Self::from_snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let aliases = proto_ai_tools::AliasManager::new();
    /// aliases.register("theme", "5a0c6a43-1c39-4d8e-9c54-0d1f51a3b0b7").await.unwrap();
    /// assert_eq!(aliases.snapshot().entries[0].alias, "theme-1");
    /// # }
    /// ```
    pub fn snapshot(&self) -> AliasSnapshot {
        let state = self.lock();
        AliasSnapshot {
            entries: state.entries(),
            counters: state.counters(),
        }
    }

    /// The number of registrations.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(proto_ai_tools::AliasManager::new().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether nothing has been registered.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(proto_ai_tools::AliasManager::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Registers `uuid` under `prefix` and returns its alias. The same UUID
    /// (in any letter case) registered again under the same prefix keeps its alias.
    ///
    /// # Errors
    ///
    /// [`AliasError::InvalidPrefix`], [`AliasError::NotAUuid`],
    /// [`AliasError::LimitReached`] for a new UUID at the [`limit`](Self::limit),
    /// or [`AliasError::Store`] when a shared conversation's store is
    /// unavailable; nothing is registered then.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let aliases = proto_ai_tools::AliasManager::new();
    /// assert_eq!(aliases.register("link", "d290f1ee-6c54-4b01-90e6-d701748f0851").await.unwrap(), "link-1");
    /// assert_eq!(aliases.register("link", "5a0c6a43-1c39-4d8e-9c54-0d1f51a3b0b7").await.unwrap(), "link-2");
    /// assert_eq!(aliases.register("theme", "5a0c6a43-1c39-4d8e-9c54-0d1f51a3b0b7").await.unwrap(), "theme-1");
    /// assert!(aliases.register("link", "not-a-uuid").await.is_err());
    /// # }
    /// ```
    pub async fn register(&self, prefix: &str, uuid: &str) -> Result<String, AliasError> {
        check_prefix(prefix)?;
        let uuid = canonical_uuid(uuid).ok_or_else(|| AliasError::NotAUuid(uuid.to_owned()))?;
        let Some(shared) = &self.shared else {
            return self.each_within_limit(|state| state.register(prefix, uuid));
        };
        let got = self
            .assign_shared(shared, &[(prefix.to_owned(), uuid)])
            .await?;
        // `assign_shared` refuses an answer without one alias per id.
        got.into_iter().next().ok_or_else(|| {
            AliasError::Store(StoreError::unavailable("the store answered no alias"))
        })
    }

    /// The UUID behind `alias` (matched case-insensitively, surrounding
    /// whitespace ignored), if this manager issued it.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let aliases = proto_ai_tools::AliasManager::new();
    /// aliases.register("link", "d290f1ee-6c54-4b01-90e6-d701748f0851").await.unwrap();
    /// assert!(aliases.resolve("link-1").is_some());
    /// assert!(aliases.resolve("link-2").is_none());
    /// # }
    /// ```
    pub fn resolve(&self, alias: &str) -> Option<String> {
        let key = alias.trim().to_ascii_lowercase();
        let mut state = self.lock();
        let uuid = state.uuid_of(&key);
        if uuid.is_some() && self.idle.is_some() {
            state.touch_alias(&key);
        }
        uuid
    }

    /// The alias of `uuid` (any prefix; the first registered), if known.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let aliases = proto_ai_tools::AliasManager::new();
    /// aliases.register("link", "d290f1ee-6c54-4b01-90e6-d701748f0851").await.unwrap();
    /// assert_eq!(aliases.alias_for("D290F1EE-6C54-4B01-90E6-D701748F0851").as_deref(), Some("link-1"));
    /// # }
    /// ```
    pub fn alias_for(&self, uuid: &str) -> Option<String> {
        let uuid = canonical_uuid(uuid)?;
        self.lock().first_alias(&uuid)
    }

    /// Every alias of `prefix`, in the order they were given out (for error
    /// messages that name the valid choices).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let aliases = proto_ai_tools::AliasManager::new();
    /// aliases.register("step", "d290f1ee-6c54-4b01-90e6-d701748f0851").await.unwrap();
    /// assert_eq!(aliases.aliases_of("step"), ["step-1"]);
    /// assert!(aliases.aliases_of("link").is_empty());
    /// # }
    /// ```
    pub fn aliases_of(&self, prefix: &str) -> Vec<String> {
        self.lock().aliases_of_prefix(prefix)
    }

    /// Judges a value the model sent in a field that carries `prefix`: a
    /// known alias of that prefix, or a UUID already registered under it,
    /// resolves to the UUID; anything else is refused with the reason.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::{AliasManager, alias::Resolution};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let aliases = AliasManager::new();
    /// aliases.register("link", "d290f1ee-6c54-4b01-90e6-d701748f0851").await.unwrap();
    /// aliases.register("step", "5a0c6a43-1c39-4d8e-9c54-0d1f51a3b0b7").await.unwrap();
    /// assert!(matches!(aliases.resolve_for_field("link", "link-1"), Resolution::Uuid(_)));
    /// assert!(matches!(aliases.resolve_for_field("link", "step-1"), Resolution::WrongPrefix { .. }));
    /// assert_eq!(aliases.resolve_for_field("step", "step-0"), Resolution::UnknownAlias);
    /// # }
    /// ```
    pub fn resolve_for_field(&self, prefix: &str, value: &str) -> Resolution {
        let trimmed = value.trim();
        if trimmed.is_empty() {
            return Resolution::Empty;
        }
        let mut state = self.lock();
        let key = trimmed.to_ascii_lowercase();
        if let Some((actual, uuid)) = state.lookup_alias(&key) {
            let found = if actual == prefix {
                Resolution::Uuid(uuid)
            } else {
                Resolution::WrongPrefix {
                    actual: actual.to_owned(),
                }
            };
            if matches!(found, Resolution::Uuid(_)) {
                if self.idle.is_some() {
                    state.touch_alias(&key);
                }
                self.count(AliasCounts::add_resolved);
            }
            return found;
        }
        if state.is_lost(&key) {
            self.count(AliasCounts::add_lost);
            return Resolution::Lost;
        }
        if state.is_expired(&key) {
            self.count(AliasCounts::add_expired);
            return Resolution::Expired;
        }
        if let Some(uuid) = canonical_uuid(trimmed) {
            let known = state.prefixes_of_uuid(&uuid);
            return if known.contains(&prefix) {
                Resolution::Uuid(uuid)
            } else if let Some(actual) = known.first() {
                Resolution::WrongPrefix {
                    actual: (*actual).to_owned(),
                }
            } else {
                Resolution::UnknownUuid(uuid)
            };
        }
        Resolution::UnknownAlias
    }

    /// Replaces, in place, every string value of `value` that is exactly a
    /// known UUID (any letter case) with its alias. Object keys, substrings
    /// and unknown UUIDs are left alone. One hash lookup per UUID-shaped string.
    ///
    /// For hand-written tools; generated executors alias by field instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let aliases = proto_ai_tools::AliasManager::new();
    /// aliases.register("link", "d290f1ee-6c54-4b01-90e6-d701748f0851").await.unwrap();
    /// let mut v = json!({"id": "d290f1ee-6c54-4b01-90e6-d701748f0851",
    ///                    "note": "see d290f1ee-6c54-4b01-90e6-d701748f0851"});
    /// aliases.aliasify_json(&mut v);
    /// assert_eq!(v, json!({"id": "link-1", "note": "see d290f1ee-6c54-4b01-90e6-d701748f0851"}));
    /// # }
    /// ```
    pub fn aliasify_json(&self, value: &mut serde_json::Value) {
        let state = self.lock();
        walk_strings(value, &mut |s| {
            if let Some(uuid) = canonical_uuid(s)
                && let Some(alias) = state.first_alias(&uuid)
            {
                *s = alias.to_owned();
            }
        });
    }

    /// Replaces, in place, every string value of `value` that is exactly an
    /// alias this manager issued with its UUID (no prefix check: for
    /// hand-written tools that declare no fields; generated executors check
    /// prefixes by field). `link-1` inside a longer string is left alone.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let aliases = proto_ai_tools::AliasManager::new();
    /// aliases.register("link", "d290f1ee-6c54-4b01-90e6-d701748f0851").await.unwrap();
    /// let mut v = json!({"ids": ["link-1", "link-10"], "text": "open link-1"});
    /// aliases.resolve_json(&mut v);
    /// assert_eq!(v, json!({"ids": ["d290f1ee-6c54-4b01-90e6-d701748f0851", "link-10"], "text": "open link-1"}));
    /// # }
    /// ```
    pub fn resolve_json(&self, value: &mut serde_json::Value) {
        let state = self.lock();
        walk_strings(value, &mut |s| {
            let candidate = s.trim();
            // Most strings (names, URLs, free text) cannot be an alias: decide
            // that on the bytes, before any allocation.
            if candidate.len() > MAX_ALIAS_LEN || prefix_of(candidate).is_none() {
                return;
            }
            let found = if candidate.bytes().any(|b| b.is_ascii_uppercase()) {
                state.uuid_of(&candidate.to_ascii_lowercase())
            } else {
                state.uuid_of(candidate)
            };
            if let Some(uuid) = found {
                *s = uuid;
            }
        });
    }

    /// Registers, under `prefix`, every whole UUID token in `text` that this
    /// conversation does not know yet (under any prefix), in document order,
    /// and returns the new aliases. For ids from non-proto sources; it cannot
    /// tell a link id from a workspace id, so prefer [`register`](Self::register).
    /// With a store, the store is asked first which of the UUIDs it knows.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let aliases = proto_ai_tools::AliasManager::new();
    /// let text = "links d290f1ee-6c54-4b01-90e6-d701748f0851 and 5a0c6a43-1c39-4d8e-9c54-0d1f51a3b0b7";
    /// assert_eq!(aliases.register_new_uuids("link", text).await.unwrap(), ["link-1", "link-2"]);
    /// assert!(aliases.register_new_uuids("link", text).await.unwrap().is_empty());
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`AliasError::InvalidPrefix`], [`AliasError::LimitReached`] when
    /// the new UUIDs do not all fit under the [`limit`](Self::limit), or
    /// [`AliasError::Store`] when the store is unavailable; then none of
    /// them is registered.
    pub async fn register_new_uuids(
        &self,
        prefix: &str,
        text: &str,
    ) -> Result<Vec<String>, AliasError> {
        check_prefix(prefix)?;
        let Some(shared) = &self.shared else {
            return self.each_within_limit(|state| {
                unknown_uuids(state, text)
                    .into_iter()
                    .map(|uuid| state.register(prefix, uuid))
                    .collect()
            });
        };
        self.fetch_text(text).await?;
        let ids: Vec<(String, String)> = unknown_uuids(&self.lock(), text)
            .into_iter()
            .map(|uuid| (prefix.to_owned(), uuid))
            .collect();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.assign_shared(shared, &ids).await
    }

    /// `text` with every whole UUID token this manager knows replaced by its
    /// alias, for prompt text and error messages. Unknown UUIDs stay.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let aliases = proto_ai_tools::AliasManager::new();
    /// aliases.register("link", "d290f1ee-6c54-4b01-90e6-d701748f0851").await.unwrap();
    /// assert_eq!(
    ///     aliases.aliasify_text("Current link: D290F1EE-6C54-4B01-90E6-D701748F0851."),
    ///     "Current link: link-1."
    /// );
    /// # }
    /// ```
    pub fn aliasify_text(&self, text: &str) -> String {
        let state = self.lock();
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for (start, end) in uuid_tokens(text) {
            if let Some(alias) = state.first_alias(&text[start..end].to_ascii_lowercase()) {
                out.push_str(&text[last..start]);
                out.push_str(&alias);
                last = end;
            }
        }
        out.push_str(&text[last..]);
        out
    }

    /// Registers and aliases, in place, the ids of a response message: every
    /// string field listed in `prefixes` (matched by the message's full name
    /// and the field's proto name, at any depth, singular or repeated) whose
    /// value is a UUID is registered under that field's prefix and replaced
    /// with its alias. Other fields are never touched, whatever their JSON
    /// name. Fields are walked in field-number order, so aliases are
    /// deterministic. All or nothing: the ids are collected first and given
    /// aliases together (with a store, in one atomic get-or-assign), and the
    /// message changes only once every one has its alias.
    ///
    /// # Examples
    ///
    /// ```
    /// use proto_ai_tools::{AliasManager, alias::FieldPrefix};
    /// use prost_reflect::{DescriptorPool, DynamicMessage, Value};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let desc = DescriptorPool::global().get_message_by_name("google.protobuf.StringValue").unwrap();
    /// let mut message = DynamicMessage::new(desc);
    /// message.set_field_by_name("value", Value::String("D290F1EE-6C54-4B01-90E6-D701748F0851".into()));
    ///
    /// let aliases = AliasManager::new();
    /// let prefixes = [FieldPrefix::new("google.protobuf.StringValue", "value", "link")];
    /// aliases.register_message(&mut message, &prefixes).await.unwrap();
    /// assert_eq!(message.get_field_by_name("value").unwrap().as_str(), Some("link-1"));
    /// assert!(aliases.resolve("link-1").is_some());
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`AliasError::LimitReached`] when the message's new UUIDs do not all
    /// fit under the [`limit`](Self::limit), or [`AliasError::Store`] when
    /// the store is unavailable; then nothing is registered and the message
    /// is left unchanged.
    pub async fn register_message(
        &self,
        message: &mut DynamicMessage,
        prefixes: &[FieldPrefix],
    ) -> Result<(), AliasError> {
        let plan = WalkPlan::new(&message.descriptor(), prefixes);
        self.register_planned(message, &plan).await
    }

    /// [`register_message`](Self::register_message) along a plan made
    /// before (the executor keeps one per tool).
    pub(crate) async fn register_planned(
        &self,
        message: &mut DynamicMessage,
        plan: &WalkPlan<'_>,
    ) -> Result<(), AliasError> {
        if !self.is_shared() {
            return self.register_planned_locally(message, plan);
        }
        // With a store, the first walk only learns the ids and the second
        // writes their aliases: the message changes only once all are given.
        let mut alias = String::new();
        let walked: Result<(), std::convert::Infallible> = self
            .assign_written(|alias_for| {
                plan.walk(message, 0, &mut |fp, s| {
                    alias.clear();
                    if alias_for(fp.prefix, s, &mut alias) {
                        s.clone_from(&alias);
                    }
                });
                Ok(())
            })
            .await?;
        walked.map_err(|never| match never {})
    }

    fn register_planned_locally(
        &self,
        message: &mut DynamicMessage,
        plan: &WalkPlan<'_>,
    ) -> Result<(), AliasError> {
        // The ids first, then all registered or none, then written: the
        // message changes only once every id has its alias. The second walk
        // meets the same strings in the same order.
        let mut ids = Vec::new();
        plan.walk(message, 0, &mut |fp, s| {
            if let Some(uuid) = uuid_bytes(s) {
                ids.push((fp.prefix, uuid));
            }
        });
        let aliases = self.each_within_limit(|state| {
            ids.iter()
                .map(|(prefix, uuid)| state.register_bytes(prefix, *uuid))
                .collect::<Vec<_>>()
        })?;
        let mut aliases = aliases.into_iter();
        plan.walk(message, 0, &mut |_, s| {
            if uuid_bytes(s).is_some()
                && let Some(alias) = aliases.next()
            {
                *s = alias;
            }
        });
        Ok(())
    }

    /// Makes the local copy know every alias and UUID among `values` that
    /// the conversation's store knows, in one request, so that the
    /// synchronous methods ([`resolve_for_field`](Self::resolve_for_field),
    /// [`resolve_json`](Self::resolve_json), [`aliasify_json`](Self::aliasify_json),
    /// [`aliasify_text`](Self::aliasify_text)) see them. Values that are
    /// neither alias- nor UUID-shaped are skipped. Refreshes the
    /// conversation's TTL in the store. Without a store, does nothing, and
    /// `values` (any iterator of strings) is not even read.
    ///
    /// When the store's conversation is not the one the local copy was
    /// learnt from (it expired and began again), the local copy is dropped.
    ///
    /// # Errors
    ///
    /// [`AliasError::Store`] when the store is unavailable; the local copy is unchanged.
    ///
    /// # Examples
    ///
    /// See [`with_store`](Self::with_store).
    pub async fn fetch<I>(&self, values: I) -> Result<(), AliasError>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let Some(shared) = &self.shared else {
            return Ok(());
        };
        let (aliases, uuids) = fetch_keys(values);
        if aliases.is_empty() && uuids.is_empty() {
            return Ok(());
        }
        let (floor, fresh) = self.floor(shared);
        let found = shared
            .store
            .lookup(&shared.conversation, &aliases, &uuids, &floor)
            .await?;
        let mut state = self.lock();
        state.enter_epoch(found.epoch.as_deref(), fresh);
        state.heard_now();
        let flag = |list: &[bool], i: usize| list.get(i).copied().unwrap_or(false);
        for (i, (alias, uuid)) in aliases.iter().zip(found.aliases).enumerate() {
            let (expired, lost) = (flag(&found.expired, i), flag(&found.lost, i));
            match (uuid, prefix_of(alias)) {
                // One of the two lost writes when they disagree: neither
                // meaning can be trusted, so the alias means nothing more.
                (Some(uuid), Some(prefix)) if !state.learn(prefix, uuid.clone(), alias.clone()) => {
                    state.mark_lost(alias);
                }
                // The store no longer holds it: neither does the copy, and
                // an expired or lost one is known as such, not as invented.
                (None, Some(_)) if lost => state.mark_lost(alias),
                (None, Some(_)) => {
                    state.forget_alias(alias);
                    if expired {
                        state.note_given(alias);
                    }
                }
                _ => {}
            }
        }
        for (uuid, known) in uuids.iter().zip(found.uuids) {
            for alias in known {
                if let Some(prefix) = prefix_of(&alias)
                    && !state.learn(prefix, uuid.clone(), alias.clone())
                {
                    state.mark_lost(&alias);
                }
            }
        }
        Ok(())
    }

    /// What this manager has seen, for the store (see [`Floor`]), and
    /// whether the local copy is fresh: heard from the store within its
    /// TTL. A stale copy may describe a conversation the store forgot, so
    /// it is dropped and sends no floor.
    fn floor(&self, shared: &Shared) -> (Floor, bool) {
        let mut state = self.lock();
        if state.heard_within(shared.store.ttl()) {
            (state.floor(), true)
        } else {
            state.enter_epoch(None, false);
            (Floor::default(), false)
        }
    }

    /// [`fetch`](Self::fetch) for every string value of `value` (not its
    /// keys) before [`aliasify_json`](Self::aliasify_json) or
    /// [`resolve_json`](Self::resolve_json).
    ///
    /// # Errors
    ///
    /// As [`fetch`](Self::fetch).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let aliases = proto_ai_tools::AliasManager::new();
    /// aliases.fetch_json(&serde_json::json!({"id": "link-1"})).await.unwrap();
    /// # }
    /// ```
    pub async fn fetch_json(&self, value: &serde_json::Value) -> Result<(), AliasError> {
        if self.shared.is_none() {
            return Ok(());
        }
        self.fetch(json_strings(value)).await
    }

    /// [`fetch`](Self::fetch) for the whole UUID tokens of `text` (a
    /// server's error message, a prompt) before [`aliasify_text`](Self::aliasify_text).
    ///
    /// # Errors
    ///
    /// As [`fetch`](Self::fetch).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let aliases = proto_ai_tools::AliasManager::new();
    /// aliases.fetch_text("no store: nothing to do").await.unwrap();
    /// # }
    /// ```
    pub async fn fetch_text(&self, text: &str) -> Result<(), AliasError> {
        if self.shared.is_none() {
            return Ok(());
        }
        let tokens: Vec<&str> = uuid_tokens(text)
            .into_iter()
            .map(|(start, end)| &text[start..end])
            .collect();
        self.fetch(&tokens).await
    }

    /// Registers every `(prefix, uuid)` of `ids` and returns their aliases in
    /// order: all or nothing under the [`limit`](Self::limit). With a store,
    /// one atomic get-or-assign in the store (two replicas registering the
    /// same UUID at once get one alias); without, [`register`](Self::register)
    /// for each.
    ///
    /// # Errors
    ///
    /// [`AliasError::InvalidPrefix`], [`AliasError::NotAUuid`],
    /// [`AliasError::LimitReached`], or [`AliasError::Store`] when the store
    /// is unavailable; nothing is registered then.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let aliases = proto_ai_tools::AliasManager::new();
    /// let got = aliases
    ///     .register_all(&[("link", "d290f1ee-6c54-4b01-90e6-d701748f0851"), ("theme", "5a0c6a43-1c39-4d8e-9c54-0d1f51a3b0b7")])
    ///     .await
    ///     .unwrap();
    /// assert_eq!(got, ["link-1", "theme-1"]);
    /// # }
    /// ```
    pub async fn register_all(&self, ids: &[(&str, &str)]) -> Result<Vec<String>, AliasError> {
        let mut canonical = Vec::with_capacity(ids.len());
        for (prefix, uuid) in ids {
            check_prefix(prefix)?;
            let uuid =
                canonical_uuid(uuid).ok_or_else(|| AliasError::NotAUuid((*uuid).to_owned()))?;
            canonical.push(((*prefix).to_owned(), uuid));
        }
        let Some(shared) = &self.shared else {
            return self.each_within_limit(|state| {
                canonical
                    .into_iter()
                    .map(|(p, u)| state.register(&p, u))
                    .collect()
            });
        };
        let unique = dedup(canonical.clone());
        let got = self.assign_shared(shared, &unique).await?;
        let by_id: HashMap<&(String, String), &String> = unique.iter().zip(&got).collect();
        Ok(canonical
            .iter()
            .filter_map(|id| by_id.get(id).map(|a| (*a).clone()))
            .collect())
    }

    /// Runs `write`, which writes a response out and meets its ids on the
    /// way, and gives every id it meets an alias, all or none. `write` is
    /// handed a function that, given an id's prefix and text, appends the
    /// alias to write instead to its third argument and returns `true`
    /// (`false`: no UUID, write the text as it is).
    ///
    /// Without a store, `write` runs once, registering as it goes; past the
    /// limit, or when `write` fails, everything it registered is undone.
    /// With a store it runs twice: first to learn the ids (what it writes is
    /// kept only when it met none), then, after one request to the store, to
    /// write their aliases.
    pub(crate) async fn assign_written<T, E>(
        &self,
        mut write: impl FnMut(&mut dyn FnMut(&str, &str, &mut String) -> bool) -> Result<T, E>,
    ) -> Result<Result<T, E>, AliasError> {
        let Some(shared) = &self.shared else {
            return self.within_limit(|state| {
                write(&mut |prefix, text, alias| {
                    let uuid = uuid_bytes(text);
                    if let Some(uuid) = uuid {
                        state.register_bytes_into(prefix, uuid, alias);
                    }
                    uuid.is_some()
                })
            });
        };
        let mut ids = Vec::new();
        let learnt = write(&mut |prefix, text, _| {
            if let Some(uuid) = canonical_uuid(text) {
                ids.push((prefix.to_owned(), uuid));
            }
            false
        });
        if learnt.is_err() || ids.is_empty() {
            return Ok(learnt);
        }
        drop(learnt);
        let ids = dedup(ids);
        let got = self.assign_shared(shared, &ids).await?;
        let by_id: HashMap<(&str, &str), &str> = ids
            .iter()
            .zip(&got)
            .map(|((p, u), a)| ((p.as_str(), u.as_str()), a.as_str()))
            .collect();
        Ok(write(&mut |prefix, text, alias| {
            let found =
                canonical_uuid(text).and_then(|uuid| by_id.get(&(prefix, uuid.as_str())).copied());
            if let Some(found) = found {
                alias.push_str(found);
            }
            found.is_some()
        }))
    }

    /// Every alias of `prefix` in order, as [`aliases_of`](Self::aliases_of),
    /// but asked of the store when the conversation is shared (a replica's
    /// local copy may miss aliases another replica gave out).
    ///
    /// # Errors
    ///
    /// [`AliasError::Store`] when the store is unavailable.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let aliases = proto_ai_tools::AliasManager::new();
    /// aliases.register("step", "d290f1ee-6c54-4b01-90e6-d701748f0851").await.unwrap();
    /// assert_eq!(aliases.list("step").await.unwrap(), ["step-1"]);
    /// # }
    /// ```
    pub async fn list(&self, prefix: &str) -> Result<Vec<String>, AliasError> {
        match &self.shared {
            None => Ok(self.aliases_of(prefix)),
            Some(shared) => Ok(shared.store.list(&shared.conversation, prefix).await?),
        }
    }

    async fn assign_shared(
        &self,
        shared: &Shared,
        ids: &[(String, String)],
    ) -> Result<Vec<String>, AliasError> {
        let (floor, fresh) = self.floor(shared);
        let got = shared
            .store
            .assign(&shared.conversation, ids, self.limit, &floor)
            .await?;
        if got.aliases.len() != ids.len() {
            return Err(AliasError::Store(StoreError::unavailable(format!(
                "the store answered {} aliases for {} ids",
                got.aliases.len(),
                ids.len()
            ))));
        }
        let mut state = self.lock();
        state.enter_epoch(Some(&got.epoch), fresh);
        state.heard_now();
        let mut refused = None;
        let mut given = 0;
        for ((prefix, uuid), alias) in ids.iter().zip(&got.aliases) {
            // Asked only when counted: the lookup copies the UUID.
            let new_here = self.counts.is_some() && state.lookup_alias(alias).is_none();
            // A store that lost writes, and gave a number out again before
            // any process that saw it sent its floor, answers an alias this
            // copy holds for another object, or knows lost: never show it.
            if !state.learn(prefix, uuid.clone(), alias.clone()) {
                state.mark_lost(alias);
                refused.get_or_insert_with(|| alias.clone());
            } else if new_here {
                given += 1;
            }
        }
        if refused.is_none()
            && let Some(counts) = &self.counts
        {
            counts.add_given(given);
        }
        if let Some(alias) = refused {
            return Err(AliasError::Store(StoreError::unavailable(format!(
                "the store gave out {alias} again, which this process saw given to another object before the store lost it; it is refused, and the object gets no alias"
            ))));
        }
        Ok(got.aliases)
    }

    /// Runs `register` on the local table under one lock, all or none: when
    /// it fails, or adds aliases past the [`limit`](Self::limit), everything
    /// it registered is undone. Known UUIDs keep their aliases even in a
    /// table restored over the limit. The one place the limit is applied to
    /// a local table.
    fn within_limit<T, E>(
        &self,
        register: impl FnOnce(&mut AliasTable) -> Result<T, E>,
    ) -> Result<Result<T, E>, AliasError> {
        let mut state = self.lock();
        let checkpoint = state.checkpoint();
        let before = state.len();
        let registered = register(&mut state);
        let mut over_limit = state.len() > before && state.len() > self.limit;
        // A namespace that expires makes room: the least recently used
        // aliases this batch did not use go (too few refuses the batch).
        if over_limit && registered.is_ok() && self.idle.is_some() && {
            let excess = state.len() - self.limit;
            state.evict_least_recently_used(excess, &checkpoint)
        } {
            over_limit = false;
        }
        if registered.is_err() || over_limit {
            state.rollback(checkpoint);
        } else if let Some(counts) = &self.counts {
            counts.add_given(state.numbers_given_since(&checkpoint));
        }
        if registered.is_ok() && over_limit {
            return Err(AliasError::LimitReached { limit: self.limit });
        }
        Ok(registered)
    }

    /// [`within_limit`](Self::within_limit) for registering that cannot fail.
    fn each_within_limit<T>(
        &self,
        register: impl FnOnce(&mut AliasTable) -> T,
    ) -> Result<T, AliasError> {
        match self.within_limit(|state| Ok::<T, std::convert::Infallible>(register(state)))? {
            Ok(registered) => Ok(registered),
            Err(never) => match never {},
        }
    }

    /// Counts one event, when this manager counts ([`with_counts`](Self::with_counts)).
    fn count(&self, add: fn(&AliasCounts)) {
        if let Some(counts) = &self.counts {
            add(counts);
        }
    }

    fn lock(&self) -> MutexGuard<'_, AliasTable> {
        // A panic elsewhere while holding the lock leaves the maps consistent
        // (every mutation is a few inserts), so keep serving.
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(idle) = self.idle {
            state.expire_idle(idle);
        }
        state
    }
}

fn walk_strings(value: &mut serde_json::Value, f: &mut dyn FnMut(&mut String)) {
    // Iterative, so that deep JSON cannot overflow the stack.
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            serde_json::Value::String(s) => f(s),
            serde_json::Value::Array(items) => stack.extend(items.iter_mut().rev()),
            serde_json::Value::Object(map) => {
                let mut children: Vec<_> = map.values_mut().collect();
                children.reverse();
                stack.extend(children);
            }
            _ => {}
        }
    }
}

/// The distinct whole UUID tokens of `text` (lowercase, in document order)
/// that `state` knows under no prefix.
fn unknown_uuids(state: &AliasTable, text: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    uuid_tokens(text)
        .into_iter()
        .map(|(start, end)| text[start..end].to_ascii_lowercase())
        .filter(|uuid| !state.knows_uuid(uuid) && seen.insert(uuid.clone()))
        .collect()
}

/// The distinct items of `items`, first occurrence first.
fn dedup(items: Vec<(String, String)>) -> Vec<(String, String)> {
    let mut seen = HashSet::with_capacity(items.len());
    items
        .into_iter()
        .filter(|item| seen.insert(item.clone()))
        .collect()
}

/// The longest string taken for an alias; aliases are short.
const MAX_ALIAS_LEN: usize = 80;

/// Splits `values` into the distinct alias-shaped keys (trimmed, lowercase)
/// and the distinct UUIDs (lowercase) among them.
pub(crate) fn fetch_keys(
    values: impl IntoIterator<Item = impl AsRef<str>>,
) -> (Vec<String>, Vec<String>) {
    let (mut aliases, mut uuids) = (Vec::new(), Vec::new());
    let (mut seen_a, mut seen_u) = (HashSet::new(), HashSet::new());
    for value in values {
        let trimmed = value.as_ref().trim();
        if let Some(uuid) = canonical_uuid(trimmed) {
            if seen_u.insert(uuid.clone()) {
                uuids.push(uuid);
            }
        } else if trimmed.len() <= MAX_ALIAS_LEN {
            let key = trimmed.to_ascii_lowercase();
            if prefix_of(&key).is_some_and(|p| check_prefix(p).is_ok())
                && seen_a.insert(key.clone())
            {
                aliases.push(key);
            }
        }
    }
    (aliases, uuids)
}

/// Every string of `value` (not keys), for [`AliasManager::fetch`].
fn json_strings(value: &serde_json::Value) -> Vec<&str> {
    let mut out = Vec::new();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            serde_json::Value::String(s) => out.push(s.as_str()),
            serde_json::Value::Array(items) => stack.extend(items.iter()),
            serde_json::Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    out
}

pub(crate) fn check_prefix(prefix: &str) -> Result<(), AliasError> {
    if proto_ai_tools_schema::names::is_alias_prefix(prefix) {
        Ok(())
    } else {
        Err(AliasError::InvalidPrefix(prefix.to_owned()))
    }
}

#[cfg(test)]
mod tests;
