//! Impossible values are refused naming the parameter, before a drive is built: a time of
//! 1e300 µs, a rate of 1e-300 MB/s or a buffer of 1e300 KiB was accepted, and the run then
//! aborted the process allocating hundreds of GB (overhead_us, buffer_kib, the HDD's
//! overhead_us and cache_mib), never ended (link_mbps) or wrapped the clock and printed the
//! default drive's figures (channel_mbps, t_prog_us).

use _sim::config::resolve;

const SSD: &str = "enterprise-sas";
const HDD: &str = "sata-7200-hdd";

/// (preset, parameter, value, what the refusal says)
const REFUSED: &[(&str, &str, &str, &str)] = &[
    (
        SSD,
        "overhead_us",
        "1e300",
        "overhead_us=1e300 must be at most 3600000000 (an hour)",
    ),
    (SSD, "t_prog_us", "1e300", "t_prog_us=1e300 must be at most"),
    (
        SSD,
        "gc_pass_ms",
        "1e300",
        "gc_pass_ms=1e300 must be at most 3600000 (an hour)",
    ),
    (
        SSD,
        "idle_ms",
        "3600001",
        "idle_ms=3600001 must be at most 3600000",
    ),
    (
        SSD,
        "channel_mbps",
        "1e-300",
        "channel_mbps=1e-300 must be at least 1 MB/s",
    ),
    (
        SSD,
        "link_mbps",
        "1e-300",
        "link_mbps=1e-300 must be at least 1 MB/s",
    ),
    (
        SSD,
        "buffer_kib",
        "1e300",
        "buffer_kib=1e300 must be at most 1048576 (1 GiB)",
    ),
    (
        SSD,
        "t_read_us",
        "1e-9",
        "t_read_us=1e-9 must be at least 0.001 (a nanosecond)",
    ),
    (
        HDD,
        "overhead_us",
        "1e300",
        "overhead_us=1e300 must be at most 3600000000 (an hour)",
    ),
    (
        HDD,
        "cache_mib",
        "1e300",
        "cache_mib=1e300 must be at most 4096 (4 GiB)",
    ),
    (HDD, "rpm", "1e-300", "rpm=1e-300 must be at least"),
    (
        HDD,
        "inner_mbps",
        "1e-300",
        "inner_mbps=1e-300 must be at least 1 MB/s",
    ),
    (
        HDD,
        "track_seek_ms",
        "1e300",
        "track_seek_ms=1e300 must be at most 3600000 (an hour)",
    ),
    // a share past its bound says it is a percentage (it said "at most 90" alone, in a wording
    // of its own beside the sizes')
    (
        SSD,
        "gc_start_pct",
        "150",
        "gc_start_pct=150 must be at most 100 (a percentage)",
    ),
    (
        SSD,
        "time_spread_pct",
        "95",
        "time_spread_pct=95 must be at most 90 (a percentage)",
    ),
    (
        HDD,
        "age_weight_pct",
        "101",
        "age_weight_pct=101 must be at most 100 (a percentage)",
    ),
    (
        SSD,
        "controller_cores",
        "65",
        "controller_cores=65 must be at most 64",
    ),
];

#[test]
fn impossible_times_rates_and_buffers_are_refused_naming_the_parameter() {
    for &(preset, k, v, says) in REFUSED {
        match resolve(preset, &[(k.to_string(), v.to_string())]) {
            Ok(_) => panic!("{preset} {k}={v} was accepted"),
            Err(e) => assert!(e.contains(says), "{preset} {k}={v}: {e}"),
        }
    }
}

#[test]
fn the_largest_values_taken_still_build_a_drive() {
    for (k, v) in [
        ("idle_ms", "3600000"),
        ("buffer_kib", "1048576"),
        ("channel_mbps", "1"),
        ("t_read_us", "0.001"),
        ("time_spread_pct", "90"),
        ("controller_cores", "64"),
    ] {
        let kv = [
            ("user_gb".to_string(), "0.25".to_string()),
            (k.to_string(), v.to_string()),
        ];
        assert!(resolve(SSD, &kv).is_ok(), "{k}={v}");
    }
    let kv = [("cache_mib".to_string(), "4096".to_string())];
    assert!(resolve(HDD, &kv).is_ok());
}

/// The smallest size offered for a copy too small is one the preset takes, a disk's too (it
/// had none: only an SSD's user_gb was searched), in two significant digits: rounding to the
/// millionth of a GB made the disk's 4.1e-6 GB (one 4 KiB block, rounded up) 4e-6, below it.
#[test]
fn the_smallest_size_offered_is_taken_for_a_disk_and_an_ssd() {
    use _sim::config::smallest_size_gb;
    for (preset, size, given) in [(HDD, "capacity_gb", "3e-6"), (SSD, "user_gb", "1e-9")] {
        let kv = [(size.to_string(), given.to_string())];
        assert!(resolve(preset, &kv).is_err(), "{preset} {size}={given}");
        let gb = smallest_size_gb(preset, &kv).expect("a size that works");
        let kv = [(size.to_string(), format!("{gb}"))];
        assert!(resolve(preset, &kv).is_ok(), "{preset} {size}={gb}");
        assert_eq!(
            format!("{gb:.1e}").parse::<f64>().unwrap(),
            gb,
            "{gb}: two digits"
        );
    }
    assert_eq!(
        smallest_size_gb(HDD, &[("capacity_gb".into(), "3e-6".into())]),
        Some(4.1e-6)
    );
}
