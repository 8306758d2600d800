"""MSR Cambridge CSV: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime.

Timestamp is Windows FILETIME (100 ns ticks since 1601-01-01 UTC); Type Read or Write;
bytes; ResponseTime taken as 100 ns ticks (UNVERIFIED upstream). device = Hostname_DiskNumber.
"""

from __future__ import annotations

import re

from iolab.traces.formats.delimited import CSV_DEVICE, delimited, labels
from iolab.traces.registry import ExportJob, TraceFormat, Writer, csv_header
from iolab.traces.sqltext import Parsed, one_of, text, uint

FILETIME_UNIX_EPOCH = 116444736000000000  # 100 ns ticks from 1601-01-01 to 1970-01-01


def read(path: str) -> Parsed:
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
        "latency_us": "TRY_CAST(f[7] AS DOUBLE) / 10",
    }
    return Parsed(
        delimited(path, fields, values, header="Timestamp"),
        labels=labels(fields, time_ns=1, offset_bytes=5, size_bytes=6, latency_us=7),
        start_unix_ns=0,
        notes=("MSR ResponseTime read as 100 ns ticks (the unit is not documented upstream).",),
    )


def write(job: ExportJob) -> None:
    job.lines(
        f"""SELECT printf('%d,%s,%s,%s,%d,%d,%d',
            ({job.base_unix_ns} + time_ns) // 100 + {FILETIME_UNIX_EPOCH},
            CASE WHEN contains(device, '_') THEN regexp_extract(device, '^(.*)_([^_]*)$', 1) ELSE device END,
            CASE WHEN contains(device, '_') THEN regexp_extract(device, '^(.*)_([^_]*)$', 2) ELSE '0' END,
            CASE op WHEN 'read' THEN 'Read' ELSE 'Write' END, offset_bytes, size_bytes,
            CAST(round(coalesce(latency_us, 0) * 10) AS BIGINT))
            FROM (SELECT * REPLACE ({CSV_DEVICE} AS device) FROM {job.src}) ORDER BY n"""
    )


FORMAT = TraceFormat(
    name="msr",
    title="MSR Cambridge",
    sql=read,
    writers=(Writer("msr", write),),
    header=csv_header("timestamp,hostname,disknumber,type,offset,size,responsetime"),
    shape=re.compile(r"^\d+,[^,]+,\d+,(?:Read|Write),\d+,\d+,\d+$", re.I),
    latency=True,
)
