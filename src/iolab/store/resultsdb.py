"""results.db as a file: its schema, the connection the run's writer keeps (WAL, full sync,
columns added since the first release), a reader's connection (read-only; a dead writer's log
read from a private copy) and the check that it holds iolab's tables. What goes in the tables
and what is read back is runstore.py's."""

from __future__ import annotations

import json
import math
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

from iolab.core.cellschema import ADDED_CELL_COLUMNS, CREATE_CELLS, CellRow, cell_row
from iolab.core.errors import IolabError
from iolab.core.results import RoundResult, output_damage
from iolab.core.runfiles import is_export
from iolab.core.safefile import check_regular
from iolab.core.steady import VariableVerdict
from iolab.store import dbidentity
from iolab.store.durable import ResultsDiskFull, is_disk_full, no_room

SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS phases (
    name TEXT PRIMARY KEY, ordinal INTEGER NOT NULL,
    purge_method TEXT, purge_ok INTEGER, purge_detail TEXT,
    steady INTEGER, rounds INTEGER, stop_reason TEXT, started REAL, ended REAL);
CREATE TABLE IF NOT EXISTS rounds (
    phase TEXT NOT NULL, round INTEGER NOT NULL, started REAL, ended REAL,
    complete INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (phase, round));
"""
    + CREATE_CELLS
    + """
CREATE INDEX IF NOT EXISTS cells_by_round ON cells (phase, round);
CREATE TABLE IF NOT EXISTS series (
    cell_id INTEGER NOT NULL, t_s REAL NOT NULL, read_iops REAL, write_iops REAL, mbps REAL, lat_mean_us REAL,
    lat_max_us REAL);
CREATE TABLE IF NOT EXISTS histograms (
    cell_id INTEGER NOT NULL, direction TEXT NOT NULL, value_us REAL NOT NULL, count INTEGER NOT NULL, max_us REAL NOT NULL);
CREATE TABLE IF NOT EXISTS steady (
    phase TEXT NOT NULL, round INTEGER NOT NULL, variable TEXT NOT NULL, window TEXT NOT NULL,
    vals TEXT NOT NULL, average REAL, range_measured REAL, range_allowed REAL, slope REAL, intercept REAL,
    fit_excursion REAL, fit_allowed REAL, range_ok INTEGER, slope_ok INTEGER,
    PRIMARY KEY (phase, round, variable));
-- a cell's series and histogram are read by cell (reports, the audit): without these every
-- read scanned the whole table (3.7 ms per cell at 280 cells of a quick IOPS run)
CREATE INDEX IF NOT EXISTS series_by_cell ON series (cell_id);
CREATE INDEX IF NOT EXISTS histograms_by_cell ON histograms (cell_id);
-- the uid of the run whose manifest.json the database belongs to (dbidentity.py)
CREATE TABLE IF NOT EXISTS run_identity (uid TEXT NOT NULL);
-- each raw file a stored cell names, as it was when the cell was stored (parsed whole): the
-- audit's raw-output check parses again only a file whose size or mtime is not this (audit_raw.py)
CREATE TABLE IF NOT EXISTS raw_stats (name TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL);
"""
)
# The writes name their columns, and rewrite a row only in the columns this version knows:
# a results.db a newer iolab wrote may have more, which stay as stored (docs/architecture.md,
# "The run directory"). A phase or round begun again (resumed) starts its known columns afresh;
# INSERT OR REPLACE deleted the row and with it what a newer iolab stored there.
BEGIN_PHASE = (
    "INSERT INTO phases (name, ordinal, started) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET"
    " ordinal=excluded.ordinal, started=excluded.started, purge_method=NULL, purge_ok=NULL, purge_detail=NULL,"
    " steady=NULL, rounds=NULL, stop_reason=NULL, ended=NULL"
)
BEGIN_ROUND = (
    "INSERT INTO rounds (phase, round, started, complete) VALUES (?, ?, ?, 0) ON CONFLICT (phase, round)"
    " DO UPDATE SET started=excluded.started, ended=NULL, complete=0"
)
INSERT_SERIES = (
    "INSERT INTO series (cell_id, t_s, read_iops, write_iops, mbps, lat_mean_us, lat_max_us) VALUES (?,?,?,?,?,?,?)"
)
# a file name taken again (a round run again after its files were set aside) is recorded anew
RAW_STAT_UPSERT = (
    "INSERT INTO raw_stats (name, size, mtime_ns) VALUES (?,?,?)"
    " ON CONFLICT (name) DO UPDATE SET size=excluded.size, mtime_ns=excluded.mtime_ns"
)
INSERT_HISTOGRAM = "INSERT INTO histograms (cell_id, direction, value_us, count, max_us) VALUES (?,?,?,?,?)"
# A round's verdict, stored again when a resumed run evaluates the round again.
_STEADY = "window vals average range_measured range_allowed slope intercept fit_excursion fit_allowed range_ok slope_ok"
_STEADY_COLUMNS = _STEADY.split()
STEADY_UPSERT = (
    f"INSERT INTO steady (phase, round, variable, {', '.join(_STEADY_COLUMNS)})"
    f" VALUES ({','.join('?' * (3 + len(_STEADY_COLUMNS)))}) ON CONFLICT (phase, round, variable)"
    f" DO UPDATE SET {', '.join(f'{c}=excluded.{c}' for c in _STEADY_COLUMNS)}"
)


def series_rows(cell_id: int, result: RoundResult) -> list[tuple[Any, ...]]:
    """INSERT_SERIES's rows of one cell."""
    return [(cell_id, s.t_s, s.read_iops, s.write_iops, s.mbps, s.lat_mean_us, s.lat_max_us) for s in result.series]


