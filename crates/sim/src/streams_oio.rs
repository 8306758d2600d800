//! The pending completions of the stream walk's in-flight count (streams.rs): how many of
//! the completions seen so far fall at or before a time, asked at every issue instant.
//!
//! A heap popped each completion in order, which was most of the walk (a push and a pop,
//! ~30 ns per IO, its branches unpredictable). Here completions drop into a ring of time
//! buckets (a bucket about one mean interarrival wide), those past the ring's span wait in a
//! heap; passing a bucket counts it whole. The count is then known to the bucket: exact up to
//! the IOs in the current bucket, a few. The walk needs the exact count only when the level
//! it gives could raise the step's peak (71 times in 10 M IOs of the bench's trace); else
//! the bound settles it.
//!
//! The buckets' counts are an array of their own, small enough to stay in the first-level
//! cache, which every push and every bucket passed reads. The completions themselves are
//! only written there (up to KEPT per bucket, the rest, rare, in a list of the bucket's
//! own) and read back for an exact count. A list per bucket, read and grown at every push,
//! had each push wait on two scattered loads.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

const RING: usize = 4096;
/// Completions a bucket keeps in the flat array; more spill into its list.
const KEPT: usize = 8;
/// Buckets `advance` passes without a loop.
const PASS: i64 = 4;

pub struct Completions {
    started: bool,
    /// log2 of the bucket width in ns (set from the first IOs' spacing).
    shift: u32,
    /// Per bucket: completions in it.
    count: Vec<u32>,
    /// Per bucket: its first KEPT completions (bucket i's at i * KEPT), then its list.
    kept: Vec<i64>,
    spill: Vec<Vec<i64>>,
    /// The current bucket (time >> shift); all completions in earlier buckets are counted.
    cur: i64,
    in_ring: u64,
    far: BinaryHeap<Reverse<i64>>,
    /// Completions in buckets before `cur`.
    pub done_before: i64,
}

impl Completions {
    pub fn new() -> Completions {
        Completions {
            started: false,
            shift: 0,
            count: Vec::new(),
            kept: Vec::new(),
            spill: Vec::new(),
            cur: 0,
            in_ring: 0,
            far: BinaryHeap::new(),
            done_before: 0,
        }
    }

    /// Size the buckets for IOs issued `gap_ns` apart on average, starting at time `t`.
    pub fn start(&mut self, t: i64, gap_ns: i64) {
        if !self.started {
            self.started = true;
            self.shift = 63 - gap_ns.max(1).leading_zeros();
            self.count = vec![0; RING];
            self.kept = vec![0; RING * KEPT];
            self.spill = (0..RING).map(|_| Vec::new()).collect();
            self.cur = t >> self.shift;
        }
    }

    #[inline(always)]
    fn bucket(&self, t: i64) -> i64 {
        t >> self.shift
    }

    /// Add a completion (only after `start`).
    #[inline(always)]
    pub fn push(&mut self, comp: i64) {
        let b = self.bucket(comp).max(self.cur); // a completion in the past counts at once
        if b - self.cur < RING as i64 {
            self.put(b as usize % RING, comp);
        } else {
            self.far.push(Reverse(comp));
        }
    }

    #[inline(always)]
    fn put(&mut self, i: usize, comp: i64) {
        let n = self.count[i] as usize;
        if n < KEPT {
            self.kept[i * KEPT + n] = comp;
        } else {
            self.spill[i].push(comp);
        }
        self.count[i] += 1;
        self.in_ring += 1;
    }

    /// Count every bucket before that of `t`.
    #[inline(always)]
    pub fn advance(&mut self, t: i64) {
        if !self.started {
            return;
        }
        let to = self.bucket(t);
        let d = to - self.cur;
        if d <= 0 {
            return;
        }
        if d <= PASS && self.far.is_empty() {
            // A few buckets, the usual case, passed without a branch on how many: a loop of
            // as many as there are mispredicted its exit at most IOs.
            let mut sum = 0u32;
            let mut spilled = false;
            for j in 0..PASS {
                let i = (self.cur + j) as usize % RING;
                let n = self.count[i] * (j < d) as u32;
                sum += n;
                spilled |= n as usize > KEPT;
                self.count[i] -= n;
            }
            if spilled {
                for j in 0..d {
                    self.spill[(self.cur + j) as usize % RING].clear();
                }
            }
            self.done_before += sum as i64;
            self.in_ring -= sum as u64;
            self.cur = to;
            return;
        }
        while self.cur < to {
            if self.in_ring == 0 {
                self.cur = to; // nothing pending nearby: jump over the idle time
            } else {
                let i = self.cur as usize % RING;
                let n = std::mem::take(&mut self.count[i]);
                if n as usize > KEPT {
                    self.spill[i].clear();
                }
                self.done_before += n as i64;
                self.in_ring -= n as u64;
                self.cur += 1;
            }
            if !self.far.is_empty() {
                self.pull_near();
            }
        }
    }

    /// Move the waiting completions that now fall within the ring's span into it.
    fn pull_near(&mut self) {
        while let Some(&Reverse(c)) = self.far.peek() {
            let b = self.bucket(c).max(self.cur);
            if b - self.cur >= RING as i64 {
                return;
            }
            self.far.pop();
            self.put(b as usize % RING, c);
        }
    }

    /// Completions at or before `t`, exactly (no later time than asked before).
    pub fn done_by(&mut self, t: i64) -> i64 {
        if !self.started {
            return self.done_before;
        }
        self.advance(t);
        let i = self.cur as usize % RING;
        let n = (self.count[i] as usize).min(KEPT);
        let by = |v: &[i64]| v.iter().filter(|&&c| c <= t).count() as i64;
        self.done_before + by(&self.kept[i * KEPT..i * KEPT + n]) + by(&self.spill[i])
    }
}
