"""The SQL text of trace reading, with nothing to run it: string literals, the line scan of
a file, field checks and the limits every reader shares. No database is imported here, so
the format descriptors (traces/formats/) that build their readers from it load quickly; the
code that runs the SQL is textscan.py and readers.py."""

from __future__ import annotations

from dataclasses import dataclass

MAX_LINE = 1 << 20  # bytes; a longer line is a bad line (no trace format has lines near this)
# Limits after conversion. Sums and differences of two values stay inside BIGINT.
MAX_TIME_NS = 4 * 10**18  # ±126 years
MAX_BYTES = 1 << 60  # offsets and sizes: 1 EiB
MAX_SECTORS = MAX_BYTES // 512
MAX_LATENCY_US = 10**15  # 31 years


def sql_str(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def rejects_table(path: str) -> str:
    """Name of the DuckDB table that collects the lines of `path` the scanner set aside."""
    import hashlib  # OpenSSL's library loads with it: only when a trace is read, not at every command's start

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
