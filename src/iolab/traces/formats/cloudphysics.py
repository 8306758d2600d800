"""CloudPhysics/libCacheSim CSV: version,time,op,size,lbn (op: SCSI opcode in hex; size
bytes; lbn 512 B sectors; the time unit varies, libCacheSim: µs). device = vscsi."""

from __future__ import annotations

import re

from iolab.traces.formats.delimited import delimited, labels, scaled_time, scsi_op_sql
from iolab.traces.registry import ExportJob, TraceFormat, UnitRule, Writer, csv_header
from iolab.traces.sqltext import Field, Parsed, csv_fields, ufloat, uint

HEADER = "version,time,op,size,lbn"
_NUM = r"\d+(?:\.\d+)?"


def read(path: str, unit_ns: int) -> Parsed:
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
        "time_ns": scaled_time("f[2]", unit_ns),
        "device": "'vscsi'",
        "op": scsi_op_sql(opcode.format(v="f[3]")),
        "offset_bytes": "TRY_CAST(f[5] AS HUGEINT) * 512",
        "size_bytes": "TRY_CAST(f[4] AS HUGEINT)",
    }
    return Parsed(
        delimited(path, fields, values, header="version"),
        labels=labels(fields, time_ns=2, offset_bytes=5, size_bytes=4),
        notes=("CloudPhysics lbn read as 512 B sectors and size as bytes.",),
    )


def write(job: ExportJob) -> None:
    # SCSI READ(10)/WRITE(10) opcodes, time in µs (libCacheSim's unit), lbn in 512 B sectors.
    job.lines(
        f"""SELECT printf('1,%d,%s,%d,%d', time_ns // 1000, CASE op WHEN 'read' THEN '28' ELSE '2a' END,
            size_bytes, offset_bytes // 512) FROM {job.src} ORDER BY n""",
        header=HEADER,
    )


FORMAT = TraceFormat(
    name="cloudphysics",
    title="CloudPhysics / libCacheSim CSV",
    sql=read,
    writers=(Writer("cloudphysics", write, head_lines=1, sectors="offset", unit="us"),),
    header=csv_header(HEADER),
    shape=re.compile(rf"^\d+,{_NUM},(?:0x)?[0-9a-f]{{1,2}},\d+,\d+$", re.I),
    time_unit=UnitRule("us", fields=(f"{csv_fields()}[2]", f"TRY_CAST({csv_fields()}[4] AS DOUBLE)", "''")),
)
