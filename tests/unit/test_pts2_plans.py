"""The plans of the PTS 2.0 tests beyond IOPS/TP/LAT: Cross Stimulus Recovery, DIRTH and the
optional Write Saturation workloads, as the runner receives them."""

from __future__ import annotations

import pytest

from iolab import suites
from iolab.api import registry
from iolab.core.errors import IolabError
from iolab.core.units import GiB, KiB
from iolab.figures.points import decided_points
from iolab.targets import DeviceFacts, Target

T512 = Target("block", "/dev/x", "/dev/x", 100 * GiB, DeviceFacts(logical_sector=512))
T4K = Target("block", "/dev/y", "/dev/y", 100 * GiB, DeviceFacts(logical_sector=4096))


def plan(test, target=T512, settings=(), **kw):
    return registry.build_plan(test, suites.make_profile(settings=settings, **kw), target)


def test_xsr_is_three_timed_groups_with_one_purge():
    p = plan("xsr")
    assert [ph.name for ph in p.phases] == ["group 1", "group 2", "group 3"]
    assert [ph.budget_seconds for ph in p.phases] == [8 * 3600, 6 * 3600, 8 * 3600]
    assert [ph.max_rounds for ph in p.phases] == [480, 360, 480]  # one-minute intervals
    assert [ph.purge for ph in p.phases] == [True, False, False]
    assert not any(ph.stop_on_steady or ph.precondition for ph in p.phases)
    shapes = [(c.workload.accesses, c.workload.read_pct, c.block_size) for ph in p.phases for c in ph.cells]
    assert shapes == [({"seq"}, 0, 1024 * KiB), ({"rnd"}, 0, 8 * KiB), ({"seq"}, 0, 1024 * KiB)]
    rows = dict(p.parameters)
    assert rows["recovery_tolerance"].startswith("5 % (default, UNVERIFIED")
    assert rows["purge"].startswith("yes (default, UNVERIFIED")


def test_xsr_settings_and_quick_scaling():
    p = plan("xsr", settings=(("purge", "no"), ("group2_time", "2h"), ("recovery_tolerance", "10%")))
    assert not any(ph.purge for ph in p.phases)
    assert p.phases[1].budget_seconds == 7200
    assert "10 % (set with --set)" in dict(p.parameters)["recovery_tolerance"]
    q = plan("xsr", quick=True)
    assert [ph.max_rounds for ph in q.phases] == [20, 15, 20]
    assert any("non-compliant" in n for n in q.notes)


def test_hir_is_pc_to_steady_state_then_bursts_after_idles_and_baselines():
    p = plan("hir")
    names = [ph.name for ph in p.phases]
    assert (
        names[:3] == ["preconditioning", "wait 5 s", "baseline after wait 5 s"]
        and names[-1] == "baseline after wait 50 s"
    )
    assert len(names) == 11 and [ph.purge for ph in p.phases] == [True] + [False] * 10
    pc, wait, base = p.phases[:3]
    assert len(pc.cells) == 30 and pc.stop_on_steady and pc.tracking[0].cell_key == pc.cells[-1].key
    assert len(wait.cells) == 360 and {c.workload.duration_s for c in wait.cells} == {5.0}
    assert {c.idle_before_s for c in wait.cells} == {5.0} and not wait.stop_on_steady
    assert sum(c.workload.duration_s for c in base.cells) == pytest.approx(1800) and {
        c.idle_before_s for c in base.cells
    } == {None}
    assert {
        (frozenset(c.workload.accesses), c.workload.read_pct, c.block_size) for ph in p.phases for c in ph.cells
    } == {(frozenset({"rnd"}), 0, 4 * KiB)}
    assert dict(p.parameters)["pc_round_intervals"].startswith("30 (default, UNVERIFIED")
    # the ETA: 5–25 PC rounds of 30 min, then per wait state 360 × (5 s + idle) and 30 min of baseline
    idles = 360 * (5 + 10 + 15 + 25 + 50)
    assert p.timed_seconds() == (5 * 1800 + 5 * (1800 + 1800) + idles, 25 * 1800 + 5 * (1800 + 1800) + idles)


def test_hir_quick_keeps_the_proportions_and_settings_are_checked():
    q = plan("hir", quick=True, cell_seconds=0.5)
    waits = [ph for ph in q.phases if ph.name.startswith("wait ")]
    assert [ph.cells[0].idle_before_s for ph in waits] == [0.5, 1.0, 1.5, 2.5, 5.0]
    assert all(len(ph.cells) == 3 for ph in waits) and len(q.phases[0].cells) == 2
    assert any("non-compliant" in n for n in q.notes)
    with pytest.raises(IolabError, match="wait_states"):
        plan("hir", settings=(("wait_states", "10,5"),))


