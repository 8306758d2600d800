//! The periodic GC pass (`gc_pass_*`): while it runs, a walk over the blocks in address order
//! empties each closed block that holds invalid data into the GC frontier and erases it,
//! copying `pass_share` chunks per host chunk written, beside foreground GC. Firmware runs
//! such passes to even out wear (every block is cycled, not only the least valid ones) and
//! to refresh old data; the walk's blocks hold more valid data than GC's victims, so its
//! copying is mostly extra work and the host's IOPS dip while it lasts. Its copying is spread
//! over the host's writes, so the dip is as smooth as the host's rate; the space it frees is
//! not credited to foreground GC (it is free blocks above the reserve, which foreground GC
//! then needs a little less of). It runs only while GC does (free blocks below `gc_soft`), and a
//! block with no invalid data is passed over: a drive with nothing to collect (fresh, or just
//! filled) has no pass to run.

use super::*;

/// Blocks the walk looks at for its next block at most (it waits for the next host write
/// after that many full or open ones).
const WALK_LOOK: u32 = 256;

/// How many chunks ahead of its copy the walk fetches a unit's map entry: the copy rewrites
/// it, at a random place in a large map (GC's victim copies fetch theirs ahead as well).
const WALK_AHEAD: u64 = 8;

impl Ftl {
    /// The walk's share of copying for a host write of `host_c` chunks at `t`. Inlined into
    /// the host's write for its tests; the copying, owed about every third host chunk, out of
    /// line: a call per host write while a pass lasts saved and restored registers each time.
    #[inline(always)]
    pub(super) fn walk(&mut self, host_c: u32, t: u64, flash: &mut Flash) {
        if self.free.len() >= self.gc_soft {
            // Free blocks to spare (fresh out of box, or after a trim): the firmware's GC is
            // at rest and so is its pass, or it would cut into the fresh-out-of-box rate.
            self.wcredit = 0.0;
            return;
        }
        self.wcredit += host_c as f64 * self.pass_share;
        if self.wcredit >= 1.0 {
            self.walk_owed(t, flash);
        }
    }

    /// Copy while a chunk of the walk's share is owed.
    #[inline(never)]
    fn walk_owed(&mut self, t: u64, flash: &mut Flash) {
        while self.wcredit >= 1.0 {
            if self.wblock == NONE && !self.walk_next() {
                self.wcredit = 0.0; // nothing to collect: no work is banked for later
                return;
            }
            self.wcredit -= self.walk_copy(t, flash).max(1) as f64;
        }
    }

    /// The next closed main-area block after `wnext` with invalid data; false if none of the
    /// next WALK_LOOK blocks has any.
    fn walk_next(&mut self) -> bool {
        let n = self.n_main;
        for _ in 0..WALK_LOOK.min(n) {
            let b = self.wnext;
            self.wnext = (self.wnext + 1) % n;
            let v = self.blk[b as usize].valid;
            if self.blk[b as usize].state == CLOSED && v < self.cpb {
                if self.policy == Policy::Greedy {
                    self.bucket_remove(b, v);
                }
                // Out of GC's choice while the walk empties it (as a victim is).
                self.blk[b as usize].state = VICTIM;
                self.wblock = b;
                self.wcur = 0;
                return true;
            }
        }
        false
    }

    /// Copy the walk block's next live unit to the GC frontier; chunks copied (0 once the
    /// block is empty and has been erased).
    fn walk_copy(&mut self, t: u64, flash: &mut Flash) -> u32 {
        let b = self.wblock;
        let base = b as u64 * self.cpb as u64;
        match self.next_valid(base + self.wcur as u64, base + self.cpb as u64) {
            None => {
                self.erase_block(b, t, flash);
                self.wblock = NONE;
                0
            }
            Some(addr) => {
                self.rmap.prefetch_ahead(addr + WALK_AHEAD, &self.l2p);
                let lpn = self.rmap.take(addr);
                let c = self.len_of(lpn);
                self.wcur = (addr - base) as u32 + 1; // valid bits mark heads only
                                                      // program charged from `t`, as in copy_next
                flash.read_main(addr, addr - base, c, t, &mut self.last_page);
                self.clear_bit(addr);
                self.blk[b as usize].valid -= c;
                self.place_main(lpn, c, true, t, flash);
                self.c.gc_chunks += c as u64;
                c
            }
        }
    }
}
