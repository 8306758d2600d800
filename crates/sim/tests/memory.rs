//! The drive's memory figure (`Ssd::memory_bytes`, which `bench/sim_speed.py` reports as the
//! maps' MiB per GiB of flash) against what building the drive really allocates, counted by
//! this test binary's allocator. A drive of many short blocks makes the per-block records,
//! counters and lists a large share of its memory, so leaving one out shows.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use _sim::config::{Policy, SsdConfig};
use _sim::ssd::Ssd;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator as it came; only the byte count of
// the live allocations is kept beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size(), Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size(), Ordering::Relaxed);
        System.alloc_zeroed(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new, Ordering::Relaxed);
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        System.realloc(p, l, new)
    }
}

#[global_allocator]
static A: Counting = Counting;

/// 200,000 blocks of 4 pages: per block 40 bytes of records, counters (the greedy buckets'
/// order among them, 8 bytes) and free-list entry, beside 33 bytes of maps.
#[test]
fn the_memory_figure_is_what_the_drive_allocates() {
    let cfg = SsdConfig::small(200_000, 4, 600_000, Policy::Greedy, 2);
    let before = LIVE.load(Ordering::Relaxed);
    let ssd = Ssd::new(cfg);
    let held = LIVE.load(Ordering::Relaxed) - before;
    let figure = ssd.memory_bytes();
    // The rest (the flash's per-die timing, the controller's queues) does not grow with the
    // drive: a few KiB here.
    assert!(
        figure <= held && figure as f64 >= 0.995 * held as f64,
        "memory_bytes {figure} against {held} bytes allocated"
    );
}
