"""The ETA of a phase that ends at its write budget (Write Saturation, the RWSW saturation
phases). The plan knows only its latest end, the time budget (24 h for WSAT), and scaled to
wall time that read "ETA 0:00–4:01:26" on a simulator run that took 5 seconds: no evidence of
the run put the end there. When the budget is written is the drive's write rate, so once this
phase's intervals measured it the ETA is the bytes left at the fastest and the slowest rate
measured, and the time budget (or round limit) in force is said only as what the phase takes
at most. A write-budgeted phase still to come (a sequence's Write Saturation) is counted the
same way (`Ahead`): its first round in the expected end, its time budget only in the "at most",
and said to be not yet estimated."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from iolab.core.plan import Deferred, Phase, TestPlan
from iolab.core.results import RoundResult
from iolab.core.units import counted, eng, num


@dataclass
class PhaseWrites:
    """What the intervals of the phase under way wrote, as this process measured them."""

    written: int = 0
    rates: list[float] = field(default_factory=list)  # bytes per engine second, one per interval

    def add(self, result: RoundResult) -> None:
        self.written += result.write.io_bytes
        if result.write.io_bytes > 0 and result.runtime_s > 0:
            self.rates.append(result.write.io_bytes / result.runtime_s)


@dataclass(frozen=True)
class Estimate:
    """Planned (engine) seconds left in a write-budgeted phase: `early_s`–`late_s` at the
    fastest and slowest rate measured (both 0–`most_s` before any), and `most_s`, what `limit`
    allows at most. `how` says what the estimate rests on (None: nothing measured yet; "": no
    phase under way ends at a write budget, the plan's span is the estimate). `then`: the write
    budgets still to come, whose end nothing estimates yet (`Ahead.then`)."""

    early_s: float
    late_s: float
    most_s: float
    limit: str
    how: str | None
    then: str = ""


@dataclass(frozen=True)
class Ahead:
    """Planned seconds of the phases still to come: `early`–`late` expected, `most` at the
    latest. A write-budgeted phase ends when the drive has written its budget, at a rate not yet
    measured: it counts its first round in `early` and `late`, its time budget (or round limit)
    only in `most`, and names itself in `unknown` and its limit in `limits`."""

    early: float = 0.0
    late: float = 0.0
    most: float = 0.0
    unknown: tuple[str, ...] = ()
    limits: tuple[str, ...] = ()

    def __add__(self, other: Ahead) -> Ahead:
        return Ahead(
            self.early + other.early,
            self.late + other.late,
            self.most + other.most,
            self.unknown + other.unknown,
            self.limits + other.limits,
        )

    @property
    def then(self) -> str:
        """What the expected end leaves out, not yet estimated ("" when nothing)."""
        return " and ".join(self.unknown)

    @property
    def limit(self) -> str:
        """What puts the "at most" where it is ("Write Saturation to its time budget")."""
        return " and ".join(dict.fromkeys(self.limits))


def ahead(plan: TestPlan, phases: Sequence[Phase | Deferred] | None = None) -> Ahead:
    """The plan's `phases` (default: all) still to come."""
    out = Ahead()
    for ph in plan.phases if phases is None else phases:
        a, b = plan.phase_seconds(ph)
        if isinstance(ph, Phase) and ph.budget_write_bytes is not None:
            limit = "time budget" if ph.time_bound() else "round limit"
            budget = f"the time {plan.title} takes to write its {eng(ph.budget_write_bytes, 'B')} budget"
            out += Ahead(a, a, b, (budget,), (f"{plan.title} to its {limit}",))
        else:
            out += Ahead(a, b, b)
    return out


def plans_ahead(plans: Sequence[TestPlan]) -> Ahead:
    """Every phase of these plans, still to come."""
    out = Ahead()
    for p in plans:
        out += ahead(p)
    return out


def budget_estimate(plan: TestPlan, phase: Phase, done_s: float, writes: PhaseWrites) -> Estimate | None:
    """The rest of `phase` when it ends at a write budget, `done_s` planned seconds into it;
    None for any other phase (its plan's span is the estimate)."""
    budget = phase.budget_write_bytes
    if budget is None:
        return None
    most = max(0.0, plan.phase_seconds(phase)[1] - done_s)
    limit = "its time budget" if phase.time_bound() else "its round limit"
    if not writes.rates:
        return Estimate(0.0, most, most, limit, None)
    rest = max(0, budget - writes.written)
    fast, slow = max(writes.rates), min(writes.rates)
    rate = num(slow / 1e6) if fast == slow else f"{num(slow / 1e6)}–{num(fast / 1e6)}"
    how = (
        f"{eng(rest, 'B')} of the {eng(budget, 'B')} write budget left at {rate} MB/s, "
        f"the write rate of this phase's {counted(len(writes.rates), 'interval')} so far"
    )
    return Estimate(min(most, rest / fast), min(most, rest / slow), most, limit, how)
