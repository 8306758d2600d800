//! A drive without a write buffer (`buffer_kib=0`) is write-through: a write completes when
//! the data it carries is programmed, a whole page program after its die starts on it, with
//! the write cache on or off. It once completed after its share of the page's program (a
//! quarter of it for a 4 KiB write into a 16 KiB page), so a bufferless drive's QD1 writes
//! (355 µs on `enterprise-sas`) beat the same drive's with its cache off (1,216 µs) where
//! one program takes 1,150 µs.

use _sim::config::{resolve_ssd, DEFAULT_PRESET};
use _sim::driver::{run, RunSpec, NS};
use _sim::ssd::Ssd;

/// A 400 MiB copy of the default drive with `extra`, its write cache as given.
fn drive(extra: &[(&str, &str)], write_cache: bool) -> Ssd {
    let mut p = vec![("blocks_per_plane", "64"), ("op", "0.28")];
    p.extend_from_slice(extra);
    let kv: Vec<(String, String)> = p
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut s = Ssd::new(resolve_ssd(DEFAULT_PRESET, &kv).unwrap());
    s.write_cache = write_cache;
    s
}

/// Mean and least latency of half a second of QD1 random writes of `bs` bytes, in µs.
fn qd1_write_us(s: &mut Ssd, bs: u64) -> (f64, f64) {
    let spec = RunSpec {
        duration_ns: Some(NS / 2),
        seed: 7,
        ..RunSpec::single(true, true, bs, 1)
    };
    let r = run(s, &spec, &mut |_, _| true).unwrap();
    let h = &r.write.hist;
    (
        h.sum_ns as f64 / r.write.ios as f64 / 1000.0,
        h.min_ns as f64 / 1000.0,
    )
}

#[test]
fn a_bufferless_write_completes_once_its_page_is_programmed() {
    for wce in [false, true] {
        for bs in [512, 4096, 8192] {
            let mut s = drive(&[("buffer_kib", "0")], wce);
            let t_prog = s.cfg.t_prog_ns as f64 / 1000.0;
            let floor = t_prog * (1.0 - s.cfg.spread);
            let (mean, least) = qd1_write_us(&mut s, bs);
            assert!(
                mean > t_prog && least > floor,
                "WCE {wce}, {bs} B: mean {mean:.1} µs, least {least:.1} µs; program {t_prog} µs \
                 (at least {floor:.1} µs with the NAND spread)"
            );
        }
    }
}

/// No buffer costs a QD1 write what a buffer that may not acknowledge costs it (cache off,
/// no power-loss protection): the same program, waited for the same way.
#[test]
fn a_bufferless_drive_writes_at_qd1_as_the_drive_with_its_cache_off() {
    let (through, _) = qd1_write_us(&mut drive(&[("buffer_kib", "0")], true), 4096);
    let (wcd, _) = qd1_write_us(&mut drive(&[("plp", "off")], false), 4096);
    assert!(
        (through / wcd - 1.0).abs() < 0.05,
        "bufferless {through:.1} µs, cache off {wcd:.1} µs"
    );
}
