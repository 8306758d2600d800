"""What an engine returns for one measurement period: `RoundResult` and its parts.

Latency is in µs, throughput in MB/s (10^6 B/s). Every figure here was measured by the
engine; a field an engine cannot measure is None, never 0.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from iolab.core.errors import EngineError
from iolab.core.safefile import read_output
from iolab.core.units import measurable, percentile_min_ios  # noqa: F401 (percentile_min_ios: read with the rule)

# An interval that ended this fraction or more before its planned length is partial (engines
# end a timed interval within a few ms of its length).
PARTIAL_TOLERANCE = 0.02

# The percentiles every report shows; 99.999 % is the PTS 2.0 "5 nines" response time.
PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 99.999)


@dataclass(frozen=True)
class Histogram:
    """Latency histogram: `values_us[i]` is the representative latency of bin i, `counts[i]`
    the IOs in it. Bins are sorted. `max_us` is the true maximum, which caps percentiles (a
    bin's representative value can exceed the largest sample in it)."""

    values_us: tuple[float, ...]
    counts: tuple[int, ...]
    max_us: float

    @property
    def total(self) -> int:
        return sum(self.counts)

    def measured(self, pct: float) -> float | None:
        """The pct % latency when the IOs can measure it (`measurable`), else None: what
        every table, report and export shows."""
        return self.percentile(pct) if measurable(pct, self.total) else None

    def percentile(self, pct: float) -> float | None:
        """Smallest bin value with at least pct % of the IOs at or below it, capped at max
        (however few the IOs: `measured` is the figure to show)."""
        n = self.total
        if n == 0:
            return None
        need = pct / 100.0 * n
        cum = 0
        for value, count in zip(self.values_us, self.counts):
            cum += count
            if cum >= need - 1e-9:
                return min(value, self.max_us)
        return self.max_us

    def percentiles(self, pcts=PERCENTILES) -> dict[float, float | None]:
        return {p: self.percentile(p) for p in pcts}

    @staticmethod
    def merge(hists: list[Histogram]) -> Histogram:
        """Exact merge of histograms (sums counts per bin value)."""
        acc: dict[float, int] = {}
        for h in hists:
            for v, c in zip(h.values_us, h.counts):
                acc[v] = acc.get(v, 0) + c
        keys = sorted(acc)
        return Histogram(tuple(keys), tuple(acc[k] for k in keys), max((h.max_us for h in hists), default=0.0))

    def cumulative_pct(self) -> list[float]:
        n = self.total or 1
        out, cum = [], 0
        for c in self.counts:
            cum += c
            out.append(100.0 * cum / n)
        return out

    def count_at_or_below(self, value_us: float) -> int:
        i = bisect.bisect_right(self.values_us, value_us)
        return sum(self.counts[:i])


@dataclass(frozen=True)
class OpStats:
    """One direction (read or write) of a measurement period."""

    ios: int
    io_bytes: int
    iops: float
    mbps: float
    lat_mean_us: float | None
    lat_max_us: float | None
    lat_min_us: float | None
    histogram: Histogram | None
    # Which latency every figure above is: "total" (submission to completion, what the host
    # waits) or "completion" (fio without total-latency bins: from submission to the device
    # until completion). One definition for all figures of a direction.
    latency: str = "total"

    @staticmethod
    def idle() -> OpStats:
        return OpStats(0, 0, 0.0, 0.0, None, None, None, None)


# The series' interval: fio logs one averaged point per LOG_INTERVAL_MS (log_avg_msec), the
# simulator one per second; the audit bounds each row's IOs by it (figures/audit_series.py)
LOG_INTERVAL_MS = 1000


@dataclass(frozen=True)
class SecondSample:
    """One point of the per-second (or per-interval) series: the interval from the previous
    point's t_s (the first from 0) to its own. Each is one second of measured time, except a
    last, partial one when the period ran past its last whole second (a timed cell draining
    what it had in flight): its rates are per second of its own length (`row_spans`)."""

    t_s: float  # end of the interval, seconds from the start of the period
    read_iops: float
    write_iops: float
    mbps: float
    lat_mean_us: float | None
    lat_max_us: float | None = None  # None where the engine does not report it per second


def row_spans(t_s: Sequence[float]) -> list[float]:
    """Each series row's length (s), from its own end and the previous row's."""
    return [t - prev for prev, t in zip([0.0, *t_s], t_s)]


def partial_row(span_s: float) -> bool:
    """A row shorter than a second (within an engine's timing): the rest of a period after its
    last whole second, not a second to compare with the others (spread, dips)."""
    return span_s < 1.0 - PARTIAL_TOLERANCE


@dataclass(frozen=True)
class RoundResult:
    """One measurement period of one workload on one target."""

    read: OpStats
    write: OpStats
    runtime_s: float
    series: tuple[SecondSample, ...] = ()
    counters: dict[str, float] = field(default_factory=dict)  # engine-specific (e.g. WAF)
    raw_files: tuple[str, ...] = ()  # paths relative to the run directory
    engine: str = ""
    engine_version: str = ""
    # Where the engine ran the workload otherwise than it was asked (fio: more outstanding IO
    # than a mix of random and sequential streams can share); the runner puts each in the run's
    # notes, so no page labels the run with the conditions it was asked for but not run at.
    deviations: tuple[str, ...] = ()
    # The engine's output of raw_files[0] as it parsed it whole from the very text it stored there
    # (the simulator's; None where an engine does not hand it on): the store records that file
    # whole without reading it back, and the power model reads the cell's flash work from it.
    raw: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def iops(self) -> float:
        return self.read.iops + self.write.iops

    @property
    def mbps(self) -> float:
        return self.read.mbps + self.write.mbps

    @property
    def ios(self) -> int:
        return self.read.ios + self.write.ios

    @property
    def io_bytes(self) -> int:
        return self.read.io_bytes + self.write.io_bytes

    @cached_property  # merged once: each stored percentile reads it (cellschema's columns)
    def histogram(self) -> Histogram | None:
        hs = [h for h in (self.read.histogram, self.write.histogram) if h is not None]
        return Histogram.merge(hs) if hs else None

    @property
    def lat_mean_us(self) -> float | None:
        """IO-weighted mean over both directions."""
        parts = [(s.ios, s.lat_mean_us) for s in (self.read, self.write) if s.ios and s.lat_mean_us is not None]
        if not parts:
            return None
        n = sum(p[0] for p in parts)
        return sum(c * m for c, m in parts) / n

    @property
    def lat_max_us(self) -> float | None:
        vals = [s.lat_max_us for s in (self.read, self.write) if s.lat_max_us is not None]
        return max(vals) if vals else None

    def percentile(self, pct: float) -> float | None:
        h = self.histogram
        return h.percentile(pct) if h else None


# -- validation: every engine result is checked before anything stores or uses it -------------


def _problems(s: OpStats, side: str) -> list[str]:
    out = []
    for name in ("iops", "mbps"):
        v = getattr(s, name)
        if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            out.append(f"{side} {name} is {v!r}")
    if not isinstance(s.ios, int) or s.ios < 0:
        out.append(f"{side} IO count is {s.ios!r}")
        return out
    if not isinstance(s.io_bytes, int) or s.io_bytes < 0:
        out.append(f"{side} bytes are {s.io_bytes!r}")
        return out
    if s.ios == 0:
        if s.io_bytes or s.iops or s.mbps:
            out.append(f"{side} has no IOs but {s.io_bytes} B, {s.iops!r} IOPS, {s.mbps!r} MB/s")
        return out
    if s.io_bytes == 0:
        out.append(f"{side} has {s.ios} IOs but 0 bytes")
    lats = {"min": s.lat_min_us, "mean": s.lat_mean_us, "max": s.lat_max_us}
    for name, v in lats.items():
        if v is not None and (not math.isfinite(v) or v < 0):
            out.append(f"{side} {name} latency is {v!r} µs")
            return out
    h = s.histogram
    if h is not None and (any(c < 0 for c in h.counts) or not all(math.isfinite(v) and v >= 0 for v in h.values_us)):
        out.append(f"{side} latency histogram holds a negative or non-finite bin")
    return out


def check_result(result: RoundResult, where: str) -> None:
    """Raise EngineError if `result` holds a figure no measurement can produce (negative,
    NaN or infinite rates, no runtime, IOs without bytes, latencies out of order, ...).
    `where` names the round and its raw files for the message."""
    problems = []
    rt = result.runtime_s
    if not isinstance(rt, (int, float)) or not math.isfinite(rt) or rt <= 0:
        problems.append(f"runtime is {rt!r} s")
    problems += _problems(result.read, "read") + _problems(result.write, "write")
    if not problems and result.ios == 0:
        problems.append("no IO completed")
    for s in result.series:
        vals = (s.t_s, s.read_iops, s.write_iops, s.mbps) + (() if s.lat_mean_us is None else (s.lat_mean_us,))
        if not all(isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 for v in vals):
            problems.append(f"the per-second series holds {s!r}")
            break
    for k, v in result.counters.items():
        if isinstance(v, float) and not math.isfinite(v):
            problems.append(f"counter {k} is {v!r}")
    if problems:
        raise EngineError(
            f"{where}: the engine reported impossible figures ({'; '.join(problems)}), so this round is not stored. "
            "Its raw output is kept; rerun, and report the engine version if it persists."
        )


# The deviation an engine records when it ran a cell at more outstanding IO than planned (fio:
# random and sequential streams at QD 1 each need a job of their own), and the runner's note of
# it ("PHASE, CELL: ..."): the pages read what ran from the note, so its words are declared once.
def cell_where(phase: str, key: str) -> str:
    """A cell in the run's notes."""
    return f"{phase}, {key}"


def raised_outstanding(planned: int, ran: int) -> str:
    return f"outstanding IO raised from {planned} to {ran}"


_RAISED = re.compile(r"^(?P<where>.+): outstanding IO raised from (?P<planned>\d+) to (?P<ran>\d+)(?::|$)")


def raised_in(notes: Sequence[str]) -> dict[str, tuple[int, int]]:
    """The cells a run's notes say ran at more outstanding IO than planned: "PHASE, CELL" ->
    (planned, ran)."""
    out = {}
    for n in notes:
        if m := _RAISED.match(str(n)):
            out[m["where"]] = (int(m["planned"]), int(m["ran"]))
    return out


def json_objects(text: str) -> tuple[list[dict], list[str], int | None]:
    """An engine's output as its top-level JSON objects (fio writes one per status report, the
    final report last; the simulator one), the lines of text around them (fio's warnings), and
    where an object begins that never ends (None: none does; a truncated output), whose text is
    kept with the lines."""
    found, other, cut = json_spans(text)
    return [obj for _, _, obj in found], other, cut


def json_spans(text: str) -> tuple[list[tuple[int, int, dict]], list[str], int | None]:
    """`json_objects` with where each object is: (start, end, object), `text[start:end]` being
    its exact text (a caller that keeps the engine's own bytes cuts them there)."""
    dec = json.JSONDecoder()
    found, other, cut = [], [], None
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        if text[i] == "{":
            try:
                obj, end = dec.raw_decode(text, i)
                found.append((i, end, obj))
                i = end
                continue
            except json.JSONDecodeError:
                cut = i if cut is None else cut
        end = text.find("\n", i)
        end = n if end < 0 else end
        other.append(text[i:end])
        i = end + 1
    return found, other, cut


def _count(side: object, key: str) -> int | None:
    v = side.get(key) if isinstance(side, dict) else None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def fio_completed_ios(side: object) -> int | None:
    """The IOs one direction of a fio job completed in its measured time: the samples of its
    total (else completion) latency, which its io_bytes and histogram count. fio's `total_ios`
    counts the IOs *issued* after the ramp, so an IO issued in the ramp and completed after it
    is in the histogram and the bytes but not in total_ios (a rate-limited QD 1 cell held 1,001
    latencies, 1,001 × 4 KiB and total_ios 1,000): the cell's count must be the one its
    percentiles are taken from. fio 2.x reports no sample count: its total_ios then."""
    if not isinstance(side, dict):
        return None
    for key in ("lat_ns", "clat_ns"):
        n = _count(side.get(key), "N")
        if n is not None:
            return n
    return _count(side, "total_ios")


def held_ios(report: object, issued: bool = False) -> tuple[int, int] | None:
    """The (read, write) IOs an engine's final report holds, as the engines' parsers count them:
    fio's jobs (fio_completed_ios; `issued`: total_ios, as runs stored before counted them), its
    client's per-host entries (not the "All clients" sum), the simulator's read and write. None:
    not a report of a shape known here (nothing to compare); (-1, -1): an entry without its
    counts (the parser would refuse it)."""
    if not isinstance(report, dict):
        return None
    if isinstance(report.get("jobs"), list):
        entries = report["jobs"]
    elif isinstance(report.get("client_stats"), list):
        entries = [j for j in report["client_stats"] if not (isinstance(j, dict) and j.get("jobname") == "All clients")]
    elif isinstance(report.get("read"), dict) and isinstance(report.get("write"), dict):
        r, w = _count(report["read"], "ios"), _count(report["write"], "ios")
        return None if r is None or w is None else (r, w)
    else:
        return None

    def count(d: object) -> int | None:
        return _count(d, "total_ios") if issued else fio_completed_ios(d)

    counts = [(count(j.get("read")), count(j.get("write"))) for j in entries if isinstance(j, dict)]
    reads, writes = [r for r, _ in counts if r is not None], [w for _, w in counts if w is not None]
    if len(reads) != len(entries) or len(writes) != len(entries):
        return (-1, -1)
    return sum(reads), sum(writes)


def output_damage(path: Path, stored: tuple[int, int] | None = None) -> str | None:
    """Why the engine's JSON output at `path` is not whole (None: it is): the audit's raw-output
    test (figures/audit_raw.py), which the store applies too before it records a file as whole.
    Given `stored` (the cell's read and write IOs), whole is not enough: a file cut where an
    earlier status report ends, another round's report copied over it, or a report whose jobs
    list lost a job is valid JSON the cell's figures were not computed from, told by its final
    report's IO counts."""
    try:
        text = read_output(path)
    except FileNotFoundError:
        return "missing"
    except OSError as e:
        return f"unreadable ({e.strerror or e})"
    try:
        objects = [json.loads(text)]  # the usual case, one object: a single parse
    except ValueError:
        objects, _text, cut = json_objects(text)
        if cut is not None:
            return f"truncated (a JSON object begun at byte {cut} never ends; {len(text)} bytes in all)"
        if not objects:
            return f"holds no JSON result ({len(text)} bytes)"
    held = held_ios(objects[-1])
    if stored is None or held is None or stored in (held, held_ios(objects[-1], issued=True)):
        return None
    if held == (-1, -1):
        return "not the cell's result (its report has an entry without its IO counts)"
    return (
        f"not the cell's result: its report holds {held[0]:,} reads and {held[1]:,} writes, the cell's "
        f"figures {stored[0]:,} and {stored[1]:,} (a report cut where an object ends, another round's, or "
        "one missing a job)"
    )
