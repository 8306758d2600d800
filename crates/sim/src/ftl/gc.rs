//! Garbage collection: victim choice, copying a victim's live chunks to the frontier,
//! foreground GC in step with the host (gently from `gc_soft`, in slices), the synchronous
//! safety net, and background work (SLC eviction, collection while idle or in bursts).

use super::*;

impl Ftl {
    /// Pick a main-area victim by the configured policy; false if nothing can be gained.
    fn select_victim(&mut self) -> bool {
        let b = match self.policy {
            Policy::Greedy => self.greedy_victim(),
            Policy::Fifo => loop {
                match self.fifo.pop_front() {
                    None => break NONE,
                    Some(b) if self.blk[b as usize].state == CLOSED => break b,
                    Some(_) => {}
                }
            },
            Policy::Random => self.random_victim(),
            Policy::CostBenefit => self.cost_benefit_victim(),
        };
        if b == NONE {
            return false;
        }
        self.blk[b as usize].state = VICTIM;
        self.victim = b;
        self.vcur = 0;
        self.vcopied = 0;
        self.gq_len = 0;
        let cpb = self.cpb as f64;
        let v = self.blk[b as usize].valid as f64;
        let gain = cpb - v;
        self.ratio = if gain <= 0.0 { v.max(1.0) } else { v / gain };
        if self.pace_n > 0.0 {
            self.pace(v, gain);
        }
        self.per_chunk = 1.0 / self.ratio;
        true
    }

    /// Pacing (`gc_pace_victims`): the copying a host chunk owes follows the average cost of
    /// the last `pace_n` or so victims, not this one's, as firmware that keeps its host rate
    /// steady paces GC by an estimate of its cost. The victims' spread of valid data then
    /// moves the free blocks a little (`carry`) instead of the host's rate every second.
    fn pace(&mut self, v: f64, gain: f64) {
        if self.pace_g <= 0.0 {
            (self.pace_v, self.pace_g) = (v, gain);
        } else {
            let a = 1.0 / self.pace_n;
            self.pace_v += a * (v - self.pace_v);
            self.pace_g += a * (gain - self.pace_g);
        }
        let avg = if self.pace_g <= 0.0 {
            self.pace_v.max(1.0)
        } else {
            self.pace_v / self.pace_g
        };
        self.ratio = self.pace_within_carry(avg, v, gain);
    }

    /// The paced ratio for a victim of `v` valid chunks and `gain`, kept within what the
    /// free blocks can hold: its copies pay `v / ratio` of free space and its erase frees
    /// `gain`, the difference joining `carry`, which holds at most a block either way. Far
    /// from the average (the first victims of a random workload after a sequential fill,
    /// whose whole-block victims averaged a cost of nothing) the victim is paced at the
    /// nearest rate the free blocks absorb. Unbounded, a ratio near 0 let foreground GC rest
    /// on a live victim until the safety net, whose erase then owed 26 blocks of copying at
    /// one instant (a 0.1 s cell held 0.6 s, 9.4x apart from the same cell of a run timed a
    /// little differently).
    fn pace_within_carry(&self, avg: f64, v: f64, gain: f64) -> f64 {
        if v <= 0.0 {
            return avg;
        }
        let cap = self.cpb as f64;
        let most = gain + self.carry + cap; // at least `gain`: the carry is above -cap
        let least = gain + self.carry - cap;
        let ratio = avg.max(v / most);
        if least > 0.0 {
            ratio.min(v / least)
        } else {
            ratio
        }
    }

    /// Give foreground GC its share of `carry` for `host_c` chunks written: the carry decays
    /// over `pace_n` victims' worth of host writes, so each victim's own cost is paid over the
    /// next `pace_n` of them. Not at once below the reserve: paid in one lump, a carry that
    /// the free blocks were short of held the host for a whole collection (a 4 GB WSAT
    /// interval fell 11 %); the synchronous net keeps the free-space invariant meanwhile.
    #[inline]
    fn release(&mut self, host_c: u32) {
        // The share for one chunk, the usual `host_c`, is kept while `pace_g` holds (it
        // changes once per victim), not divided out for every host write; it is keyed by
        // `pace_g` itself, so a loaded state needs nothing.
        if self.pace_g != self.release_at {
            self.release_at = self.pace_g;
            self.release_one = (1.0 / (self.pace_n * self.pace_g.max(1.0))).min(1.0);
        }
        let k = if host_c == 1 {
            self.release_one
        } else {
            (host_c as f64 / (self.pace_n * self.pace_g.max(1.0))).min(1.0)
        };
        let d = self.carry * k;
        self.carry -= d;
        self.pay(d);
    }

