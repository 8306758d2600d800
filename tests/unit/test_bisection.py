"""The bisection after a demand ramp splits its bracket on a log scale, so a sparse demand list
is resolved as finely, in ratio, as a dense one."""

from __future__ import annotations

import math

import pytest

from iolab.core.decide import DemandShortfall, Sample
from iolab.suites import bisection


def sample(demand: float, limit: float) -> Sample:
    """One step of a drive that delivers min(demand, limit) IOPS."""
    return Sample(1, f"{demand:g} demanded", min(demand, limit), demand, 32)


def resolved(demands: list[int], limit: float) -> tuple[float, float]:
    """The bracket (highest met, lowest not met) after the ramp and the bisection's steps."""
    rule = DemandShortfall(tolerance=0.02, steps=1)
    steps = bisection.refinements("ramp", lambda d: d, rule.met, {"name": "demand-shortfall"})  # cells unused here
    seen: dict[str, list[Sample]] = {"ramp": [sample(d, limit) for d in demands]}
    for step in steps:
        phase, decision = step.build(seen)
        seen[step.name] = [sample(decision.chosen["demand_iops"], limit)]
    lo, hi = bisection.bracket([s for ss in seen.values() for s in ss], rule.met)
    assert lo is not None and hi is not None
    return lo, hi


@pytest.mark.parametrize("limit", [3_000.0, 50_000.0, 1_500_000.0])
def test_a_sparse_list_is_resolved_to_the_same_ratio_as_three_square_roots_of_its_gap(limit):
    """2,000 met and 4,000,000 short: halving the difference tried 2,000,000, 1,000,000 and
    501,000 (the top eighth of the bracket) and left 2,000 → 501,000 whatever the limit; the
    geometric split leaves a bracket of 2,000^(1/8) ≈ 2.6× around it (three digits kept)."""
    lo, hi = resolved([2_000, 4_000_000], limit)
    assert 0.98 * lo <= limit < 0.98 * hi  # met within the 2 % tolerance below, short above
    assert hi / lo <= 2_000 ** (1 / 8) * 1.01, (lo, hi)


def test_a_dense_list_is_resolved_within_the_eighth_root_of_its_step():
    lo, hi = resolved([32_000, 64_000, 130_000], 75_000.0)
    assert (
        lo >= 64_000
        and 0.98 * lo <= 75_000 < 0.98 * hi
        and hi <= 130_000
        and hi / lo <= (130_000 / 64_000) ** (1 / 8) * 1.01
    )


def test_midpoint_is_the_geometric_mean_to_three_digits():
    assert bisection.midpoint(2_000, 4_000_000) == 89_400 == round(math.sqrt(8e9), -2)
    assert bisection.midpoint(None, 20_000) == 10_000  # no step met: half the lowest tried
    assert bisection.midpoint(64_000, 64_100) is None  # no three-digit demand between them
    assert bisection.midpoint(2_000, None) is None  # every step met
