//! Prints what a reviewer would chart for a preset, fast, from the Rust driver: IOPS and
//! latency against queue depth, QD1 latency percentiles, a WSAT curve and per-second spread.
//! `cargo run --release --example probe -- PRESET [user_gb] [what]` (what: qd, lat, wsat, ent, sec, qd1w, ramp, all).

use _sim::config::{resolve_ssd, SsdConfig};
use _sim::driver::{run, RunResult, RunSpec, StreamSpec, NS};
use _sim::ssd::Ssd;

fn spec(rnd: bool, write: bool, bs: u64, oio: u32, secs: f64) -> RunSpec {
    RunSpec {
        duration_ns: Some((secs * NS as f64) as u64),
        seed: 7,
        ..RunSpec::single(rnd, write, bs, oio)
    }
}

fn go(d: &mut Ssd, s: &RunSpec) -> RunResult {
    run(d, s, &mut |_, _| true).unwrap()
}

fn pct(r: &_sim::driver::OpResult, p: f64) -> f64 {
    r.hist.percentile_ns(p).unwrap_or(0.0) / 1000.0
}

fn lat(tag: &str, r: &_sim::driver::OpResult) {
    let mean = r.hist.sum_ns as f64 / r.ios.max(1) as f64 / 1000.0;
    println!(
        "  {tag:<10} mean {mean:7.1}  p50 {:7.1}  p95 {:7.1}  p99 {:7.1}  p99.9 {:7.1}  p99.99 {:7.1}  p99.999 {:7.1}  max {:7.1} us",
        pct(r, 50.0), pct(r, 95.0), pct(r, 99.0), pct(r, 99.9), pct(r, 99.99), pct(r, 99.999),
        r.hist.max_ns as f64 / 1000.0
    );
}

fn fill(d: &mut Ssd) {
    let cap = d.cfg.user_bytes();
    let mut s = spec(false, true, 128 << 10, 32, 1e9);
    s.duration_ns = None;
    s.bytes_budget = Some(cap);
    go(d, &s);
}

/// 4K random writes at QD32 of `times` the capacity, of data of entropy `entropy`: the
/// preconditioning to steady state.
fn random_writes(d: &mut Ssd, times: u64, entropy: f64) {
    let mut s = spec(true, true, 4096, 32, 1e9);
    s.entropy = entropy;
    s.duration_ns = None;
    s.bytes_budget = Some(times * d.cfg.user_bytes());
    go(d, &s);
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let preset = a.get(1).map(|s| s.as_str()).unwrap_or("enterprise-sas");
    let gb = a.get(2).cloned().unwrap_or("4".into());
    let what = a.get(3).map(|s| s.as_str()).unwrap_or("all");
    let mut extra: Vec<(String, String)> = vec![("user_gb".into(), gb.clone())];
    for kv in a.iter().skip(4) {
        let (k, v) = kv.split_once('=').unwrap();
        extra.push((k.into(), v.into()));
    }
    let cfg = resolve_ssd(preset, &extra).unwrap();
    // "all" is the three a review charts first; the others run alone.
    if what == "all" || what == "qd" {
        by_qd(&cfg, preset, &gb);
    }
    if what == "all" || what == "lat" {
        qd1_latency(&cfg);
    }
    if what == "all" || what == "wsat" {
        wsat(&cfg);
    }
    match what {
        "ent" => entropy(&cfg),
        "sec" => per_second(&cfg),
        "qd1w" => qd1_writes(&cfg),
        "ramp" => ramp(&cfg),
        _ => {}
    }
}

/// 4K random read and write IOPS by queue depth after a fill and 2x random writes, then sequential MB/s.
fn by_qd(cfg: &SsdConfig, preset: &str, gb: &str) {
    let mut d = Ssd::new(cfg.clone());
    fill(&mut d);
    println!("{preset} {gb} GB: 4K random read / write IOPS by QD (after a sequential fill + 2x random writes)");
    for qd in [1, 2, 4, 8, 16, 32, 64, 128, 256] {
        let r = go(&mut d, &spec(true, false, 4096, qd, 2.0));
        println!(
            "  read  QD{qd:<4} {:9.0} IOPS  mean {:7.1} us  p99 {:7.1}",
            r.iops(),
            r.read.hist.sum_ns as f64 / r.read.ios as f64 / 1e3,
            pct(&r.read, 99.0)
        );
    }
    random_writes(&mut d, 2, 1.0);
    for qd in [1, 2, 4, 8, 16, 32, 64, 128, 256] {
        let r = go(&mut d, &spec(true, true, 4096, qd, 5.0));
        println!(
            "  write QD{qd:<4} {:9.0} IOPS  mean {:7.1} us  p99 {:7.1}",
            r.iops(),
            r.write.hist.sum_ns as f64 / r.write.ios as f64 / 1e3,
            pct(&r.write, 99.0)
        );
    }
    let r = go(&mut d, &spec(false, false, 128 << 10, 32, 3.0));
    println!(
        "  seq read 128K QD32 {:.0} MB/s",
        r.read.bytes as f64 / r.runtime_s() / 1e6
    );
    let r = go(&mut d, &spec(false, true, 128 << 10, 32, 3.0));
    println!(
        "  seq write 128K QD32 {:.0} MB/s",
        r.write.bytes as f64 / r.runtime_s() / 1e6
    );
}

/// QD1 4K random read and write latency percentiles on a filled drive.
fn qd1_latency(cfg: &SsdConfig) {
    let mut d = Ssd::new(cfg.clone());
    fill(&mut d);
    let r = go(&mut d, &spec(true, false, 4096, 1, 20.0));
    lat("QD1 read", &r.read);
    let r = go(&mut d, &spec(true, true, 4096, 1, 20.0));
    lat("QD1 write", &r.write);
}

