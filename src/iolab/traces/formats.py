"""Text trace formats: one SQL builder per format (the driver is readers.py).

    TEXT_FORMATS[name](path[, unit_ns]) -> Parsed   (SQL over the file's lines)

Formats (documented for users in docs/trace-formats.md; blkparse and tracefs, whose issue and
complete lines are paired, are built in eventformats.py, fio iologs in fioiolog.py):

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
  disksim    DiskSim/MQSim ASCII  time devno sector size_sectors type  (512 B sectors, type
             1 = read, 0 = write). The time unit varies (DiskSim ms, MQSim ns): unit_ns.
             device = devno.
  cloudphysics  CloudPhysics/libCacheSim CSV  version,time,op,size,lbn  (op: SCSI opcode in
             hex; size bytes; lbn 512 B sectors; time unit varies, libCacheSim: µs).
  biosnoop   bcc biosnoop text  TIME(s) COMM PID DISK T SECTOR BYTES [QUE(ms)] LAT(ms); the
             -Q variant (QUE column) is told by the header, or by the field count without
             one. biosnoop prints at completion: issue time = TIME - LAT. T R or W.

Every text line is checked field by field, giving file:line, the field, what was expected
and what was found; values are computed wide (HUGEINT, DOUBLE) and range-checked by the
driver. The work is SQL over the file (DuckDB reads it, compressed or not), not a Python
loop.
"""

from __future__ import annotations

from collections.abc import Callable

from iolab.traces.eventformats import blkparse, tracefs
from iolab.traces.fioiolog import fio_iolog
from iolab.traces.table import sql_str
from iolab.traces.textscan import (
    Field,
    Parsed,
    check_fields,
    csv_fields,
    first_line,
    header_skip,
    lines_sql,
    one_of,
    optional,
    q,
    text,
    ufloat,
    uint,
    ws_fields,
)

FILETIME_UNIX_EPOCH = 116444736000000000  # 100 ns ticks from 1601-01-01 to 1970-01-01


# ---------------------------------------------------------------------------------------
# Delimited formats: fields -> checks -> values


def _delimited(
    path: str,
    fields: list[Field],
    values: dict[str, str],
    *,
    header: str | None,
    at_least: bool = False,
    ws: bool = False,
) -> str:
    """Common shape of the delimited formats. `values` maps trace-table columns to SQL over
    the split list `f`; it is only evaluated on good lines."""
    split = ws_fields() if ws else csv_fields()
    err = check_fields(fields, "f", "whitespace-separated" if ws else "comma-separated", at_least)
    skip = header_skip(header) if header else "false"
    # Values are computed on good data lines only (a CAST of a bad field would fail).
    cols = (
        ", ".join(
            f"CASE WHEN err IS NULL AND kind = 'io' THEN {values[c]} END AS {c}"
            for c in ("time_ns", "device", "op", "offset_bytes", "size_bytes", "process", "latency_us")
        )
        + f", CASE WHEN err IS NULL AND kind = 'io' THEN {values.get('pid', 'NULL')} END AS pid"
    )
    return f"""
        WITH l AS ({lines_sql(path)}),
        s AS (SELECT ln, line, {split} AS f, {skip} AS hdr FROM l),
        c AS (SELECT ln, line, f, CASE WHEN hdr THEN NULL ELSE {err} END AS err,
                     CASE WHEN hdr THEN 'skip' ELSE 'io' END AS kind FROM s)
        SELECT ln, line, err, kind, {cols} FROM c
    """


def _labels(fields: list[Field], **cols: int) -> dict[str, str]:
    """Numeric column -> 'field N (name)' of the field it is computed from."""
    return {c: f"field {i} ({fields[i - 1].name})" for c, i in cols.items()}


def _msr(path: str) -> Parsed:
    fields = [
        uint("Timestamp"),
        text("Hostname"),
        uint("DiskNumber"),
        one_of("Type", ("Read", "Write")),
        uint("Offset"),
        uint("Size"),
        uint("ResponseTime"),
    ]
    values = {
        "time_ns": f"(TRY_CAST(f[1] AS HUGEINT) - {FILETIME_UNIX_EPOCH}) * 100",
        "device": "trim(f[2]) || '_' || trim(f[3])",
        "op": "lower(trim(f[4]))",
        "offset_bytes": "TRY_CAST(f[5] AS HUGEINT)",
        "size_bytes": "TRY_CAST(f[6] AS HUGEINT)",
        "process": "NULL",
        "latency_us": "TRY_CAST(f[7] AS DOUBLE) / 10",
    }
    return Parsed(
        _delimited(path, fields, values, header="Timestamp"),
        labels=_labels(fields, time_ns=1, offset_bytes=5, size_bytes=6, latency_us=7),
        start_unix_ns=0,
        notes=("MSR ResponseTime read as 100 ns ticks (the unit is not documented upstream).",),
    )


