"""Calibration: each SSD preset against the published figures it is calibrated to
(docs/simulator.md, "Calibration targets"), and the shape of the HDD presets' latency with
the write cache enabled. Tolerances: ±15 % on rates, ±25 % on latency percentiles, unless a
figure is a bound.

These run the Rust driver directly on a scaled-down copy of each drive (`user_gb` small,
the preset's over-provisioning kept, see config/resolve.rs `scaled_overrides`), because the
behaviours calibrated here (queue-depth curves, steady state after the cliff, latency
distributions, entropy response) depend on the geometry's ratios, not on the size; a
full-size compliant run takes minutes per test.
"""

from __future__ import annotations

import json
import statistics

import pytest

from iolab import _sim
from iolab.figures.consistency import Dips, find_dips

RATE_TOL, LAT_TOL = 0.15, 0.25
KiB = 1024


def drive(preset: str, gb: float, **params: str) -> _sim.Drive:
    return _sim.Drive(preset, [("user_gb", str(gb)), *params.items()])


def run(
    d: _sim.Drive,
    streams,
    qd: int,
    *,
    seconds: float | None = None,
    budget: int | None = None,
    entropy: float = 1.0,
    seed: int = 7,
) -> dict:
    return json.loads(
        d.run(streams=streams, queue_depth=qd, duration_s=seconds, bytes_budget=budget, entropy=entropy, seed=seed)
    )


RR, RW = [("rnd", "read", 4096, 1.0)], [("rnd", "write", 4096, 1.0)]
MIX = [("rnd", "read", 4096, 0.7), ("rnd", "write", 4096, 0.3)]


def preconditioned(preset: str, gb: float, drive_writes: float = 3.0, entropy: float = 1.0, **params) -> _sim.Drive:
    """Sequential fill, then `drive_writes` capacities of 4K random writes (to steady state)."""
    d = drive(preset, gb, **params)
    run(d, [("seq", "write", 128 * KiB, 1.0)], 32, budget=d.capacity)
    run(d, RW, 32, budget=int(drive_writes * d.capacity), entropy=entropy, seed=3)
    return d


def percentile(op: dict, pct: float) -> float:
    """Latency (µs) below which `pct` % of the IOs completed, from the raw histogram."""
    total = sum(c for _, c in op["histogram_us"])
    need, seen = total * pct / 100.0, 0
    for v, c in op["histogram_us"]:
        seen += c
        if seen >= need:
            return float(v)
    raise AssertionError("empty histogram")


def near(got: float, want: float, tol: float = RATE_TOL) -> bool:
    return abs(got / want - 1.0) <= tol


# -- enterprise-sas: 400 GB SAS SSD reviewed with PTS and an OakGate bench ---------------------


@pytest.fixture(scope="module")
def sas() -> _sim.Drive:
    return preconditioned("enterprise-sas", 4)


def test_enterprise_random_read_peaks_at_100k_by_qd64_and_does_not_scale_beyond(sas):
    reads = {qd: run(sas, RR, qd, seconds=1.0)["read"] for qd in (1, 8, 32, 64, 128, 256)}
    iops = {qd: r["iops"] for qd, r in reads.items()}
    assert near(iops[64], 100_000), iops
    # Saturated at 64: the controller takes 64 commands at once (queue_slots), so deeper
    # queues add none (before: +3 % at 128, +4 % at 256, still rising).
    assert all(abs(iops[qd] / iops[64] - 1) <= 0.01 for qd in (128, 256)), iops
    # The commands beyond 64 wait at the port for a slot, 192 / IOPS at QD256: the whole
    # latency distribution moves up by that wait, not only its mean.
    wait = 192 / iops[64] * 1e6
    for p in (10, 50, 90):
        assert near(percentile(reads[256], p) - percentile(reads[64], p), wait), (p, wait)
    # The best queue depth is 64: QD32 is still clearly below the peak.
    assert iops[32] < 0.95 * iops[64], iops
    assert iops[1] < iops[8] < iops[64], "reads scale with queue depth up to the controller's limit"


