//! Speed probe: `cargo run --release --example speed -- [blocks_per_plane] [warmup drive-writes]`.
use _sim::config::{resolve_ssd, DEFAULT_PRESET};
use _sim::driver::{run, Device, RunSpec, StreamSpec, NS};
use _sim::ssd::Ssd;
use std::time::Instant;

/// CPU time of this thread (ns): wall time is noisy on a shared machine.
fn cpu() -> f64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    s.split_whitespace().next().unwrap().parse::<f64>().unwrap() / 1e9
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let bpp = args.get(1).cloned().unwrap_or("3815".into());
    let warm: f64 = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(1.5);
    let cfg = resolve_ssd(DEFAULT_PRESET, &[("blocks_per_plane".into(), bpp), ("op".into(), "0.28".into())]).unwrap();
    let t = Instant::now();
    let mut s = Ssd::new(cfg);
    println!("alloc {:.2}s, memory {:.1} MiB for {:.1} GiB flash", t.elapsed().as_secs_f64(), s.memory_bytes() as f64 / (1 << 20) as f64, s.cfg.physical_bytes() as f64 / (1u64 << 30) as f64);
    let cap = s.capacity();
    let mk = |rnd: bool, bs: u64, b: Option<u64>, d: Option<u64>| RunSpec {
        streams: vec![StreamSpec { rnd, write: true, bs, share: 1.0 }],
        oio: 32, active_range: 1.0, entropy: 1.0, rate_iops: None, duration_ns: d, bytes_budget: b, seed: 1,
    };
    let t = Instant::now();
    let r = run(&mut s, &mk(false, 128 * 1024, Some(cap), None), &mut |_, _| true).unwrap();
    println!("seq fill: {:.2}s wall, {} IOs, {:.1} virtual s", t.elapsed().as_secs_f64(), r.write.ios, r.runtime_s());
    let t = Instant::now();
    let r = run(&mut s, &mk(true, 4096, Some((warm * cap as f64) as u64), None), &mut |_, _| true).unwrap();
    let w = t.elapsed().as_secs_f64();
    println!("rnd warm-up: {:.2}s wall, {:.2} M IO/s wall, {:.0} IOPS virtual", w, r.write.ios as f64 / w / 1e6, r.iops());
    let c0 = s.ftl.c;
    let t = Instant::now();
    let c = cpu();
    let r = run(&mut s, &mk(true, 4096, None, Some(60 * NS)), &mut |_, _| true).unwrap();
    let w = t.elapsed().as_secs_f64();
    println!("steady write: {:.2} M IO/s per CPU second", r.write.ios as f64 / (cpu() - c) / 1e6);
    let c1 = s.ftl.c;
    let waf = (c1.host_chunks + c1.gc_chunks - c0.host_chunks - c0.gc_chunks) as f64 / (c1.host_chunks - c0.host_chunks) as f64;
    let work = (c1.host_chunks - c0.host_chunks + c1.gc_chunks - c0.gc_chunks) as f64 * 250e-6 + (c1.erases - c0.erases) as f64 * 3.5e-3 * 32.0;
    println!("die work (programs+erases) {:.1}% of capacity; gc runs {}", 100.0 * work / (r.runtime_s() * 32.0), c1.gc_runs - c0.gc_runs);
    println!("steady 60 virtual s: {:.2}s wall, {:.2} M IO/s wall, {:.0} IOPS virtual, WAF {:.3}, clock {:.0}s", w, r.write.ios as f64 / w / 1e6, r.iops(), waf, s.clock() as f64 / 1e9);
    let t = Instant::now();
    let rr = RunSpec { streams: vec![StreamSpec { rnd: true, write: false, bs: 4096, share: 1.0 }], ..mk(true, 4096, None, Some(60 * NS)) };
    let c = cpu();
    let r = run(&mut s, &rr, &mut |_, _| true).unwrap();
    println!("read: {:.2} M IO/s per CPU second", r.read.ios as f64 / (cpu() - c) / 1e6);
    let w = t.elapsed().as_secs_f64();
    println!("rnd read 60 virtual s: {:.2}s wall, {:.2} M IO/s wall, {:.0} IOPS virtual", w, r.read.ios as f64 / w / 1e6, r.iops());
}
