"""The ETA of a phase that ends at its write budget (Write Saturation, the RWSW saturation
phases). The plan knows only its latest end, the time budget (24 h for WSAT), and scaled to
wall time that read "ETA 0:00–4:01:26" on a simulator run that took 5 seconds: no evidence of
the run put the end there. When the budget is written is the drive's write rate, so once this
phase's intervals measured it the ETA is the bytes left at the fastest and the slowest rate
measured, and the time budget (or round limit) in force is said only as what the phase takes
at most."""

from __future__ import annotations

from dataclasses import dataclass, field

from iolab.core.plan import Phase, TestPlan
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
    allows at most. `how` says what the estimate rests on (None: nothing measured yet)."""

    early_s: float
    late_s: float
    most_s: float
    limit: str
    how: str | None


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
