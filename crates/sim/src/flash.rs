//! NAND timing by resource reservation: every die and channel has a busy-until virtual
//! timestamp that each operation pushes forward, in issue order. This is O(1) per operation
//! and lets garbage collection delay host IO naturally (GC pauses).
//!
//! Each resource books an operation's work from the operation's issue time, not from when
//! its input will be ready on another resource: booking a channel at the future moment a
//! backlogged die finishes a read would leave the channel idle until then and starve the
//! other dies on it (FCFS reservation cannot backfill). The operation still completes no
//! earlier than its input is ready plus its own service time. Throughput is exact, and
//! latency is that of a controller that interleaves its queues.
//!
//! Programs are charged per mapping chunk: a multi-plane page program of `t_prog` covers
//! `chunks_per_prog` chunks, so each costs t_prog/chunks_per_prog of die time. Throughput is
//! exact; a read may slip in between the chunks of one page program (mild read priority).
//!
//! Operation times are not constants: each read, program and erase takes its nominal time
//! times a triangular factor in [1 − spread, 1 + spread] (cell-to-cell and page-to-page
//! variation), and a small share of reads needs read retries (1 to 4 further array reads at
//! shifted reference voltages). The draws come from a generator seeded with the workload,
//! so runs stay reproducible.

use crate::config::SsdConfig;
use crate::div::Div32;
use crate::rng::Rng;
pub use crate::varied::Varied;

/// The smaller of two u64, as one compare and conditional move: which of two dies is less
/// busy is a coin toss for a branch, and left to itself LLVM vectorises short minimum loops,
/// with SSE2 (no 64-bit compare) a dozen instructions per compare.
#[inline(always)]
fn min_u64(a: u64, b: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let mut a = a;
        // SAFETY: a compare and a move between registers; no memory, stack or flags kept.
        unsafe {
            core::arch::asm!("cmp {b}, {a}", "cmovb {a}, {b}", a = inout(reg) a, b = in(reg) b,
                options(pure, nomem, nostack));
        }
        a
    }
    #[cfg(not(target_arch = "x86_64"))]
    a.min(b)
}

pub struct Flash {
    pub dies: u32,
    dies_div: Div32,
    chans: Div32,
    cpb: Div32,
    n_main: u64,
    cpp: Div32, // chunks per die program (multi-plane page)
    cpg: Div32, // chunks per flash page
    pub die_busy: Vec<u64>,
    pub chan_busy: Vec<u64>,
    /// Lower and upper pages' read times (MLC/TLC pages of one cell read at different cost).
    t_read: [Varied; 2],
    t_read_slc: Varied,
    tp_chunk: u64,
    tp_chunk_slc: u64,
    /// A one-chunk program's time on the main area and in SLC, as `tp_chunk` and
    /// `tp_chunk_slc` varied (the usual program: one chunk per unit).
    tp_one: [Varied; 2],
    t_erase: u64,
    xfer_chunk: u64,
    /// Spread as a share in 1/2^16 (0 = fixed times).
    spread: u64,
    /// Probability of a read retry in 1/2^32.
    retry: u64,
    pub rng: Rng,
    /// When the last program started on its die: its data left the controller's buffer
    /// for the die's cache register then (cache programming).
    pub started: u64,
    /// When the last array read finished (its page in the die's register).
    pub sensed: u64,
    /// The least-busy die is asked for every chunk placed: each die's `busy << kshift | die`
    /// orders by time, then index, in one u64 compare. The keys are the leaves of a
    /// tournament tree (`tree[1]` the least, node i the lesser of 2i and 2i + 1, the leaves
    /// from `leaves` on, past the last die u64::MAX): a busy time that changes updates its
    /// path to the root, a few compares, where a scan of every die took one per die for
    /// every chunk. `over` has bits set once a busy time is too large for the packed key
    /// (centuries of virtual time).
    tree: Vec<u64>,
    leaves: usize,
    /// The tree's depth when it is kept (`NO_TREE` when not: a drive that stripes units over
    /// dies by address never asks for the least-busy die, and keeping the tree costs a path
    /// per read and program). `over` is also set for such a drive, so `least_busy` tests one
    /// word; `kmask` keeps a key's die bits.
    levels: u32,
    over: u64,
    kshift: u32,
    kmask: u64,
}

const NO_TREE: u32 = u32::MAX;

