//! Cross-stimulus recovery: after a drive has been randomly overwritten, repeated sequential
//! rewrites of a small region (each run restarts at offset 0, as fio's sequential jobs do)
//! must bring WAF back near 1 and throughput back near its fresh-out-of-box level, as on a
//! real drive: the rewritten region's blocks become wholly invalid, so GC frees them for an
//! erase alone. Two things must hold for that: GC copies go to their own frontier (mixed
//! into the host's blocks, cold copies keep them partly valid, and any WAF reproduces
//! itself), and GC owes free space rather than copies (else, below `gc_start_pct`, it
//! collects the block the host is still rewriting and copies data about to be overwritten).

use _sim::config::{resolve_ssd, DEFAULT_PRESET};
use _sim::driver::{run, RunResult, RunSpec, NS};
use _sim::ssd::Ssd;

fn spec(rnd: bool, bs: u64, secs: f64, budget: Option<u64>, seed: u64) -> RunSpec {
    RunSpec {
        duration_ns: if budget.is_some() {
            None
        } else {
            Some((secs * NS as f64) as u64)
        },
        bytes_budget: budget,
        seed,
        ..RunSpec::single(rnd, true, bs, 32)
    }
}

fn go(d: &mut Ssd, s: &RunSpec) -> RunResult {
    run(d, s, &mut |_, _| true).unwrap()
}

fn mbps(r: &RunResult) -> f64 {
    r.write.bytes as f64 / r.runtime_s() / 1e6
}

#[test]
fn sequential_rewrites_of_a_small_region_recover_after_random_overwrite() {
    let p: Vec<(String, String)> = vec![("user_gb".into(), "4".into())];
    let mut d = Ssd::new(resolve_ssd(DEFAULT_PRESET, &p).unwrap());
    let cap = d.cfg.user_bytes();
    let mib = 1 << 20;
    let fob = mbps(&go(&mut d, &spec(false, mib, 0.0, Some(cap), 1)));
    go(&mut d, &spec(true, 8192, 0.0, Some(3 * cap), 2));
    let rnd = mbps(&go(&mut d, &spec(true, 8192, 1.0, None, 3)));
    let mut last = (0.0, 0.0);
    // 40 rewrites of 5 % of the drive: two drive-writes.
    for i in 0..40 {
        let c0 = d.ftl.c;
        let r = go(&mut d, &spec(false, mib, 0.0, Some(cap / 20), 10 + i));
        let c1 = d.ftl.c;
        let waf = (c1.host_chunks + c1.gc_chunks - c0.host_chunks - c0.gc_chunks) as f64
            / (c1.host_chunks - c0.host_chunks) as f64;
        last = (waf, mbps(&r));
        eprintln!(
            "rewrite {i:2}: WAF {waf:.3}  {:.1} MB/s  free blocks {}",
            last.1,
            d.ftl.free_blocks()
        );
    }
    d.ftl.check().unwrap();
    eprintln!("FOB {fob:.1} MB/s, random 8K {rnd:.1} MB/s");
    assert!(
        last.0 < 1.1,
        "WAF {:.3} after 40 rewrites of 5 % of the drive",
        last.0
    );
    assert!(
        last.1 > 0.85 * fob,
        "{:.1} MB/s after rewrites, FOB {fob:.1}",
        last.1
    );
}
