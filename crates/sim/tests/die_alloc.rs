//! Die allocation (`die_alloc`): each unit to the least-busy die, or the dies in turn by
//! address (static striping, as the model placed units before dynamic allocation).

use _sim::config::resolve_ssd;
use _sim::driver::{run, RunResult, RunSpec};
use _sim::ssd::Ssd;

const K4: u64 = 4096;

fn drive(alloc: &str) -> Ssd {
    let o: Vec<(String, String)> = [
        ("blocks_per_plane", "64"),
        ("pages_per_block", "16"),
        ("op", "0.28"),
        ("die_alloc", alloc),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    Ssd::new(resolve_ssd("enterprise-sas", &o).unwrap())
}

fn go(d: &mut Ssd, rnd: bool, oio: u32, bytes: u64, seed: u64) -> RunResult {
    let s = RunSpec {
        seed,
        bytes_budget: Some(bytes),
        ..RunSpec::single(rnd, true, K4, oio)
    };
    run(d, &s, &mut |_, _| true).unwrap()
}

/// The die a flash address is on (flash.rs lays a block out a program unit per die in turn).
fn die_of(d: &Ssd, addr: u32) -> u32 {
    let c = &d.cfg;
    (addr % c.cpb) / c.chunks_per_prog % c.dies
}

#[test]
fn striping_lays_units_out_in_address_order_a_program_unit_per_die() {
    let mut d = drive("striped");
    let (cpp, dies) = (d.cfg.chunks_per_prog, d.cfg.dies);
    let n = 3 * cpp * dies; // three rounds over the dies
    go(&mut d, false, 1, n as u64 * K4, 1);
    let first = d.ftl.l2p[0];
    for u in 0..n {
        let a = d.ftl.l2p[u as usize];
        assert_eq!(a, first + u, "unit {u} is not at the next address");
        assert_eq!(die_of(&d, a), u / cpp % dies, "unit {u}");
    }
}

#[test]
fn least_busy_allocation_spreads_a_program_units_worth_over_as_many_dies() {
    let mut d = drive("least-busy");
    let cpp = d.cfg.chunks_per_prog;
    assert!(cpp > 1 && d.cfg.dies >= cpp);
    go(&mut d, false, 1, cpp as u64 * K4, 1);
    let mut dies: Vec<u32> = (0..cpp)
        .map(|u| die_of(&d, d.ftl.l2p[u as usize]))
        .collect();
    dies.sort();
    dies.dedup();
    // Striped, these units would share one die.
    assert_eq!(dies.len() as u32, cpp, "{dies:?}");
}

#[test]
fn placement_moves_the_timing_and_barely_the_write_amplification() {
    let mut r = Vec::new();
    for alloc in ["least-busy", "striped"] {
        let mut d = drive(alloc);
        let cap = d.cfg.user_bytes();
        go(&mut d, false, 32, cap, 1);
        go(&mut d, true, 32, 2 * cap, 2);
        let m = go(&mut d, true, 32, cap, 3);
        r.push((d.ftl.c.gc_chunks as f64, m.end_ns - m.start_ns));
    }
    let ((g0, t0), (g1, t1)) = (r[0], r[1]);
    // A unit's die does not change its block, only its place in it, and so the order GC
    // copies a victim's units in: which units share a GC block then differs a little.
    assert!(
        g0 > 0.0 && (g1 / g0 - 1.0).abs() < 0.01,
        "{g0} vs {g1} chunks copied"
    );
    assert_ne!(
        t0, t1,
        "the dies' queues differ, so must the time the writes take"
    );
}
