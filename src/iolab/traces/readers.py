"""Trace importers: public trace formats -> the normalised IO table (see table.py).

    import_trace(paths, fmt, out, skip_bad_lines=False) -> TraceTable

Formats (`FORMATS`; quirks from shared/docs/trace-formats.md):

  msr        MSR Cambridge CSV  Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
             Timestamp is Windows FILETIME (100 ns ticks since 1601-01-01 UTC); Type Read or
             Write; bytes; ResponseTime taken as 100 ns ticks (UNVERIFIED upstream).
             device = Hostname_DiskNumber.
  spc        SPC/UMass (Financial, WebSearch)  ASU,LBA,Size,Opcode,Timestamp[,more...]
             LBA in 512 B blocks, Size in bytes, Opcode r/w (any case), Timestamp in s from
             the trace start. device = asuN. No response times.
  alibaba    Alibaba block 2020  device_id,opcode,offset,length,timestamp  (R/W, bytes, µs)
  tencent    Tencent CBS  Timestamp,Offset,Size,IOType,VolumeID  (Unix s, 512 B sectors,
             IOType 0 = read, 1 = write). Whole-second timestamps: IOs of one second keep
             the file's order.
  fiu        FIU (homes, web-vm, mail)  ts_ns pid process lba size_blocks W|R major minor md5
             (whitespace separated, 512 B blocks). device = major,minor.
  systor     SYSTOR'17  Timestamp,Response,IOType,LUN,Offset,Size  (Unix s; Response in s;
             IOType R, W or blank = unknown, kept as op 'other'; bytes). device = lunN.
  blkparse   blkparse default text output; D (issue) and C (complete) events are paired for
             response times; other actions are ignored; the summary after the events too.
  blktrace   blktrace binary (dev.blktrace.N files, struct blk_io_trace, either endianness).
  fio        fio iolog, version 2 or 3 (read from the header). v2 has no clock: IO time is
             the sum of the `wait` lines before it. v3 timestamps are read as µs (what
             fio's iolog.c writes). Offsets and lengths in bytes; sync/datasync -> flush.
  tracefs    text from tracefs block_rq_issue/block_rq_complete (what `capture` records),
             with or without the ioprio token recent kernels print before the comm.
  disksim    DiskSim/MQSim ASCII  time devno sector size_sectors type  (time in ms as a float,
             512 B sectors, type 1 = read, 0 = write; the DiskSim manual's units). device = devno.
  biosnoop   bcc biosnoop text  TIME(s) COMM PID DISK T SECTOR BYTES [QUE(ms)] LAT(ms); the
             -Q variant (QUE column) is told by the header, or by the field count without
             one. biosnoop prints at completion: issue time = TIME - LAT. T R or W.

Every text line is checked field by field; the first bad line stops the import with
file:line, the field, what was expected and what was found. With `skip_bad_lines` bad
lines are dropped instead, counted, and a few kept as examples in the table's metadata.
The work is SQL over the file (DuckDB reads it, compressed or not), not a Python loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import duckdb

from ..errors import IolabError
from .events import paired_sql, rwbs_op
from .table import BadLine, TraceTable, connect, sql_str, write_table

FILETIME_UNIX_EPOCH = 116444736000000000  # 100 ns ticks from 1601-01-01 to 1970-01-01
EXAMPLES = 5  # bad lines kept as examples with skip_bad_lines
IMPORT_MEMORY = "1GB"


@dataclass(frozen=True)
class Parsed:
    """What a format's SQL builder returns for one input file.

    `sql` yields: ln, line, err (NULL when the line is good), kind ('io', 'skip', or
    'issue'/'complete' for event formats), then the trace-table columns (time_ns, device,
    op, offset_bytes, size_bytes, process, latency_us) or, for event formats, the event
    columns (time_ns, device, op, sector, nsect, process).
    """

    sql: str
    events: bool = False
    start_unix_ns: int | None = None  # wall clock of time_ns = 0, if the format has one
    notes: tuple[str, ...] = ()
    lost_sql: str | None = None  # tracefs: how many events the kernel says it dropped


# ---------------------------------------------------------------------------------------
# Building blocks


def lines_sql(path: str) -> str:
    """Every line of a text file (gzip or not) with its 1-based number; blank lines skipped.

    DuckDB's CSV scanner with one VARCHAR column and a control character as delimiter
    reads lines at memory speed and keeps their order, so row_number() is the line number
    (it also takes CRLF line ends).
    """
    return (
        f"SELECT ln, line FROM ("
        f"SELECT row_number() OVER () AS ln, line FROM read_csv({sql_str(path)}, columns = {{'line': 'VARCHAR'}},"
        " header = false, delim = chr(1), quote = '', escape = '', auto_detect = false,"
        " strict_mode = false, max_line_size = 1048576)"
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
    return Field(name, "TRY_CAST({v} AS UBIGINT) IS NOT NULL", "a whole number ≥ 0")


def ufloat(name: str) -> Field:
    return Field(name, "coalesce(isfinite(TRY_CAST({v} AS DOUBLE)) AND TRY_CAST({v} AS DOUBLE) >= 0, false)", "a number ≥ 0")


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
    parts = [
        f"WHEN {count_bad} THEN 'expected {want} {sep_name} fields ({names}), found ' || len({f})"
    ]
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
# Delimited formats: fields -> checks -> values


def _delimited(path: str, fields: list[Field], values: dict[str, str], *, header: str | None,
               at_least: bool = False, ws: bool = False) -> str:
    """Common shape of the delimited formats. `values` maps trace-table columns to SQL over
    the split list `f`; it is only evaluated on good lines."""
    split = ws_fields() if ws else csv_fields()
    err = check_fields(fields, "f", "whitespace-separated" if ws else "comma-separated", at_least)
    skip = header_skip(header) if header else "false"
    # Values are computed on good data lines only (a CAST of a bad field would fail).
    cols = ", ".join(
        f"CASE WHEN err IS NULL AND kind = 'io' THEN {values[c]} END AS {c}"
        for c in ("time_ns", "device", "op", "offset_bytes", "size_bytes", "process", "latency_us")
    ) + f", CASE WHEN err IS NULL AND kind = 'io' THEN {values.get('pid', 'NULL')} END AS pid"
    return f"""
        WITH l AS ({lines_sql(path)}),
        s AS (SELECT ln, line, {split} AS f, {skip} AS hdr FROM l),
        c AS (SELECT ln, line, f, CASE WHEN hdr THEN NULL ELSE {err} END AS err,
                     CASE WHEN hdr THEN 'skip' ELSE 'io' END AS kind FROM s)
        SELECT ln, line, err, kind, {cols} FROM c
    """


def _msr(path: str) -> Parsed:
    fields = [uint("Timestamp"), text("Hostname"), uint("DiskNumber"), one_of("Type", ("Read", "Write")),
              uint("Offset"), uint("Size"), uint("ResponseTime")]
    values = {
        "time_ns": f"(CAST(f[1] AS HUGEINT) - {FILETIME_UNIX_EPOCH}) * 100",
        "device": "trim(f[2]) || '_' || trim(f[3])",
        "op": "lower(trim(f[4]))",
        "offset_bytes": "CAST(f[5] AS BIGINT)",
        "size_bytes": "CAST(f[6] AS BIGINT)",
        "process": "NULL",
        "latency_us": "CAST(f[7] AS DOUBLE) / 10",
    }
    return Parsed(
        _delimited(path, fields, values, header="Timestamp"),
        start_unix_ns=0,
        notes=("MSR ResponseTime read as 100 ns ticks (the unit is not documented upstream).",),
    )


def _spc(path: str) -> Parsed:
    fields = [uint("ASU"), uint("LBA"), uint("Size"), one_of("Opcode", ("r", "w")), ufloat("Timestamp")]
    values = {
        "time_ns": "CAST(round(CAST(f[5] AS DOUBLE) * 1e9) AS BIGINT)",
        "device": "'asu' || CAST(CAST(f[1] AS UBIGINT) AS VARCHAR)",
        "op": "CASE lower(trim(f[4])) WHEN 'r' THEN 'read' ELSE 'write' END",
        "offset_bytes": "CAST(f[2] AS BIGINT) * 512",
        "size_bytes": "CAST(f[3] AS BIGINT)",
        "process": "NULL",
        "latency_us": "NULL",
    }
    return Parsed(_delimited(path, fields, values, header="ASU", at_least=True))


def _alibaba(path: str) -> Parsed:
    fields = [text("device_id"), one_of("opcode", ("R", "W")), uint("offset"), uint("length"), uint("timestamp")]
    values = {
        "time_ns": "CAST(f[5] AS BIGINT) * 1000",
        "device": "trim(f[1])",
        "op": "CASE lower(trim(f[2])) WHEN 'r' THEN 'read' ELSE 'write' END",
        "offset_bytes": "CAST(f[3] AS BIGINT)",
        "size_bytes": "CAST(f[4] AS BIGINT)",
        "process": "NULL",
        "latency_us": "NULL",
    }
    return Parsed(_delimited(path, fields, values, header="device_id"))


def _tencent(path: str) -> Parsed:
    fields = [uint("Timestamp"), uint("Offset"), uint("Size"), one_of("IOType", ("0", "1")), text("VolumeID")]
    values = {
        "time_ns": "CAST(f[1] AS BIGINT) * 1000000000",
        "device": "trim(f[5])",
        "op": "CASE trim(f[4]) WHEN '0' THEN 'read' ELSE 'write' END",
        "offset_bytes": "CAST(f[2] AS BIGINT) * 512",
        "size_bytes": "CAST(f[3] AS BIGINT) * 512",
        "process": "NULL",
        "latency_us": "NULL",
    }
    return Parsed(
        _delimited(path, fields, values, header="Timestamp"),
        start_unix_ns=0,
        notes=("Tencent timestamps are whole seconds: IOs within a second keep the file's order.",),
    )


def _fiu(path: str) -> Parsed:
    # A process name may contain spaces, so the last six fields are taken from the end.
    fields = [uint("ts_ns"), uint("pid"), text("process")]
    tail = [uint("lba"), uint("size_blocks"), one_of("W|R", ("W", "R")), uint("major"), uint("minor"), text("md5")]
    n_tail = len(tail)
    parts = ["WHEN len(f) < 9 THEN 'expected 9 whitespace-separated fields (ts_ns pid process lba size_blocks W|R major minor md5), found ' || len(f)"]
    for i, fld in enumerate(fields, 1):
        v = f"f[{i}]"
        parts.append(f"WHEN NOT ({fld.valid.format(v=v)}) THEN 'field {i} ({fld.name}): expected {fld.expected}, got ' || {q(v)}")
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
               CAST(f[1] AS BIGINT) AS time_ns,
               f[len(f) - 2] || ',' || f[len(f) - 1] AS device,
               CASE upper(f[len(f) - 3]) WHEN 'R' THEN 'read' ELSE 'write' END AS op,
               CAST(f[len(f) - 5] AS BIGINT) * 512 AS offset_bytes,
               CAST(f[len(f) - 4] AS BIGINT) * 512 AS size_bytes,
               array_to_string(f[3:len(f) - 6], ' ') AS process,
               CAST(NULL AS DOUBLE) AS latency_us, TRY_CAST(f[2] AS BIGINT) AS pid
        FROM c
    """
    return Parsed(sql)


