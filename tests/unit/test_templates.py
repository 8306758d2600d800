"""The templates a newcomer copies to start a test or an engine (suites/_template.py,
engines/_template.py) run as they are: the test template is registered, planned, run on a
simulated drive through the `iolab` command and shown by every view it declares; the engine
template runs a plan through the runner on a file and its figures agree with the IOs it logged.
A change of the registry's or the engine's contract breaks these before the templates mislead.
The contributors' guide (docs/architecture.md) points at the templates and names KeyMetric's
real fields, which is checked here too."""

from __future__ import annotations

import csv
import dataclasses
import inspect
import json
import re
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from iolab import engines
from iolab.api import comparisons, registry, reports
from iolab.cli.app import app
from iolab.core import plan
from iolab.core.errors import EngineError
from iolab.core.plan import Cell, Phase
from iolab.core.units import KiB
from iolab.core.workload import Workload
from iolab.engines import Engine
from iolab.engines import _template as engine_template
from iolab.figures.compare import KeyMetric
from iolab.pages.report.html import render
from iolab.pages.report.rundata import RunData
from iolab.store.runstore import RunStore
from iolab.suites import _template as test_template
from iolab.suites import make_profile
from iolab.suites.testdef import TestDef
from iolab.targets import parse_target

ROOT = Path(__file__).resolve().parents[2]
# a small simulated SSD: the whole template run (purge, preconditioning, five rounds) is ~1 s
SIM = "sim:enterprise-sas?blocks_per_plane=64&pages_per_block=16&op=0.28&core_by_lba_pct=0"


def cli(*args: str) -> str:
    r = CliRunner().invoke(app, list(args), terminal_width=160)
    assert r.exit_code == 0, f"{args}: {r.output}\n{r.exception!r}"
    return r.output


@pytest.fixture
def registered():
    yield registry.register(test_template.TEST)
    registry.unregister(test_template.TEST.name)


def test_the_test_template_is_not_listed_to_users():
    assert test_template.NAME not in registry.MODULES
    assert re.search(rf"\b{test_template.NAME}\b", cli("tests")) is None


def test_the_test_template_declares_every_field_of_a_test():
    # A field added to TestDef must be explained in the template, or newcomers never learn it.
    source = inspect.getsource(test_template)
    missing = [
        f.name
        for f in dataclasses.fields(TestDef)
        if not re.search(rf"\b{f.name}=", source) and f.name not in ("name", "title", "family", "summary")
    ]
    assert not missing, f"the template's TEST does not declare {missing}"


def test_the_test_template_plans_runs_and_shows_what_it_declares(registered, tmp_path):
    built = registry.build_plan(test_template.NAME, make_profile(quick=True, cell_seconds=0.2), parse_target(SIM))
    assert built.test == test_template.NAME and [c.key for c in built.phases[0].cells] == ["100/0 4KiB", "0/100 4KiB"]

    runs = tmp_path / "runs"
    out = cli(
        "run",
        test_template.NAME,
        "--target",
        SIM,
        "--quick",
        "--cell-time",
        "200ms",
        "--runs-dir",
        str(runs),
        "--no-report",
        "--set",
        "qd=4",
    )
    [run_dir] = list(runs.iterdir())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["test"] == test_template.NAME and manifest["state"] == "complete"
    assert manifest["plan"]["values"] == {"qd": 4, "rounds": 5}  # --set, and the quick round limit
    assert "ART µs" in out and "block size" not in out  # the template's own view, not the generic grid

    # the key figures: every one measured, and each the value the run stored
    phases = RunData.load(run_dir, tmp_path / "rep").phases
    figures = comparisons.key_metrics(test_template.NAME, [phases])
    assert all(isinstance(m, KeyMetric) for m in figures)
    values = {m.name: m.get(phases) for m in figures}
    cells = {c.mix: c for c in phases[0].cells}
    assert values == {
        "RND 4KiB read IOPS": cells["100/0"].iops,
        "RND 4KiB write IOPS": cells["0/100"].iops,
        "ART RND 4KiB write": cells["0/100"].lat_mean_us,
    }
    assert all(v is not None and v > 0 for v in values.values())
    shown = cli("show", str(run_dir))
    assert "RND 4KiB write IOPS" in shown and "ART µs" in shown and "block size" not in shown

    # the terminal view and the report pages, called as the registry hands them out
    console = Console(record=True, width=120)
    registry.get(test_template.NAME).view(phases[0], console)
    assert "0/100 4KiB" in console.export_text()
    html = render(reports.build_document(RunData.load(run_dir, tmp_path / "rep")))
    assert "Tabular Results — Template" in html and "Template: results per cell" in html


# -- the engine template ------------------------------------------------------------------------


