//! The SEQ rule of the stream walk (streams.rs): an IO is SEQ when its offset matches the end
//! of one of the last `lookback` IOs of its group (device, direction).
//!
//! A run of IOs is taken in two passes. The first appends each IO's end to its group's
//! history (the group's last `lookback` ends from before the run, then the run's own, in
//! order) and notes where; the second compares each IO's offset with the `lookback` ends
//! before its own in that history, without a branch on the answer. Where the CPU has AVX2
//! the compare takes four ends per instruction, into four independent masks (the compiler's
//! own vectorisation of the plain loop narrowed every compare's lanes to bools first, as
//! many instructions again). Measured on the bench's 10 M-IO trace: 26 cycles per IO for a
//! ring of ends written and read IO by IO, 17 for this.

use crate::streams_cols::Chunk;

/// One group's ends: the last `lookback` before the current run, then the run's.
#[derive(Default)]
pub(crate) struct History {
    ends: Vec<i64>,
}

/// The SEQ rule's state: each group's history, and the current run's positions in them.
#[derive(Default)]
pub(crate) struct Seq {
    groups: Vec<History>,
    /// Per IO of the run: its group and the index of its own end in that group's history.
    at: Vec<(u32, u32)>,
}

/// Offset within [end, end + gap] of a kept end; the wrapping difference, read unsigned, is
/// that test in one compare (and the earlier code's int64 arithmetic, overflow too). Without
/// a gap it is equality.
#[inline(always)]
fn matches(off: i64, end: i64, gap: u64) -> bool {
    if gap == 0 {
        end == off
    } else {
        off.wrapping_sub(end) as u64 <= gap
    }
}

#[inline(always)]
fn hit(ends: &[i64], off: i64, gap: u64) -> bool {
    ends.iter().fold(false, |h, &e| h | matches(off, e, gap))
}

/// The same test, sixteen ends per round in four AVX2 compares.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn hit_avx2(ends: &[i64], off: i64, gap: u64) -> bool {
    use std::arch::x86_64::*;
    let whole = ends.len() / 16 * 16;
    let p = ends.as_ptr() as *const __m256i;
    let o = _mm256_set1_epi64x(off);
    // unsigned a <= gap is signed (a ^ MIN) <= (gap ^ MIN): AVX2 compares signed only
    let bias = _mm256_set1_epi64x(i64::MIN);
    let g = _mm256_set1_epi64x((gap as i64) ^ i64::MIN);
    let test = |k: usize| {
        let e = _mm256_loadu_si256(p.add(k));
        if gap == 0 {
            _mm256_cmpeq_epi64(e, o)
        } else {
            let past = _mm256_cmpgt_epi64(_mm256_xor_si256(_mm256_sub_epi64(o, e), bias), g);
            _mm256_andnot_si256(past, _mm256_set1_epi64x(-1))
        }
    };
    let mut m = [_mm256_setzero_si256(); 4];
    for r in (0..whole / 4).step_by(4) {
        for (j, acc) in m.iter_mut().enumerate() {
            *acc = _mm256_or_si256(*acc, test(r + j));
        }
    }
    let any = _mm256_or_si256(_mm256_or_si256(m[0], m[1]), _mm256_or_si256(m[2], m[3]));
    (_mm256_testz_si256(any, any) == 0) | hit(&ends[whole..], off, gap)
}

impl Seq {
    /// Pass one: each IO's end into its group's history, and where it went.
    fn record(&mut self, c: &Chunk) {
        self.at.clear();
        self.at.reserve(c.offset.len());
        for i in 0..c.offset.len() {
            let g = match c.dev {
                Some(d) => d[i] as usize * 2 + (c.write[i] != 0) as usize,
                None => (c.write[i] != 0) as usize,
            };
            if g >= self.groups.len() {
                self.groups.resize_with(g + 1, History::default);
            }
            let h = &mut self.groups[g].ends;
            self.at.push((g as u32, h.len() as u32));
            h.push(c.offset[i].wrapping_add(c.size[i]));
        }
    }

    /// After the run: each history keeps its last `lookback` ends.
    fn trim(&mut self, lookback: usize) {
        for h in &mut self.groups {
            let cut = h.ends.len().saturating_sub(lookback);
            h.ends.drain(..cut);
        }
    }
}