def _systor(path: str) -> Parsed:
    fields = [ufloat("Timestamp"), optional(ufloat("Response")), optional(one_of("IOType", ("R", "W"))),
              uint("LUN"), uint("Offset"), uint("Size")]
    values = {
        "time_ns": "CAST(round(CAST(f[1] AS DOUBLE) * 1e9) AS BIGINT)",
        "device": "'lun' || CAST(CAST(f[4] AS UBIGINT) AS VARCHAR)",
        "op": "CASE upper(trim(f[3])) WHEN 'R' THEN 'read' WHEN 'W' THEN 'write' ELSE 'other' END",
        "offset_bytes": "CAST(f[5] AS BIGINT)",
        "size_bytes": "CAST(f[6] AS BIGINT)",
        "process": "NULL",
        "latency_us": "CASE WHEN trim(f[2]) = '' THEN NULL ELSE CAST(f[2] AS DOUBLE) * 1e6 END",
    }
    return Parsed(
        _delimited(path, fields, values, header="Timestamp"),
        start_unix_ns=0,
        notes=("SYSTOR'17 Response read as seconds, like its Timestamp.",),
    )


def _disksim(path: str) -> Parsed:
    fields = [ufloat("time"), uint("devno"), uint("sector"), uint("size_sectors"), one_of("type", ("0", "1"))]
    values = {
        "time_ns": "CAST(round(CAST(f[1] AS DOUBLE) * 1e6) AS BIGINT)",
        "device": "CAST(CAST(f[2] AS UBIGINT) AS VARCHAR)",
        "op": "CASE trim(f[5]) WHEN '1' THEN 'read' ELSE 'write' END",
        "offset_bytes": "CAST(f[3] AS BIGINT) * 512",
        "size_bytes": "CAST(f[4] AS BIGINT) * 512",
        "process": "NULL",
        "latency_us": "NULL",
    }
    return Parsed(
        _delimited(path, fields, values, header=None, ws=True),
        notes=("DiskSim time read as milliseconds (the DiskSim manual's unit; MQSim and SSDsim may use others).",),
    )