/// A WSAT curve (4K random writes at QD32) interval by interval, and the last quarter's per-second spread.
fn wsat(cfg: &SsdConfig) {
    let mut d = Ssd::new(cfg.clone());
    let cap = d.cfg.user_bytes() as f64;
    let mut written = 0.0;
    let mut secs_per: Vec<f64> = vec![];
    println!("WSAT (4K rnd write QD32) per interval: IOPS, written/capacity");
    let mut i = 0;
    // One interval writes ~1 % of the capacity at FOB speed, as a PTS minute does on the
    // full-size drive.
    let interval = 0.01 * cap / 4096.0 / 100_000.0;
    while written < 4.0 * cap && i < 400 {
        let mut sp = spec(true, true, 4096, 32, interval);
        sp.seed = i as u64 + 100;
        let r = go(&mut d, &sp);
        written += r.write.bytes as f64;
        for b in &r.series {
            secs_per.push(b.writes as f64);
        }
        if i % 10 == 0 {
            let c = d.ftl.c;
            println!(
                "  {i:4} {:9.0}  {:.2}  WAF so far {:.2}  free {}",
                r.iops(),
                written / cap,
                (c.host_chunks + c.gc_chunks) as f64 / c.host_chunks as f64,
                d.ftl.free_blocks()
            );
        }
        i += 1;
    }
    let tail = &secs_per[secs_per.len() * 3 / 4..];
    let mn = tail.iter().cloned().fold(f64::MAX, f64::min);
    let mx = tail.iter().cloned().fold(0.0, f64::max);
    let mean = tail.iter().sum::<f64>() / tail.len() as f64;
    println!(
        "  last quarter per-second: mean {mean:.0} min {mn:.0} max {mx:.0} (max/min {:.2})",
        mx / mn.max(1.0)
    );
}

/// Steady 4K random write IOPS and a 70/30 mix by data entropy, 0 to 1.
fn entropy(cfg: &SsdConfig) {
    println!("entropy: steady 4K random write IOPS QD32, 70/30 mix mean latency QD32");
    for e10 in 0..=10 {
        let e = e10 as f64 / 10.0;
        let mut d = Ssd::new(cfg.clone());
        fill(&mut d);
        random_writes(&mut d, 2, e);
        let mut s = spec(true, true, 4096, 32, 5.0);
        s.entropy = e;
        let r = go(&mut d, &s);
        let mut m = spec(true, true, 4096, 32, 5.0);
        m.entropy = e;
        m.streams = vec![
            StreamSpec {
                rnd: true,
                write: false,
                bs: 4096,
                share: 0.7,
            },
            StreamSpec {
                rnd: true,
                write: true,
                bs: 4096,
                share: 0.3,
            },
        ];
        let r2 = go(&mut d, &m);
        let n = r2.read.ios + r2.write.ios;
        println!(
            "  e {e:.1}  write {:8.0} IOPS   70/30 {:8.0} IOPS mean {:7.1} us",
            r.iops(),
            r2.iops(),
            (r2.read.hist.sum_ns + r2.write.hist.sum_ns) as f64 / n as f64 / 1e3
        );
    }
}

/// Per-second write IOPS after the cliff.
fn per_second(cfg: &SsdConfig) {
    let mut d = Ssd::new(cfg.clone());
    fill(&mut d);
    random_writes(&mut d, 3, 1.0);
    // A fresh seed: replaying the preconditioning's sequence is a sequential rewrite.
    let mut m = spec(true, true, 4096, 32, 60.0);
    m.seed = 11;
    let r = go(&mut d, &m);
    let v: Vec<f64> = r.series.iter().map(|b| b.writes as f64).collect();
    let mn = v.iter().cloned().fold(f64::MAX, f64::min);
    let mx = v.iter().cloned().fold(0.0, f64::max);
    println!(
        "per-second write IOPS after the cliff: min {mn:.0} max {mx:.0} max/min {:.2}",
        mx / mn.max(1.0)
    );
    println!("  {:?}", v.iter().map(|x| *x as u64).collect::<Vec<_>>());
}

/// Steady-state QD1 4K writes, as a QoS review measures them after preconditioning.
fn qd1_writes(cfg: &SsdConfig) {
    let mut d = Ssd::new(cfg.clone());
    fill(&mut d);
    random_writes(&mut d, 3, 1.0);
    for round in 0..3 {
        let mut s = spec(true, true, 4096, 1, 5.0);
        s.seed = 50 + round;
        let r = go(&mut d, &s);
        println!("  round {round}: {:.0} IOPS", r.iops());
        lat("QD1 write", &r.write);
    }
}

/// Open-loop 4K random read demand ramp at 32 outstanding at most.
fn ramp(cfg: &SsdConfig) {
    let mut d = Ssd::new(cfg.clone());
    fill(&mut d);
    for rate in [
        20_000.0, 50_000.0, 70_000.0, 80_000.0, 90_000.0, 100_000.0, 120_000.0,
    ] {
        let mut s = spec(true, false, 4096, 32, 2.0);
        s.rate_iops = Some(rate);
        let r = go(&mut d, &s);
        println!(
            "  demand {rate:7.0}  read {:8.0} IOPS  mean {:7.1} us",
            r.iops(),
            r.read.hist.sum_ns as f64 / r.read.ios.max(1) as f64 / 1e3
        );
    }
}
