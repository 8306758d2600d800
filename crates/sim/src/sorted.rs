//! A priority queue for times that arrive nearly in order: a ring kept sorted, the least at
//! the front. The write buffer's departure times (when a unit's program starts) are at or
//! near the latest so far, as the least-busy die's busy time never goes back: an insertion
//! lands at the back or next to it, where a binary heap's sift took an unpredictable branch
//! per level (8 for a 1 MiB buffer). It answers what the heap did (the least, the second
//! least, pop, push, the count) with the same values, so the model's results are unchanged.
//! The SSD's completion queue is one too: writes acknowledged from the buffer complete in
//! order, and a read, whose completion lands anywhere, moves at most half the ring, which
//! cachegrind counted as fewer instructions than the heap's pop and push even for a 70/30
//! read/write mix at 1,024 outstanding IOs (1,149 against 1,234 per IO).

/// Entries moved by a memmove, not one at a time, from this many on (`shift_back`).
const MEMMOVE_FROM: usize = 4;

/// A ring of a power-of-two size: a logical index is masked, not compared with the size and
/// wrapped (VecDeque's way, several instructions per access, and this runs for every unit
/// written).
pub struct SortedRing<T> {
    /// The slots, `mask + 1` of them; the entries ascending from `head`, `len` of them.
    buf: Vec<T>,
    head: usize,
    len: usize,
    mask: usize,
}

impl<T: Copy + Ord + Default> SortedRing<T> {
    /// An empty queue with room for `n` entries before it grows.
    pub fn with_capacity(n: usize) -> SortedRing<T> {
        let cap = n.max(2).next_power_of_two();
        SortedRing {
            buf: vec![T::default(); cap],
            head: 0,
            len: 0,
            mask: cap - 1,
        }
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Slots held (for the memory figure).
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Entry `i` in ascending order (i < len).
    #[inline(always)]
    fn at(&self, i: usize) -> T {
        // SAFETY: masked by `mask`, one less than buf's length, a power of two.
        unsafe { *self.buf.get_unchecked((self.head + i) & self.mask) }
    }

    #[inline(always)]
    fn set(&mut self, i: usize, x: T) {
        let k = (self.head + i) & self.mask;
        // SAFETY: as in `at`.
        unsafe { *self.buf.get_unchecked_mut(k) = x }
    }

    /// The least entry.
    #[inline(always)]
    pub fn peek(&self) -> Option<T> {
        (self.len > 0).then(|| self.at(0))
    }

    /// The second least entry (the least once the first is popped).
    #[inline(always)]
    pub fn second(&self) -> Option<T> {
        (self.len > 1).then(|| self.at(1))
    }

    #[inline(always)]
    pub fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let x = self.at(0);
        self.head = (self.head + 1) & self.mask;
        self.len -= 1;
        Some(x)
    }

    /// Insert `x` after every entry not greater than it: at the back, or just before the
    /// last entry, at once (nearly every time); elsewhere by a binary search, and the
    /// shorter side of the ring moves over.
    #[inline(always)]
    pub fn push(&mut self, x: T) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let n = self.len;
        let pos = if n == 0 || self.at(n - 1) <= x {
            n
        } else if n == 1 || self.at(n - 2) <= x {
            n - 1
        } else {
            self.upper_bound(x)
        };
        if pos + pos >= n {
            self.shift_back(pos, n);
        } else {
            self.head = self.head.wrapping_sub(1) & self.mask;
            self.shift_front(pos);
        }
        self.set(pos, x);
        self.len = n + 1;
    }

    /// Entries `pos..n` one slot back. Several, where they and their new slots do not wrap
    /// around the ring's end, by one `copy_within` (a memmove): an entry at a time, masked,
    /// cost about 7 instructions each, and a completion queue whose commands complete in no
    /// order (programs on 32 dies, no write buffer) moves several per command. One or two
    /// (an entry going in just before the last, the usual case otherwise) cost less than
    /// the call.
    #[inline(always)]
    fn shift_back(&mut self, pos: usize, n: usize) {
        let from = (self.head + pos) & self.mask;
        if n - pos >= MEMMOVE_FROM && from + (n - pos) <= self.mask {
            self.buf.copy_within(from..from + (n - pos), from + 1);
        } else {
            for i in (pos..n).rev() {
                self.set(i + 1, self.at(i));
            }
        }
    }

    /// Entries `1..=pos` one slot forward (the head has just moved back by one), as
    /// `shift_back` does.
    #[inline(always)]
    fn shift_front(&mut self, pos: usize) {
        let to = self.head;
        if pos >= MEMMOVE_FROM && to + pos <= self.mask {
            self.buf.copy_within(to + 1..to + 1 + pos, to);
        } else {
            for i in 0..pos {
                self.set(i, self.at(i + 1));
            }
        }
    }

    /// The first position whose entry is greater than `x`.
    fn upper_bound(&self, x: T) -> usize {
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.at(mid) <= x {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    #[cold]
    fn grow(&mut self) {
        let xs: Vec<T> = self.iter().collect();
        let cap = self.buf.len() * 2;
        self.buf = vec![T::default(); cap];
        self.buf[..xs.len()].copy_from_slice(&xs);
        self.head = 0;
        self.mask = cap - 1;
    }

    /// Pop the least and push `x` (what a heap's replacement of its top gives). When `x` is
    /// not less than the greatest (the write buffer's usual case: a unit leaves, a later one
    /// enters) it takes the least's slot at the back of the ring: one store, the count kept.
    #[inline(always)]
    pub fn replace_least(&mut self, x: T) {
        let n = self.len;
        if n > 0 && self.at(n - 1) <= x {
            // (head + n) is the least's own slot when the ring is full.
            self.set(n, x);
            self.head = (self.head + 1) & self.mask;
            return;
        }
        self.pop();
        self.push(x);
    }

    /// The entries in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        (0..self.len).map(|i| self.at(i))
    }

    /// Replace the entries by `xs` (in any order).
    pub fn assign(&mut self, xs: &[T]) {
        self.head = 0;
        self.len = 0;
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
