"""FIU (homes, web-vm, mail): ts_ns pid process lba size_blocks W|R major minor md5
(whitespace separated, 512 B blocks). device = major,minor."""

from __future__ import annotations

import re

from iolab.traces.registry import ExportJob, TraceFormat, Writer
from iolab.traces.sqltext import Parsed, lines_sql, one_of, q, text, uint, ws_fields


def read(path: str) -> Parsed:
    # A process name may contain spaces, so the last six fields are taken from the end.
    fields = [uint("ts_ns"), uint("pid"), text("process")]
    tail = [uint("lba"), uint("size_blocks"), one_of("W|R", ("W", "R")), uint("major"), uint("minor"), text("md5")]
    n_tail = len(tail)
    parts = [
        "WHEN len(f) < 9 THEN 'expected 9 whitespace-separated fields (ts_ns pid process lba size_blocks W|R major minor md5), found ' || len(f)"
    ]
    for i, fld in enumerate(fields, 1):
        v = f"f[{i}]"
        parts.append(
            f"WHEN NOT ({fld.valid.format(v=v)}) THEN 'field {i} ({fld.name}): expected {fld.expected}, got ' || {q(v)}"
        )
    for j, fld in enumerate(tail):
        v = f"f[len(f) - {n_tail - 1 - j}]"
        parts.append(
            f"WHEN NOT ({fld.valid.format(v=v)}) THEN 'field ' || (len(f) - {n_tail - 1 - j}) || ' ({fld.name}): expected {fld.expected}, got ' || {q(v)}"
        )
    err = "CASE " + " ".join(parts) + " END"
    sql = f"""
        WITH l AS ({lines_sql(path)}),
        s AS (SELECT ln, line, {ws_fields()} AS f FROM l),
        c AS (SELECT ln, line, f, {err} AS err FROM s)
        SELECT ln, line, err, 'io' AS kind,
               TRY_CAST(f[1] AS HUGEINT) AS time_ns,
               f[len(f) - 2] || ',' || f[len(f) - 1] AS device,
               CASE upper(f[len(f) - 3]) WHEN 'R' THEN 'read' ELSE 'write' END AS op,
               TRY_CAST(f[len(f) - 5] AS HUGEINT) * 512 AS offset_bytes,
               TRY_CAST(f[len(f) - 4] AS HUGEINT) * 512 AS size_bytes,
               array_to_string(f[3:len(f) - 6], ' ') AS process,
               CAST(NULL AS DOUBLE) AS latency_us, TRY_CAST(f[2] AS HUGEINT) AS pid
        FROM c
    """
    return Parsed(
        sql,
        labels={
            "time_ns": "field 1 (ts_ns)",
            "offset_bytes": "field lba",
            "size_bytes": "field size_blocks",
            "pid": "field 2 (pid)",
        },
    )


def write(job: ExportJob) -> None:
    job.lines(
        f"""SELECT printf('%d %d %s %d %d %s %d %d %s', time_ns, 1000 + n % 7, coalesce(process, 'unknown'),
            offset_bytes // 512, size_bytes // 512, CASE op WHEN 'read' THEN 'R' ELSE 'W' END, {job.major}, {job.minor},
            md5(CAST(n AS VARCHAR))) FROM {job.src} ORDER BY n"""
    )


FORMAT = TraceFormat(
    name="fiu",
    title="FIU (homes, web-vm, mail)",
    sql=read,
    writers=(Writer("fiu", write, sectors="offset+size"),),
    shape=re.compile(r"^\d+\s+\d+\s+.+\s+\d+\s+\d+\s+[WR]\s+\d+\s+\d+\s+[0-9a-f]{32}$"),
)