impl Flash {
    pub fn new(c: &SsdConfig) -> Flash {
        let chunk_bytes = c.chunk_bytes() as f64;
        let spread = (c.spread * 65536.0).round() as u64;
        let tp_chunk = (c.t_prog_ns as f64 / c.chunks_per_prog as f64).round() as u64;
        let tp_chunk_slc = (c.slc_t_prog_ns as f64 / c.chunks_per_prog as f64).round() as u64;
        Flash {
            dies: c.dies,
            dies_div: Div32::new(c.dies as u64),
            chans: Div32::new(c.channels as u64),
            cpb: Div32::new(c.cpb as u64),
            n_main: c.n_main() as u64,
            cpp: Div32::new(c.chunks_per_prog as u64),
            cpg: Div32::new(c.chunks_per_page as u64),
            die_busy: vec![0; c.dies as usize],
            chan_busy: vec![0; c.channels as usize],
            t_read: [1.0 - c.read_skew, 1.0 + c.read_skew]
                .map(|f| Varied::new((c.t_read_ns as f64 * f) as u64, spread)),
            t_read_slc: Varied::new(c.slc_t_read_ns, spread),
            tp_chunk,
            tp_chunk_slc,
            tp_one: [
                Varied::new(tp_chunk, spread),
                Varied::new(tp_chunk_slc, spread),
            ],
            t_erase: c.t_erase_ns,
            xfer_chunk: (chunk_bytes * 1000.0 / c.channel_mbps).round() as u64,
            spread,
            retry: (c.read_retry * 4294967296.0).round() as u64,
            rng: Rng::new(0x000F_1A54), // as purge() resets it
            started: 0,
            sensed: 0,
            tree: Vec::new(),
            leaves: (c.dies as usize).next_power_of_two(),
            levels: if c.striped {
                NO_TREE
            } else {
                c.dies.next_power_of_two().trailing_zeros()
            },
            over: c.striped as u64,
            kshift: u32::BITS - (c.dies.max(2) - 1).leading_zeros(),
            kmask: (1 << (u32::BITS - (c.dies.max(2) - 1).leading_zeros())) - 1,
        }
        .with_tree()
    }

    fn with_tree(mut self) -> Flash {
        self.tree = vec![u64::MAX; 2 * self.leaves];
        self.touch_all();
        self
    }

    #[inline(always)]
    fn set_busy(&mut self, d: usize, t: u64) {
        self.die_busy[d] = t;
        // The path has as many levels as the tree's depth, which is also the key's shift
        // (dies rounded up to a power of two, for 2 dies or more): unrolled, with the shift
        // a constant, for the usual dies.
        match self.levels {
            5 => self.set_key::<5>(d, t),
            4 => self.set_key::<4>(d, t),
            6 => self.set_key::<6>(d, t),
            NO_TREE => {}
            _ => {
                self.over |= t >> (64 - self.kshift);
                let mut v = t << self.kshift | d as u64;
                let mut i = self.leaves + d;
                let tree = &mut self.tree[..];
                tree[i] = v;
                while i > 1 {
                    v = min_u64(v, tree[i ^ 1]);
                    i >>= 1;
                    tree[i] = v;
                }
            }
        }
    }

    /// Die `d`'s key for busy time `t` in a tree of `2^LEVELS` leaves (whose keys shift the
    /// time by LEVELS bits), and the key's path to the root.
    #[inline(always)]
    fn set_key<const LEVELS: u32>(&mut self, d: usize, t: u64) {
        debug_assert_eq!(self.kshift, LEVELS);
        self.over |= t >> (64 - LEVELS);
        self.set_path::<LEVELS>(d, t << LEVELS | d as u64);
    }

    /// Leaf `d` of a tree of `2^LEVELS` leaves takes the key `v`, and its path to the root
    /// the lesser of each pair: LEVELS compares and moves, no loop, and one bounds check, of
    /// the tree's length against a constant: the leaf's index, masked to the leaves (`d` is
    /// one of them), bounds every index on the path for the compiler.
    #[inline(always)]
    fn set_path<const LEVELS: u32>(&mut self, d: usize, mut v: u64) {
        debug_assert!(d < 1 << LEVELS);
        let tree = &mut self.tree[..2 << LEVELS];
        let mut i = (1 << LEVELS) | (d & ((1 << LEVELS) - 1));
        tree[i] = v;
        for _ in 0..LEVELS {
            v = min_u64(v, tree[i ^ 1]);
            i >>= 1;
            tree[i] = v;
        }
    }

    /// Every die's busy time may have changed (a loaded state).
    pub fn touch_all(&mut self) {
        for d in 0..self.die_busy.len() {
            self.set_busy(d, self.die_busy[d]);
        }
    }

