"""The normalised IO table: one row per block IO, whatever the trace came from.

Every reader (import) and the Linux capture end in the same table, stored as one Parquet
file so DuckDB can scan it without loading it (and a user can open it with any Parquet
tool). Columns:

    time_ns      BIGINT   issue time, ns from the trace's first IO (the first IO is at 0)
    device       VARCHAR  the traced volume as the format names it ("7,0", "hm_0", "ASU 1")
    op           VARCHAR  read | write | trim | flush | other
    offset_bytes BIGINT  from the start of the device
    size_bytes   BIGINT
    process      VARCHAR  issuing process name (NULL when the format has none)
    latency_us   DOUBLE   issue -> completion in µs (NULL when the format has none, or when
                          the completion was not captured)
    pid          BIGINT   issuing process id (NULL when the format has none)
    outstanding  BIGINT   other IOs in flight when this one was issued: issued before it
                          (or at the same instant, earlier in the input) and completed after
                          its issue. Computed from issue times and response times when the
                          table is written; IOs without a response time never count as in
                          flight. NULL when the trace has no response times at all.

Rows are stored in time order. Facts about the trace (format, source files, whether a wall
clock start is known, how many bad lines were skipped, how many zero-length IOs were dropped)
are kept in the Parquet key-value metadata and come back as a `TraceTable`.

A read, write or trim of 0 bytes (a trace's padding records, a `W 8 + 0`) moves no data and is
no IO a drive can replay: every reader's rows pass through write_table, which drops them and
counts them (flushes, of no size by nature, are kept: blkparse's empty pre-flush `FWS 0 + 0`).
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import duckdb

from iolab.core.errors import IolabError
from iolab.core.safefile import check_regular
from iolab.core.units import counted, human_span
from iolab.targets.writepolicy import check_file, output_dir, output_file
from iolab.traces.sqltext import sql_str
from iolab.traces.tablecheck import check_values, read_meta

COLUMNS = ("time_ns", "device", "op", "offset_bytes", "size_bytes", "process", "latency_us", "pid", "outstanding")
# What every table has; tables written before pid and outstanding existed lack those two.
CORE_COLUMNS = COLUMNS[:7]
OPS = ("read", "write", "trim", "flush", "other")

# The table's SQL types, in column order (used to build empty tables and to check files).
SQL_TYPES = {
    "time_ns": "BIGINT",
    "device": "VARCHAR",
    "op": "VARCHAR",
    "offset_bytes": "BIGINT",
    "size_bytes": "BIGINT",
    "process": "VARCHAR",
    "latency_us": "DOUBLE",
    "pid": "BIGINT",
    "outstanding": "BIGINT",
}

_META_KEY = "iolab_trace"
# DuckDB's own buffers when writing a table (import, capture, synthesis); past this it spills
# to disk. DuckDB's default (80 % of RAM) let a 50 M-IO synthesis reach 14 GB.
IMPORT_MEMORY = "1GB"
# Snappy with Parquet v2 encodings (delta-packed integers) decodes about a third faster
# than zstd for the same size on these tables; analysis speed is bound by decoding.
PARQUET_OPTIONS = "COMPRESSION snappy, PARQUET_VERSION V2"


@dataclass(frozen=True)
class BadLine:
    """One rejected input line: where, which field, what was expected."""

    file: str
    line: int  # 1-based line number (record number for binary formats)
    problem: str  # "field 4 (Type): expected Read or Write, got 'Wrte'"
    text: str  # the line as read (cut to 200 characters)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.problem} (line: {self.text!r})"


def refuse_bad_input(bad: BadLine, n_bad: int, advice: str, more: str = "more", record: bool = False) -> IolabError:
    """The refusal of a trace whose bad lines (or records of a binary trace) are not skipped:
    the first one, how many more there are, and `advice` (what to do, with its lead-in)."""
    where = f"{bad.file}: record {bad.line}: {bad.problem}" if record else str(bad)
    return IolabError(where + (f" ({n_bad - 1:,} {more})" if n_bad > 1 else "") + advice)


@dataclass(frozen=True)
class TraceTable:
    """A normalised IO table on disk (`path`, Parquet) and what is known about it."""

    path: Path
    fmt: str  # the reader that made it ('msr', 'tracefs', 'synthetic', ...)
    sources: tuple[str, ...]  # input files (or the captured device)
    rows: int
    duration_s: float  # from the first issue to the last issue
    has_latency: bool  # at least one row has a latency
    start_unix_ns: int | None = None  # wall-clock time of time_ns = 0, when the format says
    skipped_lines: int = 0  # bad lines dropped with skip_bad_lines
    skipped_examples: tuple[BadLine, ...] = ()
    notes: tuple[str, ...] = ()  # caveats a reader or the capture wants reported
    lost_events: int | None = None  # trace events the kernel dropped during a capture (None: not known)
    zero_length_dropped: int = 0  # reads, writes and trims of 0 bytes left out (write_table)

    @classmethod
    def open(cls, path: str | Path, con: duckdb.DuckDBPyConnection | None = None) -> TraceTable:
        """Load a table written by iolab (import, capture or synthetic generator).

        Row count, duration and whether response times are present come from the Parquet
        footer statistics, so opening a 50-million-IO table reads a few kilobytes. `con`: a
        connection of the caller's to read them with (a new one costs ~15 ms of CPU).
        """
        p = Path(path)
        if not p.exists():
            raise IolabError(
                f"{p}: no such trace table (expected a .parquet file written by iolab trace import or capture)."
            )
        check_regular(p, "trace table")  # a directory, FIFO or device was called "no such trace table"
        own = con is None
        db = connect() if con is None else con
        try:
            kv = db.execute(
                "SELECT value FROM parquet_kv_metadata(?) WHERE key = ?", [str(p), _META_KEY.encode()]
            ).fetchall()
            stats = db.execute(
                "SELECT path_in_schema, sum(row_group_num_rows), max(TRY_CAST(stats_max_value AS BIGINT)),"
                " sum(stats_null_count) FROM parquet_metadata(?) GROUP BY path_in_schema",
                [str(p)],
            ).fetchall()
            missing = [c for c in CORE_COLUMNS if c not in {s[0] for s in stats}]
            if kv and not missing:
                check_values(db, p, SQL_TYPES)
        except duckdb.Error as e:
            # a trace in its public format (a CSV, a blkparse text) is the likeliest such file:
            # say what the command reads and how to make it, as for a Parquet file of another tool
            raise IolabError(
                f"{p}: not a readable Parquet file ({first_error_line(e)}); this command reads an IO table, "
                "the .parquet file `iolab trace import` or `iolab trace capture` writes: import a trace in a "
                "public format first (`iolab trace import FILE --out TABLE.parquet`)."
            ) from None
        finally:
            if own:
                db.close()
        if not kv:
            raise IolabError(
                f"{p}: this Parquet file has no iolab trace metadata; it was not written by "
                "iolab trace import/capture. Import the original trace with `iolab trace import`."
            )
        by_col = {name: (rows, mx, nulls) for name, rows, mx, nulls in stats}
        if missing:
            raise IolabError(f"{p}: trace table lacks column(s) {', '.join(missing)}; re-import the trace.")
        rows, max_t, _ = by_col["time_ns"]
        lat_rows, _, lat_nulls = by_col["latency_us"]
        meta = read_meta(kv[0][0], p)
        return cls(
            path=p,
            fmt=meta["fmt"],
            sources=tuple(meta["sources"]),
            rows=int(rows),
            duration_s=(max_t or 0) / 1e9,
            has_latency=int(lat_nulls or 0) < int(lat_rows),
            start_unix_ns=meta.get("start_unix_ns"),
            skipped_lines=meta.get("skipped_lines", 0),
            skipped_examples=tuple(BadLine(**b) for b in meta.get("skipped_examples", ())),
            notes=tuple(meta.get("notes", ())),
            lost_events=meta.get("lost_events"),
            zero_length_dropped=meta.get("zero_length_dropped", 0),
        )

    def scan_sql(self) -> str:
        """A FROM-clause item that reads this table (for queries built by other modules)."""
        return f"read_parquet({sql_str(str(self.path))})"

    def summary(self) -> str:
        lines = [
            f"{self.path}: {counted(self.rows, 'IO')} from {self.fmt} ({', '.join(self.sources)})",
            f"  span: {human_span(self.duration_s)} from the first IO to the last"
            + (f" ({_iops(self.rows / self.duration_s)} IOPS on average)" if self.duration_s > 0 else ""),
            f"  response times: {'yes' if self.has_latency else 'not in this trace'}",
        ]
        if self.skipped_lines:
            lines.append(f"  skipped {counted(self.skipped_lines, 'bad line')}, e.g. {self.skipped_examples[0]}")
        if self.zero_length_dropped:
            lines.append(
                f"  dropped {counted(self.zero_length_dropped, 'zero-length IO')} (reads, writes or trims of 0 bytes: "
                "no IO a drive can replay)"
            )
        if self.lost_events is not None:
            lines.append(
                f"  trace events dropped by the kernel: {self.lost_events:,}"
                + (" (INCOMPLETE trace)" if self.lost_events else "")
            )
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def _iops(v: float) -> str:
    return f"{v:,.0f}" if v >= 10 else f"{v:.3g}"


def connect(memory_limit: str | None = None, threads: int | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB that spills to a private temp directory instead of failing.

    Analysis of long traces must not need RAM proportional to the trace, so large sorts and
    joins are allowed to spill; `memory_limit` (e.g. '1GB') caps DuckDB's own buffers.
    """
    con = duckdb.connect(":memory:")
    con.execute(f"SET temp_directory = {sql_str(_spill_dir())}")
    con.execute("SET preserve_insertion_order = true")
    con.execute("SET enable_progress_bar = false")
    if memory_limit:
        con.execute(f"SET memory_limit = {sql_str(memory_limit)}")
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    return con


