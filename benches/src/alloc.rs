//! A counting global allocator for the memory measurements: every
//! allocation goes to the system allocator unchanged, and the bytes asked
//! for, the malloc chunks they take and the live allocations are counted.
//!
//! Two figures per measurement: the bytes asked for, and the bytes a
//! glibc-style malloc hands out for them (each chunk rounded up to 16 bytes
//! with an 8-byte header, 32 at least), which is what the process's RSS pays.
//! Resident memory is read from `/proc/self/statm` as a cross-check.
//!
//! A `#[global_allocator]` has to be declared in the binary itself, so each
//! bench that counts declares one:
//!
//! ```
//! #[global_allocator]
//! static GLOBAL: proto_ai_tools_benches::alloc::Counting = proto_ai_tools_benches::alloc::Counting::ALWAYS;
//!
//! fn main() {
//!     let before = proto_ai_tools_benches::alloc::usage();
//!     let kept = vec![0u8; 1000];
//!     assert!(proto_ai_tools_benches::alloc::usage().requested > before.requested);
//!     drop(kept);
//! }
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};

/// The counting allocator: [`ALWAYS`](Self::ALWAYS) counts every
/// allocation of the process, [`WHEN_ON`](Self::WHEN_ON) only while
/// [`counted`] runs a measurement (so latency runs in the same binary pay
/// one relaxed load per allocation, nothing else).
#[derive(Debug)]
pub struct Counting {
    always: bool,
}

impl Counting {
    /// Counts every allocation.
    pub const ALWAYS: Self = Self { always: true };
    /// Counts only while [`counted`] runs.
    pub const WHEN_ON: Self = Self { always: false };

    fn on(&self) -> bool {
        self.always || COUNTING.load(Ordering::Relaxed)
    }
}

static COUNTING: AtomicBool = AtomicBool::new(false);
static REQUESTED: AtomicIsize = AtomicIsize::new(0);
static CHUNKS: AtomicIsize = AtomicIsize::new(0);
static LIVE: AtomicIsize = AtomicIsize::new(0);

/// The bytes a glibc-style malloc hands out for `size` (16-byte granules,
/// an 8-byte header, 32 at least).
fn chunk(size: usize) -> isize {
    ((size + 8).div_ceil(16) * 16).max(32) as isize
}

// SAFETY: every call is forwarded unchanged to the system allocator; the
// counters are only statistics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if self.on() {
            REQUESTED.fetch_add(layout.size() as isize, Ordering::Relaxed);
            CHUNKS.fetch_add(chunk(layout.size()), Ordering::Relaxed);
            LIVE.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's layout is passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if self.on() {
            REQUESTED.fetch_sub(layout.size() as isize, Ordering::Relaxed);
            CHUNKS.fetch_sub(chunk(layout.size()), Ordering::Relaxed);
            LIVE.fetch_sub(1, Ordering::Relaxed);
        }
        // SAFETY: `ptr` was allocated by `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if self.on() {
            REQUESTED.fetch_add(
                new_size as isize - layout.size() as isize,
                Ordering::Relaxed,
            );
            CHUNKS.fetch_add(chunk(new_size) - chunk(layout.size()), Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// What the process allocated: the counters at one moment, or the
/// difference between two moments.
#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    /// Bytes asked for.
    pub requested: isize,
    /// Bytes of malloc chunks (see [`Counting`]).
    pub chunks: isize,
    /// Live allocations.
    pub allocations: isize,
    /// Resident memory, from `/proc/self/statm`.
    pub rss: isize,
}

impl std::ops::Sub for Usage {
    type Output = Self;

    fn sub(self, before: Self) -> Self {
        Self {
            requested: self.requested - before.requested,
            chunks: self.chunks - before.chunks,
            allocations: self.allocations - before.allocations,
            rss: self.rss - before.rss,
        }
    }
}

/// Resident memory of this process (0 where `/proc` has none).
pub fn rss_bytes() -> isize {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(1)
                .and_then(|p| p.parse::<isize>().ok())
        })
        .map_or(0, |pages| pages * 4096)
}

/// The counters now.
pub fn usage() -> Usage {
    Usage {
        requested: REQUESTED.load(Ordering::Relaxed),
        chunks: CHUNKS.load(Ordering::Relaxed),
        allocations: LIVE.load(Ordering::Relaxed),
        rss: rss_bytes(),
    }
}

/// What was allocated since `before` (and is still allocated).
pub fn since(before: Usage) -> Usage {
    usage() - before
}

/// Runs `f` with counting on (for [`Counting::WHEN_ON`]); what stayed
/// allocated when it returned.
pub async fn counted<F: Future<Output = ()>>(f: F) -> Usage {
    let before = usage();
    COUNTING.store(true, Ordering::SeqCst);
    f.await;
    COUNTING.store(false, Ordering::SeqCst);
    since(before)
}

/// Prints `u` divided by `per`, as `{prefix}: {what}: … per {unit}`.
pub fn report(prefix: &str, what: &str, per: usize, unit: &str, u: Usage) {
    let per = per as f64;
    println!(
        "{prefix}: {what}: {:.0} B requested, {:.0} B malloc chunks, {:.1} allocations, {:.0} B RSS per {unit}",
        u.requested as f64 / per,
        u.chunks as f64 / per,
        u.allocations as f64 / per,
        u.rss as f64 / per
    );
}

#[cfg(test)]
mod tests {
    use super::chunk;

    #[test]
    fn chunks_are_granules_with_a_header() {
        assert_eq!(chunk(0), 32);
        assert_eq!(chunk(24), 32);
        assert_eq!(chunk(25), 48);
        assert_eq!(chunk(100), 112);
    }
}
