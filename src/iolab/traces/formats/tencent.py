"""Tencent CBS: Timestamp,Offset,Size,IOType,VolumeID (Unix s, 512 B sectors, IOType 0 =
read, 1 = write). Whole-second timestamps: IOs of one second keep the file's order."""

from __future__ import annotations

import re

from iolab.traces.formats.delimited import CSV_DEVICE, delimited, labels
from iolab.traces.registry import ExportJob, TraceFormat, Writer, csv_header
from iolab.traces.sqltext import Parsed, one_of, text, uint


def read(path: str) -> Parsed:
    fields = [uint("Timestamp"), uint("Offset"), uint("Size"), one_of("IOType", ("0", "1")), text("VolumeID")]
    values = {
        "time_ns": "TRY_CAST(f[1] AS HUGEINT) * 1000000000",
        "device": "trim(f[5])",
        "op": "CASE trim(f[4]) WHEN '0' THEN 'read' ELSE 'write' END",
        "offset_bytes": "TRY_CAST(f[2] AS HUGEINT) * 512",
        "size_bytes": "TRY_CAST(f[3] AS HUGEINT) * 512",
    }
    return Parsed(
        delimited(path, fields, values, header="Timestamp"),
        start_unix_ns=0,
        labels=labels(fields, time_ns=1, offset_bytes=2, size_bytes=3),
        notes=("Tencent timestamps are whole seconds: IOs within a second keep the file's order.",),
    )


def write(job: ExportJob) -> None:
    job.lines(
        f"""SELECT printf('%d,%d,%d,%d,%s', ({job.base_unix_ns} + time_ns) // 1000000000, offset_bytes // 512,
            size_bytes // 512, CASE op WHEN 'read' THEN 0 ELSE 1 END, {CSV_DEVICE}) FROM {job.src} ORDER BY n"""
    )


FORMAT = TraceFormat(
    name="tencent",
    title="Tencent CBS",
    sql=read,
    writers=(Writer("tencent", write, sectors="offset+size"),),
    header=csv_header("timestamp,offset,size,iotype,volumeid"),
    shape=re.compile(r"^\d+,\d+,\d+,[01],[^,]+$"),
)
