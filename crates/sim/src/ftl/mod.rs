//! Page-mapped FTL: flat L2P/P2L arrays over mapping chunks, per-block valid counts, a
//! bucketed free/victim structure so greedy victim choice is O(1) amortised, separate write
//! frontiers for host data and GC copies (as real FTLs keep them: copied data is colder,
//! and mixed into host blocks it would keep them partly valid after the host rewrites its
//! data), an optional static SLC cache,
//! and proportional foreground GC with a synchronous safety net.
//!
//! Addresses are chunks: a chunk is the 4 KiB mapping unit, or a quarter of it on a
//! compressing drive, where a unit's compressed data takes 1..=4 consecutive chunks.
//!
//! Free-space invariant (why the FTL never deadlocks, where a simpler FTL can: GC needing a free block it cannot get): between host
//! operations at least one free block exists; the host may open a new frontier block only
//! when two are free (otherwise it first reclaims synchronously); a GC copy that takes the
//! last free block sets `urgent`, so its victim is finished at once and frees a block again.
//! A victim holds fewer valid chunks than a block, so finishing it always fits.

use std::collections::VecDeque;

use crate::config::{Policy, SsdConfig};
use crate::div::Div32;
use crate::driver::prefetch;
use crate::flash::Flash;
use crate::rng::Rng;

mod alloc;
mod blocks;
mod gc;
mod pass;
mod persist;
mod rmap;

pub use blocks::Blk;
use blocks::Order;
use rmap::RevMap;

pub const NONE: u32 = u32::MAX;
pub const FREE: u8 = 0;
pub const OPEN: u8 = 1;
pub const CLOSED: u8 = 2;
pub const VICTIM: u8 = 3;
const GQ: usize = 8;

#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counters {
    pub host_chunks: u64,
    pub gc_chunks: u64,
    pub evict_chunks: u64,
    pub gc_runs: u64,
    pub slc_evictions: u64,
    pub erases: u64,
    pub trimmed_units: u64,
    pub rmw_reads: u64,
    pub pad_chunks: u64,
    pub bg_steps: u64,
}

/// An open main-area block being filled.
pub struct Front {
    blk: u32,
    /// Chunks used in the block, over all dies.
    wp: u32,
    /// Write point per die: chunks used in the block's share on each die. A page goes to
    /// the least-busy die with room (dynamic die allocation, as real FTLs do), so a die
    /// with a GC backlog does not hold buffered host data for long.
    dwp: Vec<u32>,
    /// The die the open page is on, and the die-share offset where that page ends.
    cd: u32,
    page_end: u32,
}

pub struct Ftl {
    pub cpb: u32,
    cpb_div: Div32,
    pub n_main: u32,
    pub n_slc: u32,
    slc_cpb: u32,
    g: u32,
    gc_reserve: usize,
    /// Free blocks below which foreground GC starts (at a fraction of full speed that
    /// grows to 1 at `gc_reserve`), so the cliff banks instead of dropping at once.
    gc_soft: usize,
    /// The share of a host chunk foreground GC owes (`gc_progress`) at `owed_at` free
    /// blocks: it changes only when a block is taken or freed, and costs a division.
    owed_at: usize,
    owed: f64,
    /// Copying owed below which foreground GC waits: it runs in slices.
    slice: f64,
    bg_target: usize,
    bg_gc: bool,
    policy: Policy,
    /// Greedy compares this many blocks drawn at random (0: every block).
    choices: u16,
    /// Whether a periodic GC pass is running (set by the drive from its clock), the chunks
    /// its walk copies per host chunk then, and the walk: the block it is emptying, how far,
    /// the next block it looks at and the copying owed (pass.rs).
    pub pass: bool,
    pass_share: f64,
    wblock: u32,
    wcur: u32,
    wnext: u32,
    wcredit: f64,
    pub l2p: Vec<u32>,
    lens: Vec<u8>,
    rmap: RevMap,
    vbits: Vec<u64>,
    /// Per block: its valid count, state and valid-count bucket links (`Blk`).
    pub blk: Vec<Blk>,
    pub erases: Vec<u32>,
    stamp: Vec<u64>,
    bhead: Vec<u32>,
    bmin: u32,
    /// The buckets' order when GC draws its victims (blocks.rs), where no lists are kept.
    order: Order,
    fifo: VecDeque<u32>,
    pub free: VecDeque<u32>,
    /// The open main-area blocks: `fronts[0]` takes host data, `fronts[1]` GC copies.
    fronts: [Front; 2],
    cpp: Div32,
    dies: u32,
    /// The dies, when units are striped over them by address (`die_alloc` striped).
    stripe: Option<Div32>,
    /// Chunks of an FTL block on each die.
    share: u32,
    /// How far ahead of a frontier die's write its next reverse-map entry is fetched: two
    /// rows of the block's pages (a row is a program unit on every die, `dies · cpp` chunks),
    /// so a die writes there after the other dies have written two units each (alloc.rs).
    rows_ahead: u64,
    slc_free: VecDeque<u32>,
    slc_closed: VecDeque<u32>,
    slc_dead: Vec<u32>,
    slc_front: u32,
    slc_wp: u32,
    victim: u32,
    vcur: u32,
    /// Chunks copied out of the victim so far.
    vcopied: u32,
    /// Live chunks of the victim found ahead of copying, whose map entries were prefetched.
    gq: [u64; GQ],
    gq_head: usize,
    gq_len: usize,
    /// Free space (chunks) foreground GC owes; negative when it has reclaimed ahead.
    credit: f64,
    /// Chunks copied per chunk of free space gained: the victim's own, or with pacing the
    /// average of the recent victims' (`pace_v` / `pace_g`, moving averages over about
    /// `pace_n` victims of their valid chunks and their gain).
    ratio: f64,
    pace_n: f64,
    pace_v: f64,
    pace_g: f64,
    /// `release`'s share for one chunk and the `pace_g` it was computed for.
    release_one: f64,
    release_at: f64,
    /// Free space gained beyond what the copies paid for (negative: short of it), given to
    /// foreground GC gradually when it paces (gc.rs `release`).
    carry: f64,
    per_chunk: f64,
    urgent: bool,
    svictim: u32,
    svcur: u32,
    seq: u64,
    rng: Rng,
    last_page: u64,
    pub c: Counters,
}

