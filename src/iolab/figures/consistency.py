"""IO consistency of a per-second IOPS series: the spread of its steady part and periodic dips
(background garbage collection that stalls the host every N seconds).

Pure functions over plain lists, so they are checked on hand-made series
(tests/unit/test_consistency.py) and used by the report on a stored run's series.

A dip is a run of seconds well below the series' median: below median − max(DIP_SIGMAS ×
robust σ, DIP_FLOOR × median), the robust σ being 1.4826 × the median absolute deviation,
so random noise alone rarely makes one and a flat series never does; a long dip broken by a
second or two above the limit is one dip (merge_fragments). A dip already under way at the
first sample times nothing (its start and length were not seen). Dips are periodic when
there are at least MIN_DIPS timed ones, at least REGULAR_SHARE of the gaps between their starts are
whole multiples of one beat within PERIOD_TOLERANCE (or one sample), the longest such beat, and
the series' autocorrelation at the period confirms it. The period is the dips' span over the
number of beats in it, so it need not be a whole number of samples.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from iolab.core.steady import SteadyRule, VariableVerdict, check_variable
from iolab.core.units import counted

DIP_SIGMAS = 4.0
DIP_FLOOR = 0.10
MIN_DIPS = 3
PERIOD_TOLERANCE = 0.15
MIN_AUTOCORRELATION = 0.2
REGULAR_SHARE = 0.8
LONG_DIP = 3  # samples: a dip this long absorbs shorter gaps (merge_fragments)
# A dip ends only once the series is back above median − RELEASE × (median − limit): a plateau
# that sits near the limit with noise around it is one dip, not a run of 1-2 s pieces.
RELEASE = 0.5


@dataclass(frozen=True)
class Spread:
    """The steady part's figures (IOPS)."""

    seconds: int
    min: float
    max: float
    mean: float
    cv: float  # standard deviation ÷ mean
    min_over_max: float  # 1.0: perfectly flat
    # whether the part was steady by its own seconds (steadiness): None when too short to judge
    steady: SteadyPart | None = None


# The steady part starts at a time (steady_from), not where the drive was seen to be steady: its
# figures are named "steady-part …", so the part is judged by the steady-state rule's own test
# (core/steady.py) with its per-second IOPS cut into the rule's window of equal pieces as rounds.
@dataclass(frozen=True)
class SteadyPart:
    verdict: VariableVerdict  # over the pieces' mean IOPS, piece 1 … window
    seconds_each: int
    strict: bool = False

    @property
    def steady(self) -> bool:
        return self.verdict.steady

    @property
    def range_pct(self) -> float:
        return 100 * self.verdict.range_measured / self.verdict.average

    @property
    def excursion_pct(self) -> float:
        return 100 * self.verdict.fit_excursion / self.verdict.average

    def text(self) -> str:
        """'steady by the rule (range 8 % ≤ 20 %, excursion 3 % ≤ 10 %)' or 'NOT steady …'."""
        v = self.verdict
        ok, over = ("<", "≥") if self.strict else ("≤", ">")
        parts = [
            f"range {self.range_pct:.0f} % {ok if v.range_ok else over} {100 * v.range_allowed / v.average:.0f} %",
            f"excursion {self.excursion_pct:.0f} % {ok if v.slope_ok else over} {100 * v.fit_allowed / v.average:.0f} %",
        ]
        of = f"of {len(v.values)} pieces of {self.seconds_each} s"
        return f"{'steady' if self.steady else 'NOT steady'} by the rule ({', '.join(parts)}, {of})"


def part_verdict(sp: Spread | None) -> str:
    """Whether the part was steady by the rule, in a table's cell: the verdict and its numbers."""
    if sp is None:
        return "none: the run ended before it"
    if sp.steady is None:
        return f"not judged ({counted(sp.seconds, 'second')}: too few for the rule's pieces)"
    return sp.steady.text()


def part_text(sp: Spread | None, start: float) -> str:
    """What the figures of the part after `start` are: of a part steady by the rule, or not."""
    head = f"steady part (from {start:g} s): "
    if sp is None or sp.steady is None or sp.steady.steady:
        return head + part_verdict(sp)
    return head + f"{part_verdict(sp)}: these figures are of the part after {start:g} s, not of a steady drive"


def part_title(sp: Spread | None, start: float) -> str:
    """The steady part's name as a table title or a plot's caption gives it: the verdict beside
    it unless the part was steady by the rule, so no caption calls a part steady that was not."""
    shown = sp is not None and sp.steady is not None and sp.steady.steady
    return f"steady part (after {start:g} s){'' if shown else ', NOT shown steady'}"


