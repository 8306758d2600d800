"""Run directories: the source of truth every report reads.

    runs/<timestamp>-<test>-<target>/
      manifest.json   target facts, plan, versions, times, purge outcomes, state
      raw/            every engine output as produced, one set of files per cell
      results.db      SQLite (WAL): phases, rounds, cells, series, histograms, steady state

Each cell is committed as soon as it is measured and a round is marked complete before the
next starts, so a crash (even kill -9) loses at most the cell in flight. Readers use only
complete rounds for results and steady state, of a results.db that holds every row the run's
own record says it stored (rowcheck.py). The cells table is declared in cellschema.py,
manifest.json in manifest.py; results.db's schema and connections are resultsdb.py's.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from iolab.core.cellschema import INSERT_CELL, cell_values  # noqa: PLC0414 (compare/ imports CellRow from here)
from iolab.core.cellschema import CellRow as CellRow
from iolab.core.errors import IolabError
from iolab.core.procs import same_process_alive
from iolab.core.results import Histogram, RoundResult
from iolab.core.safefile import read_json
from iolab.core.steady import VariableVerdict
from iolab.core.stopdefer import stop_deferred
from iolab.store import dbidentity, resultsdb, rowcheck
from iolab.store.durable import (
    RESERVE_BYTES,
    ResultsDiskFull,
    is_disk_full,
    no_room,
    release_space,
    reserve_space,
    write_atomic,
)
from iolab.store.manifest import Manifest, manifest_bytes, manifest_of, now_iso, resolve_run, stamp_writer
from iolab.store.rawaside import aside_plan, carry_out, finish_moves, named_files, raw_files, strays_aside, take_out
from iolab.store.resultsdb import check_tables, open_for_writing, open_readonly, read_cells, read_rows, steady_verdicts
from iolab.store.unstarted import NOTHING_STORED, stopped_unstarted
from iolab.store.writer import RunClaim, claim_run, released_on_error
from iolab.targets.writepolicy import output_dir


@dataclass(frozen=True)
class PhaseRow:
    name: str
    ordinal: int
    purge_method: str | None
    purge_ok: bool | None
    purge_detail: str | None
    steady: bool | None
    rounds: int | None
    stop_reason: str | None


class RunStore:
    def __init__(self, path: Path, writable: bool = True):
        """`writable=False` (every read path) never creates or modifies a file in the run."""
        self.dir = path
        self.raw_dir = path / "raw"
        self.writable = writable
        self._copy: tempfile.TemporaryDirectory[str] | None = None
        self._commits = 0  # this connection's write transactions, for data_version()
        self._same_data: dict[tuple[int, int], tuple[int, int]] = {}  # a version -> the same data's earlier one
        self._cells_read: dict[tuple[str, bool], tuple[tuple[int, int], list[CellRow]]] = {}  # cells()
        self._verified = False  # results.db holds the rows the run's record names (_verify)
        # a writer claims the directory before it reads what it will change (writer.py); close() drops it
        self.writer: RunClaim | None = claim_run(path) if writable else None
        with released_on_error(self.writer):
            has_manifest = (path / "manifest.json").exists()
            self.manifest = self._read_manifest() if has_manifest else None
            if writable:
                m = self.manifest
                self._db = open_for_writing(path, m.uid if m else None, bool(m and m.db_names_run))
                if m is not None and m.uid is not None:
                    m.db_names_run = True  # it does now (written with the manifest's next write)
                try:
                    reserve_space(path)
                except OSError as e:
                    self._db.close()
                    if is_disk_full(e):
                        raise ResultsDiskFull(
                            path,
                            f"no room to go on (a run keeps {RESERVE_BYTES // 1024} KiB aside to record how it ends)",
                        ) from None
                    raise
            else:
                self._db, self._copy = open_readonly(path, self.manifest is not None, self.writer_alive())

    def writer_alive(self) -> bool:
        m = self.manifest
        return m is not None and m.state == "running" and same_process_alive(m.pid, m.pid_start, m.boot_id)

    def check(self, deep: bool = False) -> None:
        """Raise IolabError unless the database holds iolab's tables and they can be read;
        `deep` runs SQLite's quick_check over every page (slower on big runs)."""
        check_tables(self._db, self.dir / "results.db", deep)

    # -- creation and manifest --------------------------------------------------------------
    @classmethod
    def create(cls, root: Path, manifest: Manifest) -> RunStore:
        base = (
            f"{datetime.now().strftime('%Y%m%d-%H%M%S')}-{manifest.test}-{manifest.target.get('short_name', 'target')}"
        )
        path, early = None, None
        try:
            output_dir(root, "runs directory")
            path, n = root / base, 1
            while True:  # mkdir, not exists(): runs of a fleet start in the same second, in processes of their own
                try:
                    path.mkdir()
                    break
                except FileExistsError:
                    n += 1
                    path = root / f"{base}-{n}"
            early = claim_run(path)  # before the manifest makes it a run another process may resume
            # The space to record the run's end is set aside first: a run that could not say how
            # it ended is not started. The manifest goes in next, so a directory that `iolab runs`
            # lists as a run (it holds a manifest, a database or raw/) is never one half set up.
            reserve_space(path)
            manifest.run_id = path.name
            manifest.db_names_run = manifest.uid is not None  # the store made next names it (dbidentity)
            stamp_writer(manifest)
            write_atomic(path / "manifest.json", manifest_bytes(manifest))
            (path / "raw").mkdir()
            store = cls(path)
        except (OSError, ResultsDiskFull) as e:
            if early is not None:
                early.release()
            if not isinstance(e, ResultsDiskFull) and not is_disk_full(e):
                raise
            if path is not None:
                shutil.rmtree(path, ignore_errors=True)  # made just now, nothing in it yet
            raise ResultsDiskFull(
                root,
                f"no room to start a run (it keeps {RESERVE_BYTES // 1024} KiB aside to "
                "record how it ends); no run directory was left",
            ) from None
        early.release()  # the store holds the claim now
        store.manifest = manifest
        # rowcheck guards a reader against rows lost after the run wrote them; every row of a store
        # this process creates is its own, so checking them (a read of every histogram's cell id)
        # would only add to the run's time (the run's own reads: test_json_once.py)
        store._verified = True
        try:
            store.claim()
        except ResultsDiskFull:
            full = ResultsDiskFull(path, "before the first measurement")
            store.finish("failed", str(full))
            raise full from None
        return store

    def claim(self) -> None:
        """Record this process as the run's writer (pid, its start time, the boot) and store it."""
        stamp_writer(manifest_of(self))
        self.write_manifest()

    @classmethod
    def open(cls, ref: str | Path, writable: bool = False) -> RunStore:
        path = resolve_run(ref)
        store = None
        try:
            store = cls(path, writable=writable)
            if store.manifest is not None and not writable:
                store.check()  # a run being created has its database before its tables
        except IolabError:
            if store is not None:
                store.close()
            if stopped_unstarted(path):  # not a damaged run: one that never stored anything
                raise IolabError(f"run {path.name}: {NOTHING_STORED}, so it holds nothing to read.") from None
            raise
        if store.manifest is None:
            raise IolabError(f"{path}: not an iolab run directory (no manifest.json).")
        m = store.manifest
        if m.state == "running" and not store.writer_alive():
            # The process that wrote this run is gone without closing it (kill -9, power loss).
            # Readers only say so; so does a writer until it writes: a resume that then refuses
            # leaves manifest.json as it was (its first write, RunStore.claim, says it runs).
            m.state = "interrupted"
            m.error = m.error or "the iolab process ended without finishing the run"
        return store

    def _read_manifest(self) -> Manifest:
        path = self.dir / "manifest.json"
        try:
            return Manifest.from_document(read_json(path, "run manifest", "manifest"))
        except (OSError, TypeError) as e:
            raise IolabError(f"{path}: unreadable manifest ({e}).") from None
        except IolabError:
            raise  # a special or oversized file, too deep a document: the message names the file

    def write_manifest(self, final: bool = False) -> None:
        """Replace manifest.json. Only the run's last write (`final`) may use the space set
        aside: an earlier write that took it would leave the run's end nowhere to go."""
        data = manifest_bytes(manifest_of(self))
        try:
            write_atomic(self.dir / "manifest.json", data)
        except OSError as e:
            if not is_disk_full(e):
                raise
            if not (final and release_space(self.dir)):
                raise ResultsDiskFull(self.dir) from None
            try:
                write_atomic(self.dir / "manifest.json", data)
            except OSError as e2:
                if is_disk_full(e2):
                    raise ResultsDiskFull(self.dir) from None
                raise

    def finish(self, state: str, error: str | None = None) -> None:
        m = manifest_of(self)
        # first, so the stat recorded is of the plain file every later change to it shows in
        self._plain_journal()
        m.results_db_stat = resultsdb.plain_stat(self.dir)
        try:  # a stop as the end is stored waits for it: the run said "complete and stored" of a 'running' file
            with stop_deferred():
                m.state, m.ended, m.error = state, now_iso(), error
                self.write_manifest(final=True)
        except ResultsDiskFull:
            lost = "not even the run's end could be stored: manifest.json still says 'running'"
            ended = f"the run {state}" + (f": {error}" if error else "")
            raise ResultsDiskFull(self.dir, f"{lost} (`iolab runs` shows it as interrupted); {ended}") from None
        release_space(self.dir)

    def _plain_journal(self) -> None:
        """A finished run leaves a plain database (no -wal/-shm), which readers open in place:
        done as the run ends, since a run killed while its report is drawn, or a store left
        unclosed in-process, would leave a log for every reader to copy."""
        before = self.data_version()
        try:
            self._db.execute("PRAGMA journal_mode=DELETE")
        except sqlite3.DatabaseError:
            pass  # another connection has it open: the last one to close removes the log
        # Leaving WAL moves SQLite's data_version, but no data changed: what was computed from
        # the database before (the run's summaries, which its record reuses) still holds.
        self._same_data[self.data_version()] = before

    def disk_full(self) -> bool:
        """True if the run directory's filesystem has (next to) no room left."""
        return no_room(self.dir)

    @contextmanager
    def _tx(self) -> Iterator[None]:
        """One committed transaction; a full disk becomes ResultsDiskFull (SQLite rolls back)."""
        try:
            with self._db:
                yield
        except (sqlite3.OperationalError, OSError) as e:
            if is_disk_full(e):
                raise ResultsDiskFull(self.dir) from None
            raise
        finally:
            self._commits += 1

    def data_version(self) -> tuple[int, int]:
        """Changes when results.db may have changed: this store's own write transactions (SQLite's
        data_version does not count them) and any other connection's commits (which it does).
        What is computed from the database is kept only while this stays the same."""
        (other,) = self._db.execute("PRAGMA data_version").fetchone()
        return self._same_data.get((self._commits, other), (self._commits, other))

    # -- writing ----------------------------------------------------------------------------
    def begin_phase(self, name: str, ordinal: int) -> None:
        with self._tx():
            self._db.execute(resultsdb.BEGIN_PHASE, (name, ordinal, time.time()))

    def record_purge(self, phase: str, method: str, ok: bool, detail: str) -> None:
        with self._tx():
            self._db.execute(
                "UPDATE phases SET purge_method=?, purge_ok=?, purge_detail=? WHERE name=?",
                (method, int(ok), detail, phase),
            )

    def begin_round(self, phase: str, rnd: int) -> None:
        with self._tx():
            self._db.execute(resultsdb.BEGIN_ROUND, (phase, rnd, time.time()))

    def add_cell(
        self,
        phase: str,
        rnd: int,
        ordinal: int,
        kind: str,
        key: str,
        mix: str | None,
        block_size: int | None,
        workload: dict[str, Any],
        result: RoundResult,
        started: float,
        ended: float,
        partial: bool = False,
        idle_before_s: float | None = None,
    ) -> int:
        with self._tx():
            cur = self._db.execute(
                INSERT_CELL,
                cell_values(
                    result,
                    phase=phase,
                    round=rnd,
                    ordinal=ordinal,
                    kind=kind,
                    cell_key=key,
                    mix=mix,
                    block_size=block_size,
                    workload=workload,
                    started=started,
                    ended=ended,
                    partial=partial,
                    idle_before_s=idle_before_s,
                ),
            )
            cell_id = cur.lastrowid
            assert cell_id is not None  # set by every INSERT that returns
            # in the cell's transaction: a cell is never stored without them (rowcheck.py relies on it)
            resultsdb.add_cell_rows(self._db, self.dir, cell_id, result)
        return cell_id

    def finish_round(self, phase: str, rnd: int) -> None:
        with self._tx():
            self._db.execute(
                "UPDATE rounds SET ended=?, complete=1 WHERE phase=? AND round=?", (time.time(), phase, rnd)
            )

    def add_steady(self, phase: str, rnd: int, verdicts: tuple[VariableVerdict, ...]) -> None:
        with self._tx():
            self._db.executemany(resultsdb.STEADY_UPSERT, [resultsdb.steady_row(phase, rnd, v) for v in verdicts])

    def finish_phase(self, phase: str, steady: bool | None, rounds: int, stop_reason: str) -> None:
        with self._tx():
            self._db.execute(
                "UPDATE phases SET steady=?, rounds=?, stop_reason=?, ended=? WHERE name=?",
                (None if steady is None else int(steady), rounds, stop_reason, time.time(), phase),
            )

    # -- resuming an interrupted run ------------------------------------------------------
    def phase_ended(self, name: str) -> bool | None:
        """None: the phase never began; False: begun, not finished; True: finished."""
        row = self._db.execute("SELECT ended FROM phases WHERE name=?", (name,)).fetchone()
        return None if row is None else row[0] is not None

    def round_complete(self, phase: str, rnd: int) -> bool:
        row = self._db.execute("SELECT complete FROM rounds WHERE phase=? AND round=?", (phase, rnd)).fetchone()
        return bool(row and row[0])

    def stored_ordinals(self, phase: str, rnd: int) -> set[int]:
        return {
            o
            for (o,) in self._db.execute(
                "SELECT ordinal FROM cells WHERE phase=? AND round=? AND kind IN ('measure', 'precondition')",
                (phase, rnd),
            )
        }

    def last_activity(self) -> float | None:
        """The last time the run's writer stored anything (epoch seconds)."""
        (t,) = self._db.execute(
            "SELECT MAX(t) FROM (SELECT MAX(ended) AS t FROM cells UNION ALL SELECT MAX(started) FROM rounds"
            " UNION ALL SELECT MAX(started) FROM phases)"
        ).fetchone()
        return None if t is None else float(t)

    def set_aside(self, phase: str, from_round: int, raw_prefixes: list[str]) -> int:
        """Keep, but take out of the results, everything of `phase` from round `from_round` on:
        its cells become kind 'interrupted', its raw files (those of the cells and any output of
        a cell that was never stored, named by `raw_prefixes`) move to raw/interrupted-N/.
        Returns the number of files moved. The cells name the files' new places before they move."""
        named = named_files(self._db)
        finish_moves(self.dir, named)
        moves = aside_plan(self.raw_dir, raw_files(self.raw_dir, tuple(raw_prefixes)))
        with self._tx():
            take_out(self._db, self.dir, phase, from_round, moves, named)
        carry_out(self.dir, moves)
        return len(moves)

    def set_aside_strays(self, tag: str) -> int:
        """Raw files of cell `tag` no stored cell names move aside (rawaside.strays_aside); how many."""
        return strays_aside(self.raw_dir, tag, self._db)

    # -- reading ----------------------------------------------------------------------------
    def _rows(self, sql: str, args: Collection[object] = ()) -> list[Any]:
        self._verify()
        return read_rows(self._db, self.dir / "results.db", sql, tuple(args))

    def _verify(self) -> None:
        """Before the first read: refuse a run whose results.db lacks rows its own record says it
        stored (rowcheck.py). Once per store, not per read: the reports read cell by cell."""
        if self._verified or self.manifest is None:
            return
        try:
            m = self.manifest
            db = self.dir / "results.db"  # none yet: a run being made, read as an empty store
            dbidentity.refuse_other_run(self._db, m.uid, db, m.db_names_run and db.exists())
            rowcheck.refuse_missing(self._db, self.manifest, self.dir / "results.db")
        except sqlite3.DatabaseError as e:
            raise IolabError(f"{self.dir / 'results.db'}: damaged ({e}); nothing more is read from it.") from None
        self._verified = True

    def phases(self) -> list[PhaseRow]:
        rows = self._rows(
            "SELECT name, ordinal, purge_method, purge_ok, purge_detail, steady, rounds, stop_reason FROM phases ORDER BY ordinal"
        )
        return [
            PhaseRow(n, o, pm, None if pok is None else bool(pok), pd, None if s is None else bool(s), r, sr)
            for n, o, pm, pok, pd, s, r, sr in rows
        ]

    def complete_rounds(self, phase: str) -> list[int]:
        return [
            r
            for (r,) in self._rows(
                "SELECT round FROM rounds WHERE phase=? AND complete=1 AND round>0 ORDER BY round", (phase,)
            )
        ]

    def cells(self, phase: str | None = None, kind: str = "measure", complete_only: bool = True) -> list[CellRow]:
        """The stored cells of `phase` (None: every phase), read and decoded once for each version
        of the data (data_version), every phase at once: a run's end, `show` and `check` each read
        the same cells 7 to 17 times (its summary, audit and steady-state evidence), and decoding
        them was most of each read."""
        key, version = (kind, complete_only), self.data_version()
        kept = self._cells_read.get(key)
        if kept is None or kept[0] != version or self._db.in_transaction:  # a write not yet counted
            self._verify()
            kept = self._cells_read[key] = (version, read_cells(self._db, self.dir / "results.db", key))
        return [c for c in kept[1] if phase is None or c.phase == phase]

    def series(self, cell_id: int) -> list[tuple[float, float, float, float, float | None, float | None]]:
        """(t_s, read IOPS, write IOPS, MB/s, average and maximum latency µs) per second."""
        have = {row[1] for row in self._rows("PRAGMA table_info(series)")}
        mx = "lat_max_us" if "lat_max_us" in have else "NULL"  # a read-only results.db from before the column
        return self._rows(
            f"SELECT t_s, read_iops, write_iops, mbps, lat_mean_us, {mx} FROM series WHERE cell_id=? ORDER BY t_s",
            (cell_id,),
        )

    def histogram(self, cell_id: int, direction: str | None = None) -> Histogram | None:
        sql = "SELECT value_us, SUM(count), MAX(max_us) FROM histograms WHERE cell_id=?"
        args: list[object] = [cell_id]
        if direction:
            sql += " AND direction=?"
            args.append(direction)
        rows = self._rows(sql + " GROUP BY value_us ORDER BY value_us", args)
        if not rows:
            return None
        return Histogram(tuple(r[0] for r in rows), tuple(int(r[1]) for r in rows), max(r[2] for r in rows))

    def query(self, sql: str, args: Collection[object] = ()) -> list[Any]:
        """Rows of a read-only query (storebulk.py's whole-run reads)."""
        return self._rows(sql, args)

    def steady_rows(self, phase: str, rnd: int | None = None) -> list[VariableVerdict]:
        """The steady-state table at round `rnd` (default: the last evaluated round)."""
        if rnd is None:
            [(rnd,)] = self._rows("SELECT MAX(round) FROM steady WHERE phase=?", (phase,))
            if rnd is None:
                return []
        rows = self._rows(
            "SELECT variable, window, vals, average, range_measured, range_allowed, slope, intercept, fit_excursion,"
            " fit_allowed, range_ok, slope_ok FROM steady WHERE phase=? AND round=? ORDER BY rowid",
            (phase, rnd),
        )
        return steady_verdicts(rows, self.dir / "results.db")

    def close(self) -> None:
        if self.writable and (self.manifest is None or self.manifest.state != "running"):
            self._plain_journal()
        self._db.close()
        self._drop_copy()
        self.release_writer()

    def release_writer(self) -> None:
        """Give up the run directory's claim (writer.py) once the run has ended; the store may still be read."""
        if self.writer is not None:
            self.writer.release()
            self.writer = None

    def _drop_copy(self) -> None:
        if self._copy is not None:
            self._copy.cleanup()
            self._copy = None