def test_dirth_is_pc_then_demand_variation_high_to_low():
    p = plan("dirth")
    pc, dv, _ = p.phases
    assert pc.purge and pc.stop_on_steady and not dv.purge and dv.stop_on_steady
    [pcc] = pc.cells
    assert (pcc.workload.threads, pcc.workload.queue_depth, pcc.workload.read_pct) == (32, 32, 0)
    assert pcc.workload.duration_s == 30 * 60
    pre, *grid = dv.cells
    assert pre.key == "pre-write" and pre.workload.duration_s == 300 and pre.workload.read_pct == 0
    assert len(grid) == 49 and grid[0].key == "TC32/QD32" and grid[1].key == "TC32/QD16" and grid[-1].key == "TC1/QD1"
    assert all(c.workload.read_pct == 65 and c.block_size == 8 * KiB for c in grid)
    assert [t.cell_key for t in dv.tracking] == ["TC32/QD32"]
    assert dict(p.parameters)["art_cutoff_ms"].startswith("5 ms (default, UNVERIFIED")


def test_dirth_settings_shrink_the_grid_and_are_checked():
    p = plan("dirth", settings=(("threads", "1,2"), ("depths", "1,4"), ("block_size", "4k"), ("read_pct", "100")))
    assert [c.key for c in p.phases[1].cells] == ["pre-write", "TC2/QD4", "TC2/QD1", "TC1/QD4", "TC1/QD1"]
    assert p.phases[1].cells[1].workload.read_pct == 100
    with pytest.raises(IolabError, match="read percentage"):
        plan("dirth", settings=(("read_pct", "120"),))
    with pytest.raises(IolabError, match="logical"):
        plan("dirth", T4K, settings=(("block_size", "512"),))


@pytest.mark.parametrize(
    "name, access, read, bs",
    [
        ("rnd4k", "rnd", 0, 4 * KiB),
        ("oltp", "rnd", 65, 8 * KiB),
        ("vod", "seq", 90, 128 * KiB),
        ("metadata", "seq", 50, 512),
    ],
)
def test_wsat_workloads_by_name(name, access, read, bs):
    [ph] = plan("wsat", settings=(("workload", name),)).phases
    [c] = ph.cells
    assert (c.workload.accesses, c.workload.read_pct, c.block_size) == ({access}, read, bs)
    assert ph.tracking[0].cell_key == c.key


def test_wsat_metadata_on_a_4k_device_is_refused():
    with pytest.raises(IolabError, match="logical sector"):
        plan("wsat", T4K, settings=(("workload", "metadata"),))


def test_dirth_builds_its_operating_point_phase_from_the_demand_variation_window():
    from iolab.core.decide import Sample
    from iolab.core.plan import Deferred

    p = plan("dirth", settings=(("threads", "1,4"), ("depths", "1,16")))
    ops = p.phases[2]
    assert isinstance(ops, Deferred) and ops.seconds == 3 * (3600 + 600)
    # (TC, QD) -> (IOPS, ART µs) per round; round 1 (a slow TC1/QD16) is outside the 5-round window
    curve = {(4, 16): (100_000, 9_000), (4, 1): (40_000, 100), (1, 16): (60_000, 1_000), (1, 1): (10_000, 90)}
    samples = [
        Sample(rnd, f"TC{t}/QD{q}", iops * (0.4 if rnd == 1 and (t, q) == (1, 16) else 1), None, t * q, art)
        for rnd in range(1, 7)
        for (t, q), (iops, art) in curve.items()
    ]
    phase, decision = ops.build({"demand variation": samples})
    p.check_phase(phase)
    # Max: TC4/QD16 has an ART over 5 ms, so TC1/QD16; Mid: closest to (60k + 10k) / 2 = 35k is TC4/QD1
    assert [c.key for c in phase.cells] == [
        "MaxIOPS pre-write",
        "MaxIOPS TC1/QD16",
        "MidIOPS pre-write",
        "MidIOPS TC4/QD1",
        "MinIOPS pre-write",
        "MinIOPS TC1/QD1",
    ]
    pre, work = phase.cells[:2]
    assert (pre.workload.threads, pre.workload.queue_depth, pre.workload.read_pct, pre.workload.duration_s) == (
        1,
        16,
        0,
        3600,
    )
    assert (work.workload.threads, work.workload.queue_depth, work.workload.read_pct, work.workload.duration_s) == (
        1,
        16,
        65,
        600,
    )
    # the stored decision carries each point with the window IOPS and ART it was chosen on; reports read it back
    stored = decided_points([decision.record()])
    assert [p.label() for _, p in stored.named()] == ["TC1/QD16", "TC4/QD1", "TC1/QD1"]
    assert (stored.max.iops, stored.max.art_us) == (60_000, 1_000)
    assert "MaxIOPS at TC1/QD16 (60,000 IOPS" in decision.outcome
    with pytest.raises(IolabError, match="no operating point"):
        ops.build({"demand variation": [s for s in samples if s.key == "TC4/QD16"]})