def test_enterprise_steady_random_write_near_42500_at_qd32_and_depends_on_qd(sas):
    # A seed per run: a replayed random sequence rewrites the host blocks in the order they
    # were filled, which an FTL with a separate GC frontier frees by erases alone (WAF ~1).
    iops = {qd: run(sas, RW, qd, seconds=3.0, seed=10 + qd)["write"]["iops"] for qd in (1, 2, 32)}
    assert near(iops[32], 42_500), iops
    assert iops[1] < 0.6 * iops[32] and iops[1] < iops[2], f"write IOPS must depend on QD: {iops}"


def test_enterprise_sequential_near_500_mbps(sas):
    mbps = run(sas, [("seq", "read", 128 * KiB, 1.0)], 32, seconds=1.0)["read"]["mbps"]
    assert near(mbps, 500), mbps


def test_enterprise_qd1_latency_has_a_shape_and_meets_the_review_percentiles():
    d = drive("enterprise-sas", 4)
    run(d, [("seq", "write", 128 * KiB, 1.0)], 32, budget=d.capacity)
    read = run(d, RR, 1, seconds=10.0)["read"]
    write = run(d, RW, 1, seconds=5.0)["write"]
    assert percentile(read, 99.9) <= 140 * (1 + LAT_TOL), read["lat_mean_us"]
    assert percentile(write, 99.9) <= 120 * (1 + LAT_TOL), write["lat_mean_us"]
    for op in (read, write):
        # A real distribution: a spread around the median and a tail well above the mean.
        assert percentile(op, 99.999) > 1.1 * op["lat_mean_us"], op["lat_mean_us"]
        assert percentile(op, 1) < percentile(op, 99), "latency is spread, not a spike"


def test_enterprise_qd1_reads_spread_over_page_types_and_stay_within_150us():
    """The reviewed drive keeps every QD1 4K read within ~150 us, around a body as wide as
    MLC's lower and upper pages make it (read_page_skew_pct). Before: a narrow body (p1 to
    p99 112-124 us) and read retries up to 323 us."""
    d = drive("enterprise-sas", 4)
    run(d, [("seq", "write", 128 * KiB, 1.0)], 32, budget=d.capacity)
    run(d, RR, 1, seconds=1.0, seed=5)  # the fill's last programs are done by now
    read = run(d, RR, 1, seconds=10.0)["read"]
    mean = read["lat_mean_us"]
    assert read["lat_max_us"] <= 160, read["lat_max_us"]
    assert percentile(read, 99) - percentile(read, 1) >= 0.2 * mean, (percentile(read, 1), percentile(read, 99))
    # Two humps, not one: lower pages fill the first part of the body, upper pages the rest.
    assert percentile(read, 25) < 0.93 * mean < 1.07 * mean < percentile(read, 75), mean


def test_enterprise_steady_qd1_writes_have_rare_outliers_near_430us(sas):
    """After preconditioning, QD1 writes meet GC: a block-table checkpoint holds the
    controller (gc_switch_us), so the write behind it is an outlier while 99.9 % stay fast.
    The reviewed drive shows about one near 430 us per QoS round (51 s measured), not the
    100+ a checkpoint after every victim gave. The copy's victims are shorter (fewer pages
    per block) and it checkpoints after proportionally more of them, so a round of the same
    length holds the same count as at full size."""
    rounds = [run(sas, RW, 1, seconds=51.0, seed=21 + i)["write"] for i in range(3)]
    slow = [[v for v, c in w["histogram_us"] if v > 300 for _ in range(c)] for w in rounds]
    for w in rounds:
        assert percentile(w, 99.9) <= 120 * (1 + LAT_TOL), percentile(w, 99.9)
    # About one per round (main: 280 per round), each near 430 us.
    assert all(len(s) <= 3 for s in slow) and 2 <= sum(map(len, slow)) <= 6, slow
    assert all(near(v, 430, LAT_TOL) for s in slow for v in s), slow


