"""Alibaba block traces 2020: device_id,opcode,offset,length,timestamp (R/W, bytes, µs)."""

from __future__ import annotations

import re

from iolab.traces.formats.delimited import CSV_DEVICE, delimited, labels
from iolab.traces.registry import ExportJob, TraceFormat, Writer, csv_header
from iolab.traces.sqltext import Parsed, one_of, text, uint


def read(path: str) -> Parsed:
    fields = [text("device_id"), one_of("opcode", ("R", "W")), uint("offset"), uint("length"), uint("timestamp")]
    values = {
        "time_ns": "TRY_CAST(f[5] AS HUGEINT) * 1000",
        "device": "trim(f[1])",
        "op": "CASE lower(trim(f[2])) WHEN 'r' THEN 'read' ELSE 'write' END",
        "offset_bytes": "TRY_CAST(f[3] AS HUGEINT)",
        "size_bytes": "TRY_CAST(f[4] AS HUGEINT)",
    }
    return Parsed(
        delimited(path, fields, values, header="device_id"),
        labels=labels(fields, time_ns=5, offset_bytes=3, size_bytes=4),
    )


def write(job: ExportJob) -> None:
    job.lines(
        f"""SELECT printf('%s,%s,%d,%d,%d', {CSV_DEVICE}, CASE op WHEN 'read' THEN 'R' ELSE 'W' END,
            offset_bytes, size_bytes, time_ns // 1000) FROM {job.src} ORDER BY n"""
    )


FORMAT = TraceFormat(
    name="alibaba",
    title="Alibaba block traces 2020",
    sql=read,
    writers=(Writer("alibaba", write),),
    header=csv_header("device_id,opcode,offset,length,timestamp"),
    shape=re.compile(r"^[^,]+,[RW],\d+,\d+,\d+$"),
)
