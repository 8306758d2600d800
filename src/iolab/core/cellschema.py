"""The cells table of results.db, declared once.

`CellRow` has one field per column, in the order results.db has always stored them; each
field's `column(...)` gives its SQL type, where its value comes from when a cell is stored
(a `RoundResult` attribute, or the runner's own facts about the cell), how it is encoded,
its name in `iolab export`, and whether the report averages it over the measurement window.
`CELL_COLUMNS` reads those back in order; the CREATE TABLE, the INSERT, the exported columns
and the window averages (`summary.CellAverage`) are built from it. tests/unit/test_cellschema.py
checks that each agrees with it and that the columns on disk are still those of the first
release, so old run directories keep opening.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform

from iolab.core.results import PARTIAL_TOLERANCE, RoundResult
from iolab.core.units import measurable

# The export's column type for each SQL storage class (DuckDB's names: Parquet's types).
EXPORT_TYPES = {"INTEGER": "BIGINT", "REAL": "DOUBLE", "TEXT": "VARCHAR"}


@dataclass(frozen=True)
class CellColumn:
    name: str  # the SQL column and the CellRow field
    sql: str  # type and constraints in results.db
    # From the RoundResult: an attribute path ("read.iops") or a function; None: the runner
    # gives it with the cell (phase, round, key, workload, times, partial).
    source: str | Callable[[RoundResult], Any] | None = None
    codec: str = ""  # "json": stored as JSON text; "bool": stored as 0/1
    empty: str | None = None  # the JSON read when the column is NULL
    export: str = ""  # its name in `iolab export` (default: name)
    average: str = ""  # "mean" | "max": how CellAverage folds the window's values
    # Added after the first release: older databases gain it when opened for writing, and a
    # row stored before it existed gets old(row) (the row's other columns already decoded).
    old: Callable[[dict[str, Any]], Any] | None = None
    # A latency percentile (%): stored as the bins give it (stop rules read it so on resume as
    # live), exported empty when the cell's IOs cannot measure it (units.measurable).
    pct: float | None = None

    def value(self, result: RoundResult, given: dict[str, Any]) -> Any:
        """What is stored for one cell."""
        if self.source is None:
            v = given[self.name]
        elif callable(self.source):
            v = self.source(result)
        else:
            v = attrgetter(self.source)(result)
        if self.codec == "json":
            return json.dumps(v)  # a tuple is written as a JSON list
        return int(v) if self.codec == "bool" else v

    def decode(self, row: dict[str, Any]) -> Any:
        v: Any = row.get(self.name)  # SQLite's value, or None (also for a column added later)
        if self.codec == "json":
            return json.loads(v or self.empty) if self.empty is not None else json.loads(v)
        if self.codec == "bool":
            return bool(v) if v is not None else (self.old(row) if self.old else False)
        kind = self.sql.split()[0]
        if v is not None and not isinstance(v, SQL_TYPES.get(kind, object)):
            # SQLite keeps any value in any column: text edited into a REAL column would reach the
            # figures' arithmetic (a TypeError far from the cause)
            raise ValueError(f"column {self.name!r} holds {v!r}, not {SQL_WORDS.get(kind, kind)}")
        if isinstance(v, float) and not math.isfinite(v):
            # no run stores one (fio's figures are finite; SQLite reads a NaN back as NULL): an
            # infinity edited in would print as "∞ IOPS" and stop JSON export half-way
            raise ValueError(f"column {self.name!r} holds {v!r}, not a finite number")
        return v

    def exported(self, v: Any, ios: int | None = None) -> Any:
        if self.pct is not None and not measurable(self.pct, ios):
            return None
        return v  # JSON columns stay objects: JSON keeps them, CSV and Parquet write their JSON text

    @property
    def export_name(self) -> str:
        return self.export or self.name

    @property
    def export_type(self) -> str:
        return "BOOLEAN" if self.codec == "bool" else EXPORT_TYPES[self.sql.split()[0]]


# What a value read from a column of each SQL type may be (None aside), and how to say it
SQL_TYPES: dict[str, type | tuple[type, ...]] = {"REAL": (int, float), "INTEGER": int, "TEXT": str}
SQL_WORDS = {"REAL": "a number", "INTEGER": "a whole number", "TEXT": "text"}


def column(
    sql: str,
    source: str | Callable[[RoundResult], Any] | None = None,
    *,
    codec: str = "",
    empty: str | None = None,
    export: str = "",
    average: str = "",
    old: Callable[[dict[str, Any]], Any] | None = None,
    pct: float | None = None,
) -> Any:
    """A CellRow field and its column (the CellColumn's arguments but its name, which is the field's)."""
    spec = {
        "sql": sql,
        "source": source,
        "codec": codec,
        "empty": empty,
        "export": export,
        "average": average,
        "old": old,
        "pct": pct,
    }
    return field(metadata={"column": spec})


_T = TypeVar("_T")


@dataclass_transform(frozen_default=True, field_specifiers=(column,))
def _cells_table(cls: type[_T]) -> type[_T]:
    """A frozen dataclass whose fields are declared with `column` (type checkers see its fields)."""
    return dataclass(frozen=True)(cls)


def _pct(p: float) -> Callable[[RoundResult], float | None]:
    return lambda r: r.percentile(p)


def _old_partial(row: dict[str, Any]) -> bool:
    """A cell stored before the `partial` column: cut short by a byte budget the runner added
    to a timed interval (the tiny final WSAT interval of older fio runs)."""
    w = row["workload"]
    planned = w.get("duration_s")
    return bool(
        row["kind"] == "measure"
        and planned is not None
        and w.get("bytes_budget") is not None
        and row["runtime_s"] is not None
        and row["runtime_s"] < (1 - PARTIAL_TOLERANCE) * planned
    )


@_cells_table
class CellRow:
    """One stored cell: a row of results.db's cells table, its fields the columns in order."""

    id: int = column("INTEGER PRIMARY KEY", export="cell_id")
    phase: str = column("TEXT NOT NULL")
    round: int = column("INTEGER NOT NULL")
    ordinal: int = column("INTEGER NOT NULL")
    kind: str = column("TEXT NOT NULL")  # 'precondition' | 'measure' | 'interrupted'
    cell_key: str = column("TEXT NOT NULL")
    mix: str | None = column("TEXT")
    block_size: int | None = column("INTEGER")
    workload: dict[str, Any] = column("TEXT NOT NULL", codec="json")
    started: float = column("REAL")
    ended: float = column("REAL")
    runtime_s: float = column("REAL", "runtime_s")
    read_iops: float = column("REAL", "read.iops", average="mean")
    write_iops: float = column("REAL", "write.iops", average="mean")
    iops: float = column("REAL", "iops", average="mean")
    read_mbps: float = column("REAL", "read.mbps", average="mean")
    write_mbps: float = column("REAL", "write.mbps", average="mean")
    mbps: float = column("REAL", "mbps", average="mean")
    read_ios: int = column("INTEGER", "read.ios")
    write_ios: int = column("INTEGER", "write.ios")
    io_bytes: int = column("INTEGER", "io_bytes")
    write_bytes: int = column("INTEGER", "write.io_bytes")
    lat_mean_us: float | None = column("REAL", "lat_mean_us", average="mean")  # ART: mean of the rounds' means
    lat_max_us: float | None = column("REAL", "lat_max_us", average="max")  # MRT: the window's maximum
    read_lat_mean_us: float | None = column("REAL", "read.lat_mean_us")
    read_lat_max_us: float | None = column("REAL", "read.lat_max_us")
    write_lat_mean_us: float | None = column("REAL", "write.lat_mean_us")
    write_lat_max_us: float | None = column("REAL", "write.lat_max_us")
    p99: float | None = column("REAL", _pct(99.0), export="p99_us", pct=99.0)
    p99_9: float | None = column("REAL", _pct(99.9), export="p99_9_us", pct=99.9)
    p99_99: float | None = column("REAL", _pct(99.99), export="p99_99_us", pct=99.99)
    p99_999: float | None = column("REAL", _pct(99.999), export="p99_999_us", pct=99.999)
    counters: dict[str, Any] = column("TEXT", "counters", codec="json", empty="{}")
    raw_files: list[str] = column("TEXT", "raw_files", codec="json", empty="[]")
    # The phase's byte budget, not the cell time, ended this interval: a cap before its planned
    # length, or the budget's last interval, run by bytes alone (run/budget.py; runtime_s is its
    # true length); it is shown marked and never enters a steady-state window or a minimum.
    partial: bool = column("INTEGER", codec="bool", old=_old_partial)
    # The device idled this long before the cell (plan.Cell.idle_before_s; Host Idle Recovery).
    idle_before_s: float | None = column("REAL", old=lambda row: None)

    def metric(self, name: str) -> float | None:
        v: float | None = getattr(self, name)
        return v

    @property
    def ios(self) -> int:
        return (self.read_ios or 0) + (self.write_ios or 0)