def test_enterprise_wsat_falls_around_interval_45_and_banks_to_a_steady_level():
    gb = 4
    d = drive("enterprise-sas", gb)
    # A PTS minute at full size (400 GB) is 60 s x gb/400 on the copy: the same share of the
    # capacity written at the same rate. 150 of them write about 4 capacities, as PTS WSAT does.
    interval = 60.0 * gb / 400
    curve = [run(d, RW, 32, seconds=interval, seed=100 + i)["write"]["iops"] for i in range(150)]
    fob, steady = sum(curve[:5]) / 5, curve[-10:]
    assert near(sum(steady) / len(steady), 41_000), steady
    assert max(steady) / min(steady) < 1.1, "steady state reached"
    # The fall: the first interval that leaves the fresh-out-of-box plateau.
    fall = next(i + 1 for i, v in enumerate(curve) if v < 0.98 * fob)
    assert near(fall, 45), (fall, curve)
    assert near(fob, 47_000, 0.05), "the fresh rate that fills the flash by the 45th minute"
    # Banks gently: no interval falls by more than a tenth of the one before.
    assert all(b > 0.9 * a for a, b in zip(curve, curve[1:])), curve
    series = [s[2] for s in run(d, RW, 32, seconds=20.0, seed=999)["series"]]
    assert max(series) / min(series) < 1.2, series


def test_enterprise_demand_ramps(sas):
    """Open loop at rising offered rates (QD32 at most outstanding): reads stay under 175 µs
    on average up to 80,000 IOPS and saturate near 80,000; writes knee near 42,500 IOPS,
    latency rising from ~50 µs to ~750 µs (32 outstanding at the steady rate)."""

    def at(streams, op, rate):
        j = json.loads(sas.run(streams=streams, queue_depth=32, rate_iops=rate, duration_s=2.0, seed=rate))
        return j[op]["iops"], j[op]["lat_mean_us"]

    for rate in (20_000, 50_000, 80_000):
        iops, lat = at(RR, "read", rate)
        assert near(iops, rate, 0.02) and lat < 175 * (1 + LAT_TOL), (rate, iops, lat)
    saturated = at(RR, "read", 120_000)
    assert near(saturated[0], 80_000), saturated
    low, high = at(RW, "write", 20_000), at(RW, "write", 80_000)
    assert near(low[1], 50, LAT_TOL), low
    assert near(high[0], 42_500) and near(high[1], 750, LAT_TOL), high


def gc_pass_series(d: _sim.Drive) -> tuple[list[float], Dips, float, list[float]]:
    """600 s of QD32 4K random writes on a steady drive: its whole seconds' IOPS, their dips
    (the report's detector), the depth of the GC pass's windows (mean inside ÷ mean outside,
    by the drive's clock: second i covers t0 + i … t0 + i + 1) and the seconds outside them."""
    out = run(d, RW, 32, seconds=600.0, seed=11)
    s = [x[2] for x in out["series"]][:600]  # whole seconds only
    dips = find_dips([float(i + 1) for i in range(len(s))], s)
    t0 = out["start_s"]
    inside = [v for i, v in enumerate(s) if (t0 + i) % 150 < 34]
    outside = [v for i, v in enumerate(s) if 36 < (t0 + i) % 150 < 149]
    return s, dips, statistics.mean(inside) / statistics.mean(outside), outside


def test_enterprise_steady_per_second_iops_dip_every_150_s_as_steady_as_the_reviewed_drive():
    """The reviewed drive's per-second IOPS in steady state (IO consistency: QD32 4K random
    writes after a fill) dip about every 150 s for 30-40 s, its minimum 83.6 % of its maximum.
    The preset's GC pass (gc_pass_period_ms 150,000, gc_pass_ms 35,000, gc_pass_pct 30) makes
    them: a walk over the blocks that copies beside foreground GC while it lasts, by the
    drive's clock. Between them the drive is as steady as an enterprise drive: foreground GC
    paces its copying by the cost of its last 32 victims (gc_pace_victims), so the victims'
    own spread of valid data (gc_choices 80) no longer moves IOPS from second to second.
    Checked on the series, not its mean: the dips' period and length (the report's detector),
    that they fall in the pass's windows, their depth, the noise from one second to the next
    and min/max near the review's. Without pacing (a pass of 52 %): per-second noise ~0.8 %,
    min/max 0.76, dips 81 % of the median. A 64 GB copy keeps the full drive's 256-page blocks,
    so a second holds as few victims as at full size (a 4 GB copy's shorter blocks average
    their noise down, and its pass is shallower), and two drive writes bring it to steady
    state in seconds. Measured with pacing shipped: dips every 150 s, 34 s long, 4 of them,
    depth 0.886, noise 0.19 %, min/max 0.861, mean 39,600."""
    d = preconditioned("enterprise-sas", 64, drive_writes=2.0)
    s, dips, depth, outside = gc_pass_series(d)
    assert dips.periodic and abs(dips.period_s - 150) <= 5, dips
    assert 30 <= dips.duration_s <= 40 and dips.count >= 3, dips
    assert 0.84 <= depth <= 0.92, depth
    assert min(outside) / max(outside) > 0.95, "outside the passes the drive is consistent"
    # Noise from one second to the next: the robust sigma of successive differences / sqrt 2.
    diffs = [abs(b - a) for a, b in zip(s, s[1:])]
    noise = 1.4826 * statistics.median(diffs) / 2**0.5 / statistics.median(s)
    assert noise < 0.004, noise
    assert 0.816 <= min(s) / max(s) <= 0.876, (min(s) / max(s), "the review: 0.836")
    assert near(statistics.mean(s), 41_000), "the steady level is kept"


