"""Bad values are refused before anything is written: profile options, plans on a target,
purge methods, the stall timeout, and engine results with impossible figures."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from iolab import suites
from iolab.api import registry
from iolab.core.errors import EngineError, IolabError
from iolab.core.results import OpStats, RoundResult, SecondSample, check_result
from iolab.core.units import GiB, MiB
from iolab.engines import engine_for
from iolab.engines.fio import FioEngine
from iolab.engines.fio_parse import parse_fio_json
from iolab.engines.sim import SimEngine
from iolab.run.runstart import RunOptions, start
from iolab.targets import DeviceFacts, Target

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "fio"
BLOCK = Target("block", "/dev/x", "/dev/x", 100 * GiB, DeviceFacts(logical_sector=512))
SIM = Target("sim", "sim:enterprise-sas", "enterprise-sas", 1 * GiB, DeviceFacts(logical_sector=512))


# -- profile options: every one of these used to run (and some stored a "complete" run) -----

BAD_OPTIONS = [
    ("max_rounds", 0, "--max-rounds"),
    ("max_rounds", -3, "--max-rounds"),
    ("max_rounds", 2.5, "--max-rounds"),
    ("cell_seconds", 0.0, "--cell-time"),
    ("cell_seconds", -1.0, "--cell-time"),
    ("cell_seconds", 1e-7, "--cell-time"),
    ("cell_seconds", 100_000_000 * 3600.0, "--cell-time"),  # wrapped the simulator's clock
    ("cell_seconds", math.nan, "--cell-time"),
    ("cell_seconds", math.inf, "--cell-time"),
    ("precondition_factor", math.nan, "--precondition-factor"),
    ("precondition_factor", math.inf, "--precondition-factor"),
    ("precondition_factor", -1.0, "--precondition-factor"),
    ("precondition_factor", 0.0, "--precondition-factor"),
    ("wsat_capacity_multiple", math.nan, "--wsat-capacity-multiple"),
    ("wsat_capacity_multiple", -1.0, "--wsat-capacity-multiple"),
    ("wsat_capacity_multiple", 0.0, "--wsat-capacity-multiple"),
    ("wsat_max_seconds", 0.0, "--wsat-max-time"),
    ("wsat_max_seconds", math.inf, "--wsat-max-time"),
    ("capacity_limit", 0, "--capacity-limit"),
    ("capacity_limit", -5, "--capacity-limit"),
    ("threads", 0, "threads"),
    ("queue_depth", 0, "queue_depth"),
    ("active_range", 0.0, "--active-range"),
    ("active_range", 1.5, "--active-range"),
]


@pytest.mark.parametrize("field,value,option", BAD_OPTIONS, ids=[f"{f}={v}" for f, v, _ in BAD_OPTIONS])
def test_bad_profile_options_are_refused_naming_the_option(field, value, option):
    with pytest.raises(IolabError, match=option):
        suites.make_profile(**{field: value})
    # Python callers constructing a Profile directly get the same check.
    with pytest.raises(IolabError, match=option):
        replace(suites.make_profile(), **{field: value})


def test_good_profiles_still_build():
    for kw in (
        {},
        {"quick": True},
        {"cell_seconds": 0.001},
        {"cell_seconds": 24 * 3600.0},
        {"max_rounds": 1},
        {"capacity_limit": 1 * MiB},
        {"precondition_factor": 0.5},
    ):
        for test in ("iops", "throughput", "latency", "wsat"):
            registry.build_plan(test, suites.make_profile(**kw), BLOCK)


@pytest.mark.parametrize("test", ["iops", "throughput", "latency", "wsat"])
def test_a_capacity_smaller_than_a_block_is_refused_when_the_plan_is_built(test):
    with pytest.raises(IolabError, match="smaller than one"):
        registry.build_plan(test, suites.make_profile(capacity_limit=1), BLOCK)


def test_a_preconditioning_volume_below_one_block_is_refused():
    with pytest.raises(IolabError, match="byte budget"):
        registry.build_plan("iops", suites.make_profile(capacity_limit=1 * MiB, precondition_factor=0.01), BLOCK)


# -- options checked against the target before the run directory exists ---------------------


@pytest.mark.parametrize("target,method", [(SIM, "foo"), (SIM, "blkdiscard"), (BLOCK, "file"), (BLOCK, "foo")])
def test_a_purge_method_that_does_not_fit_the_target_leaves_no_run_behind(tmp_path, target, method):
    plan = registry.build_plan("latency", suites.make_profile(quick=True), target)
    with pytest.raises(IolabError, match=f"purge method '{method}'"):
        start(plan, target, SimEngine(), RunOptions(purge_method=method), tmp_path / "runs")
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_a_runs_directory_that_is_a_file_is_a_clear_error(tmp_path):
    plan = registry.build_plan("latency", suites.make_profile(quick=True), SIM)
    (tmp_path / "afile").write_text("")
    with pytest.raises(IolabError, match="runs directory .*afile is a regular file, not a directory"):
        start(plan, SIM, SimEngine(), RunOptions(), tmp_path / "afile")


@pytest.mark.parametrize("seconds", [0, -1, math.nan, math.inf])
def test_a_bad_stall_timeout_is_refused_for_every_engine(seconds):
    for target in (SIM, BLOCK):
        with pytest.raises(IolabError, match="--stall-timeout"):
            engine_for(target, stall_timeout=seconds)
    with pytest.raises(IolabError, match="--stall-timeout"):
        FioEngine(stall_timeout=seconds)


# -- engine results --------------------------------------------------------------------------


def _fio(mutate) -> RoundResult:
    """The recorded fio report with one field changed, parsed as the engine parses it."""
    t, dec, pos, report = (FIX / "randrw.json").read_text(), json.JSONDecoder(), 0, None
    while (start_ := t.find("{", pos)) >= 0:
        report, pos = dec.raw_decode(t, start_)
    for job in report["jobs"]:
        mutate(job)
    return parse_fio_json(json.dumps(report), "randrw.json")


def _set(direction, key, value):
    def mutate(job):
        job[direction][key] = value

    return mutate


def _set_lat(direction, key, value):
    def mutate(job):  # total and completion latency alike: the parser picks one of them
        for kind in ("lat_ns", "clat_ns"):
            job[direction][kind][key] = value

    return mutate


BAD_FIO = {
    "negative IOPS": (_set("read", "iops", -5.0), "read iops is -"),
    "NaN IOPS": (_set("write", "iops", math.nan), "write iops is nan"),
    "infinite bandwidth": (_set("read", "bw_bytes", math.inf), "read mbps is inf"),
    "zero runtime": (lambda job: [job[d].__setitem__("runtime", 0) for d in ("read", "write")], "runtime is 0"),
    "negative runtime": (lambda job: [job[d].__setitem__("runtime", -100) for d in ("read", "write")], "runtime is -"),
    "IOs without bytes": (_set("read", "io_bytes", 0), "IOs but 0 bytes"),
    "negative bytes": (_set("write", "io_bytes", -4096), "write bytes are -"),
    "negative latency": (_set_lat("read", "mean", -1.0), "read mean latency"),
    "NaN latency": (_set_lat("write", "max", math.nan), "write max latency"),
}


@pytest.mark.parametrize("case", BAD_FIO)
def test_fio_output_with_impossible_figures_is_refused(case):
    mutate, message = BAD_FIO[case]
    with pytest.raises(EngineError, match="impossible figures") as e:
        check_result(_fio(mutate), "round r1 (raw/r1.json)")
    assert message in str(e.value) and "raw/r1.json" in str(e.value)


def test_the_recorded_fio_output_itself_passes():
    check_result(_fio(lambda job: None), "round r1")


def _ok() -> RoundResult:
    side = OpStats(100, 409600, 50.0, 0.2048, 10.0, 20.0, 5.0, None)
    return RoundResult(side, OpStats.idle(), 2.0, series=(SecondSample(1.0, 50.0, 0.0, 0.2, 10.0),))


@pytest.mark.parametrize(
    "broken",
    [
        lambda r: replace(r, read=OpStats.idle()),  # nothing measured at all
        lambda r: replace(r, write=replace(OpStats.idle(), iops=3.0)),  # an idle direction with a rate
        lambda r: replace(r, series=(SecondSample(1.0, -50.0, 0.0, 0.2, 10.0),)),
        lambda r: replace(r, series=(SecondSample(1.0, 50.0, 0.0, math.nan, None),)),
        lambda r: replace(r, counters={"waf": math.inf}),
    ],
    ids=["no IO", "idle with rate", "negative series", "NaN series", "infinite counter"],
)
def test_other_impossible_results_are_refused(broken):
    check_result(_ok(), "ok")
    with pytest.raises(EngineError, match="impossible figures"):
        check_result(broken(_ok()), "round r1")