CELL_COLUMNS: tuple[CellColumn, ...] = tuple(CellColumn(f.name, **f.metadata["column"]) for f in fields(CellRow))
BY_NAME = {c.name: c for c in CELL_COLUMNS}

# `iolab export`'s cells.csv column order (published: it stays as released), after run_id.
EXPORT_ORDER = (
    "id",
    "phase",
    "round",
    "ordinal",
    "kind",
    "cell_key",
    "mix",
    "block_size",
    "started",
    "ended",
    "runtime_s",
    "iops",
    "read_iops",
    "write_iops",
    "mbps",
    "read_mbps",
    "write_mbps",
    "io_bytes",
    "write_bytes",
    "lat_mean_us",
    "lat_max_us",
    "read_lat_mean_us",
    "write_lat_mean_us",
    "read_ios",
    "write_ios",
    "read_lat_max_us",
    "write_lat_max_us",
    "p99",
    "p99_9",
    "p99_99",
    "p99_999",
    "workload",
    "counters",
    "raw_files",
    "partial",
    "idle_before_s",
)
EXPORTED = tuple(BY_NAME[n] for n in EXPORT_ORDER)
AVERAGED = tuple(c for c in CELL_COLUMNS if c.average)

CREATE_CELLS = "CREATE TABLE IF NOT EXISTS cells (\n    " + ", ".join(f"{c.name} {c.sql}" for c in CELL_COLUMNS) + ");"
ADDED_CELL_COLUMNS = {c.name: c.sql for c in CELL_COLUMNS if c.old is not None}
_STORED = tuple(c for c in CELL_COLUMNS if c.name != "id")  # SQLite numbers the cells
INSERT_CELL = f"INSERT INTO cells ({', '.join(c.name for c in _STORED)}) VALUES ({','.join('?' * len(_STORED))})"


def cell_values(result: RoundResult, **given: Any) -> tuple[Any, ...]:
    """INSERT_CELL's parameters for one cell: `given` names the runner's columns."""
    return tuple(c.value(result, given) for c in _STORED)


def cell_row(row: dict[str, Any]) -> CellRow:
    """A CellRow from a cells row as SQLite returns it (columns by name). A column a newer
    iolab added is not this version's to read: it stays in the database, out of the row."""
    decoded: dict[str, Any] = {c.name: row.get(c.name) for c in CELL_COLUMNS}
    for c in CELL_COLUMNS:
        try:
            decoded[c.name] = c.decode(decoded)
        except ValueError as e:
            raise ValueError(
                f"phase {row.get('phase')!r} round {row.get('round')} cell {row.get('cell_key')!r}: {e}"
            ) from None
    return CellRow(**decoded)


def fold(column: CellColumn, values: list[Any]) -> float | None:
    """A column's window value for CellAverage: the mean or the maximum of the measured
    values (a round without one, e.g. no latency, does not count)."""
    vals: list[float] = [v for v in values if v is not None]
    if not vals:
        return None
    return sum(vals) / len(vals) if column.average == "mean" else max(vals)