def test_the_gc_pass_alone_dips_every_150_s_on_a_4_gb_copy():
    """The GC pass without paced GC (gc_pace_victims 0), deep enough (gc_pass_pct 52) to stand
    clear of the noise each victim's own cost then makes, as enterprise-sas shipped before its
    pacing: dips about every 150 s for 30-40 s. Checked on the series, not its mean: the
    dips' period and length (the report's detector), that they fall in the pass's windows,
    their depth, and min/max. A 4 GB copy: the pass is timed, not sized, and its shorter
    blocks average GC's victim noise down (a 16 GB copy keeps the full drive's blocks:
    min/max ~0.8). The shipped preset's shallower pass of 30 % does not show here (dips to
    ~90 % of the median, under the detector's limit): its test above is on a 64 GB copy."""
    d = preconditioned("enterprise-sas", 4, gc_pace_victims="0", gc_pass_pct="52")
    s, dips, depth, outside = gc_pass_series(d)
    assert dips.periodic and abs(dips.period_s - 150) <= 10, dips
    assert 25 <= dips.duration_s <= 45 and dips.count >= 3, dips
    assert 0.82 <= depth <= 0.94, depth
    assert min(outside) / max(outside) > 0.9, "outside the passes the drive is consistent"
    assert 0.74 <= min(s) / max(s) <= 0.9, (min(s) / max(s), "the review: 0.836")
    assert near(statistics.mean(s), 41_000), "the steady level is kept"


def test_enterprise_gc_pass_has_nothing_to_do_on_a_fresh_drive():
    """The pass runs while GC does: in the first pass window (the drive's first 35 s) a fresh
    drive's random writes, which leave invalid data but free blocks to spare, copy nothing
    and keep the fresh-out-of-box rate of the drive without a pass."""
    rates = {}
    for period in ("150000", "0"):
        d = drive("enterprise-sas", 4, gc_pass_period_ms=period)
        j = run(d, RW, 32, seconds=8.0)
        assert j["counters"]["gc_copied_pages"] == 0, j["counters"]
        rates[period] = j["write"]["iops"]
    assert rates["150000"] == rates["0"], rates
    # a pass longer than its period would never end: refused, naming both
    with pytest.raises(ValueError, match="gc_pass_ms=200000 must be at most gc_pass_period_ms=150000"):
        drive("enterprise-sas", 4, gc_pass_ms="200000")


# -- entry-sata-compress: 100 GB SandForce-class SATA drive on 128 GB of flash ----------------


@pytest.fixture(scope="module")
def sata() -> _sim.Drive:
    return preconditioned("entry-sata-compress", 2)


def test_entry_sata_steady_incompressible_random_write_6500_to_7000(sata):
    iops = run(sata, RW, 32, seconds=5.0)["write"]["iops"]
    assert 6_500 * (1 - RATE_TOL) <= iops <= 7_000 * (1 + RATE_TOL), iops