    /// The least-busy die, the first of equals; None when a busy time is too large for the
    /// packed key, or when the tree is not kept.
    #[inline(always)]
    pub fn least_busy(&self) -> Option<u32> {
        if self.over != 0 {
            return None;
        }
        // SAFETY: `with_tree` makes the tree 2 * leaves >= 2 nodes long, and it never shrinks.
        Some((unsafe { *self.tree.get_unchecked(1) } & self.kmask) as u32)
    }

    /// The least-busy die other than `x`, the die `least_busy` gave (the first of equals):
    /// the least of the keys beside `x`'s path to the root, one compare per level, where a
    /// scan of the dies takes one per die. None when no other die has a key (the leaves past
    /// the last die are u64::MAX) or the tree is not in use (`least_busy` gave None).
    #[inline(always)]
    pub fn least_busy_but(&self, x: u32) -> Option<u32> {
        if self.over != 0 {
            return None;
        }
        let mut i = self.leaves + x as usize;
        let tree = &self.tree[..(i | 1) + 1];
        let mut v = u64::MAX;
        while i > 1 {
            // SAFETY: i ^ 1 <= i | 1 < tree.len(), and i only shrinks.
            v = min_u64(v, unsafe { *tree.get_unchecked(i ^ 1) });
            i >>= 1;
        }
        (v != u64::MAX).then_some((v & self.kmask) as u32)
    }

    /// The drive's spread over `base` (`Varied`), for a time a command path varies often.
    pub fn varied(&self, base: u64) -> Varied {
        Varied::new(base, self.spread)
    }

    #[inline(always)]
    pub fn vary(&mut self, base: u64) -> u64 {
        self.vary_by(Varied::new(base, self.spread))
    }

    /// `vary` of a time whose spread was worked out before (`varied`).
    #[inline(always)]
    pub fn vary_by(&mut self, v: Varied) -> u64 {
        if self.spread == 0 {
            return v.lo; // the time itself: no spread
        }
        let r = self.rng.next_u64();
        v.by(r)
    }

    /// `vary`, but no draw for a time of 0 (a mechanism a preset does not use leaves the
    /// timing of the others as it was).
    #[inline(always)]
    pub fn vary_some(&mut self, base: u64) -> u64 {
        if base == 0 {
            return 0;
        }
        self.vary(base)
    }

    /// An array read's time: varied, and now and then retried (bits 32-33 of the draw
    /// give the number of retries, bits 34-63 decide whether there are any).
    #[inline(always)]
    fn read_time(&mut self, v: Varied) -> u64 {
        let base = v.base();
        if self.spread == 0 && self.retry == 0 {
            return base;
        }
        let r = self.rng.next_u64();
        let t = v.by(r);
        if (r >> 34) < (self.retry >> 2) {
            t + base * (1 + ((r >> 32) & 3))
        } else {
            t
        }
    }

    #[inline(always)]
    fn die_of(&self, addr: u64) -> usize {
        self.dies_div.modulo(self.cpp.quot(self.cpb.modulo(addr))) as usize
    }

    #[inline(always)]
    fn is_slc(&self, addr: u64) -> bool {
        self.cpb.quot(addr) >= self.n_main
    }

    /// Flash page holding a chunk (reads of chunks in one page share one array read).
    #[inline(always)]
    pub fn page_of(&self, addr: u64) -> u64 {
        self.cpg.quot(addr)
    }

    /// Program `c` chunks at `addr` whose data is in the controller at `ready`; returns
    /// when the program is done.
    #[inline(always)]
    pub fn program(&mut self, addr: u64, c: u32, ready: u64) -> u64 {
        self.program_on(self.die_of(addr), self.is_slc(addr), c, ready)
    }

    /// `program` of a main-area chunk whose die the FTL has just chosen.
    #[inline(always)]
    pub fn program_main(&mut self, d: u32, c: u32, ready: u64) -> u64 {
        self.program_on(d as usize, false, c, ready)
    }

    #[inline(always)]
    fn program_on(&mut self, d: usize, slc: bool, c: u32, ready: u64) -> u64 {
        let ch = self.chans.modulo(d as u64) as usize;
        let xfer = self.xfer_chunk * c as u64;
        let x = self.chan_busy[ch].max(ready) + xfer;
        self.chan_busy[ch] = x;
        let tp = if c == 1 {
            self.vary_by(self.tp_one[slc as usize])
        } else {
            self.vary(
                if slc {
                    self.tp_chunk_slc
                } else {
                    self.tp_chunk
                } * c as u64,
            )
        };
        let p = self.die_busy[d].max(ready + xfer) + tp;
        self.set_busy(d, p);
        // The data leaves the buffer once it has crossed the channel and the die is free.
        self.started = (p - tp).max(x);
        p.max(x + tp)
    }

