//! One alias namespace per conversation, shared transport, bounded lifetime.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::alias::{AliasError, AliasManager, AliasSnapshot};

/// An executor that can be built for one conversation: a transport and the
/// conversation's alias manager. `ai_tools!` implements it for its generated
/// `Executor<T>`; implement it for hand-written executors or toolkits so
/// that they share a conversation's aliases.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use ai_tools::{AliasManager, SessionExecutor};
///
/// struct Echo { aliases: Arc<AliasManager> }
/// impl<T> SessionExecutor<T> for Echo {
///     fn for_session(_transport: T, aliases: Arc<AliasManager>) -> Self { Echo { aliases } }
/// }
///
/// let sessions = ai_tools::Sessions::new((), std::time::Duration::from_secs(60));
/// let a: Echo = sessions.for_conversation("c1");
/// let b: Echo = sessions.for_conversation("c1");
/// assert!(Arc::ptr_eq(&a.aliases, &b.aliases));
/// ```
pub trait SessionExecutor<T>: Sized {
    /// An executor over `transport` that uses `aliases`.
    fn for_session(transport: T, aliases: Arc<AliasManager>) -> Self;
}

/// Per-conversation alias namespaces over one shared transport.
///
/// Each conversation id gets its own [`AliasManager`]; executors built with
/// [`for_conversation`](Self::for_conversation) share it, so every tool of
/// a conversation (generated or hand-written) sees the same `link-1`, and no
/// two conversations ever see each other's. A conversation idle longer than
/// the TTL is forgotten; past the capacity, the least recently used one is.
/// An empty conversation id gets a throwaway namespace, never a shared one.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ai_tools::{InProcessTransport, Sessions};
///
/// let sessions = Sessions::new(InProcessTransport::new(), Duration::from_secs(1800)).with_capacity(10_000);
/// let a = sessions.alias_manager("conversation-a");
/// let b = sessions.alias_manager("conversation-b");
/// a.register("link", "d290f1ee-6c54-4b01-90e6-d701748f0851").unwrap();
/// assert!(b.resolve("link-1").is_none());
/// assert!(sessions.alias_manager("conversation-a").resolve("link-1").is_some());
/// ```
#[derive(Debug)]
pub struct Sessions<T> {
    transport: T,
    ttl: Duration,
    capacity: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<String, Entry>,
    last_sweep: Option<Instant>,
}

