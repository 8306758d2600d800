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
            self.blk[self.slc_front as usize].state = CLOSED;
            if self.blk[self.slc_front as usize].valid == 0 {
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
                    if self.blk[b as usize].state == CLOSED && self.blk[b as usize].valid == 0 {
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
        self.blk[b as usize].state = OPEN;
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

    /// The die for the next unit (`c` chunks) of frontier `k`, the least-busy die with room in
    /// the block (NONE when the block is full), and its write point (read once, here). Every unit chooses afresh, as a controller
    /// hands each unit to the first die free (`cd`, the die chosen, and `page_end`, one chunk
    /// past its write point then, are kept in the saved state).
    /// A striping drive takes the dies in turn, a program unit each, as the block's
    /// addresses run (the first with room when that one has none).
    #[inline(always)]
    fn pick_die(&mut self, k: usize, c: u32, flash: &Flash) -> (u32, u32) {
        let share = self.share;
        let (stripe, cpp) = (self.stripe, self.cpp);
        let f = &mut self.fronts[k];
        if let Some(dies) = stripe {
            let d = dies.modulo(cpp.quot(f.wp as u64)) as usize;
            if f.dwp[d] + c <= share {
                return (d as u32, f.dwp[d]);
            }
            return f
                .dwp
                .iter()
                .position(|&w| w + c <= share)
                .map_or((NONE, 0), |d| (d as u32, f.dwp[d]));
        }
        // No test of `cd` first: the unit placed after each choice moves the die's write
        // point to `page_end` or past it, so it never held (`cd` and `page_end` are still
        // kept, for the saved state).
        let (best, o) = match flash.least_busy() {
            Some(d) => match f.dwp.get(d as usize) {
                Some(&w) if w + c <= share => (d, w),
                _ => least_with_room(&f.dwp, flash, c, share),
            },
            None => least_with_room(&f.dwp, flash, c, share),
        };
        if best != NONE {
            f.cd = best;
            f.page_end = o + 1;
        }
        (best, o)
    }

    /// Map `lpn` (`c` chunks, in the controller at `t`) to the host or GC frontier and
    /// program it there; returns when the program is done.
    #[inline(always)]
    pub(super) fn place_main(
        &mut self,
        lpn: u32,
        c: u32,
        is_gc: bool,
        t: u64,
        flash: &mut Flash,
    ) -> u64 {
        let k = is_gc as usize;
        let (d, o) = loop {
            if self.fronts[k].blk != NONE {
                let (d, o) = self.pick_die(k, c, flash);
                if d != NONE {
                    break (d, o);
                }
                let pad = self.cpb - self.fronts[k].wp;
                self.c.pad_chunks += pad as u64;
                // A block closed with room units no longer fit in (compressed units of
                // mixed sizes) used that room too: foreground GC owes it, or free blocks
                // drift below the reserve to the synchronous net.
                if self.free.len() < self.gc_soft {
                    self.credit += pad as f64;
                }
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
            self.blk[b as usize].state = OPEN;
            self.fronts[k].open(b);
        };
        // The die's share is laid out page by page in the block's die stripe (flash.rs).
        let addr = self.die_addr(k, d, o);
        let f = &mut self.fronts[k];
        f.dwp[d as usize] = o + c;
        f.wp += c;
        let blk = f.blk;
        self.map(lpn, addr, c, blk);
        // This die's next unit goes right after: have its reverse-map slot ready by then.
        self.rmap.prefetch_slot(self.die_addr(k, d, o + c));
        if self.stripe.is_none() {
            // A die chosen by how busy it is: its pages are scattered over the block's rows.
            // (Striped, the block fills in address order, which the hardware fetches ahead.)
            self.rmap.prefetch_flat(addr as u64 + self.rows_ahead);
        }
        flash.program_main(d, c, t)
    }

    /// Address of the chunk at offset `o` of die `d`'s share of frontier `k`'s block.
    #[inline(always)]
    fn die_addr(&self, k: usize, d: u32, o: u32) -> u32 {
        let cpp = self.cpp;
        let (page, off) = cpp.divmod(o as u64);
        self.fronts[k].blk * self.cpb + (page as u32 * self.dies + d) * (cpp.d as u32) + off as u32
    }
}

/// The least-busy die with room for `c` more chunks in its `share` (the first of equals)
/// and its write point, NONE if none has. While a block is young every die has room, and the least-busy die
/// of all (`Flash::least_busy`) is the answer: only when it has none are the full dies
/// left out, here. A die whose share is full stays so until the block closes, and idle for
/// this frontier, so it is soon the least busy: the next least busy (one path of the die
/// tree) is asked before every die is scanned. Out of line, so the two placements that
/// inline `pick_die` do not carry it.
#[inline(never)]
fn least_with_room(dwp: &[u32], flash: &Flash, c: u32, share: u32) -> (u32, u32) {
    if let Some(e) = flash.least_busy().and_then(|d| flash.least_busy_but(d)) {
        if let Some(&w) = dwp.get(e as usize).filter(|&&w| w + c <= share) {
            return (e, w);
        }
    }
    let busy = &flash.die_busy[..];
    let n = dwp.len().min(busy.len());
    let (dwp, busy) = (&dwp[..n], &busy[..n]); // one bounds check, not one per die
    let (k, d) = argmin(n, |d| {
        if dwp[d] + c <= share {
            busy[d]
        } else {
            u64::MAX
        }
    });
    if k == u64::MAX {
        // No die with room, or (never in practice) only dies busy until the end of time.
        return (0..n)
            .find(|&d| dwp[d] + c <= share)
            .map_or((NONE, 0), |d| (d as u32, dwp[d]));
    }
    (d, dwp[d as usize])
}

/// The smallest `key(d)` for d in 0..n and the first d that has it (NONE and u64::MAX for
/// n = 0). This runs for every chunk written: which die is least busy is a coin toss for
/// the branch predictor, so there are no branches on the keys, and four lanes keep their
/// minimum apart so the comparisons do not wait on each other.
#[inline(always)]
fn argmin(n: usize, key: impl Fn(usize) -> u64) -> (u64, u32) {
    const L: usize = 4;
    let (mut k0, mut k1, mut k2, mut k3) = (u64::MAX, u64::MAX, u64::MAX, u64::MAX);
    let (mut a0, mut a1, mut a2, mut a3) = (NONE, NONE, NONE, NONE);
    let mut d = 0;
    while d + L <= n {
        let (x0, x1, x2, x3) = (key(d), key(d + 1), key(d + 2), key(d + 3));
        a0 = if x0 < k0 { d as u32 } else { a0 };
        k0 = k0.min(x0);
        a1 = if x1 < k1 { d as u32 + 1 } else { a1 };
        k1 = k1.min(x1);
        a2 = if x2 < k2 { d as u32 + 2 } else { a2 };
        k2 = k2.min(x2);
        a3 = if x3 < k3 { d as u32 + 3 } else { a3 };
        k3 = k3.min(x3);
        d += L;
    }
    while d < n {
        let x = key(d);
        a0 = if x < k0 { d as u32 } else { a0 };
        k0 = k0.min(x);
        d += 1;
    }
    let (k01, a01) = if (k1, a1) < (k0, a0) {
        (k1, a1)
    } else {
        (k0, a0)
    };
    let (k23, a23) = if (k3, a3) < (k2, a2) {
        (k3, a3)
    } else {
        (k2, a2)
    };
    if (k23, a23) < (k01, a01) {
        (k23, a23)
    } else {
        (k01, a01)
    }
}

impl Front {
    pub(super) fn new(dies: u32) -> Front {
        Front {
            blk: NONE,
            wp: 0,
            dwp: vec![0; dies as usize],
            cd: NONE,
            page_end: 0,
        }
    }

    pub(super) fn open(&mut self, b: u32) {
        self.blk = b;
        self.wp = 0;
        self.dwp.iter_mut().for_each(|w| *w = 0);
        self.cd = NONE;
    }
}
