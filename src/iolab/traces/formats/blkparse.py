"""blkparse's default text output: D (issue) and C (complete) events are paired for
response times (events.py); other actions are ignored, and so is the summary after the
events."""

from __future__ import annotations

import re

from iolab.traces.events import EVENT_LABELS, FRAC_NS, export_events_sql, rwbs_op
from iolab.traces.registry import ExportJob, TraceFormat, Writer
from iolab.traces.sqltext import Parsed, lines_sql, q


def read(path: str) -> Parsed:
    # maj,min cpu seq sec.nsec pid action rwbs rest   (blkparse_fmt.c default header)
    head = r"^\s*(\d+),(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\.(\d+)\s+(\d+)\s+(\S+)\s*(\S*)\s*(.*)$"
    rest = r"^(\d+) \+ (\d+)(?:\s+\[(.*)\])?"
    # A request with no data (blkparse_fmt.c prints no `+ COUNT` then): an issue is `[comm]`, a
    # completion `SECTOR [error]`. With a leading F in rwbs it is a pure cache flush (events.py):
    # read as one of 0 sectors at sector 0 (a flush has no place), so its issue and completion pair.
    empty = r"^(?:\d+\s+)?\[(.*)\]$"
    sql = f"""
        WITH l AS ({lines_sql(path)}),
        -- blkparse ends with per-CPU and total summaries: everything from the first one on.
        tail AS (SELECT coalesce(min(ln), 9223372036854775807) AS first FROM l
                 WHERE regexp_matches(line, '^(CPU\\d+|Total) \\(')),
        m AS (SELECT ln, line, regexp_extract(line, '{head}',
                ['maj', 'min', 'cpu', 'seq', 'sec', 'frac', 'pid', 'act', 'rwbs', 'rest']) AS h
              FROM l, tail WHERE ln < tail.first),
        e AS (SELECT ln, line, h,
                CASE WHEN h.act IN ('D', 'C') AND starts_with(h.rwbs, 'F') AND regexp_matches(h.rest, '{empty}')
                     THEN {{'sector': '0', 'nsect': '0', 'comm': regexp_extract(h.rest, '{empty}', 1)}}
                     ELSE regexp_extract(h.rest, '{rest}', ['sector', 'nsect', 'comm']) END AS r FROM m),
        c AS (SELECT *,
                CASE WHEN h.maj = '' THEN 'expected a blkparse event line (maj,min cpu seq sec.nsec pid action rwbs ...)'
                     WHEN h.act IN ('D', 'C') AND h.rest <> '' AND r.sector = '' AND regexp_matches(h.rest, '^\\d')
                       THEN 'field sector + nsectors: expected ''SECTOR + COUNT'', got ' || {q("h.rest")}
                END AS err,
                CASE WHEN h.act = 'D' AND r.sector <> '' THEN 'issue'
                     WHEN h.act = 'C' AND r.sector <> '' THEN 'complete'
                     ELSE 'skip' END AS kind
              FROM e)
        SELECT ln, line, err, kind,
               TRY_CAST(h.sec AS HUGEINT) * 1000000000 + {FRAC_NS.format(frac="h.frac")} AS time_ns,
               h.maj || ',' || h.min AS device, {rwbs_op("h.rwbs", "r.nsect")} AS op,
               TRY_CAST(r.sector AS HUGEINT) AS sector, TRY_CAST(r.nsect AS HUGEINT) AS nsect,
               CASE WHEN h.act = 'D' THEN nullif(r.comm, '') END AS process,
               CASE WHEN h.act = 'D' THEN TRY_CAST(h.pid AS HUGEINT) END AS pid
        FROM c
    """
    return Parsed(sql, events=True, labels=EVENT_LABELS)


def write(job: ExportJob) -> None:
    job.needs_latency("blkparse", "response times to write completions")
    maj, mnr = job.major, job.minor
    job.lines(
        f"""SELECT printf('%3d,%-3d %2d %8d %5d.%09d %5d  %s %3s %d + %d [%s]',
            {maj}, {mnr}, k % 2, k, t // 1000000000, t % 1000000000, pid, act, rw, sector, nsect,
            CASE WHEN act = 'C' THEN '0' ELSE comm END) FROM ({export_events_sql(job.src)}) ORDER BY t, k"""
    )
    with open(job.out, "a") as f:  # blkparse's summary, which the reader must skip
        f.write(
            f"CPU0 ({maj},{mnr}):\n Reads Queued:           0,        0KiB\tWrites Queued:           0,        0KiB\n"
            f"Total ({maj},{mnr}):\n Reads Queued:           0,        0KiB\n\nThroughput (R/W): 0KiB/s / 0KiB/s\n"
        )


FORMAT = TraceFormat(
    name="blkparse",
    title="blkparse text",
    sql=read,
    # Only the event lines are IOs: the summary after them is not (the fuzz seeds skip it).
    writers=(Writer("blkparse", write, io_line=lambda line: line.lstrip()[:1].isdigit(), sectors="offset+size"),),
    shape=re.compile(r"^\s*\d+,\d+\s+\d+\s+\d+\s+\d+\.\d+\s+\d+\s+[A-Z]\s+\S+"),
    latency=True,
)
