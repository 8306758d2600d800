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
    the first round stored to the last there is a row for every variable the plan tracks.
  - series: no cell column says whether an engine gave per-second rows (fio gives none for a
    cell shorter than its log interval), but the audit stored at a complete run's end counted
    the cells with a runtime and those of them with rows (audit_checks.latency_runtime and
    series_totals). A complete run cannot be resumed, so the counts still hold: more cells
    without rows now lost them. Another state's stored audit may be older than the rounds
    resume set aside since, and is not used.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from iolab.core.errors import IolabError
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
_VERDICTS = "SELECT name, rounds FROM phases WHERE steady IS NOT NULL AND rounds IS NOT NULL ORDER BY ordinal"
_STEADY = "SELECT phase, round, variable FROM steady"


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


def missing_steady(db: sqlite3.Connection, plan: dict[str, Any]) -> list[str]:
    tracked = {
        p["name"]: {t["name"] for t in p["tracking"] if isinstance(t, dict) and "name" in t}
        for p in plan.get("phases") or ()
        if isinstance(p, dict) and isinstance(p.get("tracking"), list)
    }
    stop_rules = {p["name"] for p in plan.get("phases") or () if isinstance(p, dict) and "stop_rule" in p}
    stored: dict[str, dict[int, set[str]]] = {}
    for ph, rnd, var in db.execute(_STEADY):
        stored.setdefault(ph, {}).setdefault(rnd, set()).add(var)
    out = []
    for ph, last in db.execute(_VERDICTS):
        by_round = stored.get(ph, {})
        if not by_round:
            out.append(f"phase {ph!r} has no row, though table phases holds its steady-state verdict")
            continue
        # a phase the plan holds only as deferred names no variables: each round holds those of the others
        names = tracked.get(ph) or set().union(*by_round.values())
        # a stop rule's decision ends the phase's last round before that round's verdict
        if ph in stop_rules and last not in by_round:
            last -= 1
        lacking = []
        for rnd in range(min(by_round), max(last, max(by_round)) + 1):
            gone = sorted(names - by_round.get(rnd, set()))
            if gone:
                lacking.append(f"round {rnd} ({_listed([repr(n) for n in gone], 2)})")
        if lacking:
            out.append(
                f"phase {ph!r} lacks the steady-state verdict of {_listed(lacking)}, which the run stored for every "
                f"round from {min(by_round)} to the phase's last ({last})"
            )
    return out


def missing_series(db: sqlite3.Connection, manifest: Manifest) -> list[str]:
    if manifest.state != "complete":
        return []
    audited = {i.get("name"): i for i in (manifest.audit or {}).get("invariants") or () if isinstance(i, dict)}
    # the same cells: those with a runtime (latency_runtime's), those of them with rows (series_totals')
    cells, with_rows = (
        ((audited.get(n) or {}).get("numbers") or {}).get("checked") for n in ("latency-runtime", "series-totals")
    )
    if not (isinstance(cells, int) and isinstance(with_rows, int)):
        return []
    rows = db.execute(_SERIES_CELLS).fetchall()
    without = [f"phase {ph!r} round {rnd} cell {key!r}" for ph, rnd, key, has in rows if not has]
    # cells deleted whole are table cells' to name (roundcheck.py): only cells that lost their rows count
    if len(without) <= cells - with_rows:
        return []
    return [
        f"no per-second rows for {len(without)} of its {len(rows)} cells of the complete rounds ({_listed(without)}), "
        f"where the audit stored at the run's end found {cells - with_rows} of {cells} without any"
    ]


def refuse_missing(db: sqlite3.Connection, manifest: Manifest, path: Path) -> None:
    """Raise IolabError naming every row results.db (at `path`) lacks that the run's record says
    it stored by the run's manifest."""
    found = {
        "cells": round_gaps(db, manifest.plan),
        "histograms": missing_histograms(db),
        "steady": missing_steady(db, manifest.plan),
        "series": missing_series(db, manifest),
    }
    said = [f"table {table}, {'; '.join(items)}" for table, items in found.items() if items]
    if said:
        raise IolabError(
            f"{path}: {'; '.join(said)}. The run's stored results were changed after it wrote them; nothing is "
            "shown from them."
        )


__all__ = ["missing_histograms", "missing_series", "missing_steady", "refuse_missing"]