/// A large map, backed by transparent huge pages where the kernel allows them (Linux
/// `madvise`, honoured in THP's default "madvise" mode). The maps are read at random, an
/// entry or two per IO: with 4 KiB pages nearly every access also misses the TLB once the
/// maps outgrow its reach, and the page walk misses the cache, which is what slowed large
/// drives down (2 TB: 4 GiB of maps).
fn big_vec<T: Copy>(n: usize, v: T) -> Vec<T> {
    let mut x: Vec<T> = Vec::with_capacity(n);
    let bytes = n * std::mem::size_of::<T>();
    #[cfg(target_os = "linux")]
    if bytes >= 4 << 20 {
        extern "C" {
            fn madvise(addr: *mut core::ffi::c_void, len: usize, advice: i32) -> i32;
        }
        const MADV_HUGEPAGE: i32 = 14;
        let p = x.as_mut_ptr() as usize;
        let (start, end) = ((p + 4095) & !4095, (p + bytes) & !4095);
        // SAFETY: the range lies inside this Vec's own, not yet touched allocation, and
        // madvise only advises (a refusal leaves ordinary pages).
        unsafe {
            madvise(start as *mut core::ffi::c_void, end - start, MADV_HUGEPAGE);
        }
    }
    let _ = bytes;
    x.resize(n, v);
    x
}