def part_record(sp: Spread | None, start: float, rule: SteadyRule) -> dict[str, Any]:
    """The verdict's numbers as --json gives them (outcome_schema.py's `steady_part`): the part's
    start and seconds, whether it was steady by the run's rule (None: not judged, too short) and,
    where judged, the range and fit-line excursion with their limits (% of the pieces' mean), the
    pieces and each one's seconds."""
    out: dict[str, Any] = {
        "from_s": start,
        "seconds": sp.seconds if sp else 0,
        "steady": sp.steady.steady if sp and sp.steady else None,
        "comparison": "strict" if rule.strict else "inclusive",
    }
    if sp and sp.steady:
        part, v = sp.steady, sp.steady.verdict
        out |= {
            "range_pct": part.range_pct,
            "range_allowed_pct": 100 * v.range_allowed / v.average,
            "excursion_pct": part.excursion_pct,
            "excursion_allowed_pct": 100 * v.fit_allowed / v.average,
            "pieces": len(v.values),
            "piece_seconds": part.seconds_each,
        }
    return out


def steadiness(iops: Sequence[float], rule: SteadyRule | None = None) -> SteadyPart | None:
    """The rule applied to the means of `rule.window` equal pieces of the series (the last
    seconds that do not fill a piece are left out); None when a piece would be under a second."""
    rule = rule or SteadyRule()
    each = len(iops) // rule.window
    if each < 1:
        return None
    means = [statistics.fmean(iops[k * each : (k + 1) * each]) for k in range(rule.window)]
    verdict = check_variable("IOPS", list(range(1, rule.window + 1)), means, rule)
    return SteadyPart(verdict, each, rule.strict)


@dataclass(frozen=True)
class Dips:
    count: int  # dip events found
    periodic: bool
    period_s: float | None  # median gap between dip starts, when periodic
    duration_s: float | None  # median length of a dip
    depth: float | None  # median of the dips' lowest IOPS ÷ the series' median
    autocorrelation: float | None  # of the series at the period's lag
    starts_s: tuple[float, ...]
    # The longest period the series could show: MIN_DIPS dips a period apart must fit in it.
    # A GC period longer than that is not "none found" but out of the run's reach.
    longest_period_s: float = 0.0

    def text(self) -> str:
        if self.periodic:
            return (
                f"periodic dips every {self.period_s:.3g} s, each about {self.duration_s:.3g} s long, down to "
                f"{self.depth:.0%} of the median IOPS ({self.count} dips; autocorrelation "
                f"{self.autocorrelation:.2f} at that lag)"
            )
        reach = (
            f"; a period longer than {self.longest_period_s:.3g} s cannot show in this series"
            if self.longest_period_s > 0
            else ""
        )
        if self.count == 0:
            return "none found" + reach
        starts = ", ".join(f"{s:g} s" for s in self.starts_s[:6])
        return f"none found ({counted(self.count, 'dip')} at {starts}, not periodic){reach}"


def spread(iops: Sequence[float], rule: SteadyRule | None = None) -> Spread | None:
    """The part's figures, judged steady or not by `rule` (the run's; default: the inclusive one)."""
    if not iops:
        return None
    mean = statistics.fmean(iops)
    sd = statistics.pstdev(iops) if len(iops) > 1 else 0.0
    lo, hi = min(iops), max(iops)
    cv = sd / mean if mean > 0 else math.inf
    return Spread(len(iops), lo, hi, mean, cv, lo / hi if hi > 0 else 0.0, steadiness(iops, rule))


def autocorrelation(values: Sequence[float], lag: int) -> float:
    n = len(values)
    if lag <= 0 or lag >= n:
        return 0.0
    mean = statistics.fmean(values)
    var = sum((v - mean) ** 2 for v in values)
    if var == 0:
        return 0.0
    return sum((values[i] - mean) * (values[i + lag] - mean) for i in range(n - lag)) / var


