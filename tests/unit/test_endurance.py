"""TBW and DWPD rest on the random-write WAF of the run's last random-write measurement window,
not on the whole run's (which fresh-out-of-box and preconditioning writes pull towards 1), and
of its incompressible cells only (a compressing drive's WAF below 1 on compressible data would
flatter it), and say which basis and cells they use, in the report and in the terminal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from iolab.api import registry
from iolab.engines.sim import SimEngine
from iolab.pages.report.model import Table
from iolab.pages.report.rundata import RunData, window_rows
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


def _facts(run: Path, test: str = "qos") -> dict[str, str]:
    pages = registry.get(test).pages(RunData.load(run, run))
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
        "basis: incompressible random write: the measurement window of phase 'write rounds' (rounds 2–6, "
        "no steady state tracked), cells " in facts["WAF the ratings rest on"]
    )
    assert facts["WAF over the whole run, for reference"].startswith(f"{whole:.2f} over ")
    user = run.manifest.target["capacity"]
    op = [r.counters["op"] for ph in run.phases for r in ph.rows if "op" in r.counters][-1]
    tbw = user * (1 + op) * 30_000 / steady
    what = f"(WAF {steady:.2f}, incompressible random write)"
    assert facts["TBW = flash capacity × P/E ÷ WAF"] == f"{tbw / 1e12:,.1f} TB {what}"
    assert facts["DWPD over the warranty"] == f"{tbw / (user * 365 * 5):.2f} {what}"


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
        f"endurance: WAF {steady:.2f}, basis: incompressible random write: the measurement window of phase "
        "'write rounds' (rounds 2–6, no steady state tracked), cells "
    )
    assert "P/E cycles (preset); DWPD " in line and "over 5 years (preset)" in line


def test_the_entropy_test_rates_endurance_on_its_incompressible_cells_only(tmp_path):
    """The entropy test's random-write window holds 0 %, 50 % and 100 % entropy cells; on a
    compressing drive the 0 % cells write less flash than host data (WAF below 1). TBW and
    DWPD come from the 100 % cells alone, and the terminal and the Endurance page name them."""
    iolab = str(Path(sys.executable).parent / "iolab")
    env = {**os.environ, "COLUMNS": "400"}
    args = ("run", "entropy", "--quick", "-t", "sim:entry-sata-compress", "--no-report", "--runs-dir", str(tmp_path))
    r = subprocess.run([iolab, *args], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    [run_dir] = [p for p in tmp_path.iterdir() if p.is_dir()]
    run = RunData.load(run_dir, run_dir)
    window = window_rows(run.phase("write"))
    full = [x for x in window if x.workload["entropy"] == 1.0]
    assert {x.workload["entropy"] for x in window} == {0.0, 0.5, 1.0} and len(full) == 2
    rated = run.write_amplification(full)[0]
    mixed = run.write_amplification(window)[0]
    packed = run.write_amplification([x for x in window if x.workload["entropy"] == 0.0])[0]
    assert packed < 1.0 and rated > mixed + 0.5  # the compressible cells would flatter the rating
    user = run.manifest.target["capacity"]
    op = [x.counters["op"] for ph in run.phases for x in ph.rows if "op" in x.counters][-1]
    dwpd = user * (1 + op) * 30_000 / rated / (user * 365 * 5)

    shown = subprocess.run([iolab, "show", str(run_dir)], capture_output=True, text=True, timeout=120, env=env)
    line = next(x for x in shown.stdout.splitlines() if x.startswith("endurance:"))
    assert line.startswith(f"endurance: WAF {rated:.2f}, basis: incompressible random write: ")
    assert "cells 100% entropy QD1, 100% entropy QD32; left out, compressible data: 50% entropy QD1, " in line
    assert f"DWPD {dwpd:.2f} over 5 years" in line

    facts = _facts(run_dir, "entropy")
    assert facts["WAF the ratings rest on"].startswith(f"{rated:.2f} over ")
    assert "cells 100% entropy QD1, 100% entropy QD32; left out, compressible data" in facts["WAF the ratings rest on"]
    assert facts["DWPD over the warranty"] == f"{dwpd:.2f} (WAF {rated:.2f}, incompressible random write)"


def test_drive_counters_and_the_whole_run_leave_out_what_wrote_compressible_data():
    """A real drive counts writes per phase, not per cell: a phase that wrote compressible data
    is left out whole; without a window or drive counters, the compressible cells are."""
    from types import SimpleNamespace as NS

    from iolab.figures.endurance import endurance_waf

    def cell(phase, entropy, host, flash=None):
        counters = {"host_write_bytes": host, **({"flash_write_bytes": flash} if flash else {})}
        streams = [{"access": "seq", "op": "write"}]
        return NS(
            phase=phase,
            cell_key=f"{entropy:.0%}",
            workload={"entropy": entropy, "streams": streams},
            counters=counters,
            round=1,
        )

    def snaps(host, media):
        return {"start": {"host_bytes": 0, "media_bytes": 0}, "end": {"host_bytes": host, "media_bytes": media}}

    rows = [cell("fill", 1.0, 10), cell("packed", 0.0, 10), cell("packed", 1.0, 10)]
    m = NS(endurance={"fill": snaps(4 * 10**9, 8 * 10**9), "packed": snaps(4 * 10**9, 10**9)})
    w = endurance_waf(m, [], rows)
    assert w is not None and w.value == 2.0 and w.cells == ("fill",) and w.left_out == ("packed",)
    assert "phases fill; left out, compressible data: packed" in w.basis

    rows = [cell("a", 1.0, 100, 300), cell("a", 0.0, 100, 20), cell("b", 1.0, 100, 100)]
    w = endurance_waf(NS(endurance={}), [], rows)
    assert (
        w is not None and w.value == 2.0 and w.left_out == ("a 0%",) and w.short == "whole run, incompressible writes"
    )
