"""Report wording that matches the run: the steady-state rule names the round limit the phases
really have (or that a phase only reports it), a partial last interval is not called complete,
the live display counts cells the one way, and the XSR comparison column uses the run's own
recovery tolerance."""

from __future__ import annotations

import re

from iolab.pages.report.pts import wsat_pages
from iolab.pages.report.rundata import RunData

from .conftest import iolab

SMALL = "sim:enterprise-sas?blocks_per_plane=64&pages_per_block=16&op=0.28"


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_wsat_states_its_own_limit_and_its_partial_last_interval(tmp_path):
    runs = tmp_path / "runs"
    # the 6.3× budget runs out in interval 19 of 1 s (the profile's round limit is 25)
    p = iolab(
        "run",
        "wsat",
        "--target",
        SMALL,
        "--cell-time",
        "1s",
        "--wsat-capacity-multiple",
        "6.3",
        "--no-report",
        "--runs-dir",
        str(runs),
    )
    assert p.returncode == 0, p.stderr
    out = _flat(p.stdout)
    rule = re.search(r"steady-state rule: (.*?) note:|steady-state rule: (.*?) main:", out)
    assert rule and "at most 25 rounds" not in rule.group(0)  # main: the profile's limit beside 14 intervals
    assert "reported, not a stop, in main" in out
    run = RunData.load(next(runs.iterdir()), tmp_path / "work")
    sources = " ".join(f.source for page in wsat_pages(run) for f in page.blocks if hasattr(f, "source"))
    last = run.phases[0].rows[-1].round
    assert f"every interval (rounds 1–{last}; round {last} partial)" in sources
    assert "every complete interval" not in sources


def test_xsr_key_figure_uses_the_runs_recovery_tolerance(tmp_path):
    p = iolab("run", "xsr", "--quick", "--set", "recovery_tolerance=0.2", "--no-report", "--runs-dir", str(tmp_path))
    assert p.returncode == 0, p.stderr
    out = _flat(p.stdout.replace("│", " "))
    # main: "recovery to 95 % of group 1 mean TP", computed with 5 % whatever was set
    assert "Group 3 recovery to 80 % of group 1 mean TP" in out and "95 %" not in out
