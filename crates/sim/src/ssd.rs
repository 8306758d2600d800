//! The SSD: host link, controller, PLP write buffer and the FTL on timed flash.
//!
//! Write path: data crosses the link, the controller spends `overhead` on the command, each
//! 4 KiB unit waits for a write-buffer slot (freed when an earlier unit has moved to its die,
//! see `Flash::started`),
//! and the command completes once all its units are in the buffer, when the buffer may
//! acknowledge (write cache enabled, or power-loss protected); otherwise once they are
//! programmed. A drive without a buffer (`buffer_kib=0`) is write-through: a write completes
//! once the pages holding its data are programmed, whatever the cache setting.
//! A sub-unit write first reads the old unit (read-modify-write), unless a sequential stream
//! continues a unit the buffer holds open: the write then merges into it, with no read and no
//! program of its own (see held.rs). Read path: controller, array read on the die (skipped
//! for never-written units, which return zeros, and for a sequential stream's small read of a
//! page the controller holds from a recent command), channel, link. The controller has `cores` that each take a command (for `overhead`, varied like
//! the NAND times) as soon as one is free, so commands queue there under load.
//! Compression: a unit of entropy e is stored in `chunks_per_unit · f(e)` 1 KiB chunks on
//! average (rounded up or down at random per unit), f rising smoothly from
//! `compress_floor` at e = 0 to `compress_ceiling` at `compress_limit`, and flat past it.
//! Foreground GC runs in slices: while a slice's copies are issued every core is held for
//! `gc_copy` each, and for `gc_switch` at a block-table checkpoint (every `gc_switch_every` victims). Background GC bursts (`bg_period`, `bg_burst`) occupy the flash for a
//! while even when the host is busy, which is what makes periodic dips; so does a periodic
//! GC pass (`gc_pass_*`), whose walk copies beside the host's writes while it lasts.

use std::hint::select_unpredictable;

use crate::config::{SsdConfig, UNIT};
use crate::div::FastDiv;
use crate::driver::Device;
use crate::flash::{Flash, Varied};
use crate::ftl::{Counters, Ftl, NONE};
use crate::held::{Held, Open, PAGES_KEPT};
use crate::slots::Slots;
use crate::sorted::SortedRing;

/// How many units ahead a write command fetches the valid bits of the units it overwrites.
const UNITS_AHEAD: u64 = 4;

#[path = "ssd_buffer.rs"]
mod buffer;
#[path = "ssd_read.rs"]
mod read;
#[path = "ssd_state.rs"]
mod saved;
#[path = "ssd_write.rs"]
mod write;

pub struct Ssd {
    pub cfg: SsdConfig,
    pub ftl: Ftl,
    pub flash: Flash,
    /// When each host port's link is free, per direction: one link per port (a wide port's
    /// links carry data side by side), `links[0]` the port a single-path run uses. The back
    /// end behind them (cores, buffer, dies) is the drive's, shared by every port.
    links: Vec<[u64; 2]>,
    /// The port the next command comes in on (`Device::set_port`).
    port: usize,
    link_out: usize,
    link_ps_per_byte: u64,
    /// When each controller core is free, and their number (a read's core is its stripe's
    /// modulo this: a division for every read otherwise).
    ctrl_busy: Vec<u64>,
    cores: FastDiv,
    /// A command's controller time, and a write's mapping update on its core, as varied.
    overhead: Varied,
    write_core: Varied,
    /// Chunks per mapping unit (GC copying is charged per unit copied).
    unit: FastDiv,
    /// `core_by_lba` in 1/2^24 (compared with the top 24 bits of an LBA's hash).
    by_lba: u64,
    next_burst: u64,
    /// Where the present GC pass period began (`write`).
    pass_from: u64,
    /// When the units in the write buffer leave it for their dies (a min-heap of at most
    /// `buffer_units`): a unit enters when the earliest of them leaves, so one slow die
    /// does not hold the whole buffer (no head-of-line blocking).
    buf: SortedRing<u64>,
    nbuf: usize,
    /// Admission pacing: units in the buffer at which admission matches its drain (0 = off),
    /// the earliest time the next unit may enter, and when the last unit admitted leaves.
    pace_units: u64,
    pace_next: u64,
    buf_last: u64,
    /// Outstanding commands by completion: `done << 32 | id`, so the queue compares one
    /// integer (the order of (done, id) pairs), not a pair field by field. Its keys are
    /// unique (an id is outstanding once), so it pops them in the order a heap did.
    heap: SortedRing<u128>,
    pub now: u64,
    /// Mean chunks per unit for the present entropy, in 1/2^16.
    chunks_mean: u64,
    /// The host's write-cache setting (a drive starts with it enabled).
    pub write_cache: bool,
    pub host: HostCounters,
    held: Held,
    slots: Slots,
}

