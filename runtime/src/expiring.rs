//! A map whose entries are forgotten after a time without use, swept
//! lazily, least recently used first, and optionally bounded: the
//! conversations [`Sessions`](crate::Sessions) keeps and those a
//! [`MemoryStore`](crate::store::MemoryStore) holds.

use std::borrow::Borrow;
use std::collections::{BTreeMap, HashMap, hash_map};
use std::hash::Hash;
use std::time::Duration;

// tokio's clock, so that tests can pause and advance it instead of sleeping
// through a TTL (outside a runtime it is the system's monotonic clock).
use tokio::time::Instant;

/// Entries forgotten once idle longer than a TTL, and past a capacity, least
/// recently used first. An entry the `pinned` rule holds is never forgotten,
/// neither by the TTL nor by the capacity: it counts as used whenever a
/// sweep or an eviction finds it.
///
/// Nothing runs in the background: [`sweep`](Self::sweep) forgets the
/// expired entries, and [`get`](Self::get) forgets an expired one it finds.
/// Both work from the least recently used end, so forgetting costs
/// O(log n) an entry, never a scan of the map.
#[derive(Debug)]
#[doc(hidden)]
pub struct ExpiringMap<K, V> {
    ttl: Duration,
    capacity: usize,
    pinned: fn(&V) -> bool,
    entries: HashMap<K, Entry<V>>,
    /// Every entry's key by its `Entry::tick`: least recently used first.
    by_use: BTreeMap<u64, K>,
    /// The tick the next use gets (ticks grow with `Instant`s, so `by_use`
    /// is also ordered by `last_used`).
    next_tick: u64,
}

#[derive(Debug)]
struct Entry<V> {
    value: V,
    last_used: Instant,
    tick: u64,
}

