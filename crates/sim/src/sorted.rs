//! A priority queue for times that arrive nearly in order: a ring kept sorted, the least at
//! the front. The write buffer's departure times (when a unit's program starts) are at or
//! near the latest so far, as the least-busy die's busy time never goes back: an insertion
//! lands at the back or next to it, where a binary heap's sift took an unpredictable branch
//! per level (8 for a 1 MiB buffer). It answers what the heap did (the least, the second
//! least, pop, push, the count) with the same values, so the model's results are unchanged.
//! (The completion queue stays a heap: reads complete in no such order, and there the
//! binary search and the move of half the ring cost more than the heap's sifts.)

use std::collections::VecDeque;

pub struct SortedRing<T> {
    /// The entries, ascending.
    q: VecDeque<T>,
}

impl<T: Copy + Ord> SortedRing<T> {
    /// An empty queue with room for `n` entries before it grows.
    pub fn with_capacity(n: usize) -> SortedRing<T> {
        SortedRing {
            q: VecDeque::with_capacity(n),
        }
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.q.len()
    }

    /// Slots held (for the memory figure).
    pub fn capacity(&self) -> usize {
        self.q.capacity()
    }

    /// The least entry.
    #[inline(always)]
    pub fn peek(&self) -> Option<T> {
        self.q.front().copied()
    }

    /// The second least entry (the least once the first is popped).
    #[inline(always)]
    pub fn second(&self) -> Option<T> {
        self.q.get(1).copied()
    }

    #[inline(always)]
    pub fn pop(&mut self) -> Option<T> {
        self.q.pop_front()
    }

    /// Insert `x` after every entry not greater than it: at the back, or just before the
    /// last entry, at once (nearly every time); elsewhere by a binary search, and the
    /// shorter side of the ring moves over.
    #[inline(always)]
    pub fn push(&mut self, x: T) {
        let n = self.q.len();
        if n == 0 || self.q[n - 1] <= x {
            self.q.push_back(x);
        } else if n == 1 || self.q[n - 2] <= x {
            self.q.insert(n - 1, x);
        } else {
            let i = self.q.partition_point(|&e| e <= x);
            self.q.insert(i, x);
        }
    }

    /// Pop the least and push `x` (what a heap's replacement of its top gives).
    #[inline(always)]
    pub fn replace_least(&mut self, x: T) {
        self.q.pop_front();
        self.push(x);
    }

    /// The entries in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        self.q.iter().copied()
    }

    /// Replace the entries by `xs` (in any order).
    pub fn assign(&mut self, xs: &[T]) {
        self.q.clear();
        for &x in xs {
            self.push(x);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// Against std's heap: the same least, second least and pops, for times nearly in
    /// order and for times in no order at all, with ties, through growth and wrap-around.
    #[test]
    fn answers_as_a_binary_heap_does() {
        let mut rng = Rng::new(11);
        for spread in [3u64, 1000, 1 << 40] {
            let mut ring: SortedRing<u64> = SortedRing::with_capacity(4);
            let mut heap: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
            let mut t = 0;
            for step in 0..50_000 {
                t += rng.below(10);
                let x = t + rng.below(spread);
                match rng.below(3) {
                    0 if !heap.is_empty() => assert_eq!(ring.pop(), heap.pop().map(|r| r.0)),
                    1 if !heap.is_empty() => {
                        ring.replace_least(x);
                        *heap.peek_mut().unwrap() = Reverse(x);
                    }
                    _ if heap.len() < 300 => {
                        ring.push(x);
                        heap.push(Reverse(x));
                    }
                    _ => {}
                }
                let h = heap.as_slice();
                let second = h.get(1).max(h.get(2)).map(|r| r.0);
                assert_eq!(ring.len(), heap.len(), "step {step}");
                assert_eq!(ring.peek(), heap.peek().map(|r| r.0), "step {step}");
                assert_eq!(ring.second(), second, "step {step}");
            }
            let mut all: Vec<u64> = heap.into_iter().map(|r| r.0).collect();
            all.sort_unstable();
            assert_eq!(ring.iter().collect::<Vec<_>>(), all);
        }
    }
}
