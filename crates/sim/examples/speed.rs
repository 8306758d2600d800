//! The write path's speed and a fingerprint of its results, for profiling and for checking
//! that an optimisation changed no simulated figure (same seed, same output).
//! `cargo run --release --example speed -- [user_gb|-] [M IOs] [KEY=VALUE ...]`

use _sim::config::resolve_ssd;
use _sim::digest::digest;
use _sim::driver::{run, RunSpec};
use _sim::ssd::Ssd;

fn spec(write: bool, bs: u64, rnd: bool, bytes: u64, seed: u64) -> RunSpec {
    RunSpec {
        bytes_budget: Some(bytes),
        seed,
        ..RunSpec::single(rnd, write, bs, 32)
    }
}

/// CPU seconds of this thread (the machine is shared: wall time would count others' work).
fn cpu_s() -> f64 {
    #[repr(C)]
    struct Ts {
        s: i64,
        ns: i64,
    }
    extern "C" {
        fn clock_gettime(clk: i32, ts: *mut Ts) -> i32;
    }
    let mut ts = Ts { s: 0, ns: 0 };
    // SAFETY: ts is a valid timespec; CLOCK_THREAD_CPUTIME_ID is 3 on Linux.
    unsafe { clock_gettime(3, &mut ts) };
    ts.s as f64 + ts.ns as f64 * 1e-9
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let gb = a.get(1).cloned().unwrap_or("100".into());
    let mios: f64 = a.get(2).map_or(5.0, |s| s.parse().unwrap());
    // "-" sizes the drive by its KEY=VALUE parameters alone (e.g. blocks_per_plane and op).
    let mut extra: Vec<(String, String)> = if gb == "-" {
        vec![]
    } else {
        vec![("user_gb".into(), gb)]
    };
    for kv in a.iter().skip(3) {
        let (k, v) = kv.split_once('=').unwrap();
        extra.push((k.into(), v.into()));
    }
    let mut d = Ssd::new(resolve_ssd("enterprise-sas", &extra).unwrap());
    let cap = d.cfg.user_bytes();
    let phases = [
        ("fill", spec(true, 128 << 10, false, cap, 1)),
        ("warm-up", spec(true, 4096, true, cap / 2, 2)),
        (
            "rnd write",
            spec(true, 4096, true, (mios * 1e6) as u64 * 4096, 3),
        ),
        (
            "rnd read",
            spec(false, 4096, true, (mios * 1e6) as u64 * 4096, 4),
        ),
    ];
    for (name, s) in phases {
        let t = cpu_s();
        let r = run(&mut d, &s, &mut |_, _| true).unwrap();
        let secs = cpu_s() - t;
        let ios = r.read.ios + r.write.ios;
        println!(
            "{name:<10} {:6.2} M IOs {:6.2} M IO/s per CPU s  fingerprint {:016x}",
            ios as f64 / 1e6,
            ios as f64 / secs / 1e6,
            digest(&r, &d.counters().0)
        );
    }
}