def histogram_rows(cell_id: int, result: RoundResult) -> list[tuple[Any, ...]]:
    """INSERT_HISTOGRAM's rows of one cell: each direction's bins."""
    return [
        (cell_id, direction, v, c, hist.max_us)
        for direction, hist in (("read", result.read.histogram), ("write", result.write.histogram))
        if hist is not None
        for v, c in zip(hist.values_us, hist.counts)
    ]


def add_cell_rows(db: sqlite3.Connection, run_dir: Path, cell_id: int, result: RoundResult) -> None:
    """Store what goes with a cell (in its transaction): its per-second rows, its histogram's
    bins and the record of its whole raw outputs."""
    db.executemany(INSERT_SERIES, series_rows(cell_id, result))
    db.executemany(INSERT_HISTOGRAM, histogram_rows(cell_id, result))
    parsed = result.raw_files[:1] if result.raw is not None else ()
    db.executemany(RAW_STAT_UPSERT, raw_stat_rows(run_dir, result.raw_files, parsed))


def raw_stat_rows(run_dir: Path, names: Sequence[str], parsed: Sequence[str] = ()) -> list[tuple[str, int, int]]:
    """RAW_STAT_UPSERT's rows for a cell's raw JSON outputs (`names` relative to `run_dir`): each
    whole one (by the audit's own test, so the record means "whole at this size and mtime"; fio's
    parser reads past a status report cut short) with its size and mtime. A file not there or not
    whole is not recorded: the audit reads it, and says what is wrong with it. `parsed`: those the
    engine parsed whole from the text it stored (RoundResult.raw), whole without a second read."""
    rows = []
    for name in names:
        path = run_dir / name
        if not str(name).endswith(".json"):
            continue  # the audit reads only the JSON outputs
        try:
            st = os.stat(path)
        except OSError:
            continue
        if name in parsed or output_damage(path) is None:
            rows.append((str(name), st.st_size, st.st_mtime_ns))
    return rows


def plain_stat(run_dir: Path) -> list[int]:
    """results.db's size and mtime (ns) when it is a plain file, as a finished run leaves it
    (RunStore._plain_journal): every change to it shows in them. Empty while a write-ahead log
    is beside it, where changes go first, or when it cannot be read."""
    try:
        if (run_dir / "results.db-wal").exists():
            return []
        st = os.stat(run_dir / "results.db")
    except OSError:
        return []
    return [st.st_size, st.st_mtime_ns]


def steady_row(phase: str, rnd: int, v: VariableVerdict) -> tuple[Any, ...]:
    """STEADY_UPSERT's row of one variable's verdict at round `rnd`."""
    windowed = (json.dumps(list(v.rounds)), json.dumps(list(v.values)))
    fit = (v.average, v.range_measured, v.range_allowed, v.slope, v.intercept, v.fit_excursion, v.fit_allowed)
    return (phase, rnd, v.name, *windowed, *fit, int(v.range_ok), int(v.slope_ok))


# per-second series columns added after the first release (older results.db gain them when
# opened for writing; readers of an older file get None)
ADDED_SERIES_COLUMNS = {"lat_max_us": "REAL"}
# tables added after the first release: an older results.db gains them when opened for writing
# (SCHEMA's CREATE ... IF NOT EXISTS) and is read without them, so neither a reader nor
# _refuse_lost_tables takes their absence for a loss
ADDED_TABLES = ("run_identity", "raw_stats")


