"""Layer 10 of 12 (with `traces/analysis/`, the stream analysis of a trace). May import: targets, core.
Imported by store and above.

Traces: block IO captured on Linux or imported from public trace formats, normalised into
one IO table (Parquet: time, device, op, offset, size, process, latency). See table.py.

    import_trace(paths, fmt, out, skip_bad_lines=False) -> TraceTable   (readers.py)
    capture.capture(device, seconds, out, process=None, on_tick=None) -> CaptureResult
    export_trace(table, fmt, out) -> Path                                 (writers.py)
    TraceTable.open(path) -> TraceTable
    synth.generate(SynthSpec(...), out) -> (TraceTable, SynthTruth)       (known streams)

Each format is declared once, in traces/formats/ (the descriptor: registry.py); the formats
read are `formats.reader_names()`, those written `formats.writer_names()`.

Stream analysis and workloads built from a table live in iolab.traces.analysis.

The names below are loaded on first use: the CLI reads the format registry (for its help)
without loading the database and numpy that reading a trace needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from iolab.traces.capture import CaptureResult, CaptureTick
    from iolab.traces.detect import detect_format
    from iolab.traces.readers import import_trace
    from iolab.traces.table import BadLine, TraceTable
    from iolab.traces.writers import export_trace

_WHERE = {
    "CaptureResult": "capture",
    "CaptureTick": "capture",
    "detect_format": "detect",
    "import_trace": "readers",
    "BadLine": "table",
    "TraceTable": "table",
    "export_trace": "writers",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'iolab.traces' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"iolab.traces.{module}"), name)
    # No name here is also a submodule's (the capture function is `iolab.traces.capture.capture`):
    # importing the submodule would bind the module to the package's attribute first.
    globals()[name] = value
    return value


__all__ = [
    "BadLine",
    "CaptureResult",
    "CaptureTick",
    "TraceTable",
    "detect_format",
    "export_trace",
    "import_trace",
]