def test_entry_sata_random_read_saturates_near_47750(sata):
    iops = {qd: run(sata, RR, qd, seconds=1.0)["read"]["iops"] for qd in (32, 128)}
    assert near(iops[128], 47_750) and iops[128] <= 1.05 * iops[32], iops


def test_entry_sata_qd1_write_latency_within_the_worst_review_round(sata):
    w = run(sata, RW, 1, seconds=5.0, seed=8)["write"]  # not the steady test's seed: no replay
    assert percentile(w, 99.9) <= 1900 * (1 + LAT_TOL), percentile(w, 99.9)
    assert percentile(w, 50) < 190, percentile(w, 50)


def test_entry_sata_steady_qd1_writes_meet_the_good_review_round(sata):
    """Real drives of this class keep steady QD1 4K random writes at 95 % <= 190 us and
    99.9 % <= 280 us, around a body (the NAND's spread). At QD1 this drive already writes at
    its steady rate, so every write waits for buffer room; admission pacing (pace_pct) spaces
    the entries at the buffer's drain rate. With programs of 3,200 us (fewer and longer
    program starts for the pacer to follow through GC) the 99.9 % of these eight runs
    spread over 219-325 us, three of them above 280."""
    for seed in range(50, 58):
        w = run(sata, RW, 1, seconds=5.0, seed=seed)["write"]
        p1, p50, p95, p999 = (percentile(w, p) for p in (1, 50, 95, 99.9))
        assert p95 <= 190 and p999 <= 280, (seed, p95, p999)
        assert p1 < 0.9 * p50 and p50 < p95, (seed, p1, p50, p95)


@pytest.mark.parametrize("gb", [0.5, 2])
def test_entry_sata_qd1_writes_right_after_a_sequential_fill_keep_a_short_tail(gb):
    """A PTS latency run preconditions with a sequential fill only, then runs its QD1 cells
    (write cache disabled). Random writes then meet GC victims still nearly full; with GC
    starting only at the reserve (gc_start_pct=0) the host fell to the synchronous net and
    waited for whole collections: the 4 KiB cells' p99.9 up to 3.8 ms on the 0.5 GB copy and
    8.7 ms on the 2 GB one (programs of 3,200 us and a ceiling of 1: up to 2.9 and 4.1 ms,
    maxima of 9-20 ms). Starting a little earlier (10 % of the spare) spreads that work."""
    d = drive("entry-sata-compress", gb)
    run(d, [("seq", "write", 128 * KiB, 1.0)], 32, budget=2 * d.capacity)
    d.write_cache = False
    for i in range(4):
        run(d, [("rnd", "write", 8 * KiB, 1.0)], 1, seconds=1.0, seed=60 + i)
        w = run(d, RW, 1, seconds=1.0, seed=50 + i)["write"]
        run(d, [("rnd", "write", 512, 1.0)], 1, seconds=1.0, seed=70 + i)
        p999 = percentile(w, 99.9)
        assert p999 <= 280 * (1 + LAT_TOL), (i, p999)
        assert w["lat_max_us"] <= 1000, ("no write waits for a whole collection", i, w["lat_max_us"])


def test_entry_sata_wsat_falls_around_interval_11_to_a_steady_6500_to_7000():
    """PTS Write Saturation of incompressible 4K random writes, scaled as the enterprise test
    is (a 2 GB copy, one-minute intervals shrunk to the same share of the capacity, 150 of
    them: about four capacities). The drive leaves its fresh-out-of-box plateau around the
    11th interval, once the host has filled the user capacity and the spare left by the
    compressor's overhead on incompressible data (compress_ceiling), and settles at
    6,500-7,000 IOPS. Before (ceiling 1, programs of 3,200 us): a 20,000 IOPS plateau to
    interval 26 and a steady ~7,800."""
    gb = 2
    d = drive("entry-sata-compress", gb)
    interval = 60.0 * gb / 100
    curve = [run(d, RW, 32, seconds=interval, seed=100 + i)["write"]["iops"] for i in range(150)]
    fob, steady = sum(curve[:5]) / 5, curve[-10:]
    fall = next(i + 1 for i, v in enumerate(curve) if v < 0.98 * fob)
    assert 9 <= fall <= 13, (fall, curve)
    assert max(curve[: fall - 1]) / min(curve[: fall - 1]) < 1.02, "a flat plateau before the fall"
    assert 6_500 * 0.95 <= sum(steady) / len(steady) <= 7_000 * 1.05, steady
    assert max(steady) / min(steady) < 1.1, "steady state reached"
    series = [s[2] for s in run(d, RW, 32, seconds=20.0, seed=999)["series"]]
    assert max(series) / min(series) < 1.3, series


