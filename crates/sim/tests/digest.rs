//! Pinned results: fixed seeds on small drives give these figures to the last digit. A
//! change meant only to make the simulator faster must leave them as they are; a change
//! meant to change results updates them (and says why in its commit).

use _sim::config::resolve_ssd;
use _sim::digest::digest;
use _sim::driver::{run, RunSpec, StreamSpec};
use _sim::ssd::Ssd;

/// 1.07 GB of flash in 256 blocks, small enough for a test.
const SMALL: &[(&str, &str)] = &[("blocks_per_plane", "256"), ("pages_per_block", "8")];
/// The mechanisms the oldest model lacked turned off (as bench/sim_regress.py runs it).
const PLAIN: &[(&str, &str)] = &[
    ("gc", "greedy"),
    ("gc_reserve", "10"),
    ("buffer_kib", "0"),
    ("bg_gc", "off"),
    ("write_core_us", "0"),
    ("core_by_lba_pct", "0"),
    ("gc_start_pct", "0"),
    ("gc_slice", "1"),
    ("gc_choices", "0"),
    ("gc_copy_us", "0"),
    ("gc_switch_us", "0"),
    ("time_spread_pct", "0"),
    ("read_retry_pct", "0"),
    ("bg_period_ms", "0"),
    ("gc_pass_period_ms", "0"),
    ("gc_pace_victims", "0"),
];

