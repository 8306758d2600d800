"""What `iolab resume` says and leaves: a resumed simulated run's purge said once, a run stopped
before it stored anything said as such (with the command that starts it again), and a refused
resume that changes nothing stored."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iolab.api.runlist import list_runs
from iolab.run.leftovers import leftovers
from iolab.store.unstarted import NOTHING_STORED

from .conftest import IOLAB, SMALL_SIM, iolab, killed_at
from .test_resume import run_and_kill

QUICK_SIM = ["run", "latency", "--quick", "-t", SMALL_SIM, "--no-report"]


def said(p: subprocess.CompletedProcess) -> str:
    return " ".join(p.stderr.split())  # Rich wraps long lines


def refused(p: subprocess.CompletedProcess) -> str:
    """A refusal: exit 2, one paragraph, no traceback; its text on one line."""
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and "\n\n" not in p.stderr.strip(), p.stderr
    return said(p)


def stored(run: Path) -> dict[str, bytes]:
    """Every file of the run directory, as its bytes."""
    return {str(f.relative_to(run)): f.read_bytes() for f in sorted(run.rglob("*")) if f.is_file()}


def test_a_resumed_simulated_run_says_its_purge_once(scratch):
    """A simulated drive's phase runs again from its purge on resume: the run records two purges
    of one phase, which the results printed as the same line twice."""
    runs = scratch / "runs"
    killed_at([*QUICK_SIM, "--runs-dir", str(runs)], runs, "*/raw/main-r02-*", signal.SIGINT)  # round 1 is stored
    [r] = list_runs(runs)
    assert r.state == "interrupted"
    for p in (iolab("resume", str(r.path), "--no-report", timeout=300), iolab("show", str(r.path))):
        assert p.returncode == 0, p.stderr
        lines = [ln for ln in p.stdout.splitlines() if ln.startswith("purge (")]
        again = "(2 times: the phase ran again from its purge when the run was resumed)"
        assert len(lines) == 1 and " ".join(p.stdout.split()).count(f"sim-purge — ok {again}") == 1, p.stdout
    # the report's Run Details the same: one row, not the same purge twice
    rep = iolab("report", str(r.path), "--out", str(scratch / "rep"))
    assert rep.returncode == 0, rep.stderr
    [html] = (scratch / "rep").glob("*.html")
    text = html.read_text()
    assert text.count(">Purge (main)<") == 1 and text.count(again) == 1, text.count(">Purge (main)<")


# Runs `iolab run` and kills it (SIGKILL, as kill -9 or a power loss) where RunStore.create makes
# results.db: before the file exists, or once it exists in WAL mode but before its tables.
KILLED_AT = """
import os, signal, sys
from iolab.store import dbidentity, runstore

def killed(*a, **k):
    os.kill(os.getpid(), signal.SIGKILL)

if sys.argv[1] == "no results.db":
    runstore.open_for_writing = killed
else:
    dbidentity.naming = killed  # the tables' transaction is built after the journal mode is set
