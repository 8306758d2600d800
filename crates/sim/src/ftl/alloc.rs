//! Where written data goes: the SLC cache's open block, and in the main area the host or
//! the GC frontier block, whose pages are given to dies dynamically (the least-busy die
//! with room).

use super::*;

impl Ftl {
    pub(super) fn slc_room(&mut self, c: u32, t: u64, flash: &mut Flash) -> bool {
        if self.slc_front != NONE {
            if self.slc_wp + c <= self.slc_cpb {
                return true;
            }
            self.c.pad_chunks += (self.slc_cpb - self.slc_wp) as u64;
            self.state[self.slc_front as usize] = CLOSED;
            if self.valid[self.slc_front as usize] == 0 {
                self.slc_dead.push(self.slc_front);
            }
            self.slc_closed.push_back(self.slc_front);
            self.slc_front = NONE;
        }
        let b = match self.slc_free.pop_front() {
            Some(b) => b,
            None => {
                // A cached block whose data was all overwritten costs only an erase.
                let mut found = NONE;
                while let Some(b) = self.slc_dead.pop() {
                    if self.state[b as usize] == CLOSED && self.valid[b as usize] == 0 {
                        found = b;
                        break;
                    }
                }
                if found == NONE {
                    return false;
                }
                self.erase_block(found, t, flash);
                self.slc_free.pop_back().expect("just freed")
            }
        };
        self.state[b as usize] = OPEN;
        self.slc_front = b;
        self.slc_wp = 0;
        true
    }

    /// Whether `c` more chunks fit on some die of the GC frontier block.
    pub(super) fn gc_front_room(&self, c: u32) -> bool {
        let share = self.share;
        let f = &self.fronts[1];
        f.blk != NONE && f.dwp.iter().any(|&w| w + c <= share)
    }

    /// The die for the next `c` chunks of frontier `k`: the open page's die until that page
    /// is full, then the least-busy die with room in the block (NONE when the block is full).
    #[inline(always)]
    fn pick_die(&mut self, k: usize, c: u32, flash: &Flash) -> u32 {
        let share = self.share;
        let f = &mut self.fronts[k];
        if f.cd != NONE {
            let w = f.dwp[f.cd as usize];
            if w < f.page_end && w + c <= share {
                return f.cd;
            }
        }
        // Without branches on the die times: which die is least busy is a coin toss for
        // the branch predictor, and this runs for every chunk written.
        let mut best = NONE;
        let mut best_busy = 0;
        for (d, (&w, &busy)) in f.dwp.iter().zip(&flash.die_busy).enumerate() {
            let take = (w + c <= share) & ((best == NONE) | (busy < best_busy));
            best = if take { d as u32 } else { best };
            best_busy = if take { busy } else { best_busy };
        }
        if best != NONE {
            f.cd = best;
            f.page_end = f.dwp[best as usize] + 1;
        }
        best
    }

    pub(super) fn place_main(&mut self, lpn: u32, c: u32, is_gc: bool, t: u64, flash: &mut Flash) -> u32 {
        let k = is_gc as usize;
        let d = loop {
            if self.fronts[k].blk != NONE {
                let d = self.pick_die(k, c, flash);
                if d != NONE {
                    break d;
                }
                self.c.pad_chunks += (self.cpb - self.fronts[k].wp) as u64;
                let b = self.fronts[k].blk;
                self.fronts[k].blk = NONE;
                self.close_main(b);
            }
            if !is_gc && self.free.len() < 2 {
                self.gc_sync(t, flash);
                continue;
            }
            let b = self.free.pop_front().expect(
                "FTL invariant broken: no free block for a GC copy (please report this bug)",
            );
            if is_gc && self.free.is_empty() {
                self.urgent = true;
            }
            self.state[b as usize] = OPEN;
            self.fronts[k].open(b);
        };
        // The die's share is laid out page by page in the block's die stripe (flash.rs).
        let o = self.fronts[k].dwp[d as usize];
        let addr = self.die_addr(k, d, o);
        let f = &mut self.fronts[k];
        f.dwp[d as usize] += c;
        f.wp += c;
        self.map(lpn, addr, c);
        // This die's next unit goes right after: have its reverse-map slot ready by then.
        self.rmap.prefetch_slot(self.die_addr(k, d, o + c));
        addr
    }

    /// Address of the chunk at offset `o` of die `d`'s share of frontier `k`'s block.
    #[inline(always)]
    fn die_addr(&self, k: usize, d: u32, o: u32) -> u32 {
        let cpp = self.cpp;
        let page = cpp.quot(o as u64) as u32;
        self.fronts[k].blk * self.cpb + (page * self.dies + d) * (cpp.d as u32) + cpp.modulo(o as u64) as u32
    }
}

impl Front {
    pub(super) fn new(dies: u32) -> Front {
        Front { blk: NONE, wp: 0, dwp: vec![0; dies as usize], cd: NONE, page_end: 0 }
    }

    pub(super) fn open(&mut self, b: u32) {
        self.blk = b;
        self.wp = 0;
        self.dwp.iter_mut().for_each(|w| *w = 0);
        self.cd = NONE;
    }
}
