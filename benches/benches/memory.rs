//! Memory: bytes per registered alias, per idle conversation in `Sessions`,
//! and what 100,000 conversations with 100 aliases each take, counted by a
//! global allocator that sees every allocation of this process.
//!
//! Two figures per measurement: the bytes asked for, and the bytes a
//! glibc-style malloc hands out for them (each chunk rounded up to 16 bytes
//! with an 8-byte header, 32 at least), which is what the process's RSS pays.
//! Resident memory is read from `/proc/self/statm` as a cross-check. (The
//! allocator is `proto_ai_tools_benches::alloc::Counting`, here counting always.)

use std::time::{Duration, Instant};

use proto_ai_tools::{AliasManager, Sessions};
use proto_ai_tools_benches::alloc::{Counting, Usage, since, usage};
use proto_ai_tools_benches::{quick_mode, ready, register_links_and_themes, uuid};

#[global_allocator]
static GLOBAL: Counting = Counting::ALWAYS;

fn report(what: &str, per: usize, unit: &str, u: Usage) {
    proto_ai_tools_benches::alloc::report("memory", what, per, unit, u);
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
        register_links_and_themes(&aliases, n as u64 * 1000, 100);
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
