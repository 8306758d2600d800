//! The per-step tabulation of the stream walk (streams.rs): each chunk's IOs grouped per
//! (step, seq, write, size), fed a run of rows at a time as the batches of a stream come,
//! each step's groups emitted sorted when the step ends and at the chunk's end.
//!
//! The rows are those of the dense table of slots the earlier code kept per chunk: the same
//! groups in the same order, each latency sum added in row order from 0.0. A chunk with more
//! possible (step, seq, write, size) slots than that table held (`MAX_BINS`) was grouped by
//! the caller instead, and still is: its rows are not made here (`Tab::Flags`).

use crate::streams_cols::{Chunk, Row, StepOf, Tab};

/// The dense table's limit of (step, seq, write, size) slots per chunk.
pub const MAX_BINS: i64 = 1 << 22;

const EMPTY: u32 = u32::MAX;

/// A chunk's tabulation in progress.
pub struct Tabulator {
    step_ns: i64,
    step_of: StepOf,
    cur: i64,
    /// Open addressing over the current step's groups: index into `used`, or EMPTY.
    index: Vec<u32>,
    used: Vec<(usize, Row)>,
    out: Vec<Row>,
    /// What decides whether the dense table would have held the chunk: its first and last
    /// issue times, the OR of its sizes (their common power of two) and its largest size.
    first_t: Option<i64>,
    last_t: i64,
    spread: i64,
    max_size: i64,
    dense: bool,
}

impl Tabulator {
    pub fn new(step_ns: i64) -> Tabulator {
        Tabulator {
            step_ns,
            step_of: StepOf::new(step_ns),
            cur: -1,
            index: vec![EMPTY; 64],
            used: Vec::new(),
            out: Vec::new(),
            first_t: None,
            last_t: 0,
            spread: 0,
            max_size: 0,
            dense: true,
        }
    }

    /// Whether the chunk so far fits the dense table (once it does not, it never will: its
    /// steps and its largest size only grow, its common power of two only shrinks).
    fn fits(&self) -> bool {
        let Some(first) = self.first_t else {
            return true;
        };
        let tz = self.spread.trailing_zeros();
        let m = (self.max_size >> tz) + 1;
        let steps = self.last_t.div_euclid(self.step_ns) - first.div_euclid(self.step_ns) + 1;
        steps
            .checked_mul(4)
            .and_then(|b| b.checked_mul(m))
            .is_some_and(|bins| bins <= MAX_BINS)
    }

    /// Tabulate a run of the chunk's rows, `flags` their SEQ flags.
    pub fn feed(&mut self, c: &Chunk, flags: &[bool]) {
        let (Some(&t0), Some(&t1)) = (c.time_ns.first(), c.time_ns.last()) else {
            return;
        };
        if !self.dense {
            return;
        }
        self.first_t.get_or_insert(t0);
        self.last_t = t1;
        let (spread, max) = c.size.iter().fold((0, 0), |(o, m), &s| (o | s, m.max(s)));
        self.spread |= spread;
        self.max_size = self.max_size.max(max);
        self.dense = self.fits();
        if !self.dense {
            self.used.clear();
            self.index.fill(EMPTY);
            self.out.clear();
            return;
        }
        for (i, &seq) in flags.iter().enumerate() {
            let s = self.step_of.get(c.time_ns[i]);
            if s != self.cur {
                self.flush();
                self.cur = s;
            }
            let (w, size) = (c.write[i] != 0, c.size[i]);
            let r = self.group(s, seq, w, size);
            let l = c.lat[i];
            // Adding 0.0 for a missing latency leaves the sum's bits as they are (it is never -0.0).
            let has = l >= 0.0;
            r.ios += 1;
            r.lat_n += has as i64;
            r.lat_sum += if has { l } else { 0.0 };
            if l > r.lat_max || l.is_nan() {
                r.lat_max = l; // numpy's maximum: NaN wins, and stays
            }
        }
    }

    /// The current step's group of (seq, write, size), made when new.
    #[inline(always)]
    fn group(&mut self, step: i64, seq: bool, write: bool, size: i64) -> &mut Row {
        let mask = self.index.len() - 1;
        // seq and write in the low bits: the product's bits the index takes (from bit 32)
        // depend on the key's low bits only, so in the top bits they never told a size's four
        // groups apart, which then always collided
        let key = (size as u64).rotate_left(2) ^ ((seq as u64) << 1 | write as u64);
        let mut h = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & mask;
        loop {
            let j = self.index[h];
            if j == EMPTY {
                break;
            }
            let r = &self.used[j as usize].1;
            if r.size == size && r.seq == seq && r.write == write {
                return &mut self.used[j as usize].1;
            }
            h = (h + 1) & mask;
        }
        self.index[h] = self.used.len() as u32;
        let row = Row {
            step,
            seq,
            write,
            size,
            ios: 0,
            lat_n: 0,
            lat_sum: 0.0,
            lat_max: -1.0,
        };
        self.used.push((h, row));
        if self.used.len() * 2 > self.index.len() {
            self.rehash();
            return &mut self.used.last_mut().expect("just pushed").1;
        }
        &mut self.used[self.index[h] as usize].1
    }

    fn rehash(&mut self) {
        self.index = vec![EMPTY; self.index.len() * 2];
        let used = std::mem::take(&mut self.used);
        for (_, row) in used {
            let (step, seq, write, size) = (row.step, row.seq, row.write, row.size);
            *self.group(step, seq, write, size) = row;
        }
    }

    /// Emit the current step's groups in (seq, write, size) order: the dense table's slot
    /// order, (seq * 2 + write) * m + size / 2^tz.
    fn flush(&mut self) {
        self.used
            .sort_unstable_by_key(|(_, r)| (r.seq, r.write, r.size));
        for (h, row) in self.used.drain(..) {
            self.index[h] = EMPTY;
            self.out.push(row);
        }
    }

    /// End the chunk: its rows, or None when the dense table would not have held it.
    pub fn finish(&mut self, flags: Vec<bool>) -> Tab {
        self.flush();
        let tab = if self.dense {
            Tab::Rows(std::mem::take(&mut self.out))
        } else {
            Tab::Flags(flags)
        };
        *self = Tabulator::new(self.step_ns);
        tab
    }
}
