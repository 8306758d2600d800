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


def test_the_round_line_says_what_ends_each_kind_of_phase():
    from iolab.progress import round_text
    from iolab.phaseend import rule_text

    plan = registry.build_plan("entropy", suites.make_profile("enterprise", quick=True), TARGET)
    pre, write, _ = plan.phases
    assert round_text(pre, 3, 5) == "3 (steady state checked from round 5; at most 10)"
    # a one-round phase tracks nothing: main said "checked from round 5; at most 1"
    assert round_text(write, 1, 5) == "1 of 1"
    wsat = registry.build_plan("wsat", suites.make_profile("enterprise", quick=True), TARGET)
    assert round_text(wsat.phases[0], 4, 5).endswith("(steady state reported, not a stop)")
    assert "at most 10 rounds" in rule_text(plan) and "at most" not in rule_text(wsat).split("reported")[0]


def test_the_live_cell_counts_from_one_as_the_watch_page_does(tmp_path):
    from iolab.runner import Runner
    from iolab.runstart import RunOptions, start
    from tests.unit.test_runner import ScriptedEngine

    seen = []

    class Watching(ScriptedEngine):
        def run(self, target, workload, raw_dir, tag, progress=None):
            seen.append((tag, progress.cell))
            return super().run(target, workload, raw_dir, tag, progress)

    profile = suites.make_profile("enterprise", quick=True, cell_seconds=1.0, settings=(("qds", "1,4"), ("entropies", "0")))
    plan = registry.build_plan("entropy", profile, TARGET)
    engine = Watching(lambda rnd, call: 1000)
    store = start(plan, TARGET, engine, RunOptions(), tmp_path)
    Runner(plan, TARGET, engine, store, RunOptions()).run()
    tag, label = next((t, c) for t, c in seen if t.startswith("write-"))
    # the raw files' tag counts from 0; what `iolab watch` shows beside "N of M cells done" from 1
    assert tag.startswith("write-r01-c00-") and label == "0% entropy QD1 (round 1, cell 1 of 2)"
    assert seen[0][1].endswith("(preconditioning 1 of 1)")