def test_entry_sata_entropy_response_is_smooth_and_flattens():
    write, mixed_lat = {}, {}
    for e in (0.2, 0.4, 0.6, 0.8, 1.0):
        d = preconditioned("entry-sata-compress", 1, drive_writes=2.0, entropy=e)
        write[e] = run(d, RW, 32, seconds=3.0, entropy=e)["write"]["iops"]
        m = run(d, MIX, 32, seconds=3.0, entropy=e)
        n = m["read"]["ios"] + m["write"]["ios"]
        mixed_lat[e] = (m["read"]["lat_mean_us"] * m["read"]["ios"] + m["write"]["lat_mean_us"] * m["write"]["ios"]) / n
    es = sorted(write)
    assert all(write[a] > write[b] for a, b in zip(es[:3], es[1:4])), f"write IOPS fall with entropy: {write}"
    assert near(write[0.8], write[1.0], 0.05), f"flat past 80 % entropy: {write}"
    assert all(mixed_lat[a] < mixed_lat[b] for a, b in zip(es[:3], es[1:4])), f"70/30 latency rises: {mixed_lat}"


# -- consistency: a client drive with periodic GC dips, an enterprise drive without ------------


def test_client_per_second_iops_after_the_cliff_spreads_with_periodic_dips():
    """A burst holds the flash for bg_burst_ms, then the host writes into the room it made
    at the fresh rate, so a second holding a whole burst and its catch-up is not a dip:
    the period (4.3 s) is not a whole number of seconds, so the bursts fall at every phase
    of a second and some of them split a second's IOPS whatever the run's start."""
    for lead_in in (0.0, 0.5):  # shifts the bursts' phase within the series' seconds
        d = preconditioned("client-nvme-slc", 4)
        if lead_in:
            run(d, RW, 32, seconds=lead_in, seed=12)
        out = run(d, RW, 32, seconds=30.0, seed=11)
        span = out["series_columns"].index("span_s")
        # whole seconds only: the cell's last row is the partial rest past its 30 s (ms long)
        series = [s[2] for s in out["series"] if s[span] >= 1.0]
        assert 2 <= max(series) / min(series) <= 10, (lead_in, series)


@pytest.mark.parametrize("period", [None, "5000"])
def test_client_steady_qd1_write_tail_stays_short(period):
    """After the cliff, QD1 writes meet foreground GC in slices, not a whole collection:
    the GC copies' own open block takes one spare block, so with GC starting only at the
    reserve (gc_start_pct=0) a reserve of 2 left the host opening its next block with one
    free block, waiting for a synchronous collection (p99.9 ~1 ms, p99.99 ~17 ms). The
    same held until the next burst when one ended mid-eviction below the reserve (here at
    a 5 s period: p99.99 ~7 ms), so the tail must not depend on where the bursts fall."""
    d = preconditioned("client-nvme-slc", 4, **({"bg_period_ms": period} if period else {}))
    w = run(d, RW, 1, seconds=5.0, seed=21)["write"]
    assert percentile(w, 99.9) <= 300, percentile(w, 99.9)
    assert percentile(w, 99.99) <= 1000, percentile(w, 99.99)


@pytest.mark.parametrize("gb", [0.5, 4])
def test_client_qd1_writes_with_the_cache_disabled_land_in_slc_with_a_spread(gb):
    """Write cache off (PTS-E's WCD) and the SLC cache full after a sequential fill: at QD1
    the dies are idle most of the time, so the controller folds the cache as it fills and
    each write waits for an SLC program (200 µs) with the NAND's spread. Folding only in
    bursts or host idle time left the scaled-down copies writing straight to TLC: every
    write took 1,605 µs, one histogram bin."""
    d = drive("client-nvme-slc", gb)
    run(d, [("seq", "write", 128 * KiB, 1.0)], 32, budget=2 * d.capacity)
    d.write_cache = False
    run(d, RW, 1, seconds=1.0, seed=4)
    w = run(d, RW, 1, seconds=3.0, seed=5)["write"]
    p1, p50, p99 = (percentile(w, p) for p in (1, 50, 99))
    assert near(p50, 210, LAT_TOL), p50
    assert p1 <= 0.92 * p50, (p1, p50)
    assert p99 <= 2 * p50, (p50, p99)


