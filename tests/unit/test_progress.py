"""The live progress display's ETA for a sequence of tests (`iolab run characterise`)."""

from __future__ import annotations

import io
import re
import time
from dataclasses import replace

from rich.console import Console

from iolab import suites, targets
from iolab.api import registry
from iolab.cli import progress
from iolab.cli.progress import RichProgress
from iolab.core.plan import step_seconds
from iolab.core.results import OpStats, RoundResult

NONE = OpStats(0, 0, 0.0, 0.0, None, None, None, None)

TARGET = targets.parse_target("sim:enterprise-sas?user_gb=0.125")


def qos_plan():
    profile = suites.make_profile(
        "enterprise",
        quick=True,
        settings=(("rounds", "4"), ("measured", "2s"), ("warmup", "1s"), ("precondition_time", "5s")),
    )
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
    assert "no step measured yet" in p._eta()
    w = plan.phases[0].precondition[0]
    p.step("precondition", 0, 0, 1, w.label(), step_seconds(w))
    p.done(RoundResult(NONE, NONE, 5.0), wall_s=2.5)  # twice as fast as planned
    # the rest: 24 s of this test and 2 × 29 s of the tests after it, at 0.5 s per planned second,
    # at the earliest too (the tests after it run their fixed rounds; the earliest end left them out)
    assert "test 2/4; to the end of the sequence: 0:41 (done by " in p._eta()
    assert "planned time × 0.50" in p._eta()


def test_the_eta_is_wall_time_from_the_measured_pace_virtual_on_a_simulated_drive():
    from iolab.cli.progress import Pace, eta_text

    sim = Pace()
    sim.add(planned_s=10, wall_s=0.5, virtual_s=10)
    sim.add(planned_s=0, wall_s=1.5, virtual_s=30)  # a fill: no planned time, but virtual time it took
    # 2 s of wall clock for 40 virtual seconds: 100 to 400 virtual seconds left take 5 to 20 s
    end = time.strftime("%H:%M:%S", time.localtime(1000 + 20))
    assert eta_text(100, 400, sim, now=1000) == (
        f"0:05–0:20 (done by {end} at the latest; wall clock: "
        "simulated time × 0.05, the wall/virtual ratio measured so far)"
    )
    real = Pace()
    real.add(planned_s=60, wall_s=66, virtual_s=0)
    real.add(planned_s=0, wall_s=500, virtual_s=0)  # a fill at the drive's speed says nothing of the pace
    end = time.strftime("%H:%M:%S", time.localtime(1000 + 3960))
    assert eta_text(3600, 3600, real, now=1000) == (
        f"1:06:00 (done by {end} at the latest; wall clock: "
        "planned time × 1.10, the wall/planned ratio measured so far)"
    )
    assert eta_text(10, 20, Pace()).startswith("estimating")


def test_a_round_line_shows_the_tracking_values_against_the_steady_state_limits():
    from iolab.cli.progress import round_summary
    from iolab.core.steady import evaluate

    plan = registry.build_plan("entropy", suites.make_profile("enterprise", quick=True), TARGET)
    pre = plan.phases[0]
    name = pre.tracking[0].name
    history = {name: [(1, 1000.0), (2, 900.0)]}
    assert round_summary(pre, 2, history, None, 5) == (
        f"{pre.name}: round 2 done: {name} 900.0 (steady state needs a window of 5 rounds)"
    )
    history[name] += [(3, 1000.0), (4, 1100.0), (5, 1000.0)]
    text = round_summary(pre, 5, history, evaluate(history, plan.rule), 5)
    # average 1000: range 200 = 20 %, slope 20/round over 4 rounds = 8 %
    assert text.endswith(f"window rounds 1–5: {name} range 20.0% (allowed 20%), slope 8.0% (allowed 10%) → steady")


def test_plain_lines_are_timestamped_folded_to_about_one_a_second_and_keep_the_newest():
    out = io.StringIO()
    t0 = time.monotonic()
    with RichProgress(Console(file=out, width=200)) as p:
        for i in range(40):
            p.note(f"note {i}")
        elapsed = time.monotonic() - t0
    lines = out.getvalue().splitlines()
    assert all(re.match(r"\d\d:\d\d:\d\d ", ln) for ln in lines)
    # a burst of 5, then one a second at most (the flush at the end included)
    assert len(lines) <= 5 + 1 + elapsed / progress.LINE_EVERY_S
    assert "note 0" in lines[0] and lines[-1].endswith("note 39") and "folded" in lines[-1]


def test_result_lines_are_never_folded_and_come_after_the_lines_held_before_them():
    out = io.StringIO()
    with RichProgress(Console(file=out, width=200)) as p:
        for i in range(40):  # the burst spent: notes are held now
            p.note(f"note {i}")
        p.result("report: a.html")
        p.result("report: b.pdf")
    lines = out.getvalue().splitlines()
    assert [ln[9:] for ln in lines[-2:]] == ["report: a.html", "report: b.pdf"]
    assert lines[-3].endswith("note 39") and "folded" in lines[-3]


def test_a_long_step_without_a_line_gets_a_heartbeat_saying_what_runs(monkeypatch):
    monkeypatch.setattr(progress, "HEARTBEAT_S", 0.2)
    plan = qos_plan()
    out = io.StringIO()
    with RichProgress(Console(file=out, width=200)) as p:
        p.test_starts(plan)
        p.phase(plan.phases[0], 0)
        w = plan.phases[0].precondition[0]
        p.step("precondition", 0, 0, 1, w.label(), step_seconds(w))
        deadline = time.monotonic() + 60
        while "still running" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
    beat = next(ln for ln in out.getvalue().splitlines() if "still running" in ln)
    assert f"still running: {plan.phases[0].name}: preconditioning 1/1 (" in beat and "ETA" in beat