def open_for_writing(path: Path, uid: str | None, named: bool = False) -> sqlite3.Connection:
    """The writer's connection to `path`/results.db, created with its tables if new, naming the
    run `uid` (dbidentity.py: a database of another run, or naming none where the manifest says
    it was made naming it (`named`), is refused before anything is written).
    Its tables are made in one transaction, so a results.db holding some of them and not the
    others lost them after: it is refused as it is, not given the lost ones empty (a resumed run
    would then go on as if it had never stored their rows)."""
    db = None
    opened = False
    try:
        db = sqlite3.connect(path / "results.db", timeout=30)
        had = _refuse_lost_tables(db, path / "results.db")  # before anything is written, the journal mode too
        dbidentity.refuse_other_run(db, uid, path / "results.db", named and bool(had))  # had: not a new run's
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        # the run's uid with the tables, in their transaction: no reader sees them naming no run
        db.executescript(f"BEGIN; {SCHEMA} {dbidentity.naming(uid)} COMMIT;")
        migrate(db)
        opened = True
        return db
    except sqlite3.DatabaseError as e:
        if is_disk_full(e) or no_room(path):  # a full tmpfs can fail the WAL index as an I/O error
            raise ResultsDiskFull(path) from None
        raise IolabError(db_error(path / "results.db", e)) from None
    finally:
        # refused, damaged or interrupted: the file is closed here, not whenever the error's
        # traceback (which holds the connection) is dropped
        if db is not None and not opened:
            db.close()


