"""The plans of the PTS 2.0 tests beyond IOPS/TP/LAT: Cross Stimulus Recovery, DIRTH and the
optional Write Saturation workloads, as the runner receives them."""

from __future__ import annotations

import pytest

from iolab import registry, suites
from iolab.errors import IolabError
from iolab.targets import DeviceFacts, Target
from iolab.units import GiB, KiB

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


def test_dirth_is_pc_then_demand_variation_high_to_low():
    p = plan("dirth")
    pc, dv = p.phases
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


@pytest.mark.parametrize("name, access, read, bs", [
    ("rnd4k", "rnd", 0, 4 * KiB), ("oltp", "rnd", 65, 8 * KiB), ("vod", "seq", 90, 128 * KiB), ("metadata", "seq", 50, 512),
])
def test_wsat_workloads_by_name(name, access, read, bs):
    [ph] = plan("wsat", settings=(("workload", name),)).phases
    [c] = ph.cells
    assert (c.workload.accesses, c.workload.read_pct, c.block_size) == ({access}, read, bs)
    assert ph.tracking[0].cell_key == c.key


def test_wsat_metadata_on_a_4k_device_is_refused():
    with pytest.raises(IolabError, match="logical sector"):
        plan("wsat", T4K, settings=(("workload", "metadata"),))
