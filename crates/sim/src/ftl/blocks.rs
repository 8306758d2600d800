//! Per-block records, and greedy GC's buckets: closed main-area blocks linked by valid
//! count, so the least valid is found in O(1) amortised. When GC draws its victims
//! (`gc_choices`), the buckets are only asked for their order (`Order`), not kept as lists.

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

/// Greedy GC's buckets when victims are drawn at random (`gc_choices`): GC then asks them
/// only for the head of bucket 0 (the last block to run out of valid data) and, when no draw
/// finds a victim, the head of the least valid bucket; so each block's last entry into its
/// bucket is counted, and bucket 0's entries kept in order, instead of a write moving its
/// block between two linked lists (four random accesses, the bucket heads an array of a
/// block's chunks + 1). A list's order is that of the entries (its head the latest): the
/// lists a saved state holds are built from it (`bucket_links`) and it from them on a load.
#[derive(Default)]
pub struct Order {
    /// The count at each block's last entry into a bucket, and the next count.
    at: Vec<u64>,
    next: u64,
    /// Blocks as they entered bucket 0, with their counts (stale once a block has left).
    zeros: Vec<(u32, u64)>,
}

impl Order {
    pub(super) fn new(blocks: usize) -> Order {
        Order {
            at: vec![0; blocks],
            ..Default::default()
        }
    }

    /// Bytes held: a count per block, and bucket 0's entries.
    pub(super) fn memory_bytes(&self) -> usize {
        self.at.capacity() * std::mem::size_of::<u64>()
            + self.zeros.capacity() * std::mem::size_of::<(u32, u64)>()
    }

    #[inline(always)]
    fn enter(&mut self, b: u32, v: u32) {
        let n = self.next;
        self.at[b as usize] = n;
        self.next = n + 1;
        if v == 0 {
            self.zeros.push((b, n));
        }
    }
}

