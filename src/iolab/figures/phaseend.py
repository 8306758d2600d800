"""When a phase may end: steady state (once the drive has left fresh-out-of-box), its write
budget or its time budget. The runner asks after every round; `iolab resume` asks the same of
the rounds a run stored before it stopped.

A flat window is not steady state by itself: a purged drive writes at a flat, fast plateau
until its free flash runs out. So a window that passes the SNIA rule counts as the drive's
steady state only on evidence that the drive left fresh-out-of-box (`fob_doubt`):
- the writes since the purge reached the rule's minimum (× the tested capacity);
- where the engine counts the flash blocks it erases (the simulator), the window's cells erased
  some: garbage collection is at work (a drive that has not erased a block since its purge is
  still writing into free flash, whatever the byte count says);
- the tested range is the drive's (the profile's active range): a quick run that tests 512 MiB
  of a larger drive it cannot copy smaller confines every write to that range, and the flash
  behind the rest of the drive stays free, so whatever it measures is that small range's
  steady state at best, never the drive's (`range_share`, labelled on every page).
This holds for every phase that tracks steady state and writes, Write Saturation included."""

from __future__ import annotations

from dataclasses import dataclass

from iolab.core.decide import Decision
from iolab.core.plan import Deferred, Phase, TestPlan
from iolab.core.steady import SteadyRule, SteadyVerdict
from iolab.core.units import counted, duration
from iolab.store.manifest import Manifest, manifest_of
from iolab.store.runstore import RunStore


@dataclass(frozen=True)
class Spent:
    """What a phase's measured rounds took so far, as its budgets and steady state count it."""

    written: int  # bytes its rounds wrote (the write budget)
    elapsed: float  # their engine seconds (the time budget)
    since_purge: int  # bytes written since the last purge (the steady-state minimum)
    capacity: int  # the drive's
    rounds: int = 0  # rounds measured
    # Engine seconds the next round is expected to take: each timed cell's planned length and the
    # drain to expect of it from its drains so far (run/budget.next_round_s, drain_estimate).
    next_round_s: float = 0.0


@dataclass(frozen=True)
class Ending:
    """Why a phase ends after a round, and the decision to record where one decided it."""

    reason: str
    decision: Decision | None = None


def early_stop(
    phase: Phase,
    verdict: SteadyVerdict | None,
    spent: Spent,
    minimum: int = 0,
    what: str = "",
    doubt: str | None = None,
    share: float | None = None,
) -> Ending | None:
    """Why the phase ends after this round (steady state, a budget), or None to go on. Steady
    state is not accepted before the phase has written its own minimum (RWSW saturation tests),
    `minimum` bytes were written since the purge (`steady_minimum`) and nothing casts `doubt`
    on the drive having left fresh-out-of-box (`fob_doubt`). A range cut below the drive's
    (`share`) ends the phase at its window too, as that range's steady state, never the drive's."""
    written, since_purge = spent.written, spent.since_purge
    if (
        verdict is not None
        and verdict.steady
        and phase.stop_on_steady
        and written >= (phase.min_write_bytes or 0)
        and since_purge >= minimum
        and doubt is None
    ):
        rounds = f"rounds {verdict.window[0]}-{verdict.window[-1]}"
        why = f"steady state reached in {rounds}" if share is None else f"the window passed in {rounds}"
        if minimum:
            why += (
                f", declared after {since_purge / 1e9:.3f} GB written since the purge "
                f"(≥ {what}, {minimum / 1e9:.3f} GB)"
            )
        if phase.min_write_bytes:  # the phase's own threshold beside it, each with its figure
            why += (
                f"{' and' if minimum else ', declared after'} {written / 1e9:.3f} GB of the workload's own writes "
                f"(≥ its minimum, {phase.min_write_bytes / 1e9:.3f} GB)"
            )
        return Ending(why if share is None else f"{why}; {range_label(share)}")
    if phase.budget_write_bytes is not None and written >= phase.budget_write_bytes:
        return Ending(f"wrote {written / 1e9:.3f} GB, the budget of {phase.budget_write_bytes / 1e9:.3f} GB")
    decision = time_budget(phase, spent)
    return Ending(decision.outcome, decision) if decision is not None else None