    /// Greedy: the least valid closed block (NONE if every one is full), taken off its
    /// valid-count bucket.
    fn greedy_victim(&mut self) -> u32 {
        let cpb = self.cpb;
        // With `choices`, the least valid of a few blocks drawn at random, as firmware that
        // does not keep every block sorted by valid count picks: victims then hold a spread
        // of valid data, and so does the copying each one costs the host. The least valid of
        // all when no draw is a closed block with room to gain (a full one would be copied
        // whole for nothing).
        // A block with nothing valid left is taken first, drawn or not: it costs no copy, and
        // firmware keeps such blocks on a list of its own (a sequential overwrite leaves whole
        // blocks of them, which a random draw would pass over).
        let mut pick = if self.choices > 0 {
            self.bucket_head0()
        } else {
            NONE
        };
        for _ in 0..if pick == NONE { self.choices } else { 0 } {
            let b = self.rng.below(self.n_main as u64) as u32;
            let v = self.blk[b as usize].valid;
            let better = pick == NONE || v < self.blk[pick as usize].valid;
            if self.blk[b as usize].state == CLOSED && v < cpb && better {
                pick = b;
            }
        }
        if pick == NONE {
            pick = self.bucket_least();
            if pick == NONE {
                return NONE;
            }
        }
        self.bucket_remove(pick, self.blk[pick as usize].valid);
        pick
    }

    /// Random: a closed block drawn at random (the first closed one after 64 misses).
    fn random_victim(&mut self) -> u32 {
        for _ in 0..64 {
            let b = self.rng.below(self.n_main as u64) as u32;
            if self.blk[b as usize].state == CLOSED {
                return b;
            }
        }
        (0..self.n_main)
            .find(|&b| self.blk[b as usize].state == CLOSED)
            .unwrap_or(NONE)
    }

    /// LFS cost-benefit: the closed block of the highest (1 − u)·age / (1 + u); a scan, as GC
    /// runs once per block. NONE when that block is full.
    fn cost_benefit_victim(&self) -> u32 {
        let cpb = self.cpb;
        let mut best = (f64::MIN, NONE);
        for b in 0..self.n_main {
            if self.blk[b as usize].state != CLOSED {
                continue;
            }
            let u = self.blk[b as usize].valid as f64 / cpb as f64;
            let age = (self.seq - self.stamp[b as usize] + 1) as f64;
            let score = (1.0 - u) * age / (1.0 + u);
            if score > best.0 {
                best = (score, b);
            }
        }
        if best.1 == NONE || self.blk[best.1 as usize].valid >= cpb {
            return NONE;
        }
        best.1
    }

    #[inline(always)]
    pub(super) fn next_valid(&self, from: u64, to: u64) -> Option<u64> {
        let mut i = from;
        while i < to {
            let w = (i >> 6) as usize;
            let word = self.vbits[w] >> (i & 63);
            if word != 0 {
                let a = i + word.trailing_zeros() as u64;
                return if a < to { Some(a) } else { None };
            }
            i = ((i >> 6) + 1) << 6;
        }
        None
    }

    /// `copy_one`, out of line, for the synchronous net and background work.
    #[inline(never)]
    fn copy_next(&mut self, t: u64, flash: &mut Flash) -> u32 {
        self.copy_one(t, flash)
    }

