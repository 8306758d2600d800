"""The latency-bound test judges a demand step by its percentile only where the step's IOs can
measure it (units.measurable: 1,000 IOs for a 99 %). A quick run in 0.1 s cells once halved
its way below 10,000 IOPS after the first step broke the bound, called 5,000, 7,070 and 8,410
IOPS "met" on the 99 % of 500-842 IOs that `iolab show` printed as n/m, sustained 8,410 IOPS
and quoted "99 % 304.1 µs" for it in the decision; the report's step table said "yes"."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from .conftest import iolab

SHORT = ("run", "latency-bound", "--quick", "--cell-time", "100ms")


def _run(runs: Path) -> Path:
    [d] = [p for p in runs.iterdir() if "latency-bound" in p.name]
    return d


def _page_text(run: Path) -> str:
    [page] = (run / "report").glob("*.html")
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page.read_text())))


def test_steps_too_short_to_measure_the_percentile_are_never_called_met(scratch):
    runs = scratch / "runs"
    r = iolab(*SHORT, "--runs-dir", str(runs), timeout=120)
    # 10,000 IOPS (1,000 IOs) broke the bound on the simulated drive; every step below it holds
    # too few IOs in 0.1 s, so no demand is shown to meet it and none is sustained
    assert r.returncode == 2, r.stdout + r.stderr
    err = " ".join(r.stderr.split())
    assert "would complete fewer than the 1,000 IOs a 99 % is measured from" in err
    assert "in cells of 0.100 s a step needs at least 10,000 IOPS" in err
    assert "start lower" not in err  # a lower start cannot help: its steps hold fewer IOs still
    run = _run(runs)
    decisions = json.loads((run / "manifest.json").read_text())["decisions"]
    assert not [d["outcome"] for d in decisions if "(met)" in d["outcome"] or "meeting it" in d["outcome"]]
    # the bisection's steps below what a cell can measure are not run (each says why), so the
    # report's step table holds the one step measured, judged on its own IOs
    stopped = [d["outcome"] for d in decisions if "bisection stopped, not run" in d["outcome"]]
    assert stopped and all("fewer than the 1,000 IOs a 99 % is measured from" in o for o in stopped), decisions
    steps = _page_text(run).split("demand steps (99 % ≤ 1,000 µs)", 1)[1].split("Source:", 1)[0]
    assert re.search(r"10,000 [\d,]+ [\d.,]+ [\d.,]+ NO", steps), steps
    for demand in ("1,250", "2,500", "5,000"):
        assert f" {demand} " not in steps, steps


def test_a_short_step_is_passed_over_and_the_first_measured_one_is_judged(scratch):
    runs = scratch / "runs"
    steps = "steps=2000,20000,200000"  # 200 IOs in 0.1 s, then 2,000 (measured) and the drive's limit
    r = iolab(*SHORT, "--set", steps, "--set", "sustain=1s", "--runs-dir", str(runs), timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    out = " ".join(r.stdout.split())
    assert "2,000 IOPS demanded: delivered 2,000 IOPS" in out and "99 % n/m (200 IOs)" in out
    table = _page_text(_run(runs)).split("demand steps (99 % ≤ 1,000 µs)", 1)[1]
    assert re.search(r"2,000 2,000 [\d.,]+ n/m \(200 IOs\) not measured", table), table[:300]
    assert re.search(r"20,000 [\d.,]+ [\d.,]+ [\d.,]+ yes", table), table[:300]
