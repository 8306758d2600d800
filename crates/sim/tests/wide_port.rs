//! A wide (dual) port: each host port has a link of its own, the back end behind them is the
//! one drive's. Sequential reads bound by enterprise-sas's 6 Gb/s link (550 MB/s) nearly
//! double over two ports; 4 KiB random reads, bound by the controller and dies, do not.
//! Before each port had its link, both ports shared one and the two runs agreed to the digit
//! (550.0 MB/s, 89,096 IOPS from the command line).

use _sim::config::resolve_ssd;
use _sim::driver::{run_paths, RunSpec, NS};
use _sim::ssd::Ssd;

/// A 0.5 GB copy of the preset, written once sequentially so that reads reach the flash.
fn filled(preset: &str) -> Ssd {
    let p = vec![("user_gb".to_string(), "0.5".to_string())];
    let mut d = Ssd::new(resolve_ssd(preset, &p).unwrap());
    let s = RunSpec {
        bytes_budget: Some(d.cfg.user_bytes()),
        seed: 1,
        ..RunSpec::single(false, true, 128 << 10, 32)
    };
    run_paths(&mut d, &s, &[], &mut |_, _| true).unwrap();
    d
}

/// (MB/s, IOPS) of a read cell over one path (`paths` empty) or several.
fn read(preset: &str, rnd: bool, bs: u64, oio: u32, paths: &[u32]) -> (f64, f64) {
    let mut d = filled(preset);
    let s = RunSpec {
        duration_ns: Some(NS / 2),
        seed: 2,
        ..RunSpec::single(rnd, false, bs, oio)
    };
    let r = run_paths(&mut d, &s, paths, &mut |_, _| true).unwrap();
    let t = r.runtime_s();
    (r.read.bytes as f64 / t / 1e6, r.read.ios as f64 / t)
}

#[test]
fn two_ports_double_link_bound_reads_not_back_end_bound_ones() {
    let (one, _) = read("enterprise-sas", false, 128 << 10, 32, &[]);
    let (two, _) = read("enterprise-sas", false, 128 << 10, 32, &[16, 16]);
    println!("SEQ 128 KiB read, QD32: 1 port {one:.1} MB/s, 2 ports {two:.1} MB/s");
    // One port is the link's 550 MB/s; two carry close to twice that (the back end has room).
    assert!((one - 550.0).abs() < 5.0, "one port {one:.1} MB/s");
    assert!(
        two > 1.8 * one,
        "two ports {two:.1} MB/s, one {one:.1} MB/s"
    );

    let (_, one) = read("enterprise-sas", true, 4096, 32, &[]);
    let (_, two) = read("enterprise-sas", true, 4096, 32, &[16, 16]);
    println!("RND 4 KiB read, QD32: 1 port {one:.0} IOPS, 2 ports {two:.0} IOPS");
    // 4 KiB at ~90k IOPS is ~370 MB/s, under one link: the controller and dies bound it.
    assert!(
        (two / one - 1.0).abs() < 0.03,
        "two ports {two:.0} IOPS, one {one:.0}"
    );
}

#[test]
fn a_single_path_uses_port_0_alone() {
    // One path given explicitly is the same run as no paths: port 0's link, nothing else.
    let (none, _) = read("enterprise-sas", false, 128 << 10, 8, &[]);
    let (one, _) = read("enterprise-sas", false, 128 << 10, 8, &[8]);
    assert_eq!(none, one);
}
