"""Axis limits and ticks for the plots iolab draws itself (vaxes.py): round-number ticks on a
linear axis, powers of ten (or 1-2-5 steps, or finer) on a log axis, each label printed with the
report's one number formatter (units.num), and labels that would overprint their neighbour left
blank. The rules are the ones the matplotlib plots' log axes kept, so both kinds of plot label
an axis alike; geometry.MIN_TICKS is the fewest labelled ticks an axis of numbers shows.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from iolab.core.units import num
from iolab.pages.report.geometry import MIN_TICKS

MARGIN = 0.05  # autoscaled limits leave this share of the data's span free at each end (matplotlib's)
LINEAR_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)
FINE_SUBS = (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)  # under a decade: powers of ten alone may label nothing


@dataclass(frozen=True)
class Tick:
    value: float
    text: str  # "" for a tick mark left unlabelled (its label would overprint the one before)


@dataclass(frozen=True)
class Scale:
    """An axis' range and kind; `frac` maps a value to 0 (lo) … 1 (hi)."""

    lo: float
    hi: float
    log: bool = False

    def frac(self, v: float) -> float:
        if self.log:
            return (math.log10(v) - math.log10(self.lo)) / (math.log10(self.hi) - math.log10(self.lo))
        return (v - self.lo) / (self.hi - self.lo)

    def shows(self, v: float) -> bool:
        """Whether `v` lies within the range (a log axis shows no value ≤ 0)."""
        return math.isfinite(v) and (v > 0 or not self.log) and self.lo <= v <= self.hi


def autoscale(values: Sequence[float], log: bool, margin: float = MARGIN) -> tuple[float, float]:
    """The limits of an axis showing `values` with a margin at each end (in decades on a log
    axis); a single value gets a range around it."""
    vals = [v for v in values if math.isfinite(v) and (v > 0 or not log)]
    if not vals:
        return (1.0, 10.0) if log else (0.0, 1.0)
    lo, hi = min(vals), max(vals)
    if log:
        a, b = math.log10(lo), math.log10(hi)
        if b - a < 1e-12:
            a, b = a - 0.5, b + 0.5
        pad = (b - a) * margin
        # a stored value near the float range (a run's bound of 1e300 µs) must still get its plot:
        # its margin stops at the largest and smallest decades a float holds, not past them
        return 10 ** max(a - pad, -_DECADES), 10 ** min(b + pad, _DECADES)
    if hi - lo < 1e-12 * max(1.0, abs(hi)):
        d = 0.05 * abs(hi) if hi else 0.05
        return _held(lo - d), _held(hi + d)
    pad = (hi / 2 - lo / 2) * 2 * margin  # halves first: hi - lo of two huge values overflows
    return _held(lo - pad), _held(hi + pad)


_DECADES = math.floor(math.log10(sys.float_info.max))  # 308: 10 ** 309 is past a float


def _held(v: float) -> float:
    """`v` held within the finite floats (a margin past the largest one is the largest one)."""
    return max(-sys.float_info.max, min(sys.float_info.max, v))


def label(v: float) -> str:
    """A tick's value as num prints it, but with every digit the value has: a tick of a 2.5
    step at 100.25 reads 100.25, not num's four significant digits rounded half to even
    (100.2), which names a value the axis does not mark."""
    text = num(v, trim=True)
    if not math.isfinite(v) or v == 0:
        return text
    # the fewest decimals that hold the value (the tick rules round each tick to its step's
    # digits, so a float artefact such as 0.30000000000000004 is not a digit of it)
    exact = next((d for d in range(13) if abs(round(v, d) - v) <= 1e-9 * abs(v)), 12)
    shown = len(text.partition(".")[2])
    return text if exact <= shown else f"{round(v, exact):,.{exact}f}"


def linear(lo: float, hi: float, most: int, whole: bool = False) -> list[Tick]:
    """Round-number ticks (1, 2, 2.5 or 5 times a power of ten apart) within [lo, hi]: the
    narrowest such step that gives at most `most` ticks (matplotlib's MaxNLocator's choice);
    `whole`: whole numbers only (an axis of IOs per second: 0.5 IOPS is noise)."""
    span = hi - lo
    if span <= 0:
        return [Tick(lo, label(lo))]
    values: list[float] = []
    for step in _steps(span / max(1, most), whole):
        values = _multiples(lo, hi, step)
        if len(values) <= most:
            break
    return [Tick(v, label(v)) for v in values]


def covering(lo: float, hi: float, least: int, whole: bool = False) -> list[float]:
    """`linear`'s round-number ticks, but from the last multiple at or below `lo` to the first at
    or above `hi` (an axis whose ends are ticks: the 3D plot's value axis), at the widest step
    that gives at least `least`; `whole`: whole-number steps alone."""
    if not hi > lo:
        return [lo]
    values: list[float] = []
    for step in reversed(_steps(hi - lo, whole, 0.01)):
        values = _multiples(math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step, step)
        if len(values) >= least:
            break
    return values


