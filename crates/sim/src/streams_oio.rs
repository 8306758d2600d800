//! The pending completions of the stream walk's in-flight count (streams.rs): how many of
//! the completions seen so far fall at or before a time, asked at every issue instant.
//!
//! A heap popped each completion in order, which was most of the walk (a push and a pop,
//! ~30 ns per IO, its branches unpredictable). Here completions drop into a ring of time
//! buckets (a bucket about one mean interarrival wide), those past the ring's span wait in a
//! heap; passing a bucket counts it whole. The count is then known to the bucket: exact up to
//! the IOs in the current bucket, a few. The walk needs the exact count only when the level
//! it gives could raise the step's peak; else the bound settles it.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

const RING: usize = 4096;

pub struct Completions {
    started: bool,
    /// log2 of the bucket width in ns (set from the first IOs' spacing).
    shift: u32,
    ring: Vec<Vec<i64>>,
    /// The current bucket (time >> shift); all completions in earlier buckets are counted.
    cur: i64,
    in_ring: usize,
    far: BinaryHeap<Reverse<i64>>,
    /// Completions in buckets before `cur`.
    pub done_before: i64,
}

impl Completions {
    pub fn new() -> Completions {
        Completions {
            started: false,
            shift: 0,
            ring: Vec::new(),
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
            self.ring = (0..RING).map(|_| Vec::new()).collect();
            self.cur = t >> self.shift;
        }
    }

    #[inline]
    fn bucket(&self, t: i64) -> i64 {
        t >> self.shift
    }

    /// Add a completion (only after `start`).
    #[inline]
    pub fn push(&mut self, comp: i64) {
        let b = self.bucket(comp).max(self.cur); // a completion in the past counts at once
        if b - self.cur < RING as i64 {
            self.ring[b as usize % RING].push(comp);
            self.in_ring += 1;
        } else {
            self.far.push(Reverse(comp));
        }
    }

    /// Count every bucket before that of `t`.
    #[inline]
    pub fn advance(&mut self, t: i64) {
        if !self.started {
            return;
        }
        let to = self.bucket(t);
        while self.cur < to {
            if self.in_ring == 0 {
                self.cur = to; // nothing pending nearby: jump over the idle time
            } else {
                let slot = &mut self.ring[self.cur as usize % RING];
                self.done_before += slot.len() as i64;
                self.in_ring -= slot.len();
                slot.clear();
                self.cur += 1;
            }
            self.pull_near();
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
            self.ring[b as usize % RING].push(c);
            self.in_ring += 1;
        }
    }

    /// Completions at or before `t`, exactly (no later time than asked before).
    pub fn done_by(&mut self, t: i64) -> i64 {
        if !self.started {
            return self.done_before;
        }
        self.advance(t);
        let slot = &self.ring[self.cur as usize % RING];
        self.done_before + slot.iter().filter(|&&c| c <= t).count() as i64
    }
}
