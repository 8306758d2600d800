"""The checks a stored run's rows get before anything is shown from them, through the installed
`iolab` command on real runs edited with sqlite3: a tracked cell without the value its
steady-state variable tracks (audit and resume refuse to count it as 0), a phase's first
steady-state verdict deleted whole, and per-second rows deleted from a run that never completed
(no end-of-run audit counted them)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from .conftest import SMALL_SIM, iolab, killed_at, quick_sim_run
from .test_resume import run_and_kill
from .test_tampered_runs import every_command_refuses

TRACKED = "0/100 4KiB"  # latency's tracked cell (ART), its metric lat_mean_us


def edit(db: Path, sql: str) -> None:
    con = sqlite3.connect(db)
    with con:
        assert con.execute(sql).rowcount > 0, sql
    con.close()


def test_a_tracked_cell_without_its_value_fails_the_audit_naming_it(scratch):
    """Before: the audit counted the missing value as 0 and said the window fails the rule
    (range 125 % of the average), a verdict made of a number no run measured."""
    runs = scratch / "runs"
    run = quick_sim_run(runs)
    edit(
        run / "results.db",
        f"UPDATE cells SET lat_mean_us=NULL WHERE kind='measure' AND round=3 AND cell_key='{TRACKED}'",
    )
    p = iolab("audit", run.name, "--runs-dir", str(runs), timeout=120)
    text = " ".join(p.stdout.split())
    assert p.returncode == 8 and "Traceback" not in p.stdout + p.stderr, p.stdout + p.stderr
    assert (
        "FAIL steady-evidence: main: its steady-state verdict cannot be checked: main round 3: tracking metric "
        f"lat_mean_us was not measured in cell {TRACKED}" in text
    ), text
    assert "its cell 0" not in text and "fails the rule" not in text


def rows(db: Path, sql: str) -> list[tuple]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


KEPT = ("SELECT * FROM cells WHERE round<=2 ORDER BY id", "SELECT * FROM steady", "SELECT kind FROM cells")


def resume_refused(run: Path) -> str:
    """`iolab resume RUN`, which must refuse (exit 2, no traceback) with the rows it keeps as they
    were; what it said, on one line."""
    stored = [rows(run / "results.db", q) for q in KEPT]
    p = iolab("resume", str(run), "--no-report", timeout=300)
    said = " ".join((p.stderr + p.stdout).split())
    assert p.returncode == 2 and "Traceback" not in said, said
    assert [rows(run / "results.db", q) for q in KEPT] == stored
    return said


def test_resume_refuses_a_tracked_cell_without_its_value_and_sets_nothing_aside(scratch):
    """The same builder as the audit's: resume refuses to rebuild the window over it, before it
    sets the unfinished round aside or stores a verdict."""
    runs = scratch / "runs"
    run = run_and_kill(scratch, runs, "main-r03-c03")
    edit(
        run / "results.db",
        f"UPDATE cells SET lat_mean_us=NULL WHERE kind='measure' AND round=2 AND cell_key='{TRACKED}'",
    )
    said = resume_refused(run)
    assert (
        f"main round 2: tracking metric lat_mean_us was not measured in cell {TRACKED} (no IOs in that "
        "direction?), so steady state cannot be evaluated on resume." in said
    ), said


def test_the_first_steady_state_verdict_deleted_whole_is_refused(scratch):
    """WSAT stores a verdict each round from the first whose cells fill the window; before, with
    that round's rows deleted, the next round passed for the first and every command read the
    run as whole."""
    runs = scratch / "runs"
    p = iolab("run", "wsat", "--quick", "-t", SMALL_SIM, "--no-report", "--runs-dir", str(runs / "w"), timeout=300)
    assert p.returncode in (0, 6), p.stderr
    [run] = (runs / "w").iterdir()
    run.rename(runs / "bad")
    con = sqlite3.connect(runs / "bad" / "results.db")
    (first,) = con.execute("SELECT MIN(round) FROM steady").fetchone()
    (last,) = con.execute("SELECT rounds FROM phases WHERE name='main'").fetchone()
    con.close()
    assert first < last, "a verdict of one round alone: deleting it is the no-row case"
    edit(runs / "bad" / "results.db", f"DELETE FROM steady WHERE round={first}")
    every_command_refuses(
        scratch,
        runs,
        f"table steady, phase 'main' lacks the steady-state verdict of round {first} ('IOPS 0/100 4KiB'), which "
        f"the run stored for every round from {first}, the first whose cells fill its window,",
    )


def test_per_second_rows_deleted_from_an_interrupted_run_are_refused(scratch):
    """A run killed in its third round has no end-of-run audit to count its cells with rows;
    before, a cell's rows deleted went unnoticed and its per-second plot was left out."""
    runs = scratch / "runs"
    args = ["run", "latency", "--quick", "-t", SMALL_SIM, "--no-report", "--runs-dir", str(runs / "k")]
    killed_at(args, runs / "k", "*/raw/main-r03-c05-*")
    [run] = (runs / "k").iterdir()
    run.rename(runs / "bad")
    for command in ("show", "audit"):  # whole, it reads as any interrupted run
        p = iolab(command, "bad", "--runs-dir", str(runs), timeout=120)
        assert p.returncode in (0, 6, 8) and "Traceback" not in p.stderr, p.stderr
    edit(
        runs / "bad" / "results.db",
        "DELETE FROM series WHERE cell_id=(SELECT id FROM cells WHERE kind='measure' AND round=2 AND ordinal=4)",
    )
    every_command_refuses(
        scratch,
        runs,
        "table series, no per-second rows for 1 cell whose stored engine output holds them (phase 'main' round 2 "
        "cell '65/35 4KiB')",
    )


