"""The limit between two demand steps: after a ramp of rising demand (latency vs demand,
latency-bound) ends, bisection between the highest demand that met the test's rule and the
lowest above it that did not. Each step splits that bracket on a log scale (at the geometric
mean of its ends), so every step takes the square root of the bracket's ratio whatever its
width: three steps narrow a doubling ramp's 64,000 → 130,000 to a factor of 2^(1/8) (9 %),
and a sparse list's 2,000 → 4,000,000 to 2,000^(1/8) (2.6×), where halving the difference
three times tried 2,000,000, 1,000,000 and 501,000 and left 2,000 → 501,000.

Each step is one deferred phase of one cell, built from the results of the ramp and the steps
before it, so a resumed run builds the same steps again."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
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


def refinements(
    ramp: str,
    cell: Callable[[int], Cell],
    met: Callable[[Sample], bool],
    rule: dict[str, Any],
    steps: int = STEPS,
    seconds: float = 0.0,
) -> tuple[Deferred, ...]:
    """The bisection steps after phase `ramp`: `cell(demand)` measures one demand, `met` says
    whether a step met the test's rule, `rule` is that rule's record (decide.rule_record)."""
    names = step_names(ramp, steps)

    def step(k: int) -> Deferred:
        def build(samples: Mapping[str, Sequence[Sample]]) -> tuple[Phase, Decision]:
            seen = [s for name in (ramp, *names[:k]) for s in samples.get(name, ())]
            lo, hi = bracket(seen, met)
            mid = midpoint(lo, hi)
            if mid is None:  # nothing to split: the highest demand met (or the lowest tried) again
                again = lo if lo is not None else min((s.demand_iops for s in seen if s.demand_iops), default=1)
                demand = int(again)
                outcome = (
                    f"no gap to split (highest demand met: {num(lo) if lo is not None else 'none'}, lowest above "
                    f"it not met: {num(hi) if hi is not None else 'none'}); {num(demand)} IOPS measured again"
                )
            else:
                demand = mid
                outcome = (
                    f"geometric mean of {num(lo)} (met) and {num(hi)} (not met): {num(mid)} IOPS"
                    if lo is not None
                    else f"half of {num(hi)} (not met; no step met): {num(mid)} IOPS"
                )
            phase = Phase(names[k], (cell(demand),), (), purge=False, max_rounds=1, stop_on_steady=False)
            return phase, Decision(names[k], rule, outcome, {"demand_iops": demand}, label=BISECTION_LABEL)

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
