//! NAND timing by resource reservation: every die and channel has a busy-until virtual
//! timestamp; an operation starts when its inputs are ready and its resource is free, and
//! pushes the busy-until forward. Operations are reserved in issue order, which makes the
//! model O(1) per operation and lets garbage collection delay host IO naturally (GC pauses).
//!
//! Programs are charged per mapping chunk: a multi-plane page program of `t_prog` covers
//! `chunks_per_prog` chunks, so each costs t_prog/chunks_per_prog of die time. Throughput is
//! exact; a read may slip in between the chunks of one page program (mild read priority).

use crate::config::SsdConfig;

pub struct Flash {
    pub dies: u32,
    chans: u32,
    cpb: u64,
    n_main: u64,
    cpp: u64, // chunks per die program (multi-plane page)
    cpg: u64, // chunks per flash page
    pub die_busy: Vec<u64>,
    pub chan_busy: Vec<u64>,
    t_read: u64,
    t_read_slc: u64,
    tp_chunk: u64,
    tp_chunk_slc: u64,
    t_erase: u64,
    xfer_chunk: u64,
}

impl Flash {
    pub fn new(c: &SsdConfig) -> Flash {
        let chunk_bytes = c.chunk_bytes() as f64;
        Flash {
            dies: c.dies,
            chans: c.channels,
            cpb: c.cpb as u64,
            n_main: c.n_main() as u64,
            cpp: c.chunks_per_prog as u64,
            cpg: c.chunks_per_page as u64,
            die_busy: vec![0; c.dies as usize],
            chan_busy: vec![0; c.channels as usize],
            t_read: c.t_read_ns,
            t_read_slc: c.slc_t_read_ns,
            tp_chunk: (c.t_prog_ns as f64 / c.chunks_per_prog as f64).round() as u64,
            tp_chunk_slc: (c.slc_t_prog_ns as f64 / c.chunks_per_prog as f64).round() as u64,
            t_erase: c.t_erase_ns,
            xfer_chunk: (chunk_bytes * 1000.0 / c.channel_mbps).round() as u64,
        }
    }

    #[inline(always)]
    fn die_of(&self, addr: u64) -> usize {
        ((addr % self.cpb) / self.cpp % self.dies as u64) as usize
    }

    #[inline(always)]
    fn is_slc(&self, addr: u64) -> bool {
        addr / self.cpb >= self.n_main
    }

    /// Flash page holding a chunk (reads of chunks in one page share one array read).
    #[inline(always)]
    pub fn page_of(&self, addr: u64) -> u64 {
        addr / self.cpg
    }

    /// Program `c` chunks at `addr` whose data is in the controller at `ready`; returns
    /// when the program is done.
    #[inline(always)]
    pub fn program(&mut self, addr: u64, c: u32, ready: u64) -> u64 {
        let d = self.die_of(addr);
        let ch = d % self.chans as usize;
        let x = self.chan_busy[ch].max(ready) + self.xfer_chunk * c as u64;
        self.chan_busy[ch] = x;
        let tp = if self.is_slc(addr) { self.tp_chunk_slc } else { self.tp_chunk };
        let p = self.die_busy[d].max(x) + tp * c as u64;
        self.die_busy[d] = p;
        p
    }

    /// Read `c` chunks at `addr` into the controller, starting no earlier than `ready`. The
    /// array read is skipped when the previous read (tracked in `last_page`) was the same page.
    #[inline(always)]
    pub fn read(&mut self, addr: u64, c: u32, ready: u64, last_page: &mut u64) -> u64 {
        let d = self.die_of(addr);
        let ch = d % self.chans as usize;
        let page = self.page_of(addr);
        let mut r = ready;
        if page != *last_page {
            let tr = if self.is_slc(addr) { self.t_read_slc } else { self.t_read };
            r = self.die_busy[d].max(ready) + tr;
            self.die_busy[d] = r;
            *last_page = page;
        }
        let x = self.chan_busy[ch].max(r) + self.xfer_chunk * c as u64;
        self.chan_busy[ch] = x;
        x
    }

    /// Erase an FTL block: one erase on every die, after each die's queued work.
    pub fn erase(&mut self, t: u64) {
        for b in self.die_busy.iter_mut() {
            *b = (*b).max(t) + self.t_erase;
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
    }
}
