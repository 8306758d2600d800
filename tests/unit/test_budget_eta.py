"""A write-budgeted phase's ETA (Write Saturation) rests on the write rate its intervals
measured, and says its time budget only as what it takes at most: a 5-second simulator run
read "ETA 0:00–4:01:26 (done by … at the latest", the 24 h budget scaled to wall time.
Fed recorded progress with a fixed clock (`now`), never the machine's own time or speed."""

from __future__ import annotations

import io
import time
from dataclasses import replace

from rich.console import Console

from iolab import suites
from iolab.api import registry
from iolab.cli.budgeteta import PhaseWrites, budget_estimate
from iolab.cli.progress import RichProgress, _clock, sequence_eta
from iolab.core.plan import Phase, step_seconds
from iolab.core.results import OpStats, RoundResult
from iolab.core.units import eng

from .test_progress import TARGET

NOW = 1_000_000.0
RATIO = 2.0  # wall seconds per virtual second, as a (loaded) simulator run measures it


def wsat() -> tuple[RichProgress, Phase]:
    plan = registry.build_plan("wsat", suites.make_profile("enterprise", quick=True), TARGET)
    p = RichProgress(Console(file=io.StringIO()), quiet=True)
    p.test_starts(plan)
    [phase] = plan.phases
    assert isinstance(phase, Phase)
    p.phase(phase, 0)
    return p, phase


