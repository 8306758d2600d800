"""The runner and store with a scripted engine (no fio): rounds, steady state, budgets,
interruption, and what a reader sees afterwards."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from iolab import suites
from iolab.api import registry
from iolab.api.runlist import list_runs
from iolab.core.errors import EngineError
from iolab.core.results import Histogram, OpStats, RoundResult
from iolab.core.units import GiB, MiB
from iolab.engines.sim import SimEngine
from iolab.figures.summary import summarise
from iolab.run.runner import Runner
from iolab.run.runstart import RunOptions, start
from iolab.store.runstore import RunStore
from iolab.targets import DeviceFacts, PurgeOutcome, Target

# the quick limit's size: a quick run tests it whole (a larger one would test a cut range, never steady)
TARGET = Target("sim", "sim:scripted", "scripted", 512 * MiB, DeviceFacts(model="Scripted", logical_sector=512))


class ScriptedEngine:
    """IOPS per call come from `iops_for(round, call)`; byte budgets are written exactly."""

    name = "scripted"
    capabilities = SimEngine.capabilities  # a local engine, as the runner's protocol requires

    def __init__(self, iops_for, fail_at: int | None = None, interrupt_at: int | None = None):
        self.iops_for, self.calls, self.round = iops_for, 0, 0
        self.fail_at, self.interrupt_at = fail_at, interrupt_at
        self.purges = []

    def version(self):
        return "scripted-1"

    def prepare(self, target):
        pass

    def purge(self, target, method):
        self.purges.append(method)
        return PurgeOutcome("sim-purge", True, "scripted purge")

    def close(self):
        pass

    def set_write_cache(self, target, enabled):
        return "scripted: " + ("enabled" if enabled else "disabled")

    def job_text(self, target, workload, tag):
        return ""

    def run(self, target, workload, raw_dir: Path, tag, progress=None):
        self.calls += 1
        if self.fail_at == self.calls:
            raise EngineError("scripted failure")
        if self.interrupt_at == self.calls:
            raise KeyboardInterrupt
        rnd = int(tag.split("-r")[1][:2])
        iops = self.iops_for(rnd, self.calls)
        seconds = workload.duration_s or 1.0
        bs = workload.streams[0].block_size
        hist = Histogram((50.0, 100.0, 900.0), (10, 80, 10), 1000.0)
        lat = 1e7 / max(iops, 1)  # latency moves with IOPS, so latency tracking sees the same trend

        def side(share):
            ios = int(iops * share * seconds)
            if ios == 0:
                return OpStats.idle()
            return OpStats(ios, ios * bs, iops * share, iops * share * bs / 1e6, lat, 1000.0, 50.0, hist)

        reads = workload.read_pct / 100
        if workload.bytes_budget is not None:  # a byte budget: whichever of time and bytes ends first
            ios = workload.bytes_budget // bs
            if workload.duration_s is not None:
                ios = min(ios, int(iops * seconds))
            seconds = ios / iops  # the interval's true length (the engine contract)
            w = OpStats(ios, ios * bs, iops, iops * bs / 1e6, 100.0, 1000.0, 50.0, hist)
            r = OpStats.idle()
        else:
            r, w = side(reads), side(1 - reads)
        (raw_dir / f"{tag}.json").write_text(json.dumps({"iops": iops}))
        return RoundResult(r, w, seconds, raw_files=(f"raw/{tag}.json",), engine="scripted", engine_version="1")


def profile(**kw):
    return suites.make_profile("enterprise", quick=True, cell_seconds=1.0, **kw)


def go(tmp_path, test, engine, **kw):
    plan = registry.build_plan(test, profile(**kw), TARGET)
    store = start(plan, TARGET, engine, RunOptions(), tmp_path)
    Runner(plan, TARGET, engine, store, RunOptions()).run()
    return plan, RunStore.open(store.dir)


def test_iops_reaches_steady_state_and_stores_56_cells_per_round(tmp_path):
    # rounds 1-2 high (FOB), then flat: steady once the window is rounds 3-7
    engine = ScriptedEngine(lambda rnd, call: 50_000 if rnd <= 2 else 10_000 + (call % 3) * 100)
    plan, store = go(tmp_path, "iops", engine)
    [ph] = summarise(store)
    assert store.manifest.state == "complete"
    assert ph.steady is True and ph.window == (3, 4, 5, 6, 7) and ph.rounds == (1, 2, 3, 4, 5, 6, 7)
    assert len(ph.cells) == 56 and len(store.cells()) == 7 * 56
    assert [v.name for v in ph.verdicts] == ["IOPS 0/100 4KiB", "IOPS 65/35 64KiB", "IOPS 100/0 1024KiB"]
    # loop order: mixes outer, block sizes inner
    assert [c.key for c in ph.cells[:2]] == ["100/0 1024KiB", "100/0 128KiB"]
    assert ph.cells[-1].key == "0/100 0.5KiB"
    assert engine.purges == ["auto"]
    pc = store.cells(kind="precondition")
    assert len(pc) == 1 and pc[0].write_bytes == 2 * plan.capacity  # WIPC: 2× tested capacity
    assert not store.manifest.compliant and "quick profile" in store.manifest.noncompliance


def test_spec_1_1_tracks_one_variable(tmp_path):
    engine = ScriptedEngine(lambda rnd, call: 10_000)
    _, store = go(tmp_path, "iops", engine, spec="1.1")
    [ph] = summarise(store)
    assert [v.name for v in ph.verdicts] == ["IOPS 0/100 4KiB"]


def test_never_steady_stops_at_round_limit_and_says_so(tmp_path):
    engine = ScriptedEngine(lambda rnd, call: 1000 * (rnd + 1) ** 2)
    _, store = go(tmp_path, "latency", engine, max_rounds=6)
    [ph] = summarise(store)
    assert ph.steady is False and ph.rounds == (1, 2, 3, 4, 5, 6)
    assert "without steady state" in ph.phase.stop_reason


def test_throughput_has_two_phases_each_with_purge_and_its_own_preconditioning(tmp_path):
    engine = ScriptedEngine(lambda rnd, call: 500)
    _, store = go(tmp_path, "throughput", engine)
    phases = summarise(store)
    assert [p.phase.name for p in phases] == ["SEQ 1024KiB", "SEQ 128KiB"]
    assert engine.purges == ["auto", "auto"]
    pcs = store.cells(kind="precondition")
    assert [c.workload["streams"][0]["block_size"] for c in pcs] == [1024 * 1024, 128 * 1024]
    assert all(p.steady for p in phases)


def test_wsat_stops_exactly_at_its_byte_budget(tmp_path):
    engine = ScriptedEngine(lambda rnd, call: 1000)  # 1000 × 4 KiB per 1 s interval
    plan, store = go(tmp_path, "wsat", engine, capacity_limit=1_000_000, wsat_capacity_multiple=4)
    [ph] = summarise(store)
    written = sum(c.write_bytes for c in store.cells())
    budget = 4 * 1_000_000
    assert written >= budget and written - budget < 4 * 4096  # within one block per thread (TC 4)
    assert "budget" in ph.phase.stop_reason
    assert len(store.cells(kind="precondition")) == 0  # WSAT starts at FOB


def test_interrupt_keeps_finished_rounds(tmp_path):
    # 1 precondition call + 9 cells per latency round: call 1 + 2*9 + 3 is inside round 3
    engine = ScriptedEngine(lambda rnd, call: 100, interrupt_at=1 + 2 * 9 + 3)
    plan = registry.build_plan("latency", profile(), TARGET)
    store = start(plan, TARGET, engine, RunOptions(), tmp_path)
    with pytest.raises(KeyboardInterrupt):
        Runner(plan, TARGET, engine, store, RunOptions()).run()
    store = RunStore.open(store.dir)
    assert store.manifest.state == "interrupted"
    assert store.complete_rounds("main") == [1, 2]
    assert {c.round for c in store.cells()} == {1, 2}  # the partial round is not reported
    assert len(store.cells(complete_only=False)) == 2 * 9 + 2


def test_engine_failure_marks_the_run_failed(tmp_path):
    engine = ScriptedEngine(lambda rnd, call: 100, fail_at=5)
    plan = registry.build_plan("latency", profile(), TARGET)
    store = start(plan, TARGET, engine, RunOptions(), tmp_path)
    with pytest.raises(EngineError):
        Runner(plan, TARGET, engine, store, RunOptions()).run()
    store = RunStore.open(store.dir)
    assert store.manifest.state == "failed" and "scripted failure" in store.manifest.error
    [r] = list_runs(tmp_path)
    assert r.state == "failed"


def test_dead_writer_reads_as_interrupted(tmp_path):
    engine = ScriptedEngine(lambda rnd, call: 100)
    plan = registry.build_plan("latency", profile(), TARGET)
    store = start(plan, TARGET, engine, RunOptions(), tmp_path)
    store.manifest.pid = 2**22 + 12345  # no such process
    store.write_manifest()
    assert RunStore.open(store.dir).manifest.state == "interrupted"


def test_client_profile_settings():
    p = suites.make_profile("client")
    assert (p.active_range, p.threads, p.queue_depth, p.write_cache) == (0.75, 2, 16, True)
    plan = registry.build_plan("iops", p, TARGET)
    assert plan.capacity == int(0.75 * TARGET.capacity)
    assert plan.phases[0].cells[0].workload.active_range == pytest.approx(0.75)


def test_wsat_time_limit_counts_measured_time(tmp_path):
    # 1 s intervals, 5 s limit, a byte budget far away: exactly 5 intervals
    engine = ScriptedEngine(lambda rnd, call: 1000)
    _, store = go(tmp_path, "wsat", engine, wsat_max_seconds=5.0)
    [ph] = summarise(store)
    assert ph.rounds == (1, 2, 3, 4, 5)
    assert "time budget" in ph.phase.stop_reason


def test_wsat_budget_ending_mid_interval_is_a_marked_partial_interval(tmp_path):
    from iolab.api.comparisons import key_metrics

    # 1000 IOPS × 4 KiB = 4,096,000 B per 1 s interval, then 3000 IOPS in interval 5: the budget's
    # last 448 IOs (under half an interval at 1000 IOPS: the final one, by bytes) take it 0.149 s,
    # ending it before its planned second.
    budget = 4 * 4_096_000 + 448 * 4096
    engine = ScriptedEngine(lambda rnd, call: 3000 if rnd == 5 else 1000)
    _, store = go(tmp_path, "wsat", engine, capacity_limit=budget, wsat_capacity_multiple=1)
    [ph] = summarise(store)
    cells = store.cells()
    assert [c.round for c in cells] == [1, 2, 3, 4, 5]
    assert [c.partial for c in cells] == [False, False, False, False, True]
    last = cells[-1]
    # reported with its true length and true rate, not 448 IOs over a full second
    assert last.runtime_s == pytest.approx(448 / 3000) and last.iops == pytest.approx(3000)
    assert sum(c.write_bytes for c in cells) == budget
    # the partial interval is not a window round; the window mean and the comparison use full intervals
    assert 5 not in ph.window and all(5 not in v.rounds for v in ph.verdicts)
    assert ph.window == (1, 2, 3, 4) and ph.cells[0].rounds == (1, 2, 3, 4)
    assert ph.cells[0].iops == pytest.approx(1000)
    first, minimum = key_metrics("wsat")[:2]
    assert minimum.get([ph]) == pytest.approx(1000) and first.get([ph]) == pytest.approx(1000)


def test_wsat_makes_no_tiny_interval_of_a_tiny_budget_remainder(tmp_path):
    # The budget ends 8 IOs (32 KiB) after interval 3: no 8-IO interval is made of that. Interval
    # 3's cap keeps a quarter pace (250 IOs) back, so it ends at 756 IOs (whole blocks per thread),
    # and the last 252 IOs run by bytes: both partial, neither a whole cell time (once the last 1,008 IOs ran as one
    # interval of 1.008 s, longer than a cell and still partial).
    budget = 3 * 4_096_000 + 8 * 4096
    engine = ScriptedEngine(lambda rnd, call: 1000)
    _, store = go(tmp_path, "wsat", engine, capacity_limit=budget, wsat_capacity_multiple=1)
    cells = store.cells()
    assert sum(c.write_bytes for c in cells) == budget
    assert [c.round for c in cells] == [1, 2, 3, 4]
    # the last interval took the rest by bytes, its true length; the budget ended both, so they are partial
    assert [round(c.runtime_s, 3) for c in cells[2:]] == [0.756, 0.252] and cells[-1].workload["duration_s"] is None
    assert [c.partial for c in cells] == [False, False, True, True]


def test_old_run_database_without_the_partial_column_still_reads(tmp_path):
    import sqlite3

    from iolab.pages.export import collect

    # Interval 4 runs at 3000 IOPS into the cap that keeps a quarter interval (250 IOs) back for
    # the last: it ends after 2448 IOs, 0.816 s into its planned second (a timed interval, as the
    # first release's partial ones were); interval 5 writes the last 252 IOs in 0.252 s by bytes
    # alone, partial too, a kind of interval the first release never stored (read as whole).
    budget = 5 * 4_096_000 + 700 * 4096
    engine = ScriptedEngine(lambda rnd, call: 3000 if rnd == 4 else 1000)
    _, store = go(tmp_path, "wsat", engine, capacity_limit=budget, wsat_capacity_multiple=1)
    assert [c.partial for c in store.cells()] == [False, False, False, True, True]  # as stored
    store.close()
    db = sqlite3.connect(store.dir / "results.db")
    db.execute("ALTER TABLE cells DROP COLUMN partial")  # as the first release wrote it
    db.commit()
    db.close()
    old = RunStore.open(store.dir)
    cells = old.cells()
    # the runner's cap is in the stored workload: a timed interval that ended early is partial
    assert [c.partial for c in cells] == [False, False, False, True, False]
    [ph] = summarise(old)
    assert ph.cells[0].rounds == (1, 2, 3, 5)
    exported = {t.name: t for t in collect(old)}
    names = [c.name for c in exported["cells"].columns]
    assert [row[names.index("partial")] for row in exported["cells"].rows] == [False, False, False, True, False]
    # `iolab show` marks it and summarises only full intervals
    import io

    from rich.console import Console

    from iolab.api.reports import show

    buf = io.StringIO()
    show(old, Console(file=buf, width=200))
    text = buf.getvalue()
    assert "4 (partial, 0.816 s)" in text and "last 4 full intervals mean 1,000 IOPS" in text
    # the window skips the partial interval and says so; round 4 is no complete round
    assert "measurement window: rounds 1–3, 5" in text and "4 complete rounds and round 4 (partial" in text


def test_steady_state_is_not_accepted_before_the_minimum_writes(tmp_path):
    from iolab.core.plan import Cell, Phase, TestPlan, Tracking
    from iolab.core.workload import Workload

    # flat IOPS: steady at round 5 by the rule, but 1,000 × 4 KiB per round needs 8 rounds for 32 MB
    w = Workload.mix("rnd", 0, 4096, threads=1, queue_depth=1, duration_s=1.0)
    cell = Cell("w", w, "0/100", 4096)
    prof = profile(steady_min_write_multiple=0.0)  # the phase's own minimum alone
    phase = Phase("main", (cell,), (Tracking("IOPS w", "w", "iops"),), max_rounds=20, min_write_bytes=8 * 4_096_000)
    plan = TestPlan("multi-wsat", "t", "s", prof, (phase,), prof.rule(), GiB)
    engine = ScriptedEngine(lambda rnd, call: 1000)
    store = start(plan, TARGET, engine, RunOptions(), tmp_path)
    Runner(plan, TARGET, engine, store, RunOptions()).run()
    [ph] = summarise(RunStore.open(store.dir))
    assert ph.steady is True and ph.rounds == tuple(range(1, 9)) and ph.window == (4, 5, 6, 7, 8)

    # a time limit before the threshold: the rule's verdict would be steady, the phase is not
    phase = Phase("main", (cell,), (Tracking("IOPS w", "w", "iops"),), max_rounds=6, min_write_bytes=8 * 4_096_000)
    plan = TestPlan("multi-wsat", "t", "s", prof, (phase,), prof.rule(), GiB)
    store = start(plan, TARGET, engine, RunOptions(), tmp_path)
    Runner(plan, TARGET, engine, store, RunOptions()).run()
    [ph] = summarise(RunStore.open(store.dir))
    assert ph.steady is False and "below the 0.033 GB required" in ph.phase.stop_reason


def test_steady_state_waits_for_the_rules_minimum_written_since_the_purge(tmp_path):
    from iolab.core.plan import Cell, Phase, TestPlan, Tracking
    from iolab.core.workload import Workload

    # a flat plateau passes the rule at round 5; 1,000 × 4 KiB a round fills 2 × 16 MB at round 8,
    # and the preconditioning phase's writes before it (no purge between) count
    w = Workload.mix("rnd", 0, 4096, threads=1, queue_depth=1, duration_s=1.0)
    cell = Cell("w", w, "0/100", 4096)
    prof = profile()
    pre = Phase("pre", (cell,), (), max_rounds=2, stop_on_steady=False)
    main = Phase("main", (cell,), (Tracking("IOPS w", "w", "iops"),), purge=False, max_rounds=20)
    plan = TestPlan("t", "t", "s", prof, (pre, main), prof.rule(), 16_384_000)
    engine = ScriptedEngine(lambda rnd, call: 1000)
    drive = replace(TARGET, capacity=16_384_000)  # the plan tests the whole drive
    store = start(plan, drive, engine, RunOptions(), tmp_path)
    Runner(plan, drive, engine, store, RunOptions()).run()
    ph = summarise(RunStore.open(store.dir))[1]
    assert ph.steady is True and ph.window == (2, 3, 4, 5, 6)
    assert ph.phase.stop_reason == (
        "steady state reached in rounds 2-6, declared after 0.033 GB written since the "
        "purge (≥ 2× the tested capacity, 0.033 GB)"
    )

    # not enough rounds to write it: the window passes, the phase is not steady, and says why
    plan = TestPlan("t", "t", "s", prof, (replace(main, purge=True, max_rounds=6),), prof.rule(), 16_384_000)
    store = start(plan, drive, engine, RunOptions(), tmp_path)
    Runner(plan, drive, engine, store, RunOptions()).run()
    [ph] = summarise(RunStore.open(store.dir))
    assert (
        ph.steady is False
        and (
            "steady state not reached: the window passed, but only 0.025 GB was written since "
            "the purge, below the 2× the tested capacity (0.033 GB)"
        )
        in ph.phase.stop_reason
    )


def test_a_range_cut_below_the_drive_stops_at_its_window_but_is_never_the_drives_steady_state(tmp_path):
    # a 1 GiB drive that --quick cuts to 512 MiB (a real drive cannot be copied smaller): the window
    # passes at rounds 3-7 as before, and the phase ends there, labelled; it was "steady state reached"
    engine = ScriptedEngine(lambda rnd, call: 50_000 if rnd <= 2 else 10_000 + (call % 3) * 100)
    drive = replace(TARGET, capacity=1 * GiB)
    plan = registry.build_plan("iops", profile(), drive)
    store = start(plan, drive, engine, RunOptions(), tmp_path)
    Runner(plan, drive, engine, store, RunOptions()).run()
    store = RunStore.open(store.dir)
    [ph] = summarise(store)
    assert ph.steady is False and ph.rounds == (1, 2, 3, 4, 5, 6, 7)
    label = "active range 50 %: not the drive's steady state"
    assert ph.phase.stop_reason.startswith("the window passed in rounds 3-7") and label in ph.phase.stop_reason
    assert "steady state reached" not in ph.phase.stop_reason
    assert any(n.startswith(label) for n in store.manifest.noncompliance)


def test_ctrl_c_as_a_run_starts_leaves_it_interrupted_and_its_target_free(tmp_path):
    # Ctrl-C between the run directory's creation and the runner's first step (under load at
    # 0.45 s into `iolab run`) left the manifest "running" and the target claimed
    from iolab.api import runs as api
    from iolab.targets import lock

    def stop(store):
        raise KeyboardInterrupt

    target = "sim:enterprise-sas?user_gb=0.25"
    others = dict(lock._HELD)  # claims of this worker's earlier tests are not this run's
    with pytest.raises(KeyboardInterrupt):
        api.run_test("latency", target, profile(), runs_dir=tmp_path, report=False, on_start=stop)
    [r] = list_runs(tmp_path)
    store = RunStore.open(r.path)
    assert store.manifest.state == "interrupted" and "as it started" in (store.manifest.error or "")
    assert dict(lock._HELD) == others  # the claim went with it: the next run may take the target
    [again] = api.run_test("latency", target, profile(max_rounds=1), runs_dir=tmp_path, report=False)
    assert again.state == "complete"


def test_a_stop_signal_while_the_run_directory_is_made_reaches_a_caller_who_knows_the_run(tmp_path, monkeypatch):
    # SIGTERM as RunStore.create wrote the manifest (a fleet stopping its drive as it started): the
    # run stayed "running", its caller never heard of it, and the fleet marked the drive failed
    import os
    import signal

    from iolab.api import runs as api
    from iolab.api.runs import Started
    from iolab.run import runstart
    from iolab.run.stopsignals import Interrupted, stop_on_signals

    made = runstart.RunStore.create

    def create_then_stopped(root, manifest):
        store = made(root, manifest)
        os.kill(os.getpid(), signal.SIGTERM)
        return store

    monkeypatch.setattr(runstart.RunStore, "create", staticmethod(create_then_stopped))
    seen = []
    with stop_on_signals(), pytest.raises(Interrupted) as stopped:
        seen.extend(api.run_steps("latency", "sim:enterprise-sas?user_gb=0.25", profile(), runs_dir=tmp_path))
    assert stopped.value.signal_name == "SIGTERM"
    [started] = [s for s in seen if isinstance(s, Started)]  # the caller had the run before the stop
    store = RunStore.open(started.store.dir)
    assert store.manifest.state == "interrupted" and store.manifest.error.startswith("stopped by SIGTERM as it started")


class DrainingEngine(ScriptedEngine):
    """Each timed interval lasts `drain` seconds past its length (its IO in flight completing);
    the `longer` call drains twice as long."""

    capabilities = replace(SimEngine.capabilities, keeps_state=True)  # resumed in place, as a file

    def __init__(self, iops_for, drain: float, longer: int | None = None, **kw):
        super().__init__(iops_for, **kw)
        self.drain, self.longer = drain, longer

    def run(self, target, workload, raw_dir: Path, tag, progress=None):
        r = super().run(target, workload, raw_dir, tag, progress)
        extra = self.drain * (2 if self.calls == self.longer else 1)
        return replace(r, runtime_s=r.runtime_s + extra) if workload.duration_s is not None else r


def test_a_time_budget_starts_no_interval_it_cannot_hold_and_records_what_ran(tmp_path):
    """1 s intervals that drain 0.5 s each, a 5 s budget: a fourth interval, begun at 4.5 s, would
    end at 6.0 s (the budget checked only for being spent ran it); it does not start."""
    _, store = go(tmp_path, "wsat", DrainingEngine(lambda rnd, call: 1000, drain=0.5), wsat_max_seconds=5.0)
    [ph] = summarise(store)
    assert ph.rounds == (1, 2, 3) and sum(c.runtime_s for c in store.cells("main")) == 4.5
    reason = "ran 4.50 s of its 5.00 s time budget in 3 intervals: the next would take 1.50 s (1.00 s and the drain to expect, 0.500 s), more than the 0.500 s left"
    assert ph.phase.stop_reason == reason
    [d] = store.manifest.decisions
    assert d["rule"] == {"name": "time-budget", "seconds": 5.0} and d["outcome"] == reason and d["round"] == 3
    assert d["chosen"] == {"ran_s": 4.5, "rounds": 3, "next_round_s": 1.5}


@pytest.mark.parametrize(
    ("budget", "longer", "said"),
    [
        # 1.5 s, then 2.0 s (its drain doubled) begun with 1.7 s left, 1.5 s foreseen
        (3.2, 2, "ran 3.50 s in 2 intervals, 0.300 s past its 3.20 s time budget (an interval lasts until its IO "
         "in flight completes, and the last drained longer than the drain to expect from those before it)"),
        # the first interval has no drain before it to foresee its own
        (1.2, None, "ran 1.50 s in 1 interval, 0.300 s past its 1.20 s time budget (an interval lasts until its IO "
         "in flight completes, and the first had none measured before it)"),
    ],
)  # fmt: skip
def test_an_interval_that_drains_longer_than_any_before_passes_the_budget_and_says_so(tmp_path, budget, longer, said):
    engine = DrainingEngine(lambda rnd, call: 1000, drain=0.5, longer=longer)
    _, store = go(tmp_path, "wsat", engine, wsat_max_seconds=budget)
    [ph] = summarise(store)
    assert ph.phase.stop_reason == said and store.manifest.decisions[0]["chosen"]["next_round_s"] is None


def test_resume_of_a_phase_its_time_budget_ended_records_the_decision_once(tmp_path, monkeypatch):
    """Killed after its last interval, before the phase's end: resume ends the phase at its time
    budget as the runner would, from the stored intervals' drain, and records the decision unless
    the run already had (killed between the two)."""
    from iolab.run import resume

    monkeypatch.setattr(resume.targets, "parse_target", lambda spec: TARGET)
    monkeypatch.setattr(resume, "engine_class", lambda target: DrainingEngine)
    for decided in (False, True):
        runs = tmp_path / str(decided)
        _, done = go(runs, "wsat", DrainingEngine(lambda rnd, call: 1000, drain=0.5), wsat_max_seconds=5.0)
        run, stored = done.dir, done.manifest.decisions
        done.close()
        m = json.loads((run / "manifest.json").read_text())
        (run / "manifest.json").write_text(json.dumps(m | {"state": "interrupted", "decisions": stored[:decided]}))
        con = __import__("sqlite3").connect(run / "results.db")
        with con:
            con.execute("UPDATE phases SET ended=NULL, steady=NULL, rounds=NULL, stop_reason=NULL")
        con.close()
        engine = DrainingEngine(lambda rnd, call: 1000, drain=0.5)
        r, _ = resume.prepare(run, lambda t, engine=engine, **_: engine, registry.build_plan)
        resume.run(r, engine)
        again = RunStore.open(run)
        assert engine.calls == 0 and again.manifest.state == "complete"
        assert again.manifest.decisions == stored, decided
        assert again.phases()[0].stop_reason == stored[0]["outcome"]


def test_a_single_long_drain_does_not_end_the_phase_and_a_resumed_one_expects_the_same(tmp_path, monkeypatch):
    """Intervals of 2.0 s (the first drains 1.0 s), then 1.5 s each, within 6.6 s: after the third
    (5.0 s) the next, at the most drain measured, would take 2.0 s of the 1.6 s left, and the
    phase ended there, an interval early; the two drains after the first agree on 0.5 s, so the
    next is expected to take 1.5 s and runs (6.5 s), the fifth then not (1.5 s of 0.1 s left).
    Interrupted in the third and resumed, the phase ends as the whole run did: the drains
    expected are the stored intervals' too."""
    from iolab.run import resume

    def engine(**kw):
        return DrainingEngine(lambda rnd, call: 1000, drain=0.5, **kw)

    whole = go(tmp_path / "whole", "wsat", engine(longer=1), wsat_max_seconds=6.6)[1]
    assert [c.runtime_s for c in whole.cells("main")] == [2.0, 1.5, 1.5, 1.5]
    assert "the next would take 1.50 s (1.00 s and the drain to expect, 0.500 s)" in whole.phases()[0].stop_reason
    plan = registry.build_plan("wsat", profile(wsat_max_seconds=6.6), TARGET)
    s = start(plan, TARGET, engine(), RunOptions(), tmp_path / "cut")
    with pytest.raises(KeyboardInterrupt):  # in the third interval
        Runner(plan, TARGET, engine(longer=1, interrupt_at=3), s, RunOptions()).run()
    s.close()
    monkeypatch.setattr(resume.targets, "parse_target", lambda spec: TARGET)
    monkeypatch.setattr(resume, "engine_class", lambda target: DrainingEngine)
    later = engine()  # its own intervals drain 0.5 s: the 1.0 s is known only from the store
    r, _ = resume.prepare(s.dir, lambda t, **_: later, registry.build_plan)
    resume.run(r, later)
    done = RunStore.open(s.dir)
    assert [c.runtime_s for c in done.cells("main")] == [2.0, 1.5, 1.5, 1.5] and later.calls == 2
    assert done.phases()[0].stop_reason == whole.phases()[0].stop_reason


def test_the_drain_to_expect_sets_aside_one_longest_drain_only_where_two_others_agree_on_less():
    from iolab.run.budget import drain_estimate

    assert drain_estimate([]) == 0.0  # the first interval has nothing to go by
    assert drain_estimate([1.0, 0.5]) == 1.0  # two are too few to call either an outlier
    assert drain_estimate([1.0, 0.5, 0.5]) == 0.5  # one long drain, two agree on less
    assert drain_estimate([0.5, 1.0, 0.5, 1.0]) == 1.0  # seen twice: the drive's, expected
    assert drain_estimate([0.3, 0.3, 0.3, 0.9]) == 0.3  # the latest may be the one set aside
