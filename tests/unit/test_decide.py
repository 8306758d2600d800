"""Plans that wait and decide: the stop rules on hand-made results, and the runner's stop
rules, idle steps and deferred phases with a scripted engine (resume included)."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from iolab.api import registry
from iolab.core.decide import (
    Decision,
    DemandShortfall,
    LatencyBound,
    NoGain,
    Sample,
    best_by_iops,
    decision_text,
    knee,
    last_gain,
    rule_from,
    rule_record,
    stored_decision,
)
from iolab.core.errors import IolabError
from iolab.core.plan import Cell, Deferred, Phase, Tracking
from iolab.core.plan import TestPlan as Plan
from iolab.core.units import KiB
from iolab.core.workload import Workload
from iolab.engines.sim import SimEngine
from iolab.run import resume
from iolab.run.runner import Runner, cell_tag
from iolab.run.runstart import RunOptions, start
from iolab.store.runstore import RunStore
from iolab.suites.testdef import TestDef

from .test_runner import TARGET, ScriptedEngine, profile


def demand(*pairs) -> list[Sample]:
    return [Sample(1, f"{d} demanded", iops, d, 32) for d, iops in pairs]


def ramp(*iops) -> list[Sample]:
    return [Sample(1, f"QD {2**i}", v, None, 2**i) for i, v in enumerate(iops)]


# -- the rules on hand-made results ---------------------------------------------------------


def test_demand_shortfall_fires_after_its_steps_of_unmet_demand_and_names_the_highest_met():
    rule = DemandShortfall(tolerance=0.02, steps=2)
    assert rule.check("p", demand((1000, 1000), (2000, 1990), (4000, 3000))) is None  # one short step
    d = rule.check("p", demand((1000, 1000), (2000, 1990), (4000, 3000), (8000, 3100)))
    assert d is not None and d.cell == "8000 demanded" and d.round == 1
    assert d.chosen == {"demand_iops": 2000, "delivered_iops": 1990}
    assert d.outcome.startswith(
        "delivered 3,100 IOPS at a demand of 8,000 (-61.3 %) for 2 steps: highest ramp step met 1,990 (delivered at "
        "a demand of 2,000, within 2 %)"
    )


def test_demand_shortfall_needs_the_short_steps_in_a_row_and_honours_its_tolerance():
    rule = DemandShortfall(tolerance=0.02, steps=2)
    assert rule.check("p", demand((1000, 900), (2000, 1990), (4000, 3000))) is None  # a met step between
    assert rule.check("p", demand((1000, 985), (2000, 1965))) is None  # 1.5 % and 1.75 % short: within 2 %
    d = rule.check("p", demand((1000, 900), (2000, 1000)))
    assert d is not None and d.chosen == {} and "no demand was met" in d.outcome
    assert DemandShortfall(steps=1).check("p", demand((1000, 900))) is not None


def test_no_gain_fires_when_more_load_stops_paying_and_chooses_the_last_step_that_paid():
    rule = NoGain(min_gain=0.05, steps=2)
    assert rule.check("p", ramp(100, 200, 400, 410)) is None  # one flat step
    assert rule.check("p", ramp(100, 200, 400, 410, 500)) is None  # +25 %: it still pays
    d = rule.check("p", ramp(100, 200, 400, 410, 405))
    assert d is not None and d.cell == "QD 16"
    # QD 8 has the most IOPS, but gained +2.5 % with a 5 % rule: QD 4 is the answer
    assert d.chosen == {"best": "QD 4", "outstanding": 4, "iops": 400}
    assert "chosen QD 4 (400.0 IOPS), the last step that gained at least 5 %" in d.outcome


def test_a_search_keeps_the_last_step_that_met_its_rule():
    # the read search of the issue: +1.7 % and then +0.9 % with a 2 % rule stay unchosen
    assert last_gain("p", ramp(100, 200, 300, 305.1, 307.8), 0.02).key == "QD 4"
    assert last_gain("p", ramp(100, 90, 150), 0.02).key == "QD 4"  # +50 % over the best before
    assert last_gain("p", ramp(100, 101), 0.02).key == "QD 1"
    with pytest.raises(IolabError, match="no measured cells"):
        last_gain("p", [], 0.02)
    assert NoGain().check("p", ramp(100)) is None  # nothing to compare with


def test_the_knee_is_the_step_farthest_above_the_chord_of_iops_vs_log_outstanding_io():
    # QD 1 … 32: the chord runs from 100 to 600 IOPS, +100 per doubling; QD 8 (520) is 120 above
    # it, QD 4 (400) 100
    assert knee("p", ramp(100, 250, 400, 520, 560, 600)).key == "QD 8"
    # a saturated tail that still creeps up: the bend, not the most IOPS (QD 32) nor the last gain
    assert knee("p", ramp(1000, 2000, 3900, 4000, 4050, 4100)).key == "QD 4"
    assert last_gain("p", ramp(1000, 2000, 3900, 4000, 4050, 4100), 0.02).key == "QD 8"
    # a straight or still-steepening curve has no knee: the step with the most IOPS
    assert knee("p", ramp(100, 200, 300, 400)).key == "QD 8"
    assert knee("p", ramp(100, 110, 150, 400)).key == "QD 8"
    assert knee("p", ramp(100)).key == "QD 1"
    with pytest.raises(IolabError, match="no measured cells"):
        knee("p", [])


def test_rules_are_found_again_by_their_stored_name_and_parameters():
    for rule in (DemandShortfall(tolerance=0.05, steps=3), NoGain(min_gain=0.1, steps=2)):
        assert rule_from(rule_record(rule)) == rule
    with pytest.raises(IolabError, match="unknown; iolab knows demand-shortfall, no-gain"):
        rule_from({"name": "coin-toss"})
    with pytest.raises(IolabError, match="tolerance: 1.5 is not allowed"):
        DemandShortfall(tolerance=1.5)
    with pytest.raises(IolabError, match="steps: 0 is not allowed"):
        NoGain(steps=0)


# -- the runner: a queue-depth search, then rounds at the best queue depth ------------------

QDS = (1, 2, 4, 8, 16, 32)
IOPS_BY_CALL = {1: 100, 2: 200, 3: 400, 4: 410, 5: 405}  # QD 1 … 16; QD 32 never runs


def read(qd: int) -> Workload:
    return Workload.mix("rnd", 100, 4 * KiB, threads=1, queue_depth=qd, duration_s=1.0)


def at_best_qd(samples) -> tuple[Phase, Decision]:
    best = best_by_iops("qd search", samples["qd search"])
    qd = best.outstanding
    phase = Phase(
        "at best QD",
        (Cell(f"QD {qd}", read(qd), "100/0", 4 * KiB),),
        (),
        purge=False,
        max_rounds=3,
        stop_on_steady=False,
    )
    return phase, Decision(
        "at best QD",
        {"name": "most-iops"},
        f"{best.key} delivered the most IOPS ({best.iops:,.0f}) of {len(samples['qd search'])} queue depths",
        {"queue_depth": qd},
    )


def build_search(prof, target, workload=None) -> Plan:
    cells = tuple(Cell(f"QD {qd}", read(qd), "100/0", 4 * KiB) for qd in QDS)
    search = Phase("qd search", cells, (), max_rounds=1, stop_on_steady=False, stop_rule=NoGain(min_gain=0.05, steps=2))
    return Plan(
        "qd-search",
        "QD search",
        "test",
        prof,
        (search, Deferred("at best QD", "the QD search's most IOPS", at_best_qd)),
        prof.rule(),
        1 << 30,
    )


@pytest.fixture
def search():
    test = registry.register(TestDef("qd-search", "QD search", "test", "search", build=build_search))
    yield test
    registry.unregister(test.name)


def iops(rnd, call):
    return IOPS_BY_CALL.get(call, 400)


def test_a_stop_rule_ends_its_phase_and_a_deferred_phase_is_built_from_its_results(tmp_path, search):
    plan = registry.build_plan("qd-search", profile(), TARGET)
    engine = ScriptedEngine(iops)
    s = start(plan, TARGET, engine, RunOptions(), tmp_path)
    Runner(plan, TARGET, engine, s, RunOptions()).run()
    done = RunStore.open(s.dir)
    m = done.manifest
    assert m.state == "complete"
    assert [c.cell_key for c in done.cells("qd search")] == ["QD 1", "QD 2", "QD 4", "QD 8", "QD 16"]
    [rule, built] = m.decisions
    assert (
        rule["rule"] == {"name": "no-gain", "min_gain": 0.05, "steps": 2} and rule["chosen"]["best"] == "QD 4"
    )  # +2.5 % at QD 8 is below the rule
    assert built["chosen"] == {"queue_depth": 8} and built["round"] is None
    assert done.phases()[0].stop_reason.startswith("no-gain: QD 16: 405.0 IOPS")
    # the stored plan holds the phase as built, still marked deferred; its cells ran at QD 8
    stored = m.plan["phases"][1]
    assert stored["deferred"] == "the QD search's most IOPS" and stored["cells"] == ["QD 8"]
    assert {c.workload["queue_depth"] for c in done.cells("at best QD")} == {8}
    assert len(done.cells("at best QD")) == 3


class KeepingEngine(ScriptedEngine):
    capabilities = replace(SimEngine.capabilities, keeps_state=True)  # as a file or a block device


@pytest.mark.parametrize("engine_class", [KeepingEngine, ScriptedEngine])
def test_resume_builds_a_deferred_phase_again_from_the_stored_results(tmp_path, search, monkeypatch, engine_class):
    plan = registry.build_plan("qd-search", profile(), TARGET)
    s = start(plan, TARGET, engine_class(iops), RunOptions(), tmp_path)
    with pytest.raises(KeyboardInterrupt):  # call 7: the second round of the built phase
        Runner(plan, TARGET, engine_class(iops, interrupt_at=7), s, RunOptions()).run()
    s.close()
    monkeypatch.setattr(resume.targets, "parse_target", lambda spec: TARGET)
    monkeypatch.setattr(resume, "engine_class", lambda target: engine_class)
    engine = engine_class(iops)
    r, _ = resume.prepare(s.dir, lambda t, **_: engine, registry.build_plan)
    if engine_class is KeepingEngine:  # it goes on in the built phase
        assert r.start.phase == 1 and isinstance(r.plan.phases[1], Phase)
        assert r.plan.phases[1].cells[0].workload.queue_depth == 8
    else:
        # The built phase goes on from the state the search left (no purge), and that state
        # ended with the process: the search runs again, and the phase is built from it.
        assert r.start.phase == 0 and isinstance(r.plan.phases[1], Deferred)
        assert any("superseded decision" in n for n in r.notes)
    resume.run(r, engine)
    done = RunStore.open(s.dir)
    assert done.manifest.state == "complete" and len(done.manifest.decisions) == 2  # not decided twice
    assert {c.workload["queue_depth"] for c in done.cells("at best QD")} == {8}


# -- idle steps ------------------------------------------------------------------------------


class IdlingEngine(ScriptedEngine):
    capabilities = SimEngine.capabilities

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.idled = []

    def idle(self, target, seconds):
        self.idled.append((self.calls, seconds))


def build_idle(prof, target, workload=None) -> Plan:
    w = Workload.mix("rnd", 0, 4 * KiB, duration_s=1.0)
    cells = (Cell("busy", w, "0/100", 4 * KiB), Cell("after idle", w, "0/100", 4 * KiB, idle_before_s=30.0))
    return Plan(
        "idle", "Idle", "test", prof, (Phase("p", cells, (), max_rounds=1, stop_on_steady=False),), prof.rule(), 1 << 30
    )


def test_an_idle_step_idles_before_its_cell_and_is_stored_with_it(tmp_path):
    plan = build_idle(profile(), TARGET)
    engine = IdlingEngine(lambda r, c: 100)
    s = start(plan, TARGET, engine, RunOptions(), tmp_path)
    Runner(plan, TARGET, engine, s, RunOptions()).run()
    assert engine.idled == [(1, 30.0)]  # after the first cell, before the second
    cells = RunStore.open(s.dir).cells()
    assert [c.idle_before_s for c in cells] == [None, 30.0]
    assert s.manifest.plan["phases"][0]["idle_before_s"] == {"after idle": 30.0}


def test_a_cell_recovered_from_raw_keeps_the_idle_before_it(tmp_path, monkeypatch):
    # Killed after fio measured the cell that followed an idle, before the store had it: resume
    # stores it from raw/ with its idle, as the runner would have (HIR's bursts after waits).
    class KeepingIdler(IdlingEngine):
        capabilities = KeepingEngine.capabilities

    plan = build_idle(profile(), TARGET)
    s = start(plan, TARGET, KeepingIdler(lambda r, c: 100), RunOptions(), tmp_path)
    with pytest.raises(KeyboardInterrupt):  # call 2: the cell after the idle, its output not stored
        Runner(plan, TARGET, KeepingIdler(lambda r, c: 100, interrupt_at=2), s, RunOptions()).run()
    s.close()
    for f in (Path(__file__).parent.parent / "fixtures" / "fio").glob("randrw*"):
        shutil.copy(f, s.dir / "raw" / f.name.replace("randrw", cell_tag("p", 1, 1, "after idle")))
    monkeypatch.setattr(resume.targets, "parse_target", lambda spec: TARGET)
    monkeypatch.setattr(resume, "engine_class", lambda target: KeepingIdler)
    r, _ = resume.prepare(s.dir, lambda t, **_: KeepingIdler(lambda r, c: 100), lambda *a, **k: plan)
    assert any("recovered 1 cell of round 1" in n for n in r.notes), r.notes
    assert [c.idle_before_s for c in RunStore.open(s.dir).cells()] == [None, 30.0]


def test_an_engine_that_cannot_idle_fails_the_run_saying_so(tmp_path):
    class NoIdle(ScriptedEngine):
        capabilities = SimEngine.capabilities.__class__(**{**SimEngine.capabilities.__dict__, "idle": False})

    plan = build_idle(profile(), TARGET)
    engine = NoIdle(lambda r, c: 100)
    s = start(plan, TARGET, engine, RunOptions(), tmp_path)
    with pytest.raises(IolabError, match=r"cannot idle a target \(capabilities.idle\)"):
        Runner(plan, TARGET, engine, s, RunOptions()).run()
    assert RunStore.open(s.dir).manifest.state == "failed"


def test_a_bisection_steps_decision_stored_in_an_older_form_reads_as_todays():
    """A bisection step's decision keeps its ramp rule's record with the label "bisection"
    beside it. Runs stored before renamed the record "bisection" (from 178c823 on with the rule's
    name as `judged_by`; before that the parameters alone name it): each reads as today's, and
    prints the same."""
    for rule in (DemandShortfall(tolerance=0.05, steps=3), LatencyBound(percentile=99.9, bound_us=500.0)):
        today = Decision(
            "ramp: bisection 1", rule_record(rule), "geometric mean …", {"demand_iops": 1}, label="bisection"
        )
        new = today.record()
        assert new["rule"] == rule_record(rule) and new["label"] == "bisection"
        renamed = {k: v for k, v in new.items() if k != "label"} | {"rule": {**new["rule"], "name": "bisection"}}
        judged = renamed | {"rule": {**renamed["rule"], "judged_by": rule.name}}
        for old in (renamed, judged):
            assert stored_decision(old) == new and decision_text(stored_decision(old)) == decision_text(new)
        assert stored_decision(new) is new
        assert f"bisection, judged by {rule.name}(" in decision_text(new)
    # every other decision is stored and read as it always was, without a label
    plain = Decision("ramp", rule_record(DemandShortfall()), "delivered …").record()
    assert "label" not in plain and stored_decision(plain) is plain


def test_a_deferred_phase_is_held_to_what_its_plan_said_of_steady_state(tmp_path):
    """The stored steady-state rule is written before a deferred phase is built (rule_text): a
    builder that tracks steady state where its plan said it would not is refused, not run under a
    rule text that says no phase tracks it; declared, the rule text gives it the round limit."""
    from iolab.figures.phaseend import rule_text
    from iolab.run.runner import build_deferred

    def tracking(samples) -> tuple[Phase, Decision]:
        cell = Cell("QD 8", read(8), "100/0", 4 * KiB)
        phase = Phase("at best QD", (cell,), (Tracking("IOPS QD 8", "QD 8", "iops"),), purge=False, max_rounds=10)
        return phase, Decision("at best QD", {"name": "most-iops"}, "QD 8", {"queue_depth": 8})

    prof = profile()
    search = Phase("qd search", (Cell("QD 1", read(1), "100/0", 4 * KiB),), (), max_rounds=1, stop_on_steady=False)
    said_not = Deferred("at best QD", "the QD search's most IOPS", tracking)
    plan = Plan("qd-search", "QD search", "test", prof, (search, said_not), prof.rule(), 1 << 30)
    assert rule_text(plan).startswith("not applicable: no phase tracks steady state")
    store = start(plan, TARGET, ScriptedEngine(iops), RunOptions(), tmp_path)
    with pytest.raises(IolabError, match="built with steady-state tracking, but its plan said it does not track"):
        build_deferred(store, plan, said_not)
    said = replace(said_not, tracks=True)
    plan = replace(plan, phases=(search, said))
    assert build_deferred(store, plan, said)[0].tracking
    assert f"at most {prof.max_rounds} rounds in at best QD (built during the run)" in rule_text(plan)
