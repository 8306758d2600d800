//! Per-block records, and greedy GC's buckets: closed main-area blocks linked by valid
//! count, so the least valid is found in O(1) amortised.

use super::*;

/// A block's fields that a write reads and updates together: the valid count, the state
/// and the links of its valid-count bucket (greedy GC). One record per block, not four
/// parallel arrays: an overwrite's invalidation and bucket move touch one cache line and
/// check one index per block, where the arrays took a bounds check (and a load of their
/// base) for each. The saved state keeps the arrays' layout (persist.rs `BlockCols`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blk {
    pub valid: u32,
    pub next: u32,
    pub prev: u32,
    pub state: u8,
}

impl Default for Blk {
    fn default() -> Blk {
        Blk {
            valid: 0,
            next: NONE,
            prev: NONE,
            state: FREE,
        }
    }
}

impl Ftl {
    #[inline(always)]
    pub(super) fn bucket_insert(&mut self, b: u32, v: u32) {
        let h = self.bhead[v as usize];
        self.blk[b as usize].next = h;
        self.blk[b as usize].prev = NONE;
        if h != NONE {
            self.blk[h as usize].prev = b;
        }
        self.bhead[v as usize] = b;
        if v < self.bmin {
            self.bmin = v;
        }
    }

    #[inline(always)]
    pub(super) fn bucket_remove(&mut self, b: u32, v: u32) {
        let (p, n) = (self.blk[b as usize].prev, self.blk[b as usize].next);
        if p != NONE {
            self.blk[p as usize].next = n;
        } else {
            self.bhead[v as usize] = n;
        }
        if n != NONE {
            self.blk[n as usize].prev = p;
        }
    }
}