def time_budget(phase: Phase, spent: Spent) -> Decision | None:
    """The decision to end a phase at its time budget, or None to go on. An interval lasts past
    its planned length until the IO in flight at its end completes (as fio's runtime does: 100 ms
    cells of SEQ 1 MiB at TC4/QD32 measured 0.39 s each on the simulator), so a budget checked
    only for being spent was passed by up to an interval (XSR's 2 s group ran 2.37 s). No round
    starts when what is left of the budget is less than it is expected to take (its planned
    length and the drain to expect: the most measured, a single longest set aside once three are
    measured, run/budget.drain_estimate); a round still ends past the budget when it drains longer
    than that (the first has nothing before it), and the decision says by how much."""
    budget = phase.budget_seconds
    if budget is None:
        return None
    ran, left, noun = spent.elapsed, budget - spent.elapsed, "interval" if len(phase.cells) == 1 else "round"
    if left > 0 and left + 1e-9 * budget >= spent.next_round_s:  # the tolerance: float sums of exact lengths
        return None
    done = f"ran {duration(ran)} in {counted(spent.rounds, noun)}"
    if left > 0:
        planned = sum(c.workload.duration_s or 0.0 for c in phase.cells)
        outcome = (
            f"ran {duration(ran)} of its {duration(budget)} time budget in {counted(spent.rounds, noun)}: the next "
            f"would take {duration(spent.next_round_s)} ({duration(planned)} and the drain to expect, "
            f"{duration(spent.next_round_s - planned)}), more than the {duration(left)} left"
        )
    elif duration(ran) == duration(budget):
        outcome = f"{done}, the time budget"
    else:
        why = (
            "the first had none measured before it"
            if spent.rounds <= 1
            else "the last drained longer than the drain to expect from those before it"
        )
        outcome = (
            f"{done}, {duration(-left)} past its {duration(budget)} time budget (an interval lasts until its IO "
            f"in flight completes, and {why})"
        )
    chosen = {"ran_s": ran, "rounds": spent.rounds, "next_round_s": spent.next_round_s if left > 0 else None}
    return Decision(phase.name, {"name": "time-budget", "seconds": budget}, outcome, chosen, spent.rounds)


def record_ending(m: Manifest, ending: Ending | None) -> None:
    """Store the decision that ended a resumed run's phase after its stored rounds, unless the
    run stored it before it was stopped (between the decision and the phase's end)."""
    d = ending.decision if ending is not None else None
    if d is not None and not any(x.get("phase") == d.phase and x["rule"] == d.rule for x in m.decisions):
        m.decisions.append(d.record())


def after_round(
    store: RunStore, plan: TestPlan, phase: Phase, verdict: SteadyVerdict | None, spent: Spent
) -> Ending | None:
    """`early_stop` with the evidence behind a steady window."""
    minimum, what = steady_minimum(plan, phase), plan.rule.minimum_text()
    doubt = fob_doubt(store, phase, verdict, spent.since_purge, minimum, what)
    share = range_share(plan.capacity, spent.capacity, plan.profile.active_range)
    return early_stop(phase, verdict, spent, minimum, what, doubt, share)


def settle(
    store: RunStore, plan: TestPlan, phase: Phase, verdict: SteadyVerdict | None, spent: Spent
) -> tuple[bool | None, str]:
    """The phase's stored verdict once it ended: the window's, unless the evidence that the
    drive left fresh-out-of-box is missing; then False and why (to add to the stop reason)."""
    steady = verdict.steady if verdict is not None else None
    if not steady:
        return steady, ""
    doubt = fob_doubt(store, phase, verdict, spent.since_purge, steady_minimum(plan, phase), plan.rule.minimum_text())
    share = range_share(plan.capacity, spent.capacity, plan.profile.active_range)
    why = turned_down(spent.written, phase.min_write_bytes, doubt, share)
    return (False, why) if why is not None else (True, "")


def turned_down(written: int, min_write_bytes: int | None, doubt: str | None, share: float | None) -> str | None:
    """Why a window that passed the rule is stored as not steady (None: it is stored steady):
    the phase's own minimum unwritten, a `fob_doubt`, or a range cut below the drive's. The
    runner's `settle` and the self-audit's steady-evidence both decide by it."""
    if min_write_bytes and written < min_write_bytes:
        # A write-saturation test is not steady on a drive that has not yet been filled.
        return (
            f"only {written / 1e9:.3f} GB written, below the {min_write_bytes / 1e9:.3f} GB "
            "required before steady state is accepted"
        )
    if doubt is not None:
        return doubt
    # the tested range's steady state at best: never labelled the drive's
    return range_label(share) if share is not None else None


def writes(phase: Phase) -> bool:
    return any(s.op == "write" for c in phase.cells for s in c.workload.streams)


def steady_minimum(plan: TestPlan, phase: Phase) -> int:
    """Bytes that must be written since the purge before this phase may be steady: a phase
    that tracks steady state and writes must have left fresh-out-of-box, whose flat plateau
    passes the steady-state rule too (SteadyRule.min_write_multiple). Write Saturation, which
    runs to its budget whatever the verdict, is held to it as well: its verdict is printed."""
    return write_minimum(plan.rule, plan.capacity, bool(phase.tracking and writes(phase)))


def write_minimum(rule: SteadyRule, capacity: int, tracks_writes: bool) -> int:
    """`steady_minimum` from the rule, the tested capacity and whether the phase tracks steady
    state and writes (the self-audit asks it of the stored run)."""
    return rule.min_write_bytes(capacity) if tracks_writes else 0


def range_share(tested: int, capacity: int, active_range: float) -> float | None:
    """The share of the drive a run tested when a limit (--quick's) cut it below the range the
    profile names; None when it tests that range."""
    return tested / capacity if capacity and tested < int(capacity * active_range) else None


def range_label(share: float) -> str:
    """What every figure of a range-limited run says of itself."""
    return f"active range {share * 100:.2g} %: not the drive's steady state"


