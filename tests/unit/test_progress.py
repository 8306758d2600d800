"""The live progress display's ETA for a sequence of tests (`iolab run characterise`)."""

from __future__ import annotations

import io

from rich.console import Console

from iolab import registry, suites, targets
from iolab.progress import RichProgress
from iolab.results import OpStats, RoundResult

NONE = OpStats(0, 0, 0.0, 0.0, None, None, None, None)

TARGET = targets.parse_target("sim:enterprise-sas?user_gb=0.125")


def qos_plan():
    profile = suites.make_profile("enterprise", quick=True, settings=(("rounds", "4"), ("measured", "2s"),
                                                                      ("warmup", "1s"), ("precondition_time", "5s")))
    return registry.build_plan("qos", profile, TARGET)


def test_timed_seconds_counts_every_timed_step_to_its_round_limit():
    # 5 s preconditioning, then write and read phases of 4 rounds of (1 s warm-up + 2 s)
    assert qos_plan().timed_seconds()[1] == 5 + 2 * 4 * 3


def test_sequence_eta_scales_the_planned_rest_by_the_pace_so_far():
    plan = qos_plan()
    p = RichProgress(Console(file=io.StringIO()))
    after = qos_plan(), qos_plan()  # 29 s each at most
    p.in_sequence([qos_plan(), plan, *after], 1)
    p.plan, p.phase_ = plan, plan.phases[0]
    assert "test 2/4, estimating" in p._eta()
    p.step("precondition", 0, 0, 1, plan.phases[0].precondition[0])
    p.done(RoundResult(NONE, NONE, 5.0), wall_s=2.5)  # twice as fast as planned
    # the rest: 24 s of this test and 2 × 29 s of the tests after it, at 0.5 s per planned second
    assert p._eta().endswith("sequence: test 2/4, at most ≈ 0:41 to the end")
