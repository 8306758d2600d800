"""The end of a write-budgeted phase (run/budget.py) through the runner and a scripted engine:
whatever the target's rate does as the budget runs out (steady, tripling, halving, swinging),
the phase writes exactly its budget, its last interval is no sliver, and only the intervals the
budget ended are partial and kept out of the steady-state window."""

from __future__ import annotations

import shutil
import statistics
from pathlib import Path

import pytest

from iolab.api import registry
from iolab.figures.summary import summarise
from iolab.run import resume
from iolab.run.budget import FINAL_PACES, KEEP_PACES, PACE_INTERVALS
from iolab.run.runner import Runner, cell_tag
from iolab.run.runstart import RunOptions, start
from iolab.store.runstore import RunStore
from tests.unit.test_decide import KeepingEngine
from tests.unit.test_runner import TARGET, ScriptedEngine, go, profile

BS = 4096
FIO_FIXTURES = Path(__file__).parent.parent / "fixtures" / "fio"
PACE = 1000 * BS  # what one 1 s interval at 1,000 IOPS writes (the scripted engine: IOPS × 4 KiB)
THREADS = 4  # the quick enterprise profile's TC: the byte caps are whole blocks per thread

# IOPS per interval (round); the budget ends in rounds 4-8, where each pattern moves
PATTERNS = {
    "steady": lambda rnd: 1000,
    "triples": lambda rnd: 1000 if rnd < 4 else 3000,
    "halves": lambda rnd: 1000 if rnd < 4 else 500,
    "swings": lambda rnd: (1000, 1000, 1000, 3000, 1000, 333, 3000, 500, 2000)[rnd % 9],
}
# where in an interval the budget ends: just after one, in its middle, just before its end
BUDGETS = [int(PACE * (k + f)) // BS * BS for k in (4, 5, 6) for f in (0.02, 0.5, 0.98)]


def pace_before(cells, n: int) -> float:
    """What an interval of 1 s wrote at the highest rate of the latest intervals before cell n."""
    return max(c.write_bytes / c.runtime_s for c in cells[max(0, n - PACE_INTERVALS) : n])


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_the_budget_end_leaves_no_sliver_whatever_the_rate(tmp_path, pattern, budget):
    rate = PATTERNS[pattern]
    _, store = go(
        tmp_path, "wsat", ScriptedEngine(lambda rnd, call: rate(rnd)), capacity_limit=budget, wsat_capacity_multiple=1
    )
    cells = store.cells()
    shape = (budget / PACE, [(c.write_bytes // BS, round(c.runtime_s, 3), c.partial) for c in cells])
    [ph] = summarise(store)
    assert "budget" in ph.phase.stop_reason, shape
    # the budget exactly: the last cap is rounded up to whole blocks per thread, no more
    assert budget <= sum(c.write_bytes for c in cells) < budget + THREADS * BS, shape
    last = cells[-1]
    # no sliver: the last interval writes at least a quarter of a typical interval ...
    assert last.write_bytes >= statistics.median(c.write_bytes for c in cells) / 4, shape
    # ... as it writes at least what a quarter interval wrote at the highest recent rate before
    # the interval ahead of it, which kept that back
    if len(cells) >= 3:
        assert last.write_bytes >= KEEP_PACES * pace_before(cells, len(cells) - 2), shape
        # and at most half a pace: the budget's end never makes one interval of what a whole
        # interval and more would measure (it was once one to two paces, longer than a whole
        # interval and still partial, left out of the window and the minimum)
        assert last.write_bytes <= FINAL_PACES * pace_before(cells, len(cells) - 1) + THREADS * BS, shape
    if pattern in ("steady", "triples"):  # the rate never falls below half its pace
        assert all(c.runtime_s < 0.98 for c in cells if c.partial), shape
    # partial: the intervals the budget ended, the last one (by bytes alone) and the one before
    # it if its cap ended it early; every other interval ran its planned second
    *whole, before = cells[:-1]
    assert last.partial and before.partial == (before.runtime_s < 0.98), shape
    assert all(not c.partial and c.runtime_s >= 0.98 for c in whole), shape
    for c in cells:
        assert c.iops == pytest.approx(c.write_ios / c.runtime_s), shape  # a rate over the true length
        if c.partial:
            assert c.round not in ph.window and all(c.round not in v.rounds for v in ph.verdicts), shape


def test_resume_ends_the_budget_as_the_run_would_have(tmp_path, monkeypatch):
    # 1000 IOPS for 6 intervals, 3000 in interval 7: its cap (keeping a quarter pace, 250 IOs,
    # back) ends it at 2448 IOs (whole blocks per thread), 0.816 s (partial); interval 8 writes
    # the last 252 IOs by bytes alone (partial).
    # Killed as interval 8 starts, the resumed run takes the pace from the stored intervals and
    # leaves both partial intervals out of the steady-state history, as the runner does.
    budget = 8 * PACE + 700 * BS
    rate = lambda rnd, call: 3000 if rnd == 7 else 1000  # noqa: E731
    plan = registry.build_plan("wsat", profile(capacity_limit=budget, wsat_capacity_multiple=1), TARGET)
    whole = start(plan, TARGET, KeepingEngine(rate), RunOptions(), tmp_path / "whole")
    Runner(plan, TARGET, KeepingEngine(rate), whole, RunOptions()).run()
    s = start(plan, TARGET, KeepingEngine(rate), RunOptions(), tmp_path / "resumed")
    with pytest.raises(KeyboardInterrupt):
        Runner(plan, TARGET, KeepingEngine(rate, interrupt_at=8), s, RunOptions()).run()
    s.close()
    monkeypatch.setattr(resume.targets, "parse_target", lambda spec: TARGET)
    monkeypatch.setattr(resume, "engine_class", lambda target: KeepingEngine)  # its state kept: it continues
    r, _ = resume.prepare(s.dir, lambda t, **_: KeepingEngine(rate), registry.build_plan)
    assert r.start.round == 8, r.notes[0][:400]
    assert len(r.start.history["IOPS 0/100 4KiB"]) == 6  # interval 7 is no sample
    resume.run(r, KeepingEngine(rate))

    def ending(path):
        store = RunStore.open(path)
        [ph] = summarise(store)
        return [(c.write_bytes, round(c.runtime_s, 3), c.partial) for c in store.cells()], ph.window

    assert ending(s.dir) == ending(whole.dir)
    cells, window = ending(s.dir)
    assert cells[-2:] == [(2448 * BS, 0.816, True), (252 * BS, 0.252, True)] and window == (2, 3, 4, 5, 6)


def test_a_last_interval_recovered_from_raw_is_partial(tmp_path, monkeypatch):
    # The run dies after fio wrote the last interval's output and before the store had it
    # (a fixture's fio output, 237 MB of writes, stands in): resume stores it from raw/, marked
    # as the runner would have, the budget's last interval by bytes alone, partial. At 120,000
    # IOPS the last interval was to write 0.49 × 492 MB (241 MB, at most half a pace), more than
    # the fixture's 237 MB, so the phase goes on at round 9.
    tested = int(7.49 * 120 * PACE / 8) // BS * BS  # a budget of 8 × the tested range, as within the target
    plan = registry.build_plan("wsat", profile(capacity_limit=tested, wsat_capacity_multiple=8), TARGET)
    s = start(plan, TARGET, KeepingEngine(lambda rnd, call: 120_000), RunOptions(), tmp_path)
    with pytest.raises(KeyboardInterrupt):
        Runner(plan, TARGET, KeepingEngine(lambda rnd, call: 120_000, interrupt_at=8), s, RunOptions()).run()
    s.close()
    tag = cell_tag("main", 8, 0, plan.phases[0].cells[0].key)
    for f in FIO_FIXTURES.glob("randrw*"):
        shutil.copy(f, s.dir / "raw" / f.name.replace("randrw", tag))
    monkeypatch.setattr(resume.targets, "parse_target", lambda spec: TARGET)
    monkeypatch.setattr(resume, "engine_class", lambda target: KeepingEngine)
    r, _ = resume.prepare(s.dir, lambda t, **_: KeepingEngine(lambda rnd, call: 120_000), registry.build_plan)
    assert any("recovered 1 cell of round 8" in n for n in r.notes) and r.start.round == 9, r.notes
    cells = RunStore.open(s.dir).cells()
    assert [c.round for c in cells] == list(range(1, 9)) and cells[-1].workload["duration_s"] is None
    assert [c.partial for c in cells] == [False] * 7 + [True]