def interval(p: RichProgress, phase: Phase, rnd: int, written: int) -> None:
    """One 1 s interval of the phase that wrote `written` bytes, in RATIO s of wall time."""
    cell = phase.cells[0]
    p.step("round", rnd, 0, 1, cell.workload.label(), step_seconds(cell.workload))
    w = OpStats(written // 4096, written, written / 4096, written / 1e6, 50.0, 90.0, 10.0, None)
    p.done(RoundResult(OpStats.idle(), w, 1.0, counters={"virtual_seconds": 1.0}), wall_s=RATIO)


def at(seconds: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(NOW + seconds))


def test_the_eta_is_the_bytes_left_at_the_rates_measured_and_the_budget_only_an_upper_bound():
    p, phase = wsat()
    budget, budget_s = phase.budget_write_bytes, phase.budget_seconds
    assert budget is not None and budget_s is not None and budget > 150e6
    interval(p, phase, 1, 100_000_000)  # 100 MB/s
    interval(p, phase, 2, 50_000_000)  # 50 MB/s: the drive slowed
    text = p._eta(now=NOW)
    rest = budget - 150_000_000
    early, late, most = rest / 100e6 * RATIO, rest / 50e6 * RATIO, (budget_s - 2) * RATIO
    assert text.startswith(f"{_clock(early)}–{_clock(late)} (done by {at(late)}: "), text
    assert f"{eng(rest, 'B')} of the {eng(budget, 'B')} write budget left at 50.00–100.0 MB/s" in text
    assert "the write rate of this phase's 2 intervals so far" in text
    assert f"; at most {_clock(most)} (by {at(most)}: its time budget); wall clock: simulated time × 2" in text
    assert "at the latest" not in text  # the estimate is not a bound; the budget is
    assert late < most  # the evidence puts the end well before the budget


def test_before_any_write_is_measured_only_the_budget_is_said_and_as_at_most():
    p, phase = wsat()
    assert p._eta(now=NOW) == "estimating… (no step measured yet)"
    interval(p, phase, 1, 0)  # the pace is measured, no write rate yet
    most = (phase.budget_seconds - 1) * RATIO
    assert p._eta(now=NOW) == (
        f"at most {_clock(most)} (by {at(most)}: its time budget), the write budget's end not yet estimated; "
        "wall clock: simulated time × 2, the wall/virtual ratio measured so far"
    )


def test_a_rate_too_slow_for_the_budget_ends_the_estimate_at_the_time_budget():
    p, phase = wsat()
    interval(p, phase, 1, 1_000)  # 1 kB/s: the budget would take far longer than its 24 h
    most = (phase.budget_seconds - 1) * RATIO
    assert p._eta(now=NOW).startswith(f"{_clock(most)} (done by {at(most)}: "), p._eta(now=NOW)


def test_the_limit_the_eta_names_is_the_one_the_plan_ends_the_phase_at():
    # one round's time (the cells' steps and the idles before them) is the plan's (Phase.round_seconds):
    # 10 rounds of a 1 s interval after a 9 s idle take 100 s, past a 60 s time budget
    p, phase = wsat()
    plan = p.plan
    assert plan is not None and phase.round_seconds() == 1.0
    writes = PhaseWrites()
    for rounds, idle, budget_s, limit, latest in (
        (10, None, 60.0, "its round limit", 10.0),
        (10, 9.0, 60.0, "its time budget", 60.0),
        (100, None, 60.0, "its time budget", 60.0),
        (10, 9.0, 200.0, "its round limit", 100.0),
    ):
        cells = tuple(replace(c, idle_before_s=idle) for c in phase.cells)
        ph = replace(phase, cells=cells, max_rounds=rounds, budget_seconds=budget_s)
        got = budget_estimate(plan, ph, 0.0, writes)
        assert got is not None and (got.limit, got.most_s) == (limit, latest)
        assert plan.phase_seconds(ph)[1] == latest


def test_a_resumed_phase_counts_its_stored_rounds_in_the_bytes_and_the_time_left():
    p, phase = wsat()
    budget, budget_s = phase.budget_write_bytes, phase.budget_seconds
    assert budget is not None and budget_s is not None and budget > 300e6
    p.resumed(rounds=10, written=200_000_000)  # 10 rounds of 1 s stored before the stop
    interval(p, phase, 11, 100_000_000)
    text = p._eta(now=NOW)
    assert f"{eng(budget - 300_000_000, 'B')} of the {eng(budget, 'B')} write budget left" in text, text
    most = (budget_s - 11) * RATIO
    assert f"; at most {_clock(most)} (by {at(most)}: its time budget)" in text, text


def test_a_sequence_expects_its_end_without_a_write_budget_not_yet_estimated_and_says_it_at_most():
    # PTS: IOPS, then WSAT (its 24 h time budget): the expected end was IOPS's latest + 24 h
    profile = suites.make_profile("enterprise", quick=True)
    iops, wsat_plan = (registry.build_plan(t, profile, TARGET) for t in ("iops", "wsat"))
    [phase] = wsat_plan.phases
    assert isinstance(phase, Phase) and phase.budget_write_bytes is not None and phase.budget_seconds is not None
    (a, b), first = iops.timed_seconds(), phase.round_seconds()
    budget = f"the time Write Saturation takes to write its {eng(phase.budget_write_bytes, 'B')} budget"
    text = sequence_eta([iops, wsat_plan])
    assert text.startswith(f"2 tests, ETA {_clock(a + first)} to {_clock(b + first)} (IOPS "), text
    assert f"Write Saturation {_clock(first)} + its write budget, at most {_clock(phase.budget_seconds)})" in text
    most = b + phase.budget_seconds
    assert text.endswith(
        f", plus {budget}, not yet estimated; at most {_clock(most)} (Write Saturation to its time budget)"
    )

    # the live ETA while IOPS runs, once its pace is measured: the same expected end and bound
    p = RichProgress(Console(file=io.StringIO()), quiet=True)
    p.in_sequence([iops, wsat_plan], 0)
    p.test_starts(iops)
    [main] = iops.phases
    assert isinstance(main, Phase)
    p.phase(main, 0)
    w = main.precondition[0]
    p.step("precondition", 0, 0, 1, w.label(), step_seconds(w))
    p.done(RoundResult(OpStats.idle(), OpStats.idle(), 1.0, counters={"virtual_seconds": 1.0}), wall_s=RATIO)
    done = step_seconds(w)
    early, late, most_left = (a - done + first) * RATIO, (b - done + first) * RATIO, (most - done) * RATIO
    assert p._eta(now=NOW).startswith(
        f"test 1/2; to the end of the sequence: {_clock(early)}–{_clock(late)} (done by {at(late)}), plus {budget}, "
        f"not yet estimated; at most {_clock(most_left)} (by {at(most_left)}: Write Saturation to its time budget); "
    ), p._eta(now=NOW)


def _iops_rounds(p: RichProgress, iops, keys: dict[str, float], rounds: int = 6) -> None:
    """IOPS rounds in which only the cells `keys` names write, each at its rate (bytes/s)."""
    [main] = iops.phases
    p.test_starts(iops)
    p.phase(main, 0)
    for rnd in range(1, rounds + 1):
        for i, cell in enumerate(main.cells):
            p.step("round", rnd, i, len(main.cells), cell.workload.label(), step_seconds(cell.workload))
            rate = keys.get(cell.key, 0.0) * (1 + 0.01 * rnd)  # 1 % faster each round: the latest 5 are kept
            w = OpStats(int(rate) // 4096, int(rate), rate / 4096, rate / 1e6, 50.0, 90.0, 10.0, None)
            p.done(RoundResult(OpStats.idle(), w, 1.0, counters={"virtual_seconds": 1.0}), wall_s=RATIO)


def test_write_saturation_is_expected_at_the_rate_the_iops_test_measured_of_its_stimulus():
    # before: WSAT's end was "not yet estimated" until its own first interval, though the IOPS test
    # before it in the sequence had measured the same RND 4 KiB W at TC4/QD32
    profile = suites.make_profile("enterprise", quick=True)
    iops, wsat_plan = (registry.build_plan(t, profile, TARGET) for t in ("iops", "wsat"))
    [phase] = wsat_plan.phases
    assert isinstance(phase, Phase) and phase.budget_write_bytes is not None
    p = RichProgress(Console(file=io.StringIO()), quiet=True)
    p.in_sequence([iops, wsat_plan], 0)
    _iops_rounds(p, iops, {"0/100 4KiB": 100e6, "0/100 1024KiB": 900e6})
    rates = [100e6 * (1 + 0.01 * r) for r in range(2, 7)]  # the latest 5 rounds' 4 KiB rates, not 1024 KiB's
    said = "102.0–106.0 MB/s, the write rate of the IOPS test's latest 5 intervals of the same stimulus"
    text = sequence_eta([wsat_plan], p.pace, p.measured)
    budget = eng(phase.budget_write_bytes, "B")
    assert f"Write Saturation writes its {budget} budget at {said}" in text, text
    assert "not yet estimated" not in text
    early, late = (phase.budget_write_bytes / r for r in (max(rates), min(rates)))
    # 4.7 s and 4.9 s: one figure (it read "ETA 0:04 to 0:04")
    assert _clock(early) == _clock(late) and f"ETA {_clock(early)} (Write Saturation {_clock(early)} (" in text, text
    # ... and as the phase starts, before its own first interval; its own rates then take over
    p.in_sequence([iops, wsat_plan], 1)
    p.test_starts(wsat_plan)
    p.phase(phase, 0)
    assert f"{budget} of the {budget} write budget left at {said}" in p._eta(now=NOW)
    interval(p, phase, 1, 150_000_000)
    assert "the write rate of this phase's 1 interval so far" in p._eta(now=NOW)


def test_a_stimulus_no_test_of_the_run_measured_leaves_the_write_budget_not_yet_estimated():
    profile = suites.make_profile("enterprise", quick=True)
    iops, wsat_plan = (registry.build_plan(t, profile, TARGET) for t in ("iops", "wsat"))
    p = RichProgress(Console(file=io.StringIO()), quiet=True)
    p.in_sequence([iops, wsat_plan], 0)
    _iops_rounds(p, iops, {"0/100 1024KiB": 900e6, "65/35 4KiB": 50e6})  # no RND 4 KiB W alone
    text = sequence_eta([wsat_plan], p.pace, p.measured)
    assert "not yet estimated" in text and "measured of" not in text and "same stimulus" not in text
    # Write Saturation at another outstanding IO is another stimulus
    other = registry.build_plan("wsat", replace(profile, queue_depth=8), TARGET)
    p.in_sequence([iops, other], 0)
    _iops_rounds(p, iops, {"0/100 4KiB": 100e6})
    assert "same stimulus" not in sequence_eta([other], p.pace, p.measured)
