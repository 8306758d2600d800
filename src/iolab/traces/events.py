"""Issue/complete event pairs -> one IO per issue with its response time (SQL).

blkparse text, blktrace binary and the tracefs capture all give separate *issue* (D,
block_rq_issue) and *complete* (C, block_rq_complete) events. Each issue is paired with the
first completion at or after it on the same device, direction and start sector (DuckDB
ASOF join, one sort, not a loop). A completion is used once: where two issues would take the
same one (IOs at one sector in flight at once, as two cache flushes, all at sector 0, often
are: both were given the first completion, one response time too short and the other
completion lost), that sector's events are paired again first in, first out, each completion
ending the oldest IO still in flight there. The queue in flight after each event is the running
count of issues less completions, less its lowest value below 0 so far (Lindley's recursion: a
completion with nothing in flight, its issue before the trace began, leaves it at 0 and is left
out), and the k-th completion that found an IO in flight ends the k-th issue: window functions
over the few sectors concerned. An issue with no completion in the trace keeps a NULL
response time.
"""

from __future__ import annotations

SECTOR = 512  # block-layer sectors are always 512 B, whatever the device's LBA size

# What an events query must return (one row per issue or complete event).
EVENT_COLUMNS = "ord, kind, time_ns, device, op, sector, nsect, process, pid"


def paired_sql(events_sql: str) -> str:
    """Rows in trace-table columns (plus `ord`) from an events query with EVENT_COLUMNS:
    ord (BIGINT, input order), kind ('issue' | 'complete'), time_ns, device, op, sector,
    nsect (512 B sectors), process and pid (issuer, NULL on completions)."""
    key = "device, op, sector"
    # an issue before a completion of the same instant (a response time of 0 is one)
    w = f"PARTITION BY {key} ORDER BY time_ns, kind = 'complete', ord"
    cols = f"iss.time_ns, iss.device, iss.op, iss.sector * {SECTOR} AS offset_bytes, iss.nsect * {SECTOR} AS size_bytes"
    cols += ", iss.process, iss.pid, (done_ns - iss.time_ns) / 1000.0 AS latency_us, iss.ord"
    return f"""
        WITH ev AS ({events_sql}),
        iss AS (SELECT * FROM ev WHERE kind = 'issue'),
        cmp AS (SELECT {key}, time_ns AS done_ns FROM ev WHERE kind = 'complete'),
        paired AS (
            SELECT iss.*, cmp.done_ns FROM iss ASOF LEFT JOIN cmp
              ON iss.device = cmp.device AND iss.op = cmp.op AND iss.sector = cmp.sector
             AND cmp.done_ns >= iss.time_ns
        ),
        shared AS (
            SELECT DISTINCT {key} FROM paired WHERE done_ns IS NOT NULL GROUP BY {key}, done_ns HAVING count(*) > 1
        ),
        run AS (
            SELECT *, sum(CASE kind WHEN 'issue' THEN 1 ELSE -1 END) OVER w AS s,
                   count(*) FILTER (WHERE kind = 'issue') OVER w AS issues,
                   count(*) FILTER (WHERE kind = 'complete') OVER w AS completions
            FROM ev SEMI JOIN shared USING ({key}) WINDOW w AS ({w})
        ),
        -- completions so far with nothing in flight: the running count's lowest value below 0
        queued AS (
            SELECT *, -least(0, min(s) OVER w) AS lone,
                   -least(0, coalesce(min(s) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)) AS lone_before
            FROM run WINDOW w AS ({w})
        ),
        fifo AS (
            SELECT iss.*, cmp.done_ns
            FROM (SELECT *, issues AS k FROM queued WHERE kind = 'issue') iss
            LEFT JOIN (SELECT {key}, time_ns AS done_ns, completions - lone AS k FROM queued
                       WHERE kind = 'complete' AND lone = lone_before) cmp
              ON iss.device = cmp.device AND iss.op = cmp.op AND iss.sector = cmp.sector AND iss.k = cmp.k
        )
        SELECT {cols} FROM paired iss ANTI JOIN shared USING ({key})
        UNION ALL
        SELECT {cols} FROM fifo iss
    """


# rwbs flags (the kernel's blk_fill_rwbs): a leading F is REQ_PREFLUSH (flush the cache first),
# then D discard, W write, R read, F flush (REQ_OP_FLUSH) or N none, then F for FUA, A, S, M.
# A pre-flush request with no data is a pure cache flush (the block layer's own rule,
# block/blk-flush.c: "if a request doesn't have data, only REQ_FLUSH makes sense"): blkparse's
# `FWS 0 + 0` is a flush, not a write of 0 bytes (which the import drops); a pre-flush or FUA
# write with data (`FWS 8 + 8`, `WFS 8 + 8`) moves data and stays a write. Discard wins over
# write: a discard is never data.
RWBS_OP_SQL = """CASE WHEN contains({x}, 'D') THEN 'trim'
     WHEN starts_with({x}, 'F') AND TRY_CAST({n} AS HUGEINT) = 0 THEN 'flush'
     WHEN contains({x}, 'W') THEN 'write'
     WHEN contains({x}, 'R') THEN 'read'
     WHEN starts_with({x}, 'F') THEN 'flush'
     ELSE 'other' END"""


def rwbs_op(expr: str, nsect: str) -> str:
    """The op of an rwbs flag string `expr`, given its request's length `nsect` (text, sectors)."""
    return RWBS_OP_SQL.format(x=expr, n=nsect)


# The text event formats (blkparse, tracefs): sec.frac as ns, and the fields a range error names.
FRAC_NS = "TRY_CAST(left(rpad({frac}, 9, '0'), 9) AS BIGINT)"
EVENT_LABELS = {"time_ns": "field sec.nsec", "sector": "field sector", "nsect": "field nsectors", "pid": "field pid"}


def export_events_sql(src: str) -> str:
    """Issue (D) and complete (C) events with integer ns times, for the writers of the event
    formats (blkparse, tracefs, blktrace); `src` is an export's reads and writes (writers.py)."""
    return f"""
        SELECT 'D' AS act, time_ns AS t, n * 2 AS k, CASE op WHEN 'read' THEN 'R' ELSE 'W' END AS rw,
               offset_bytes // 512 AS sector, size_bytes // 512 AS nsect, coalesce(process, 'unknown') AS comm,
               1000 + n % 7 AS pid FROM {src}
        UNION ALL
        SELECT 'C', time_ns + CAST(round(latency_us * 1000) AS BIGINT), n * 2 + 1, CASE op WHEN 'read' THEN 'R' ELSE 'W' END,
               offset_bytes // 512, size_bytes // 512, coalesce(process, 'unknown'), 1000 + n % 7
        FROM {src} WHERE latency_us IS NOT NULL
    """