    /// Move the victim's next live unit to the frontier; returns chunks copied (0 once the
    /// victim is empty and has been erased).
    #[inline(always)]
    fn copy_one(&mut self, t: u64, flash: &mut Flash) -> u32 {
        let b = self.victim;
        let base = b as u64 * self.cpb as u64;
        let end = base + self.cpb as u64;
        loop {
            // Find live chunks a few ahead and fetch their map entries: each copy rewrites
            // one, at a random place in a large map.
            while self.gq_len < GQ {
                match self.next_valid(base + self.vcur as u64, end) {
                    None => {
                        self.vcur = self.cpb;
                        break;
                    }
                    Some(a) => {
                        self.vcur = (a - base) as u32 + 1; // valid bits mark heads only
                        self.rmap.prefetch_copy(a, &self.l2p);
                        self.gq[(self.gq_head + self.gq_len) % GQ] = a;
                        self.gq_len += 1;
                    }
                }
            }
            if self.gq_len == 0 {
                // The erase frees what the copies have not yet paid for: more than planned
                // when the host overwrote part of the victim meanwhile, all of it for a
                // victim with nothing live (a block the host rewrote wholly).
                let gain = (self.cpb - self.vcopied) as f64;
                let rest = gain - self.vcopied as f64 / self.ratio.max(f64::MIN_POSITIVE);
                if self.pace_n > 0.0 && !self.urgent {
                    // With pacing the copies paid at the average cost: what this victim
                    // gained beyond that, or fell short of, reaches foreground GC gradually
                    // (`release`), the free blocks holding the difference meanwhile.
                    self.carry += rest;
                    // At most a block's worth is held back: a drift larger than the
                    // victims' spread (costs rising through the cliff) is paid at once, or
                    // the free blocks would run short all together at the reserve.
                    let cap = self.cpb as f64;
                    if self.carry.abs() > cap {
                        self.pay(self.carry - cap.copysign(self.carry));
                        self.carry = cap.copysign(self.carry);
                    }
                } else {
                    self.pay(rest);
                }
                self.erase_block(b, t, flash);
                self.c.gc_runs += 1;
                self.victim = NONE;
                self.urgent = false;
                return 0;
            }
            let addr = self.gq[self.gq_head];
            self.gq_head = (self.gq_head + 1) % GQ;
            self.gq_len -= 1;
            if self.vbits[(addr >> 6) as usize] >> (addr & 63) & 1 == 0 {
                continue; // overwritten by the host since it was found
            }
            let lpn = self.rmap.take(addr);
            let c = self.len_of(lpn);
            // The program is charged from `t`, not from this read's completion: with FCFS
            // reservation a dependency on another die's backlog would leave the target die
            // idle until then, a gap no real controller leaves (it interleaves).
            flash.read_main(addr, addr - base, c, t, &mut self.last_page);
            self.clear_bit(addr);
            self.blk[b as usize].valid -= c;
            self.place_main(lpn, c, true, t, flash);
            self.c.gc_chunks += c as u64;
            self.vcopied += c;
            // 1/ratio is kept for the one-chunk unit of most drives (it is the same quotient).
            self.pay(if c == 1 {
                self.per_chunk
            } else {
                c as f64 / self.ratio
            });
            return c;
        }
    }

    /// Finish the current victim (choosing one if none) before the host may proceed.
    pub(super) fn gc_sync(&mut self, t: u64, flash: &mut Flash) {
        if self.victim == NONE && !self.select_victim() {
            panic!("FTL: no block can be reclaimed (every closed block is full); the configuration has no usable spare area");
        }
        self.urgent = true;
        while self.victim != NONE {
            self.copy_next(t, flash);
        }
    }

    /// Free space owed by foreground GC goes down by `gain` chunks; what it may bank ahead
    /// is bounded by a block, so a burst of reclaiming does not excuse GC for long.
    #[inline(always)]
    fn pay(&mut self, gain: f64) {
        self.credit = (self.credit - gain).max(-(self.cpb as f64));
    }

    /// Foreground GC in step with the host: below the reserve, each host chunk owes a chunk
    /// of free space, which the victim pays for as it is collected, 1/`ratio` per chunk
    /// copied (ratio = its valid/invalid chunks, so it is done by the time the host has
    /// filled the space it frees) and the rest when it is erased. Between `gc_soft` and the
    /// reserve a host chunk owes a share of that growing as free blocks run out. The
    /// copying runs once a slice's worth is owed. Owing free space rather than copies is
    /// what lets a block the host rewrote wholly pay by its erase alone: GC then rests
    /// instead of collecting a block the host is still rewriting.
    #[inline(always)]
    pub(super) fn gc_progress(&mut self, host_c: u32, t: u64, flash: &mut Flash) {
        let free = self.free.len();
        if self.victim == NONE && (free >= self.gc_soft || !self.select_victim()) {
            return;
        }
        if free != self.owed_at {
            self.owed_at = free;
            self.owed = if free < self.gc_reserve || self.gc_soft <= self.gc_reserve {
                1.0
            } else {
                ((self.gc_soft - free) as f64 / (self.gc_soft - self.gc_reserve) as f64).min(1.0)
            };
        }
        let w = self.owed;
        self.credit += host_c as f64 * w;
        if self.carry != 0.0 {
            self.release(host_c);
        }
        let live = self.blk[self.victim as usize].valid > 0;
        if (self.credit <= 0.0 || live && self.credit * self.ratio <= self.slice) && !self.urgent {
            return;
        }
        self.copy_owed(t, flash);
    }

