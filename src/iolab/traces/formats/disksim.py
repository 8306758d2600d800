"""DiskSim/MQSim/SSDsim ASCII: time devno sector size_sectors type (512 B sectors, type 1 =
read, 0 = write). The time unit varies (DiskSim's manual: ms as a float; MQSim and SSDsim:
whole ns): unit_ns. device = devno."""

from __future__ import annotations

import re

from iolab.traces.formats.delimited import DEVICE_NUMBER, delimited, labels, scaled_time
from iolab.traces.registry import ExportJob, TraceFormat, UnitRule, Writer
from iolab.traces.sqltext import Parsed, one_of, ufloat, uint, ws_fields

_NUM = r"\d+(?:\.\d+)?"


def read(path: str, unit_ns: int) -> Parsed:
    fields = [ufloat("time"), uint("devno"), uint("sector"), uint("size_sectors"), one_of("type", ("0", "1"))]
    values = {
        "time_ns": scaled_time("f[1]", unit_ns),
        "device": "CAST(TRY_CAST(f[2] AS UBIGINT) AS VARCHAR)",
        "op": "CASE trim(f[5]) WHEN '1' THEN 'read' ELSE 'write' END",
        "offset_bytes": "TRY_CAST(f[3] AS HUGEINT) * 512",
        "size_bytes": "TRY_CAST(f[4] AS HUGEINT) * 512",
    }
    return Parsed(
        delimited(path, fields, values, header=None, ws=True),
        labels=labels(fields, time_ns=1, offset_bytes=3, size_bytes=4),
    )


def write(job: ExportJob) -> None:
    job.lines(
        f"""SELECT printf('%.6f %d %d %d %d', time_ns / 1e6,
            {DEVICE_NUMBER},
            offset_bytes // 512, size_bytes // 512, CASE op WHEN 'read' THEN 1 ELSE 0 END)
            FROM {job.src} ORDER BY n"""
    )


FORMAT = TraceFormat(
    name="disksim",
    title="DiskSim / MQSim / SSDsim ASCII",
    sql=read,
    writers=(Writer("disksim", write, sectors="offset+size", unit="ms"),),
    shape=re.compile(rf"^\s*{_NUM}\s+\d+\s+\d+\s+\d+\s+[01]\s*$"),
    time_unit=UnitRule(
        "ms",
        whole=("ns", "MQSim's and SSDsim's unit for whole-number times"),
        fields=(f"{ws_fields()}[1]", f"TRY_CAST({ws_fields()}[4] AS DOUBLE) * 512", f"{ws_fields()}[2]"),
    ),
)
