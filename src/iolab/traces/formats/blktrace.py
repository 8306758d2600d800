"""blktrace binary (dev.blktrace.N files, struct blk_io_trace, either byte order): read and
written by traces/blktrace.py (numpy), loaded only when a blktrace file is read or written."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iolab.traces.events import export_events_sql
from iolab.traces.registry import ExportJob, TraceFormat, Writer

if TYPE_CHECKING:
    from iolab.traces.table import TraceTable


def load(files: list[Path], out: str | Path, **opts: Any) -> TraceTable:
    """registry.TraceFormat.load: `opts` are import_trace's (skip_bad_lines, notes, lost_events, time_unit)."""
    from iolab.traces.blktrace import import_blktrace

    return import_blktrace(files, out, opts["skip_bad_lines"], opts["notes"], opts["lost_events"])


def write(job: ExportJob) -> None:
    from iolab.traces.blktrace import write_blktrace

    job.needs_latency("blktrace", "response times to write completions")
    write_blktrace(job.con, export_events_sql(job.src), job.out, (job.major << 20) | job.minor)


def magic(head: bytes) -> bool:
    """blk_io_trace's magic (low byte: the version) in either byte order."""
    from iolab.traces.blktrace import MAGIC

    return len(head) >= 4 and any(struct.unpack(e + "I", head[:4])[0] & 0xFFFFFF00 == MAGIC for e in "<>")


FORMAT = TraceFormat(
    name="blktrace",
    title="blktrace binary",
    load=load,
    # Records carry payloads of their own length: fuzz.py mangles the stream as a whole.
    writers=(Writer("blktrace", write, sectors="offset+size", max_size=(2**32 - 1) // 512 * 512),),  # u32 bytes
    magic=magic,
    latency=True,
)