def _refuse_lost_tables(db: sqlite3.Connection, path: Path) -> set[str]:
    """The tables the database holds, once none of iolab's first ones is lost."""
    have = {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    first = [t for t in _known_columns() if t not in ADDED_TABLES]
    lost = sorted(t for t in first if t not in have)
    if lost and len(lost) < len(first):
        raise IolabError(
            f"{path}: the run's results database has lost its {', '.join(lost)} table"
            f"{'s' if len(lost) > 1 else ''} (iolab makes every table of it at once, before the run stores "
            "anything), so the run cannot go on: made again empty, the rows it stored there would be gone "
            "unnoticed. Nothing was changed; restore results.db from a copy of the run, or start a new run."
        )
    return have


def migrate(db: sqlite3.Connection) -> None:
    added = {"cells": ADDED_CELL_COLUMNS, "series": ADDED_SERIES_COLUMNS}
    for table, columns in added.items():
        have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        for name, kind in columns.items():
            if name not in have:
                try:
                    with db:
                        db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
                except sqlite3.OperationalError:
                    pass  # a read-only database: readers take the column's old value


def open_readonly(
    path: Path, has_manifest: bool, writer_alive: bool
) -> tuple[sqlite3.Connection, tempfile.TemporaryDirectory[str] | None]:
    """A reader's connection to `path`/results.db and the private copy it reads, if any (the
    caller cleans it up). Never creates or modifies a file in the run directory."""
    db = path / "results.db"
    # A run that has just started: its writer has the manifest in place and is creating the
    # database (no file yet, or one without tables). Nothing is stored yet, so the reader
    # sees the empty tables.
    if db.exists() and not db.is_file():
        # a FIFO, a device, a directory: said as what it is, not as a results.db that is missing
        check_regular(db, "the run's results database")
    if writer_alive and not db.is_file():
        return _empty(), None
    if not db.is_file() and is_export(path):
        raise IolabError(
            f"{path}: an `iolab export` folder (a copy of a run's tables and its manifest.json), not a run "
            "directory. Give the run's own directory."
        )
    if not db.is_file():
        what = "manifest.json but no results.db" if has_manifest else "no manifest.json and no results.db"
        raise IolabError(
            f"{path}: not an iolab run directory (it holds {what}; an `iolab export` "
            "folder is a copy of the tables, not a run). Give the run's own directory."
        )
    wal = db.with_name("results.db-wal")
    copy = None
    if writer_alive:
        uri = f"file:{_uri_path(db)}?mode=ro"  # the writer keeps -wal/-shm; readers share them
    elif wal.exists() and wal.stat().st_size > 0 and (copy := _private_copy(db, wal)) is not None:
        uri = f"file:{_uri_path(Path(copy.name) / 'results.db')}"
    else:
        uri = f"file:{_uri_path(db)}?mode=ro&immutable=1"  # nobody writes it: no -wal/-shm needed
    try:
        con = sqlite3.connect(uri, uri=True, timeout=30)
        (cells,) = con.execute("SELECT count(*) FROM sqlite_master WHERE name='cells'").fetchone()
    except sqlite3.DatabaseError as e:
        if copy is not None:
            copy.cleanup()
        raise IolabError(db_error(db, e)) from None
    if writer_alive and not cells:
        con.close()
        return _empty(), None
    return con, copy


def _private_copy(db: Path, wal: Path) -> tempfile.TemporaryDirectory[str] | None:
    """A dead writer's database and log, copied so the run directory stays as it was; None
    when the log went away meanwhile (the writer's last connection closed, having moved the log
    into the database, which is then read in place)."""
    copy = tempfile.TemporaryDirectory(prefix="iolab-read-")
    try:
        shutil.copyfile(db, Path(copy.name) / "results.db")
        shutil.copyfile(wal, Path(copy.name) / "results.db-wal")
    except FileNotFoundError:
        copy.cleanup()
        if db.is_file() and not wal.exists():
            return None
        raise
    return copy


def _empty() -> sqlite3.Connection:
    con = sqlite3.connect(":memory:")
    con.executescript(SCHEMA)
    return con


def check_tables(con: sqlite3.Connection, db: Path, deep: bool) -> None:
    """Raise IolabError unless `con` holds iolab's tables, each with the columns this version
    reads, and they can be read; `deep` runs SQLite's quick_check over every page. Every table
    the readers use is checked: a results.db without `steady` or `histograms` passed and then
    failed in the middle of a report with SQLite's error and a traceback."""
    try:
        have = _columns(lambda sql: con.execute(sql).fetchall())
        missing = sorted(t for t in _read_columns() if t not in have)
        if missing:
            raise IolabError(f"{db}: not an iolab results database (no {', '.join(missing)} table).")
        for table, columns in _read_columns().items():
            lacks = [c for c in columns if c not in have[table]]
            if lacks:
                raise IolabError(
                    f"{db}: not an iolab results database (table {table} has no column {', '.join(lacks)}, which "
                    "every iolab wrote); nothing is shown from it."
                )
        for table in ("phases", "rounds"):  # small; read whole (the big ones are read where they are used)
            con.execute(f"SELECT count(*) FROM {table}").fetchone()
        (ok,) = con.execute("PRAGMA quick_check").fetchone() if deep else ("ok",)
    except sqlite3.DatabaseError as e:
        raise IolabError(f"{db}: damaged ({e}).") from None
    if ok != "ok":
        raise IolabError(f"{db}: damaged (integrity check: {ok}).")


def read_rows(con: sqlite3.Connection, db: Path, sql: str, args: tuple[object, ...] = ()) -> list[Any]:
    """A reader's query, all rows. SQLite's error (a page damaged past what check_tables reads,
    a table changed under the reader) becomes IolabError naming the file, not a traceback."""
    try:
        return con.execute(sql, args).fetchall()
    except sqlite3.DatabaseError as e:
        raise IolabError(f"{db}: damaged ({e}); nothing more is read from it.") from None


def read_cells(con: sqlite3.Connection, db: Path, which: tuple[str, bool]) -> list[CellRow]:
    """The cells of one kind, of complete rounds only or not (which), in the plan's order. A
    damaged file or a value no run stores is IolabError."""
    kind, complete_only = which
    sql = "SELECT c.* FROM cells c"
    if complete_only:
        sql += " JOIN rounds r ON r.phase=c.phase AND r.round=c.round AND (r.complete=1 OR c.kind='precondition')"
    sql += " WHERE c.kind=? ORDER BY c.phase, c.round, c.ordinal"
    try:
        cur = con.execute(sql, (kind,))
        names = [d[0] for d in cur.description]
        return [cell_row(dict(zip(names, row))) for row in cur.fetchall()]
    except sqlite3.DatabaseError as e:
        raise IolabError(f"{db}: damaged ({e}); nothing more is read from it.") from None
    except ValueError as e:  # a value no run stores (text in a REAL column): the row and column named
        raise IolabError(
            f"{db}: table cells, {e}. The run's stored results were changed after it "
            "wrote them; nothing is shown from them."
        ) from None


def steady_verdicts(rows: list[Any], db: Path) -> list[VariableVerdict]:
    """Rows of the steady table (variable, window, vals, ...) as verdicts. The window and the
    values are JSON lists iolab wrote; anything else (a hand's edit) is refused naming the table."""
    try:
        verdicts = [
            VariableVerdict(
                n, tuple(json.loads(w)), tuple(json.loads(v)), a, rm, ra, s, i, fe, fa, bool(rok), bool(sok)
            )
            for n, w, v, a, rm, ra, s, i, fe, fa, rok, sok in rows
        ]
        for verdict in verdicts:
            _finite_numbers(verdict)
    except (ValueError, TypeError) as e:
        raise IolabError(
            f"{db}: table steady holds a window or values that are not the lists iolab writes ({e}); the run's "
            "stored results were changed after it wrote them, and nothing is shown from them."
        ) from None
    return verdicts


def _finite_numbers(v: VariableVerdict) -> None:
    """No verdict iolab stores holds an infinity (a window's figures are fio's, finite; SQLite reads
    a NaN back as NULL): one edited in (average 9e999) stopped the JSON export with a traceback
    midway through its document."""
    for name, x in (("vals", v.values), ("average", v.average), ("slope", v.slope), ("intercept", v.intercept)):
        for value in x if isinstance(x, tuple) else (x,):
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"{name} holds {value!r}, not a finite number")


