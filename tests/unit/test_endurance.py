"""TBW and DWPD rest on the random-write WAF of the run's last random-write measurement window,
not on the whole run's (which fresh-out-of-box and preconditioning writes pull towards 1), and
say which basis they use, in the report and in the terminal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from iolab import registry
from iolab.engines.sim import SimEngine
from iolab.report.model import Table
from iolab.report.rundata import RunData, window_rows
from iolab.targets import parse_target
from tests.unit.test_report import record


@pytest.fixture(scope="module")
def qos_run(tmp_path_factory):
    return record(
        tmp_path_factory.mktemp("runs"),
        "qos",
        SimEngine(),
        parse_target("sim:enterprise-sas?user_gb=0.25"),
        settings=(("rounds", "6"), ("measured", "500ms"), ("warmup", "100ms")),
    )


def _facts(run: Path) -> dict[str, str]:
    pages = registry.get("qos").pages(RunData.load(run, run))
    tables = [b for p in pages if p.title.startswith("Endurance") for b in p.blocks if isinstance(b, Table)]
    return dict(next(t for t in tables if t.caption == "endurance figures").rows)


def test_tbw_and_dwpd_use_the_random_write_window(qos_run):
    run = RunData.load(qos_run, qos_run)
    write = run.phase("write rounds")
    steady, host = run.write_amplification(window_rows(write))
    whole = run.write_amplification()[0]
    assert steady > whole + 0.05  # the case that matters: the whole run flatters the drive
    facts = _facts(qos_run)
    assert facts["WAF the ratings rest on"].startswith(f"{steady:.2f} over ")
    assert (
        "basis: random write: the measurement window of phase 'write rounds' (rounds 2–6, steady state "
        "not evaluated)" in facts["WAF the ratings rest on"]
    )
    assert facts["WAF over the whole run, for reference"].startswith(f"{whole:.2f} over ")
    user = run.manifest.target["capacity"]
    op = [r.counters["op"] for ph in run.phases for r in ph.rows if "op" in r.counters][-1]
    tbw = user * (1 + op) * 30_000 / steady
    assert facts["TBW = flash capacity × P/E ÷ WAF"] == f"{tbw / 1e12:,.1f} TB (WAF {steady:.2f}, random write)"
    assert facts["DWPD over the warranty"] == f"{tbw / (user * 365 * 5):.2f} (WAF {steady:.2f}, random write)"


def test_terminal_states_the_endurance_basis(qos_run):
    r = subprocess.run(
        [str(Path(sys.executable).parent / "iolab"), "show", str(qos_run)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "400"},
    )
    assert r.returncode == 0, r.stderr
    run = RunData.load(qos_run, qos_run)
    steady = run.write_amplification(window_rows(run.phase("write rounds")))[0]
    line = next(x for x in r.stdout.splitlines() if x.startswith("endurance:"))
    assert line.startswith(
        f"endurance: WAF {steady:.2f}, basis: random write: the measurement window of phase "
        "'write rounds' (rounds 2–6, steady state not evaluated); TBW "
    )
    assert "P/E cycles (preset); DWPD " in line and "over 5 years (preset)" in line
