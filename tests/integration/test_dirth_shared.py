"""DIRTH's MidIOPS on another point's TC/QD, as a user meets it: with only TC1/QD1 and TC1/QD32
under the ART cutoff (`--set threads=1 --set depths=1,32` on the simulated SAS drive), Mid is
Min's point. Its pre-write and histogram (70 min at full length) ran a second time at that
point; now the point is measured once, the decision says whose cells Mid reads, and every
output gives Mid the shared figures with the label "MidIOPS = MinIOPS point TC1/QD1, histogram
shared". A run stored before points were shared (Mid with its own cells) reads as before."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from iolab.figures.points import MIN_RULE
from iolab.pages.report.layoutcheck import check_report
from iolab.store.runstore import RunStore

from .conftest import SMALL_SIM, iolab
from .test_review_labels import flat, only_run, page_text

pytestmark = pytest.mark.integration

SHARED = "MidIOPS = MinIOPS point TC1/QD1, histogram shared"
MID_FIGURE = "99.99 % RT at the MidIOPS point (histogram)"
# 15 s of histogram workload: enough IOs at TC1/QD1 for a 99.99 % (100,000) on the simulated drive
ARGS = ("dirth", "--quick", "--cell-time", "200ms", "-t", SMALL_SIM, "--set", "histogram_time=15s")
COINCIDE = ("--set", "threads=1", "--set", "depths=1,32")


def figures(run: Path) -> dict[str, dict]:
    p = iolab("show", str(run), "--json")
    assert p.returncode == 0, p.stderr
    return {f["name"]: f for f in json.loads(p.stdout)["runs"][0]["figures"]}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    where = tmp_path_factory.mktemp("shared") / "runs"
    return [only_run(where, *ARGS, *COINCIDE) for _ in (1, 2)]


def test_mid_on_min_s_point_is_measured_once_and_its_decision_says_so(runs):
    store = RunStore.open(runs[0])
    # the engine ran the operating points' pre-write and histogram once per point: no Mid cell
    keys = [c.cell_key for c in store.cells("operating points", complete_only=False)]
    assert keys == ["MaxIOPS pre-write", "MaxIOPS TC1/QD32", "MinIOPS pre-write", "MinIOPS TC1/QD1"], keys
    assert not store.cells(kind="interrupted", complete_only=False)
    [d] = store.manifest.decisions
    assert d["chosen"]["cells_of"] == {"MidIOPS": "MinIOPS"}
    assert d["chosen"]["MidIOPS"] == d["chosen"]["MinIOPS"]  # Mid is still decided, and on Min's point
    assert SHARED in d["outcome"]
    # the stored plan holds the phase as it ran
    [op] = [p for p in store.manifest.plan["phases"] if p["name"] == "operating points"]
    assert op["cells"] == keys


def test_show_json_and_the_report_give_mid_the_shared_figures_with_their_label(runs):
    store = RunStore.open(runs[0])
    [low] = [c for c in store.cells("operating points") if c.cell_key == "MinIOPS TC1/QD1"]
    shown = flat(iolab("show", str(runs[0])).stdout)
    m = re.search(re.escape(SHARED) + r": ([\d,]+) IOPS, ART [\d.,]+ µs, MRT [\d.,]+ µs \(the MinIOPS cells\)", shown)
    assert m and float(m.group(1).replace(",", "")) == pytest.approx(low.iops, rel=1e-3), shown[-3000:]
    # the key figure of Mid is Min's histogram's, measured, and says whose it is
    figs = figures(runs[0])
    mid, low_fig = figs[MID_FIGURE], figs["99.99 % RT at the MinIOPS point (histogram)"]
    assert mid["value"] is not None and mid["value"] == low_fig["value"], (mid, low_fig)
    assert mid["note"] == SHARED and not mid["caveat"]
    assert "note" not in low_fig and "note" not in figs["99.99 % RT at the MaxIOPS point (histogram)"]
    assert f"{MID_FIGURE}: {SHARED}" in shown
    # the report: Min's histogram page is titled for both, the tables give Mid the shared row
    iolab("report", str(runs[0]))
    [html] = (runs[0] / "report").glob("*.html")
    text = page_text(html)
    assert "Response Time Histogram — MinIOPS TC1/QD1 = MidIOPS" in text
    assert "Response Time Histogram — MidIOPS" not in text
    assert check_report(html) == []  # the longer caption and title still fit their page
    assert re.search(re.escape(SHARED) + r" [\d,]+ [\d.,]+ [\d.,]+ Source", text), text[-5000:]
    assert (
        "MidIOPS IOPS closest to (Max + Min) / 2 among points with ART < 5 ms TC1/QD1 (= MinIOPS point, histogram shared)"
        in text
    )


def test_compare_and_check_read_mid_from_the_shared_cells_and_say_so(runs, tmp_path):
    p = iolab("compare", *map(str, runs), "--out", str(tmp_path / "cmp"), "--json")
    assert p.returncode == 0, p.stderr
    said, [html] = flat(p.stderr), (tmp_path / "cmp").glob("*.html")  # --json: the terminal's on stderr
    text = page_text(html)
    assert len(re.findall(r"TC1/QD1: [\d,]+ IOPS, ART [\d.,]+ µs \(= MinIOPS point, histogram shared\)", text)) == 2
    assert f"{MID_FIGURE} (D1, D2): {SHARED}." in text, text[:4000]
    # the terminal's ranking says it under its table as the report does (it printed no note)
    assert f"{MID_FIGURE} (D1, D2): {SHARED}" in said, said
    # ... and the --json ranking with it, on each drive's figure (it had the caveats alone)
    ranking = json.loads(p.stdout)["ranking"]
    assert ranking["notes"] == [f"{MID_FIGURE} (D1, D2): {SHARED}"], ranking["notes"]
    figs = {f["name"]: f for f in ranking["figures"]}
    assert figs[MID_FIGURE]["notes"] == [SHARED, SHARED] and set(figs[MID_FIGURE.replace("Mid", "Min")]["notes"]) == {
        None
    }
    # ranked beside a published drive, the measured run's notes stay (its table dropped them)
    sheet = tmp_path / "published.csv"
    sheet.write_text(f"drive,figure,value,unit,direction\nVendor X1,{MID_FIGURE.replace('Mid', 'Min')},900,µs,\n")
    p = iolab("compare", str(runs[0]), str(sheet), "--json")
    assert p.returncode == 0, p.stderr
    assert f"{MID_FIGURE} (D1): {SHARED}" in flat(p.stderr), p.stderr
    figs = {f["name"]: f for f in json.loads(p.stdout)["ranking"]["figures"]}
    assert figs[MID_FIGURE]["notes"] == [SHARED, None], figs[MID_FIGURE]
    p = iolab("check", str(runs[1]), "--baseline", str(runs[0]))
    assert p.returncode in (0, 7), p.stderr
    out = flat(p.stdout)
    assert f"{MID_FIGURE}: {SHARED} ({runs[0].name}, {runs[1].name})" in out, out
    doc = json.loads(iolab("check", str(runs[1]), "--baseline", str(runs[0]), "--json").stdout)
    [note] = [n for n in doc["check"]["notes"] if n.startswith(MID_FIGURE)]
    assert SHARED in note
    [v] = [f for f in doc["check"]["figures"] if f["name"] == MID_FIGURE]
    assert v["baseline"]["value"] is not None and v["candidate"]["value"] is not None


def test_a_run_that_measured_mid_on_its_own_reads_as_before(tmp_path):
    # three points under the cutoff: Mid (TC1/QD4) is measured on its own; then its decision is
    # made the one an iolab before shared points stored when Mid fell on Min's point
    run = only_run(tmp_path / "runs", *ARGS, "--set", "threads=1", "--set", "depths=1,4,32")
    doc = json.loads((run / "manifest.json").read_text())
    [d] = doc["decisions"]
    assert "cells_of" not in d["chosen"]
    own = figures(run)[MID_FIGURE]
    d["chosen"]["MidIOPS"] = d["chosen"]["MinIOPS"]
    # and the outcome those runs stored, MinIOPS's rule given as its own label
    assert MIN_RULE in d["outcome"]
    d["outcome"] = d["outcome"].replace(MIN_RULE, "TC1/QD1")
    (run / "manifest.json").write_text(json.dumps(doc))
    figs = figures(run)
    assert figs[MID_FIGURE]["value"] == own["value"] and "note" not in figs[MID_FIGURE]  # its own cells
    shown = flat(iolab("show", str(run)).stdout)
    assert "MidIOPS is the same point as MinIOPS (TC1/QD1)" in shown and "histogram shared" not in shown
    # its decision is printed as today's runs word it ("... µs: TC1/QD1)": the point as its own reason)
    today = re.compile(r"MinIOPS at TC1/QD1 \([\d,.]+ IOPS, ART [\d,.]+ µs: " + re.escape(MIN_RULE) + r"\)")
    assert today.search(shown) and "µs: TC1/QD1)" not in shown, shown
    [stored] = json.loads(iolab("show", str(run), "--json").stdout)["runs"][0]["decisions"]
    assert today.search(stored["outcome"]) and today.search(stored["text"]), stored
    iolab("report", str(run))
    text = page_text(next((run / "report").glob("*.html")))
    assert "Response Time Histogram — MidIOPS TC1/QD4" in text and "histogram shared" not in text
    assert "TC1/QD1 (= MinIOPS)" in text
    assert today.search(text) and "µs: TC1/QD1)" not in text


def _killed_in_the_operating_points(scratch: Path) -> Path:
    """A quick DIRTH on a file whose Mid is Min's point, killed (-9) once the MaxIOPS histogram
    cell has begun: its pre-write stored, the rest of the phase not."""
    from .test_resume import run_and_kill

    target = f"file:{scratch}/target.img?size=64MiB"
    run = ("dirth", "--cell-time", "200ms", "--max-rounds", "5", "-t", target, *COINCIDE)
    return run_and_kill(scratch, scratch / "runs", "operating_points-r01-c01", run)


def _resumed(run: Path) -> tuple[RunStore, str]:
    p = iolab("resume", str(run), "--no-report", timeout=900)
    assert p.returncode == 0, p.stderr + p.stdout
    store = RunStore.open(run)
    assert store.manifest.state == "complete"
    assert [c.cell_key for c in store.cells("operating points")] == [
        "MaxIOPS pre-write",
        "MaxIOPS TC1/QD32",
        "MinIOPS pre-write",
        "MinIOPS TC1/QD1",
    ]
    [d] = [d for d in store.manifest.decisions if d["phase"] == "operating points"]
    assert d["chosen"]["cells_of"] == {"MidIOPS": "MinIOPS"}
    assert f"{SHARED}:" in flat(iolab("show", str(run)).stdout)
    return store, flat(p.stdout)


def test_resume_in_the_operating_points_measures_the_shared_point_once(scratch):
    run = _killed_in_the_operating_points(scratch)
    store, said = _resumed(run)
    assert "operating points: cannot continue from round 1: no round had finished" in said
    assert "builds it from the stored results" not in said
    assert [c.cell_key for c in store.cells(kind="interrupted", complete_only=False)] == ["MaxIOPS pre-write"]


def test_resume_of_a_run_stored_with_mid_measured_twice_runs_its_operating_points_as_built_now(scratch):
    # the run as an iolab that measured Mid on Min's point a second time left it: its stored
    # phase has Mid's cells between Max's and Min's, its decision no `cells_of`
    run = _killed_in_the_operating_points(scratch)
    doc = json.loads((run / "manifest.json").read_text())
    [op] = [p for p in doc["plan"]["phases"] if p["name"] == "operating points"]
    op["cells"][2:2] = ["MidIOPS pre-write", "MidIOPS TC1/QD1"]
    [d] = [d for d in doc["decisions"] if d["phase"] == "operating points"]
    del d["chosen"]["cells_of"]
    d["outcome"] = d["outcome"].split(f"; {SHARED}")[0]
    (run / "manifest.json").write_text(json.dumps(doc))
    store, said = _resumed(run)
    built = (
        re.escape(
            "operating points: this iolab builds it from the stored results as cells MaxIOPS pre-write, "
            "MaxIOPS TC1/QD32, MinIOPS pre-write, MinIOPS TC1/QD1 (the run stored MaxIOPS pre-write, MaxIOPS "
            "TC1/QD32, MidIOPS pre-write, MidIOPS TC1/QD1, MinIOPS pre-write, MinIOPS TC1/QD1), so what it measured is set "
            "aside ("
        )
        + r"\d+ raw files in raw/interrupted-\*/\) and it runs again from its start as built now\."
    )
    assert re.search(built, said), said
    assert "operating points: decided by dirth-operating-points: " in said  # decided again as it runs
    # the decision the stopped run stored goes to the notes; the phase is decided again as it runs
    assert "operating points: superseded decision (its phase runs again): MaxIOPS at TC1/QD32" in said
    assert [c.cell_key for c in store.cells(kind="interrupted", complete_only=False)] == ["MaxIOPS pre-write"]
    [op] = [p for p in store.manifest.plan["phases"] if p["name"] == "operating points"]
    assert op["cells"] == [c.cell_key for c in store.cells("operating points")]


def _killed_once_written(args: list[str], raw: Path, name: str) -> None:
    """`iolab ARGS` killed (-9) once a raw file named `name...` is written in `raw` by it: one that
    was there before it started (or was moved aside and back) does not count."""
    import signal
    import subprocess
    import time

    from .conftest import IOLAB

    start = time.time()
    proc = subprocess.Popen([*IOLAB, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while proc.poll() is None and time.monotonic() < deadline:
            if any(p.stat().st_mtime >= start for p in raw.glob(f"{name}*")):
                break
            time.sleep(0.02)
        assert proc.poll() is None, "it ended before the kill point"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()


def test_a_resume_stopped_before_it_reached_the_operating_points_again_resumes(tmp_path):
    """Killed in the operating points on the simulated drive, whose state ends with its process:
    resume runs the phases again from the preconditioning's purge and supersedes the points'
    decision; killed again in the preconditioning, the next resume built the operating points from
    what was left (nothing of the demand variation) and refused: "no operating point could be
    chosen"; the run could not be finished, and its decision was lost."""
    runs = tmp_path / "runs"
    _killed_once_written(
        ["run", *ARGS, *COINCIDE, "--no-report", "--runs-dir", str(runs)], runs, "*/raw/operating_points"
    )
    [run] = runs.iterdir()
    _killed_once_written(["resume", str(run), "--no-report"], run / "raw", "preconditioning-r02")
    assert RunStore.open(run).manifest.decisions == []  # superseded; the points not decided again yet
    p = iolab("resume", str(run), "--no-report")
    assert p.returncode == 0, p.stdout + p.stderr
    store = RunStore.open(run)
    [d] = store.manifest.decisions
    assert store.manifest.state == "complete" and d["phase"] == "operating points" and SHARED in d["outcome"]
    assert [c.cell_key for c in store.cells("operating points")][-1] == "MinIOPS TC1/QD1"
