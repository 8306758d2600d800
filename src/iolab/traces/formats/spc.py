"""SPC/UMass (Financial, WebSearch): ASU,LBA,Size,Opcode,Timestamp[,more...].

LBA in 512 B blocks, Size in bytes, Opcode r/w (any case), Timestamp in s from the trace
start. device = asuN. No response times.
"""

from __future__ import annotations

import re

from iolab.traces.formats.delimited import DEVICE_NUMBER, delimited, labels
from iolab.traces.registry import ExportJob, TraceFormat, Writer, csv_header
from iolab.traces.sqltext import Parsed, one_of, ufloat, uint


def read(path: str) -> Parsed:
    fields = [uint("ASU"), uint("LBA"), uint("Size"), one_of("Opcode", ("r", "w")), ufloat("Timestamp")]
    values = {
        "time_ns": "TRY_CAST(round(TRY_CAST(f[5] AS DOUBLE) * 1e9) AS HUGEINT)",
        "device": "'asu' || CAST(TRY_CAST(f[1] AS UBIGINT) AS VARCHAR)",
        "op": "CASE lower(trim(f[4])) WHEN 'r' THEN 'read' ELSE 'write' END",
        "offset_bytes": "TRY_CAST(f[2] AS HUGEINT) * 512",
        "size_bytes": "TRY_CAST(f[3] AS HUGEINT)",
    }
    return Parsed(
        delimited(path, fields, values, header="ASU", at_least=True),
        labels=labels(fields, time_ns=5, offset_bytes=2, size_bytes=3),
    )


def write(job: ExportJob) -> None:
    job.lines(
        f"""SELECT printf('%d,%d,%d,%s,%.9f',
            {DEVICE_NUMBER},
            offset_bytes // 512, size_bytes, CASE op WHEN 'read' THEN 'r' ELSE 'w' END, time_ns / 1e9)
            FROM {job.src} ORDER BY n"""
    )


FORMAT = TraceFormat(
    name="spc",
    title="SPC/UMass (Financial, WebSearch)",
    sql=read,
    writers=(Writer("spc", write, sectors="offset"),),
    header=csv_header("asu,lba,size,opcode,timestamp"),
    shape=re.compile(r"^\d+,\d+,\d+,[rw],\d+(?:\.\d*)?(?:,.*)?$", re.I),
)
