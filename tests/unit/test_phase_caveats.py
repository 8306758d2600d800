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
