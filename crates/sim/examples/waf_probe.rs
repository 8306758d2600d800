use _sim::config::{Policy, SsdConfig};
use _sim::driver::{run, RunSpec, StreamSpec};
use _sim::ssd::Ssd;
use _sim::oracle;

fn main() {
    let np = 64u32;
    for &(rho, pol) in &[(0.07, Policy::Greedy), (0.28, Policy::Greedy), (0.07, Policy::Fifo), (0.28, Policy::Fifo), (0.28, Policy::Random)] {
        for &extra in &[0u32, 1, 2, 3] {
            let d = 1024u32;
            let u = ((d * np) as f64 / (1.0 + rho)).floor() as u32;
            let cfg = SsdConfig::small(d + extra + 2 - 2 + 2, np, u, pol, 2);
            let _ = extra;
            let mut s = Ssd::new(cfg);
            let cap = u as u64 * 4096;
            let seq = RunSpec { streams: vec![StreamSpec { rnd: false, write: true, bs: 4096, share: 1.0 }], oio: 1, active_range: 1.0, entropy: 1.0, rate_iops: None, duration_ns: None, bytes_budget: Some(cap), seed: 1 };
            run(&mut s, &seq, &mut |_, _| true).unwrap();
            let rnd = RunSpec { streams: vec![StreamSpec { rnd: true, write: true, bs: 4096, share: 1.0 }], bytes_budget: Some(cap * 12), ..seq.clone() };
            run(&mut s, &rnd, &mut |_, _| true).unwrap();
            let c0 = s.ftl.c;
            let rnd2 = RunSpec { bytes_budget: Some(cap * 15), seed: 2, ..rnd.clone() };
            run(&mut s, &rnd2, &mut |_, _| true).unwrap();
            let c1 = s.ftl.c;
            let waf = ((c1.host_chunks + c1.gc_chunks) - (c0.host_chunks + c0.gc_chunks)) as f64 / (c1.host_chunks - c0.host_chunks) as f64;
            let want = |t: u32| {
                let a = (t * np) as f64 / u as f64;
                match pol { Policy::Greedy => oracle::waf_greedy(a, np as f64), Policy::Fifo => oracle::waf_fifo(a), _ => oracle::waf_random(a) }
            };
            println!("rho={rho} {:?} N={} waf={waf:.3} oracle(T=N)={:.3} (T=N-1)={:.3} (T=N-2)={:.3} (T=N-3)={:.3}", pol, d + extra + 2, want(d + extra + 2), want(d + extra + 1), want(d + extra), want(d+extra-1));
            s.ftl.check().unwrap();
            break;
        }
    }
}
