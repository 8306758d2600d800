"""fio iologs, version 2 or 3 (read from the header): the SQL that reads one (the driver is
readers.py). v2 has no clock: an IO's time is the sum of the `wait` lines before it; v3
timestamps are µs (what fio's iolog.c writes). Offsets and lengths are bytes; sync and
datasync become flushes."""

from __future__ import annotations

from iolab.core.errors import IolabError
from iolab.traces.table import sql_str
from iolab.traces.textscan import MAX_LATENCY_US, Parsed, first_line, lines_sql, q, ws_fields


def fio_iolog(path: str) -> Parsed:
    header = first_line(path)
    first = [header] if header else []
    if not first or first[0][1].strip() not in ("fio version 2 iolog", "fio version 3 iolog"):
        got = first[0][1].strip()[:80] if first else "an empty file"
        line = first[0][0] if first else 1
        raise IolabError(
            f"{path}:{line}: expected the fio iolog header 'fio version 2 iolog' or 'fio version 3 iolog', "
            f"got {got!r}. Is this a fio iolog (write_iolog=...)?"
        )
    v3 = "3" in first[0][1]
    ts = 1 if v3 else 0  # v3 lines start with a timestamp
    io_actions = ("read", "write", "trim", "sync", "datasync")
    file_actions = ("add", "open", "close")
    acts = ", ".join(sql_str(a) for a in io_actions + file_actions + (() if v3 else ("wait",)))
    a = f"f[{ts + 2}]"
    n_io = ts + 4
    form = "timestamp filename action [offset length]" if v3 else "filename action [offset length]"
    err = f"""CASE
        WHEN len(f) NOT IN ({ts + 2}, {n_io}) THEN 'expected {ts + 2} or {n_io} whitespace-separated fields ({form}), found ' || len(f)
        {f"WHEN TRY_CAST(f[1] AS UBIGINT) IS NULL THEN 'field 1 (timestamp): expected a whole number of µs ≥ 0, got ' || {q('f[1]')}" if v3 else ""}
        WHEN {a} NOT IN ({acts}) THEN 'field {ts + 2} (action): expected one of {"/".join(io_actions + file_actions + (() if v3 else ("wait",)))}, got ' || {q(a)}
        WHEN len(f) = {ts + 2} AND {a} NOT IN ('add', 'open', 'close', 'sync', 'datasync') THEN 'action ' || {a} || ' needs an offset and a length'
        WHEN len(f) = {n_io} AND TRY_CAST(f[{ts + 3}] AS UBIGINT) IS NULL THEN 'field {ts + 3} (offset): expected bytes ≥ 0, got ' || {q(f"f[{ts + 3}]")}
        WHEN len(f) = {n_io} AND TRY_CAST(f[{ts + 4}] AS UBIGINT) IS NULL THEN 'field {ts + 4} (length): expected bytes ≥ 0, got ' || {q(f"f[{ts + 4}]")}
        WHEN {a} = 'wait' AND TRY_CAST(f[{ts + 3}] AS UBIGINT) > {MAX_LATENCY_US} THEN 'field {ts + 3} (wait): more than 31 years in µs, got ' || {q(f"f[{ts + 3}]")}
    END"""
    if v3:
        time_sql = "TRY_CAST(f[1] AS HUGEINT) * 1000"
    else:
        # No clock in v2: an IO happens after all the `wait` (µs) lines before it.
        time_sql = (
            f"coalesce(sum(CASE WHEN err IS NULL AND {a} = 'wait' THEN TRY_CAST(f[{ts + 3}] AS HUGEINT) END) "
            "OVER (ORDER BY ln ROWS UNBOUNDED PRECEDING), 0) * 1000"
        )
    sql = f"""
        WITH l AS ({lines_sql(path)} AND ln > {first[0][0]}),
        s AS (SELECT ln, line, {ws_fields()} AS f FROM l),
        c AS (SELECT ln, line, f, {err} AS err FROM s)
        SELECT ln, line, err,
               CASE WHEN {a} IN ('read', 'write', 'trim', 'sync', 'datasync') THEN 'io' ELSE 'skip' END AS kind,
               {time_sql} AS time_ns, f[{ts + 1}] AS device,
               CASE {a} WHEN 'read' THEN 'read' WHEN 'write' THEN 'write' WHEN 'trim' THEN 'trim' ELSE 'flush' END AS op,
               coalesce(TRY_CAST(f[{ts + 3}] AS HUGEINT), 0) AS offset_bytes,
               coalesce(TRY_CAST(f[{ts + 4}] AS HUGEINT), 0) AS size_bytes,
               CAST(NULL AS VARCHAR) AS process, CAST(NULL AS DOUBLE) AS latency_us, CAST(NULL AS BIGINT) AS pid
        FROM c
    """
    notes = () if v3 else ("fio iolog v2 has no timestamps: IO times are the sum of its wait lines.",)
    labels = {
        "time_ns": "field 1 (timestamp)" if v3 else "time (sum of the wait lines so far)",
        "offset_bytes": f"field {ts + 3} (offset)",
        "size_bytes": f"field {ts + 4} (length)",
    }
    return Parsed(sql, notes=notes, labels=labels)
