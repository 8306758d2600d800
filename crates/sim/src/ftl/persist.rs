//! The FTL's consistency check (tests) and the accessors `state.rs` saves and loads it by.

use super::*;

impl Ftl {
    /// Cross-check of every structure against the others (tests only; O(size)).
    pub fn check(&self) -> Result<(), String> {
        let mut valid = vec![0u32; self.blk.len()];
        for (lpn, &a) in self.l2p.iter().enumerate() {
            if a == NONE {
                continue;
            }
            if self.rmap.get(a as u64) != lpn as u32 {
                return Err(format!("reverse map at {a} != {lpn}"));
            }
            if self.vbits[(a >> 6) as usize] >> (a & 63) & 1 == 0 {
                return Err(format!("valid bit of {a} not set"));
            }
            valid[(a / self.cpb) as usize] += self.len_of(lpn as u32);
        }
        if valid.iter().ne(self.blk.iter().map(|k| &k.valid)) {
            return Err("per-block valid counts disagree with the map".into());
        }
        for f in &self.fronts {
            let used: u32 = f.dwp.iter().sum();
            if f.blk != NONE && used != f.wp {
                return Err(format!(
                    "per-die write points sum to {used}, frontier holds {}",
                    f.wp
                ));
            }
        }
        let bits: u64 = self.vbits.iter().map(|w| w.count_ones() as u64).sum();
        let mapped = self.l2p.iter().filter(|&&a| a != NONE).count() as u64;
        if bits != mapped {
            return Err(format!("{bits} valid bits for {mapped} mapped units"));
        }
        if let Some(n) = self.rmap.live() {
            if n as u64 != mapped {
                return Err(format!(
                    "reverse map holds {n} entries for {mapped} mapped units"
                ));
            }
        }
        // Drawn victims keep no lists but the buckets' order (blocks.rs `Order`).
        if self.policy == Policy::Greedy && self.choices > 0 {
            self.check_order()?;
        } else if self.policy == Policy::Greedy {
            let mut n = 0;
            for (v, &h) in self.bhead.iter().enumerate() {
                let mut b = h;
                while b != NONE {
                    if self.blk[b as usize].state != CLOSED
                        || self.blk[b as usize].valid != v as u32
                    {
                        return Err(format!(
                            "block {b} in bucket {v} but valid={}",
                            self.blk[b as usize].valid
                        ));
                    }
                    n += 1;
                    b = self.blk[b as usize].next;
                }
            }
            let closed = (0..self.n_main)
                .filter(|&b| self.blk[b as usize].state == CLOSED)
                .count();
            if n != closed {
                return Err(format!("{n} blocks in buckets, {closed} closed"));
            }
        }
        Ok(())
    }

    // -- state save/load helpers ------------------------------------------------------------
    pub fn scalars(&self) -> Vec<u64> {
        vec![
            self.bmin as u64,
            self.fronts[0].blk as u64,
            self.fronts[0].wp as u64,
            self.slc_front as u64,
            self.slc_wp as u64,
            self.victim as u64,
            self.vcur as u64,
            self.credit.to_bits(),
            self.ratio.to_bits(),
            self.urgent as u64,
            self.svictim as u64,
            self.svcur as u64,
            self.seq,
            self.rng.state(),
            self.last_page,
            self.c.host_chunks,
            self.c.gc_chunks,
            self.c.evict_chunks,
            self.c.gc_runs,
            self.c.slc_evictions,
            self.c.erases,
            self.c.trimmed_units,
            self.c.rmw_reads,
            self.c.pad_chunks,
            self.c.bg_steps,
            self.gq_head as u64,
            self.gq_len as u64,
            self.gq[0],
            self.gq[1],
            self.gq[2],
            self.gq[3],
            self.gq[4],
            self.gq[5],
            self.gq[6],
            self.gq[7],
            self.fronts[0].cd as u64,
            self.fronts[0].page_end as u64,
            self.fronts[1].blk as u64,
            self.fronts[1].wp as u64,
            self.fronts[1].cd as u64,
            self.fronts[1].page_end as u64,
            self.vcopied as u64,
            self.wblock as u64,
            self.wcur as u64,
            self.wnext as u64,
            self.wcredit.to_bits(),
            self.pace_v.to_bits(),
            self.pace_g.to_bits(),
            self.carry.to_bits(),
        ]
    }