def test_the_round_line_says_what_ends_each_kind_of_phase():
    from iolab.cli.progress import round_text
    from iolab.figures.phaseend import rule_text

    plan = registry.build_plan("entropy", suites.make_profile("enterprise", quick=True), TARGET)
    pre, write, _ = plan.phases
    assert round_text(pre, 3, 5) == "3 (steady state checked from round 5; at most 10)"
    # a one-round phase tracks nothing: main said "checked from round 5; at most 1"
    assert round_text(write, 1, 5) == "1 of 1"
    wsat = registry.build_plan("wsat", suites.make_profile("enterprise", quick=True), TARGET)
    assert round_text(wsat.phases[0], 4, 5).endswith("(steady state reported, not a stop)")
    assert "at most 10 rounds" in rule_text(plan) and "at most" not in rule_text(wsat).split("reported")[0]


def test_the_live_cell_counts_from_one_as_the_watch_page_does(tmp_path):
    from iolab.run.runner import Runner
    from iolab.run.runstart import RunOptions, start
    from tests.unit.test_runner import ScriptedEngine

    seen = []

    class Watching(ScriptedEngine):
        def run(self, target, workload, raw_dir, tag, progress=None):
            seen.append((tag, progress.cell))
            return super().run(target, workload, raw_dir, tag, progress)

    profile = suites.make_profile(
        "enterprise", quick=True, cell_seconds=1.0, settings=(("qds", "1,4"), ("entropies", "0"))
    )
    plan = registry.build_plan("entropy", profile, TARGET)
    engine = Watching(lambda rnd, call: 1000)
    store = start(plan, TARGET, engine, RunOptions(), tmp_path)
    Runner(plan, TARGET, engine, store, RunOptions()).run()
    tag, label = next((t, c) for t, c in seen if t.startswith("write-"))
    # the raw files' tag counts from 0; what `iolab watch` shows beside "N of M cells done" from 1
    assert tag.startswith("write-r01-c00-") and label == "0% entropy QD1 (round 1, cell 1 of 2)"
    assert seen[0][1].endswith("(preconditioning 1 of 1)")


def test_a_sequence_s_remaining_time_is_given_in_wall_time_once_its_pace_is_measured():
    from iolab.cli.progress import Pace, sequence_eta

    pace = Pace()
    unpaced = sequence_eta([qos_plan(), qos_plan()], pace)
    # before a step is measured the times are the drive's own: on a simulated drive, virtual
    assert "in wall time" not in unpaced and "the wall-clock ETA follows its first step" in unpaced
    pace.add(planned_s=10, wall_s=0.5, virtual_s=10)
    # two tests of 29 s each, at 0.05 s of wall clock per virtual second: 2.9 s
    text = sequence_eta([qos_plan(), qos_plan()], pace)
    assert "2 tests, ETA 0:58 (" in text
    assert "; in wall time at this run's pace so far: 0:02 (done by " in text
    assert "simulated time × 0.05," in text and "follows its first step" not in text


def test_the_heartbeat_at_the_end_says_a_report_is_written_only_when_one_is():
    plan = qos_plan()
    for report, says in ((True, "writing its report"), (False, "summarising its results")):
        p = RichProgress(Console(file=io.StringIO()), report=report)
        p.plan = plan
        p.phase_done(plan.phases[-1], None, 4, "round limit")
        assert p.doing == f"the run is measured; {says}"


def test_an_eta_whose_ends_print_alike_says_one_figure():
    # before: "2 tests, ETA 0:58 to 0:58" and "phase earliest 0:06, latest 0:06": seconds apart
    # that read the same on the clock are no range to a reader
    from iolab.cli.budgeteta import rate_span
    from iolab.cli.progress import _span, sequence_eta

    assert _span(6.2, 6.9, " to ") == "0:06" and _span(6.2, 7.1, " to ") == "0:06 to 0:07"
    text = sequence_eta([qos_plan(), qos_plan()])  # each runs its fixed rounds: 0:29 at the earliest and latest
    assert text.startswith("2 tests, ETA 0:58 (QoS") and " to " not in text.split("(")[0], text
    assert rate_span([100.00001e6, 100.00002e6]) == "100.0" and rate_span([100e6, 101e6]) == "100.0–101.0"


def test_the_panel_gives_a_phase_that_runs_its_round_limit_its_end_not_its_window():
    # before: a phase without a stop at steady state showed "phase earliest" at the steady-state
    # window, though it runs every round of its limit
    plan = qos_plan()
    phase = plan.phases[-1]
    p = RichProgress(Console(file=io.StringIO()))
    p.plan, p.what, p.cell_wall, p.count, p.index, p.round = plan, "round", 2.0, 1, 0, 1
    p.phase_ = replace(phase, stop_on_steady=False, max_rounds=plan.rule.window + 3)
    assert p._round_eta() == f"round 0:02 · phase {progress._clock(2.0 * (plan.rule.window + 3))}"
    p.phase_ = replace(phase, stop_on_steady=True, max_rounds=plan.rule.window)
    assert p._round_eta() == f"round 0:02 · phase {progress._clock(2.0 * plan.rule.window)}"


def test_the_plan_view_gives_a_span_whose_ends_print_alike_as_one_duration():
    from iolab.cli.planview import _span

    # 100.02 s and 100.04 s both print "100 s": it read "100 s to 100 s"
    assert _span(100.02, 100.04) == "100 s" and _span(100.0, 110.0) == "100 s to 110 s"
