"""A key figure that names its phase carries that phase's steady-state caveat alone: a Throughput
run's steady SEQ 1024KiB phase printed "SEQ 1024KiB write MB/s 557.0 [a]" with "[a] STEADY STATE
NOT ACHIEVED (SEQ 128KiB: rounds 6–10)" in `show`, its --json figure listed the caveat and a
comparison marked it, because the SEQ 128KiB phase after it was not steady (a quick run on a
file). Figures that name no phase keep every caveat of the run."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from iolab.core.units import KiB
from iolab.pages.report import header
from iolab.pages.report.rundata import RunData
from tests.unit.test_report import DriveEngine, record


def _cli(*args: str) -> str:
    iolab = str(Path(sys.executable).parent / "iolab")
    env = {**os.environ, "COLUMNS": "200"}
    p = subprocess.run([iolab, *args], capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, f"{args}: {p.stdout}{p.stderr}"
    return p.stdout


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    engine = DriveEngine()
    # SEQ 1024KiB: the same rate every round (steady); SEQ 128KiB: rising every round (never)
    engine.shape = lambda rnd, call: (
        3_000.0 if engine.workload.streams[0].block_size == 1024 * KiB else 3_000.0 * (1 + rnd)
    )
    return record(tmp_path_factory.mktemp("runs"), "throughput", engine)


def test_a_steady_phase_s_figures_carry_no_other_phase_s_caveat(run):
    doc = json.loads(_cli("show", str(run), "--json"))
    phases = {p["name"]: p["steady"] for p in doc["runs"][0]["phases"]}
    assert phases == {"SEQ 1024KiB": True, "SEQ 128KiB": False}, phases
    caveats = {f["name"]: f.get("caveats") for f in doc["runs"][0]["figures"]}
    assert caveats["SEQ 1024KiB read MB/s"] is None and caveats["SEQ 1024KiB write MB/s"] is None, caveats
    assert caveats["SEQ 128KiB write MB/s"] == ["STEADY STATE NOT ACHIEVED"], caveats
    shown = " ".join(_cli("show", str(run)).replace("│", " ").split())
    assert re.search(r"SEQ 1024KiB write MB/s [\d,.]+ MB/s", shown), shown
    assert re.search(r"SEQ 128KiB write MB/s [\d,.]+ \[a\] MB/s", shown), shown
    assert "[a] STEADY STATE NOT ACHIEVED (SEQ 128KiB: rounds" in shown, shown


def test_the_header_names_the_phase_of_each_round_count(run):
    # Throughput's header said "Rounds measured 5 / 10": 5 of a 10-round limit, to a reader
    data = RunData.load(run, run)
    rounds = dict(header.parameter_items(data))["Rounds measured"]
    assert rounds == "5 (SEQ 1024KiB), 10 (SEQ 128KiB)", rounds


def _sheet(path: Path) -> Path:
    path.write_text(
        '[sheet]\nmodel = "Example"\n'
        '[[criterion]]\nname = "big writes"\nfigure = "SEQ 1024KiB write MB/s"\nmin = 1\nunit = "MB/s"\n'
        '[[criterion]]\nname = "small writes"\nfigure = "SEQ 128KiB write MB/s"\nmin = 1\nunit = "MB/s"\n'
    )
    return path


def test_a_spec_sheet_judges_a_steady_phase_s_figure_on_its_own_phase(run, tmp_path):
    """The front page held the steady SEQ 1024KiB figure "not judged: ...; steady state not
    reached" for the SEQ 128KiB phase: the caveat rule of show's [a] (header.figure_caveats)."""
    import pypdf

    _cli("report", str(run), "--spec-sheet", str(_sheet(tmp_path / "s.toml")))
    pdf = next((run / "report").glob("*.pdf"))
    page = " ".join(pypdf.PdfReader(str(pdf)).pages[0].extract_text().split())
    # a quick run: neither is judged, but only the unsteady phase's figure for its steady state
    big = re.search(r"big writes: not judged: (.*?) \(measured", page)
    small = re.search(r"small writes: not judged: (.*?) \(measured", page)
    assert big and small and big.group(1).startswith("quick run"), page
    assert "steady state" not in big.group(1) and "steady state not achieved" in small.group(1), page


def test_check_warns_of_the_figures_of_the_unsteady_phase_alone(run, tmp_path):
    """`iolab check` said "steady state not reached in RUN: its figures may still be drifting" of
    every figure of a run whose SEQ 1024KiB phase was steady."""
    engine = DriveEngine()
    engine.shape = lambda rnd, call: 3_000.0
    steady = record(tmp_path, "throughput", engine)  # both phases steady: the baseline
    doc = json.loads(_cli("check", str(run), "--baseline", str(steady), "--json"))
    [warning] = [w for w in doc["check"]["warnings"] if w.startswith("steady state")]
    said = warning.split(":")[0]
    assert "SEQ 128KiB read MB/s" in said and "SEQ 128KiB write MB/s" in said, warning
    assert "1024KiB" not in said, warning