@pytest.mark.parametrize("kind", ["rnd", "seq"])
def test_client_cached_qd1_writes_take_about_15us_with_a_spread(kind):
    """Client NVMe drives acknowledge a cached QD1 4K write in ~15 µs on average: beyond the
    command's overhead, the controller carries the data into its DRAM buffer and enters it
    in the write cache (`write_path_us`). With the command overhead alone every write took
    5-7 µs (4 µs of a core and the PCIe transfer)."""
    d = drive("client-nvme-slc", 4)
    w = run(d, [(kind, "write", 4096, 1.0)], 1, seconds=1.0)["write"]
    p1, p50, p99 = (percentile(w, p) for p in (1, 50, 99))
    assert near(w["lat_mean_us"], 15, 0.1), w["lat_mean_us"]
    assert p1 <= 0.92 * p50 and p99 >= 1.08 * p50, (p1, p50, p99)


# -- HDDs with the write cache enabled: acknowledgements from the cache have a shape ---------

HDD_PRESETS = ["sas-15k-hdd", "sata-7200-hdd"]


@pytest.mark.parametrize("preset", HDD_PRESETS)
def test_hdd_cached_qd1_writes_spread_around_the_command_time(preset):
    """A write taken into the cache costs the link transfer and the controller's time for
    the command, which varies (`time_spread_pct`): the histogram has a body around the
    overhead, not one bin. Random writes also meet the controller starting a destage now
    and then (choosing it and setting up its seek), so a few wait for that: a tail of up to
    about twice the body while the cache still has room. Before, every cached write took
    the same overhead + transfer (sequential and random alike, p1 = p99)."""
    params = dict(json.loads(_sim.describe(preset, []))["params"])
    nominal = float(params["overhead_us"]) + 4096 / 550  # sas6 and sata3 both carry 550 MB/s
    for streams, seconds in (([("seq", "write", 4096, 1.0)], 1.0), (RW, 0.1)):  # 0.1 s: the cache has room
        d = _sim.Drive(preset, [])
        d.write_cache = True
        w = run(d, streams, 1, seconds=seconds)["write"]
        p1, p50, p90, p99, p999 = (percentile(w, p) for p in (1, 50, 90, 99, 99.9))
        assert near(w["lat_mean_us"], nominal, 0.05), (streams, w["lat_mean_us"], nominal)
        assert p1 <= 0.9 * p50 and p99 >= 1.1 * p50, (streams, p1, p50, p99)
        if streams == RW:
            assert p90 <= 1.2 * p50 and 1.5 * p50 <= p999 <= 3 * p50, (p50, p90, p999)


@pytest.mark.parametrize("preset", HDD_PRESETS)
def test_hdd_cached_random_writes_turn_mechanical_once_the_cache_is_full(preset):
    """Sustained QD1 4K random writes fill the cache (16 MiB on the 15K drive, 64 MiB on the
    7,200 rpm one); from then on each write waits for a destage to make room, so the
    histogram keeps the fill's body in microseconds and grows a tail of positioning times
    in milliseconds, never the whole backlog."""
    d = _sim.Drive(preset, [])
    d.write_cache = True
    w = run(d, RW, 1, seconds=3.0)["write"]
    cache = json.loads(_sim.describe(preset, []))["cache_bytes"]
    filled = cache / 4096 / w["ios"]  # the share of writes the empty cache took at once
    assert percentile(w, 100 * filled * 0.9) <= 100, (filled, w["lat_mean_us"])
    assert 1_000 <= percentile(w, 100 * filled + (1 - filled) * 50) <= 15_000, filled
    assert w["lat_max_us"] < 50_000, w["lat_max_us"]
