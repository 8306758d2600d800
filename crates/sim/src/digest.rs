//! One number for everything a run reports (FNV-1a over its histograms, per-second series
//! and the FTL's counters): equal digests mean a speed change left every figure as it was.

use crate::driver::RunResult;
use crate::ftl::Counters;

pub fn digest(r: &RunResult, c: &Counters) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut eat = |x: u64| h = (h ^ x).wrapping_mul(0x100_0000_01b3);
    for op in [&r.read, &r.write] {
        eat(op.ios);
        eat(op.bytes);
        eat(op.hist.sum_ns as u64);
        eat(op.hist.max_ns);
        op.hist.counts.iter().for_each(|&c| eat(c));
    }
    eat(r.end_ns - r.start_ns);
    for s in &r.series {
        eat(s.writes + s.reads);
        eat(s.lat_sum_ns as u64);
        eat(s.lat_max_ns);
    }
    for x in [
        c.host_chunks,
        c.gc_chunks,
        c.gc_runs,
        c.erases,
        c.pad_chunks,
        c.bg_steps,
        c.evict_chunks,
    ] {
        eat(x);
    }
    h
}
