"""Characterisation preconditioning: by time as published reviews do, and in a --quick run by
writing three times the tested capacity, so a scaled-down drive leaves fresh-out-of-box."""

from __future__ import annotations

from iolab.api import runs as api
from iolab.core import testparams
from iolab.suites import make_profile, quick_target
from iolab.targets import DeviceFacts, Target, parse_target


def plan(*sets: str, quick: bool, target: str = "sim:entry-sata-compress"):
    prof = make_profile(quick=quick, settings=testparams.parse_settings(sets))
    # as a run does: --quick scales a simulated drive whose size the target does not give
    return api.plans("rw-matrix", prof, quick_target(prof, parse_target(target)))[0]


def test_a_quick_run_preconditions_by_three_drive_writes():
    p = plan(quick=True)
    [w] = p.phases[0].precondition
    assert w.duration_s is None and w.bytes_budget == 3 * p.capacity
    assert (w.read_pct, w.entropy) == (0.0, 1.0) and w.streams[0].block_size == 4096
    rows = dict(p.parameters)
    assert rows["precondition_time"] == ("until 3 × the tested capacity is written (--quick; default 2.00 h)")
    assert "until 3 × the tested capacity is written (steady state not checked)" in rows["Preconditioning"]


def test_a_quick_range_of_a_drive_that_cannot_be_copied_also_writes_the_rest_of_the_drive():
    # quick tests 0.537 GB of a 4 GB real drive: after the purge the rest of its flash is free,
    # so 3× the range alone never uses it up; a simulated drive is copied instead and tested whole
    prof = make_profile(quick=True)
    drive = Target("block", "/dev/fake", "/dev/fake", 4 * 10**9, DeviceFacts(model="Fake", logical_sector=512))
    p = api.plans("rw-matrix", prof, drive)[0]
    [w] = p.phases[0].precondition
    assert p.capacity < drive.capacity and w.bytes_budget == 3 * p.capacity + (drive.capacity - p.capacity)
    # the rule's minimum is of the tested range; a range cut below the drive is never its steady state
    assert p.rule.min_write_bytes(p.capacity) == 2 * p.capacity
    assert (
        "3 × the tested capacity is written plus the 3.463 GB of the drive outside it"
        in dict(p.parameters)["Preconditioning"]
    )
    copied = plan(quick=True, target="sim:entry-sata-compress?user_gb=4")
    assert copied.phases[0].precondition[0].bytes_budget == 3 * copied.capacity


def test_a_full_run_and_a_set_time_precondition_by_time():
    for p, seconds in ((plan(quick=False), 7200.0), (plan("precondition_time=5s", quick=True), 5.0)):
        [w] = p.phases[0].precondition
        assert w.bytes_budget is None and w.duration_s == seconds
        assert (
            f"for {testparams.show_seconds(seconds)} (steady state not checked)"
            in dict(p.parameters)["Preconditioning"]
        )