def _steps(unit: float, whole: bool, lowest: float = 0.1) -> list[float]:
    """The round steps (1, 2, 2.5 or 5 times a power of ten) over three decades from `lowest`
    times `unit`'s power of ten, narrowest first; `whole`: the whole-number ones alone."""
    mag = 10 ** math.floor(math.log10(unit))
    steps = sorted(m * mag * k for k in (lowest, lowest * 10, lowest * 100) for m in LINEAR_STEPS)
    if whole:
        steps = [st for st in steps if st >= 1 and float(st).is_integer()] or [1.0]
    return steps


def most_ticks(length_mm: float, size_pt: float, vertical: bool) -> int:
    """How many ticks an axis this long holds at most: matplotlib's 'auto' (one per two label
    heights up a y axis, one per three along an x axis, 3 to 10)."""
    space = length_mm / (size_pt * (2 if vertical else 3) * 25.4 / 72)
    return int(min(9, max(2, math.floor(space)))) + 1


def _multiples(lo: float, hi: float, step: float) -> list[float]:
    eps = step * 1e-9
    first = math.ceil((lo - eps) / step)
    last = math.floor((hi + eps) / step)
    digits = max(0, 12 - math.floor(math.log10(step)))
    return [round(k * step, digits) + 0.0 for k in range(first, last + 1)]


def log(lo: float, hi: float, most: int, whole: bool = False) -> list[Tick]:
    """Ticks of a log axis: 1-2-5 steps under ~2.5 decades, powers of ten above (every second or
    third one over many decades), finer steps if those label fewer than MIN_TICKS, and on a
    narrow span between those steps evenly spaced round numbers (only there: on a span of
    decades they crowd its top and leave its bottom unlabelled)."""
    orders: list[tuple[float, ...]] = [FINE_SUBS]
    if hi / lo >= 10:
        orders = [(1.0, 2.0, 5.0), *orders] if hi / lo < 300 else [(1.0,), (1.0, 2.0, 5.0), *orders]
    for subs in orders:
        values = [v for v in _log_values(lo, hi, subs) if not whole or float(v).is_integer()]
        if subs == (1.0,) and len(values) > most:
            stride = math.ceil(len(values) / most)
            values = [v for v in values if round(math.log10(v)) % stride == 0]
        if len(values) >= MIN_TICKS:
            return [Tick(v, label(v)) for v in values]
    return linear(lo, hi, min(most, 5), whole)  # at most five, as the matplotlib plots' MaxNLocator(nbins=5)


def _log_values(lo: float, hi: float, subs: tuple[float, ...]) -> list[float]:
    out = []
    for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1):
        for s in subs:
            v = float(f"{s * 10.0**e:.12g}")
            if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9):
                out.append(v)
    return out


def minor_log(lo: float, hi: float, major: Sequence[Tick]) -> list[float]:
    """The unlabelled marks of a log axis (2 … 9 times each power of ten) not already major; none
    over more than eight decades (they would merge into a bar)."""
    if math.log10(hi / lo) > 8:
        return []
    taken = {t.value for t in major}
    return [v for v in _log_values(lo, hi, (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0)) if v not in taken]


def spaced(ticks: Sequence[Tick], positions: Sequence[float], widths: Sequence[float], gap: float) -> list[Tick]:
    """The ticks with each label that would come within `gap` of the label kept before it left
    blank (close values on a log axis, 32 and 36): `positions` are the labels' centres along the
    axis and `widths` their extents along it, in one unit."""
    out, kept_end = [], -math.inf
    for t, p, w in zip(ticks, positions, widths):
        if t.text and p - w / 2 < kept_end + gap:
            out.append(Tick(t.value, ""))
            continue
        if t.text:
            kept_end = p + w / 2
        out.append(t)
    return out


def ticks_for(scale: Scale, most: int, whole: bool = False) -> list[Tick]:
    """An axis' ticks: `linear`'s or `log`'s; a log axis under a decade, which reads nearly as a
    linear one, gets at least as many as a linear axis of its length (the log steps 1-1.5-2-3-5-7
    labelled three values on 50 to 70 µs or 49 to 148 µs)."""
    if not scale.log:
        return linear(scale.lo, scale.hi, most, whole)
    ticks = log(scale.lo, scale.hi, most, whole)
    if scale.hi < 10 * scale.lo:
        even = linear(scale.lo, scale.hi, most, whole)
        ticks = even if len(even) > len(ticks) else ticks
    return ticks