def qd1_plan(profile, target, workload=None) -> plan.TestPlan:
    """Two cells the synchronous engine can run as planned: one IO at a time."""
    cells = tuple(
        Cell(
            f"{mix} 4KiB",
            Workload.mix("rnd", read, 4 * KiB, threads=1, queue_depth=1, duration_s=profile.cell_seconds),
            mix,
            4 * KiB,
        )
        for mix, read in (("100/0", 100), ("0/100", 0))
    )
    return plan.TestPlan(
        "engine-template",
        "Engine template",
        "iolab template",
        profile,
        (Phase("main", cells, (), purge=False, max_rounds=1, stop_on_steady=False),),
        profile.rule(),
        target.capacity,
    )


QD1 = TestDef("engine-template", "Engine template", "iolab template", "two QD1 cells", build=qd1_plan)


def test_the_engine_template_implements_the_engine_protocol():
    for method in (m for m in dir(Engine) if not m.startswith("_") and callable(getattr(Engine, m))):
        assert callable(getattr(engine_template.TemplateEngine, method, None)), method


def test_the_engine_template_runs_through_the_runner_and_reports_what_it_measured(tmp_path, monkeypatch):
    monkeypatch.setattr(engines, "ENGINES", ("iolab.engines._template:TemplateEngine", *engines.ENGINES))
    registry.register(QD1)
    try:
        runs = tmp_path / "runs"
        cli(
            "run",
            QD1.name,
            "--target",
            f"file:{tmp_path / 'd.img'}?size=16MiB",
            "--quick",
            "--cell-time",
            "300ms",
            "--runs-dir",
            str(runs),
            "--no-report",
        )
    finally:
        registry.unregister(QD1.name)
    [run_dir] = list(runs.iterdir())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["state"] == "complete" and manifest["versions"]["engine"].startswith("template-"), manifest
    store = RunStore.open(run_dir)
    rows = {r.cell_key: r for r in store.cells()}
    assert set(rows) == {"100/0 4KiB", "0/100 4KiB"}
    for key, row in rows.items():
        # every stored figure is the one the IO log behind it gives
        [raw] = [f for f in row.raw_files if f.endswith(".template.csv")]
        with (run_dir / raw).open() as f:
            ios = list(csv.DictReader(f))
        op = "read" if key.startswith("100/0") else "write"
        assert ios and {io["op"] for io in ios} == {op}
        assert all(int(io["bytes"]) == 4 * KiB and int(io["offset"]) % (4 * KiB) == 0 for io in ios)
        mean_us = sum(int(io["latency_ns"]) for io in ios) / len(ios) / 1000
        assert (row.read_ios if op == "read" else row.write_ios) == len(ios)
        assert row.lat_mean_us == pytest.approx(mean_us, rel=1e-9)
        assert row.iops * row.runtime_s == pytest.approx(len(ios), rel=1e-9)


def test_the_engine_template_refuses_what_it_cannot_run_as_planned(tmp_path):
    target = parse_target(f"file:{tmp_path / 'd.img'}?size=16MiB")
    w = Workload.mix("rnd", 100, 4 * KiB, threads=1, queue_depth=32, duration_s=0.1, name="QD32")
    with pytest.raises(EngineError, match=r"cannot run workload 'QD32' as planned: 1 threads × QD 32"):
        engine_template.TemplateEngine().run(target, w, tmp_path, "c1")
    assert not list(tmp_path.glob("c1.*"))  # refused before any IO or file


# -- the contributors' recipes point at the templates and name real fields ------------------------


def test_the_recipes_in_the_architecture_page_name_the_templates_and_real_fields():
    text = (ROOT / "docs" / "architecture.md").read_text()
    recipes = text[text.index("## How to add") : text.index("## Tests and benchmarks")]
    assert "src/iolab/suites/_template.py" in recipes and "src/iolab/engines/_template.py" in recipes
    fields = ", ".join(f.name for f in dataclasses.fields(KeyMetric))
    assert f"KeyMetric({fields})" in recipes
    methods = [m for m in dir(Engine) if not m.startswith("_") and callable(getattr(Engine, m))]
    assert [m for m in methods if f"`{m}`" not in recipes] == []
    caps = [f.name for f in dataclasses.fields(type(engine_template.TemplateEngine.capabilities))]
    assert [c for c in caps if f"{c}=" not in recipes] == []


def test_every_test_keeps_its_key_figures_in_its_own_module():
    # One place to look: the test's module in suites/ (CBW is DIRTH with another stimulus and
    # shares its figures), not compare/ or report/.
    elsewhere = {
        name: registry.get(name).key_figures.__module__
        for name in registry.MODULES
        if registry.get(name).key_figures.__module__ != registry.MODULES[name]
    }
    assert elsewhere == {"cbw": "iolab.suites.pts_dirth"}