    /// Read `c` chunks at `addr` into the controller, starting no earlier than `ready`. The
    /// array read is skipped when the previous read (tracked in `last_page`) was the same page.
    #[inline(always)]
    pub fn read(&mut self, addr: u64, c: u32, ready: u64, last_page: &mut u64) -> u64 {
        let (o, slc) = (self.cpb.modulo(addr), self.is_slc(addr));
        self.read_at(addr, o, slc, c, ready, last_page)
    }

    /// `read` of the chunk at `addr`, offset `o` in its block, of a main-area block (GC's
    /// victim, the pass's block): the caller has both, so neither is worked out again.
    #[inline(always)]
    pub fn read_main(&mut self, addr: u64, o: u64, c: u32, ready: u64, last_page: &mut u64) -> u64 {
        debug_assert!(!self.is_slc(addr) && o == self.cpb.modulo(addr));
        self.read_at(addr, o, false, c, ready, last_page)
    }

    #[inline(always)]
    fn read_at(
        &mut self,
        addr: u64,
        o: u64,
        slc: bool,
        c: u32,
        ready: u64,
        last_page: &mut u64,
    ) -> u64 {
        let stripe = self.cpp.quot(o);
        let (row, d) = self.dies_div.divmod(stripe);
        let d = d as usize;
        let ch = self.chans.modulo(d as u64) as usize;
        let page = self.page_of(addr);
        let mut r = ready;
        if page != *last_page {
            let tr = self.read_time(if slc {
                self.t_read_slc
            } else {
                // The page's index in its block alternates lower and upper pages.
                self.t_read[(row & 1) as usize]
            });
            r = self.die_busy[d].max(ready) + tr;
            self.set_busy(d, r);
            self.sensed = r;
            *last_page = page;
        }
        let xfer = self.xfer_chunk * c as u64;
        let x = self.chan_busy[ch].max(ready) + xfer;
        self.chan_busy[ch] = x;
        x.max(r + xfer)
    }

    /// Move `c` chunks at `addr` of a page already read (sensed at `sensed`) to the
    /// controller, from `ready`: a channel transfer, no array read.
    #[inline(always)]
    pub fn read_sensed(&mut self, addr: u64, c: u32, ready: u64, sensed: u64) -> u64 {
        let ch = self.chans.modulo(self.die_of(addr) as u64) as usize;
        let xfer = self.xfer_chunk * c as u64;
        let x = self.chan_busy[ch].max(ready) + xfer;
        self.chan_busy[ch] = x;
        x.max(sensed + xfer)
    }

    /// Erase an FTL block: one erase on every die, after each die's queued work.
    pub fn erase(&mut self, t: u64) {
        for d in 0..self.die_busy.len() {
            let te = self.vary(self.t_erase);
            let b = self.die_busy[d].max(t) + te;
            self.set_busy(d, b);
        }
    }

    /// When every die has finished its queued work.
    pub fn all_idle_at(&self) -> u64 {
        self.die_busy.iter().copied().max().unwrap_or(0)
    }

    pub fn reset_clock(&mut self, t: u64) {
        for b in self.die_busy.iter_mut().chain(self.chan_busy.iter_mut()) {
            *b = (*b).max(t);
        }
        self.touch_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::resolve_ssd;

    #[test]
    fn least_busy_is_the_first_die_of_the_earliest_time() {
        let cfg = resolve_ssd("enterprise-sas", &[]).unwrap();
        let mut f = Flash::new(&cfg);
        let mut rng = Rng::new(3);
        let brute = |f: &Flash| {
            (0..f.die_busy.len())
                .min_by_key(|&d| (f.die_busy[d], d))
                .unwrap() as u32
        };
        assert_eq!(f.least_busy(), Some(0));
        for _ in 0..5000 {
            // Coarse times, so that ties between dies are common.
            let addr = rng.below(cfg.n_main() as u64 * cfg.cpb as u64);
            let t = rng.below(20) * 1_000_000;
            if rng.below(2) == 0 {
                f.program(addr, 1, t);
            } else {
                let mut no_page = u64::MAX; // every read senses its page
                f.read(addr, 1, t, &mut no_page);
            }
            assert_eq!(f.least_busy(), Some(brute(&f)));
            // and the next least busy, which a frontier asks when that die is full
            let d = brute(&f);
            let next = (0..f.die_busy.len() as u32)
                .filter(|&e| e != d)
                .min_by_key(|&e| (f.die_busy[e as usize], e));
            assert_eq!(f.least_busy_but(d), next);
        }
        f.program(0, 1, u64::MAX >> 4); // beyond what a packed key holds
        assert_eq!(f.least_busy(), None);
    }
}