def write_table(
    con: duckdb.DuckDBPyConnection,
    select_sql: str,
    out: str | Path,
    *,
    fmt: str,
    sources: tuple[str, ...],
    origin_ns: int | None = None,
    start_unix_ns: int | None = None,
    skipped_lines: int = 0,
    skipped_examples: tuple[BadLine, ...] = (),
    notes: tuple[str, ...] = (),
    presorted: bool = False,
    lost_events: int | None = None,
) -> TraceTable:
    """Write the rows of `select_sql` as a trace table.

    `select_sql` returns CORE_COLUMNS, optionally `pid`, plus `ord` (BIGINT, the input
    order: line number, event index), which breaks ties between IOs issued at the same
    instant so that coarse clocks (Tencent's whole seconds) keep the file's order.
    `outstanding` is computed here (see the module doc).

    `time_ns` is rebased so the first IO is at 0: pass the smallest time as `origin_ns` when
    the caller already knows it (saves a pass over the input). `start_unix_ns` is the wall
    clock of the *input's* time 0, if the format has one. The file is written next to `out`
    and renamed into place (output_file), so a failed import never leaves a half-written table behind.
    `presorted` skips the sort when the rows already come in time order (then `ord`
    is not needed). `lost_events` (captures) is how many trace events the kernel dropped.
    """
    out = check_file(out, "IO table")
    output_dir(out.parent, "IO table's directory")
    select_sql, dropped = _without_zero_length(con, select_sql, sources)
    if dropped or origin_ns is None:  # the first IO may have been a dropped one
        origin_ns = con.execute(f"SELECT min(time_ns) FROM ({select_sql})").fetchall()[0][0]
    if origin_ns is None:
        raise IolabError(f"{', '.join(sources)}: no IOs found; nothing to write to {out}.")
    given = {d[0] for d in con.execute(f"SELECT * FROM ({select_sql}) LIMIT 0").description}

    def col(c: str) -> str:
        if c == "time_ns":
            return f"CAST(time_ns - {int(origin_ns)} AS BIGINT) AS time_ns"
        return f"CAST({c if c in given else 'NULL'} AS {SQL_TYPES[c]}) AS {c}"

    cols = ", ".join(col(c) for c in COLUMNS[:-1])
    meta = {
        "fmt": fmt,
        "sources": list(sources),
        "start_unix_ns": None if start_unix_ns is None else int(start_unix_ns) + int(origin_ns),
        "skipped_lines": skipped_lines,
        "skipped_examples": [asdict(b) for b in skipped_examples],
        "notes": list(notes),
        "lost_events": lost_events,
        "zero_length_dropped": dropped,
    }
    with output_file(out, "IO table") as part:
        con.execute(
            f"COPY ({_with_outstanding(cols, select_sql, presorted)}) TO {sql_str(str(part))} "
            f"(FORMAT parquet, {PARQUET_OPTIONS}, KV_METADATA {{{_META_KEY}: {sql_str(json.dumps(meta))}}})"
        )
    return TraceTable.open(out)