impl Ftl {
    pub fn new(cfg: &SsdConfig) -> Ftl {
        let n = cfg.n_blocks as usize;
        let total = cfg.total_chunks() as usize;
        let g = cfg.chunks_per_unit;
        let user_blocks = (cfg.user_units as u64 * g as u64).div_ceil(cfg.cpb as u64) as usize;
        let spare = (cfg.n_main() as usize).saturating_sub(user_blocks);
        let bg_extra = (cfg.bg_reserve_pct / 100.0 * spare as f64).ceil() as usize;
        let mut f = Ftl {
            cpb: cfg.cpb,
            cpb_div: Div32::new(cfg.cpb as u64),
            n_main: cfg.n_main(),
            n_slc: cfg.n_slc,
            slc_cpb: cfg.slc_cpb,
            g,
            gc_reserve: cfg.gc_reserve as usize,
            gc_soft: cfg.gc_reserve as usize + (cfg.gc_start * spare as f64).round() as usize,
            owed_at: usize::MAX,
            owed: 0.0,
            slice: cfg.gc_slice as f64 - 1.0,
            bg_target: cfg.gc_reserve as usize + bg_extra,
            bg_gc: cfg.bg_gc,
            policy: cfg.policy,
            choices: cfg.gc_choices,
            pass: false,
            pass_share: cfg.gc_pass_share,
            wblock: NONE,
            wcur: 0,
            wnext: 0,
            wcredit: 0.0,
            l2p: big_vec(cfg.user_units as usize, NONE),
            // each unit's stored length only where a unit holds several chunks
            lens: big_vec(if g > 1 { cfg.user_units as usize } else { 0 }, 0),
            rmap: RevMap::new(total, if g == 1 { 0 } else { cfg.rmap_slots() as usize }),
            vbits: big_vec(total.div_ceil(64), 0),
            blk: vec![Blk::default(); n],
            erases: vec![0; n],
            stamp: vec![0; n],
            bhead: vec![NONE; cfg.cpb as usize + 1],
            bmin: 0,
            order: Order::new(n),
            fifo: VecDeque::new(),
            free: VecDeque::new(),
            fronts: [Front::new(cfg.dies), Front::new(cfg.dies)],
            cpp: Div32::new(cfg.chunks_per_prog as u64),
            dies: cfg.dies,
            stripe: cfg.striped.then(|| Div32::new(cfg.dies as u64)),
            share: cfg.cpb / cfg.dies,
            rows_ahead: 2 * cfg.dies as u64 * cfg.chunks_per_prog as u64,
            slc_free: VecDeque::new(),
            slc_closed: VecDeque::new(),
            slc_dead: Vec::new(),
            slc_front: NONE,
            slc_wp: 0,
            victim: NONE,
            vcur: 0,
            vcopied: 0,
            gq: [0; GQ],
            gq_head: 0,
            gq_len: 0,
            credit: 0.0,
            ratio: 0.0,
            pace_n: cfg.gc_pace_victims as f64,
            pace_v: 0.0,
            pace_g: 0.0,
            release_one: 0.0,
            release_at: f64::NAN,
            carry: 0.0,
            per_chunk: 0.0,
            urgent: false,
            svictim: NONE,
            svcur: 0,
            seq: 0,
            rng: Rng::new(0x05EE_DF71),
            last_page: u64::MAX,
            c: Counters::default(),
        };
        f.reset_lists();
        f
    }

    /// Mix a workload's seed into the random victim choice: runs with different seeds pick
    /// different victims, the same history and seed the same ones.
    pub fn seed(&mut self, seed: u64) {
        self.rng = Rng::new(self.rng.state() ^ seed.rotate_left(17));
    }

    fn reset_lists(&mut self) {
        self.free = (0..self.n_main).collect();
        self.slc_free = (self.n_main..self.n_main + self.n_slc).collect();
        self.slc_closed.clear();
        self.slc_dead.clear();
        self.fifo.clear();
        self.bhead.iter_mut().for_each(|h| *h = NONE);
        self.bmin = 0;
        self.order = Order::new(self.blk.len());
        self.fronts.iter_mut().for_each(|f| f.open(NONE));
        self.slc_front = NONE;
        self.slc_wp = 0;
        self.victim = NONE;
        self.wblock = NONE;
        self.wcredit = 0.0;
        self.svictim = NONE;
        self.credit = 0.0;
        self.carry = 0.0;
        // a purged drive has no victims behind it: pacing estimates its cost afresh
        self.pace_v = 0.0;
        self.pace_g = 0.0;
        self.urgent = false;
    }

    /// Bytes held by the mapping structures and the per-block records, counters and lists
    /// (for the memory goal).
    pub fn memory_bytes(&self) -> usize {
        let lists = [&self.fifo, &self.free, &self.slc_free, &self.slc_closed];
        self.l2p.capacity() * 4
            + self.lens.capacity()
            + self.rmap.memory_bytes()
            + self.vbits.capacity() * 8
            + self.blk.capacity() * std::mem::size_of::<Blk>()
            + self.erases.capacity() * 4
            + self.stamp.capacity() * 8
            + self.bhead.capacity() * 4
            + self.order.memory_bytes()
            + lists.iter().map(|l| l.capacity() * 4).sum::<usize>()
            + self.slc_dead.capacity() * 4
            + self
                .fronts
                .iter()
                .map(|f| f.dwp.capacity() * 4)
                .sum::<usize>()
    }

    #[inline(always)]
    pub fn len_of(&self, lpn: u32) -> u32 {
        if self.g == 1 {
            1
        } else {
            self.lens[lpn as usize] as u32
        }
    }

    /// Stage 0: bring `lpn`'s map entry into cache; stage 1: the valid bit of its location
    /// (and its reverse-map slot).
    #[inline(always)]
    pub fn prefetch(&self, lpn: u32, stage: u32) {
        if let Some(a) = self.l2p.get(lpn as usize) {
            if stage == 0 {
                prefetch(a);
            } else if *a != NONE {
                if let Some(w) = self.vbits.get((*a >> 6) as usize) {
                    prefetch(w);
                }
                self.rmap.prefetch_slot(*a);
            }
        }
    }

    #[inline(always)]
    fn set_bit(&mut self, a: u64) {
        self.vbits[(a >> 6) as usize] |= 1u64 << (a & 63);
    }

