"""The time unit of formats that do not fix one (DiskSim/MQSim, CloudPhysics/vSCSI).

DiskSim's manual gives ms as a float; MQSim and SSDsim write integer ns; libCacheSim reads
vSCSI times as µs. A trace read in the wrong unit is off by 10^3 or 10^6 (a 0.14 s MQSim
trace read as µs spans 136 s), so the unit is either given (`--time-unit`) or guessed from
the trace, and the guess is said with how sure it is and what each unit would mean.

The guess, on the file's own numbers:
1. A unit is impossible when it makes the trace faster than any device: a burst of
   BURST_IOS IOs above MAX_IOPS per device, or above MAX_BYTES_PER_S per device, or times
   past what the table stores. Times with a fraction part are never ns.
2. Among the possible units, the median gap between successive distinct times decides: a
   block trace's median gap is within a few decades of 1 ms (busy SSD traces ~10 µs, idle
   disks ~100 ms), so the unit that puts it nearest 1 ms on a log scale wins, and the
   format's convention for this shape of times (DiskSim's float ms, MQSim's integer ns,
   libCacheSim's µs) counts as one decade nearer.
3. How sure: certain when one unit alone is possible, likely when the winner leads the next
   possible unit by a decade or more, ambiguous otherwise (the user is told to check).
Fewer than two distinct times give no evidence: the convention is used.

A file iolab's own `trace export` wrote needs no guess: the exporter records the unit it wrote
on the file (`record`, an xattr beside iolab's output mark) and the import reads it back
(`recorded`). An idle trace (1 s between IOs) exported as DiskSim ms or CloudPhysics µs was
guessed a unit smaller, its gaps nearer a typical 1 ms, and came back 1000 times shorter. The
record holds the file's size and mtime: an edited file, or one copied without its xattrs, is
guessed again, and the guess is said.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iolab.core.errors import IolabError
from iolab.core.units import and_list
from iolab.traces.textscan import MAX_TIME_NS

NS_PER = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
UNITS = tuple(NS_PER)
TYPICAL_GAP_S = 1e-3
DEFAULT_BONUS = 1.0  # decades
SURE_MARGIN = 1.0  # decades between the winner and the next possible unit for "likely"
# Beyond any device: the fastest NVMe drives complete a few million IOs a second and move
# ~15 GB/s; a factor of several above both leaves room for bursts read from a trace's clock.
MAX_IOPS = 10e6
MAX_BYTES_PER_S = 100e9
BURST_IOS = 100
# Which formats' unit varies, their documented default and their convention for whole-number
# times are declared with each format (registry.UnitRule, traces/formats/).


@dataclass(frozen=True)
class TimeUnit:
    unit: str  # one of UNITS
    reason: str  # how it was chosen, for the user
    sureness: str = "given"  # given, recorded, certain, likely, ambiguous, or default (no evidence)

    @property
    def ns(self) -> int:
        return NS_PER[self.unit]


def given(unit: str, fmt: str) -> TimeUnit:
    if unit not in NS_PER:
        raise IolabError(f"--time-unit: {unit!r} is not a unit; give one of {', '.join(UNITS)}.")
    return TimeUnit(unit, "given with --time-unit")


UNIT_XATTR = "user.iolab.time_unit"


def record(path: str | Path, unit: str) -> None:
    """Record on a file iolab's export has just written (before it takes its name) the unit of
    its times, with the file's size and mtime, which a later change to the file alters."""
    st = os.stat(path)
    try:
        os.setxattr(path, UNIT_XATTR, f"{unit} {st.st_size} {st.st_mtime_ns}".encode())
    except OSError:  # a filesystem without user xattrs: the import guesses, and says so
        pass


def recorded(paths: Sequence[Path], fmt: str) -> TimeUnit | None:
    """The unit iolab's export recorded on every one of `paths` (one unit for all), or None: a
    file not written so, changed since (its size or mtime differ), or with files that disagree."""
    units = set()
    for path in paths:
        try:
            unit, size, mtime = os.getxattr(path, UNIT_XATTR).decode("ascii").split()
            st = os.stat(path)
        except (OSError, ValueError):
            return None
        if unit not in NS_PER or (size, mtime) != (str(st.st_size), str(st.st_mtime_ns)):
            return None
        units.add(unit)
    if len(units) != 1:
        return None
    return TimeUnit(
        units.pop(), f"recorded on the file by iolab's trace export, which wrote its {fmt} times so", "recorded"
    )


def _human(seconds: float) -> str:
    seconds = float(f"{seconds:.3g}")  # as human_span: 999.9996 µs is '1 ms', not '1e+03 µs'
    if seconds >= 7200:
        v, unit = (seconds / 3600, "h") if seconds < 172800 else (seconds / 86400, "days")
        return f"{v:,.3g} {unit}" if v < 1000 else f"{v:,.0f} {unit}"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if seconds >= scale or unit == "ns":
            v = seconds / scale
            return f"{v:,.3g} {unit}" if v < 1000 else f"{v:,.0f} {unit}"
    return f"{seconds} s"  # pragma: no cover


def _rate(v: float) -> str:
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