@cache
def _known_columns() -> dict[str, list[str]]:
    """This version's tables and their columns (SCHEMA's)."""
    mem = _empty()
    try:
        return _columns(lambda sql: mem.execute(sql).fetchall())
    finally:
        mem.close()


@cache
def _read_columns() -> dict[str, list[str]]:
    """Each table with the columns every results.db has: the tables and columns added since the
    first release aside (readers of an older file take their old value)."""
    added = {"cells": ADDED_CELL_COLUMNS, "series": ADDED_SERIES_COLUMNS}
    return {
        t: [c for c in cols if c not in added.get(t, {})]
        for t, cols in _known_columns().items()
        if t not in ADDED_TABLES
    }


def unknown_schema(query: Callable[[str], list[Any]]) -> list[str]:
    """The tables and columns of a results.db (read through `query`) that this version's schema
    does not have, a newer iolab's: "table NAME", "column TABLE.NAME". They stay as stored."""
    known = _known_columns()
    out = []
    for table, columns in _columns(query).items():
        if table not in known:
            out.append(f"table {table}")
        else:
            out += [f"column {table}.{c}" for c in columns if c not in known[table]]
    return out


def _columns(query: Callable[[str], list[Any]]) -> dict[str, list[str]]:
    """Each table's columns (SQLite's own tables aside)."""
    tables = [n for (n,) in query("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
    return {
        t: [row[1] for row in query(f"PRAGMA table_info({quote_id(t)})")] for t in tables if not t.startswith("sqlite_")
    }


def quote_id(name: str) -> str:
    """An SQL identifier quoted (a table a newer iolab named is only read back as a name)."""
    return '"' + name.replace('"', '""') + '"'


# Filesystems whose locks and shared memory SQLite cannot rely on (mountinfo's type names).
NETWORK_FS = ("9p", "nfs", "nfs4", "cifs", "smb3", "smbfs", "ceph", "glusterfs", "lustre", "fuse.sshfs", "afs")


def db_error(db: Path, e: sqlite3.Error) -> str:
    """What SQLite's error on results.db means. On a network filesystem SQLite says only "disk
    I/O error" or "database is locked": the message says why and what to do."""
    fs = network_fs(db.parent)
    if fs is None:
        return f"{db}: not a readable SQLite database ({e})."
    fstype, mountpoint = fs
    return (
        f"{db}: SQLite cannot work on this file ({e}): the run directory is on {fstype} (mounted at "
        f"{mountpoint}), a network filesystem, and SQLite's write-ahead log needs shared memory (mmap of "
        "results.db-shm) and POSIX locks that 9p and NFS do not give reliably. Keep runs on a local "
        "filesystem (--runs-dir DIR or $IOLAB_RUNS) and copy the run directory to the shared one once the run "
        "has ended."
    )


def network_fs(path: Path) -> tuple[str, str] | None:
    """(filesystem type, mount point) of the network filesystem `path` is on, or None."""
    from iolab.targets.usage import mounts  # on failure only: reading mountinfo costs every start

    try:
        where = os.path.realpath(path)
        found = [m for m in mounts() if where == m.mountpoint or where.startswith(m.mountpoint.rstrip("/") + "/")]
    except (OSError, ValueError):
        return None
    m = max(found, key=lambda m: len(m.mountpoint), default=None)
    return (m.fstype, m.mountpoint) if m is not None and m.fstype in NETWORK_FS else None


def _uri_path(path: Path) -> str:
    return quote(str(path.resolve()))