#[derive(Debug)]
struct Entry {
    aliases: Arc<AliasManager>,
    last_used: Instant,
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
        Self {
            transport,
            ttl,
            capacity: Self::DEFAULT_CAPACITY,
            inner: Mutex::default(),
        }
    }

    /// Keeps at most `capacity` conversations (at least 1), evicting the
    /// least recently used.
    ///
    /// # Examples
    ///
    /// ```
    /// let sessions = ai_tools::Sessions::new((), std::time::Duration::from_secs(60)).with_capacity(1);
    /// let first = sessions.alias_manager("a");
    /// sessions.alias_manager("b");
    /// assert_eq!(sessions.len(), 1);
    /// assert!(!std::sync::Arc::ptr_eq(&first, &sessions.alias_manager("a")));
    /// ```
    pub fn with_capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity.max(1);
        self
    }

    /// The shared transport.
    ///
    /// # Examples
    ///
    /// ```
    /// let sessions = ai_tools::Sessions::new(7u8, std::time::Duration::from_secs(60));
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
    /// let sessions = ai_tools::Sessions::new((), std::time::Duration::from_secs(60));
    /// let a = sessions.alias_manager("");
    /// let b = sessions.alias_manager("");
    /// assert!(!std::sync::Arc::ptr_eq(&a, &b));
    /// assert!(sessions.is_empty());
    /// ```
    pub fn alias_manager(&self, conversation_id: &str) -> Arc<AliasManager> {
        if conversation_id.is_empty() {
            return Arc::new(AliasManager::new());
        }
        let now = Instant::now();
        let mut inner = self.lock();
        self.sweep(&mut inner, now);
        if let Some(entry) = inner.entries.get_mut(conversation_id) {
            if now.saturating_duration_since(entry.last_used) <= self.ttl {
                entry.last_used = now;
                return entry.aliases.clone();
            }
            inner.entries.remove(conversation_id);
        }
        let aliases = Arc::new(AliasManager::new());
        self.insert(&mut inner, conversation_id, aliases.clone(), now);
        aliases
    }

    /// An executor of type `E` for `conversation_id`: the shared transport
    /// (cloned) and the conversation's alias manager.
    ///
    /// # Examples
    ///
    /// See [`SessionExecutor`].
    pub fn for_conversation<E: SessionExecutor<T>>(&self, conversation_id: &str) -> E
    where
        T: Clone,
    {
        E::for_session(self.transport.clone(), self.alias_manager(conversation_id))
    }

    /// Forgets `conversation_id` now, returning its aliases if it was kept.
    ///
    /// # Examples
    ///
    /// ```
    /// let sessions = ai_tools::Sessions::new((), std::time::Duration::from_secs(60));
    /// sessions.alias_manager("a");
    /// assert!(sessions.remove("a").is_some());
    /// assert!(sessions.is_empty());
    /// ```
    pub fn remove(&self, conversation_id: &str) -> Option<Arc<AliasManager>> {
        self.lock()
            .entries
            .remove(conversation_id)
            .map(|e| e.aliases)
    }

    /// A snapshot of the aliases of `conversation_id`, if it is kept.
    ///
    /// # Examples
    ///
    /// ```
    /// let sessions = ai_tools::Sessions::new((), std::time::Duration::from_secs(60));
    /// sessions.alias_manager("a").register("link", "d290f1ee-6c54-4b01-90e6-d701748f0851").unwrap();
    /// let snap = sessions.snapshot("a").unwrap();
    /// let restored = ai_tools::Sessions::new((), std::time::Duration::from_secs(60));
    /// restored.restore("a", snap).unwrap();
    /// assert!(restored.alias_manager("a").resolve("link-1").is_some());
    /// ```
    pub fn snapshot(&self, conversation_id: &str) -> Option<AliasSnapshot> {
        let aliases = self
            .lock()
            .entries
            .get(conversation_id)
            .map(|e| e.aliases.clone())?;
        Some(aliases.snapshot())
    }

    /// Restores the aliases of `conversation_id` from a snapshot, replacing
    /// any kept ones. An empty id is not kept, so restoring it does nothing.
    ///
    /// # Errors
    ///
    /// [`AliasError`] when the snapshot is inconsistent.
    ///
    /// # Examples
    ///
    /// See [`snapshot`](Self::snapshot).
    pub fn restore(
        &self,
        conversation_id: &str,
        snapshot: AliasSnapshot,
    ) -> Result<Arc<AliasManager>, AliasError> {
        let aliases = Arc::new(AliasManager::from_snapshot(snapshot)?);
        if !conversation_id.is_empty() {
            let now = Instant::now();
            let mut inner = self.lock();
            inner.entries.remove(conversation_id);
            self.insert(&mut inner, conversation_id, aliases.clone(), now);
        }
        Ok(aliases)
    }

    /// Forgets every conversation idle longer than the TTL.
    ///
    /// # Examples
    ///
    /// ```
    /// let sessions = ai_tools::Sessions::new((), std::time::Duration::ZERO);
    /// sessions.alias_manager("a");
    /// std::thread::sleep(std::time::Duration::from_millis(2));
    /// sessions.evict_expired();
    /// assert!(sessions.is_empty());
    /// ```
    pub fn evict_expired(&self) {
        let now = Instant::now();
        let mut inner = self.lock();
        let ttl = self.ttl;
        inner
            .entries
            .retain(|_, e| now.saturating_duration_since(e.last_used) <= ttl);
        inner.last_sweep = Some(now);
    }

    /// The number of conversations kept (expired ones may still count until
    /// the next sweep).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(ai_tools::Sessions::new((), std::time::Duration::from_secs(1)).len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether no conversation is kept.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(ai_tools::Sessions::new((), std::time::Duration::from_secs(1)).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Drops expired entries, at most about twice per TTL (and at least
    /// every minute), so that a lookup stays O(1) on average.
    fn sweep(&self, inner: &mut Inner, now: Instant) {
        let every = (self.ttl / 2).min(Duration::from_secs(60));
        let due = inner
            .last_sweep
            .is_none_or(|t| now.saturating_duration_since(t) >= every);
        if due {
            let ttl = self.ttl;
            inner
                .entries
                .retain(|_, e| now.saturating_duration_since(e.last_used) <= ttl);
            inner.last_sweep = Some(now);
        }
    }

    fn insert(&self, inner: &mut Inner, id: &str, aliases: Arc<AliasManager>, now: Instant) {
        while inner.entries.len() >= self.capacity {
            let oldest = inner
                .entries
                .iter()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => inner.entries.remove(&k),
                None => break,
            };
        }
        inner.entries.insert(
            id.to_owned(),
            Entry {
                aliases,
                last_used: now,
            },
        );
    }
}
