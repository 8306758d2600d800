"""Whole-run reads of a stored run in one query each, for the readers that look at every cell
at once (a run's summary and its self-audit): a query per cell scanned the tables once per cell."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from iolab.core.results import Histogram
from iolab.store.runstore import RunStore

SeriesRow = tuple[float, float, float, float, float | None]


def all_series(store: RunStore) -> dict[int, list[SeriesRow]]:
    """Every cell's (t_s, read IOPS, write IOPS, MB/s, maximum latency µs) rows."""
    have = {row[1] for row in store.query("PRAGMA table_info(series)")}
    mx = "lat_max_us" if "lat_max_us" in have else "NULL"  # a results.db from before the column
    out: dict[int, list[SeriesRow]] = {}
    for cid, *row in store.query(
        f"SELECT cell_id, t_s, read_iops, write_iops, mbps, {mx} FROM series ORDER BY cell_id, t_s"
    ):
        out.setdefault(cid, []).append(tuple(row))
    return out


def series_rows(store: RunStore) -> dict[int, list[tuple[Any, ...]]]:
    """Every cell's per-second rows as stored, every column (resultsdb.series_rows' tuples: a
    column a results.db from before it lacks is None), in time order: one scan (the audit holds
    them to what the raw logs give)."""
    have = {row[1] for row in store.query("PRAGMA table_info(series)")}
    cols = ", ".join(c if c in have else "NULL" for c in ("lat_mean_us", "lat_max_us"))
    rows: dict[int, list[tuple[Any, ...]]] = {}
    for row in store.query(
        f"SELECT cell_id, t_s, read_iops, write_iops, mbps, {cols} FROM series ORDER BY cell_id, t_s"
    ):
        rows.setdefault(row[0], []).append(tuple(row))
    return rows


def raw_stats(store: RunStore) -> dict[str, tuple[int, int]]:
    """Each recorded raw file's (size, mtime_ns) as its cell was stored (none for a run stored
    before results.db recorded them)."""
    if not store.query("SELECT 1 FROM sqlite_master WHERE type='table' AND name='raw_stats'"):
        return {}
    return {name: (size, mtime) for name, size, mtime in store.query("SELECT name, size, mtime_ns FROM raw_stats")}


def histogram_rows(store: RunStore) -> dict[int, list[tuple[Any, ...]]]:
    """Every cell's histogram rows as stored (resultsdb.histogram_rows' tuples), in the order
    stored: one scan, no grouping (the audit holds them to what the raw output gives, and counts
    each cell's IOs in them)."""
    rows: dict[int, list[tuple[Any, ...]]] = {}
    for row in store.query("SELECT cell_id, direction, value_us, count, max_us FROM histograms ORDER BY rowid"):
        rows.setdefault(row[0], []).append(tuple(row))
    return rows


def histograms(store: RunStore, cell_ids: Collection[int]) -> dict[int, Histogram]:
    """Several cells' histograms (both directions summed, as RunStore.histogram without a
    direction), 500 cells a query."""
    ids = sorted(set(cell_ids))
    rows: dict[int, list[tuple[float, int, float]]] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        for cid, v, c, mx in store.query(
            "SELECT cell_id, value_us, SUM(count), MAX(max_us) FROM histograms"
            f" WHERE cell_id IN ({','.join('?' * len(chunk))}) GROUP BY cell_id, value_us ORDER BY cell_id, value_us",
            chunk,
        ):
            rows.setdefault(cid, []).append((v, int(c), mx))
    return {
        cid: Histogram(tuple(r[0] for r in rs), tuple(r[1] for r in rs), max(r[2] for r in rs))
        for cid, rs in rows.items()
    }
