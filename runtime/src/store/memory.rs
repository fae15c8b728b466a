//! An [`AliasStore`] in this process's memory.

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

// tokio's clock, so that tests can pause and advance it instead of sleeping
// through a TTL (outside a runtime it is the system's monotonic clock).
use tokio::time::Instant;

use super::AliasTable;
use super::{AliasStore, AssignError, Assignment, Floor, Lookup, StoreError, new_epoch};
use crate::expiring::ExpiringMap;
use crate::transport::BoxFuture;

/// An [`AliasStore`] in this process's memory, shared by every
/// [`Sessions`](crate::Sessions) (or [`AliasManager`](crate::AliasManager))
/// of the process that holds it. It does not outlive the process: it is the
/// reference implementation of the store's contract, and lets several
/// `Sessions` in one process (or tests) share conversations. A conversation
/// idle longer than the TTL is forgotten.
///
/// # Examples
///
/// ```
/// use std::{sync::Arc, time::Duration};
/// use proto_ai_tools::{Sessions, store::MemoryStore};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let store = Arc::new(MemoryStore::new(Duration::from_secs(1800)));
/// let a = Sessions::new((), Duration::from_secs(60)).with_store(store.clone());
/// let b = Sessions::new((), Duration::from_secs(60)).with_store(store);
/// let uuid = "d290f1ee-6c54-4b01-90e6-d701748f0851";
/// assert_eq!(a.alias_manager("c1").register_all(&[("link", uuid)]).await.unwrap(), ["link-1"]);
/// let on_b = b.alias_manager("c1");
/// on_b.fetch(&["link-1"]).await.unwrap();
/// assert_eq!(on_b.resolve("link-1").as_deref(), Some(uuid));
/// # }
/// ```
#[derive(Debug)]
pub struct MemoryStore {
    inner: Mutex<ExpiringMap<String, Conversation>>,
    /// With [`with_alias_idle`](MemoryStore::with_alias_idle): how long an
    /// alias is kept unused, in whole seconds.
    alias_idle: Option<u32>,
}

#[derive(Debug)]
struct Conversation {
    epoch: String,
    state: AliasTable,
}

impl MemoryStore {
    /// A store forgetting a conversation `ttl` after its last use.
    ///
    /// # Examples
    ///
    /// See [`MemoryStore`].
    pub fn new(ttl: Duration) -> Self {
        Self {
            inner: Mutex::new(ExpiringMap::new(ttl)),
            alias_idle: None,
        }
    }

    /// Expires each alias unused for `idle` (whole seconds, at least one),
    /// and at the limit evicts the least recently used instead of refusing
    /// (see [`AliasStore::assign`]): the store of long-lived namespaces, as
    /// [`AliasManager::with_expiry`](crate::AliasManager::with_expiry) is
    /// without a store. A conversation itself is still forgotten `ttl`
    /// after its last use, and with it its numbering.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use proto_ai_tools::store::{AliasStore, Floor, MemoryStore};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let store = MemoryStore::new(Duration::from_secs(86_400)).with_alias_idle(Duration::from_secs(1800));
    /// let one = ("link".to_owned(), "d290f1ee-6c54-4b01-90e6-d701748f0851".to_owned());
    /// let two = ("link".to_owned(), "5a0c6a43-1c39-4d8e-9c54-0d1f51a3b0b7".to_owned());
    /// store.assign("c1", &[one], 1, &Floor::default()).await.unwrap();
    /// // at the limit of 1, link-1 is evicted for link-2
    /// assert_eq!(store.assign("c1", &[two], 1, &Floor::default()).await.unwrap().aliases, ["link-2"]);
    /// let found = store.lookup("c1", &["link-1".to_owned()], &[], &Floor::default()).await.unwrap();
    /// assert_eq!((found.aliases[0].clone(), found.expired[0]), (None, true));
    /// # }
    /// ```
    pub fn with_alias_idle(mut self, idle: Duration) -> Self {
        self.alias_idle = Some(super::idle_secs(idle));
        self
    }

