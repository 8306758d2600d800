"""The latency-bound stop rule on hand-made results: it fires on the first step over the
bound, answers with the highest demand whose percentile met it, and reads stored cells."""

from __future__ import annotations

import pytest

from iolab.api import registry
from iolab.core.decide import LatencyBound, Sample, rule_from, rule_record
from iolab.core.errors import IolabError
from iolab.suites import make_profile

from .test_runner import TARGET


def steps(*rows) -> list[Sample]:
    """(demand, delivered, p99 µs, p99.99 µs) per step."""
    return [
        Sample(1, f"{d} demanded", iops, d, 128, None, ((99.0, p99), (99.9, None), (99.99, p4), (99.999, None)))
        for d, iops, p99, p4 in rows
    ]


def test_fires_on_the_first_step_over_the_bound_and_chooses_the_highest_demand_within_it():
    rule = LatencyBound(99.0, 1000.0)
    ok = steps((1000, 1000, 200, 900), (2000, 2000, 1000, 1500))
    assert rule.check("ramp", ok) is None  # exactly at the bound meets it
    d = rule.check("ramp", ok + steps((4000, 3900, 1001, 3000)))
    assert (
        d is not None
        and d.cell == "4000 demanded"
        and d.rule == {"name": "latency-bound", "percentile": 99.0, "bound_us": 1000.0}
    )
    assert d.chosen == {"demand_iops": 2000, "delivered_iops": 2000, "latency_us": 1000, "step": "2000 demanded"}
    assert "broke the bound" in d.outcome and "2,000 IOPS" in d.outcome


def test_the_chosen_percentile_is_the_one_judged_and_an_unmeasured_step_breaks_the_bound():
    rule = LatencyBound(99.99, 1000.0)
    d = rule.check("ramp", steps((1000, 1000, 200, 900), (2000, 2000, 300, 1500)))
    assert d is not None and d.chosen["demand_iops"] == 1000
    assert LatencyBound(99.0, 1000.0).check("ramp", steps((1000, 0, None, None))).chosen == {}


def test_a_ramp_that_never_breaks_the_bound_still_answers_and_says_so():
    d = LatencyBound(99.0, 1000.0).decide("ramp", steps((1000, 1000, 200, 900), (2000, 2000, 300, 1500)))
    assert d.chosen["demand_iops"] == 2000 and "did not break" in d.outcome


def test_the_rule_round_trips_and_refuses_unstored_percentiles():
    rule = LatencyBound(99.9, 700.0)
    assert rule_from(rule_record(rule)) == rule
    with pytest.raises(IolabError, match="99.5"):
        LatencyBound(99.5, 700.0)
    with pytest.raises(IolabError, match="bound_us"):
        LatencyBound(99.0, 0.0)


def test_the_plan_ramps_the_given_steps_then_defers_the_sustain_phase():
    p = make_profile(quick=True, settings=(("steps", "100:100:300"), ("bound", "700us"), ("percentile", "99.99")))
    plan = registry.build_plan("latency-bound", p, TARGET)
    ramp, *halves, sustain = plan.phases
    assert [h.name for h in halves] == [f"demand ramp: bisection {k}" for k in (1, 2, 3)]
    assert [c.workload.rate_iops for c in ramp.cells] == [100, 200, 300]
    assert ramp.stop_rule == LatencyBound(99.99, 700.0)
    assert sustain.name == "sustain" and not hasattr(sustain, "cells")
    chosen, decision = sustain.build(
        {"demand ramp": steps((100, 100, 50, 60), (200, 199, 900, 600), (300, 250, 200, 9000))}
    )
    assert [c.workload.rate_iops for c in chosen.cells] == [200] and chosen.cells[0].workload.duration_s == 5.0
    assert decision.chosen["demand_iops"] == 200
    with pytest.raises(IolabError, match="no demand step met"):
        sustain.build({"demand ramp": steps((100, 100, 5000, 6000))})
    with pytest.raises(IolabError, match="no demand step met"):
        sustain.build({"demand ramp": []})
    with pytest.raises(IolabError, match="bound"):
        registry.build_plan("latency-bound", make_profile(quick=True, settings=(("bound", "fast"),)), TARGET)