def _spc(path: str) -> Parsed:
    fields = [uint("ASU"), uint("LBA"), uint("Size"), one_of("Opcode", ("r", "w")), ufloat("Timestamp")]
    values = {
        "time_ns": "TRY_CAST(round(TRY_CAST(f[5] AS DOUBLE) * 1e9) AS HUGEINT)",
        "device": "'asu' || CAST(TRY_CAST(f[1] AS UBIGINT) AS VARCHAR)",
        "op": "CASE lower(trim(f[4])) WHEN 'r' THEN 'read' ELSE 'write' END",
        "offset_bytes": "TRY_CAST(f[2] AS HUGEINT) * 512",
        "size_bytes": "TRY_CAST(f[3] AS HUGEINT)",
        "process": "NULL",
        "latency_us": "NULL",
    }
    return Parsed(
        _delimited(path, fields, values, header="ASU", at_least=True),
        labels=_labels(fields, time_ns=5, offset_bytes=2, size_bytes=3),
    )


def _alibaba(path: str) -> Parsed:
    fields = [text("device_id"), one_of("opcode", ("R", "W")), uint("offset"), uint("length"), uint("timestamp")]
    values = {
        "time_ns": "TRY_CAST(f[5] AS HUGEINT) * 1000",
        "device": "trim(f[1])",
        "op": "CASE lower(trim(f[2])) WHEN 'r' THEN 'read' ELSE 'write' END",
        "offset_bytes": "TRY_CAST(f[3] AS HUGEINT)",
        "size_bytes": "TRY_CAST(f[4] AS HUGEINT)",
        "process": "NULL",
        "latency_us": "NULL",
    }
    return Parsed(
        _delimited(path, fields, values, header="device_id"),
        labels=_labels(fields, time_ns=5, offset_bytes=3, size_bytes=4),
    )


def _tencent(path: str) -> Parsed:
    fields = [uint("Timestamp"), uint("Offset"), uint("Size"), one_of("IOType", ("0", "1")), text("VolumeID")]
    values = {
        "time_ns": "TRY_CAST(f[1] AS HUGEINT) * 1000000000",
        "device": "trim(f[5])",
        "op": "CASE trim(f[4]) WHEN '0' THEN 'read' ELSE 'write' END",
        "offset_bytes": "TRY_CAST(f[2] AS HUGEINT) * 512",
        "size_bytes": "TRY_CAST(f[3] AS HUGEINT) * 512",
        "process": "NULL",
        "latency_us": "NULL",
    }
    return Parsed(
        _delimited(path, fields, values, header="Timestamp"),
        start_unix_ns=0,
        labels=_labels(fields, time_ns=1, offset_bytes=2, size_bytes=3),
        notes=("Tencent timestamps are whole seconds: IOs within a second keep the file's order.",),
    )


def _fiu(path: str) -> Parsed:
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


def _systor(path: str) -> Parsed:
    fields = [
        ufloat("Timestamp"),
        optional(ufloat("Response")),
        optional(one_of("IOType", ("R", "W"))),
        uint("LUN"),
        uint("Offset"),
        uint("Size"),
    ]
    values = {
        "time_ns": "TRY_CAST(round(TRY_CAST(f[1] AS DOUBLE) * 1e9) AS HUGEINT)",
        "device": "'lun' || CAST(TRY_CAST(f[4] AS UBIGINT) AS VARCHAR)",
        "op": "CASE upper(trim(f[3])) WHEN 'R' THEN 'read' WHEN 'W' THEN 'write' ELSE 'other' END",
        "offset_bytes": "TRY_CAST(f[5] AS HUGEINT)",
        "size_bytes": "TRY_CAST(f[6] AS HUGEINT)",
        "process": "NULL",
        "latency_us": "CASE WHEN trim(f[2]) = '' THEN NULL ELSE TRY_CAST(f[2] AS DOUBLE) * 1e6 END",
    }
    return Parsed(
        _delimited(path, fields, values, header="Timestamp"),
        start_unix_ns=0,
        labels=_labels(fields, time_ns=1, latency_us=2, offset_bytes=5, size_bytes=6),
        notes=("SYSTOR'17 Response read as seconds, like its Timestamp.",),
    )


