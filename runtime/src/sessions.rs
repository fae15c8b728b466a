//! One alias namespace per conversation, shared transport, bounded lifetime.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

// tokio's clock, so that tests can pause and advance it instead of sleeping
// through a TTL (outside a runtime it is the system's monotonic clock).
use tokio::time::Instant;

use crate::alias::{AliasCounts, AliasError, AliasManager, AliasSnapshot};
use crate::executor::GeneratedExecutor;
use crate::expiring::ExpiringMap;
use crate::store::{AliasStore, StoreError};

/// Per-conversation alias namespaces over one shared transport.
///
/// Each conversation id gets its own [`AliasManager`]; executors built with
/// [`for_conversation`](Self::for_conversation) share it, so every tool of
/// a conversation (generated or hand-written) sees the same `link-1`, and no
/// two conversations ever see each other's. A conversation idle longer than
/// the TTL is forgotten; past the capacity, the least recently used one is.
/// An empty conversation id gets a throwaway namespace, never a shared one.
///
/// # In use, eviction and bounds
///
/// A conversation is *in use* while anything besides `Sessions` holds its
/// `Arc<AliasManager>`: an executor from [`for_conversation`](Self::for_conversation)
/// (which a running call holds), or a manager from [`alias_manager`](Self::alias_manager).
/// A conversation in use is never forgotten, neither by the TTL nor by the
/// capacity bound, so two executors of one conversation always share one
/// namespace. The capacity therefore bounds the *idle* conversations kept:
/// when every kept conversation is in use, a new one is still admitted (the
/// count exceeds the capacity by at most the number of conversations in use
/// at once), and the excess idle ones are forgotten, least recently used
/// first, as soon as they are released and another conversation arrives.
/// Each namespace is bounded too ([`with_alias_limit`](Self::with_alias_limit)).
///
/// # Several replicas
///
/// With [`with_store`](Self::with_store), every conversation lives in an
/// [`AliasStore`] (a `RedisStore` shared by the replicas): its managers are
/// [shared](AliasManager#shared-conversations), and what `Sessions` keeps
/// per conversation is only the local copy, so the TTL and capacity here
/// bound memory, while the store's own TTL decides when a conversation is
/// forgotten. The empty conversation id still gets a throwaway, unshared namespace.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use proto_ai_tools::{Sessions, transport::InProcessTransport};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let sessions = Sessions::new(InProcessTransport::new(), Duration::from_secs(1800)).with_capacity(10_000);
/// let a = sessions.alias_manager("conversation-a");
/// let b = sessions.alias_manager("conversation-b");
/// a.register("link", "d290f1ee-6c54-4b01-90e6-d701748f0851").await.unwrap();
/// assert!(b.resolve("link-1").is_none());
/// assert!(sessions.alias_manager("conversation-a").resolve("link-1").is_some());
/// # }
/// ```
#[derive(Debug)]
pub struct Sessions<T> {
    transport: T,
    alias_limit: usize,
    /// [`with_alias_expiry`](Sessions::with_alias_expiry).
    alias_expiry: Option<Duration>,
    store: Option<Arc<dyn AliasStore>>,
    /// Shared by every manager made here ([`Sessions::alias_counts`]).
    alias_counts: Arc<AliasCounts>,
    /// The conversations kept, pinned while in use.
    inner: Mutex<ExpiringMap<Arc<str>, Arc<AliasManager>>>,
}

/// Held outside `Sessions` (by an executor, a running call, a caller).
/// Checked under the `Sessions` lock: an `Arc` only the map holds cannot be
/// cloned by anyone else meanwhile.
fn in_use(aliases: &Arc<AliasManager>) -> bool {
    Arc::strong_count(aliases) > 1
}

impl<T> Sessions<T> {
    /// The default capacity bound: conversations kept at once.
    pub const DEFAULT_CAPACITY: usize = 10_000;

    /// Sessions over `transport`, forgetting a conversation after `ttl` without use.
    ///
    /// # Examples
    ///
    /// See [`Sessions`].
    pub fn new(transport: T, ttl: Duration) -> Self {
        let mut conversations = ExpiringMap::new(ttl).pinned_while(in_use);
        conversations.set_capacity(Self::DEFAULT_CAPACITY);
        Self {
            transport,
            alias_limit: AliasManager::DEFAULT_LIMIT,
            alias_expiry: None,
            store: None,
            alias_counts: Arc::default(),
            inner: Mutex::new(conversations),
        }
    }

