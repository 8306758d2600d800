"""The entropy test: a drive that does not compress shows no entropy effect in a quick run,
the report's header prints the entropy range, and compare overlays IOPS vs entropy."""

from __future__ import annotations

import pytest

from iolab import registry, suites, testparams
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
    from iolab.report.characterise import grid
    from iolab.report.rundata import RunData

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
    from iolab.report.rundata import RunData

    run = RunData.load(default_preset_run, default_preset_run)
    titles = [p.title for p in registry.get("entropy").overlays([run, run], ["a", "b"])]
    assert "write: IOPS vs entropy (QD1, QD32)" in titles and "70/30: IOPS vs entropy (QD1, QD32)" in titles