def find_dips(t_s: Sequence[float], iops: Sequence[float]) -> Dips:
    """Dip events of a series sampled at a regular interval (t_s: end of each interval)."""
    if len(iops) < 2 * MIN_DIPS or len(t_s) != len(iops):
        return Dips(0, False, None, None, None, None, ())
    dt = (t_s[-1] - t_s[0]) / (len(t_s) - 1)
    # MIN_DIPS dips a period apart span (MIN_DIPS - 1) periods of the series' samples
    reach = len(iops) * dt / (MIN_DIPS - 1)
    none = Dips(0, False, None, None, None, None, (), reach)
    med = statistics.median(iops)
    if med <= 0:
        return none
    sigma = 1.4826 * statistics.median(abs(v - med) for v in iops)
    limit = med - max(DIP_SIGMAS * sigma, DIP_FLOOR * med)
    release = med - RELEASE * (med - limit)
    events: list[tuple[int, int]] = []  # (first index, length)
    for i, v in enumerate(iops):
        going_on = bool(events) and events[-1][0] + events[-1][1] == i
        if v < limit or going_on and v < release:
            if going_on:
                events[-1] = (events[-1][0], events[-1][1] + 1)
            else:
                events.append((i, 1))
    events = merge_fragments(events)
    starts = tuple(t_s[i] for i, _ in events)
    depth = statistics.median(min(iops[i : i + n]) for i, n in events) / med if events else None
    # A dip under way when the series starts began before it: neither its start nor its length
    # was seen, so it times nothing (a window that opens 27 s into a 150 s period's dip made the
    # first gap 123 s, and the period 143 s); one still under way at the end has its start.
    timed = events[1:] if events and events[0][0] == 0 else events
    whole = [n for i, n in timed if i + n < len(iops)] or [n for _, n in events]
    duration = statistics.median(whole) * dt if events else None
    if len(timed) < MIN_DIPS:
        return Dips(len(events), False, None, duration, depth, None, starts, reach)
    gaps = [b[0] - a[0] for a, b in zip(timed, timed[1:])]
    # A period that is not a whole number of samples gives gaps of its floor and ceiling (4.3 s
    # sampled every second: 4 and 5); a burst whose deficit is split between two seconds can go
    # unseen (gaps of two or three periods, as often as one); a stall between two bursts adds a
    # dip off the beat. So the beat is the longest period of which most gaps (REGULAR_SHARE) are
    # whole multiples, within PERIOD_TOLERANCE or one sample. (The median gap fails when unseen
    # dips are as common as seen ones: gaps 4, 9, 4, 13 … have a median of 6.5.)
    beat = longest_beat(gaps)
    # Multiples make any two gaps fit some beat: MIN_DIPS dips a beat apart must be seen.
    regular = beat is not None and sum(round(g / beat) <= 1 for g in gaps) >= MIN_DIPS - 1
    # The span of the dips over the beats in it: the gaps that do not fit are counted too, so
    # their share of the time is not left out (averaging only the fitting gaps drifts toward
    # the beat's tolerance edge).
    period = sum(gaps) / sum(max(1, round(g / beat)) for g in gaps) if beat else statistics.median(gaps)
    ac = max(autocorrelation(iops, lag) for lag in {math.floor(period), math.ceil(period)} if lag >= 1)
    periodic = regular and ac >= MIN_AUTOCORRELATION
    return Dips(len(events), periodic, period * dt if periodic else None, duration, depth, ac, starts, reach)


def merge_fragments(events: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """One long dip that noise lifts above the limit now and then is one dip, not several:
    two events are joined when the gap between them is shorter than the longer of them and
    that one is at least LONG_DIP samples. A GC pass's 35 s plateau 10-12 % below the median
    came out as fragments of 1-8 s a few seconds apart, whose gaps fitted no beat and hid its
    150 s period; dips of one or two samples, as bursts and stalls make, stay apart."""
    out: list[tuple[int, int]] = []
    for i, n in events:
        if out:
            a, m = out[-1]
            if i - (a + m) < max(m, n) and max(m, n) >= LONG_DIP:
                out[-1] = (a, i + n - a)
                continue
        out.append((i, n))
    return out


def _fits(gaps: Sequence[int], beat: float) -> int:
    """How many gaps are a whole number of beats, within the tolerance."""
    n = 0
    for g in gaps:
        k = max(1, round(g / beat))
        n += abs(g - k * beat) <= max(PERIOD_TOLERANCE * k * beat, 1)
    return n


def longest_beat(gaps: Sequence[int]) -> float | None:
    """The longest beat (from 2 samples, in steps of 1/20 sample) of which at least
    REGULAR_SHARE of the gaps are whole multiples; None when there is none. Shorter beats
    always fit more gaps (within one sample every gap is a multiple of 2), so the longest
    one is the GC period, not the most gaps."""
    need = REGULAR_SHARE * len(gaps)
    # Most gaps are at least (1 − tolerance) beats long (less one sample): no longer beat fits.
    longest = (sorted(gaps)[int(len(gaps) * (1 - REGULAR_SHARE))] + 1) / (1 - PERIOD_TOLERANCE)
    for step in range(int(20 * longest) + 1, 39, -1):
        if _fits(gaps, step / 20) >= need:
            return step / 20
    return None