BIOSNOOP_HEADER = "TIME(s)"


def _biosnoop(path: str) -> Parsed:
    # COMM is printed %-14.14s and may hold spaces: the fields after it are taken from the end.
    first = _first_line(path)
    head = first[1].split() if first else []
    if head and head[0] == BIOSNOOP_HEADER:
        queued = "QUE(ms)" in head
    else:
        queued = len(head) >= 9 and _is_number(head[-2]) and _is_number(head[-3]) and not head[-4].isalpha()
    tail = [uint("PID"), text("DISK"), one_of("T", ("R", "W"), case=True), uint("SECTOR"), uint("BYTES")]
    tail += [ufloat("QUE(ms)")] if queued else []
    tail += [ufloat("LAT(ms)")]
    n = len(tail) + 2
    names = "TIME(s) COMM " + " ".join(x.name for x in tail)
    parts = [f"WHEN len(f) < {n} THEN 'expected {n} whitespace-separated fields ({names}), found ' || len(f)",
             f"WHEN NOT ({ufloat('TIME(s)').valid.format(v='f[1]')}) THEN 'field 1 (TIME(s)): expected a number ≥ 0, got ' || {q('f[1]')}"]
    for j, fld in enumerate(tail):
        back = len(tail) - 1 - j
        v = f"f[len(f) - {back}]"
        parts.append(f"WHEN NOT ({fld.valid.format(v=v)}) THEN 'field ' || (len(f) - {back}) || ' ({fld.name}): expected {fld.expected}, got ' || {q(v)}")
    err = "CASE " + " ".join(parts) + " END"
    k = len(tail)  # f[len(f) - k + 1] is PID
    col = lambda i: f"f[len(f) - {k - 1 - i}]"  # noqa: E731  (i-th tail field)
    sql = f"""
        WITH l AS ({lines_sql(path)}),
        s AS (SELECT ln, line, {ws_fields()} AS f, starts_with(ltrim(line), {sql_str(BIOSNOOP_HEADER)}) AS hdr FROM l),
        c AS (SELECT ln, line, f, hdr, CASE WHEN hdr THEN NULL ELSE {err} END AS err FROM s)
        SELECT ln, line, err, CASE WHEN hdr THEN 'skip' ELSE 'io' END AS kind,
               CAST(round(TRY_CAST(f[1] AS DOUBLE) * 1e9 - TRY_CAST({col(k - 1)} AS DOUBLE) * 1e6) AS BIGINT) AS time_ns,
               {col(1)} AS device,
               CASE {col(2)} WHEN 'R' THEN 'read' ELSE 'write' END AS op,
               TRY_CAST({col(3)} AS BIGINT) * 512 AS offset_bytes,
               TRY_CAST({col(4)} AS BIGINT) AS size_bytes,
               array_to_string(f[2:len(f) - {k}], ' ') AS process,
               TRY_CAST({col(k - 1)} AS DOUBLE) * 1000 AS latency_us,
               TRY_CAST({col(0)} AS BIGINT) AS pid
        FROM c
    """
    return Parsed(sql, notes=("biosnoop prints each IO at its completion: issue time taken as TIME(s) - LAT(ms).",))