def test_quick_ramps_a_doubling_ladder_from_the_lowest_demand_that_measures_the_percentile():
    def ramp(**kw) -> list[int]:
        return [
            c.workload.rate_iops
            for c in registry.build_plan("latency-bound", make_profile(**kw), TARGET).phases[0].cells
        ]

    demands = ramp(quick=True)  # 1 s cells: 1,000 IOs, the fewest a 99 % latency is measured from
    assert demands[0] == 1_000 and demands[-1] == 1_000_000 and len(demands) == 11
    assert all(1.9 <= b / a <= 2.1 for a, b in zip(demands, demands[1:]))  # two digits kept: 64,000 → 130,000
    assert ramp(quick=True, cell_seconds=10.0)[:3] == [100, 200, 400]  # longer cells measure p99 at less demand
    assert ramp(quick=True, settings=(("percentile", "99.9"),))[0] == 10_000  # 10,000 IOs in 1 s
    assert ramp(quick=True, settings=(("steps", "100,200"),)) == [100, 200]  # a given list is kept
    assert len(ramp()) == 100  # without --quick: 10,000 … 1,000,000 by 10,000, as before


def test_bisection_splits_the_gap_on_a_log_scale_between_the_highest_demand_met_and_the_lowest_broken():
    """A doubling ramp met 64,000 and broke at 130,000 IOPS (the simulated drive's limit lies
    between): each step tries the geometric mean of the bracket left by the ramp and the steps
    before it, so each takes the square root of the bracket's ratio."""
    p = make_profile(quick=True, settings=(("steps", "32000,64000,130000"),))
    _, first, second, third, sustain = registry.build_plan("latency-bound", p, TARGET).phases
    ramp = steps((32000, 32000, 300, 400), (64000, 64000, 470, 800), (130000, 72932, 2122, 3000))
    one, d1 = first.build({"demand ramp": ramp})
    assert [c.workload.rate_iops for c in one.cells] == [91200] and d1.chosen == {"demand_iops": 91200}
    assert "geometric mean of 64,000 (met) and 130,000 (not met): 91,200 IOPS" in d1.outcome
    broke = steps((91200, 73000, 2000, 3000))
    two, _ = second.build({"demand ramp": ramp, first.name: broke})
    assert [c.workload.rate_iops for c in two.cells] == [76400]  # √(64,000 × 91,200)
    met = steps((76400, 76300, 900, 990))
    three, _ = third.build({"demand ramp": ramp, first.name: broke, second.name: met})
    assert [c.workload.rate_iops for c in three.cells] == [83500]  # between 76,400 (met) and 91,200
    chosen, decision = sustain.build(
        {"demand ramp": ramp, first.name: broke, second.name: met, third.name: steps((83500, 74000, 1500, 2000))}
    )
    assert [c.workload.rate_iops for c in chosen.cells] == [76400] and decision.chosen["demand_iops"] == 76400
    assert "at a demand of 83,500 IOPS" in decision.outcome  # the lowest demand above it that broke the bound
    # the first step already broke the bound: halved (the log scale has no 0), so a lower demand may still meet it
    low, d = first.build({"demand ramp": steps((20000, 19998, 1500, 2000))})
    assert [c.workload.rate_iops for c in low.cells] == [10000] and "half of 20,000 (not met; no step met)" in d.outcome
    # every step met: nothing to split, so no step is run (it measured the highest again) and the decision says why
    again, d = first.build({"demand ramp": steps((20000, 19998, 300, 400))})
    assert again is None and d.chosen == {} and "bisection stopped, not run: no gap to split" in d.outcome


def test_bisection_stops_where_a_further_step_could_not_be_told_apart():
    """A step whose cell cannot hold the IOs its percentile needs, or whose demand lies closer to
    both ends than the run realised the demand met (its delivered IOPS against it), is not run;
    the decision says which."""
    p = make_profile(quick=True, settings=(("steps", "1500,3000"),))
    first = registry.build_plan("latency-bound", p, TARGET).phases[1]
    # the first step broke: half of it is 750 IOPS, 750 IOs in a 1 s cell, under the 1,000 a 99 % needs
    low, d = first.build({"demand ramp": steps((1500, 1500, 1500, 2000))})
    assert low is None and "a step of 750 IOPS completes fewer than the 1,000 IOs a 99 % is measured from" in d.outcome
    # 500,000 met, delivered 1 % short: 502,000 lies 0.4 % from it and from 504,000 (broke)
    near, d = first.build({"demand ramp": steps((500000, 495000, 900, 950), (504000, 500000, 1100, 1200))})
    assert near is None and "would lie within 1 % of 500,000 (met) and 504,000 (not met)" in d.outcome, d.outcome
    # the same bracket where the step met was delivered to 0.1 %: split (a simulated drive's bound is that sharp)
    split, d = first.build({"demand ramp": steps((500000, 499500, 900, 950), (504000, 500000, 1100, 1200))})
    assert split is not None and [c.workload.rate_iops for c in split.cells] == [502000]