#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostCounters {
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub reads: u64,
    pub writes: u64,
}

impl Ssd {
    pub fn new(cfg: SsdConfig) -> Ssd {
        let ftl = Ftl::new(&cfg);
        let flash = Flash::new(&cfg);
        Ssd {
            link_out: if cfg.link_full_duplex { 1 } else { 0 },
            link_ps_per_byte: (1e6 / cfg.link_mbps).round() as u64,
            buf: SortedRing::with_capacity(cfg.buffer_units as usize + 1),
            nbuf: cfg.buffer_units as usize,
            pace_units: (cfg.pace * cfg.buffer_units as f64).round() as u64,
            pace_next: 0,
            buf_last: 0,
            chunks_mean: (cfg.chunks_per_unit as u64) << 16,
            ctrl_busy: vec![0; cfg.cores as usize],
            cores: FastDiv::new(cfg.cores as u64),
            overhead: flash.varied(cfg.overhead_ns),
            write_core: flash.varied(cfg.write_core_ns),
            unit: FastDiv::new(cfg.chunks_per_unit as u64),
            by_lba: (cfg.core_by_lba * 16_777_216.0).round() as u64,
            next_burst: 0,
            pass_from: 0,
            slots: Slots::new(cfg.queue_slots),
            cfg,
            ftl,
            flash,
            links: vec![[0; 2]],
            port: 0,
            heap: SortedRing::with_capacity(64),
            now: 0,
            write_cache: true,
            host: HostCounters::default(),
            held: Held::new(),
        }
    }

    pub fn counters(&self) -> (Counters, HostCounters) {
        (self.ftl.c, self.host)
    }

    pub fn memory_bytes(&self) -> usize {
        self.ftl.memory_bytes() + self.buf.capacity() * 8
    }

    /// Return to fresh-out-of-box: erase everything, drop all mappings.
    pub fn purge(&mut self) {
        let t = self.now.max(self.flash.all_idle_at());
        self.ftl.purge(t, &mut self.flash);
        self.now = self.flash.all_idle_at().max(t);
        self.flash.reset_clock(self.now);
        // Fresh-out-of-box in every respect, timing draws included.
        self.flash.rng = crate::rng::Rng::new(0x000F_1A54);
        self.held.clear();
    }

    pub fn trim(&mut self, off: u64, len: u64) {
        // Only whole units are unmapped; a partial unit keeps its data (as SCSI UNMAP may).
        let first = off.div_ceil(UNIT);
        let last = ((off + len) / UNIT).min(self.cfg.user_units as u64);
        for u in first..last {
            self.ftl.trim(u as u32);
        }
    }

    #[inline(always)]
    fn link(&mut self, dir: usize, ready: u64, bytes: u64) -> u64 {
        let busy = &mut self.links[self.port][dir];
        let t = (*busy).max(ready) + bytes * self.link_ps_per_byte / 1000;
        *busy = t;
        t
    }

