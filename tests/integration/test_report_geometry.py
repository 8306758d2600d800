"""Every page of the reports a reviewer would publish keeps the geometry rules
(pages/report/geometry.py and layoutcheck.py): the characterise sequence report (with real fio
on a file, the session's shared run), the PTS sequence (every PTS test, quick, on the simulated
drive), the latency-bound test, and a comparison document (the RWSW sequence report and the
RWSW comparison: test_rwsw.py, which has their runs). Each test's own report holds the same
pages as its part of the sequence report, so the sequence reports stand for them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from iolab.pages.report.layoutcheck import check_report, figures

from .conftest import iolab

pytestmark = pytest.mark.integration

SIM = "sim:enterprise-sas?user_gb=4"
QUICK = ("--quick", "--cell-time", "1s", "--max-rounds", "5")
# The PTS sequence's cells are 200 ms: its report holds the same 67 plots as with 1 s cells (their
# captions alike but for the figures, every page clean; 107 pages against 106), and the simulator
# works in proportion to the time simulated (the run 8.9 CPU-s against 13.2, 2026-12-02)
PTS_QUICK = ("--quick", "--cell-time", "200ms", "--max-rounds", "5")


def violations(html: Path) -> list[str]:
    return [str(v) for v in check_report(html)]


def sequence_report(out: str) -> Path:
    return Path(
        next(
            ln.split(": ", 1)[1]
            for ln in out.splitlines()
            if ln.startswith("sequence report: ") and ln.endswith(".html")
        )
    )


def test_the_characterise_sequence_report(characterise_on_a_file):
    _, p = characterise_on_a_file
    html = sequence_report(p.stdout)
    assert violations(html) == []
    # the consistency chart: IOPS on linear scales from 0, or a log scale of whole decades, never
    # zoomed onto the steady part's noise (47,040 to 47,080 IOPS)
    iops = [
        (c, ax["y"])
        for _, c, rec in figures(html.read_text())
        if rec
        for ax in rec["axes"]
        if ax["y"]["label"] == "IOPS"
    ]
    iops += [
        (c, ax["y"])
        for _, c, rec in figures(html.read_text())
        if rec
        for ax in rec["axes"]
        if ax["y"]["label"] == "IOPS (log scale)"
    ]
    # the mixed and entropy matrices over their series' axis (write %, entropy %), one line per QD
    for across, unit in (("write share (%)", "% W"), ("data entropy (%)", "% entropy")):
        plotted = [rec["axes"][0] for _, c, rec in figures(html.read_text()) if rec and f"vs {across}" in c]
        assert plotted
        for ax in plotted:
            assert ax["x"]["label"] == across and all(t.endswith(unit) for _, t in ax["x"]["ticks"]), ax["x"]
            assert ax["legend"] and all(lab.startswith("QD ") for lab in ax["legend"]), ax["legend"]
    # the timed preconditioning of every test that preconditions so: IOPS every second from 0
    # (entropy preconditions to steady state). fio logs no second of a 1 s preconditioning when
    # the job ends before its first 1 s log point (a CI run had none of the five): such a page
    # says the engine stored no series, and every other one draws it
    assert html.read_text().count("Preconditioning before phase") == 5  # demand, QoS, max IOPS, matrices, mixed
    timed = [y for c, y in iops if "while preconditioning" in c]
    unlogged = html.read_text().count("The engine stored no per-second series for it.")
    assert len(timed) + unlogged == 5, (len(timed), unlogged)
    assert all(y["scale"] == "linear" and y["ticks"][0][0] == 0 for y in timed), timed
    iops = [(c, y) for c, y in iops if "while preconditioning" not in c]
    consistency = [(c, y) for c, y in iops if "every second" in c or "steady part" in c]
    assert len(consistency) == 3, iops
    for caption, y in consistency:
        ticks = [v for v, _ in y["ticks"]]
        if y["scale"] == "linear":
            assert ticks[0] == 0, (caption, y)
        else:
            assert max(ticks) / min(ticks) >= 10, (caption, y)


def test_the_pts_sequence_report(scratch):
    runs = scratch / "runs"
    p = iolab("run", "pts", "--all", "-t", SIM, *PTS_QUICK, "--no-report", "--runs-dir", str(runs), timeout=1200)
    assert p.returncode == 0, p.stderr + p.stdout
    r = iolab(
        "report",
        "--sequence",
        *(str(d) for d in sorted(runs.iterdir()) if d.name[0].isdigit()),
        "--out",
        str(scratch / "seq"),
    )
    assert r.returncode == 0, r.stderr
    assert violations(next((scratch / "seq").glob("*.html"))) == []


def test_the_latency_bound_report_and_a_comparison(scratch):
    runs = scratch / "runs"
    p = iolab("run", "latency-bound", "-t", SIM, "--quick", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr + p.stdout
    [lb] = list(runs.glob("*latency-bound*/report/*.html"))
    found = violations(lb)
    # the ramp starts from a preconditioned drive, not a fresh one; the random writes are
    # workload-dependent preconditioning, not the sequential fill WIPC names
    html = lb.read_text()
    assert "PC1 (WIPC)</td><td>none" in html
    assert re.search(r"PC2 \(WDPC\)</td><td>RND 4KiB W, TC4×QD32, [\d.]+ GB written", html)
    for preset in ("enterprise-sas", "entry-sata-compress"):
        q = iolab("run", "consistency", "-t", f"sim:{preset}?user_gb=4", *QUICK, "--no-report", "--runs-dir", str(runs))
        assert q.returncode == 0, q.stderr
    c = iolab("compare", *(str(d) for d in sorted(runs.glob("*consistency*"))), "--out", str(scratch / "cmp"))
    assert c.returncode == 0, c.stderr
    found += violations(next((scratch / "cmp").glob("*.html")))
    assert found == []
