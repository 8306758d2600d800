"""CloudPhysics vSCSI binary traces (the `.vscsi` files libCacheSim reads): read and written
by traces/vscsi.py (numpy), loaded only when a vSCSI file is read or written. The time unit
varies like the CSV form's (libCacheSim: µs)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from iolab.traces.registry import ExportJob, TraceFormat, UnitRule, Writer

if TYPE_CHECKING:
    from iolab.traces.table import TraceTable

UNIT = UnitRule("us")


def load(files: list[Path], out: str | Path, **opts: Any) -> TraceTable:
    """registry.TraceFormat.load: `opts` are import_trace's (skip_bad_lines, notes, lost_events, time_unit)."""
    from iolab.traces.vscsi import import_vscsi

    return import_vscsi(files, out, opts["skip_bad_lines"], opts["notes"], opts["time_unit"], UNIT)


def write(job: ExportJob) -> None:
    from iolab.traces.vscsi import write_vscsi

    write_vscsi(job.con, job.src, job.out)


def magic(head: bytes) -> bool:
    """A vSCSI version byte (1 or 2) in the first records."""
    from iolab.traces.vscsi import vscsi_version

    return vscsi_version(head) is not None


FORMAT = TraceFormat(
    name="vscsi",
    title="CloudPhysics vSCSI binary",
    load=load,
    # version 2 records, 40 B each (version 1 without response times); len is a u32
    writers=(Writer("vscsi", write, record_bytes=40, sectors="offset", max_size=2**32 - 1, unit="us"),),
    magic=magic,
    time_unit=UNIT,
    latency=True,
)
