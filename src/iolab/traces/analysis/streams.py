"""Stream analysis of a normalised IO table (SNIA RWSW "IO streams" per capture step).

    analyse(table, step_s=300, threshold=0.03, seq=SeqRule()) -> StreamAnalysis

An IO *stream* is a unique (RND|SEQ, block size, READ|WRITE). Only reads and writes with a
size > 0 take part; trims, flushes and zero-length IOs are counted in `excluded_ios`.

SEQ rule (`SeqRule`, a parameter): an IO is SEQ when its offset equals the end offset
(offset + size) of one of the last `lookback` IOs *of the same direction on the same
device*, in issue order; with `gap_bytes` > 0 it may also start up to that many bytes past
such an end (a small skip still counts as sequential). Everything else is RND. Looking back
over several IOs (default 64) keeps a sequential stream SEQ while other streams interleave
with it: a stream that is a share s of its direction's IOs loses track after more than 64
others in a row, with probability (1 - s)^64 (0.1 % at s = 10 %, 4 % at s = 5 %); raise
`lookback` for traces with many interleaved streams (the cost is one comparison per IO per
step back, four at a time where the CPU has AVX2). The chance that a random IO lands exactly
at the end of one of the recent IOs is negligible on any real device.

Per step (default 5 minutes; the last step ends at the trace's last completion, or its last
issue when there are no response times, and is then `partial`: its rates are over its true
length, and one shorter than half a step is left out of the per-step average and maximum and
of the replay, see StreamAnalysis.short_step) the analysis gives: IOs per stream, IOPS, MB/s
(10^6 B/s), read %, average and maximum outstanding IO, average and maximum response time.
Outstanding IO comes from issue and completion times (issue + latency): the average is the
time-weighted mean over the step (the sum of each IO's in-flight time inside the step,
divided by the step's length), the maximum is the exact peak of the in-flight count. IOs
without a response time are left out of outstanding IO; a trace without response times has
None for outstanding IO and response times, never 0. Outstanding IO counts every device
analysed together; pass `devices` to look at one.

Dominant streams are those with at least `threshold` of all analysed IOs over the whole
trace (SNIA uses 3 %).

How: DuckDB scans the Parquet table once, in its stored (time) order, and hands the rows
over as an Arrow C stream of record batches that compiled code (`iolab._sim.StreamWalk`,
crates/sim/src/streams.rs) reads in place, a thread of its own fetching the next batch
while the walk works; the walk takes the IOs in issue order, a cache-sized slice at a time,
doing the SEQ rule (each device and direction's history of end offsets, streams_seq.rs), the
in-flight count (pending completions counted in time buckets, streams_oio.rs) and the
per-(step, stream) tabulation (streams_tab.rs). Rows out of time order are refused. The tabulation's rows
are cut per chunk of `chunk_rows` file rows, as the earlier chunked scans cut them (their
latency sums add up in that order). No Python code runs per IO, and memory is bounded by the
chunk size, not the trace.

The result's types and its JSON file are in streamstats.py, the merging of the walk's rows in tabulate.py.
A capture's sample of the written data (datasample.py), kept beside the table, is carried
into the result as it is.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

from iolab.core.errors import IolabError
from iolab.core.units import counted, human_span
from iolab.traces.analysis.datasample import load_sample
from iolab.traces.analysis.streamstats import SeqRule, StreamAnalysis
from iolab.traces.analysis.tabulate import Accumulator, Scan
from iolab.traces.table import TraceTable, connect, sql_str

CHUNK_ROWS = 1_000_000  # file rows per chunk of the tabulation; its batches (~33 MB) are kept until it ends
# The most steps an analysis cuts a trace into (`--max-steps`): memory, time and the files
# written grow with the steps, not the IOs (600,000 steps of a 2-IO trace took 54 s, 2.1 GB
# and a 165 MB analysis.json; 2.6 billion asked 41 GB and aborted). 100,000 is a week in
# 6 s steps, far more than a replay or the Self-Test plots can show; they took 9.7 s and
# 440 MB (2 IOs 30 days apart in 26 s steps).
MAX_STEPS = 100_000


def analyse(
    table: TraceTable | str | Path,
    step_s: float = 300.0,
    threshold: float = 0.03,
    seq: SeqRule = SeqRule(),
    devices: tuple[str, ...] = (),
    process: str | None = None,
    memory_limit: str | None = "512MB",
    chunk_rows: int = CHUNK_ROWS,
    max_steps: int = MAX_STEPS,
) -> StreamAnalysis:
    """Cut the trace into steps and tabulate its IO streams (see the module docstring).

    `devices` keeps only those devices, `process` only IOs issued by that process name. A
    trace that would make more than `max_steps` steps is refused before it is walked.
    """
    # One DuckDB thread: the scan already runs beside the walk, and splitting it over more
    # threads costs more CPU than it saves.
    con = connect(memory_limit=memory_limit, threads=1)
    try:
        if not isinstance(table, TraceTable):
            table = TraceTable.open(table, con)
        if step_s <= 0:
            raise IolabError(f"stream analysis: step must be > 0 s, got {step_s}")
        if max_steps < 1:
            raise IolabError(f"stream analysis: the limit of steps must be ≥ 1, got {max_steps}")
        if not 0 < threshold < 1:
            raise IolabError(f"stream analysis: dominant-stream threshold must be in (0, 1), got {threshold}")
        step_ns = int(round(step_s * 1e9))
        scan = table.scan_sql()
        where = ["TRUE"]
        if devices:
            where.append("device IN (" + ", ".join(sql_str(d) for d in devices) + ")")
        if process is not None:
            where.append(f"process = {sql_str(process)}")
        sel = " AND ".join(where)
        io_filter, lat_nulls, one_device, end_bound_ns = _io_filter(con, table)
        # SEQ is tracked per device: number the devices only when there are several.
        if not one_device:
            con.execute(
                f"CREATE TYPE iolab_dev AS ENUM (SELECT DISTINCT device FROM {scan} WHERE {sel} AND device IS NOT NULL ORDER BY 1)"
            )
            n_dev = con.execute("SELECT len(enum_range(NULL::iolab_dev))").fetchall()[0][0]
            dev_sql = f", CAST(coalesce(enum_code(CAST(device AS iolab_dev)), {n_dev}) AS INTEGER) AS dev"  # no device: its own group
        else:
            dev_sql = ""  # one device: the direction alone is the group
        lat_sql = "-1.0" if not table.has_latency else "coalesce(latency_us, -1.0)" if lat_nulls else "latency_us"
        rows_where = " AND ".join(w for w in (*where[1:], io_filter) if w != "TRUE") or "TRUE"
        io_scan = Scan(str(table.path), rows_where, lat_sql, dev_sql, table.rows, chunk_rows)
        _refuse_too_many_steps(con, table, io_scan, step_ns, max_steps, end_bound_ns)
        acc = Accumulator(step_ns, seq, table.has_latency, max_steps)
        try:
            acc.consume(con, io_scan)
        finally:
            acc.close()
        if not acc.ios:
            raise _nothing_matches(con, table, devices, process)
        n_sel = (
            table.rows if sel == "TRUE" else con.execute(f"SELECT count(*) FROM {scan} WHERE {sel}").fetchall()[0][0]
        )
        data, note = load_sample(table)
        res = acc.result(
            table=table,
            step_s=step_s,
            threshold=threshold,
            devices=devices,
            process=process,
            excluded_ios=int(n_sel - acc.ios),
        )
        return replace(res, data=data, notes=res.notes + ((note,) if note else ()))
    finally:
        con.close()


def _nothing_matches(con, table: TraceTable, devices: tuple[str, ...], process: str | None) -> IolabError:
    """No read or write is left to analyse: say which options left none, in the user's words, and
    what the trace holds to choose from (a mistyped device or process name is the usual cause)."""
    asked, cols = [], []
    if devices:
        asked.append("--device " + " or ".join(devices))
        cols.append(("device", "devices"))
    if process is not None:
        asked.append(f"--process {process}")
        cols.append(("process", "processes"))
    if not asked:
        return IolabError(f"{table.path}: no reads or writes; nothing to analyse.")
    holds = []
    for col, plural in cols:
        rows = con.execute(
            f"SELECT {col}, count(*) FROM {table.scan_sql()} WHERE op IN ('read', 'write') AND {col} IS NOT NULL"
            " GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 6"
        ).fetchall()
        shown = ", ".join(f"{v} ({counted(n, 'IO')})" for v, n in rows[:5]) + (", …" if len(rows) > 5 else "")
        holds.append(f"The trace's {plural}: {shown}." if rows else f"The trace names no {plural}.")
    return IolabError(
        f"{table.path}: no reads or writes match {' and '.join(asked)}; nothing to analyse. " + " ".join(holds)
    )


def _refuse_too_many_steps(
    con, table: TraceTable, scan: Scan, step_ns: int, max_steps: int, end_bound_ns: float | None
) -> None:
    """Refuse, before the walk allocates its per-step tables, an analysis whose steps (from 0
    to the last issue or completion of the IOs analysed, as the result counts them) would be
    more than `max_steps`; name the shortest step that fits. `end_bound_ns`, the footer's
    latest issue plus its longest response time, is at or past every IO's end: when its steps
    fit, so do the IOs', and the exact end is not read (a scan of two columns, about half of
    a bare GROUP BY's CPU on a 10 M-IO table)."""
    if end_bound_ns is not None and max(1, math.ceil(end_bound_ns / step_ns)) <= max_steps:
        return
    late = " + CASE WHEN latency_us >= 0 THEN latency_us * 1000.0 ELSE 0 END" if table.has_latency else ""
    end_ns = float(con.execute(scan.sql(f"max(CAST(time_ns AS DOUBLE){late})")).fetchall()[0][0] or 0.0)
    n_steps = max(1, math.ceil(end_ns / step_ns))
    if n_steps <= max_steps:
        return
    fits = _step_text(math.ceil(end_ns / max_steps))
    raise IolabError(
        f"{table.path}: the IOs analysed span {human_span(end_ns / 1e9)} from the trace's start to the last "
        f"{'completion' if table.has_latency else 'issue'}, which in steps of {human_span(step_ns / 1e9)} is "
        f"{n_steps:,} steps, more than the limit of {max_steps:,} (--max-steps; each step costs memory, time and "
        f"lines of analysis.json and replay.toml). Give --step {fits} or longer, or raise --max-steps. "
        "Nothing was analysed or written."
    )


