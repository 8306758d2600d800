"""The entropy test: a drive that does not compress shows no entropy effect in a quick run,
the report's header prints the entropy range, and compare overlays IOPS vs entropy."""

from __future__ import annotations

import pytest

from iolab import suites
from iolab.api import registry
from iolab.core import testparams
from iolab.targets import parse_target


@pytest.fixture(scope="module")
def default_preset_run(tmp_path_factory):
    from iolab.engines.sim import SimEngine
    from tests.unit.test_report import record

    # as `iolab run entropy --quick`: the default preset, scaled down to the quick capacity
    tgt = suites.quick_target(suites.make_profile(quick=True), parse_target("sim:enterprise-sas"))
    return record(tmp_path_factory.mktemp("runs"), "entropy", SimEngine(), tgt)


def test_default_preset_is_flat_over_entropy(default_preset_run):
    """The default preset does not compress: within 5 % at every QD. With 3 s of quick
    preconditioning the drive was still slowing down and QD32 writes fell 18 % over the cells."""
    from iolab.figures.compare.characterise import grid
    from iolab.pages.report.rundata import RunData

    run = RunData.load(default_preset_run, default_preset_run)
    for name in ("write", "70/30"):
        labels, qds, cells = grid(run.phase(name))
        for qd in qds:
            iops = [cells[(lab, qd)].iops for lab in labels]
            assert max(iops) / min(iops) < 1.05, (name, qd, iops)


def test_header_prints_the_entropy_range():
    prof = suites.make_profile(quick=True, settings=testparams.parse_settings(["entropies=0,40,100"]))
    rows = dict(registry.build_plan("entropy", prof, parse_target("sim:enterprise-sas")).parameters)
    assert rows["Data pattern"].startswith("entropy 0, 40, 100 %")
    assert rows["precondition"] == "steady (--quick; default time)"


def test_compare_overlays_iops_vs_entropy_per_queue_depth(default_preset_run):
    from iolab.pages.report.rundata import RunData

    run = RunData.load(default_preset_run, default_preset_run)
    titles = [p.title for p in registry.get("entropy").overlays([run, run], ["a", "b"])]
    assert "write: IOPS vs entropy (QD1, QD32)" in titles and "70/30: IOPS vs entropy (QD1, QD32)" in titles


def test_cells_where_fio_used_a_whole_core_are_called_cpu_bound():
    from types import SimpleNamespace as NS

    from iolab.pages.report.characterise import cpu_notes

    def row(key, usr, sys=3.0):
        return NS(cell_key=key, counters={"usr_cpu_pct": usr, "sys_cpu_pct": sys})

    busy = NS(phase=NS(name="write"), rows=[row("0% entropy QD32", 96.0), row("100% entropy QD32", 40.0)])
    idle = NS(phase=NS(name="70/30"), rows=[row("0% entropy QD32", 50.0)])
    sim = NS(phase=NS(name="sim"), rows=[NS(cell_key="x", counters={"host_write_bytes": 1.0})])
    w, m, s = cpu_notes([busy, idle, sim])
    assert "CPU-BOUND at 0% entropy QD32 (99 % of a core)" in w and "100% entropy" not in w
    assert "at most 53 % of a core" in m and "did not limit" in m
    assert "did not report" in s