    /// Foreground GC's slice: copy while free space is owed (victim after victim), in one
    /// loop with the copy inlined: a call per copy reloaded the victim's state and the
    /// frontier's from the FTL and saved and restored six registers each time.
    #[inline(never)]
    fn copy_owed(&mut self, t: u64, flash: &mut Flash) {
        while self.victim != NONE && (self.credit > 0.0 || self.urgent) {
            self.copy_one(t, flash);
            if self.victim == NONE
                && (self.credit <= 0.0 || self.free.len() >= self.gc_soft || !self.select_victim())
            {
                self.credit = self.credit.min(0.0);
                break;
            }
        }
    }

    /// One bounded step of background work at `t` (host idle): evict the SLC cache, then
    /// collect until `bg_target` blocks are free. Returns false when there is nothing to do.
    pub fn bg_step(&mut self, t: u64, flash: &mut Flash, max_chunks: u32) -> bool {
        if self.n_slc > 0 {
            if self.svictim == NONE {
                while let Some(b) = self.slc_closed.pop_front() {
                    if self.blk[b as usize].state == CLOSED {
                        self.svictim = b;
                        break;
                    }
                }
                if self.svictim == NONE && self.slc_front != NONE && self.slc_wp > 0 {
                    self.svictim = self.slc_front;
                    self.slc_front = NONE;
                }
                if self.svictim != NONE {
                    self.blk[self.svictim as usize].state = VICTIM;
                    self.svcur = 0;
                }
            }
            if self.svictim != NONE {
                self.c.bg_steps += 1;
                // Evicted data fills main blocks that foreground GC is not charged for: below
                // the reserve, collect first, or a burst ending mid-eviction leaves the host
                // at the synchronous net (a whole collection per block it opens) until the
                // next burst.
                let below = self.free.len() < self.gc_reserve;
                if below && (self.victim != NONE || self.select_victim()) {
                    self.collect_step(t, flash, max_chunks);
                    return true;
                }
                let mut done = 0;
                while done < max_chunks && self.svictim != NONE {
                    let room = self.gc_front_room(self.g);
                    if !room && self.free.len() < 2 {
                        self.gc_sync(t, flash);
                        return true;
                    }
                    done += self.evict_next(t, flash).max(1);
                }
                return true;
            }
        }
        if self.bg_gc && self.free.len() < self.bg_target {
            if self.victim == NONE && !self.select_victim() {
                return false;
            }
            self.c.bg_steps += 1;
            self.collect_step(t, flash, max_chunks);
            return true;
        }
        false
    }

    /// Copy the current victim until `max_chunks` chunks are moved or it is erased.
    fn collect_step(&mut self, t: u64, flash: &mut Flash, max_chunks: u32) {
        let mut done = 0;
        while done < max_chunks && self.victim != NONE {
            done += self.copy_next(t, flash).max(1);
        }
    }

    fn evict_next(&mut self, t: u64, flash: &mut Flash) -> u32 {
        let b = self.svictim;
        let base = b as u64 * self.cpb as u64;
        match self.next_valid(base + self.svcur as u64, base + self.slc_cpb as u64) {
            None => {
                self.erase_block(b, t, flash);
                self.c.slc_evictions += 1;
                self.svictim = NONE;
                0
            }
            Some(addr) => {
                let lpn = self.rmap.take(addr);
                let c = self.len_of(lpn);
                self.svcur = (addr - base) as u32 + c;
                flash.read(addr, c, t, &mut self.last_page); // program charged from `t`, as in copy_next
                self.clear_bit(addr);
                self.blk[b as usize].valid -= c;
                self.place_main(lpn, c, true, t, flash);
                self.c.evict_chunks += c as u64;
                c
            }
        }
    }
}