    /// The command is taken by the first core free, no earlier than `ready`, except a read at
    /// `lba` in the `core_by_lba` share of stripes, which waits for the core owning that stripe
    /// of the mapping table even when another is free. A write's data then reaches the buffer
    /// after `write_path` (DMA, no core held), and its core updates its mapping for
    /// `write_core` (the host does not wait for that, the next command does once every core
    /// is so busy). A read of data the controller holds (held.rs) needs no lookup.
    #[inline(always)]
    fn controller(&mut self, ready: u64, lba: Option<u64>, write: bool) -> u64 {
        let h = lba.map_or(0, |off| {
            (off / UNIT + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        });
        let (k, free_at) = if lba.is_some() && (h >> 40) < self.by_lba {
            let k = self.cores.modulo((h >> 8) & 0xFFFF_FFFF) as usize;
            (k, self.ctrl_busy[k])
        } else {
            // The first least-busy core. Which core is least busy is a coin toss for the
            // branch predictor: selects, not branches.
            // A plain indexed loop: the iterator's enumerate-and-skip cost more per core
            // (7 instructions per write command with 4 cores, cachegrind).
            let busy = &self.ctrl_busy[..];
            let (mut k, mut m) = (0, busy[0]);
            #[allow(clippy::needless_range_loop)]
            for i in 1..busy.len() {
                let b = busy[i];
                let less = b < m;
                k = select_unpredictable(less, i, k);
                m = select_unpredictable(less, b, m);
            }
            (k, m) // the least busy time is at hand: not read again
        };
        let t = free_at.max(ready) + self.flash.vary_by(self.overhead);
        let path = self.flash.vary_some(self.cfg.write_path_ns * write as u64);
        let after = if write && self.cfg.write_core_ns > 0 {
            self.flash.vary_by(self.write_core)
        } else {
            0
        };
        self.ctrl_busy[k] = t + after;
        t + path
    }

    /// Chunks this unit is stored in: the entropy's mean, rounded at random.
    #[inline(always)]
    fn unit_chunks(&mut self) -> u32 {
        let g = self.cfg.chunks_per_unit;
        if g == 1 {
            return 1;
        }
        let r = self.flash.rng.next_u64() & 0xFFFF;
        (((self.chunks_mean + r) >> 16) as u32).max(1) // above g for a ceiling over 1
    }

    /// A background GC burst when one is due: the flash is given `bg_burst` of work.
    fn burst(&mut self, now: u64) {
        if self.cfg.bg_period_ns == 0 || now < self.next_burst {
            return;
        }
        self.next_burst = now + self.cfg.bg_period_ns;
        let until = self.flash.all_idle_at().max(now) + self.cfg.bg_burst_ns;
        let step = self.cfg.chunks_per_prog * self.cfg.dies;
        while self.flash.all_idle_at() < until && self.ftl.bg_step(now, &mut self.flash, step) {}
    }

    /// A full SLC cache is evicted whenever the flash has nothing queued, one page program
    /// at a time, not only when the host goes quiet: under a light load (QD1) the dies are
    /// idle most of the time and a controller folds the cache then, so the host keeps
    /// writing at SLC speed; under a heavy load the dies are never idle and the host writes
    /// straight to the main area until a burst or an idle period makes room.
    #[inline(always)]
    fn evict_when_idle(&mut self, now: u64) {
        if self.ftl.slc_full() && self.flash.all_idle_at() <= now {
            self.ftl
                .bg_step(now, &mut self.flash, self.cfg.chunks_per_prog);
        }
    }
}

impl Device for Ssd {
    fn clock(&self) -> u64 {
        self.now
    }
    fn set_clock(&mut self, t: u64) {
        self.now = t;
    }
    fn capacity(&self) -> u64 {
        self.cfg.user_bytes()
    }
    fn set_entropy(&mut self, e: f64) {
        let (c, g) = (&self.cfg, self.cfg.chunks_per_unit as f64);
        let f = if !c.compression || e >= c.compress_limit {
            c.compress_ceiling // unused without compression (one chunk per unit)
        } else {
            // ceiling − (ceiling − floor)(1 − e/limit)²: smooth, flat where it reaches it.
            let x = 1.0 - e.max(0.0) / c.compress_limit;
            c.compress_ceiling - (c.compress_ceiling - c.compress_floor) * x * x
        };
        self.chunks_mean = (f * g * 65536.0).round() as u64;
    }

    #[inline]
    fn submit(&mut self, now: u64, write: bool, off: u64, len: u64, id: u32) {
        let now = self.slots.take(now, &self.heap);
        let done = if write {
            self.write(now, off, len)
        } else {
            self.read(now, off, len)
        };
        self.slots.hold(done);
        self.heap.push((done as u128) << 32 | id as u128);
    }

    #[inline]
    fn set_port(&mut self, port: usize) {
        if port >= self.links.len() {
            self.links.resize(port + 1, [0; 2]);
        }
        self.port = port;
    }

    #[inline]
    fn next_completion(&self) -> Option<u64> {
        self.heap.peek().map(|k| (k >> 32) as u64)
    }

    #[inline]
    fn pop_completion(&mut self) -> (u64, u32) {
        let k = self.heap.pop().expect("a completion");
        ((k >> 32) as u64, k as u32)
    }

    fn seed(&mut self, seed: u64) {
        self.ftl.seed(seed);
        // Timing draws come from the run's seed alone, so a round's timing noise does not
        // depend on how many draws earlier rounds made (a purged drive repeats its FOB run).
        self.flash.rng = crate::rng::Rng::new(0x000F_1A54 ^ seed.rotate_left(29));
    }

    #[inline(always)]
    fn prefetch(&self, off: u64, stage: u32) {
        self.ftl.prefetch((off / UNIT) as u32, stage);
    }

    fn idle_until(&mut self, since: u64, until: u64) {
        if !self.cfg.bg_gc && self.cfg.n_slc == 0 {
            return;
        }
        let step = self.cfg.chunks_per_prog * self.cfg.dies;
        loop {
            let start = self.flash.all_idle_at().max(since + self.cfg.idle_ns);
            if start >= until {
                break;
            }
            if !self.ftl.bg_step(start, &mut self.flash, step) {
                break;
            }
        }
    }
}
