"""A resumed Write Saturation shows its ETA as a new run does, and counts what the stopped run's
stored rounds wrote: the write budget left after a round is the budget less every round stored
so far, before the kill and after it. One quick WSAT on a file, killed in round 4 and resumed."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from iolab.core.units import eng

from .conftest import _scratch_dir, iolab
from .test_resume import run_and_kill

BUDGET = 16 * 32 * 2**20  # --wsat-capacity-multiple 16 of a 32 MiB tested range


def written_by_round(db: Path) -> dict[int, int]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT round, SUM(write_bytes) FROM cells WHERE kind='measure' AND phase='main' GROUP BY round"
        ).fetchall()
    finally:
        con.close()
    return dict(rows)


@pytest.fixture(scope="module")
def resumed():
    """(each stored round's bytes before the resume, after it, `iolab resume`'s output)."""
    with _scratch_dir() as d:
        wsat = (
            "wsat", "-t", f"file:{d}/t.img?size=64MiB", "--cell-time", "200ms", "--capacity-limit", "32MiB",
            "--wsat-capacity-multiple", "16",
        )  # fmt: skip
        run = run_and_kill(d, d / "runs", "main-r04-c00", run=wsat)
        stored = written_by_round(run / "results.db")
        res = iolab("resume", str(run), "--no-report", timeout=600)
        assert res.returncode == 0, res.stderr + res.stdout
        yield stored, written_by_round(run / "results.db"), res.stdout


def test_a_resumed_run_shows_its_eta_and_its_steady_state_window(resumed):
    # the resumed run's progress had no plan: "ETA estimating…" to the end, "a window of 0 rounds"
    stored, _, out = resumed
    assert len(stored) >= 3
    rounds = [line for line in out.splitlines() if re.search(r"main: round \d+ done", line)]
    assert rounds and all("; ETA estimating" not in line for line in rounds), out
    assert "a window of 0 rounds" not in out
    assert all("write budget left" in line for line in rounds), out


def test_a_resumed_write_saturation_counts_the_bytes_its_stored_rounds_wrote(resumed):
    _, after, out = resumed
    first = int(re.findall(r"main: continues at round (\d+)", out)[0])
    # the stopped process's rounds wrote something, and the first resumed round's figure would
    # read otherwise without them (not a share of the budget: how much a 200 ms cell writes on
    # a file depends on the machine's speed and load; a busy CI machine wrote 18 MB)
    assert sum(b for r, b in after.items() if r < first) > 0
    said = re.findall(
        r"main: round (\d+) done.*?; ETA [^;]*?([\d.]+ [kMG]?B) of the ([\d.]+ [kMG]?B) write budget", out
    )
    assert said and int(said[0][0]) == first, out  # from the first round the resumed process ran
    own = after.get(first, 0)  # the first resumed round alone, as a count without the stored ones gives
    assert said[0][1] != eng(max(0, BUDGET - own), "B"), said[0]
    for rnd, left, budget in said:
        assert budget == eng(BUDGET, "B")
        # every round stored up to this one, the stopped process's included
        assert left == eng(max(0, BUDGET - sum(b for r, b in after.items() if r <= int(rnd))), "B"), (rnd, left)
