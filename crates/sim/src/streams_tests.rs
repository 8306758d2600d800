use super::*;

fn rule(lookback: usize, gap_bytes: u64) -> Rule {
    Rule {
        step_ns: 1000,
        lookback,
        gap_bytes,
        has_latency: true,
        max_steps: 1 << 40,
    }
}

fn chunk<'a>(
    t: &'a [i64],
    w: &'a [u8],
    off: &'a [i64],
    size: &'a [i64],
    lat: &'a [f64],
) -> Chunk<'a> {
    Chunk {
        time_ns: t,
        write: w,
        offset: off,
        size,
        lat,
        dev: None,
    }
}

fn flags_of(w: &mut Walk, c: &Chunk) -> Vec<bool> {
    let mut f = Vec::new();
    w.seq_flags(c, &mut f);
    f
}

#[test]
fn seq_rule_looks_back_per_direction_across_chunks() {
    let mut w = Walk::new(rule(2, 0)).unwrap();
    // read 0+10, write 100+10, read 10 (SEQ), write 500, write 110 (SEQ: 2 writes back)
    let (t, wr) = ([0, 1, 2, 3, 4], [0, 1, 0, 1, 1]);
    let flags = flags_of(
        &mut w,
        &chunk(&t, &wr, &[0, 100, 10, 500, 110], &[10; 5], &[-1.0; 5]),
    );
    assert_eq!(flags, [false, false, true, false, true]);
    // next chunk: write 120 follows 110+10; write 510 is 3 writes back: out of a lookback of 2
    let flags = flags_of(
        &mut w,
        &chunk(&[5, 6], &[1, 1], &[120, 510], &[10; 2], &[-1.0; 2]),
    );
    assert_eq!(flags, [true, false]);
}

#[test]
fn gap_allows_a_small_skip_forward_only() {
    let mut w = Walk::new(rule(4, 5)).unwrap();
    let flags = flags_of(
        &mut w,
        &chunk(
            &[0, 1, 2, 3],
            &[0; 4],
            &[0, 15, 20, 100],
            &[10; 4],
            &[-1.0; 4],
        ),
    );
    // 15 is 5 past 10; 20 is 5 past 15? no: 15+10 = 25 > 20, but 20 is 10 past 10: too far
    assert_eq!(flags, [false, true, false, false]);
}

#[test]
fn inflight_count_and_time_per_step() {
    let mut w = Walk::new(rule(64, 0)).unwrap();
    // IOs at 0 (lat 1.5 us = 1500 ns: into step 1), 100 (lat 0: done at its issue),
    // 100 (100 ns), 2500 (no latency), 3100 (2 us = 2000 ns, spans step 4 whole).
    let t = [0, 100, 100, 2500, 3100];
    let lat = [1.5, 0.0, 0.1, -1.0, 2.0];
    w.outstanding(&t, &lat);
    assert_eq!(w.missing_latency, 1);
    assert_eq!(w.last_completion_ns(), Some(5100));
    let (inflight, oio) = w.finish(6).unwrap();
    // step 0: 1000 + 0 + 100; step 1: 500; step 3: 900; step 4: 1000; step 5: 100
    assert_eq!(inflight, [1100.0, 500.0, 0.0, 900.0, 1000.0, 100.0]);
    // at 100 the zero-latency IO is done as it is issued: 0's IO and 100's second are in flight
    assert_eq!(oio, [2, 1, 0, 1, 1, 1]);
}

#[test]
fn tabulation_groups_per_step_in_order() {
    let mut w = Walk::new(rule(64, 0)).unwrap();
    let t = [0, 10, 20, 1500];
    let c = chunk(
        &t,
        &[1, 0, 1, 0],
        &[0, 0, 4096, 512],
        &[4096, 512, 4096, 512],
        &[1.0, -1.0, 3.0, 2.0],
    );
    let Tab::Rows(rows) = w.add(&c).unwrap() else {
        panic!("dense")
    };
    let keys: Vec<_> = rows
        .iter()
        .map(|r| (r.step, r.seq, r.write, r.size, r.ios, r.lat_n))
        .collect();
    assert_eq!(
        keys,
        [
            (0, false, false, 512, 1, 0),
            (0, false, true, 4096, 1, 1),
            (0, true, true, 4096, 1, 1),
            (1, true, false, 512, 1, 1)
        ]
    );
    assert_eq!(rows[0].lat_max, -1.0);
    assert_eq!(rows[3].lat_sum, 2.0);
}

#[test]
fn a_spread_chunk_hands_back_its_flags() {
    let mut w = Walk::new(Rule {
        step_ns: 1,
        lookback: 1,
        gap_bytes: 0,
        has_latency: false,
        max_steps: 1 << 40,
    })
    .unwrap();
    let t = [0, 10_000_000];
    let Tab::Flags(f) = w
        .add(&chunk(&t, &[0; 2], &[0, 1], &[1, 1], &[-1.0; 2]))
        .unwrap()
    else {
        panic!("too many slots for a dense table")
    };
    assert_eq!(f, [false, true]);
}

