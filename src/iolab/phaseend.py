"""When a phase may end: steady state (once the drive has left fresh-out-of-box), its write
budget or its time budget. The runner asks after every round; `iolab resume` asks the same of
the rounds a run stored before it stopped."""

from __future__ import annotations

from .manifest import manifest_of
from .plan import Deferred, Phase, TestPlan
from .steady import SteadyVerdict
from .store import RunStore
from .units import duration


def early_stop(
    phase: Phase,
    verdict: SteadyVerdict | None,
    written: int,
    elapsed: float,
    since_purge: int = 0,
    minimum: int = 0,
    what: str = "",
) -> str | None:
    """Why the phase ends after this round (steady state, a budget), or None to go on. Steady
    state is not accepted before the phase has written its own minimum (RWSW saturation tests)
    and `minimum` bytes were written since the purge (`steady_minimum`)."""
    if (
        verdict is not None
        and verdict.steady
        and phase.stop_on_steady
        and written >= (phase.min_write_bytes or 0)
        and since_purge >= minimum
    ):
        why = f"steady state reached in rounds {verdict.window[0]}-{verdict.window[-1]}"
        if minimum:
            why += (
                f", declared after {since_purge / 1e9:.3f} GB written since the purge "
                f"(≥ {what}, {minimum / 1e9:.3f} GB)"
            )
        return why
    if phase.budget_write_bytes is not None and written >= phase.budget_write_bytes:
        return f"wrote {written / 1e9:.3f} GB, the budget of {phase.budget_write_bytes / 1e9:.3f} GB"
    if phase.budget_seconds is not None and elapsed >= phase.budget_seconds:
        return f"ran {duration(phase.budget_seconds)}, the time budget"
    return None


def steady_minimum(plan: TestPlan, phase: Phase) -> int:
    """Bytes that must be written since the purge before this phase may be steady: a phase
    that stops at steady state and writes must have left fresh-out-of-box, whose flat plateau
    passes the steady-state rule too (SteadyRule.min_write_multiple)."""
    writes = any(s.op == "write" for c in phase.cells for s in c.workload.streams)
    if not (phase.tracking and phase.stop_on_steady and writes):
        return 0
    return plan.rule.min_write_bytes(plan.capacity)


def too_fresh(since_purge: int, minimum: int, what: str) -> str:
    return (
        f"steady state not reached: the window passed, but only {since_purge / 1e9:.3f} GB was written since "
        f"the purge, below the {what} ({minimum / 1e9:.3f} GB) a drive must take "
        "to leave fresh-out-of-box"
    )


def written_since_purge(store: RunStore, upto: int) -> int:
    """What the stored cells wrote from the last purge before plan phase `upto` up to now (a
    resumed run's count of `Runner.since_purge`)."""
    phases = manifest_of(store).plan.get("phases", [])
    first = upto
    while first > 0 and not phases[first].get("purge", True):
        first -= 1
    names = {p["name"] for p in phases[first : upto + 1]}
    return sum(
        c.write_bytes
        for kind in ("precondition", "measure", "interrupted")
        for c in store.cells(kind=kind, complete_only=False)
        if c.phase in names
    )


def rule_text(plan: TestPlan) -> str:
    """The steady-state rule as this plan uses it: the round limit of the phases that stop at
    steady state (their own, which a test may set above the profile's), and which phases only
    report it (Write Saturation runs to its budget whatever the verdict)."""
    phases = [ph for ph in plan.phases if isinstance(ph, Phase) and ph.tracking]
    stop = sorted({ph.max_rounds for ph in phases if ph.stop_on_steady and ph.max_rounds >= plan.rule.window})
    # a phase that tracks steady state but may not run a whole window is never evaluated (a
    # --max-rounds below the window): said as such, not as a run that tracks nothing
    short = [ph for ph in phases if ph.stop_on_steady and ph.max_rounds < plan.rule.window]
    report = [ph.name for ph in phases if not ph.stop_on_steady]
    parts = []
    if stop:
        parts.append(f"at most {' or '.join(map(str, stop))} rounds")
    for ph in short:
        parts.append(
            f"not evaluated in {ph.name}: at most {ph.max_rounds} round(s), fewer than the {plan.rule.window}-round window"
        )
    if report:
        parts.append(f"reported, not a stop, in {', '.join(report)} (each runs to its budget or limit)")
    if not stop and not report and any(isinstance(ph, Deferred) for ph in plan.phases):
        parts.append(f"at most {plan.rule.max_rounds} rounds")
    return plan.rule.describe("; ".join(parts) or "not evaluated (no phase tracks steady state)")