    /// The number of conversations held (expired ones may count until the
    /// next call sweeps them).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(proto_ai_tools::store::MemoryStore::new(std::time::Duration::from_secs(1)).len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no conversation is held.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(proto_ai_tools::store::MemoryStore::new(std::time::Duration::from_secs(1)).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, ExpiringMap<String, Conversation>> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The live conversation `id`, its TTL refreshed, its idle aliases
    /// expired; expired conversations swept.
    fn live<'a>(
        conversations: &'a mut ExpiringMap<String, Conversation>,
        id: &str,
        now: Instant,
        alias_idle: Option<u32>,
    ) -> Option<&'a mut Conversation> {
        conversations.sweep(now);
        let conversation = conversations.get(id, now)?;
        if let Some(idle) = alias_idle {
            conversation.state.expire_idle(idle);
        }
        Some(conversation)
    }

    /// Applies a caller's floor (see [`Floor`]): a conversation held no
    /// more takes the caller's epoch, and every counter rises to what the
    /// caller has seen.
    fn apply_floor(
        conversations: &mut ExpiringMap<String, Conversation>,
        id: &str,
        now: Instant,
        floor: &Floor,
    ) {
        let Some(epoch) = &floor.epoch else {
            return;
        };
        if floor.counters.is_empty() && conversations.get(id, now).is_none() {
            return;
        }
        let conversation = conversations.get_or_insert_with(id, now, || Conversation {
            epoch: epoch.clone(),
            state: AliasTable::default(),
        });
        for (prefix, seen) in &floor.counters {
            conversation.state.raise_counter(prefix, *seen);
        }
    }

    fn assign_now(
        &self,
        id: &str,
        ids: &[(String, String)],
        limit: usize,
        floor: &Floor,
    ) -> Result<Assignment, AssignError> {
        let now = Instant::now();
        let mut inner = self.lock();
        Self::live(&mut inner, id, now, self.alias_idle);
        Self::apply_floor(&mut inner, id, now, floor);
        let (new, len) = match Self::live(&mut inner, id, now, self.alias_idle) {
            Some(c) => (
                ids.iter()
                    .filter(|(p, u)| c.state.alias_of(p, u).is_none())
                    .count(),
                c.state.len(),
            ),
            None => (ids.len(), 0),
        };
        let over = new > 0 && len.saturating_add(new) > limit;
        if over && (self.alias_idle.is_none() || new > limit) {
            return Err(AssignError::LimitReached { limit });
        }
        let conversation = inner.get_or_insert_with(id, now, || Conversation {
            epoch: new_epoch(),
            state: AliasTable::default(),
        });
        let checkpoint = conversation.state.checkpoint();
        let aliases = ids
            .iter()
            .map(|(p, u)| conversation.state.register(p, u.clone()))
            .collect();
        if over {
            // Room for the new ones: the least recently used of those the
            // batch did not use go; too few of them refuses the batch whole.
            let excess = conversation.state.len().saturating_sub(limit);
            if !conversation
                .state
                .evict_least_recently_used(excess, &checkpoint)
            {
                conversation.state.rollback(checkpoint);
                return Err(AssignError::LimitReached { limit });
            }
        }
        Ok(Assignment {
            epoch: conversation.epoch.clone(),
            aliases,
        })
    }

    fn lookup_now(&self, id: &str, aliases: &[String], uuids: &[String], floor: &Floor) -> Lookup {
        let now = Instant::now();
        let mut inner = self.lock();
        Self::live(&mut inner, id, now, self.alias_idle);
        Self::apply_floor(&mut inner, id, now, floor);
        match Self::live(&mut inner, id, now, self.alias_idle) {
            None => Lookup {
                epoch: None,
                aliases: vec![None; aliases.len()],
                uuids: vec![Vec::new(); uuids.len()],
                expired: vec![false; aliases.len()],
                lost: vec![false; aliases.len()],
            },
            Some(c) => {
                let found: Vec<Option<String>> =
                    aliases.iter().map(|a| c.state.uuid_of(a)).collect();
                let uuids: Vec<Vec<String>> =
                    uuids.iter().map(|u| c.state.aliases_of_uuid(u)).collect();
                if self.alias_idle.is_some() {
                    for alias in aliases.iter().chain(uuids.iter().flatten()) {
                        c.state.touch_alias(alias);
                    }
                }
                Lookup {
                    epoch: Some(c.epoch.clone()),
                    expired: aliases.iter().map(|a| c.state.is_expired(a)).collect(),
                    lost: aliases.iter().map(|a| c.state.is_lost(a)).collect(),
                    aliases: found,
                    uuids,
                }
            }
        }
    }
}