_ZERO_LENGTH = "coalesce(op IN ('read', 'write', 'trim') AND size_bytes = 0, false)"


def _without_zero_length(con: duckdb.DuckDBPyConnection, select_sql: str, sources: tuple[str, ...]) -> tuple[str, int]:
    """The rows less the reads, writes and trims of 0 bytes, and how many those were; refused
    when they are all the trace holds (an empty table would be no trace at all)."""
    [(dropped, total)] = con.execute(
        f"SELECT count(*) FILTER (WHERE {_ZERO_LENGTH}), count(*) FROM ({select_sql})"
    ).fetchall()
    if dropped and dropped == total:
        raise IolabError(
            f"{', '.join(sources)}: every one of its {counted(total, 'IO')} is a read, write or trim of 0 bytes, "
            "which moves no data and no drive can replay; nothing to import. Nothing was written."
        )
    return (f"SELECT * FROM ({select_sql}) WHERE NOT {_ZERO_LENGTH}" if dropped else select_sql), dropped


def _with_outstanding(cols: str, select_sql: str, presorted: bool) -> str:
    """The rows in time order with the `outstanding` column.

    One pass over +1 (issue) and -1 (completion) events in time order: the running sum just
    before an IO's own issue event is the number of IOs in flight. A completion at the same
    instant as an issue is counted first (that IO is no longer in flight), and an IO whose
    response time rounds to 0 ns is never in flight.
    """
    order = "" if presorted else "ORDER BY time_ns, ord"
    done = "CAST(round(latency_us * 1000) AS BIGINT)"
    return f"""
        WITH r AS (SELECT {cols}, row_number() OVER ({order}) AS k FROM ({select_sql})),
        ev AS (SELECT k, time_ns AS t, 1 AS is_issue, CASE WHEN {done} > 0 THEN 1 ELSE 0 END AS d FROM r
               UNION ALL SELECT k, time_ns + {done}, 0, -1 FROM r WHERE {done} > 0),
        lvl AS (SELECT k, sum(d) OVER (ORDER BY t, is_issue, k ROWS UNBOUNDED PRECEDING) - d AS n, is_issue FROM ev)
        SELECT r.* EXCLUDE (k),
               CASE WHEN (SELECT bool_or(latency_us IS NOT NULL) FROM r) THEN CAST(lvl.n AS BIGINT) END AS outstanding
        FROM r JOIN lvl ON lvl.k = r.k AND lvl.is_issue = 1
        ORDER BY r.k
    """


