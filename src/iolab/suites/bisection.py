"""The limit between two demand steps: after a ramp of rising demand (latency vs demand,
latency-bound) ends, bisection between the highest demand that met the test's rule and the
lowest above it that did not. Each step splits that bracket on a log scale (at the geometric
mean of its ends), so every step takes the square root of the bracket's ratio whatever its
width: three steps narrow a doubling ramp's 64,000 → 130,000 to a factor of 2^(1/8) (9 %),
and a sparse list's 2,000 → 4,000,000 to 2,000^(1/8) (2.6×), where halving the difference
three times tried 2,000,000, 1,000,000 and 501,000 and left 2,000 → 501,000.

Each step is one deferred phase of one cell, built from the results of the ramp and the steps
before it, so a resumed run builds the same steps again. The search stops where a further step
could not be told apart (stop_reason): no gap is left, the step's demand is too low for its cell
to hold the IOs the rule reads, or it lies closer to both ends than the run realised a demand
(the step that met delivered 99 % of its demand: a step within 1 % of both ends is either of
them again). Such a step is not run; its decision says why."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from iolab.core.decide import BISECTION_LABEL, Decision, Sample
from iolab.core.plan import Cell, Deferred, Phase
from iolab.core.units import num

STEPS = 3
# how each step splits the bracket, for the tests' "Bisection" rows (said wherever the search is described)
SPLIT = (
    "each at the geometric mean of the highest demand met and the lowest not met so far (their midpoint on a log scale)"
)


def step_names(ramp: str, steps: int = STEPS) -> tuple[str, ...]:
    return tuple(f"{ramp}: bisection {k}" for k in range(1, steps + 1))


def bracket(samples: Sequence[Sample], met: Callable[[Sample], bool]) -> tuple[float | None, float | None]:
    """(the highest demand met, the lowest demand above it not met); None where there is none."""
    demands = [(s.demand_iops, met(s)) for s in samples if s.demand_iops]
    lo = max((d for d, ok in demands if ok), default=None)
    hi = min((d for d, ok in demands if not ok and (lo is None or d > lo)), default=None)
    return lo, hi


def midpoint(lo: float | None, hi: float | None) -> int | None:
    """The geometric mean of the two, √(lo × hi), to three significant digits (the ramp's own
    steps have two); half of `hi` when no step met (the first step already broke: the log scale
    has no 0 to split from). None: no gap left to split (every step met, or the two are
    adjacent)."""
    if hi is None:
        return None
    mid = int(float(f"{math.sqrt(lo * hi) if lo else hi / 2:.3g}"))
    return mid if (lo or 0.0) < mid < hi else None


@dataclass(frozen=True)
class Resolution:
    """The lowest demand a bisection step can judge: `least`, whose cell completes the IOs the
    test's rule is read from (`least_why` says why, for the record). A step below it is not run."""

    least: float = 0.0
    least_why: str = ""


def realised(s: Sample) -> float:
    """How closely the run realised step `s`'s demand, as a share of it: its delivered IOPS
    against its demand, and never finer than one IO of the IOs it counted (whole IOs). Demands
    closer than this to a step are that step again to the measurement."""
    demand = s.demand_iops or 0.0
    off = abs(s.iops - demand) / demand if demand else 0.0
    return max(off, 1 / s.ios if s.ios else 0.0)


def stop_reason(lo: float | None, hi: float | None, mid: int | None, res: Resolution, share: float = 0.0) -> str | None:
    """Why a step at `mid` between `lo` (met) and `hi` (not met) is not worth running (None: it
    is): no gap left, a demand too low to judge, or one closer to both ends than `share`, the
    resolution to which the step that met realised its demand (realised)."""
    if mid is None:
        return (
            f"no gap to split (highest demand met: {num(lo) if lo is not None else 'none'}, lowest above it not met: "
            f"{num(hi) if hi is not None else 'none'})"
        )
    if mid < res.least:
        return f"a step of {mid:,} IOPS {res.least_why}"
    if lo is not None and hi is not None and mid / lo - 1 < share and hi / mid - 1 < share:
        return (
            f"a step of {mid:,} IOPS would lie within {100 * share:.2g} % of {int(lo):,} (met) and {int(hi):,} "
            f"(not met), closer than the run realised a demand (the {int(lo):,} IOPS step's was off by "
            f"{100 * share:.2g} %): it cannot be told apart from them"
        )
    return None


def refinements(
    ramp: str,
    cell: Callable[[int], Cell],
    met: Callable[[Sample], bool],
    rule: dict[str, Any],
    steps: int = STEPS,
    seconds: float = 0.0,
    resolution: Resolution = Resolution(),
) -> tuple[Deferred, ...]:
    """The bisection steps after phase `ramp`: `cell(demand)` measures one demand, `met` says
    whether a step met the test's rule, `rule` is that rule's record (decide.rule_record). A step
    the measurement could not tell apart (stop_reason) is not run: its decision says why, and so
    do the steps after it (nothing new was measured to split)."""
    names = step_names(ramp, steps)

    def step(k: int) -> Deferred:
        def build(samples: Mapping[str, Sequence[Sample]]) -> tuple[Phase | None, Decision]:
            seen = [s for name in (ramp, *names[:k]) for s in samples.get(name, ())]
            lo, hi = bracket(seen, met)
            mid = midpoint(lo, hi)
            at = next((s for s in seen if s.demand_iops == lo and met(s)), None)
            why = stop_reason(lo, hi, mid, resolution, realised(at) if at is not None else 0.0)
            if why is not None or mid is None:
                return None, Decision(names[k], rule, f"bisection stopped, not run: {why}", {}, label=BISECTION_LABEL)
            outcome = (
                f"geometric mean of {num(lo)} (met) and {num(hi)} (not met): {num(mid)} IOPS"
                if lo is not None
                else f"half of {num(hi)} (not met; no step met): {num(mid)} IOPS"
            )
            phase = Phase(names[k], (cell(mid),), (), purge=False, max_rounds=1, stop_on_steady=False)
            return phase, Decision(names[k], rule, outcome, {"demand_iops": mid}, label=BISECTION_LABEL)

        return Deferred(
            names[k],
            f"the geometric mean of the highest demand met and the lowest not met, after {ramp!r}",
            build,
            seconds,
        )

    return tuple(step(k) for k in range(steps))


def best(samples: Sequence[Sample], met: Callable[[Sample], bool]) -> Sample | None:
    """The step of the highest demand met below the lowest demand not met above it: the ramp's
    and its bisection's steps together."""
    lo, _ = bracket(samples, met)
    return next((s for s in samples if s.demand_iops == lo and met(s)), None) if lo is not None else None