def _first_line(path: str) -> tuple[int, str] | None:
    """The first non-blank line of a text file (gzip or not) and its number."""
    con = connect()
    try:
        rows = con.execute(f"SELECT ln, line FROM ({lines_sql(path)}) LIMIT 1").fetchall()
    except duckdb.Error as e:
        raise IolabError(f"{path}: cannot read as text ({str(e).splitlines()[0]}).") from None
    finally:
        con.close()
    return (int(rows[0][0]), rows[0][1]) if rows else None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------------------------------
# Event formats (issue and complete lines, paired in events.py)

_FRAC_NS = "CAST(rpad({frac}, 9, '0') AS BIGINT)"


def _blkparse(path: str) -> Parsed:
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
                       THEN 'field sector + nsectors: expected ''SECTOR + COUNT'', got ' || {q('h.rest')}
                END AS err,
                CASE WHEN h.act = 'D' AND r.sector <> '' THEN 'issue'
                     WHEN h.act = 'C' AND r.sector <> '' THEN 'complete'
                     ELSE 'skip' END AS kind
              FROM e)
        SELECT ln, line, err, kind,
               CAST(h.sec AS BIGINT) * 1000000000 + {_FRAC_NS.format(frac='h.frac')} AS time_ns,
               h.maj || ',' || h.min AS device, {rwbs_op('h.rwbs')} AS op,
               TRY_CAST(r.sector AS BIGINT) AS sector, TRY_CAST(r.nsect AS BIGINT) AS nsect,
               CASE WHEN h.act = 'D' THEN nullif(r.comm, '') END AS process,
               CASE WHEN h.act = 'D' THEN TRY_CAST(h.pid AS BIGINT) END AS pid
        FROM c
    """
    return Parsed(sql, events=True)


def _tracefs(path: str) -> Parsed:
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
                       'block_rq_issue: expected ''maj,min rwbs bytes (cmd) sector + nr [comm]'', got ' || {q('h.body')}
                     WHEN h.event = 'block_rq_complete' AND c.maj = '' THEN
                       'block_rq_complete: expected ''maj,min rwbs (cmd) sector + nr [error]'', got ' || {q('h.body')}
                END AS err,
                CASE h.event WHEN 'block_rq_issue' THEN 'issue' WHEN 'block_rq_complete' THEN 'complete' ELSE 'skip' END AS kind
              FROM e)
        SELECT ln, line, err, kind,
               CAST(h.sec AS BIGINT) * 1000000000 + {_FRAC_NS.format(frac='h.frac')} AS time_ns,
               CASE kind WHEN 'issue' THEN i.maj || ',' || i.min ELSE c.maj || ',' || c.min END AS device,
               {rwbs_op("CASE kind WHEN 'issue' THEN i.rwbs ELSE c.rwbs END")} AS op,
               TRY_CAST(CASE kind WHEN 'issue' THEN i.sector ELSE c.sector END AS BIGINT) AS sector,
               TRY_CAST(CASE kind WHEN 'issue' THEN i.nsect ELSE c.nsect END AS BIGINT) AS nsect,
               CASE WHEN kind = 'issue' THEN i.comm END AS process,
               CASE WHEN kind = 'issue' THEN TRY_CAST(h.pid AS BIGINT) END AS pid
        FROM k
    """
    lost = f"SELECT coalesce(sum(CAST(regexp_extract(line, 'LOST (\\d+) EVENTS', 1) AS BIGINT)), 0) FROM ({lines_sql(path)}) WHERE regexp_matches(line, '^CPU:\\d+ \\[LOST')"
    return Parsed(sql, events=True, lost_sql=lost)


