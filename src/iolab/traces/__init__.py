"""Layer 10 of 12 (with `traces/analysis/`, the stream analysis of a trace). May import: targets, core.
Imported by store and above.

Traces: block IO captured on Linux or imported from public trace formats, normalised into
one IO table (Parquet: time, device, op, offset, size, process, latency). See table.py.

    import_trace(paths, fmt, out, skip_bad_lines=False) -> TraceTable   (readers.py; FORMATS)
    capture(device, seconds, out, process=None, on_tick=None) -> CaptureResult  (capture.py)
    export_trace(table, fmt, out) -> Path                                 (writers.py)
    TraceTable.open(path) -> TraceTable
    synth.generate(SynthSpec(...), out) -> (TraceTable, SynthTruth)       (known streams)

Stream analysis and workloads built from a table live in iolab.traces.analysis.
"""

from iolab.traces.capture import CaptureResult, CaptureTick, capture
from iolab.traces.detect import detect_format
from iolab.traces.readers import FORMATS, import_trace
from iolab.traces.table import BadLine, TraceTable
from iolab.traces.writers import export_trace

__all__ = [
    "FORMATS",
    "BadLine",
    "CaptureResult",
    "CaptureTick",
    "TraceTable",
    "capture",
    "detect_format",
    "export_trace",
    "import_trace",
]