def table_from_rows(rows, out: str | Path, fmt: str = "rows", notes: tuple[str, ...] = ()) -> TraceTable:
    """A trace table from Python tuples (time_ns, device, op, offset_bytes, size_bytes,
    process, latency_us[, pid]): for small hand-made traces (examples, tests, other tools)."""
    con = connect()
    try:
        given = CORE_COLUMNS + ("pid",)
        cols = ", ".join(f"{c} {SQL_TYPES[c]}" for c in given)
        con.execute(f"CREATE TEMP TABLE r ({cols}, ord BIGINT)")
        con.executemany(
            f"INSERT INTO r VALUES ({', '.join('?' * (len(given) + 1))})",
            [tuple(r) + (None,) * (len(given) - len(r)) + (i,) for i, r in enumerate(rows)],
        )
        return write_table(con, "SELECT * FROM r", out, fmt=fmt, sources=("rows",), notes=notes)
    finally:
        con.close()


_SPILL_DIR: str | None = None


def _spill_dir() -> str:
    """One spill directory per process, removed at exit (DuckDB's default is ./.tmp)."""
    global _SPILL_DIR
    if _SPILL_DIR is None:
        _SPILL_DIR = tempfile.mkdtemp(prefix="iolab-duckdb-")
        atexit.register(shutil.rmtree, _SPILL_DIR, True)
    return _SPILL_DIR


def first_error_line(e: Exception) -> str:
    """The first line of a DuckDB error, for a one-line message."""
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


__all__ = [
    "COLUMNS",
    "CORE_COLUMNS",
    "OPS",
    "BadLine",
    "TraceTable",
    "connect",
    "sql_str",
    "table_from_rows",
    "write_table",
]
