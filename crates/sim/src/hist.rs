//! Log-linear latency histogram (HdrHistogram-like): exact below 256 ns, then 128 bins per
//! power of two, so any percentile is within ±0.4 % of the true sample. Recording is an
//! index computation and an increment; no allocation per IO.

pub const SUB_BITS: u32 = 8;
const S: u64 = 1 << SUB_BITS;
const HALF: u64 = S / 2;
pub const NBINS: usize = (S + (64 - SUB_BITS as u64) * HALF) as usize;

#[inline(always)]
pub fn index(v: u64) -> usize {
    if v < S {
        v as usize
    } else {
        let msb = 63 - v.leading_zeros();
        let shift = msb - (SUB_BITS - 1);
        (S + (shift as u64 - 1) * HALF + ((v >> shift) - HALF)) as usize
    }
}

/// [lo, hi) of bin i, in ns.
pub fn bounds(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < S {
        (i, i + 1)
    } else {
        let shift = (i - S) / HALF + 1;
        let m = (i - S) % HALF + HALF;
        (m << shift, (m + 1) << shift)
    }
}

#[derive(Clone, Debug)]
pub struct Hist {
    pub counts: Vec<u64>,
    pub n: u64,
    pub sum_ns: u128,
    pub min_ns: u64,
    pub max_ns: u64,
}

impl Default for Hist {
    fn default() -> Self {
        Hist {
            counts: vec![0; NBINS],
            n: 0,
            sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }
}

impl Hist {
    #[inline(always)]
    pub fn record(&mut self, v: u64) {
        self.counts[index(v)] += 1;
        self.n += 1;
        self.sum_ns += v as u128;
        if v < self.min_ns {
            self.min_ns = v;
        }
        if v > self.max_ns {
            self.max_ns = v;
        }
    }

    /// Non-empty bins as (representative value in µs, count); the representative is the bin's
    /// midpoint (exact for the 1 ns bins).
    pub fn bins_us(&self) -> Vec<(f64, u64)> {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| {
                let (lo, hi) = bounds(i);
                let mid = if hi - lo == 1 {
                    lo as f64
                } else {
                    (lo + hi - 1) as f64 / 2.0
                };
                (mid / 1000.0, c)
            })
            .collect()
    }

    /// Percentile in ns (bin midpoint, capped at the true maximum).
    pub fn percentile_ns(&self, pct: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let need = pct / 100.0 * self.n as f64;
        let mut cum = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            cum += c;
            if c > 0 && cum as f64 >= need - 1e-9 {
                let (lo, hi) = bounds(i);
                let mid = if hi - lo == 1 {
                    lo as f64
                } else {
                    (lo + hi - 1) as f64 / 2.0
                };
                return Some(mid.min(self.max_ns as f64));
            }
        }
        Some(self.max_ns as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_contiguous_and_contain_their_values() {
        let mut prev_hi = 0;
        for i in 0..NBINS - 1 {
            let (lo, hi) = bounds(i);
            assert_eq!(lo, prev_hi, "bin {i}");
            assert!(hi > lo);
            prev_hi = hi;
        }
        for v in [
            0u64,
            1,
            255,
            256,
            257,
            511,
            512,
            1000,
            123_456,
            10_000_000_000,
            u64::MAX >> 2,
        ] {
            let (lo, hi) = bounds(index(v));
            assert!(lo <= v && v < hi, "v={v} in [{lo},{hi})");
            assert!(
                (hi - lo) as f64 <= 1.0f64.max(v as f64 / 127.0),
                "bin too wide at {v}"
            );
        }
    }

    #[test]
    fn percentiles_are_close() {
        let mut h = Hist::default();
        for v in 1..=100_000u64 {
            h.record(v * 10);
        }
        let p50 = h.percentile_ns(50.0).unwrap();
        assert!((p50 - 500_000.0).abs() / 500_000.0 < 0.005, "{p50}");
        let p99999 = h.percentile_ns(99.999).unwrap();
        assert!((p99999 - 999_990.0).abs() / 999_990.0 < 0.005, "{p99999}");
        assert_eq!(h.max_ns, 1_000_000);
        assert_eq!(h.min_ns, 10);
    }
}