sys.argv = ["iolab", *sys.argv[2:]]
from iolab.cli.main import main
main()
"""


@pytest.mark.parametrize("point", ["no results.db", "results.db without tables"])
def test_resume_of_a_run_stopped_before_its_first_round_says_so_and_how_to_start_again(scratch, point):
    """Before: refused as "not an iolab run directory" (an export folder's words) or "not an iolab
    results database", by resume, show and the other readers, and listed so by `iolab runs`."""
    runs = scratch / "runs"
    p = subprocess.run([sys.executable, "-c", KILLED_AT, point, *QUICK_SIM, "--runs-dir", str(runs)], timeout=300)
    assert p.returncode == -signal.SIGKILL
    [run] = list(runs.iterdir())
    assert (run / "results.db").exists() == (point != "no results.db")
    before = stored(run)
    text = refused(iolab("resume", str(run), "--no-report", timeout=300))
    assert text.startswith(f"iolab: run {run.name}: it was stopped before its first round was stored"), text
    assert "so there is nothing to resume" in text and "not an iolab" not in text, text
    again = shlex.join(["iolab", *QUICK_SIM[:-1], "--runs-dir", str(runs)])
    assert f"Start the run again: {again}." in text, text
    # a reader says what happened too, not that the directory or database is not iolab's
    text = refused(iolab("show", str(run)))
    assert text == f"iolab: run {run.name}: {NOTHING_STORED}, so it holds nothing to read.", text
    assert stored(run) == before
    [r] = list_runs(runs)
    assert r.problem == f"{NOTHING_STORED}: nothing to show or resume", r
    if point == "no results.db":  # the command said starts the run
        p = iolab(*shlex.split(again)[1:], "--no-report", timeout=300)
        assert p.returncode == 0, p.stderr
        assert len(list(runs.iterdir())) == 2


def test_a_refused_resume_changes_nothing_stored(scratch):
    """A run killed (kill -9: its manifest still says running) whose stored round 1 lost its tracked
    values: resume refuses it. Before, the refusal came once the run was opened for writing, whose
    manifest.json it had rewritten from running to interrupted."""
    run = run_and_kill(scratch, scratch / "runs", "main-r02-c01")
    with sqlite3.connect(run / "results.db") as db:
        db.execute("UPDATE cells SET lat_mean_us = NULL, read_lat_mean_us = NULL, write_lat_mean_us = NULL")
    db.close()
    # kill -9 leaves the cell's fio running: it writes its bw/iops logs as it ends, which on a busy
    # machine came after this snapshot (fc21). Those are fio's, not resume's: wait for it to end.
    deadline = time.monotonic() + 120
    while leftovers(run / "raw") and time.monotonic() < deadline:
        time.sleep(0.1)
    before = stored(run)
    assert b'"state": "running"' in before["manifest.json"]
    text = refused(iolab("resume", str(run), "--no-report", timeout=300))
    assert "tracking metric lat_mean_us was not measured" in text and "cannot be evaluated on resume" in text, text
    assert stored(run) == before


def test_a_refused_resume_of_a_quick_run_gives_the_runs_own_command(scratch):
    """A --quick run's resume refused (here: its stored plan is not the one this iolab builds) said
    "Start a new run: iolab run latency -t sim:enterprise-sas?user_gb=0.0…&op=…": the stored scaled
    copy of the drive and no --quick, a command that is not the run's."""
    runs = scratch / "runs"
    args = ["run", "latency", "--quick", "-t", "sim:enterprise-sas", "--runs-dir", str(runs)]  # --quick scales it
    killed_at([*args, "--no-report"], runs, "*/raw/main-r02-*", signal.SIGINT)
    [r] = list_runs(runs)
    manifest = r.path / "manifest.json"
    m = json.loads(manifest.read_text())
    m["plan"]["phases"][0]["name"] = "another"  # as another iolab version would build it
    manifest.write_text(json.dumps(m))
    text = refused(iolab("resume", str(r.path), "--no-report", timeout=300))
    assert "user_gb=" in m["target"]["spec"]  # the stored copy, which is not the drive given
    assert "builds a different plan" in text and text.endswith(f"Start a new run: {shlex.join(['iolab', *args])}"), text


def test_a_refusal_of_a_run_named_by_id_under_runs_dir_gives_the_runs_dir(scratch):
    """`iolab resume --runs-dir X RUN-ID` refused and said "Start a new run: iolab run latency
    --quick -t sim:…" without --runs-dir X (the option had made X the default for its own
    length), so the command, copied, wrote the new run to ./runs of wherever it was typed."""
    runs, elsewhere = scratch / "runs", scratch / "elsewhere"
    elsewhere.mkdir()
    args = ["run", "latency", "--quick", "-t", SMALL_SIM, "--runs-dir", str(runs)]
    killed_at([*args, "--no-report"], runs, "*/raw/main-r02-*", signal.SIGINT)
    [r] = list_runs(runs)
    manifest = r.path / "manifest.json"
    m = json.loads(manifest.read_text())
    m["plan"]["phases"][0]["name"] = "another"  # as another iolab version would build it: refused
    manifest.write_text(json.dumps(m))
    env = {k: v for k, v in os.environ.items() if not k.startswith("IOLAB_RUNS")} | {"COLUMNS": "200"}

    def typed(*words: str) -> subprocess.CompletedProcess:
        return subprocess.run([*IOLAB, *words], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300)

    for given in (str(runs), os.path.relpath(runs, elsewhere)):  # as given, absolute or relative
        text = refused(typed("resume", "--runs-dir", given, m["run_id"], "--no-report"))
        assert text.endswith(f"Start a new run: {shlex.join(['iolab', *args])}"), text
    # the command as said, typed there, stores the new run beside the refused one
    p = typed(*shlex.split(text.rsplit("Start a new run: ", 1)[1])[1:], "--no-report")
    assert p.returncode == 0, p.stdout + p.stderr
    assert len(list(runs.iterdir())) == 2 and list(elsewhere.iterdir()) == []
    # the shell's own $IOLAB_RUNS is where a command without --runs-dir writes: none is added
    env["IOLAB_RUNS"] = str(runs)
    text = refused(typed("resume", "--runs-dir", str(runs), m["run_id"], "--no-report"))
    assert text.endswith(f"Start a new run: {shlex.join(['iolab', *args[:-2]])}"), text
