"""Characterisation preconditioning: by time as published reviews do, and in a --quick run by
writing three times the tested capacity, so a scaled-down drive leaves fresh-out-of-box."""

from __future__ import annotations

from iolab import api, testparams
from iolab.suites import make_profile, quick_target
from iolab.targets import parse_target


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


def test_a_quick_range_of_a_sized_drive_also_writes_the_rest_of_the_drive():
    # quick tests 0.537 GB of the 4 GB drive: after the purge the rest of its flash is free,
    # so 3× the range alone never leaves fresh-out-of-box
    p = plan(quick=True, target="sim:entry-sata-compress?user_gb=4")
    [w] = p.phases[0].precondition
    drive = parse_target("sim:entry-sata-compress?user_gb=4").capacity
    assert p.capacity < drive and w.bytes_budget == 3 * p.capacity + (drive - p.capacity)
    assert p.rule.min_write_bytes(p.capacity) == 2 * p.capacity + (drive - p.capacity)
    assert (
        "3 × the tested capacity is written plus the 3.463 GB of the drive outside it"
        in dict(p.parameters)["Preconditioning"]
    )


def test_a_full_run_and_a_set_time_precondition_by_time():
    for p, seconds in ((plan(quick=False), 7200.0), (plan("precondition_time=5s", quick=True), 5.0)):
        [w] = p.phases[0].precondition
        assert w.bytes_budget is None and w.duration_s == seconds
        assert (
            f"for {testparams.show_seconds(seconds)} (steady state not checked)"
            in dict(p.parameters)["Preconditioning"]
        )
