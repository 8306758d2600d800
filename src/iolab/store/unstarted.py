"""A run directory whose run was stopped before it stored anything: RunStore.create makes the
claim, the space reserve, manifest.json and raw/, then results.db with every table in one
transaction. A run killed in between left a manifest and no results database, or one without
tables; its readers would call it "not an iolab run directory" or "not an iolab results
database", where what happened is that the run never got to its first round."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from iolab.core.errors import IolabError
from iolab.core.procs import same_process_alive
from iolab.core.safefile import read_json
from iolab.store.durable import RESERVE_NAME
from iolab.store.manifest import Manifest
from iolab.store.resultsdb import open_readonly
from iolab.store.writer import WRITER_FILE

# What the run has made before its tables exist (results.db with SQLite's journal or log).
BEFORE_TABLES = frozenset(
    {"manifest.json", "raw", "results.db", "results.db-journal", "results.db-wal", "results.db-shm"}
    | {WRITER_FILE, RESERVE_NAME}
)

# What a reader says of such a run, in every command's words.
NOTHING_STORED = "it was stopped before its first round was stored (its results database was never set up)"


def stopped_unstarted(run_dir: Path) -> Manifest | None:
    """The run's manifest when its run was stopped before it stored anything: it is not complete
    nor written by a live process (one setting the run up now), and its directory holds only what
    a run makes before its results database has tables (an empty raw/ or none, and no results.db
    or one with no table). Else None: anything more (a measured file, another file, a database
    with some tables) is read as it is, and said as what it is."""
    try:
        m = Manifest.from_document(read_json(run_dir / "manifest.json", "run manifest", "manifest"))
    except (OSError, IolabError, TypeError):
        return None
    if m.state == "complete" or (m.state == "running" and same_process_alive(m.pid, m.pid_start, m.boot_id)):
        return None
    return m if _holds_nothing(run_dir) else None


def _holds_nothing(run_dir: Path) -> bool:
    """Only what RunStore.create makes before the tables, and no table."""
    try:
        if not {p.name for p in run_dir.iterdir()} <= BEFORE_TABLES:
            return False
        raw = run_dir / "raw"
        if os.path.lexists(raw) and (raw.is_symlink() or not raw.is_dir() or any(raw.iterdir())):
            return False
        db = run_dir / "results.db"
        if not os.path.lexists(db):
            return True
        if db.is_symlink() or not db.is_file():
            return False
    except OSError:
        return False
    try:
        # read as every reader does (never written; a dead writer's log read from a private copy)
        con, copy = open_readonly(run_dir, True, False)
    except IolabError:
        return False
    try:
        (n,) = con.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return n == 0
    except sqlite3.DatabaseError:
        return False
    finally:
        con.close()
        if copy is not None:
            copy.cleanup()
