//! Values worked out once per key, then shared by every caller.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, PoisonError, RwLock};

/// A map from keys to values made once: readers share one `Arc`; a value
/// made twice by a race is made the same way, and the first one stays.
pub(crate) struct Memo<K, V>(RwLock<HashMap<K, Arc<V>>>);

impl<K: Eq + Hash, V> Memo<K, V> {
    pub(crate) fn new() -> Self {
        Memo(RwLock::new(HashMap::new()))
    }

    /// The value of `key`, made by `make` the first time.
    pub(crate) fn get_or(&self, key: K, make: impl FnOnce() -> V) -> Arc<V> {
        if let Some(value) = self
            .0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
        {
            return value.clone();
        }
        let value = Arc::new(make());
        self.0
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(key)
            .or_insert(value)
            .clone()
    }
}