    /// Keeps every conversation (but the empty id's) in `store`, shared
    /// with every other `Sessions` over the same store: another replica, or
    /// this process after a restart (see [Several replicas](Self#several-replicas)).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::{sync::Arc, time::Duration};
    /// let store = Arc::new(proto_ai_tools::store::MemoryStore::new(Duration::from_secs(1800)));
    /// let sessions = proto_ai_tools::Sessions::new((), Duration::from_secs(60)).with_store(store);
    /// assert!(sessions.alias_manager("c1").is_shared());
    /// assert!(!sessions.alias_manager("").is_shared());
    /// ```
    pub fn with_store(mut self, store: Arc<dyn AliasStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// The store conversations live in, if any.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(proto_ai_tools::Sessions::new((), std::time::Duration::from_secs(60)).store().is_none());
    /// ```
    pub fn store(&self) -> Option<&Arc<dyn AliasStore>> {
        self.store.as_ref()
    }

    /// Bounds the aliases of every conversation created from now on (see
    /// [`AliasManager::with_limit`]); the default is [`AliasManager::DEFAULT_LIMIT`].
    ///
    /// # Examples
    ///
    /// ```
    /// let sessions = proto_ai_tools::Sessions::new((), std::time::Duration::from_secs(60)).with_alias_limit(100);
    /// assert_eq!(sessions.alias_manager("a").limit(), 100);
    /// assert_eq!(sessions.alias_manager("").limit(), 100);
    /// ```
    pub fn with_alias_limit(mut self, limit: usize) -> Self {
        self.alias_limit = limit.max(1);
        self
    }

    /// Makes every conversation created from now on one that never stops
    /// working: its aliases expire after `idle` unused, and at the alias
    /// limit the least recently used go instead of new ones being refused
    /// (see [`AliasManager::with_expiry`]). For namespaces that live long,
    /// such as an MCP caller's across conversations; give the
    /// conversations a TTL well past `idle`, since a conversation forgotten
    /// whole starts its numbering again. With a store, the store's own
    /// alias expiry decides what is held.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// let sessions = proto_ai_tools::Sessions::new((), Duration::from_secs(86_400))
    ///     .with_alias_expiry(Duration::from_secs(1800));
    /// assert_eq!(sessions.alias_manager("a").expiry(), Some(Duration::from_secs(1800)));
    /// ```
    pub fn with_alias_expiry(mut self, idle: Duration) -> Self {
        self.alias_expiry = Some(idle);
        self
    }

    /// What the alias managers of these sessions did, counted (aliases
    /// given, and resolved, expired or lost as models sent them back), for
    /// a metrics exporter to read. See [`AliasCounts`].
    pub fn alias_counts(&self) -> &Arc<AliasCounts> {
        &self.alias_counts
    }

    fn new_manager(&self, conversation_id: &str) -> AliasManager {
        let manager = match &self.store {
            Some(store) if !conversation_id.is_empty() => {
                AliasManager::with_store(store.clone(), conversation_id)
            }
            _ => AliasManager::new(),
        }
        .with_limit(self.alias_limit)
        .with_counts(self.alias_counts.clone());
        match self.alias_expiry {
            Some(idle) => manager.with_expiry(idle),
            None => manager,
        }
    }

    /// Keeps at most `capacity` idle conversations (at least 1), evicting
    /// the least recently used; conversations in use are never evicted (see
    /// [`Sessions`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let sessions = proto_ai_tools::Sessions::new((), std::time::Duration::from_secs(60)).with_capacity(1);
    /// let first = std::sync::Arc::downgrade(&sessions.alias_manager("a"));
    /// sessions.alias_manager("b");
    /// assert_eq!(sessions.len(), 1);
    /// assert!(first.upgrade().is_none(), "the idle conversation a was evicted");
    ///
    /// // a conversation in use is kept past the capacity
    /// let b = sessions.alias_manager("b");
    /// sessions.alias_manager("c");
    /// assert_eq!(sessions.len(), 2);
    /// assert!(std::sync::Arc::ptr_eq(&b, &sessions.alias_manager("b")));
    /// ```
    pub fn with_capacity(mut self, capacity: usize) -> Self {
        self.inner
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .set_capacity(capacity.max(1));
        self
    }

    /// The shared transport.
    ///
    /// # Examples
    ///
    /// ```
    /// let sessions = proto_ai_tools::Sessions::new(7u8, std::time::Duration::from_secs(60));
    /// assert_eq!(*sessions.transport(), 7);
    /// ```
    pub fn transport(&self) -> &T {
        &self.transport
    }

    /// The alias manager of `conversation_id`, created on first use and
    /// kept alive by use. An empty id returns a fresh manager every time.
    ///
    /// # Examples
    ///
    /// ```
    /// let sessions = proto_ai_tools::Sessions::new((), std::time::Duration::from_secs(60));
    /// let a = sessions.alias_manager("");
    /// let b = sessions.alias_manager("");
    /// assert!(!std::sync::Arc::ptr_eq(&a, &b));
    /// assert!(sessions.is_empty());
    /// ```
    pub fn alias_manager(&self, conversation_id: &str) -> Arc<AliasManager> {
        if conversation_id.is_empty() {
            return Arc::new(self.new_manager(conversation_id));
        }
        let now = Instant::now();
        let mut inner = self.lock();
        inner.sweep(now);
        if let Some(aliases) = inner.get(conversation_id, now) {
            return aliases.clone();
        }
        let aliases = Arc::new(self.new_manager(conversation_id));
        inner.insert(conversation_id, aliases.clone(), now);
        aliases
    }

    /// A generated executor of type `E` for `conversation_id`: the shared
    /// transport (cloned) and the conversation's alias manager. A
    /// hand-written tool shares the conversation's aliases through
    /// [`alias_manager`](Self::alias_manager).
    ///
    /// # Examples
    ///
    /// ```
    /// mod links {
    ///     proto_ai_tools::ai_tools!("proto/links/v1/links.proto");
    /// }
    /// use std::sync::Arc;
    /// use proto_ai_tools::{Sessions, transport::InProcessTransport};
    ///
    /// let sessions = Sessions::new(InProcessTransport::new(), std::time::Duration::from_secs(60));
    /// let a: links::Executor<_> = sessions.for_conversation("c1");
    /// let b: links::Executor<_> = sessions.for_conversation("c1");
    /// assert!(Arc::ptr_eq(a.alias_manager(), b.alias_manager()));
    /// ```
    pub fn for_conversation<E>(&self, conversation_id: &str) -> E
    where
        E: GeneratedExecutor<Transport = T>,
        T: Clone,
    {
        E::with_alias_manager(self.transport.clone(), self.alias_manager(conversation_id))
    }

    /// Forgets `conversation_id` now, returning its aliases if it was kept.
    /// With a store, only this process's copy is forgotten; forget the
    /// conversation everywhere with [`AliasStore::remove`].
    ///
    /// # Examples
    ///
    /// ```
    /// let sessions = proto_ai_tools::Sessions::new((), std::time::Duration::from_secs(60));
    /// sessions.alias_manager("a");
    /// assert!(sessions.remove("a").is_some());
    /// assert!(sessions.is_empty());
    /// ```
    pub fn remove(&self, conversation_id: &str) -> Option<Arc<AliasManager>> {
        self.lock().remove(conversation_id)
    }

    /// A snapshot of the aliases of `conversation_id`, if it is kept. With
    /// a store, what this process has learnt of it (the store itself
    /// outlives restarts: no snapshot is needed there).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let sessions = proto_ai_tools::Sessions::new((), std::time::Duration::from_secs(60));
    /// sessions.alias_manager("a").register("link", "d290f1ee-6c54-4b01-90e6-d701748f0851").await.unwrap();
    /// let snap = sessions.snapshot("a").unwrap();
    /// let restored = proto_ai_tools::Sessions::new((), std::time::Duration::from_secs(60));
    /// restored.restore("a", snap).unwrap();
    /// assert!(restored.alias_manager("a").resolve("link-1").is_some());
    /// # }
    /// ```
    pub fn snapshot(&self, conversation_id: &str) -> Option<AliasSnapshot> {
        let aliases = self.lock().peek(conversation_id).cloned()?;
        Some(aliases.snapshot())
    }

    /// Restores the aliases of `conversation_id` from a snapshot, replacing
    /// any kept ones. An empty id is not kept, so restoring it does nothing.
    ///
    /// # Errors
    ///
    /// [`AliasError`] when the snapshot is inconsistent; [`AliasError::Store`]
    /// on `Sessions` [with a store](Self::with_store), whose conversations
    /// live in the store and survive restarts there.
    ///
    /// # Examples
    ///
    /// See [`snapshot`](Self::snapshot).
    pub fn restore(
        &self,
        conversation_id: &str,
        snapshot: AliasSnapshot,
    ) -> Result<Arc<AliasManager>, AliasError> {
        if self.store.is_some() && !conversation_id.is_empty() {
            return Err(AliasError::Store(StoreError::unavailable(
                "a snapshot cannot be restored into a shared store; its conversations survive restarts there",
            )));
        }
        let aliases = Arc::new(
            AliasManager::from_snapshot(snapshot)?
                .with_limit(self.alias_limit)
                .with_counts(self.alias_counts.clone()),
        );
        if !conversation_id.is_empty() {
            let now = Instant::now();
            let mut inner = self.lock();
            inner.insert(conversation_id, aliases.clone(), now);
        }
        Ok(aliases)
    }

    /// Forgets every conversation idle longer than the TTL (and not in use).
    ///
    /// # Examples
    ///
    /// ```
    /// let sessions = proto_ai_tools::Sessions::new((), std::time::Duration::ZERO);
    /// sessions.alias_manager("a");
    /// std::thread::sleep(std::time::Duration::from_millis(2));
    /// sessions.evict_expired();
    /// assert!(sessions.is_empty());
    /// ```
    pub fn evict_expired(&self) {
        self.lock().sweep(Instant::now());
    }

    /// The number of conversations kept that are in use (see [`Sessions`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let sessions = proto_ai_tools::Sessions::new((), std::time::Duration::from_secs(60));
    /// let held = sessions.alias_manager("a");
    /// sessions.alias_manager("b");
    /// assert_eq!(sessions.in_use(), 1);
    /// drop(held);
    /// assert_eq!(sessions.in_use(), 0);
    /// ```
    pub fn in_use(&self) -> usize {
        self.lock().pinned_len()
    }

    /// The number of conversations kept (expired ones may still count until
    /// the next sweep).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(proto_ai_tools::Sessions::new((), std::time::Duration::from_secs(1)).len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// The most idle conversations kept ([`with_capacity`](Self::with_capacity)).
    #[doc(hidden)]
    pub fn capacity(&self) -> usize {
        self.lock().capacity()
    }

    /// Whether no conversation is kept.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(proto_ai_tools::Sessions::new((), std::time::Duration::from_secs(1)).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, ExpiringMap<Arc<str>, Arc<AliasManager>>> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UUID: &str = "d290f1ee-6c54-4b01-90e6-d701748f0851";

    #[tokio::test(start_paused = true)]
    async fn a_conversation_in_use_outlives_its_ttl() {
        let sessions = Sessions::new((), Duration::ZERO);
        let held = sessions.alias_manager("a");
        held.register("link", UUID).await.unwrap();
        tokio::time::advance(Duration::from_millis(5)).await;
        sessions.evict_expired();
        let again = sessions.alias_manager("a");
        assert!(
            Arc::ptr_eq(&held, &again),
            "two namespaces for one conversation"
        );
        drop((held, again));
        tokio::time::advance(Duration::from_millis(5)).await;
        sessions.evict_expired();
        assert!(sessions.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn capacity_evicts_only_idle_conversations_least_recent_first() {
        let sessions = Sessions::new((), Duration::from_secs(60)).with_capacity(3);
        let a = sessions.alias_manager("a");
        let b = sessions.alias_manager("b");
        let c = sessions.alias_manager("c");
        // every one in use: a fourth is admitted past the capacity
        let d = sessions.alias_manager("d");
        assert_eq!((sessions.len(), sessions.in_use()), (4, 4));
        for (id, held) in [("a", &a), ("b", &b), ("c", &c), ("d", &d)] {
            assert!(Arc::ptr_eq(held, &sessions.alias_manager(id)), "{id}");
        }
        drop((a, c));
        tokio::time::advance(Duration::from_millis(2)).await;
        sessions.alias_manager("c"); // c is now more recent than a
        // e arrives: idle a and c go (a first), until the count is under the capacity
        let _e = sessions.alias_manager("e");
        assert_eq!(sessions.len(), 3);
        assert!(sessions.snapshot("a").is_none() && sessions.snapshot("c").is_none());
        assert!(Arc::ptr_eq(&b, &sessions.alias_manager("b")));
        assert!(Arc::ptr_eq(&d, &sessions.alias_manager("d")));
    }

    #[tokio::test]
    async fn the_alias_limit_applies_to_every_conversation() {
        let sessions = Sessions::new((), Duration::from_secs(60)).with_alias_limit(1);
        let a = sessions.alias_manager("a");
        a.register("link", UUID).await.unwrap();
        let restored = sessions.restore("b", a.snapshot()).unwrap();
        assert_eq!(restored.limit(), 1);
        assert!(matches!(
            restored
                .register("link", "5a0c6a43-1c39-4d8e-9c54-0d1f51a3b0b7")
                .await,
            Err(AliasError::LimitReached { limit: 1 })
        ));
    }
}
