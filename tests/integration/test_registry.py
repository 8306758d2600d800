"""A test registered from outside iolab (here: from this test suite) with one call appears in
all six commands: run, show, report, compare, export and fio-job. The commands run in this
process (typer's CliRunner), so the registration is visible to them.

The extra test is a read latency-vs-demand ramp: 4 KiB random reads at rising `rate_iops`
demand, every cell in the same mix and block size (the terminal view must not fold them into
one grid place), with its own key figure "max delivered IOPS" (higher is better). It stops by
its DemandShortfall rule once two demands in a row go unmet: the simulated drive reads about
100,000 IOPS, so the 200,000 and 400,000 IOPS cells fall short and the 800,000 one never runs."""

from __future__ import annotations

import json
import re
import traceback
from pathlib import Path

import pytest
from typer.testing import CliRunner

from iolab.api import registry
from iolab.api.runlist import list_runs
from iolab.cli.app import app
from iolab.core import plan
from iolab.core.decide import DemandShortfall
from iolab.core.plan import Cell, Phase
from iolab.core.units import KiB
from iolab.core.workload import Workload
from iolab.figures.compare import KeyMetric
from iolab.suites.testdef import TestDef

pytestmark = pytest.mark.integration

DEMANDS = (25000, 50000, 100000, 200000, 400000, 800000)
MEASURED = DEMANDS[:-1]  # the rule ends the ramp after the second unmet demand
# reads spread over every controller core (core_by_lba_pct=0): the ramp meets 100,000 and fails 200,000
SMALL = "sim:enterprise-sas?blocks_per_plane=64&pages_per_block=16&op=0.28&core_by_lba_pct=0"


def build_ramp(profile, target, workload=None) -> plan.TestPlan:
    cap = min(target.capacity, profile.capacity_limit or target.capacity)
    cells = tuple(
        Cell(
            f"{d} IOPS demanded",
            Workload.mix(
                "rnd",
                100,
                4 * KiB,
                threads=1,
                queue_depth=32,
                active_range=cap / target.capacity,
                duration_s=profile.cell_seconds,
                rate_iops=d,
            ),
            "100/0",
            4 * KiB,
        )
        for d in DEMANDS
    )
    phase = Phase(
        "ramp",
        cells,
        (),
        purge=False,
        max_rounds=1,
        stop_on_steady=False,
        stop_rule=DemandShortfall(tolerance=0.02, steps=2),
    )
    return plan.TestPlan(
        "read-ramp",
        "Read Latency vs Demand",
        f"iolab characterisation ({profile.name})",
        profile,
        (phase,),
        profile.rule(),
        cap,
        (("Stimulus", "RND 4 KiB reads at rising demand"),),
    )


def max_delivered(phases) -> float | None:
    iops = [c.iops for ph in phases for c in ph.cells]
    return max(iops) if iops else None


RAMP = TestDef(
    "read-ramp",
    "Read Latency vs Demand",
    "iolab characterisation",
    "Read latency vs demand: RND 4 KiB reads at 25,000 … 800,000 IOPS demanded",
    build=build_ramp,
    key_figures=lambda runs: (KeyMetric("max delivered IOPS", "IOPS", True, max_delivered),),
)


@pytest.fixture
def ramp():
    registry.register(RAMP)  # the one registration call
    yield RAMP
    registry.unregister(RAMP.name)


def cli(*args: str) -> str:
    r = CliRunner().invoke(app, list(args), terminal_width=160)
    where = "".join(traceback.format_exception(*r.exc_info)) if r.exc_info and r.exit_code not in (0, None) else ""
    assert r.exit_code == 0, f"{args}: {r.output}\n{r.exception!r}\n{where}"
    return r.output


def run_ramp(runs: Path) -> Path:
    before = {r.path for r in list_runs(runs)} if runs.exists() else set()
    out = cli("run", "read-ramp", "--target", SMALL, "--quick", "--cell-time", "200ms", "--runs-dir", str(runs))
    assert "Read Latency vs Demand" in out
    [new] = {r.path for r in list_runs(runs)} - before
    return Path(new)