def test_show_marks_per_second_rows_edited_after_the_run_s_audit(scratch):
    """Before: `iolab show` printed the audit stored at the run's end ("7 passed") over rows that
    now add up to three times the cell's IOs; only `iolab audit` made the check again."""
    runs = scratch / "runs"
    run = quick_sim_run(runs)
    edit(
        run / "results.db",
        "UPDATE series SET read_iops=read_iops*3, mbps=mbps*3 WHERE cell_id="
        "(SELECT id FROM cells WHERE kind='measure' AND round=2 AND cell_key='100/0 4KiB')",
    )
    p = iolab("show", run.name, "--runs-dir", str(runs), timeout=120)
    text = " ".join(p.stdout.split())
    assert p.returncode in (0, 6) and "Traceback" not in p.stdout + p.stderr, p.stderr
    assert "FAILED: series-totals" in text, text
    assert "FAIL series-totals: main round 2 100/0 4KiB: the per-second rows add up to" in text, text


@pytest.mark.parametrize("kind", ["sim", "file"])
def test_resume_refuses_a_complete_round_that_lost_a_cell_on_either_engine(scratch, kind):
    """Before: resume of a simulated drive's run never read its stored rows through the store's
    checks: with a cell deleted from its complete round 1 it set the phase aside as 'interrupted'
    and ran it again (exit 0), where a fio run's resume refuses it. Both now refuse alike, with
    nothing set aside."""
    runs = scratch / "runs"
    sim = ("latency", "--cell-time", "200ms", "-t", SMALL_SIM)
    run = run_and_kill(scratch, runs, "main-r03-c03", sim if kind == "sim" else ())
    edit(run / "results.db", "DELETE FROM cells WHERE kind='measure' AND round=1 AND ordinal=2")
    said = resume_refused(run)
    assert (
        f"{run / 'results.db'}: table cells, phase 'main' round 1 is marked complete but holds 8 of its 9 planned "
        "cells (missing: '100/0 0.5KiB'). The run's stored results were changed after it wrote them; nothing is "
        "shown from them." in said
    ), said
    assert not list(run.glob("raw/interrupted-*"))