# ---------------------------------------------------------------------------------------
# fio iolog


def _fio(path: str) -> Parsed:
    con = connect()
    try:
        first = con.execute(f"SELECT ln, line FROM ({lines_sql(path)}) LIMIT 1").fetchall()
    finally:
        con.close()
    if not first or first[0][1].strip() not in ("fio version 2 iolog", "fio version 3 iolog"):
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
        WHEN len(f) = {n_io} AND TRY_CAST(f[{ts + 3}] AS UBIGINT) IS NULL THEN 'field {ts + 3} (offset): expected bytes ≥ 0, got ' || {q(f'f[{ts + 3}]')}
        WHEN len(f) = {n_io} AND TRY_CAST(f[{ts + 4}] AS UBIGINT) IS NULL THEN 'field {ts + 4} (length): expected bytes ≥ 0, got ' || {q(f'f[{ts + 4}]')}
    END"""
    if v3:
        time_sql = "TRY_CAST(f[1] AS BIGINT) * 1000"
    else:
        # No clock in v2: an IO happens after all the `wait` (µs) lines before it.
        time_sql = (
            f"coalesce(sum(CASE WHEN {a} = 'wait' THEN TRY_CAST(f[{ts + 3}] AS BIGINT) END) "
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
               coalesce(TRY_CAST(f[{ts + 3}] AS BIGINT), 0) AS offset_bytes,
               coalesce(TRY_CAST(f[{ts + 4}] AS BIGINT), 0) AS size_bytes,
               CAST(NULL AS VARCHAR) AS process, CAST(NULL AS DOUBLE) AS latency_us, CAST(NULL AS BIGINT) AS pid
        FROM c
    """
    notes = () if v3 else ("fio iolog v2 has no timestamps: IO times are the sum of its wait lines.",)
    return Parsed(sql, notes=notes)