// Public only for the gateway (`__gateway`), which asks for the count alone.
#[allow(clippy::len_without_is_empty)]
impl<K: Hash + Eq + Clone, V> ExpiringMap<K, V> {
    /// An empty map forgetting an entry `ttl` after its last use, with no
    /// capacity bound and nothing pinned.
    #[doc(hidden)]
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            capacity: usize::MAX,
            pinned: |_| false,
            entries: HashMap::new(),
            by_use: BTreeMap::new(),
            next_tick: 0,
        }
    }

    /// Entries for which `pinned` holds are kept past the TTL and the capacity.
    #[doc(hidden)]
    pub fn pinned_while(mut self, pinned: fn(&V) -> bool) -> Self {
        self.pinned = pinned;
        self
    }

    /// Bounds the unpinned entries kept to `capacity`: an insertion first
    /// forgets the least recently used ones past it.
    #[doc(hidden)]
    pub fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity;
    }

    /// The most unpinned entries kept.
    #[doc(hidden)]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// How long an entry is kept without use.
    #[doc(hidden)]
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The number of entries kept (expired ones count until a sweep).
    #[doc(hidden)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The entries kept, in no order, expired ones included.
    #[doc(hidden)]
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.entries.values().map(|e| &e.value)
    }

    /// The entries kept that are pinned.
    #[doc(hidden)]
    pub fn pinned_len(&self) -> usize {
        self.values().filter(|v| (self.pinned)(v)).count()
    }

    /// The entry of `key` as kept, expired or not, without marking it used.
    #[doc(hidden)]
    pub fn peek<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.entries.get(key).map(|e| &e.value)
    }

    fn is_live(&self, entry: &Entry<V>, now: Instant) -> bool {
        (self.pinned)(&entry.value) || !self.is_idle(entry, now)
    }

    fn is_idle(&self, entry: &Entry<V>, now: Instant) -> bool {
        now.saturating_duration_since(entry.last_used) > self.ttl
    }

    fn tick(&mut self) -> u64 {
        let tick = self.next_tick;
        self.next_tick += 1;
        tick
    }

    /// The entry of `key`, marked as used `now`, if it is kept and live;
    /// an expired one is forgotten.
    #[doc(hidden)]
    pub fn get<Q>(&mut self, key: &Q, now: Instant) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let entry = self.entries.get(key)?;
        if !self.is_live(entry, now) {
            self.remove(key);
            return None;
        }
        let old_tick = entry.tick;
        let tick = self.tick();
        let kept = self.by_use.remove(&old_tick)?;
        self.by_use.insert(tick, kept);
        let entry = self.entries.get_mut(key)?;
        entry.tick = tick;
        entry.last_used = now;
        Some(&mut entry.value)
    }

    /// The live entry of `key`, marked as used `now`, or else `make()`
    /// kept under it as used `now` (past the capacity, the least recently
    /// used unpinned entries are forgotten first).
    #[doc(hidden)]
    pub fn get_or_insert_with<Q>(
        &mut self,
        key: &Q,
        now: Instant,
        make: impl FnOnce() -> V,
    ) -> &mut V
    where
        K: Borrow<Q> + for<'q> From<&'q Q>,
        Q: Hash + Eq + ?Sized,
    {
        if self.get(key, now).is_none() {
            self.make_room(now);
        }
        let tick = self.next_tick;
        match self.entries.entry(K::from(key)) {
            // Live: `get` has marked it used.
            hash_map::Entry::Occupied(kept) => &mut kept.into_mut().value,
            hash_map::Entry::Vacant(new) => {
                self.next_tick += 1;
                self.by_use.insert(tick, new.key().clone());
                let entry = new.insert(Entry {
                    value: make(),
                    last_used: now,
                    tick,
                });
                &mut entry.value
            }
        }
    }

    /// Keeps `value` under `key`, used `now`, in place of any entry there.
    #[doc(hidden)]
    pub fn insert<Q>(&mut self, key: &Q, value: V, now: Instant) -> &mut V
    where
        K: Borrow<Q> + for<'q> From<&'q Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.remove(key);
        self.get_or_insert_with(key, now, || value)
    }

    /// Forgets the entry of `key` now, returning it if it was kept.
    #[doc(hidden)]
    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let entry = self.entries.remove(key)?;
        self.by_use.remove(&entry.tick);
        Some(entry.value)
    }

    /// Forgets the expired entries, least recently used first, and stops at
    /// the first live one: O(log n) per entry forgotten. A pinned one found
    /// expired counts as used now and moves to the back.
    #[doc(hidden)]
    pub fn sweep(&mut self, now: Instant) {
        let mut budget = self.by_use.len();
        while budget > 0
            && let Some((_, key)) = self.by_use.first_key_value()
        {
            budget -= 1;
            let key = key.clone();
            let Some(entry) = self.entries.get(&key) else {
                self.by_use.pop_first();
                continue;
            };
            if !self.is_idle(entry, now) {
                break;
            }
            if (self.pinned)(&entry.value) {
                self.get(&key, now);
            } else {
                self.remove(&key);
            }
        }
    }

    /// Forgets the least recently used unpinned entries until one more fits
    /// the capacity; with none unpinned left, the next is admitted past it.
    /// A pinned one found on the way counts as used now.
    fn make_room(&mut self, now: Instant) {
        let mut budget = self.by_use.len();
        while self.entries.len() >= self.capacity && budget > 0 {
            budget -= 1;
            let Some((_, oldest)) = self.by_use.first_key_value() else {
                break;
            };
            let oldest = oldest.clone();
            match self.entries.get(&oldest) {
                Some(entry) if (self.pinned)(&entry.value) => {
                    let key = self.by_use.pop_first().map(|(_, k)| k);
                    let tick = self.tick();
                    if let (Some(key), Some(entry)) = (key, self.entries.get_mut(&oldest)) {
                        entry.tick = tick;
                        entry.last_used = now;
                        self.by_use.insert(tick, key);
                    }
                }
                _ => {
                    self.remove(&oldest);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    const TTL: Duration = Duration::from_millis(20);

    fn map() -> ExpiringMap<String, u32> {
        ExpiringMap::new(TTL)
    }

    #[tokio::test(start_paused = true)]
    async fn an_entry_lives_while_used_and_is_forgotten_after_the_ttl() {
        let mut map = map();
        map.get_or_insert_with("a", Instant::now(), || 1);
        tokio::time::advance(TTL).await;
        // exactly the TTL idle is still live, and a use renews it
        assert_eq!(map.get("a", Instant::now()).copied(), Some(1));
        tokio::time::advance(TTL).await;
        assert_eq!(map.get("a", Instant::now()).copied(), Some(1));
        tokio::time::advance(TTL + Duration::from_millis(1)).await;
        assert_eq!(map.peek("a"), Some(&1), "nothing forgets in the background");
        assert_eq!(map.get("a", Instant::now()), None);
        assert_eq!(map.len(), 0, "an expired entry found is forgotten");
    }

    #[tokio::test(start_paused = true)]
    async fn a_sweep_forgets_the_expired_and_keeps_the_recent() {
        let mut map = map();
        map.get_or_insert_with("old", Instant::now(), || 1);
        map.get_or_insert_with("used", Instant::now(), || 2);
        tokio::time::advance(Duration::from_millis(15)).await;
        map.get_or_insert_with("new", Instant::now(), || 3);
        map.get("used", Instant::now());
        tokio::time::advance(Duration::from_millis(10)).await;
        map.sweep(Instant::now());
        let mut kept: Vec<u32> = map.values().copied().collect();
        kept.sort_unstable();
        assert_eq!(kept, [2, 3]);
    }

    #[tokio::test(start_paused = true)]
    async fn get_or_insert_keeps_a_live_entry_and_replaces_an_expired_one() {
        let mut map = map();
        *map.get_or_insert_with("a", Instant::now(), || 1) += 10;
        assert_eq!(*map.get_or_insert_with("a", Instant::now(), || 2), 11);
        tokio::time::advance(TTL * 2).await;
        assert_eq!(*map.get_or_insert_with("a", Instant::now(), || 2), 2);
        assert_eq!(*map.insert("a", 3, Instant::now()), 3);
        assert_eq!(map.len(), 1);
        assert_eq!(map.remove("a"), Some(3));
        assert_eq!(map.len(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn the_capacity_forgets_the_least_recently_used_first() {
        let mut map = map();
        map.set_capacity(2);
        map.get_or_insert_with("a", Instant::now(), || 1);
        map.get_or_insert_with("b", Instant::now(), || 2);
        map.get("a", Instant::now());
        map.get_or_insert_with("c", Instant::now(), || 3);
        assert_eq!(
            (map.peek("a"), map.peek("b"), map.peek("c")),
            (Some(&1), None, Some(&3))
        );
    }

    #[tokio::test(start_paused = true)]
    async fn pinned_entries_outlive_the_ttl_and_the_capacity() {
        let mut map: ExpiringMap<Arc<str>, Arc<u32>> =
            ExpiringMap::new(TTL).pinned_while(|v| Arc::strong_count(v) > 1);
        map.set_capacity(1);
        let held = map
            .get_or_insert_with("a", Instant::now(), || Arc::new(1))
            .clone();
        map.get_or_insert_with("b", Instant::now(), || Arc::new(2));
        assert_eq!(
            (map.len(), map.pinned_len()),
            (2, 1),
            "admitted past the capacity"
        );
        tokio::time::advance(TTL * 2).await;
        map.sweep(Instant::now());
        assert!(map.peek("a").is_some() && map.peek("b").is_none());
        let again = map.get("a", Instant::now()).expect("kept while held");
        assert!(Arc::ptr_eq(&held, again));
        drop(held);
        tokio::time::advance(TTL * 2).await;
        map.sweep(Instant::now());
        assert_eq!(map.len(), 0);
    }
}
