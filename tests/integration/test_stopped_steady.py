"""A run stopped after its windows were judged (Ctrl-C after round 6 of a latency run that is
not steady yet) did not reach steady state, at least not before it stopped; it was evaluated.
It was labelled "steady state not evaluated (fewer than five complete rounds: rounds 1–7)" by
`show`, the report's first page and its tables, `show --json` and the comparison's banner,
while the steady-state table beneath showed the windows judged and failing. Every place words
it from core/steady.phase_verdict; `iolab watch` gives the phase the same verdict."""

from __future__ import annotations

import html
import json
import re

import pytest

from tests.integration.conftest import iolab
from tests.integration.test_faults import ctrl_c_at
from tests.integration.test_watch_cli import free_port, get, watching

pytestmark = pytest.mark.integration

# 2300 µs programs, twice the preset's: a quick latency run's windows fail for its first rounds
SLOW = "sim:enterprise-sas?t_prog_us=2300&seed=1"
QUICK = ("--quick", "--cell-time", "1s", "--no-report")


def flat(text: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", text)).split())


def test_a_run_stopped_after_its_windows_failed_is_not_reached_everywhere_never_not_evaluated(tmp_path):
    runs = tmp_path / "runs"
    # the 8th round stored (precondition first) is the one Ctrl-C interrupts: rounds 1-6 are kept
    p = ctrl_c_at(
        "iolab.store.runstore:RunStore.finish_round", 8, "run", "latency", "-t", SLOW, *QUICK, "--runs-dir", str(runs)
    )
    assert p.returncode == 130, p.stderr
    [run] = runs.iterdir()
    record = json.loads(iolab("show", str(run), "--json").stdout)["runs"][0]
    [phase] = record["phases"]
    assert record["state"] == "interrupted" and phase["rounds"] >= 5 and phase["tracking"], record
    # the windows were judged and none was accepted
    assert not any(t["steady"] for t in phase["tracking"])
    assert (record["steady_state"], phase["steady"]) == ("not-reached", False)

    # the export's phase row and window rows say the same
    exported = json.loads(iolab("export", str(run), "--format", "json", "--out", "-").stdout)
    assert [p["steady"] for p in exported["phases"]] == [False]
    assert {w["phase_steady"] for w in exported["window"]} == {False}

    shown = flat(iolab("show", str(run)).stdout)
    assert f"main: {phase['rounds']} complete rounds; steady state NOT reached; unfinished" in shown
    assert "not evaluated" not in shown

    assert iolab("report", str(run)).returncode == 0
    page = flat(next((run / "report").glob("*.html")).read_text())
    window = f"rounds {phase['window'][0]}–{phase['window'][-1]}"
    assert f"SS rounds {window} (STEADY STATE NOT ACHIEVED)" in page and "Verdict NOT steady" in page
    assert "not evaluated" not in page.lower() and "too few rounds" not in page and "fewer than five" not in page

    # a comparison's banner says the same of it (D2)
    ok = iolab("run", "latency", "-t", "sim:enterprise-sas?seed=1", *QUICK, "--runs-dir", str(tmp_path / "ok"))
    assert ok.returncode == 0, ok.stderr
    [steady] = (tmp_path / "ok").iterdir()
    c = iolab("compare", str(steady), str(run), "-o", str(tmp_path / "cmp"))
    assert f"STEADY STATE NOT ACHIEVED (D2 main: {window})" in flat(c.stdout + c.stderr), c.stderr
    assert "NOT EVALUATED" not in c.stdout + c.stderr
    # ranked alone beside a datasheet, it carries the same caveats as beside another run
    sheet = tmp_path / "datasheets.csv"
    sheet.write_text("drive,figure,value,unit\nVendor X1,ART RND 4KiB R/W 65/35,80,µs\n")
    alone = flat(iolab("compare", str(run), str(sheet)).stdout)
    for said in ("INCOMPLETE RUN(S): D1 (interrupted)", f"STEADY STATE NOT ACHIEVED (D1 main: {window})", "[a]"):
        assert said in alone, alone

    # `iolab watch` gives the phase the same verdict: judged, not reached
    port = free_port()
    with watching(runs, port):
        status, body = get(f"/api/runs/{run.name}", f"127.0.0.1:{port}", port)
    assert status == 200
    assert json.loads(body)["summary"]["steady"] == {
        "evaluated": True,
        "passing": 0,
        "variables": len(phase["tracking"]),
        "reached": False,
        "run": "not-reached",  # the run's own state, as `show` gives it (the page's steady column)
    }
