"""The text trace formats made of issue and complete events (blkparse, tracefs text): one SQL
builder each, registered in formats.TEXT_FORMATS; the events are paired in events.py."""

from __future__ import annotations

from iolab.traces.events import rwbs_op
from iolab.traces.textscan import Parsed, lines_sql, q

_FRAC_NS = "TRY_CAST(left(rpad({frac}, 9, '0'), 9) AS BIGINT)"
_EVENT_LABELS = {"time_ns": "field sec.nsec", "sector": "field sector", "nsect": "field nsectors", "pid": "field pid"}


def blkparse(path: str) -> Parsed:
    # maj,min cpu seq sec.nsec pid action rwbs rest   (blkparse_fmt.c default header)
    head = r"^\s*(\d+),(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\.(\d+)\s+(\d+)\s+(\S+)\s*(\S*)\s*(.*)$"
    rest = r"^(\d+) \+ (\d+)(?:\s+\[(.*)\])?"
    sql = f"""
        WITH l AS ({lines_sql(path)}),
        -- blkparse ends with per-CPU and total summaries: everything from the first one on.
        tail AS (SELECT coalesce(min(ln), 9223372036854775807) AS first FROM l
                 WHERE regexp_matches(line, '^(CPU\\d+|Total) \\(')),
        m AS (SELECT ln, line, regexp_extract(line, '{head}',
                ['maj', 'min', 'cpu', 'seq', 'sec', 'frac', 'pid', 'act', 'rwbs', 'rest']) AS h
              FROM l, tail WHERE ln < tail.first),
        e AS (SELECT ln, line, h, regexp_extract(h.rest, '{rest}', ['sector', 'nsect', 'comm']) AS r FROM m),
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
               TRY_CAST(h.sec AS HUGEINT) * 1000000000 + {_FRAC_NS.format(frac="h.frac")} AS time_ns,
               h.maj || ',' || h.min AS device, {rwbs_op("h.rwbs")} AS op,
               TRY_CAST(r.sector AS HUGEINT) AS sector, TRY_CAST(r.nsect AS HUGEINT) AS nsect,
               CASE WHEN h.act = 'D' THEN nullif(r.comm, '') END AS process,
               CASE WHEN h.act = 'D' THEN TRY_CAST(h.pid AS HUGEINT) END AS pid
        FROM c
    """
    return Parsed(sql, events=True, labels=_EVENT_LABELS)


def tracefs(path: str) -> Parsed:
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
               TRY_CAST(h.sec AS HUGEINT) * 1000000000 + {_FRAC_NS.format(frac="h.frac")} AS time_ns,
               CASE kind WHEN 'issue' THEN i.maj || ',' || i.min ELSE c.maj || ',' || c.min END AS device,
               {rwbs_op("CASE kind WHEN 'issue' THEN i.rwbs ELSE c.rwbs END")} AS op,
               TRY_CAST(CASE kind WHEN 'issue' THEN i.sector ELSE c.sector END AS HUGEINT) AS sector,
               TRY_CAST(CASE kind WHEN 'issue' THEN i.nsect ELSE c.nsect END AS HUGEINT) AS nsect,
               CASE WHEN kind = 'issue' THEN i.comm END AS process,
               CASE WHEN kind = 'issue' THEN TRY_CAST(h.pid AS HUGEINT) END AS pid
        FROM k
    """
    lost = f"SELECT coalesce(sum(TRY_CAST(regexp_extract(line, 'LOST (\\d+) EVENTS', 1) AS HUGEINT)), 0) FROM ({lines_sql(path)}) WHERE regexp_matches(line, '^CPU:\\d+ \\[LOST')"
    return Parsed(sql, events=True, lost_sql=lost, labels=_EVENT_LABELS)