def _scaled_time(v: str, unit_ns: int) -> str:
    """SQL: a time field in units of `unit_ns` ns -> ns (exact for whole numbers)."""
    return (
        f"CASE WHEN regexp_full_match(trim({v}), '[0-9]+') THEN TRY_CAST({v} AS HUGEINT) * {unit_ns}"
        f" ELSE TRY_CAST(round(TRY_CAST({v} AS DOUBLE) * {unit_ns}) AS HUGEINT) END"
    )


def _disksim(path: str, unit_ns: int) -> Parsed:
    fields = [ufloat("time"), uint("devno"), uint("sector"), uint("size_sectors"), one_of("type", ("0", "1"))]
    values = {
        "time_ns": _scaled_time("f[1]", unit_ns),
        "device": "CAST(TRY_CAST(f[2] AS UBIGINT) AS VARCHAR)",
        "op": "CASE trim(f[5]) WHEN '1' THEN 'read' ELSE 'write' END",
        "offset_bytes": "TRY_CAST(f[3] AS HUGEINT) * 512",
        "size_bytes": "TRY_CAST(f[4] AS HUGEINT) * 512",
        "process": "NULL",
        "latency_us": "NULL",
    }
    return Parsed(
        _delimited(path, fields, values, header=None, ws=True),
        labels=_labels(fields, time_ns=1, offset_bytes=3, size_bytes=4),
    )


# SCSI opcodes (SBC): READ(10)/(16), WRITE(10)/(16), SYNCHRONIZE CACHE(10)/(16), UNMAP.
SCSI_READ, SCSI_WRITE, SCSI_SYNC, SCSI_UNMAP = (0x28, 0x88), (0x2A, 0x8A), (0x35, 0x91), (0x42,)


def scsi_op_sql(code: str) -> str:
    """SQL: a SCSI opcode (integer expression) -> the table's op."""

    def within(codes: tuple[int, ...]) -> str:
        return ", ".join(str(c) for c in codes)

    return (
        f"CASE WHEN {code} IN ({within(SCSI_READ)}) THEN 'read' WHEN {code} IN ({within(SCSI_WRITE)}) THEN 'write'"
        f" WHEN {code} IN ({within(SCSI_SYNC)}) THEN 'flush' WHEN {code} IN ({within(SCSI_UNMAP)}) THEN 'trim'"
        " ELSE 'other' END"
    )


def _cloudphysics(path: str, unit_ns: int) -> Parsed:
    # op is the SCSI opcode in hex, with or without 0x (libCacheSim's data: 28 = READ(10)).
    opcode = "TRY_CAST('0x' || regexp_replace(lower(trim({v})), '^0x', '') AS INTEGER)"
    fields = [
        uint("version"),
        ufloat("time"),
        Field("op", f"coalesce(({opcode}) BETWEEN 0 AND 255, false)", "a SCSI opcode in hex (28 read, 2a write, ...)"),
        uint("size"),
        uint("lbn"),
    ]
    values = {
        "time_ns": _scaled_time("f[2]", unit_ns),
        "device": "'vscsi'",
        "op": scsi_op_sql(opcode.format(v="f[3]")),
        "offset_bytes": "TRY_CAST(f[5] AS HUGEINT) * 512",
        "size_bytes": "TRY_CAST(f[4] AS HUGEINT)",
        "process": "NULL",
        "latency_us": "NULL",
    }
    return Parsed(
        _delimited(path, fields, values, header="version"),
        labels=_labels(fields, time_ns=2, offset_bytes=5, size_bytes=4),
        notes=("CloudPhysics lbn read as 512 B sectors and size as bytes.",),
    )


BIOSNOOP_HEADER = "TIME(s)"


def _biosnoop(path: str) -> Parsed:
    # COMM is printed %-14.14s and may hold spaces: the fields after it are taken from the end.
    first = first_line(path)
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


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


TEXT_FORMATS: dict[str, Callable[..., Parsed]] = {
    "msr": _msr,
    "spc": _spc,
    "alibaba": _alibaba,
    "tencent": _tencent,
    "fiu": _fiu,
    "systor": _systor,
    "blkparse": blkparse,
    "fio": fio_iolog,
    "tracefs": tracefs,
    "disksim": _disksim,
    "biosnoop": _biosnoop,
    "cloudphysics": _cloudphysics,
}


__all__ = ["FILETIME_UNIX_EPOCH", "TEXT_FORMATS", "scsi_op_sql"]
