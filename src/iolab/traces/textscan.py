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

import hashlib
from dataclasses import dataclass

import duckdb

from iolab.core.errors import IolabError
from iolab.traces.table import connect, first_error_line, sql_str

MAX_LINE = 1 << 20  # bytes; a longer line is a bad line (no trace format has lines near this)
# Limits after conversion. Sums and differences of two values stay inside BIGINT.
MAX_TIME_NS = 4 * 10**18  # ±126 years
MAX_BYTES = 1 << 60  # offsets and sizes: 1 EiB
MAX_SECTORS = MAX_BYTES // 512
MAX_LATENCY_US = 10**15  # 31 years


def rejects_table(path: str) -> str:
    """Name of the DuckDB table that collects the lines of `path` the scanner set aside."""
    return "rej_" + hashlib.sha1(path.encode()).hexdigest()[:16]


def lines_sql(path: str) -> str:
    """Every line of a text file (gzip or not) with its number; blank lines skipped.

    DuckDB's CSV scanner with one VARCHAR column and a control character as delimiter
    reads lines at memory speed and keeps their order, so row_number() is the line number
    (it also takes CRLF line ends). Lines it rejects are left out here and counted back in
    by `fix_rejects` (the numbers below are those of the accepted lines until then).
    """
    rej = rejects_table(path)
    return (
        f"SELECT ln, line FROM ("
        f"SELECT row_number() OVER () AS ln, line FROM read_csv({sql_str(path)}, columns = {{'line': 'VARCHAR'}},"
        " header = false, delim = chr(1), quote = '', escape = '', auto_detect = false,"
        f" strict_mode = false, max_line_size = {MAX_LINE}, ignore_errors = true, store_rejects = true,"
        f" rejects_table = {sql_str(rej)}, rejects_scan = {sql_str(rej + '_scan')})"
        ") WHERE line IS NOT NULL AND trim(line) <> ''"
    )


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


def q(expr: str) -> str:
    """SQL for: the value quoted for an error message."""
    return f"'''' || coalesce({expr}, '') || ''''"


@dataclass(frozen=True)
class Field:
    """One field of a delimited line: its documented name, a SQL validity test over `{v}`
    (the trimmed field text), and what the error message says was expected."""

    name: str
    valid: str
    expected: str


def uint(name: str) -> Field:
    # DuckDB's integer cast also takes '12.5' and '1e3': whole numbers are digits only.
    return Field(
        name, "(regexp_full_match(trim({v}), '[0-9]+') AND TRY_CAST({v} AS UBIGINT) IS NOT NULL)", "a whole number ≥ 0"
    )


def ufloat(name: str) -> Field:
    return Field(
        name, "coalesce(isfinite(TRY_CAST({v} AS DOUBLE)) AND TRY_CAST({v} AS DOUBLE) >= 0, false)", "a number ≥ 0"
    )


# Numeric casts ignore surrounding blanks; text checks trim explicitly (a per-field trim()
# is far cheaper than trimming every field of the split list with a lambda).


def one_of(name: str, values: tuple[str, ...], case: bool = False) -> Field:
    vals = ", ".join(sql_str(x if case else x.lower()) for x in values)
    v = "trim({v})" if case else "lower(trim({v}))"
    shown = " or ".join(values)
    return Field(name, f"coalesce({v} IN ({vals}), false)", shown)


def text(name: str) -> Field:
    return Field(name, "coalesce(length(trim({v})) > 0, false)", "a non-empty name")


def optional(f: Field) -> Field:
    """The same field, or nothing at all."""
    return Field(f.name, f"(trim({{v}}) = '' OR {f.valid})", f"{f.expected} or nothing")


def check_fields(fields: list[Field], f: str, sep_name: str, at_least: bool = False) -> str:
    """SQL CASE giving the first problem of a split line `f` (a list), or NULL."""
    n = len(fields)
    names = ",".join(x.name for x in fields)
    count_bad = f"len({f}) < {n}" if at_least else f"len({f}) <> {n}"
    want = f"at least {n}" if at_least else str(n)
    parts = [f"WHEN {count_bad} THEN 'expected {want} {sep_name} fields ({names}), found ' || len({f})"]
    for i, fld in enumerate(fields, 1):
        v = f"{f}[{i}]"
        parts.append(
            f"WHEN NOT ({fld.valid.format(v=v)}) THEN 'field {i} ({fld.name}): expected {fld.expected}, got ' || {q(v)}"
        )
    return "CASE " + " ".join(parts) + " END"


def csv_fields(line: str = "line", sep: str = ",") -> str:
    return f"string_split({line}, {sql_str(sep)})"


def ws_fields(line: str = "line") -> str:
    return f"regexp_split_to_array(trim({line}), '\\s+')"


def header_skip(first_name: str) -> str:
    """A line-1 header (its first field is the first column's name) is not an error."""
    return f"(ln = 1 AND lower(trim(split_part(line, ',', 1))) = {sql_str(first_name.lower())})"


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
    "Field",
    "MAX_LINE",
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


@dataclass(frozen=True)
class Parsed:
    """What a format's SQL builder returns for one input file.

    `sql` yields: ln, line, err (NULL when the line is good), kind ('io', 'skip', or
    'issue'/'complete' for event formats), then the trace-table columns (time_ns, device,
    op, offset_bytes, size_bytes, process, latency_us, pid) or, for event formats, the event
    columns (time_ns, device, op, sector, nsect, process, pid). Numbers may be wider than
    their stored type (HUGEINT, DOUBLE) or NULL on overflow: the driver range-checks them.
    """

    sql: str
    events: bool = False
    start_unix_ns: int | None = None  # wall clock of time_ns = 0, if the format has one
    notes: tuple[str, ...] = ()
    lost_sql: str | None = None  # tracefs: how many events the kernel says it dropped
    labels: dict[str, str] | None = None  # numeric column -> the field it comes from (range errors)


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
