"""Whether results.db holds every row the run's own record says it stored, checked once per
opened run before anything is read from it (RunStore._verify). A reader that finds rows
deleted after the run wrote them refuses the run with one paragraph naming what is missing, as
it refuses a value no run stores: the figures would silently rest on less than they say.

Only what the stored evidence backs is expected:
  - cells: each complete round holds its planned cells (roundcheck.py).
  - histograms: a cell whose row stores latency percentiles had a histogram; the runner stores
    both in one transaction (RunStore.add_cell) and the percentiles are computed from it, so a
    cell with percentiles and no histogram row lost it.
  - steady: a phase whose row in `phases` holds a steady-state verdict (steady not NULL) was
    evaluated, and the runner (and resume) stores each round's verdict from the first round the
    window could be judged through the phase's last, one row per tracked variable, before it
    ends the phase; only a stop rule's decision ends a last round before its verdict. So from
    the first round stored to the last there is a row for every variable the plan tracks. The
    first round is fixed by the cells, not by the rows left: the round whose complete rounds first
    give every tracked cell a window's worth of rounds (the window's length is that of the rows'),
    as the runner's history holds them (a cell the budget ended, partial, is no window round).
  - series: no cell column says whether an engine gave per-second rows (fio gives none for a
    cell shorter than its log interval), but the audit stored at a complete run's end counted
    the cells with a runtime and those of them with rows (audit_checks.latency_runtime and
    series_totals). A complete run cannot be resumed, so the counts still hold: more cells
    without rows now lost them. Another state's stored audit may be older than the rounds
    resume set aside since, and is not used: there (failed, interrupted, running, or no counts
    stored) a cell without rows whose own engine output holds rows lost them (the simulator's
    result carries its series; fio's output does not, and its cells are not judged so).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from iolab.core.errors import IolabError
from iolab.core.safefile import read_output
from iolab.store.manifest import Manifest
from iolab.store.roundcheck import round_gaps

# cells the readers show (complete rounds' measurements, preconditioning) whose percentiles came
# from a histogram no row holds now; NOT IN reads the histograms' cell ids once (an old results.db
# read in place may lack histograms_by_cell, and a correlated probe would scan the table per cell)
_NO_HISTOGRAM = (
    "SELECT c.phase, c.round, c.cell_key FROM cells c LEFT JOIN rounds r ON r.phase=c.phase AND r.round=c.round"
    " WHERE (c.kind='precondition' OR (c.kind='measure' AND r.complete=1)) AND c.p99 IS NOT NULL"
    " AND c.id NOT IN (SELECT cell_id FROM histograms) ORDER BY c.phase, c.round, c.ordinal"
)
# series_totals' cells: complete rounds' measurements with a runtime, and those with per-second rows
_SERIES_CELLS = (
    "SELECT c.phase, c.round, c.cell_key, c.id IN (SELECT cell_id FROM series) FROM cells c JOIN rounds r"
    " ON r.phase=c.phase AND r.round=c.round AND r.complete=1 WHERE c.kind='measure' AND c.runtime_s"
    " ORDER BY c.phase, c.round, c.ordinal"
)
# stored cells (of any round: each is stored with its rows) without per-second rows
_NO_SERIES = (
    "SELECT c.phase, c.round, c.cell_key, c.raw_files FROM cells c WHERE c.kind IN ('measure', 'precondition')"
    " AND c.id NOT IN (SELECT cell_id FROM series) ORDER BY c.phase, c.round, c.ordinal"
)
_VERDICTS = "SELECT name, rounds FROM phases WHERE steady IS NOT NULL AND rounds IS NOT NULL ORDER BY ordinal"
_STEADY = "SELECT phase, round, variable, window FROM steady"
# the rounds a phase's tracked cells entered its steady-state history in (the runner's and
# resume's: complete rounds' measurements, an interval the budget ended (partial) left out)
_HISTORY_ROUNDS = (
    "SELECT DISTINCT c.round, c.cell_key FROM cells c JOIN rounds r ON r.phase=c.phase AND r.round=c.round"
    " AND r.complete=1 WHERE c.kind='measure' AND c.phase=? AND NOT c.partial"
)


def _listed(items: list[str], most: int = 4) -> str:
    return ", ".join(items[:most]) + (" …" if len(items) > most else "")


def missing_histograms(db: sqlite3.Connection) -> list[str]:
    rows = db.execute(_NO_HISTOGRAM).fetchall()
    if not rows:
        return []
    cells = [f"phase {ph!r} round {rnd} cell {key!r}" for ph, rnd, key in rows]
    return [
        f"no latency histogram for {len(rows)} cell{'s' if len(rows) > 1 else ''} whose row stores percentiles "
        f"computed from one ({_listed(cells)})"
    ]


def _first_verdict(db: sqlite3.Connection, phase: str, keys: set[str], window: int | None) -> int | None:
    """The round the runner stored the phase's first verdict in: the first whose complete rounds
    give every tracked cell `window` rounds (core/steady.evaluate's window). None when the
    record cannot say (no tracked cells named, no stored window, a results.db from before cells
    were marked partial)."""
    if not keys or not window or "partial" not in {row[1] for row in db.execute("PRAGMA table_info(cells)")}:
        return None
    seen: dict[int, set[str]] = {}
    for rnd, key in db.execute(_HISTORY_ROUNDS, (phase,)):
        seen.setdefault(rnd, set()).add(key)
    full = sorted(rnd for rnd, got in seen.items() if keys <= got)
    return full[window - 1] if len(full) >= window else None


def _window_length(text: str) -> int | None:
    try:
        rounds = json.loads(text)
    except (TypeError, ValueError):
        return None  # a window that is not a list: the readers name it (runstore.steady_rows)
    return len(rounds) if isinstance(rounds, list) else None


def missing_steady(db: sqlite3.Connection, plan: dict[str, Any]) -> list[str]:
    phases = [p for p in plan.get("phases") or () if isinstance(p, dict) and isinstance(p.get("tracking"), list)]
    tracked = {p["name"]: [t for t in p["tracking"] if isinstance(t, dict) and "name" in t] for p in phases}
    stop_rules = {p["name"] for p in plan.get("phases") or () if isinstance(p, dict) and "stop_rule" in p}
    stored: dict[str, dict[int, set[str]]] = {}
    windows: dict[str, int | None] = {}
    for ph, rnd, var, window in db.execute(_STEADY):
        stored.setdefault(ph, {}).setdefault(rnd, set()).add(var)
        windows[ph] = _window_length(window)  # every row's window is the rule's length
    out = []
    for ph, last in db.execute(_VERDICTS):
        by_round = stored.get(ph, {})
        if not by_round:
            out.append(f"phase {ph!r} has no row, though table phases holds its steady-state verdict")
            continue
        # a phase the plan holds only as deferred names no variables: each round holds those of the others
        names = {t["name"] for t in tracked.get(ph, ())} or set().union(*by_round.values())
        keys = {str(t.get("cell_key")) for t in tracked.get(ph, ())}
        # a stop rule's decision ends the phase's last round before that round's verdict
        if ph in stop_rules and last not in by_round:
            last -= 1
        # the rows begin where the cells first filled a window, whatever the rows left begin with
        first, why = min(by_round), ""
        filled = _first_verdict(db, ph, keys, windows.get(ph))
        if filled is not None and filled <= last and filled < first:
            first, why = filled, ", the first whose cells fill its window,"
        lacking = []
        for rnd in range(first, max(last, max(by_round)) + 1):
            gone = sorted(names - by_round.get(rnd, set()))
            if gone:
                lacking.append(f"round {rnd} ({_listed([repr(n) for n in gone], 2)})")
        if lacking:
            out.append(
                f"phase {ph!r} lacks the steady-state verdict of {_listed(lacking)}, which the run stored for every "
                f"round from {first}{why} to the phase's last ({last})"
            )
    return out


def missing_series(db: sqlite3.Connection, manifest: Manifest, run_dir: Path) -> list[str]:
    counted = _series_by_audit(db, manifest)
    return counted if counted is not None else _series_by_raw(db, run_dir)


def _series_by_audit(db: sqlite3.Connection, manifest: Manifest) -> list[str] | None:
    """The complete run's cells against its stored audit's counts; None: no such audit."""
    if manifest.state != "complete":
        return None
    audited = {i.get("name"): i for i in (manifest.audit or {}).get("invariants") or () if isinstance(i, dict)}
    # the same cells: those with a runtime (latency_runtime's), those of them with rows (series_totals'
    # measurements; an audit stored before it checked preconditioning too counted only those)
    runtime, rows_of = (((audited.get(n) or {}).get("numbers") or {}) for n in ("latency-runtime", "series-totals"))
    cells, with_rows = runtime.get("checked"), rows_of.get("measurement_cells", rows_of.get("checked"))
    if not (isinstance(cells, int) and isinstance(with_rows, int)):
        return None
    rows = db.execute(_SERIES_CELLS).fetchall()
    without = [f"phase {ph!r} round {rnd} cell {key!r}" for ph, rnd, key, has in rows if not has]
    # cells deleted whole are table cells' to name (roundcheck.py): only cells that lost their rows count
    if len(without) <= cells - with_rows:
        return []
    return [
        f"no per-second rows for {len(without)} of its {len(rows)} cells of the complete rounds ({_listed(without)}), "
        f"where the audit stored at the run's end found {cells - with_rows} of {cells} without any"
    ]


def _series_by_raw(db: sqlite3.Connection, run_dir: Path) -> list[str]:
    """Stored cells without rows whose own engine output holds per-second rows: the simulator's
    result (raw/<cell>.json) carries the series the runner stored with the cell, one row each,
    in the cell's transaction. fio's output holds none (its logs do; a cell shorter than the log
    interval gives no rows), so a fio cell without rows is never counted."""
    lost = [
        f"phase {ph!r} round {rnd} cell {key!r}"
        for ph, rnd, key, raw in db.execute(_NO_SERIES)
        if any(_logged(run_dir, f) for f in _names(raw) if f.endswith(".json"))
    ]
    if not lost:
        return []
    return [
        f"no per-second rows for {len(lost)} cell{'s' if len(lost) > 1 else ''} whose stored engine output holds "
        f"them ({_listed(lost)})"
    ]


def _names(raw: object) -> list[str]:
    try:
        names = json.loads(raw) if isinstance(raw, str) else []
    except ValueError:
        return []  # not the list iolab writes: the cells' readers name it
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def _logged(run_dir: Path, name: str) -> bool:
    """Whether the raw file `name` (relative to the run directory, inside it) is a result with
    per-second rows; a file gone, unreadable or of another shape is no evidence."""
    path = run_dir / name
    if Path(name).is_absolute() or ".." in Path(name).parts:
        return False
    try:
        data = read_output(path)
        # fio's output names no series: not parsed (a short fio cell's JSON is read on every open)
        doc = json.loads(data) if '"series"' in data else None
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and isinstance(doc.get("series"), list) and bool(doc["series"])


def refuse_missing(db: sqlite3.Connection, manifest: Manifest, path: Path) -> None:
    """Raise IolabError naming every row results.db (at `path`) lacks that the run's record says
    it stored by the run's manifest."""
    found = {
        "cells": round_gaps(db, manifest.plan),
        "histograms": missing_histograms(db),
        "steady": missing_steady(db, manifest.plan),
        "series": missing_series(db, manifest, path.parent),
    }
    said = [f"table {table}, {'; '.join(items)}" for table, items in found.items() if items]
    if said:
        raise IolabError(
            f"{path}: {'; '.join(said)}. The run's stored results were changed after it wrote them; nothing is "
            "shown from them."
        )


__all__ = ["missing_histograms", "missing_series", "missing_steady", "refuse_missing"]
