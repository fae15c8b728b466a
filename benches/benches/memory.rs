//! Memory: bytes per registered alias, per idle conversation in `Sessions`,
//! and what 100,000 conversations with 100 aliases each take, counted by a
//! global allocator that sees every allocation of this process.
//!
//! Two figures per measurement: the bytes asked for, and the bytes a
//! glibc-style malloc hands out for them (each chunk rounded up to 16 bytes
//! with an 8-byte header, 32 at least), which is what the process's RSS pays.
//! Resident memory is read from `/proc/self/statm` as a cross-check.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::{Duration, Instant};

use ai_tools::{AliasManager, Sessions};
use ai_tools_benches::{quick_mode, ready, uuid};

struct Counting;

static REQUESTED: AtomicIsize = AtomicIsize::new(0);
static CHUNKS: AtomicIsize = AtomicIsize::new(0);
static LIVE: AtomicIsize = AtomicIsize::new(0);

fn chunk(size: usize) -> isize {
    ((size + 8).div_ceil(16) * 16).max(32) as isize
}

// SAFETY: every call is forwarded unchanged to the system allocator; the
// counters are only statistics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        REQUESTED.fetch_add(layout.size() as isize, Ordering::Relaxed);
        CHUNKS.fetch_add(chunk(layout.size()), Ordering::Relaxed);
        LIVE.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's layout is passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        REQUESTED.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        CHUNKS.fetch_sub(chunk(layout.size()), Ordering::Relaxed);
        LIVE.fetch_sub(1, Ordering::Relaxed);
        // SAFETY: `ptr` was allocated by `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        REQUESTED.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        CHUNKS.fetch_add(chunk(new_size) - chunk(layout.size()), Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(Clone, Copy)]
struct Usage {
    requested: isize,
    chunks: isize,
    allocations: isize,
    rss: isize,
}

fn rss_bytes() -> isize {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(1)
                .and_then(|p| p.parse::<isize>().ok())
        })
        .map_or(0, |pages| pages * 4096)
}

fn usage() -> Usage {
    Usage {
        requested: REQUESTED.load(Ordering::Relaxed),
        chunks: CHUNKS.load(Ordering::Relaxed),
        allocations: LIVE.load(Ordering::Relaxed),
        rss: rss_bytes(),
    }
}

fn since(before: Usage) -> Usage {
    let now = usage();
    Usage {
        requested: now.requested - before.requested,
        chunks: now.chunks - before.chunks,
        allocations: now.allocations - before.allocations,
        rss: now.rss - before.rss,
    }
}

fn report(what: &str, per: usize, unit: &str, u: Usage) {
    let per = per as f64;
    println!(
        "memory: {what}: {:.0} B requested, {:.0} B malloc chunks, {:.1} allocations, {:.0} B RSS per {unit}",
        u.requested as f64 / per,
        u.chunks as f64 / per,
        u.allocations as f64 / per,
        u.rss as f64 / per
    );
}

/// Ids of conversations as an application might key them.
fn conversation_id(n: usize) -> String {
    format!("conversation-{n:08}")
}

fn main() {
    let quick = quick_mode();
    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

    // Bytes per registered alias, in one manager.
    for count in [100, 10_000] {
        let ids: Vec<String> = (0..count as u64).map(uuid).collect();
        let before = usage();
        let manager = AliasManager::new();
        for id in &ids {
            ready(manager.register("link", id)).expect("register");
        }
        let u = since(before);
        report(
            &format!("AliasManager with {count} aliases"),
            count,
            "alias",
            u,
        );
        drop(manager);
    }
    let before = usage();
    let empty = AliasManager::new();
    report("empty AliasManager", 1, "manager", since(before));
    drop(empty);

    // Per idle conversation in Sessions (a manager with no aliases yet).
    let conversations = if quick { 1_000 } else { 100_000 };
    let sessions = Sessions::new((), Duration::from_secs(3600)).with_capacity(conversations + 1);
    let before = usage();
    for n in 0..conversations {
        drop(sessions.alias_manager(&conversation_id(n)));
    }
    report(
        &format!("Sessions with {conversations} idle empty conversations"),
        conversations,
        "conversation",
        since(before),
    );
    drop(sessions);

    // 100,000 conversations x 100 aliases: measured on a slice, extrapolated
    // linearly (every conversation is the same shape; nothing is shared).
    let measured = if quick { 100 } else { 10_000 };
    let target = 100_000usize;
    let sessions = Sessions::new((), Duration::from_secs(3600)).with_capacity(target + 1);
    let before = usage();
    let started = Instant::now();
    for n in 0..measured {
        let aliases = sessions.alias_manager(&conversation_id(n));
        for k in 0..100u64 {
            let id = uuid(n as u64 * 1000 + k);
            ready(aliases.register(if k % 2 == 0 { "link" } else { "theme" }, &id))
                .expect("register");
        }
    }
    let elapsed = started.elapsed();
    let u = since(before);
    report(
        &format!("Sessions with {measured} conversations x 100 aliases"),
        measured,
        "conversation",
        u,
    );
    let scale = target as f64 / measured as f64;
    println!(
        "memory: 100,000 conversations x 100 aliases, extrapolated from {measured}: {:.2} GiB requested, {:.2} GiB malloc chunks, {:.2} GiB RSS (24 GiB machine); built at {:.0} aliases/s",
        u.requested as f64 * scale / GIB,
        u.chunks as f64 * scale / GIB,
        u.rss as f64 * scale / GIB,
        (measured * 100) as f64 / elapsed.as_secs_f64()
    );

    // The price of the capacity bound: admitting a new conversation when full
    // evicts the least recently used one (an ordered index: O(log n)).
    let full = if quick { 1_000 } else { 100_000 };
    let sessions = Sessions::new((), Duration::from_secs(3600)).with_capacity(full);
    for n in 0..full {
        drop(sessions.alias_manager(&conversation_id(n)));
    }
    let rounds = 200;
    let started = Instant::now();
    for n in full..full + rounds {
        drop(sessions.alias_manager(&conversation_id(n)));
    }
    let at_capacity = started.elapsed() / rounds as u32;
    let started = Instant::now();
    for n in full..full + rounds {
        drop(sessions.alias_manager(&conversation_id(n)));
    }
    let known = started.elapsed() / rounds as u32;
    println!(
        "memory: Sessions at capacity {full}: a new conversation takes {:.2} us (evicts the LRU); a known one {:.2} us",
        at_capacity.as_secs_f64() * 1e6,
        known.as_secs_f64() * 1e6
    );
}
