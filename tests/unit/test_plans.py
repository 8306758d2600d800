"""Test definitions: loop order, outstanding IO, tracking variables, budgets (SNIA PTS 2.0)."""

import pytest

from iolab import suites
from iolab.api import registry
from iolab.core.errors import IolabError
from iolab.core.results import Histogram
from iolab.core.units import GiB, KiB, parse_duration, parse_size
from iolab.targets import DeviceFacts, Target

T512 = Target("block", "/dev/x", "/dev/x", 100 * GiB, DeviceFacts(logical_sector=512))
T4K = Target("block", "/dev/y", "/dev/y", 100 * GiB, DeviceFacts(logical_sector=4096))


def plan(test, target=T512, **kw):
    return registry.build_plan(test, suites.make_profile(**kw), target)


def test_iops_plan_is_the_spec_loop():
    p = plan("iops")
    [ph] = p.phases
    assert len(ph.cells) == 56
    assert [c.mix for c in ph.cells[::8]] == ["100/0", "95/5", "65/35", "50/50", "35/65", "5/95", "0/100"]
    assert [c.block_size // 512 for c in ph.cells[:8]] == [2048, 256, 128, 64, 32, 16, 8, 1]
    w = ph.cells[0].workload
    assert (w.threads, w.queue_depth, w.duration_s, w.active_range, w.entropy) == (4, 32, 60.0, 1.0, 1.0)
    assert ph.cells[20].workload.read_pct == pytest.approx(65)
    [wipc] = ph.precondition
    assert wipc.bytes_budget == 2 * 100 * GiB and wipc.streams[0].block_size == 128 * KiB
    assert wipc.accesses == {"seq"} and wipc.read_pct == 0
    assert p.profile.compliant and ph.max_rounds == 25
    # mixed cells report total (read + write) IOPS, as the PTS does: stated, not flagged as unverified
    assert dict(p.parameters)["IOPS of a mixed cell"].startswith("total (read + write) IOPS")
    assert not any("UNVERIFIED" in n for n in p.notes)


def test_devices_with_4k_sectors_skip_half_kib_cells_and_say_so():
    p = plan("iops", T4K)
    assert len(p.phases[0].cells) == 49
    assert any("512 B block size skipped" in n for n in p.notes)


def test_latency_plan_is_qd1():
    [ph] = plan("latency").phases
    assert [c.key for c in ph.cells[:3]] == ["100/0 8KiB", "100/0 4KiB", "100/0 0.5KiB"]
    assert all(c.workload.outstanding == 1 for c in ph.cells)
    assert [t.metric for t in ph.tracking] == ["lat_mean_us"]


def test_throughput_plan_precondition_at_test_block_size_tc1_qd32():
    p = plan("throughput")
    for ph, bs in zip(p.phases, (1024 * KiB, 128 * KiB)):
        assert ph.purge and ph.precondition[0].streams[0].block_size == bs
        assert ph.cells and all(
            c.workload.accesses == {"seq"} and (c.workload.threads, c.workload.queue_depth) == (1, 32) for c in ph.cells
        )
        assert ph.tracking[0].metric == "write_mbps"


def test_wsat_plan_budget():
    [ph] = plan("wsat").phases
    assert ph.precondition == () and not ph.stop_on_steady
    assert ph.budget_write_bytes == 4 * 100 * GiB and ph.budget_seconds == 24 * 3600
    assert ph.max_rounds == 24 * 60


def test_quick_is_scaled_and_labelled():
    p = plan("iops", quick=True)
    assert not p.profile.compliant
    assert p.capacity == 512 * 1024**2
    assert p.phases[0].precondition[0].bytes_budget == 2 * 512 * 1024**2
    assert p.phases[0].cells[0].workload.active_range == pytest.approx(512 * 1024**2 / (100 * GiB))


def test_bad_names_are_clear_errors():
    with pytest.raises(IolabError, match="unknown"):
        suites.make_profile("datacenter")
    with pytest.raises(IolabError, match="2.0.2"):
        suites.make_profile(spec="3.0")
    with pytest.raises(IolabError, match="iops"):
        plan("nosuch")


def test_units():
    assert parse_size("8GiB") == 8 * GiB and parse_size("1GB") == 10**9 and parse_size("4k") == 4096
    assert parse_duration("250ms") == 0.25 and parse_duration("24h") == 86400
    with pytest.raises(IolabError, match="size"):
        parse_size("eight gigs")


def test_histogram_percentiles_never_exceed_max():
    h = Histogram((10.0, 20.0, 40.0, 80.0), (50, 40, 9, 1), max_us=60.0)
    assert h.percentile(50) == 10.0
    assert h.percentile(90) == 20.0
    assert h.percentile(99) == 40.0
    assert h.percentile(99.999) == 60.0  # bin value 80 is capped at the true max
    merged = Histogram.merge([h, Histogram((20.0,), (100,), 25.0)])
    assert merged.counts == (50, 140, 9, 1) and merged.max_us == 60.0
