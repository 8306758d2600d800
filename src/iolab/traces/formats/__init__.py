"""The trace formats iolab reads and writes, one module each (see traces/registry.py for what
a module declares, and docs/trace-formats.md for the formats themselves).

Importing this package registers the built-in formats, in the order below: detection tries
them in this order, and every list of formats (the CLI's help, error messages, the fuzz
cases) follows it. A new format is a module here with its `FORMAT`, added to `BUILT_IN`.
"""

from __future__ import annotations

from iolab.traces.formats import (
    alibaba,
    biosnoop,
    blkparse,
    blktrace,
    cloudphysics,
    disksim,
    fio,
    fiu,
    msr,
    spc,
    systor,
    tencent,
    tracefs,
    vscsi,
)
from iolab.traces.registry import (
    TraceFormat,
    all_formats,
    get,
    reader_names,
    register,
    unregister,
    writer,
    writer_names,
)

BUILT_IN: tuple[TraceFormat, ...] = tuple(
    m.FORMAT
    for m in (
        msr,
        spc,
        alibaba,
        tencent,
        fiu,
        systor,
        blkparse,
        fio,
        tracefs,
        disksim,
        biosnoop,
        cloudphysics,
        blktrace,
        vscsi,
    )
)
for _f in BUILT_IN:
    register(_f)

__all__ = [
    "BUILT_IN",
    "TraceFormat",
    "all_formats",
    "get",
    "reader_names",
    "register",
    "unregister",
    "writer",
    "writer_names",
]