/// Fill, then random 4 KiB writes of 1.5 drives and random reads of half a drive at QD32:
/// per random phase its WAF so far, IOPS and digest.
fn phases(preset: &str, op: &str, params: &[&[(&str, &str)]], entropy: f64) -> Vec<String> {
    let mut kv: Vec<(String, String)> = vec![("op".into(), op.into())];
    for p in params {
        kv.extend(p.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    }
    let mut d = Ssd::new(resolve_ssd(preset, &kv).unwrap());
    let cap = d.cfg.user_bytes();
    let spec = |write, bs, rnd, bytes, seed| RunSpec {
        bytes_budget: Some(bytes),
        seed,
        entropy,
        ..RunSpec::single(rnd, write, bs, 32)
    };
    run(
        &mut d,
        &spec(true, 128 << 10, false, cap, 1),
        &mut |_, _| true,
    )
    .unwrap();
    let mut out = vec![];
    for (write, bytes, seed) in [(true, cap * 3 / 2, 3), (false, cap / 2, 4)] {
        let r = run(
            &mut d,
            &spec(write, 4096, true, bytes / 4096 * 4096, seed),
            &mut |_, _| true,
        )
        .unwrap();
        let c = d.counters().0;
        let waf = (c.host_chunks + c.gc_chunks + c.evict_chunks) as f64 / c.host_chunks as f64;
        out.push(format!(
            "waf {waf:.6} iops {:.3} digest {:016x}",
            r.iops(),
            digest(&r, &c)
        ));
    }
    out
}

// The plain drive has no write buffer: it is write-through, and each write completes when
// its page is programmed, not after its share of the program (re-pinned with that change,
// fixleft9). At QD32 a write then holds its slot for a whole program: 4 KiB random writes
// at ρ 0.28 fell from 29,050.6 to 21,524.0 IOPS (−25.9 %); at ρ 0.07, where GC sets the
// rate, from 4,254.5 to 4,246.8 (−0.18 %). Completion times decide which die is least busy
// when a unit is placed (die_alloc least-busy), so the WAF moved in its fifth digit (+0.01 %,
// −0.03 %) and the reads after, on the drive so written, by 0.003 % and 0.
#[test]
fn plain_drive_at_low_op_gives_its_pinned_results() {
    let got = phases("enterprise-sas", "0.07", &[SMALL, PLAIN], 1.0);
    assert_eq!(
        got,
        [
            "waf 11.096876 iops 4246.838 digest 464ab1cde5d5f453",
            "waf 11.096876 iops 99989.966 digest ed4075e82cf83a43"
        ]
    );
}

#[test]
fn plain_drive_at_default_op_gives_its_pinned_results() {
    let got = phases("enterprise-sas", "0.28", &[SMALL, PLAIN], 1.0);
    assert_eq!(
        got,
        [
            "waf 1.991674 iops 21524.043 digest 8f8a3536cbbecdb4",
            "waf 1.991674 iops 99990.926 digest c604933f721660de"
        ]
    );
}

#[test]
fn enterprise_drive_with_every_mechanism_gives_its_pinned_results() {
    let got = phases("enterprise-sas", "0.28", &[SMALL], 1.0);
    assert_eq!(
        got,
        [
            "waf 2.050562 iops 27578.800 digest 82ab0beca4f56b92",
            "waf 2.050562 iops 88325.065 digest 233131a827438dd6"
        ]
    );
}

#[test]
fn compressing_drive_gives_its_pinned_results() {
    let got = phases("entry-sata-compress", "0.28", &[SMALL], 0.5);
    assert_eq!(
        got,
        [
            "waf 2.290508 iops 11047.201 digest 21e93003eaf55bb1",
            "waf 2.290508 iops 47547.552 digest 7657f6d509caf88f"
        ]
    );
}

#[test]
fn drive_with_an_slc_cache_gives_its_pinned_results() {
    let got = phases(
        "client-nvme-slc",
        "0.28",
        &[SMALL, &[("slc_gb", "0.1")]],
        1.0,
    );
    assert_eq!(
        got,
        [
            "waf 2.185211 iops 70955.059 digest 0fbc08299e0e1219",
            "waf 2.185211 iops 297202.397 digest 97bc994089cd7b99"
        ]
    );
}

/// Fill, then at 4 x QD32 with the write cache off: random 1 MiB writes of a drive, a random
/// 64 KiB read/write mix (65/35) of half a drive, random 512 B writes (a read-modify-write
/// each) of 1/64 of it: per phase IOPS and digest. Commands of many units, the write buffer
/// and the order of mixed completions, which the 4 KiB phases above do not reach.
fn mixed_sizes(preset: &str, params: &[(&str, &str)]) -> Vec<String> {
    let mut kv: Vec<(String, String)> = vec![("op".into(), "0.28".into())];
    for p in [SMALL, params] {
        kv.extend(p.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    }
    let mut d = Ssd::new(resolve_ssd(preset, &kv).unwrap());
    d.write_cache = false;
    let cap = d.cfg.user_bytes();
    let stream = |rnd, write, bs, share| StreamSpec {
        rnd,
        write,
        bs,
        share,
    };
    let phases = [
        (vec![stream(false, true, 128 << 10, 1.0)], cap, 1),
        (vec![stream(true, true, 1 << 20, 1.0)], cap, 2),
        (
            vec![
                stream(true, false, 64 << 10, 0.65),
                stream(true, true, 64 << 10, 0.35),
            ],
            cap / 2,
            3,
        ),
        (vec![stream(true, true, 512, 1.0)], cap / 64, 4),
    ];
    let mut out = vec![];
    for (streams, bytes, seed) in phases {
        let spec = RunSpec {
            streams,
            bytes_budget: Some(bytes / 4096 * 4096),
            seed,
            ..RunSpec::single(true, true, 4096, 128)
        };
        let r = run(&mut d, &spec, &mut |_, _| true).unwrap();
        out.push(format!(
            "iops {:.3} digest {:016x}",
            r.iops(),
            digest(&r, &d.counters().0)
        ));
    }
    out
}

// Pinned with enterprise-sas's GC pass (simbeh); the simulator's speed-ups (simspeed) were
// checked to give these same values on the build before them (f3a93dd), and again with the
// pacing mechanism added but off (sasgc). Re-pinned with paced GC shipped (gc_pace_victims
// 32, gc_pass_pct 30; sasgc2), the paced ratio kept within what the free blocks hold: with
// gc_pace_victims=0 and gc_pass_pct=52 the earlier pins come back to the digit. Against the
// unbounded pacing's pins the bound moves the 4 KiB phase by 0.04 % and the phases after
// the sequential fill by 0.6-2.2 % (where the unbounded average cost of 0 had held GC back).
#[test]
fn mixed_sizes_with_every_mechanism_give_their_pinned_results() {
    assert_eq!(
        mixed_sizes("enterprise-sas", &[]),
        [
            "iops 3481.932 digest ed93d22d1d16513a",
            "iops 175.036 digest 0c9b25658cca5d0d",
            "iops 5268.424 digest 233faafa25f5db0b",
            "iops 10616.368 digest ba6a76022e7f532f"
        ]
    );
}

#[test]
fn mixed_sizes_without_power_loss_protection_give_their_pinned_results() {
    assert_eq!(
        mixed_sizes("enterprise-sas", &[("plp", "off")]),
        [
            "iops 3472.776 digest d83a33dc0fcfb8c9",
            "iops 173.533 digest 826fa6d1a347aadc",
            "iops 5192.581 digest 4caca587f32f28a6",
            "iops 10555.213 digest 2d149f574ed197d7"
        ]
    );
}
