"""The time unit of formats that do not fix one (DiskSim/MQSim, CloudPhysics/vSCSI).

DiskSim's manual gives ms as a float; MQSim writes integer ns; libCacheSim reads vSCSI
times as µs. A trace read in the wrong unit is off by 10^3 or 10^6 (a 0.14 s MQSim trace read
as ms spans 136,489 s), so the unit is either given (`--time-unit`) or guessed from the
times themselves, and the guess is said with its reason.

The guess: take the median gap between successive distinct times (in the file's own
numbers) and read it in each unit. A block trace's median gap is near 1 ms whatever the
device (~1,000 IOPS; busy SSD traces ~10 µs, idle disks ~100 ms), so the unit that puts it
closest to 1 ms on a log scale wins; the format's documented unit counts as one decade
closer (so it wins unless another unit fits clearly better). Times with a fraction part are
never ns. Fewer than two distinct times give no evidence: the documented unit is used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import IolabError

NS_PER = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
UNITS = tuple(NS_PER)
TYPICAL_GAP_S = 1e-3
DEFAULT_BONUS = 1.0  # decades
# Formats whose time unit varies between the tools that write them, with the documented
# default (DiskSim's manual: ms; libCacheSim's vSCSI reader: µs).
VARIABLE_UNIT = {"disksim": "ms", "cloudphysics": "us", "vscsi": "us"}


@dataclass(frozen=True)
class TimeUnit:
    unit: str  # one of UNITS
    reason: str  # how it was chosen, for the user

    @property
    def ns(self) -> int:
        return NS_PER[self.unit]


def given(unit: str, fmt: str) -> TimeUnit:
    if unit not in NS_PER:
        raise IolabError(f"--time-unit: {unit!r} is not a unit; give one of {', '.join(UNITS)}.")
    return TimeUnit(unit, "given with --time-unit")


def _human(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if seconds >= scale or unit == "ns":
            v = seconds / scale
            return f"{v:,.3g} {unit}" if v < 1000 else f"{v:,.0f} {unit}"
    return f"{seconds} s"  # pragma: no cover


def detect(times: np.ndarray, fractional: bool, default: str, fmt: str) -> TimeUnit:
    """The likely unit of `times` (the file's raw numbers, in file order)."""
    t = np.unique(times[np.isfinite(times)])
    if len(t) < 2:
        return TimeUnit(default, f"{fmt}'s documented unit (too few distinct times to tell)")
    gap = float(np.median(np.diff(t)))
    span = float(t[-1] - t[0])
    best, best_score = default, math.inf
    for unit, ns in NS_PER.items():
        if fractional and unit == "ns":
            continue
        score = abs(math.log10(gap * ns / 1e9 / TYPICAL_GAP_S)) - (DEFAULT_BONUS if unit == default else 0)
        if score < best_score:
            best, best_score = unit, score
    readings = ", ".join(
        f"{_human(gap * ns / 1e9)} as {u}" for u, ns in NS_PER.items() if not (fractional and u == "ns")
    )
    span_s = span * NS_PER[best] / 1e9
    return TimeUnit(
        best,
        f"guessed: the median gap between IOs is {gap:,.6g} time units ({readings}); {best} puts it nearest "
        f"the ~1 ms of a typical block trace (the documented {default} counting one decade nearer); "
        f"span {_human(span_s)}. Pass --time-unit to override",
    )


__all__ = ["NS_PER", "UNITS", "TimeUnit", "detect", "given"]
