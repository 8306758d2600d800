"""fio iologs, version 2 or 3 (read from the header). v2 has no clock: an IO's time is the
sum of the `wait` lines before it; v3 timestamps are µs (what fio's iolog.c writes). Offsets
and lengths are bytes; sync and datasync become flushes. Written as either version (fio
replays a v3 log with read_iolog=...)."""

from __future__ import annotations

from iolab.core.errors import IolabError
from iolab.traces.registry import ExportJob, TraceFormat, Writer, first_line_in
from iolab.traces.sqltext import MAX_LATENCY_US, Parsed, lines_sql, q, sql_str, ws_fields

HEADERS = ("fio version 2 iolog", "fio version 3 iolog")


def read(path: str) -> Parsed:
    from iolab.traces.textscan import first_line

    header = first_line(path)
    first = [header] if header else []
    if not first or first[0][1].strip() not in HEADERS:
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


def _devices(job: ExportJob) -> list[str]:
    return [r[0] for r in job.con.execute(f"SELECT DISTINCT device FROM {job.src} ORDER BY 1").fetchall()]


def write_v3(job: ExportJob) -> None:
    files = _devices(job)
    head = "\n".join([HEADERS[1]] + [f"0 {d} add" for d in files] + [f"0 {d} open" for d in files])
    job.lines(
        f"""SELECT printf('%d %s %s %d %d', time_ns // 1000, device, op, offset_bytes, size_bytes)
            FROM {job.src} ORDER BY n""",
        header=head,
    )


def write_v2(job: ExportJob) -> None:
    # v2 has no clock: a `wait` line (µs) before each IO that comes later than the last.
    files = _devices(job)
    head = "\n".join([HEADERS[0]] + [f"{d} add" for d in files] + [f"{d} open" for d in files])
    job.lines(
        f"""SELECT CASE WHEN gap > 0 THEN printf('%s wait %d 0', device, gap) || chr(10) ELSE '' END
            || printf('%s %s %d %d', device, op, offset_bytes, size_bytes)
            FROM (SELECT *, time_ns // 1000 - coalesce(lag(time_ns // 1000) OVER (ORDER BY n), 0) AS gap FROM {job.src})
            ORDER BY n""",
        header=head,
    )


FORMAT = TraceFormat(
    name="fio",
    title="fio iolog, version 2 or 3",
    sql=read,
    # The header line and, for the one device a fuzz seed has, its add and open lines.
    writers=(Writer("fio2", write_v2, head_lines=3), Writer("fio3", write_v3, head_lines=3)),
    header=first_line_in(*HEADERS),
)