TEXT_FORMATS: dict[str, Callable[[str], Parsed]] = {
    "msr": _msr,
    "spc": _spc,
    "alibaba": _alibaba,
    "tencent": _tencent,
    "fiu": _fiu,
    "systor": _systor,
    "blkparse": _blkparse,
    "fio": _fio,
    "tracefs": _tracefs,
    "disksim": _disksim,
    "biosnoop": _biosnoop,
}
FORMATS = tuple(TEXT_FORMATS) + ("blktrace",)


# ---------------------------------------------------------------------------------------
# The import driver


def import_trace(
    paths: str | Path | list[str | Path] | tuple[str | Path, ...],
    fmt: str,
    out: str | Path,
    skip_bad_lines: bool = False,
    notes: tuple[str, ...] = (),
    clock_unix_ns: int | None = None,
    lost_events: int | None = None,
) -> TraceTable:
    """Read one trace (or several files of one trace, e.g. the per-CPU files of a blktrace
    or several MSR volumes) in format `fmt` and write the normalised table to `out`.
    `notes` are extra caveats stored with the table (the capture's, for instance);
    `clock_unix_ns` is the wall-clock time of the input's time 0 when the caller knows it
    and the format does not say (the capture knows its monotonic clock's offset);
    `lost_events` is how many trace events a capture dropped (kept in the metadata)."""
    files = [Path(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]
    if fmt not in FORMATS:
        raise IolabError(f"unknown trace format {fmt!r}; iolab reads: {', '.join(FORMATS)}.")
    if not files:
        raise IolabError("trace import: no input files given.")
    for f in files:
        if not f.is_file():
            raise IolabError(f"{f}: no such trace file.")
    if fmt == "blktrace":
        from .blktrace import import_blktrace

        return import_blktrace(files, out, skip_bad_lines=skip_bad_lines, notes=notes, lost_events=lost_events)

    # Parsed lines are kept in DuckDB temp tables: past this much memory they spill to disk.
    con = connect(memory_limit=IMPORT_MEMORY)
    try:
        parts: list[str] = []
        origins: list[int] = []
        skipped = 0
        examples: list[BadLine] = []
        notes: list[str] = list(notes)
        start: int | None = None
        for i, f in enumerate(files):
            parsed = TEXT_FORMATS[fmt](str(f))
            start = parsed.start_unix_ns
            notes += [n for n in parsed.notes if n not in notes]
            try:
                if parsed.lost_sql:
                    lost = con.execute(parsed.lost_sql).fetchall()[0][0]
                    if lost:
                        notes.append(f"{f}: the kernel reported {lost:,} lost trace events; some IOs are missing.")
                # Parse once; keep the text of bad lines only (for the error message).
                con.execute(
                    f"CREATE TEMP TABLE p{i} AS SELECT * REPLACE (CASE WHEN err IS NOT NULL THEN line END AS line)"
                    f" FROM ({parsed.sql})"
                )
            except duckdb.Error as e:
                raise IolabError(f"{f}: cannot read as {fmt} ({str(e).splitlines()[0]}).") from None
            n_bad, bad = _bad_lines(con, f"p{i}", str(f))
            if n_bad and not skip_bad_lines:
                more = f" ({n_bad - 1:,} more bad lines after it)" if n_bad > 1 else ""
                raise IolabError(
                    f"{bad[0]}{more}. This does not look like a {fmt} trace line. Fix the file, "
                    "check the format name, or pass --skip-bad-lines to drop bad lines (they are counted and reported)."
                )
            skipped += n_bad
            examples += bad[: max(0, EXAMPLES - len(examples))]
            first = con.execute(
                f"SELECT min(time_ns) FROM p{i} WHERE err IS NULL AND kind IN ('io', 'issue')"
            ).fetchall()[0][0]
            if first is not None:
                origins.append(int(first))
            if parsed.events:
                parts.append(paired_sql(
                    f"SELECT ln + {i} * 10000000000000 AS ord, kind, time_ns, device, op, sector, nsect, process, pid "
                    f"FROM p{i} WHERE err IS NULL AND kind IN ('issue', 'complete')"
                ))
                unpaired = con.execute(
                    f"SELECT count(*) FROM ({parts[-1]}) WHERE latency_us IS NULL"
                ).fetchall()[0][0]
                if unpaired:
                    notes.append(f"{f}: {unpaired:,} issued IOs have no completion in the trace (no response time).")
            else:
                parts.append(
                    f"SELECT time_ns, device, op, offset_bytes, size_bytes, process, latency_us, pid,"
                    f" ln + {i} * 10000000000000 AS ord FROM p{i} WHERE err IS NULL AND kind = 'io'"
                )
        union = " UNION ALL ".join(f"({p})" for p in parts)
        if not origins:
            raise IolabError(f"{', '.join(str(f) for f in files)}: no IOs found in this {fmt} trace; nothing to import.")
        return write_table(
            con, union, out, fmt=fmt, sources=tuple(str(f) for f in files),
            start_unix_ns=start if clock_unix_ns is None else clock_unix_ns, origin_ns=min(origins),
            skipped_lines=skipped, skipped_examples=tuple(examples), notes=tuple(notes), lost_events=lost_events,
        )
    finally:
        con.close()


def _bad_lines(con, table: str, file: str) -> tuple[int, list[BadLine]]:
    n = con.execute(f"SELECT count(*) FROM {table} WHERE err IS NOT NULL").fetchall()[0][0]
    if not n:
        return 0, []
    rows = con.execute(f"SELECT ln, err, line FROM {table} WHERE err IS NOT NULL ORDER BY ln LIMIT {EXAMPLES}").fetchall()
    return n, [BadLine(file, int(ln), err, line[:200]) for ln, err, line in rows]