#[test]
fn bad_chunks_are_refused() {
    let mut w = Walk::new(rule(1, 0)).unwrap();
    assert!(w
        .add(&chunk(&[0, 1], &[0], &[0, 1], &[1, 1], &[0.0, 0.0]))
        .is_err());
    assert!(w.add(&chunk(&[0], &[0], &[0], &[0], &[0.0])).is_err());
    assert!(Walk::new(Rule {
        step_ns: 0,
        lookback: 1,
        gap_bytes: 0,
        has_latency: false,
        max_steps: 1,
    })
    .is_err());
    assert!(Walk::new(Rule {
        max_steps: 0,
        ..rule(1, 0)
    })
    .is_err());
}

/// A chunk fed in runs gives the rows of the chunk fed whole, and a chunk spread too wide
/// for the dense table is found so however it is cut.
#[test]
fn a_chunk_fed_in_runs_gives_the_same_rows() {
    let n = 40;
    let t: Vec<i64> = (0..n).map(|i| i * 170_000).collect();
    let w: Vec<u8> = (0..n).map(|i| (i % 3 == 0) as u8).collect();
    let off: Vec<i64> = (0..n).map(|i| (i % 5) * 4096).collect();
    let size: Vec<i64> = (0..n).map(|i| [512, 4096, 8192][i as usize % 3]).collect();
    let lat: Vec<f64> = (0..n).map(|i| i as f64 * 0.37 - 2.0).collect();
    let whole = |step_ns| {
        let mut wk = Walk::new(Rule {
            step_ns,
            ..rule(4, 0)
        })
        .unwrap();
        wk.add(&chunk(&t, &w, &off, &size, &lat)).unwrap()
    };
    let cases = [
        (1_000_000, vec![0, 7, 13, 40]),
        (1_000_000, vec![0, 1, 39, 40]),
        (1, vec![0, 20, 40]),
    ];
    for (step_ns, cuts) in cases {
        let mut wk = Walk::new(Rule {
            step_ns,
            ..rule(4, 0)
        })
        .unwrap();
        for k in cuts.windows(2) {
            let r = k[0]..k[1];
            wk.feed(&chunk(
                &t[r.clone()],
                &w[r.clone()],
                &off[r.clone()],
                &size[r.clone()],
                &lat[r],
            ))
            .unwrap();
        }
        match (wk.end_chunk(), whole(step_ns)) {
            (Tab::Rows(a), Tab::Rows(b)) => assert_eq!(a, b),
            (Tab::Flags(a), Tab::Flags(b)) => assert_eq!(a, b),
            _ => panic!("dense in one and not the other (step {step_ns})"),
        }
        assert_eq!(wk.ios, n);
    }
}

/// An issue or a completion past the step limit is an error before anything is allocated
/// for it: 2 IOs 30 days apart in 1 ms steps asked for 41 GB and aborted the process.
#[test]
fn steps_past_the_limit_are_refused_not_allocated() {
    let day = 86_400_000_000_000i64;
    let rule = Rule {
        step_ns: 1_000_000,
        max_steps: 100_000,
        ..rule(1, 0)
    };
    let mut w = Walk::new(rule).unwrap();
    let e = w
        .add(&chunk(
            &[0, 30 * day],
            &[0; 2],
            &[0, 4096],
            &[4096; 2],
            &[10.0; 2],
        ))
        .err()
        .expect("refused");
    assert!(e.contains("100000 steps"), "{e}");
    assert!(w.finish(100_001).is_err());
    // a completion far past the last issue (a latency of a year) counts too
    let mut w = Walk::new(rule).unwrap();
    assert!(w.add(&chunk(&[0], &[0], &[0], &[4096], &[3.2e13])).is_err());
    assert!(w
        .add(&chunk(&[0], &[0], &[0], &[4096], &[f64::INFINITY]))
        .is_err());
    // within the limit, the last step included
    let mut w = Walk::new(rule).unwrap();
    let last = 100_000 * 1_000_000 - 1;
    assert!(w
        .add(&chunk(
            &[0, last],
            &[0; 2],
            &[0, 4096],
            &[4096; 2],
            &[-1.0; 2]
        ))
        .is_ok());
    assert!(w.finish(100_000).is_ok());
}

#[test]
fn a_run_without_response_times_has_no_last_completion() {
    let mut w = Walk::new(rule(64, 0)).unwrap();
    w.outstanding(&[0, 10, 20], &[-1.0, f64::NAN, -1.0]);
    assert_eq!(w.missing_latency, 3);
    assert_eq!(w.last_completion_ns(), None);
    w.outstanding(&[30], &[0.5]);
    assert_eq!(w.last_completion_ns(), Some(530));
}

#[test]
fn a_slice_of_long_in_flight_ios_sums_past_i64() {
    // 10,000 IOs each 10^15 ns in flight, in one step of 2^50 ns: 10^19 ns, past i64's 9.2e18
    let mut w = Walk::new(Rule {
        step_ns: 1 << 50,
        ..rule(64, 0)
    })
    .unwrap();
    let t: Vec<i64> = (0..10_000).collect();
    w.outstanding(&t, &vec![1e12; t.len()]);
    let (inflight, _) = w.finish(1).unwrap();
    assert_eq!(inflight[0], 1e19);
}
