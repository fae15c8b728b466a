//! The toolkits of stateless callers' scopes, built once and shared by the
//! scope's requests.
//!
//! A stateless request (protocol `2026-07-28`) is served by a handler of
//! its own, which keeps nothing: without this cache each one would call the
//! server's per-scope toolkit builder again (for a generated API, a tool
//! list and a name index of every method, rebuilt per request). Here a
//! scope's toolkit (its *view*) is kept while the scope is active, and
//! every request of the scope shares it.
//!
//! # Invariants
//!
//! - **A view is its scope's, on its scope's namespace.** It is kept under
//!   the scope's key ([`Scope::key`](super::scope::Scope::key), which
//!   never names another scope's), and served only while its alias manager
//!   is the very one the scope's [`Sessions`](proto_ai_tools::Sessions) entry holds:
//!   a scope forgotten (expired, evicted, removed) and made again gets a
//!   new manager, and so a new view, never the old one's aliases.
//! - **Idle scopes hold no view.** A view unused for [`VIEW_IDLE`] is
//!   dropped, and at most [`MAX_VIEWS`] are kept (fewer when the sessions
//!   keep fewer scopes), least recently used dropped first: an idle scope
//!   costs what it cost without the cache (its aliases in `Sessions`). A
//!   view holds its scope's alias manager, so while kept it pins the
//!   scope's entry as a running call does (`Sessions` counts it in use).
//! - **Nothing a view does not depend on is cached.** A scope's toolkit
//!   is what the builder makes of the scope's namespace: the toolsets a
//!   session enables, the caller's OAuth scopes and every other per-request
//!   check are applied per request, as before, never baked into a view.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

// tokio's clock, as `Sessions` uses, so that tests can pause it.
use tokio::time::Instant;

use proto_ai_tools::__gateway::ExpiringMap;
use proto_ai_tools::alias::AliasManager;
use proto_ai_tools::toolkit::Toolkit;

/// How long a scope's view is kept without a request: long enough to span
/// the pauses of a conversation (a model thinking between calls), short
/// against a scope's life (a day, [`SCOPE_IDLE_TTL`](super::SCOPE_IDLE_TTL)).
pub(super) const VIEW_IDLE: Duration = Duration::from_secs(5 * 60);

/// The most views kept at once: the scopes active at once that are served
/// at session cost; past it the least recently used view is dropped (and
/// rebuilt at that scope's next request).
pub(super) const MAX_VIEWS: usize = 1_024;

/// The views of the active stateless scopes.
pub(super) struct Views {
    kept: Mutex<ExpiringMap<String, Arc<Toolkit>>>,
}

impl Views {
    /// No views yet; at most `capacity` kept (at least one), each for
    /// `idle` after its last use.
    pub(super) fn new(idle: Duration, capacity: usize) -> Self {
        let mut kept = ExpiringMap::new(idle);
        kept.set_capacity(capacity.max(1));
        Self {
            kept: Mutex::new(kept),
        }
    }

    fn lock(&self) -> MutexGuard<'_, ExpiringMap<String, Arc<Toolkit>>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Drops the views idle past their time, so that the scopes they pinned
    /// can expire: called before the scopes' `Sessions` is asked for a
    /// namespace.
    pub(super) fn sweep(&self) {
        self.lock().sweep(Instant::now());
    }

    /// The view of the scope `key`: the kept one when it is on the
    /// namespace `aliases()` gives (the scope's, asked of its `Sessions`
    /// after the idle views are swept), else `build` of that namespace,
    /// kept when the toolkit it makes is on it (a builder that ignores the
    /// namespace it is given gets no cache, and stays correct).
    pub(super) fn get_or_build<E>(
        &self,
        key: &str,
        aliases: impl FnOnce() -> Arc<AliasManager>,
        build: impl FnOnce(Arc<AliasManager>) -> Result<Arc<Toolkit>, E>,
    ) -> Result<Arc<Toolkit>, E> {
        // One lock on the way of a request: the sweep and the look-up.
        let kept = {
            let mut kept = self.lock();
            let now = Instant::now();
            kept.sweep(now);
            kept.get(key, now).cloned()
        };
        let aliases = aliases();
        if let Some(view) = kept
            && Arc::ptr_eq(view.alias_manager(), &aliases)
        {
            return Ok(view);
        }
        let expected = aliases.clone();
        let view = build(aliases)?;
        if Arc::ptr_eq(view.alias_manager(), &expected) {
            // A request of the same scope may have built one meanwhile, on
            // the same namespace: either serves. The one replaced is
            // dropped outside the lock.
            let replaced = {
                let mut kept = self.lock();
                let replaced = kept.remove(key);
                kept.insert(key, view.clone(), Instant::now());
                replaced
            };
            drop(replaced);
        }
        Ok(view)
    }

    /// The views kept.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toolkit(aliases: Arc<AliasManager>) -> Result<Arc<Toolkit>, ()> {
        Ok(Arc::new(
            Toolkit::builder().alias_manager(aliases).build().unwrap(),
        ))
    }

    #[tokio::test(start_paused = true)]
    async fn a_view_is_built_once_per_namespace_and_dropped_when_idle() {
        let views = Views::new(Duration::from_secs(60), 2);
        let a = Arc::new(AliasManager::new());
        let mut built = 0;
        let mut get = |key: &str, aliases: &Arc<AliasManager>| {
            views
                .get_or_build(
                    key,
                    || aliases.clone(),
                    |aliases| {
                        built += 1;
                        toolkit(aliases)
                    },
                )
                .unwrap()
        };
        let first = get("a", &a);
        assert!(Arc::ptr_eq(&first, &get("a", &a)));
        assert!(Arc::ptr_eq(first.alias_manager(), &a));
        // The same key on another namespace (the scope forgotten and made
        // again) is a new view on that namespace.
        let again = Arc::new(AliasManager::new());
        let second = get("a", &again);
        assert!(Arc::ptr_eq(second.alias_manager(), &again));
        // Another scope's key never gets this one's view.
        let b = Arc::new(AliasManager::new());
        assert!(Arc::ptr_eq(get("b", &b).alias_manager(), &b));
        // At most 2 kept: a third scope drops the least recently used.
        let c = Arc::new(AliasManager::new());
        get("c", &c);
        assert_eq!(built, 4);
        assert_eq!(views.len(), 2);
        // Idle past its time, a view is dropped at the next sweep, and the
        // namespace it held is no longer pinned by it.
        tokio::time::advance(Duration::from_secs(61)).await;
        views.sweep();
        assert_eq!(views.len(), 0);
        assert_eq!(Arc::strong_count(&c), 1);
    }

    #[test]
    fn a_builder_that_ignores_the_namespace_is_not_cached() {
        let views = Views::new(Duration::from_secs(60), 8);
        let a = Arc::new(AliasManager::new());
        let view = views
            .get_or_build("a", || a, |_| toolkit(Arc::new(AliasManager::new())))
            .unwrap();
        assert_eq!(views.len(), 0);
        drop(view);
    }
}