@dataclass(frozen=True)
class _Burst:
    ios: int  # IOs in the busiest window
    window: float  # its length in file units (a clock tick added: times are truncated)
    nbytes: float  # the most bytes moved in any such window, over its length in file units


def _burst(t: np.ndarray, sizes: np.ndarray | None) -> _Burst:
    order = np.argsort(t, kind="stable")
    t = t[order]
    k = min(BURST_IOS, len(t) - 1)
    d = np.diff(np.unique(t))
    tick = float(d[d > 0].min())
    span = t[k:] - t[:-k] + tick
    if sizes is None:
        return _Burst(k, float(span.min()), 0.0)
    c = np.concatenate([[0.0], np.cumsum(sizes[order].astype(float))])
    moved = (c[k + 1 :] - c[1:-k]) / span
    return _Burst(k, float(span.min()), float(moved.max()))


def _impossible(unit: str, t: np.ndarray, b: _Burst, devices: int, fractional: bool) -> str:
    s = NS_PER[unit] / 1e9
    if fractional and unit == "ns":
        return "times have a fraction part, and no trace writes fractions of a ns"
    if float(np.abs(t).max()) * NS_PER[unit] > MAX_TIME_NS:
        return "times past 126 years"
    per = f" per device ({devices} devices)" if devices > 1 else " on one device"
    iops = b.ios / (b.window * s) / devices
    if iops > MAX_IOPS:
        return f"a burst of {b.ios} IOs at {_rate(iops)} IOPS{per}, beyond any device (~{MAX_IOPS / 1e6:.0f} M)"
    bw = b.nbytes / s / devices
    if bw > MAX_BYTES_PER_S:
        return f"bursts of {bw / 1e9:,.0f} GB/s{per}, beyond any device (~{MAX_BYTES_PER_S / 1e9:.0f} GB/s)"
    return ""


def detect(
    times: np.ndarray,
    fractional: bool,
    default: str,
    fmt: str,
    sizes: np.ndarray | None = None,
    devices: int = 1,
    whole: tuple[str, str] | None = None,
) -> TimeUnit:
    """The likely unit of `times` (the file's raw numbers, in file order); `sizes` (bytes,
    one per time) and `devices` (how many devices the trace covers) bound what is possible.
    `default` is the format's documented unit; `whole` is (unit, whose convention) for
    whole-number times, when that differs."""
    # a time past what the table stores even in ns is a line dropped (or refused) in every unit:
    # it says nothing of the unit, and a corrupt 1e308 would call every unit impossible (and
    # overflow the spans: numpy's warnings printed above iolab's message)
    keep = np.isfinite(times) & (np.abs(times) <= MAX_TIME_NS)
    times, sizes = times[keep], (None if sizes is None else np.asarray(sizes, dtype=float)[keep])
    t = np.unique(times)
    default, who = (whole or (default, "")) if not fractional else (default, "")
    who = who or f"{fmt}'s documented unit"
    if len(t) < 2:
        return TimeUnit(default, f"{who} (too few distinct times to tell)", "default")
    gap = float(np.median(np.diff(t)))
    span = float(t[-1] - t[0])
    burst = _burst(times, sizes)
    devices = max(1, devices)
    readings, scores = [], {}
    for unit, ns in NS_PER.items():
        why = _impossible(unit, times, burst, devices, fractional)
        if why:
            readings.append(f"{unit}: impossible, {why}")
            continue
        s = ns / 1e9
        scores[unit] = abs(math.log10(gap * s / TYPICAL_GAP_S)) - (DEFAULT_BONUS if unit == default else 0)
        readings.append(
            f"{unit}: median gap {_human(gap * s)}, {_rate(len(times) / (span * s) / devices)} IOPS"
            f"{' per device' if devices > 1 else ''} over {_human(span * s)}"
        )
    if not scores:
        return TimeUnit(
            default,
            f"assumed {who}, though no unit gives rates a device can do ("
            + "; ".join(readings)
            + "). Pass --time-unit",
            "ambiguous",
        )
    ranked = sorted(scores, key=lambda u: (scores[u], UNITS.index(u)))
    best = ranked[0]
    basis = who if best == default else "it puts the median gap nearest the ~1 ms of a typical block trace"
    if len(ranked) == 1:
        sure, head = "certain", f"{best}, the only unit that gives rates a device can do"
    elif scores[ranked[1]] - scores[best] >= SURE_MARGIN:
        sure, head = (
            "likely",
            f"{best}, {basis}, a decade or more ahead of {ranked[1]}"
            + (" (the convention counting one decade)" if best == default or ranked[1] == default else ""),
        )
    else:
        sure, head = "ambiguous", f"assumed {best}, {basis}; {and_list(ranked[1:])} also give rates a device can do"
    tail = "Pass --time-unit to override" if sure != "ambiguous" else f"Pass --time-unit if {best} is wrong"
    return TimeUnit(best, f"guessed, {sure}: {head} — {'; '.join(readings)}. {tail}", sure)


__all__ = ["NS_PER", "UNITS", "TimeUnit", "detect", "given", "record", "recorded"]
