"""Reading trace text in SQL: lines with their numbers, field checks, and the range checks
every text reader shares.

A trace file is read by DuckDB's CSV scanner as one text column. Lines it cannot hold (over
`MAX_LINE` bytes, or not UTF-8) are set aside in a rejects table instead of stopping the
scan; `fix_rejects` then restores true line numbers and turns each rejected line into a bad
line (file:line and why), so `--skip-bad-lines` can skip and count it like any other.

Numbers are parsed as HUGEINT or DOUBLE and only narrowed to BIGINT after `range_checked`
has checked them: a timestamp of 2^64-1 or a sector × 512 past 2^63 is a bad line with its
field named, never a DuckDB overflow.
"""

from __future__ import annotations

import duckdb

from iolab.core.errors import IolabError

# The SQL text (no database needed) lives in sqltext.py; it is re-exported here for the
# readers that run it.
from iolab.traces.sqltext import (
    MAX_BYTES,
    MAX_LATENCY_US,
    MAX_LINE,
    MAX_SECTORS,
    MAX_TIME_NS,
    Field,
    Parsed,
    check_fields,
    csv_fields,
    header_skip,
    lines_sql,
    one_of,
    optional,
    q,
    rejects_table,
    sql_str,
    text,
    ufloat,
    uint,
    ws_fields,
)
from iolab.traces.table import connect, first_error_line


def clear_rejects(con: duckdb.DuckDBPyConnection, path: str) -> None:
    rej = rejects_table(path)
    con.execute(f"DROP TABLE IF EXISTS {rej}")
    con.execute(f"DROP TABLE IF EXISTS {rej}_scan")


_REJECT_WHY = {
    "LINE SIZE OVER MAXIMUM": f"line longer than {MAX_LINE // 1024} KiB (not a trace line)",
    "INVALID ENCODING": "not UTF-8 text (invalid byte sequence)",
}


def rejected(con: duckdb.DuckDBPyConnection, path: str) -> list[tuple[int, str, str]]:
    """(line, why, text) of every line the scanner set aside, in line order."""
    rej = rejects_table(path)
    try:
        rows = con.execute(
            f"SELECT line, any_value(error_type), any_value(left(coalesce(csv_line, ''), 200)) FROM {rej}"
            " GROUP BY line ORDER BY line"
        ).fetchall()
    except duckdb.CatalogException:
        return []
    return [(int(ln), _REJECT_WHY.get(str(t), str(t).lower()), txt) for ln, t, txt in rows]


def fix_rejects(con: duckdb.DuckDBPyConnection, table: str, path: str) -> None:
    """Give the rows of `table` (column `ln`: accepted-line numbers) their true line numbers
    and add each rejected line as a bad row (err set, kind 'io')."""
    rows = rejected(con, path)
    if not rows:
        return
    # The j-th rejected line (1-based) has line - j accepted lines before it: accepted line i
    # moves down by the number of rejected lines with fewer accepted lines before them than i.
    before = [ln - j for j, (ln, _, _) in enumerate(rows, 1)]
    con.execute("CREATE OR REPLACE TEMP TABLE _rej_before (n BIGINT)")
    con.executemany("INSERT INTO _rej_before VALUES (?)", [(b,) for b in before])
    con.execute(f"UPDATE {table} SET ln = ln + (SELECT count(*) FROM _rej_before r WHERE r.n < {table}.ln)")
    con.executemany(
        f"INSERT INTO {table} (ln, line, err, kind) VALUES (?, ?, ?, 'io')", [(ln, txt, why) for ln, why, txt in rows]
    )
    con.execute("DROP TABLE _rej_before")


# ---------------------------------------------------------------------------------------
# Range checks on converted values