    pub fn set_scalars(&mut self, s: &[u64]) {
        self.bmin = s[0] as u32;
        self.fronts[0].blk = s[1] as u32;
        self.fronts[0].wp = s[2] as u32;
        self.slc_front = s[3] as u32;
        self.slc_wp = s[4] as u32;
        self.victim = s[5] as u32;
        self.vcur = s[6] as u32;
        self.credit = f64::from_bits(s[7]);
        self.ratio = f64::from_bits(s[8]);
        self.per_chunk = 1.0 / self.ratio;
        self.urgent = s[9] != 0;
        self.svictim = s[10] as u32;
        self.svcur = s[11] as u32;
        self.seq = s[12];
        self.rng = Rng::from_state(s[13]);
        self.last_page = s[14];
        self.c = Counters {
            host_chunks: s[15],
            gc_chunks: s[16],
            evict_chunks: s[17],
            gc_runs: s[18],
            slc_evictions: s[19],
            erases: s[20],
            trimmed_units: s[21],
            rmw_reads: s[22],
            pad_chunks: s[23],
            bg_steps: s[24],
        };
        self.gq_head = s[25] as usize;
        self.gq_len = s[26] as usize;
        self.gq.copy_from_slice(&s[27..27 + GQ]);
        self.fronts[0].cd = s[27 + GQ] as u32;
        self.fronts[0].page_end = s[28 + GQ] as u32;
        self.fronts[1].blk = s[29 + GQ] as u32;
        self.fronts[1].wp = s[30 + GQ] as u32;
        self.fronts[1].cd = s[31 + GQ] as u32;
        self.fronts[1].page_end = s[32 + GQ] as u32;
        self.vcopied = s[33 + GQ] as u32;
        self.wblock = s[34 + GQ] as u32;
        self.wcur = s[35 + GQ] as u32;
        self.wnext = s[36 + GQ] as u32;
        self.wcredit = f64::from_bits(s[37 + GQ]);
        self.pace_v = f64::from_bits(s[38 + GQ]);
        self.pace_g = f64::from_bits(s[39 + GQ]);
        self.carry = f64::from_bits(s[40 + GQ]);
    }

    /// The per-block records as the columns the saved state holds (its layout from before
    /// the records), to be written, or filled by a load and given back by `set_block_cols`;
    /// the buckets' lists built first where they are not kept (blocks.rs `Order`).
    pub fn block_cols(&mut self) -> BlockCols {
        self.bucket_links();
        BlockCols {
            valid: self.blk.iter().map(|k| k.valid).collect(),
            next: self.blk.iter().map(|k| k.next).collect(),
            prev: self.blk.iter().map(|k| k.prev).collect(),
            state: self.blk.iter().map(|k| k.state).collect(),
        }
    }

    pub fn set_block_cols(&mut self, c: &BlockCols) {
        for (b, k) in self.blk.iter_mut().enumerate() {
            *k = Blk {
                valid: c.valid[b],
                next: c.next[b],
                prev: c.prev[b],
                state: c.state[b],
            };
        }
        if self.choices > 0 {
            self.bucket_order(); // the buckets' lists, loaded before the blocks (`bhead`)
        }
    }

    /// The u32 arrays in the saved state's order, the per-block ones from `cols`.
    pub fn u32_arrays<'a>(&'a mut self, cols: &'a mut BlockCols) -> Vec<&'a mut Vec<u32>> {
        let [host, gc] = &mut self.fronts;
        vec![
            &mut self.l2p,
            &mut cols.valid,
            &mut self.erases,
            &mut self.bhead,
            &mut cols.next,
            &mut cols.prev,
            &mut host.dwp,
            &mut gc.dwp,
        ]
    }

    #[allow(clippy::type_complexity)]
    pub fn other_arrays<'a>(
        &'a mut self,
        cols: &'a mut BlockCols,
    ) -> (
        &'a mut Vec<u8>,
        &'a mut Vec<u8>,
        &'a mut Vec<u64>,
        &'a mut Vec<u64>,
    ) {
        (
            &mut self.lens,
            &mut cols.state,
            &mut self.vbits,
            &mut self.stamp,
        )
    }

    pub fn queues(&mut self) -> Vec<&mut VecDeque<u32>> {
        vec![
            &mut self.fifo,
            &mut self.free,
            &mut self.slc_free,
            &mut self.slc_closed,
        ]
    }

    pub fn rmap_words(&mut self) -> (Option<&mut Vec<u32>>, Option<&mut Vec<u64>>) {
        self.rmap.words()
    }

    pub fn slc_dead(&mut self) -> &mut Vec<u32> {
        &mut self.slc_dead
    }
}

/// The per-block records' fields as separate arrays, the layout the saved state keeps.
pub struct BlockCols {
    valid: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
    state: Vec<u8>,
}
