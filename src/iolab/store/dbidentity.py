"""Which run a results.db belongs to. manifest.json and results.db are two files: a results.db
copied into another run's directory (or a directory put together from two runs) was read under
the other run's manifest, with its rule, its target and its dates, and every check passed,
because each file alone was sound. The writer stores the manifest's uid in the database when
it first opens it, and every reader, and a resumed run before it writes, refuses a database
that names another run.

A results.db written before this table existed names no run and is read as before (it cannot
be told from its run's); the first writer that opens it (resume) records its manifest's uid.
A run's manifest says whether its database was made naming it (Manifest.db_names_run), so a
database naming no run beside a manifest that says it should (the table dropped, or an older
run's database put in) is refused too."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from iolab.core.errors import IolabError


def stored_uid(db: sqlite3.Connection) -> str | None:
    """The uid the database names, or None where it names none (an older results.db)."""
    try:
        row = db.execute("SELECT uid FROM run_identity LIMIT 1").fetchone()
    except sqlite3.OperationalError:
        return None  # no run_identity table: written before it existed, read in place
    return None if row is None else str(row[0])


def refuse_other_run(db: sqlite3.Connection, uid: str | None, path: Path, named: bool = False) -> None:
    """Raise IolabError if the database names a run other than the manifest's `uid`, or none
    where the manifest says it was made naming it (`named`: Manifest.db_names_run)."""
    stored = stored_uid(db)
    if uid is not None and stored is None and named:
        raise IolabError(
            f"{path}: this results database names no run, though the manifest.json beside it says its run's "
            "database was made naming it (a run_identity row): the database was replaced, or that table emptied "
            "or dropped, after the run wrote it, so its figures cannot be taken for the run's. Nothing is read "
            "from it; put the run's own results.db back."
        )
    if uid is None or stored is None or stored == uid:
        return
    raise IolabError(
        f"{path}: this results database belongs to another run (uid {stored}) than the one the "
        f"manifest.json beside it describes (uid {uid}), so its figures are not that run's: the "
        "database was copied or moved in from elsewhere. Nothing is read from it; put the run's own "
        "results.db back, or read the other run from its own directory."
    )


def naming(uid: str | None) -> str:
    """SQL that names the manifest's run in a writer's database, once (a resumed run's already
    names it; resultsdb.open_for_writing refused one naming another run, or none it should,
    before writing anything). A literal, quoted, for the script that makes the tables."""
    if uid is None:
        return ""
    quoted = "'" + uid.replace("'", "''") + "'"
    return f"INSERT INTO run_identity (uid) SELECT {quoted} WHERE NOT EXISTS (SELECT 1 FROM run_identity);"
