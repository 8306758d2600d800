"""The cells table of results.db, declared once.

One row of `CELL_COLUMNS` per column, in the order results.db has always stored them: its
SQL type, where its value comes from when a cell is stored (a `RoundResult` attribute, or
the runner's own facts about the cell), how it is encoded, its name in `iolab export`, and
whether the report averages it over the measurement window. The CREATE TABLE, the INSERT,
`CellRow`, the exported columns and the window averages (`summary.CellAverage`) are built
from it; tests/unit/test_cellschema.py checks that each agrees with it and that the columns
on disk are still those of the first release, so old run directories keep opening.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, make_dataclass
from operator import attrgetter
from typing import Any, Callable

from .results import PARTIAL_TOLERANCE, RoundResult
from .units import measurable

# The export's column type for each SQL storage class (DuckDB's names: Parquet's types).
EXPORT_TYPES = {"INTEGER": "BIGINT", "REAL": "DOUBLE", "TEXT": "VARCHAR"}


@dataclass(frozen=True)
class CellColumn:
    name: str  # the SQL column and the CellRow field
    sql: str  # type and constraints in results.db
    type: Any  # the CellRow field's type
    # From the RoundResult: an attribute path ("read.iops") or a function; None: the runner
    # gives it with the cell (phase, round, key, workload, times, partial).
    source: str | Callable[[RoundResult], Any] | None = None
    codec: str = ""  # "json": stored as JSON text; "bool": stored as 0/1
    empty: str | None = None  # the JSON read when the column is NULL
    export: str = ""  # its name in `iolab export` (default: name)
    average: str = ""  # "mean" | "max": how CellAverage folds the window's values
    # Added after the first release: older databases gain it when opened for writing, and a
    # row stored before it existed gets old(row) (the row's other columns already decoded).
    old: Callable[[dict], Any] | None = None
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
        v = row.get(self.name)
        if self.codec == "json":
            return json.loads(v or self.empty) if self.empty is not None else json.loads(v)
        if self.codec == "bool":
            return bool(v) if v is not None else (self.old(row) if self.old else False)
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


def _pct(p: float) -> Callable[[RoundResult], float | None]:
    return lambda r: r.percentile(p)


def _old_partial(row: dict) -> bool:
    """A cell stored before the `partial` column: cut short by a byte budget the runner added
    to a timed interval (the tiny final WSAT interval of older fio runs)."""
    w = row["workload"]
    planned = w.get("duration_s")
    return (row["kind"] == "measure" and planned is not None and w.get("bytes_budget") is not None
            and row["runtime_s"] is not None and row["runtime_s"] < (1 - PARTIAL_TOLERANCE) * planned)


C = CellColumn
OptF = float | None
CELL_COLUMNS: tuple[CellColumn, ...] = (
    C("id", "INTEGER PRIMARY KEY", int, export="cell_id"),
    C("phase", "TEXT NOT NULL", str),
    C("round", "INTEGER NOT NULL", int),
    C("ordinal", "INTEGER NOT NULL", int),
    C("kind", "TEXT NOT NULL", str),  # 'precondition' | 'measure' | 'interrupted'
    C("cell_key", "TEXT NOT NULL", str),
    C("mix", "TEXT", str | None),
    C("block_size", "INTEGER", int | None),
    C("workload", "TEXT NOT NULL", dict, codec="json"),
    C("started", "REAL", float),
    C("ended", "REAL", float),
    C("runtime_s", "REAL", float, "runtime_s"),
    C("read_iops", "REAL", float, "read.iops", average="mean"),
    C("write_iops", "REAL", float, "write.iops", average="mean"),
    C("iops", "REAL", float, "iops", average="mean"),
    C("read_mbps", "REAL", float, "read.mbps", average="mean"),
    C("write_mbps", "REAL", float, "write.mbps", average="mean"),
    C("mbps", "REAL", float, "mbps", average="mean"),
    C("read_ios", "INTEGER", int, "read.ios"),
    C("write_ios", "INTEGER", int, "write.ios"),
    C("io_bytes", "INTEGER", int, "io_bytes"),
    C("write_bytes", "INTEGER", int, "write.io_bytes"),
    C("lat_mean_us", "REAL", OptF, "lat_mean_us", average="mean"),  # ART: mean of the rounds' means
    C("lat_max_us", "REAL", OptF, "lat_max_us", average="max"),  # MRT: the window's maximum
    C("read_lat_mean_us", "REAL", OptF, "read.lat_mean_us"),
    C("read_lat_max_us", "REAL", OptF, "read.lat_max_us"),
    C("write_lat_mean_us", "REAL", OptF, "write.lat_mean_us"),
    C("write_lat_max_us", "REAL", OptF, "write.lat_max_us"),
    C("p99", "REAL", OptF, _pct(99.0), export="p99_us", pct=99.0),
    C("p99_9", "REAL", OptF, _pct(99.9), export="p99_9_us", pct=99.9),
    C("p99_99", "REAL", OptF, _pct(99.99), export="p99_99_us", pct=99.99),
    C("p99_999", "REAL", OptF, _pct(99.999), export="p99_999_us", pct=99.999),
    C("counters", "TEXT", dict, "counters", codec="json", empty="{}"),
    C("raw_files", "TEXT", list, "raw_files", codec="json", empty="[]"),
    # The phase's byte budget ended this interval before its planned length (runtime_s is its
    # true length); it is shown marked and never enters a steady-state window or a minimum.
    C("partial", "INTEGER", bool, codec="bool", old=_old_partial),
    # The device idled this long before the cell (plan.Cell.idle_before_s; Host Idle Recovery).
    C("idle_before_s", "REAL", OptF, old=lambda row: None),
)
del C
BY_NAME = {c.name: c for c in CELL_COLUMNS}

# `iolab export`'s cells.csv column order (published: it stays as released), after run_id.
EXPORT_ORDER = (
    "id", "phase", "round", "ordinal", "kind", "cell_key", "mix", "block_size", "started", "ended", "runtime_s",
    "iops", "read_iops", "write_iops", "mbps", "read_mbps", "write_mbps", "io_bytes", "write_bytes",
    "lat_mean_us", "lat_max_us", "read_lat_mean_us", "write_lat_mean_us", "read_ios", "write_ios",
    "read_lat_max_us", "write_lat_max_us", "p99", "p99_9", "p99_99", "p99_999",
    "workload", "counters", "raw_files", "partial", "idle_before_s",
)
EXPORTED = tuple(BY_NAME[n] for n in EXPORT_ORDER)
AVERAGED = tuple(c for c in CELL_COLUMNS if c.average)

CREATE_CELLS = ("CREATE TABLE IF NOT EXISTS cells (\n    "
                + ", ".join(f"{c.name} {c.sql}" for c in CELL_COLUMNS) + ");")
ADDED_CELL_COLUMNS = {c.name: c.sql for c in CELL_COLUMNS if c.old is not None}
_STORED = tuple(c for c in CELL_COLUMNS if c.name != "id")  # SQLite numbers the cells
INSERT_CELL = (f"INSERT INTO cells ({', '.join(c.name for c in _STORED)}) "
               f"VALUES ({','.join('?' * len(_STORED))})")


def cell_values(result: RoundResult, **given: Any) -> tuple:
    """INSERT_CELL's parameters for one cell: `given` names the runner's columns."""
    return tuple(c.value(result, given) for c in _STORED)


def _metric(self, name: str) -> float | None:
    return getattr(self, name)


CellRow = make_dataclass(
    "CellRow",
    [(c.name, c.type) for c in CELL_COLUMNS],
    frozen=True, namespace={"metric": _metric, "ios": property(lambda self: (self.read_ios or 0) + (self.write_ios or 0)),
                            "__doc__": "One stored cell: a row of results.db's cells table.",
                            "__module__": __name__},
)


def cell_row(row: dict[str, Any]) -> Any:
    """A CellRow from a cells row as SQLite returns it (columns by name)."""
    decoded = dict(row)
    for c in CELL_COLUMNS:
        decoded[c.name] = c.decode(decoded)
    return CellRow(**decoded)


def fold(column: CellColumn, values: list[Any]) -> float | None:
    """A column's window value for CellAverage: the mean or the maximum of the measured
    values (a round without one, e.g. no latency, does not count)."""
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return sum(vals) / len(vals) if column.average == "mean" else max(vals)