def test_dirth_measures_a_point_named_twice_once():
    from iolab.core.decide import Sample
    from iolab.figures.points import decided_points

    p = plan("dirth", settings=(("threads", "1"), ("depths", "1,32")))
    # TC1/QD1 and TC1/QD32 are the only points under the cutoff: Mid is one of them (Min's, by the tie)
    curve = {(1, 32): (60_000, 500), (1, 1): (10_000, 100)}
    samples = [Sample(r, f"TC{t}/QD{q}", i, None, t * q, a) for r in range(1, 6) for (t, q), (i, a) in curve.items()]
    phase, decision = p.phases[2].build({"demand variation": samples})
    assert [c.key for c in phase.cells] == [
        "MaxIOPS pre-write",
        "MaxIOPS TC1/QD32",
        "MinIOPS pre-write",
        "MinIOPS TC1/QD1",
    ]
    assert decision.record()["chosen"]["cells_of"] == {"MidIOPS": "MinIOPS"}
    assert decided_points([decision.record()]).mid.label() == "TC1/QD1"  # Mid is still decided, and named
    assert "MidIOPS = MinIOPS point TC1/QD1, histogram shared (its pre-write and histogram run once" in decision.outcome


def test_cbw_is_the_dirth_flow_with_the_skewed_composite():
    p = plan("cbw", settings=(("threads", "1,2"), ("depths", "1,2")))
    pc, dv, _ = p.phases
    [pcc] = pc.cells
    grid = dv.cells[1:]
    assert pcc.workload.read_pct == pytest.approx(0) and all(c.workload.read_pct == pytest.approx(40) for c in grid)
    w = grid[0].workload
    sizes = {}
    for s in w.streams:
        sizes[s.block_size] = sizes.get(s.block_size, 0) + s.share
    assert sizes[4 * KiB] == pytest.approx(0.67) and sizes[512] == pytest.approx(0.04) and len(sizes) == 12
    assert w.zones == ((0.50, 0.05), (0.30, 0.15), (0.20, 0.80))
    with pytest.raises(IolabError, match="logical sector"):
        plan("cbw", T4K)


def test_fio_job_of_a_skewed_workload_carries_the_zones():
    from iolab.engines.fio_job import build_job

    w = plan("cbw", settings=(("threads", "1"), ("depths", "1"))).phases[1].cells[1].workload
    text = build_job(T512, w, "t", "libaio")
    assert text.count("random_distribution=zoned:50/5:30/15:20/80") == 1
    assert "random_distribution" not in build_job(T512, w.with_(zones=()), "t", "libaio")


def test_pts_all_adds_the_optional_tests_in_spec_order():
    assert [t.name for t in registry.sequence("pts")] == ["iops", "throughput", "latency", "wsat"]
    every = [t.name for t in registry.sequence("pts", everything=True)]
    assert every[:4] == ["iops", "throughput", "latency", "wsat"]
    assert every.index("hir") < every.index("xsr") < every.index("dirth") < every.index("cbw")
    with pytest.raises(IolabError, match="--all"):
        registry.sequence("iops", everything=True)


def test_sequence_eta_spans_first_steady_state_to_every_round_limit():
    from iolab.cli.progress import sequence_eta

    x = plan("xsr")  # runs to its time budgets: 22 h either way
    assert x.timed_seconds() == (22 * 3600, 22 * 3600)
    d = plan("dirth", settings=(("threads", "1"), ("depths", "1")))
    # PC: 30-min rounds, DV: 5-min pre-write + one 1-min cell; 5 rounds at the earliest, 25 at the latest;
    # then 60 + 10 min at each of the three operating points
    assert d.timed_seconds() == (5 * 1800 + 5 * 360 + 3 * 4200, 25 * 1800 + 25 * 360 + 3 * 4200)
    text = sequence_eta([x, d])
    assert text.startswith("2 tests, ETA 28:30:00 to 40:30:00 (")
    assert "Cross Stimulus Recovery 22:00:00" in text and "DIRTH 6:30:00–18:30:00" in text
