"""bcc biosnoop text: TIME(s) COMM PID DISK T SECTOR BYTES [QUE(ms)] LAT(ms). The -Q variant
(QUE column) is told by the header, or by the field count without one. biosnoop prints at
completion: issue time = TIME - LAT. T R or W."""

from __future__ import annotations

from iolab.traces.formats.delimited import is_number
from iolab.traces.registry import ExportJob, TraceFormat, Writer
from iolab.traces.sqltext import Parsed, lines_sql, one_of, q, sql_str, text, ufloat, uint, ws_fields

BIOSNOOP_HEADER = "TIME(s)"


def _queued(path: str) -> bool:
    """Whether the file has biosnoop -Q's QUE(ms) column."""
    from iolab.traces.textscan import first_line

    first = first_line(path)
    head = first[1].split() if first else []
    if head and head[0] == BIOSNOOP_HEADER:
        return "QUE(ms)" in head
    return len(head) >= 9 and is_number(head[-2]) and is_number(head[-3]) and not head[-4].isalpha()


def read(path: str) -> Parsed:
    # COMM is printed %-14.14s and may hold spaces: the fields after it are taken from the end.
    queued = _queued(path)
    tail = [uint("PID"), text("DISK"), one_of("T", ("R", "W"), case=True), uint("SECTOR"), uint("BYTES")]
    tail += [ufloat("QUE(ms)")] if queued else []
    tail += [ufloat("LAT(ms)")]
    n = len(tail) + 2
    names = "TIME(s) COMM " + " ".join(x.name for x in tail)
    parts = [
        f"WHEN len(f) < {n} THEN 'expected {n} whitespace-separated fields ({names}), found ' || len(f)",
        f"WHEN NOT ({ufloat('TIME(s)').valid.format(v='f[1]')}) THEN 'field 1 (TIME(s)): expected a number ≥ 0, got ' || {q('f[1]')}",
    ]
    for j, fld in enumerate(tail):
        back = len(tail) - 1 - j
        v = f"f[len(f) - {back}]"
        parts.append(
            f"WHEN NOT ({fld.valid.format(v=v)}) THEN 'field ' || (len(f) - {back}) || ' ({fld.name}): expected {fld.expected}, got ' || {q(v)}"
        )
    err = "CASE " + " ".join(parts) + " END"
    k = len(tail)  # f[len(f) - k + 1] is PID
    col = lambda i: f"f[len(f) - {k - 1 - i}]"  # noqa: E731  (i-th tail field)
    sql = f"""
        WITH l AS ({lines_sql(path)}),
        s AS (SELECT ln, line, {ws_fields()} AS f, starts_with(ltrim(line), {sql_str(BIOSNOOP_HEADER)}) AS hdr FROM l),
        c AS (SELECT ln, line, f, hdr, CASE WHEN hdr THEN NULL ELSE {err} END AS err FROM s)
        SELECT ln, line, err, CASE WHEN hdr THEN 'skip' ELSE 'io' END AS kind,
               TRY_CAST(round(TRY_CAST(f[1] AS DOUBLE) * 1e9 - TRY_CAST({col(k - 1)} AS DOUBLE) * 1e6) AS HUGEINT) AS time_ns,
               {col(1)} AS device,
               CASE {col(2)} WHEN 'R' THEN 'read' ELSE 'write' END AS op,
               TRY_CAST({col(3)} AS HUGEINT) * 512 AS offset_bytes,
               TRY_CAST({col(4)} AS HUGEINT) AS size_bytes,
               array_to_string(f[2:len(f) - {k}], ' ') AS process,
               TRY_CAST({col(k - 1)} AS DOUBLE) * 1000 AS latency_us,
               TRY_CAST({col(0)} AS HUGEINT) AS pid
        FROM c
    """
    return Parsed(
        sql,
        labels={
            "time_ns": "field 1 (TIME(s)) minus LAT(ms)",
            "offset_bytes": "field SECTOR",
            "size_bytes": "field BYTES",
            "latency_us": "field LAT(ms)",
            "pid": "field PID",
        },
        notes=("biosnoop prints each IO at its completion: issue time taken as TIME(s) - LAT(ms).",),
    )


def write(job: ExportJob) -> None:
    job.needs_latency("biosnoop", "response times (LAT)")
    # As bcc prints it (one line per completion, in completion order) but LAT to 1 µs, not
    # bcc's 10 µs: the issue time is TIME - LAT, and 10 µs steps would reorder close IOs.
    job.lines(
        f"""SELECT printf('%-11.6f %-14.14s %-7d %-9s %1s %-10d %-7d %7.3f',
            (time_ns + latency_us * 1000) / 1e9, coalesce(process, 'unknown'), 1000 + n % 7,
            replace(device, ' ', '_'), CASE op WHEN 'read' THEN 'R' ELSE 'W' END,
            offset_bytes // 512, size_bytes, latency_us / 1000)
            FROM {job.src} WHERE latency_us IS NOT NULL ORDER BY time_ns + latency_us * 1000, n""",
        header="TIME(s)     COMM           PID     DISK      T SECTOR     BYTES   LAT(ms)",
    )


FORMAT = TraceFormat(
    name="biosnoop",
    title="bcc biosnoop text",
    sql=read,
    writers=(Writer("biosnoop", write, head_lines=1, sectors="offset"),),
    header=lambda first: first.split()[:1] == [BIOSNOOP_HEADER] and "LAT(ms)" in first,
    latency=True,
)
