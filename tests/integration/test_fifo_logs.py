"""fio's per-second and histogram logs of a stored run replaced by FIFOs nobody writes: `iolab
audit` (which derives a cell's per-second rows again from its logs) and `iolab resume` (which
recovers a cell measured but not stored from its logs) hung in open() for ever. They now say the
log is a FIFO, as they say it of a raw JSON output (test_hostile_input.py)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from iolab.api.runlist import list_runs

from .conftest import _scratch_dir, iolab

FIFO = "cannot be read (a FIFO (named pipe), not a regular file)"


@pytest.fixture(scope="module")
def fio_run() -> Path:
    """One finished quick latency run with real fio on a file (1 s cells: each keeps a line of
    latency log; ~15 s)."""
    with _scratch_dir() as d:
        runs = d / "runs"
        quick = ("--quick", "--cell-time", "1s", "--max-rounds", "1", "--no-report", "--runs-dir", str(runs))
        p = iolab("run", "latency", "-t", f"file:{d}/target.img?size=4MiB", *quick, timeout=600)
        assert p.returncode == 0, p.stderr
        [run] = [r.path for r in list_runs(runs)]
        yield run


def copy_of(run: Path, scratch: Path, name: str) -> Path:
    shutil.copytree(run, scratch / "runs" / name)
    return scratch / "runs" / name


def fifo_for(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def test_a_fifo_as_a_stored_cells_latency_log_fails_the_audit_not_waits(fio_run, scratch):
    run = copy_of(fio_run, scratch, "fifo-log")
    con = sqlite3.connect(run / "results.db")
    named = [f for (raw,) in con.execute("SELECT raw_files FROM cells WHERE round=1") for f in json.loads(raw)]
    con.close()
    log = next(f for f in named if f.endswith("_lat.1.log"))  # a per-second log the cell names
    fifo_for(run / log)
    p = iolab("audit", "fifo-log", "--runs-dir", str(scratch / "runs"), timeout=60)  # before: never returned
    said = " ".join(p.stdout.split())
    assert p.returncode == 8 and "Traceback" not in p.stderr, p.stdout + p.stderr
    assert "FAIL raw-figures" in said and f"fio log {run / log} {FIFO}" in said, said


def test_resume_of_a_cell_whose_logs_are_fifos_stops_saying_so_not_waits(fio_run, scratch):
    """Round 1 measured but not stored, as a kill before its commit leaves it: resume recovers a
    cell from its logs (load_round), a FIFO among them (its latency log, and a histogram log,
    which load_round finds by listing raw/) made that cell one in flight to measure again, and
    iolab refuses to write over the FIFO: exit 4 naming it, what was stored kept."""
    run = copy_of(fio_run, scratch, "fifo-resume")
    con = sqlite3.connect(run / "results.db")
    ids = [i for (i,) in con.execute("SELECT id FROM cells WHERE kind='measure'")]
    for table, key in (("histograms", "cell_id"), ("series", "cell_id"), ("cells", "id")):
        con.executemany(f"DELETE FROM {table} WHERE {key}=?", [(i,) for i in ids])
    con.execute("UPDATE rounds SET ended=NULL, complete=0")
    con.execute("UPDATE phases SET steady=NULL, rounds=NULL, stop_reason=NULL, ended=NULL")
    con.commit()
    con.close()
    manifest = json.loads((run / "manifest.json").read_text())
    manifest.update(state="interrupted", ended=None, error="killed (as by SIGKILL)", audit={})
    (run / "manifest.json").write_text(json.dumps(manifest))
    [lat] = run.glob("raw/main-r01-c00-*_lat.1.log")
    fifo_for(lat)
    fifo_for(lat.with_name(lat.name.replace("_lat.1.log", "_clat_hist.1.log")))

    p = iolab("resume", "fifo-resume", "--no-report", "--runs-dir", str(scratch / "runs"), timeout=120)
    said = " ".join(p.stderr.split())
    assert p.returncode == 4 and "Traceback" not in p.stderr, p.stdout + p.stderr
    assert "already exists" in said and lat.name in said and "iolab never overwrites stored output" in said, said
    con = sqlite3.connect(f"file:{run / 'results.db'}?mode=ro", uri=True)
    assert con.execute("SELECT count(*) FROM cells WHERE kind='precondition'").fetchone() == (1,)  # kept
    con.close()
