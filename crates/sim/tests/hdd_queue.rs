//! What a queue of commands the HDD has not yet served does to a timed cell's figures: the
//! in-flight IOs it drains after its nominal time go into the seconds they complete in, and
//! command aging bounds how long one queued command waits.

use _sim::config::resolve;
use _sim::driver::{RunSpec, NS};
use _sim::{result_json, Drive};
use serde_json::Value;

/// sata-7200-hdd at the size `--quick` runs it (0.54 GB), with extra parameters.
fn quick_hdd(extra: &[(&str, &str)], write_cache: bool) -> Drive {
    let mut kv = vec![("capacity_gb".to_string(), "0.536870912".to_string())];
    kv.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let mut d = Drive::new(resolve("sata-7200-hdd", &kv).unwrap());
    d.set_write_cache(write_cache);
    d
}

fn cell(d: &mut Drive, rnd: bool, write: bool, bs: u64, oio: u32, secs: f64) -> Value {
    let spec = RunSpec {
        seed: 7,
        duration_ns: Some((secs * NS as f64) as u64),
        ..RunSpec::single(rnd, write, bs, oio)
    };
    let before = d.snapshot();
    let r = d.run(&spec, &mut |_, _| true).unwrap();
    result_json(d, &r, &before)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

fn max_latency_s(j: &Value) -> f64 {
    ["read", "write"]
        .iter()
        .filter_map(|o| j[o]["lat_max_us"].as_f64())
        .fold(0.0, f64::max)
        / 1e6
}

/// A 1 s cell of random 1 MiB reads at 128 outstanding (four times what the drive queues)
/// drains its queue for another 1.4 s. Folded into its one nominal second, the whole cell
/// was one row at 226.5 MB/s, from a medium that reads at most 190; split by virtual time,
/// each row is one second (the last one the partial rest, rates over its own length), no
/// row is faster than the medium, and the rows add up to the cell's IOs and bytes.
#[test]
fn a_cell_that_runs_past_its_time_is_split_by_virtual_second() {
    let mut d = quick_hdd(&[], true);
    let j = cell(&mut d, true, false, 1 << 20, 128, 1.0);
    let rt = f(&j["runtime_s"]);
    assert!(rt > 2.0, "the drain lasts beyond a second: runtime {rt}");
    let rows = j["series"].as_array().unwrap();
    assert_eq!(rows.len(), rt.ceil() as usize, "one row per started second");
    let (mut ios, mut bytes, mut t0) = (0.0, 0.0, 0.0);
    for (i, r) in rows.iter().enumerate() {
        let (t, span) = (f(&r[0]), f(&r[6]));
        assert!((t - t0 - span).abs() < 1e-9, "row {i}: spans ({t0}, {t}]");
        let last = i + 1 == rows.len();
        assert!(
            if last { span <= 1.0 } else { span == 1.0 },
            "row {i}: span {span}"
        );
        assert!(f(&r[3]) <= 190.0, "row {i}: {} MB/s", f(&r[3]));
        ios += (f(&r[1]) + f(&r[2])) * span;
        bytes += f(&r[3]) * 1e6 * span;
        t0 = t;
    }
    assert!((t0 - rt).abs() < 1e-9, "the last row ends with the run");
    let total = f(&j["read"]["ios"]) + f(&j["write"]["ios"]);
    let total_bytes = f(&j["read"]["bytes"]) + f(&j["write"]["bytes"]);
    assert!((ios - total).abs() < 1e-6, "rows {ios} IOs, cell {total}");
    assert!(
        (bytes - total_bytes).abs() < 1.0,
        "rows {bytes} B, cell {total_bytes}"
    );
}

/// Without write caching, shortest positioning time first passes over the first command of a
/// queued sequential stream for as long as later ones keep coming (each is reached sooner
/// than going back for it): it completed last, its latency the cell's whole runtime, 4.5 s
/// in a 4 s cell. Aging bounds its wait whatever the cell's length.
#[test]
fn command_aging_bounds_a_queued_commands_wait() {
    for bs in [128 << 10, 1 << 20] {
        let mut plain = quick_hdd(&[("age_weight_pct", "0")], false);
        let j = cell(&mut plain, false, true, bs, 32, 4.0);
        let (rt, max) = (f(&j["runtime_s"]), max_latency_s(&j));
        assert!(
            (max - rt).abs() < 1e-6,
            "{bs} B without aging: max {max} s, runtime {rt} s"
        );
        let mut aged = quick_hdd(&[], false);
        let j = cell(&mut aged, false, true, bs, 32, 4.0);
        let (rt, max) = (f(&j["runtime_s"]), max_latency_s(&j));
        assert!(max < 1.5, "{bs} B: a write waited {max} s of {rt} s");
    }
    // Aging costs the random queue little: its IOPS stay within 5 % of pure SPTF.
    let iops = |j: &Value| f(&j["read"]["iops"]);
    let mut plain = quick_hdd(&[("age_weight_pct", "0")], false);
    let mut aged = quick_hdd(&[], false);
    let (p, a) = (
        cell(&mut plain, true, false, 4096, 32, 4.0),
        cell(&mut aged, true, false, 4096, 32, 4.0),
    );
    assert!(
        iops(&a) > 0.95 * iops(&p) && max_latency_s(&a) < max_latency_s(&p),
        "random 4K QD32: {:.0} IOPS, max {:.3} s aged; {:.0}, {:.3} s without",
        iops(&a),
        max_latency_s(&a),
        iops(&p),
        max_latency_s(&p)
    );
}
