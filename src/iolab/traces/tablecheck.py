"""An IO table's columns held to what iolab writes, when the table is opened.

Every reader and the capture check each value as it converts it (traces/textscan.py's limits),
so a table iolab wrote holds nothing else. A Parquet file is still a plain file: edited with
another tool, or written by one with iolab's metadata copied over, it can hold a size of type
DOUBLE, a response time that is not a number, an offset at the end of BIGINT. Read as it is,
`trace analyze` and `trace export` ended in a traceback (a NaN made into a step count, an
overflow adding offset and size in SQL). Checked here, before anything reads the rows, it is
one paragraph naming the file, the column and the value.

Values are checked from the Parquet footer's statistics (a few kilobytes, as opening a table
reads them anyway); a column whose statistics are missing in some row group (a NaN leaves a
DOUBLE column's min and max unset, another writer may write none) is scanned instead."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import duckdb

from iolab.core.errors import IolabError
from iolab.core.fieldtypes import shown, wrong_type
from iolab.core.usertext import control_problem
from iolab.traces.sqltext import MAX_BYTES, MAX_LATENCY_US, MAX_TIME_NS

# What the readers let through, once converted (textscan's limits). Times are rebased to the
# first IO, so from 0 to twice the ±126 years a reader takes; a response time that is negative
# is taken as none by the analysis, as long as it is a number.
RANGES = {
    "time_ns": (0, 2 * MAX_TIME_NS, "an issue time in ns from the first IO"),
    "offset_bytes": (0, MAX_BYTES, "an offset in bytes (0 to 1 EiB)"),
    "size_bytes": (0, MAX_BYTES, "a size in bytes (0 to 1 EiB)"),
    "latency_us": (-MAX_LATENCY_US, MAX_LATENCY_US, "a response time in µs (at most 31 years)"),
}
_AGAIN = (
    "iolab's import and capture never write that: the table was changed or written by another tool. "
    "Import the original trace again with `iolab trace import`."
)


def check_values(db: duckdb.DuckDBPyConnection, path: Path, types: Mapping[str, str]) -> None:
    """Refuse (IolabError) a table whose columns are not of the SQL `types` iolab writes them in
    (table.SQL_TYPES) or whose values are out of the range any reader lets through."""
    have = {d[0]: str(d[1]) for d in db.execute("SELECT * FROM read_parquet(?) LIMIT 0", [str(path)]).description}
    for col, want in types.items():
        if col in have and have[col] != want:
            raise IolabError(f"{path}: column {col} is of type {have[col]}, not {want}. {_AGAIN}")
    stats = db.execute(
        "SELECT path_in_schema, min(TRY_CAST(stats_min_value AS DOUBLE)), max(TRY_CAST(stats_max_value AS DOUBLE)),"
        " bool_and((stats_min_value IS NOT NULL AND stats_max_value IS NOT NULL)"
        "          OR stats_null_count = row_group_num_rows)"
        f" FROM parquet_metadata(?) WHERE path_in_schema IN ({', '.join('?' * len(RANGES))})"
        " GROUP BY path_in_schema",
        [str(path), *RANGES],
    ).fetchall()
    for col, lo_seen, hi_seen, complete in stats:
        if not complete:
            lo_seen, hi_seen = _scanned(db, path, col)
        low, high, what = RANGES[col]
        for seen in (lo_seen, hi_seen):
            if seen is not None and not low <= seen <= high:
                raise IolabError(f"{path}: column {col} holds {_number(seen)}, which is not {what}. {_AGAIN}")


def _scanned(db: duckdb.DuckDBPyConnection, path: Path, col: str) -> tuple[float | None, float | None]:
    """The column's least and greatest value read from its rows; a value that is not a finite
    number (NaN, ±infinity) is returned as such, as it is what the check refuses."""
    bad, low, high = db.execute(
        f"SELECT min({col}) FILTER (WHERE NOT isfinite({col})), min({col}), max({col}) FROM read_parquet(?)",
        [str(path)],
    ).fetchall()[0]
    if bad is not None:
        return float(bad), float(bad)
    return (None if low is None else float(low)), (None if high is None else float(high))


def _number(v: float) -> str:
    """A value as read: whole numbers in full below 10^18 (a double holds them exactly), the
    rest (NaN, infinity, 1e300) in Python's own short form."""
    return f"{v:,.0f}" if math.isfinite(v) and abs(v) < 1e18 and v == int(v) else f"{v:.6g}"


# The table's metadata (table._META_KEY), each field as write_table stores it. start_unix_ns
# reaches the SQL of the exports that write wall-clock times as a number: a string there was SQL
# text, and a crafted table's `trace export` wrote a file of its choosing (COPY ... TO) outside
# every write policy.
META_TYPES: dict[str, Any] = {
    "fmt": str,
    "sources": list[str],
    "start_unix_ns": int | None,
    "skipped_lines": int,
    "skipped_examples": list[dict[str, Any]],
    "notes": list[str],
    "lost_events": int | None,
    "zero_length_dropped": int,
}
_REQUIRED = ("fmt", "sources")
EXAMPLE_TYPES = {"file": str, "line": int, "problem": str, "text": str}  # table.BadLine's fields


def read_meta(raw: bytes, path: Path) -> dict[str, Any]:
    """The table's iolab metadata, each field of its type (IolabError naming the field)."""
    try:
        meta = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise IolabError(f"{path}: its iolab trace metadata is not JSON ({e}). {_AGAIN}") from None
    problem = _meta_problem(meta)
    if problem is not None:
        raise IolabError(f"{path}: its iolab trace metadata's {problem}. {_AGAIN}")
    return meta


def _meta_problem(meta: Any) -> str | None:
    if not isinstance(meta, dict):
        return f"document is {shown(meta)}, not an object"
    for name in _REQUIRED:
        if name not in meta:
            return f"field {name!r} is missing"
    for name, hint in META_TYPES.items():
        if name in meta and (problem := wrong_type(name, meta[name], hint)) is not None:
            return problem
    for i, example in enumerate(meta.get("skipped_examples", ())):
        if set(example) != set(EXAMPLE_TYPES):
            return f"skipped_examples[{i}] has the fields {sorted(example)}, not {sorted(EXAMPLE_TYPES)}"
        for name, hint in EXAMPLE_TYPES.items():
            if (problem := wrong_type(name, example[name], hint)) is not None:
                return f"skipped_examples[{i}] {problem}"
    start = meta.get("start_unix_ns")
    if start is not None and abs(start) > 2 * MAX_TIME_NS:  # a reader's times, ±126 years, and their origin's
        return f"field 'start_unix_ns' is {start:,}, more than 253 years from 1970"
    for text in [meta["fmt"], *meta["sources"]]:  # printed as the table's summary
        if (problem := control_problem(text)) is not None:
            return f"format or source {shown(text)} {problem}"
    return None