TABLE_NUMERIC = ("time_ns", "offset_bytes", "size_bytes", "latency_us", "pid")
EVENT_NUMERIC = ("time_ns", "sector", "nsect", "pid")
_LIMIT = {
    "time_ns": (f"abs({{c}}) <= {MAX_TIME_NS}", "time: out of range (more than 126 years from 0 once in ns)"),
    "offset_bytes": (f"{{c}} BETWEEN 0 AND {MAX_BYTES}", "offset: out of range (0 to 1 EiB once in bytes)"),
    "size_bytes": (f"{{c}} BETWEEN 0 AND {MAX_BYTES}", "size: out of range (0 to 1 EiB once in bytes)"),
    "sector": (f"{{c}} BETWEEN 0 AND {MAX_SECTORS}", "sector: out of range (0 to 1 EiB once in bytes)"),
    "nsect": (f"{{c}} BETWEEN 0 AND {MAX_SECTORS}", "sector count: out of range (0 to 1 EiB once in bytes)"),
    "latency_us": (
        f"isfinite({{c}}) AND {{c}} BETWEEN 0 AND {MAX_LATENCY_US}",
        "response time: out of range (0 to 31 years)",
    ),
    "pid": ("{c} BETWEEN 0 AND 9223372036854775807", "pid: out of range"),
}
_OPTIONAL = ("latency_us", "pid")  # may be NULL on a good line


def range_checked(sql: str, events: bool, labels: dict[str, str] | None = None) -> str:
    """`sql` (a reader's rows: ln, line, err, kind, then wide numeric columns) with each
    numeric column checked against its limit and narrowed to its stored type; a value out of
    range makes its line bad, naming the field (`labels` maps a column to its field, e.g.
    'field 1 (time)')."""
    labels = labels or {}
    cols = EVENT_NUMERIC if events else TABLE_NUMERIC
    checks = []
    for c in cols:
        cond, why = _LIMIT[c]
        ok = cond.format(c=c)
        ok = f"({c} IS NULL OR {ok})" if c in _OPTIONAL else f"({c} IS NOT NULL AND {ok})"
        label = labels.get(c)
        msg = f"{label}: {why.split(': ', 1)[1]}" if label else why
        checks.append(f"WHEN NOT coalesce({ok}, false) THEN {sql_str(msg)}")
    good = "kind IN ('io', 'issue', 'complete')"
    narrowed = ", ".join(f"TRY_CAST({c} AS {'DOUBLE' if c == 'latency_us' else 'BIGINT'}) AS {c}" for c in cols)
    return f"""
        SELECT * REPLACE (coalesce(err, CASE WHEN {good} THEN CASE {" ".join(checks)} END END) AS err, {narrowed})
        FROM ({sql})
    """


__all__ = [
    "MAX_BYTES",
    "MAX_LATENCY_US",
    "MAX_SECTORS",
    "MAX_TIME_NS",
    "Field",
    "Parsed",
    "MAX_LINE",
    "first_line",
    "rejects_table",
    "sql_str",
    "check_fields",
    "clear_rejects",
    "csv_fields",
    "fix_rejects",
    "header_skip",
    "lines_sql",
    "one_of",
    "optional",
    "q",
    "range_checked",
    "rejected",
    "text",
    "ufloat",
    "uint",
    "ws_fields",
]


def first_line(path: str) -> tuple[int, str] | None:
    """The first non-blank line of a text file (gzip or not) and its number."""
    con = connect()
    try:
        rows = con.execute(f"SELECT ln, line FROM ({lines_sql(path)}) LIMIT 1").fetchall()
        rej = rejected(con, path)
    except duckdb.Error as e:
        raise IolabError(f"{path}: cannot read as text ({first_error_line(e)}).") from None
    finally:
        con.close()
    if not rows:
        return (rej[0][0], f"<{rej[0][1]}>") if rej else None
    k = int(rows[0][0])
    true_ln = k + sum(1 for j, (ln, _, _) in enumerate(rej, 1) if ln - j < k)  # as in fix_rejects
    if rej and rej[0][0] < true_ln:
        return rej[0][0], f"<{rej[0][1]}>"
    return true_ln, rows[0][1]