impl AliasStore for MemoryStore {
    fn assign<'a>(
        &'a self,
        conversation: &'a str,
        ids: &'a [(String, String)],
        limit: usize,
        floor: &'a Floor,
    ) -> BoxFuture<'a, Result<Assignment, AssignError>> {
        let result = self.assign_now(conversation, ids, limit, floor);
        Box::pin(async move { result })
    }

    fn lookup<'a>(
        &'a self,
        conversation: &'a str,
        aliases: &'a [String],
        uuids: &'a [String],
        floor: &'a Floor,
    ) -> BoxFuture<'a, Result<Lookup, StoreError>> {
        let result = self.lookup_now(conversation, aliases, uuids, floor);
        Box::pin(async move { Ok(result) })
    }

    fn list<'a>(
        &'a self,
        conversation: &'a str,
        prefix: &'a str,
    ) -> BoxFuture<'a, Result<Vec<String>, StoreError>> {
        let mut inner = self.lock();
        let result = Self::live(&mut inner, conversation, Instant::now(), self.alias_idle)
            .map(|c| c.state.aliases_of_prefix(prefix))
            .unwrap_or_default();
        Box::pin(async move { Ok(result) })
    }

    fn remove<'a>(&'a self, conversation: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        self.lock().remove(conversation);
        Box::pin(async move { Ok(()) })
    }

    fn ttl(&self) -> Duration {
        self.lock().ttl()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uuid(n: u32) -> String {
        format!("{n:08x}-0000-4000-8000-000000000000")
    }

    fn id(p: &str, n: u32) -> (String, String) {
        (p.to_owned(), uuid(n))
    }

    #[tokio::test]
    async fn assignment_is_all_or_nothing_and_stable() {
        let store = MemoryStore::new(Duration::from_secs(60));
        let got = store
            .assign(
                "c",
                &[id("link", 1), id("link", 2), id("theme", 1)],
                4,
                &Floor::default(),
            )
            .await
            .unwrap();
        assert_eq!(got.aliases, ["link-1", "link-2", "theme-1"]);
        assert_eq!(
            store
                .assign("c", &[id("link", 3), id("link", 4)], 4, &Floor::default())
                .await
                .unwrap_err(),
            AssignError::LimitReached { limit: 4 }
        );
        let again = store
            .assign("c", &[id("link", 2), id("link", 3)], 4, &Floor::default())
            .await
            .unwrap();
        assert_eq!(again.aliases, ["link-2", "link-3"]);
        assert_eq!(again.epoch, got.epoch);
        let found = store
            .lookup(
                "c",
                &["theme-1".into(), "link-9".into()],
                &[uuid(1), uuid(9)],
                &Floor::default(),
            )
            .await
            .unwrap();
        assert_eq!(found.aliases, [Some(uuid(1)), None]);
        assert_eq!(
            found.uuids,
            [vec!["link-1".to_owned(), "theme-1".into()], vec![]]
        );
        assert_eq!(
            store.list("c", "link").await.unwrap(),
            ["link-1", "link-2", "link-3"]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn idle_conversations_expire_and_begin_a_new_epoch() {
        let store = MemoryStore::new(Duration::from_millis(20));
        let first = store
            .assign("c", &[id("link", 1)], 10, &Floor::default())
            .await
            .unwrap();
        tokio::time::advance(Duration::from_millis(40)).await;
        let found = store
            .lookup("c", &["link-1".into()], &[], &Floor::default())
            .await
            .unwrap();
        assert_eq!(found.epoch, None);
        assert_eq!(found.aliases, [None]);
        let second = store
            .assign("c", &[id("link", 2)], 10, &Floor::default())
            .await
            .unwrap();
        assert_eq!(second.aliases, ["link-1"]);
        assert_ne!(first.epoch, second.epoch);
        store.remove("c").await.unwrap();
        assert!(store.is_empty());
    }
}
