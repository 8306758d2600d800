"""SYSTOR '17: Timestamp,Response,IOType,LUN,Offset,Size (Unix s; Response in s; IOType R,
W or blank = unknown, kept as op 'other'; bytes). device = lunN."""

from __future__ import annotations

import re

from iolab.traces.formats.delimited import DEVICE_NUMBER, delimited, labels
from iolab.traces.registry import ExportJob, TraceFormat, Writer, csv_header
from iolab.traces.sqltext import Parsed, one_of, optional, ufloat, uint

HEADER = "Timestamp,Response,IOType,LUN,Offset,Size"
_NUM = r"\d+(?:\.\d+)?"


def read(path: str) -> Parsed:
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
        "latency_us": "CASE WHEN trim(f[2]) = '' THEN NULL ELSE TRY_CAST(f[2] AS DOUBLE) * 1e6 END",
    }
    return Parsed(
        delimited(path, fields, values, header="Timestamp"),
        start_unix_ns=0,
        labels=labels(fields, time_ns=1, latency_us=2, offset_bytes=5, size_bytes=6),
        notes=("SYSTOR'17 Response read as seconds, like its Timestamp.",),
    )


def write(job: ExportJob) -> None:
    job.lines(
        f"""SELECT printf('%.6f,%s,%s,%d,%d,%d', ({job.base_unix_ns} + time_ns) / 1e9,
            CASE WHEN latency_us IS NULL THEN '' ELSE printf('%.6f', latency_us / 1e6) END,
            CASE op WHEN 'read' THEN 'R' ELSE 'W' END,
            {DEVICE_NUMBER},
            offset_bytes, size_bytes) FROM {job.src} ORDER BY n""",
        header=HEADER,
    )


FORMAT = TraceFormat(
    name="systor",
    title="SYSTOR '17",
    sql=read,
    writers=(Writer("systor", write, head_lines=1),),
    header=csv_header(HEADER),
    shape=re.compile(rf"^{_NUM},(?:{_NUM})?,[RW]?,\d+,\d+,\d+$"),
    latency=True,
)