    #[inline(always)]
    fn clear_bit(&mut self, a: u64) {
        self.vbits[(a >> 6) as usize] &= !(1u64 << (a & 63));
    }

    /// The chunk at `lpn`'s current location is no longer live.
    #[inline(always)]
    fn invalidate(&mut self, lpn: u32) {
        let old = self.l2p[lpn as usize];
        if old == NONE {
            return;
        }
        let c = self.len_of(lpn);
        let b = self.cpb_div.quot(old as u64) as u32;
        self.clear_bit(old as u64);
        self.rmap.remove(old);
        let k = &mut self.blk[b as usize];
        let v = k.valid;
        k.valid = v - c;
        if k.state == CLOSED {
            if b < self.n_main {
                if self.policy == Policy::Greedy {
                    self.bucket_remove(b, v);
                    self.bucket_insert(b, v - c);
                }
            } else if v == c {
                self.slc_dead.push(b);
            }
        }
    }

    /// `lpn`'s `c` chunks are now at `addr`, in block `b` (the caller's open block: not
    /// divided out of the address again).
    #[inline(always)]
    fn map(&mut self, lpn: u32, addr: u32, c: u32, b: u32) {
        debug_assert_eq!(b as u64, self.cpb_div.quot(addr as u64));
        self.l2p[lpn as usize] = addr;
        if self.g > 1 {
            self.lens[lpn as usize] = c as u8;
        }
        self.rmap.set(addr, lpn);
        self.set_bit(addr as u64);
        self.blk[b as usize].valid += c;
    }

    fn close_main(&mut self, b: u32) {
        self.blk[b as usize].state = CLOSED;
        self.stamp[b as usize] = self.seq;
        self.seq += 1;
        match self.policy {
            Policy::Greedy => self.bucket_insert(b, self.blk[b as usize].valid),
            Policy::Fifo => self.fifo.push_back(b),
            _ => {}
        }
    }

    fn erase_block(&mut self, b: u32, t: u64, flash: &mut Flash) {
        debug_assert_eq!(
            self.blk[b as usize].valid, 0,
            "erasing a block with live data"
        );
        self.blk[b as usize].state = FREE;
        self.erases[b as usize] += 1;
        self.c.erases += 1;
        flash.erase(t);
        if b < self.n_main {
            self.free.push_back(b);
        } else {
            self.slc_free.push_back(b);
        }
    }

    /// Host write of one unit (`c` chunks) whose data is in the controller at `t`; returns
    /// when its program starts on the die and when it is done.
    #[inline(always)]
    pub fn host_write(&mut self, lpn: u32, c: u32, t: u64, flash: &mut Flash) -> (u64, u64) {
        self.invalidate(lpn);
        self.c.host_chunks += c as u64;
        if self.n_slc > 0 && self.slc_room(c, t, flash) {
            let addr = self.slc_front * self.cpb + self.slc_wp;
            self.slc_wp += c;
            self.map(lpn, addr, c, self.slc_front);
            let done = flash.program(addr as u64, c, t);
            return (flash.started, done);
        }
        let done = self.place_main(lpn, c, false, t, flash);
        let start = flash.started;
        self.gc_progress(c, t, flash);
        if self.pass {
            self.walk(c, t, flash);
        }
        (start, done)
    }

    pub fn trim(&mut self, lpn: u32) {
        if self.l2p[lpn as usize] != NONE {
            self.invalidate(lpn);
            self.l2p[lpn as usize] = NONE;
            self.c.trimmed_units += 1;
        }
    }

    /// Purge: every block erased, nothing mapped (wear is kept, as on a real drive).
    pub fn purge(&mut self, t: u64, flash: &mut Flash) {
        for b in 0..(self.n_main + self.n_slc) as usize {
            if self.blk[b].state != FREE {
                self.erases[b] += 1;
                self.c.erases += 1;
                flash.erase(t);
            }
            self.blk[b].state = FREE;
            self.blk[b].valid = 0;
        }
        self.l2p.iter_mut().for_each(|x| *x = NONE);
        self.rmap.clear();
        self.vbits.iter_mut().for_each(|x| *x = 0);
        self.reset_lists();
    }

    /// Whether the SLC cache has no free block left and holds data to evict.
    #[inline(always)]
    pub fn slc_full(&self) -> bool {
        self.n_slc > 0
            && self.slc_free.is_empty()
            && (self.svictim != NONE || !self.slc_closed.is_empty())
    }

    pub fn free_blocks(&self) -> usize {
        self.free.len()
    }

    pub fn mapped_units(&self) -> usize {
        self.l2p.iter().filter(|&&x| x != NONE).count()
    }
}
