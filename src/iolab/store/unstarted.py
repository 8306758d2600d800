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
from iolab.store.durable import RESERVE_NAME
from iolab.store.resultsdb import open_readonly
from iolab.store.writer import WRITER_FILE

# What the run has made before its tables exist (results.db with SQLite's journal or log).
BEFORE_TABLES = frozenset(
    {"manifest.json", "raw", "results.db", "results.db-journal", "results.db-wal", "results.db-shm"}
    | {WRITER_FILE, RESERVE_NAME}
)

# What a reader says of such a run, in every command's words.
NOTHING_STORED = "it was stopped before its first round was stored (its results database was never set up)"


def stored_nothing(run_dir: Path) -> bool:
    """True when `run_dir` holds only what a run makes before its results database has tables:
    an empty raw/ (or none) and no results.db, or one that holds no table. Anything else (a
    measured file, another file, a database with some tables) is not this, and is read as it is."""
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
