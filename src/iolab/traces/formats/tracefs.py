"""Text from tracefs block_rq_issue/block_rq_complete events (what `iolab trace capture`
records), with or without the ioprio token recent kernels print before the comm. Issues and
completions are paired (events.py); lost-event markers are counted."""

from __future__ import annotations

import re

from iolab.traces.events import EVENT_LABELS, FRAC_NS, export_events_sql, rwbs_op
from iolab.traces.registry import ExportJob, TraceFormat, Writer
from iolab.traces.sqltext import Parsed, lines_sql, q


def read(path: str) -> Parsed:
    # "<task>-<pid> [cpu] flags  sec.usec: block_rq_issue: maj,min rwbs bytes (cmd) sector + n [ioprio] [comm]"
    # The flags column is absent when the irq-info option is off; the ioprio token is absent
    # on older kernels.
    head = r"^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(?:\S+\s+)?(\d+)\.(\d+):\s+([a-z_]+):\s*(.*)$"
    issue = r"^(\d+),(\d+)\s+(\S*)\s+(\d+)\s+\((.*)\)\s+(\d+) \+ (\d+)(?:\s+\S+)?\s+\[(.*)\]$"
    done = r"^(\d+),(\d+)\s+(\S*)\s+\((.*)\)\s+(\d+) \+ (\d+)(?:\s+\S+)?\s+\[(.*)\]$"
    sql = f"""
        WITH l AS ({lines_sql(path)}),
        m AS (SELECT ln, line, regexp_extract(line, '{head}', ['task', 'pid', 'cpu', 'sec', 'frac', 'event', 'body']) AS h
              FROM l WHERE NOT starts_with(ltrim(line), '#') AND NOT regexp_matches(line, '^CPU:\\d+ \\[LOST')),
        e AS (SELECT ln, line, h,
                regexp_extract(h.body, '{issue}', ['maj', 'min', 'rwbs', 'bytes', 'cmd', 'sector', 'nsect', 'comm']) AS i,
                regexp_extract(h.body, '{done}', ['maj', 'min', 'rwbs', 'cmd', 'sector', 'nsect', 'error']) AS c
              FROM m),
        k AS (SELECT *,
                CASE WHEN h.event = '' THEN 'expected a tracefs event line (task-pid [cpu] flags sec.usec: event: ...)'
                     WHEN h.event = 'block_rq_issue' AND i.maj = '' THEN
                       'block_rq_issue: expected ''maj,min rwbs bytes (cmd) sector + nr [comm]'', got ' || {q("h.body")}
                     WHEN h.event = 'block_rq_complete' AND c.maj = '' THEN
                       'block_rq_complete: expected ''maj,min rwbs (cmd) sector + nr [error]'', got ' || {q("h.body")}
                END AS err,
                CASE h.event WHEN 'block_rq_issue' THEN 'issue' WHEN 'block_rq_complete' THEN 'complete' ELSE 'skip' END AS kind
              FROM e)
        SELECT ln, line, err, kind,
               TRY_CAST(h.sec AS HUGEINT) * 1000000000 + {FRAC_NS.format(frac="h.frac")} AS time_ns,
               CASE kind WHEN 'issue' THEN i.maj || ',' || i.min ELSE c.maj || ',' || c.min END AS device,
               {rwbs_op("CASE kind WHEN 'issue' THEN i.rwbs ELSE c.rwbs END", "CASE kind WHEN 'issue' THEN i.nsect ELSE c.nsect END")} AS op,
               TRY_CAST(CASE kind WHEN 'issue' THEN i.sector ELSE c.sector END AS HUGEINT) AS sector,
               TRY_CAST(CASE kind WHEN 'issue' THEN i.nsect ELSE c.nsect END AS HUGEINT) AS nsect,
               CASE WHEN kind = 'issue' THEN i.comm END AS process,
               CASE WHEN kind = 'issue' THEN TRY_CAST(h.pid AS HUGEINT) END AS pid
        FROM k
    """
    lost = f"SELECT coalesce(sum(TRY_CAST(regexp_extract(line, 'LOST (\\d+) EVENTS', 1) AS HUGEINT)), 0) FROM ({lines_sql(path)}) WHERE regexp_matches(line, '^CPU:\\d+ \\[LOST')"
    return Parsed(sql, events=True, lost_sql=lost, labels=EVENT_LABELS)


def write(job: ExportJob) -> None:
    job.needs_latency("tracefs", "response times to write completions")
    maj, mnr = job.major, job.minor
    job.lines(
        f"""SELECT CASE WHEN act = 'D' THEN
            printf('%16s-%-7d [%03d] ..... %6d.%06d: block_rq_issue: %d,%d %s %d () %d + %d be,0,4 [%s]',
                   comm, pid, k % 2, t // 1000000000, (t % 1000000000) // 1000, {maj}, {mnr}, rw, nsect * 512, sector, nsect, comm)
            ELSE printf('%16s-%-7d [%03d] ..s.. %6d.%06d: block_rq_complete: %d,%d %s () %d + %d be,0,4 [0]',
                   '<idle>', 0, k % 2, t // 1000000000, (t % 1000000000) // 1000, {maj}, {mnr}, rw, sector, nsect)
            END FROM ({export_events_sql(job.src)}) ORDER BY t, k""",
        header="# tracer: nop",
    )


FORMAT = TraceFormat(
    name="tracefs",
    title="tracefs text",
    sql=read,
    writers=(Writer("tracefs", write, head_lines=1, sectors="offset+size"),),
    header=lambda first: first.startswith("# tracer:"),
    shape=re.compile(r"^\s*.*-\d+\s+\[\d+\]\s+.*\d+\.\d+:\s+block_\w+:"),
    latency=True,
)
