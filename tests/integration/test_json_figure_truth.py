"""A figure in `--json` says only what the run measured: per-round values exist only where each
window round gives its own, and a figure without a value says why. Real `iolab run --json` on a
0.1 GB simulated drive, quick, 1 s cells (well under a CPU-second a run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import iolab

pytestmark = pytest.mark.integration

TINY = "sim:enterprise-sas?user_gb=0.1"


def wsat_figures(runs: Path, *extra: str) -> tuple[dict[str, dict], str]:
    p = iolab(
        "run", "wsat", "--quick", "--cell-time", "1s", "--no-report", "--json", "-t", TINY,
        "--runs-dir", str(runs), *extra,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    [run] = json.loads(p.stdout)["runs"]
    return {f["name"]: f for f in run["figures"]}, p.stderr


def test_a_figure_the_window_rounds_do_not_change_has_no_round_values(tmp_path):
    figs, _ = wsat_figures(tmp_path)
    window = figs["IOPS, window mean (last ≤5 intervals)"]["round_values"]
    # the window mean's rounds are measured, each its own interval
    assert len(window) >= 2 and len(set(window)) == len(window), window
    # the first interval is one interval, not one per window round: it was printed once per round
    # ([45371.5, 45371.5]), a spread of zero no measurement gave
    for name in ("IOPS, first interval (FOB)", "IOPS, minimum interval"):
        assert figs[name]["value"] is not None and figs[name]["round_values"] == [], figs[name]


def test_a_figure_without_a_full_interval_says_why_in_json_and_on_screen(tmp_path):
    # 1x a 0.1 GB drive is written in two intervals the budget cuts short: no interval figure
    figs, screen = wsat_figures(tmp_path, "--wsat-capacity-multiple", "1")
    flat = " ".join(screen.split())
    for name, f in figs.items():
        assert f["value"] is None, f
        assert "ran its planned length: the write budget ran out first" in f.get("unmeasured", ""), f
        assert f"— {name}: not measured, none of its 2 intervals ran its planned length" in flat
