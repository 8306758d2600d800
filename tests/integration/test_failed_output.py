"""A command that fails prints nothing on standard output: its error paragraph on standard error
is all it says. Before, `iolab show` of a run whose results hold a cell that cannot be read
printed the run's header (title, target, state, steady-state rule, audit) and then the error
saying that nothing is shown from them; `iolab audit GOOD BAD` printed GOOD's audit first."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from .conftest import iolab


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """A quick run on a small simulated drive (a few seconds), kept whole as `good` and with one
    cell's counters made unreadable as `bad`."""
    runs = tmp_path_factory.mktemp("failed-output")
    p = iolab("run", "iops", "--quick", "--no-report", "-t", "sim:enterprise-sas?user_gb=0.25", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr
    (run,) = runs.iterdir()
    run.rename(runs / "good")
    shutil.copytree(runs / "good", runs / "bad")
    with sqlite3.connect(runs / "bad" / "results.db") as db:
        last = db.execute("SELECT max(id) FROM cells").fetchone()[0]
        db.execute("UPDATE cells SET counters = '{cut' WHERE id = ?", (last,))
    return runs


@pytest.mark.parametrize("line", ["show bad", "show bad --require-steady", "audit good bad"])
def test_a_run_that_cannot_be_read_prints_nothing_on_stdout(runs, line):
    p = iolab(*line.split(), "--runs-dir", str(runs), timeout=120)
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and "table cells" in said and "nothing is shown from them" in said, p.stderr
    assert p.stdout == "", f"printed before the error:\n{p.stdout}"


def test_the_same_commands_print_a_run_that_reads_whole(runs):
    shown = iolab("show", "good", "--runs-dir", str(runs), timeout=120)
    assert shown.returncode == 0 and shown.stdout.startswith("IOPS — PTS"), shown.stderr
    assert "steady state" in shown.stdout and shown.stderr == ""
    audited = iolab("audit", "good", "good", "--runs-dir", str(runs), timeout=120)
    assert audited.returncode == 0 and audited.stdout.count("audit: ") == 2, audited.stderr