def test_a_registered_test_appears_in_run_show_report_compare_export_and_fio_job(ramp, tmp_path):
    runs = tmp_path / "runs"
    listed = cli("tests")
    assert "read-ramp" in listed and "iolab characterisation" in listed

    # run (and its report): six cells planned, five measured before the rule ended the ramp
    a = run_ramp(runs)
    manifest = json.loads((a / "manifest.json").read_text())
    assert manifest["test"] == "read-ramp" and manifest["state"] == "complete"
    assert [len(p["cells"]) for p in manifest["plan"]["phases"]] == [6]
    assert manifest["plan"]["phases"][0]["stop_rule"]["name"] == "demand-shortfall"
    [decision] = manifest["decisions"]
    assert decision["rule"] == {"name": "demand-shortfall", "tolerance": 0.02, "steps": 2}
    assert decision["cell"] == "400000 IOPS demanded" and decision["chosen"]["demand_iops"] == 100000
    outcome = decision["outcome"]
    assert re.match(
        r"delivered [\d,]+ IOPS at a demand of 400,000 \(-7\d\.\d %\) for 2 steps: highest "
        r"ramp step met [\d,]+ \(delivered at a demand of 100,000,",
        outcome,
    ), outcome

    # show: every measured cell, not one grid place of six, and the rule's outcome
    shown = cli("show", str(a))
    for d in MEASURED:
        assert f"{d} IOPS demanded" in shown, shown
    assert "800000 IOPS demanded" not in shown
    assert "block size" not in shown
    assert "demand-shortfall" in shown and "(delivered at a demand of 100,000," in " ".join(shown.split())

    # report: headed by its own family and title, not the PTS's
    cli("report", str(a), "--out", str(tmp_path / "rep"))
    html = next((tmp_path / "rep").glob("*.html")).read_text()
    assert "iolab characterisation — iolab characterisation (enterprise)" in html
    assert "Solid State Storage Performance Test Specification" not in html
    assert "Read Latency vs Demand" in html
    for d in MEASURED:
        assert f"{d} IOPS demanded" in html
    assert "(delivered at a demand of 100,000," in html  # Run Details: the decision

    # compare: a second run (standing for a second drive), its key figure ranked (higher is better)
    b = run_ramp(runs)
    said = cli("compare", str(a), str(b), "--out", str(tmp_path / "cmp"))
    # the terminal ranks too: one row per figure, each drive's value with its rank (ties share 1)
    rows = [ln for ln in said.splitlines() if "max delivered IOPS" in ln]
    assert len(rows) == 1 and rows[0].count("(#1)") == 2, said
    cmp_html = next((tmp_path / "cmp").glob("compare-read-ramp-2runs-*.html")).read_text()  # one drive's runs
    assert "max delivered IOPS (IOPS; ↑)" in cmp_html
    assert re.search(r"1 of 2", cmp_html)

    # export: every cell in the window table
    cli("export", str(a), "--format", "csv", "--out", str(tmp_path / "exp"))
    window = (tmp_path / "exp" / "window.csv").read_text()
    for d in MEASURED:
        assert f"{d} IOPS demanded" in window

    # fio-job: one job per cell, each with its demanded rate
    jobs = cli("fio-job", "read-ramp", "--target", f"file:{tmp_path / 'scratch'}?size=64MiB", "--quick")
    for d in DEMANDS:
        assert f"cell {DEMANDS.index(d) + 1}/6: {d} IOPS demanded" in jobs
        assert f"rate_iops={d}" in jobs


def test_a_stored_run_of_an_unregistered_test_still_shows_reports_and_exports(ramp, tmp_path):
    runs = tmp_path / "runs"
    a = run_ramp(runs)
    registry.unregister(ramp.name)  # as a process that never registered it
    shown = cli("show", str(a))
    assert all(f"{d} IOPS demanded" in shown for d in MEASURED)
    cli("report", str(a), "--out", str(tmp_path / "rep"))
    html = next((tmp_path / "rep").glob("*.html")).read_text()
    assert "Solid State Storage Performance Test Specification" not in html
    assert "iolab characterisation (enterprise)" in html
    cli("export", str(a), "--out", str(tmp_path / "exp"))
    r = CliRunner().invoke(app, ["run", "read-ramp", "--target", SMALL, "--runs-dir", str(runs)])
    assert r.exit_code != 0 and re.search(
        r"'read-ramp': unknown; choose one of iops, .*'pts', 'rwsw'", str(r.exception)
    )