def window_erases(store: RunStore, phase: str, window: tuple[int, ...]) -> dict[int, float]:
    """Flash blocks the drive erased in each window round's cells, by the engine's own counter;
    empty when the engine counts none (fio: a real drive does not say)."""
    out: dict[int, float] = {}
    for c in store.cells(phase):
        if c.round in window and "erases" in (c.counters or {}):
            out[c.round] = out.get(c.round, 0.0) + float(c.counters["erases"])
    return out


def fob_doubt(
    store: RunStore, phase: Phase, verdict: SteadyVerdict | None, since_purge: int, minimum: int, what: str
) -> str | None:
    """Why a window that passed the rule is not yet evidence of steady state (None: it is)."""
    if verdict is None or not verdict.steady:
        return None
    tracks_writes = bool(phase.tracking and writes(phase))
    erased = window_erases(store, phase.name, verdict.window) if tracks_writes and since_purge >= minimum else {}
    return window_doubt(verdict.window, since_purge, minimum, what, tracks_writes, erased)


def window_doubt(
    window: tuple[int, ...], since_purge: int, minimum: int, what: str, tracks_writes: bool, erased: dict[int, float]
) -> str | None:
    """`fob_doubt` of a passing window from its numbers: the bytes written since the purge, and
    the flash blocks erased in each window round (`window_erases`) of a phase that tracks steady
    state and writes. The self-audit asks it of the stored cells, so the two cannot disagree."""
    if since_purge < minimum:
        return too_fresh(since_purge, minimum, what)
    if not tracks_writes:
        return None
    idle = [r for r in window if r in erased and erased[r] == 0]
    if idle:
        # garbage collection at work in every round: a round that erased nothing still wrote into
        # the free flash the purge left
        return (
            f"steady state not reached: the window (rounds {window[0]}-{window[-1]}) passed, but "
            f"the simulated drive erased no flash block in round(s) {', '.join(map(str, idle))}: it was still "
            "writing into the free flash a purge leaves (fresh-out-of-box), not collecting garbage"
        )
    return None


def too_fresh(since_purge: int, minimum: int, what: str) -> str:
    return (
        f"steady state not reached: the window passed, but only {since_purge / 1e9:.3f} GB was written since "
        f"the purge, below the {what} ({minimum / 1e9:.3f} GB) a drive must take "
        "to leave fresh-out-of-box"
    )


def since_last_purge(phases: list[dict], upto: int) -> list[str]:
    """The stored plan's phases from the last purge at or before phase `upto` to it, by name: a
    phase that does not purge goes on from the drive state the phases before it left."""
    first = upto
    while first > 0 and not phases[first].get("purge", True):
        first -= 1
    return [p["name"] for p in phases[first : upto + 1]]


def written_since_purge(store: RunStore, upto: int) -> int:
    """What the stored cells wrote from the last purge before plan phase `upto` up to now (a
    resumed run's count of `Runner.since_purge`)."""
    names = set(since_last_purge(manifest_of(store).plan.get("phases", []), upto))
    return sum(
        c.write_bytes
        for kind in ("precondition", "measure", "interrupted")
        for c in store.cells(kind=kind, complete_only=False)
        if c.phase in names
    )


NOT_APPLICABLE = "not applicable: no phase tracks steady state (each runs its own rounds or budget, as its phase says)"


def rule_text(plan: TestPlan) -> str:
    """The steady-state rule as this plan uses it: the round limit of the phases that stop at
    steady state (their own, which a test may set above the profile's), and which phases only
    report it (Write Saturation runs to its budget whatever the verdict). A plan none of whose
    phases tracks steady state (searches, ramps, bisections, QoS rounds) is told so, without the
    rule's window, limit or minimum: none of them applies to its phases."""
    phases = [ph for ph in plan.phases if isinstance(ph, Phase) and ph.tracking]
    stop = sorted({ph.max_rounds for ph in phases if ph.stop_on_steady and ph.max_rounds >= plan.rule.window})
    # a phase that tracks steady state but may not run a whole window is never evaluated (a
    # --max-rounds below the window): said as such, not as a run that tracks nothing
    short = [ph for ph in phases if ph.stop_on_steady and ph.max_rounds < plan.rule.window]
    report = [ph.name for ph in phases if not ph.stop_on_steady]
    # a phase built during the run that tracks steady state runs to the profile's round limit
    later = [ph.name for ph in plan.phases if isinstance(ph, Deferred) and ph.tracks]
    if not phases and not later:
        return NOT_APPLICABLE
    parts = []
    if stop:
        parts.append(f"at most {' or '.join(map(str, stop))} rounds")
    for ph in short:
        parts.append(
            f"not evaluated in {ph.name}: at most {counted(ph.max_rounds, 'round')}, fewer than the {plan.rule.window}-round window"
        )
    if report:
        parts.append(f"reported, not a stop, in {', '.join(report)} (each runs to its budget or limit)")
    if later:
        parts.append(f"at most {counted(plan.rule.max_rounds, 'round')} in {', '.join(later)} (built during the run)")
    return plan.rule.describe("; ".join(parts))