def _step_text(ns: int) -> str:
    """The shortest step of at least `ns`, as --step reads it, rounded up to a readable unit."""
    if ns <= 1_000_000_000:
        return f"{math.ceil(ns / 1000) / 1000:g}ms"
    if ns <= 3600 * 1_000_000_000:
        return f"{math.ceil(ns / 1e9)}s"
    return f"{math.ceil(ns / 6e10)}m"


_IO_TERMS = {
    "op": "op IN ('read', 'write')",
    "size_bytes": "size_bytes > 0",
    "offset_bytes": "offset_bytes IS NOT NULL",
    "time_ns": "time_ns IS NOT NULL",
}


def _io_filter(con, table: TraceTable) -> tuple[str, bool, bool, float | None]:
    """The filter that keeps reads and writes with a size and an offset, less the terms the
    table is known to pass (from the footer statistics, and a scan of the dictionary-encoded
    op column): filtering every row costs about a sixth of the scan. And whether latency_us
    may hold NULLs, and whether the footer says every row is on one device (one read of the
    footer statistics: each costs ~9 ms of CPU on a 10 M-IO table). And from the same read a
    bound on the IOs' latest end in ns (the latest issue plus the longest response time), or
    None where a row group has no statistics or a maximum is not a finite number."""
    known = {"op": False, "size_bytes": False, "offset_bytes": False, "time_ns": False, "latency_us": False}
    one_device = False
    top: dict[str, float | None] = {"time_ns": None, "latency_us": 0.0}
    for col, lo, hi, nulls, groups, stats, lo_text, hi_text in con.execute(
        "SELECT path_in_schema, min(TRY_CAST(stats_min_value AS DOUBLE)), max(TRY_CAST(stats_max_value AS DOUBLE)),"
        " sum(stats_null_count), count(*), count(stats_null_count), min(stats_min_value), max(stats_max_value)"
        " FROM parquet_metadata(?) GROUP BY 1",
        [str(table.path)],
    ).fetchall():
        if col == "device":
            one_device = lo_text is not None and lo_text == hi_text
        if col in top:  # every row group's maximum, or no bound
            top[col] = hi if stats == groups and hi is not None and math.isfinite(hi) else None
        if col not in known or stats != groups:  # a row group without statistics: keep the term
            continue
        known[col] = nulls == 0 and (col != "size_bytes" or (lo is not None and lo > 0))
    if known["op"]:
        bad = f"SELECT count(*) FROM {table.scan_sql()} WHERE op NOT IN ('read', 'write')"
        known["op"] = con.execute(bad).fetchall()[0][0] == 0
    terms = [term for col, term in _IO_TERMS.items() if not known[col]]
    t, lat = top["time_ns"], top["latency_us"] if table.has_latency else 0.0
    # 1 µs over: the footer's maxima pass through DOUBLE, as the exact end does
    bound = None if t is None or lat is None else t + max(lat, 0.0) * 1000.0 + 1000.0
    return " AND ".join(terms or ["TRUE"]), not known["latency_us"], one_device, bound