/// Pass two: the flags; `AVX2`: compare with AVX2 (only called so from a function compiled
/// for it).
#[inline(always)]
unsafe fn compare<const AVX2: bool>(
    seq: &Seq,
    c: &Chunk,
    lookback: usize,
    gap: u64,
    flags: &mut Vec<bool>,
) {
    flags.extend(c.offset.iter().zip(&seq.at).map(|(&off, &(g, k))| {
        let k = k as usize;
        let ends = &seq.groups[g as usize].ends[k.saturating_sub(lookback)..k];
        #[cfg(target_arch = "x86_64")]
        if AVX2 {
            return hit_avx2(ends, off, gap);
        }
        hit(ends, off, gap)
    }));
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn compare_avx2(seq: &Seq, c: &Chunk, lookback: usize, gap: u64, flags: &mut Vec<bool>) {
    compare::<true>(seq, c, lookback, gap, flags)
}

pub(crate) fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The SEQ flags of a run of IOs, appended to `flags`; `avx2` as `has_avx2` found it. Runs
/// are at most u32::MAX IOs (the walk feeds slices of thousands).
pub(crate) fn seq_flags(
    seq: &mut Seq,
    c: &Chunk,
    lookback: usize,
    gap: u64,
    avx2: bool,
    flags: &mut Vec<bool>,
) {
    seq.record(c);
    #[cfg(target_arch = "x86_64")]
    if avx2 {
        // SAFETY: the CPU has AVX2 (has_avx2).
        unsafe { compare_avx2(seq, c, lookback, gap, flags) };
        return seq.trim(lookback);
    }
    let _ = avx2;
    // SAFETY: the plain compare needs no CPU feature.
    unsafe { compare::<false>(seq, c, lookback, gap, flags) };
    seq.trim(lookback)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Random runs where matches are common (offsets drawn from a few recent ends, near
    /// them, or anywhere, including past i64's ends), over lookbacks around and between the
    /// sixteen-end rounds, with and without a gap, on two devices: the AVX2 compare gives the
    /// plain one's flags, IO for IO.
    #[test]
    fn avx2_compare_flags_as_the_plain_one_does() {
        if !has_avx2() {
            return;
        }
        let mut rng = Rng::new(7);
        for &lookback in &[1usize, 3, 15, 16, 17, 31, 32, 48, 64, 65, 100, 128] {
            for &gap in &[0u64, 1, 4096, u64::MAX >> 1, u64::MAX] {
                let n = 3000;
                let (mut off, mut size) = (Vec::new(), Vec::new());
                let mut ends: Vec<i64> = vec![0];
                for _ in 0..n {
                    let o = match rng.below(4) {
                        0 => ends[rng.below(ends.len() as u64) as usize],
                        1 => ends[rng.below(ends.len() as u64) as usize]
                            .wrapping_add(rng.below(8192) as i64 - 4096),
                        2 => [i64::MIN, i64::MAX, -1][rng.below(3) as usize],
                        _ => rng.next_u64() as i64,
                    };
                    let s = 1 + rng.below(1 << 20) as i64;
                    ends.push(o.wrapping_add(s));
                    if ends.len() > 2 * lookback + 2 {
                        ends.remove(0);
                    }
                    off.push(o);
                    size.push(s);
                }
                let t: Vec<i64> = (0..n as i64).collect();
                let w: Vec<u8> = (0..n).map(|_| rng.below(2) as u8).collect();
                let dev: Vec<i32> = (0..n).map(|_| rng.below(2) as i32).collect();
                let lat = vec![-1.0; n];
                let c = Chunk {
                    time_ns: &t,
                    write: &w,
                    offset: &off,
                    size: &size,
                    lat: &lat,
                    dev: Some(&dev),
                };
                let (mut plain, mut fast) = (Vec::new(), Vec::new());
                seq_flags(&mut Seq::default(), &c, lookback, gap, false, &mut plain);
                seq_flags(&mut Seq::default(), &c, lookback, gap, true, &mut fast);
                assert_eq!(plain, fast, "lookback {lookback}, gap {gap}");
                let hits = plain.iter().filter(|&&h| h).count();
                assert!(
                    hits > n / 40 && hits < n,
                    "lookback {lookback}, gap {gap}: {hits} hits"
                );
            }
        }
    }
}