impl Ftl {
    #[inline(always)]
    pub(super) fn bucket_insert(&mut self, b: u32, v: u32) {
        if self.choices > 0 {
            self.order.enter(b, v);
            self.bmin = self.bmin.min(v);
            if v == 0 && self.order.zeros.len() > 2 * self.blk.len() {
                self.compact_zeros(); // left behind by blocks the GC pass took (rare)
            }
            return;
        }
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

    /// Takes `b` off bucket `v`; with drawn victims its state (no longer CLOSED) says so.
    #[inline(always)]
    pub(super) fn bucket_remove(&mut self, b: u32, v: u32) {
        if self.choices > 0 {
            return;
        }
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

    /// Bucket 0's head: the closed block that ran out of valid data last (NONE if none).
    pub(super) fn bucket_head0(&mut self) -> u32 {
        if self.choices == 0 {
            return self.bhead[0];
        }
        while let Some(&(b, n)) = self.order.zeros.last() {
            let k = self.blk[b as usize];
            if k.state == CLOSED && k.valid == 0 && self.order.at[b as usize] == n {
                return b;
            }
            self.order.zeros.pop();
        }
        NONE
    }

    /// Bucket 0's entries of blocks still there, in their order: GC's victim choice takes
    /// the latest at once, but the GC pass takes blocks from anywhere, and a drive that only
    /// collects by the pass would stack an entry per block emptied.
    #[cold]
    fn compact_zeros(&mut self) {
        let (blk, at) = (&self.blk, &self.order.at);
        self.order.zeros.retain(|&(b, n)| {
            let k = blk[b as usize];
            k.state == CLOSED && k.valid == 0 && at[b as usize] == n
        });
    }

    /// The head of the least valid bucket below a full block (NONE if none), `bmin` moved up
    /// to it (to a block's chunks if none) as the lists' search does.
    pub(super) fn bucket_least(&mut self) -> u32 {
        let cpb = self.cpb;
        if self.choices == 0 {
            while self.bmin < cpb && self.bhead[self.bmin as usize] == NONE {
                self.bmin += 1;
            }
            return if self.bmin >= cpb {
                NONE
            } else {
                self.bhead[self.bmin as usize]
            };
        }
        let (mut pick, mut least) = (NONE, (cpb, 0));
        for b in 0..self.n_main {
            let k = self.blk[b as usize];
            let key = (k.valid, u64::MAX - self.order.at[b as usize]);
            if k.state == CLOSED && key < least {
                (pick, least) = (b, key);
            }
        }
        self.bmin = least.0;
        pick
    }

    /// The closed blocks of each valid count, their latest entry first (what the lists hold),
    /// into `bhead` and the blocks' links, for a saved state: kept as lists or not, a state
    /// holds them.
    pub(super) fn bucket_links(&mut self) {
        if self.choices == 0 {
            return;
        }
        let mut closed: Vec<u32> = (0..self.n_main)
            .filter(|&b| self.blk[b as usize].state == CLOSED)
            .collect();
        closed.sort_by_key(|&b| self.order.at[b as usize]);
        self.bhead.iter_mut().for_each(|h| *h = NONE);
        let (choices, bmin) = (self.choices, self.bmin);
        self.choices = 0; // the lists' insertion, in the entries' order
        for b in closed {
            self.bucket_insert(b, self.blk[b as usize].valid);
        }
        (self.choices, self.bmin) = (choices, bmin);
    }

    /// The entries' order from the lists of a loaded state (`bucket_links`' inverse).
    pub(super) fn bucket_order(&mut self) {
        self.order.zeros.clear();
        let mut n = 0;
        for v in (0..self.bhead.len()).rev() {
            let mut list = vec![];
            let mut b = self.bhead[v];
            while b != NONE && list.len() < self.blk.len() {
                list.push(b);
                b = self.blk[b as usize].next;
            }
            for &b in list.iter().rev() {
                self.order.at[b as usize] = n;
                if v == 0 {
                    self.order.zeros.push((b, n));
                }
                n += 1;
            }
        }
        self.order.next = n;
    }

    /// Every closed block without valid data is in bucket 0's order as it last entered.
    pub(super) fn check_order(&self) -> Result<(), String> {
        for b in 0..self.n_main {
            let k = self.blk[b as usize];
            let entry = (b, self.order.at[b as usize]);
            if k.state == CLOSED && k.valid == 0 && !self.order.zeros.contains(&entry) {
                return Err(format!(
                    "block {b} has no valid data but is not in bucket 0"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::resolve_ssd;

    /// Two FTLs given the same bucket moves (blocks closed, overwritten, taken as victims or
    /// by the GC pass), one keeping the lists (no draws), one the order: the heads GC asks
    /// for, `bmin`, the lists a saved state holds and those lists loaded back agree, and bucket
    /// 0's stale entries do not pile up.
    #[test]
    fn the_buckets_order_answers_as_their_lists() {
        let cfg = resolve_ssd("enterprise-sas", &[("user_gb".into(), "2".into())]).unwrap();
        let (mut lists, mut order) = (Ftl::new(&cfg), Ftl::new(&cfg));
        lists.choices = 0;
        assert!(order.choices > 0, "the preset draws its victims");
        let n = lists.n_main;
        let mut rng = Rng::new(5);
        let mut asked = [0; 2]; // bucket 0's head found, the least valid bucket's asked
        for step in 0..60_000 {
            let b = rng.below(n as u64) as u32;
            let (k, r, v0) = (lists.blk[b as usize], rng.below(4), rng.below(6) as u32);
            for f in [&mut lists, &mut order] {
                if k.state != CLOSED {
                    // closed with a few valid chunks, so that buckets share counts
                    f.blk[b as usize] = Blk {
                        valid: v0,
                        state: CLOSED,
                        ..k
                    };
                    f.bucket_insert(b, f.blk[b as usize].valid);
                } else if r < 2 && k.valid > 0 {
                    f.bucket_remove(b, k.valid);
                    f.blk[b as usize].valid -= 1;
                    f.bucket_insert(b, k.valid - 1);
                } else if r == 2 {
                    f.bucket_remove(b, k.valid); // the GC pass takes it
                    f.blk[b as usize].state = FREE;
                }
            }
            // GC asks in every other stretch of steps: in between, blocks emptied and taken
            // by the pass leave bucket 0's entries behind
            if k.state == CLOSED && r == 3 && (step / 5_000) % 2 == 0 {
                let (h, g) = (lists.bucket_head0(), order.bucket_head0());
                assert_eq!(h, g, "bucket 0's head, step {step}");
                let v = if h != NONE { h } else { lists.bucket_least() };
                asked[(h == NONE) as usize] += 1;
                if h == NONE {
                    assert_eq!(v, order.bucket_least(), "least valid head, step {step}");
                    assert_eq!(lists.bmin, order.bmin);
                }
                if v != NONE {
                    for f in [&mut lists, &mut order] {
                        f.bucket_remove(v, f.blk[v as usize].valid);
                        f.blk[v as usize].state = FREE;
                    }
                }
            }
            // bucket 0's stale entries (blocks the GC pass took) do not pile up
            assert!(order.order.zeros.len() <= 2 * order.blk.len() + 1);
            if step % 10_000 == 9_999 {
                order.bucket_links();
                assert_eq!(lists.bhead, order.bhead, "saved lists, step {step}");
                let closed = |f: &Ftl| -> Vec<(u32, u32)> {
                    f.blk
                        .iter()
                        .filter(|k| k.state == CLOSED)
                        .map(|k| (k.next, k.prev))
                        .collect()
                };
                assert_eq!(closed(&lists), closed(&order));
                order.order = Order::new(order.blk.len()); // a load: the order from the lists
                order.bucket_order();
            }
        }
        assert!(asked[0] > 1000 && asked[1] > 1000, "{asked:?}");
    }
}
