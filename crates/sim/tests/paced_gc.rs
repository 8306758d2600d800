//! Paced foreground GC (`gc_pace_victims`) right after a sequential fill. The fill's victims
//! were wholly rewritten and cost nothing, so the average cost pacing starts the random
//! workload with is 0 while its victims are mostly valid. Unbounded, that ratio let GC rest
//! on a live victim until the safety net, whose erase then owed tens of blocks of copying
//! at one instant: a write held for 0.6 s where GC at each victim's own cost holds one for
//! a few ms (a quick iops cell 9.4x apart from the same cell of a two-port run, whose burst
//! fell in another cell). The free blocks can hold a block's difference from the average,
//! not more, so a victim far from it is paced at the nearest rate they absorb.

use _sim::config::{resolve_ssd, DEFAULT_PRESET};
use _sim::driver::{run, RunResult, RunSpec, NS};
use _sim::ssd::Ssd;

/// The 400 MiB copy of the default drive the two-port integration test runs (64 FTL blocks
/// of 8 MiB), with pacing as given.
fn small(pace: &str) -> Ssd {
    let p: Vec<(String, String)> = [
        ("blocks_per_plane", "64"),
        ("pages_per_block", "16"),
        ("op", "0.28"),
        ("gc_pass_period_ms", "0"),
        ("gc_pace_victims", pace),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    Ssd::new(resolve_ssd(DEFAULT_PRESET, &p).unwrap())
}

fn go(d: &mut Ssd, rnd: bool, bs: u64, secs: f64, budget: Option<u64>, seed: u64) -> RunResult {
    let s = RunSpec {
        duration_ns: budget.is_none().then_some((secs * NS as f64) as u64),
        bytes_budget: budget,
        seed,
        ..RunSpec::single(rnd, true, bs, 32)
    };
    run(d, &s, &mut |_, _| true).unwrap()
}

/// Twice the capacity written sequentially (as PTS preconditions), then random 128 KiB
/// writes: the slowest write, in ms, and the most victims finished within one 10 ms.
fn after_fill(pace: &str) -> (f64, u64) {
    let mut d = small(pace);
    let cap = d.cfg.user_bytes();
    go(&mut d, false, 128 << 10, 0.0, Some(2 * cap), 1);
    let mut worst = (0.0f64, 0u64);
    for i in 0..40 {
        let runs = d.ftl.c.gc_runs;
        let r = go(&mut d, true, 128 << 10, 0.01, None, 10 + i);
        worst.0 = worst.0.max(r.write.hist.max_ns as f64 / 1e6);
        worst.1 = worst.1.max(d.ftl.c.gc_runs - runs);
    }
    d.ftl.check().unwrap();
    worst
}

#[test]
fn paced_gc_after_a_sequential_fill_holds_no_write_longer_than_gc_at_each_victims_cost() {
    let (own, paced) = (after_fill("0"), after_fill("32"));
    eprintln!(
        "unpaced: slowest {:.1} ms, {} victims per 10 ms",
        own.0, own.1
    );
    eprintln!(
        "paced:   slowest {:.1} ms, {} victims per 10 ms",
        paced.0, paced.1
    );
    // Before: paced 708 ms and 37 victims within 10 ms (unpaced: 44.5 ms, 3); after: 58.8 ms, 3.
    assert!(paced.0 <= 2.0 * own.0.max(5.0), "{paced:?} vs {own:?}");
    assert!(paced.1 <= 2 * own.1.max(3), "{paced:?} vs {own:?}");
}
