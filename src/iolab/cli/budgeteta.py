"""The ETA of a phase that ends at its write budget (Write Saturation, the RWSW saturation
phases). The plan knows only its latest end, the time budget (24 h for WSAT), and scaled to
wall time that read "ETA 0:00–4:01:26" on a simulator run that took 5 seconds: no evidence of
the run put the end there. When the budget is written is the drive's write rate, so once this
phase's intervals measured it the ETA is the bytes left at the fastest and the slowest rate
measured, and the time budget (or round limit) in force is said only as what the phase takes
at most. A write-budgeted phase still to come (a sequence's Write Saturation) is counted the
same way (`Ahead`): its first round in the expected end, its time budget only in the "at most",
and said to be not yet estimated, unless this run measured the phase's stimulus before it
(`Measured`: a sequence's Write Saturation after its IOPS test, which ran the same RND 4 KiB W at
the same outstanding IO): then at the rates measured, said whose they are."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from iolab.core.plan import Deferred, Phase, TestPlan
from iolab.core.results import RoundResult
from iolab.core.units import counted, eng, num
from iolab.core.workload import Workload

RATES_KEPT = 5  # a stimulus is estimated at its latest this-many intervals (a steady-state window)


@dataclass
class PhaseWrites:
    """What the intervals of the phase under way wrote, as this process measured them."""

    written: int = 0
    rates: list[float] = field(default_factory=list)  # bytes per engine second, one per interval

    def add(self, result: RoundResult) -> None:
        self.written += result.write.io_bytes
        if result.write.io_bytes > 0 and result.runtime_s > 0:
            self.rates.append(result.write.io_bytes / result.runtime_s)


Stimulus = tuple[object, ...]


def stimulus(w: Workload) -> Stimulus:
    """What decides a workload's write rate, not how long or under which name it runs: the IOPS
    test's "RND 4KiB W" cell and Write Saturation's "RND 4 KiB W" at TC4/QD32 are one stimulus."""
    return (w.streams, w.threads, w.queue_depth, w.active_range, w.entropy, w.rate_iops, w.extra, w.zones)


@dataclass
class Measured:
    """Write rates this process measured, by stimulus, with the test that measured them (the
    latest to run it): what a write-budgeted phase still to come is estimated at when its one
    cell is a stimulus measured before. Nothing else: a phase no test of this run measured the
    stimulus of stays not yet estimated."""

    rates: dict[Stimulus, tuple[str, list[float]]] = field(default_factory=dict)

    def add(self, title: str, w: Workload, result: RoundResult) -> None:
        if result.write.io_bytes <= 0 or result.runtime_s <= 0:
            return
        by, got = self.rates.get(stimulus(w), (title, []))
        kept = got if by == title else []  # another test's rates of it are older than this one's
        self.rates[stimulus(w)] = (title, [*kept, result.write.io_bytes / result.runtime_s][-RATES_KEPT:])

    def of(self, phase: Phase) -> tuple[str, list[float]] | None:
        """(the test that measured it, its latest rates) of the phase's one cell, else None."""
        return self.rates.get(stimulus(phase.cells[0].workload)) if len(phase.cells) == 1 else None


def rate_span(rates: Sequence[float]) -> str:
    """The slowest–fastest of `rates` (bytes/s) in MB/s, one figure when they print alike."""
    slow, fast = num(min(rates) / 1e6), num(max(rates) / 1e6)
    return slow if slow == fast else f"{slow}–{fast}"


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
    # a write budget estimated at rates this run measured before it (Measured), and whose they are
    measured: tuple[str, ...] = ()

    def __add__(self, other: Ahead) -> Ahead:
        return Ahead(
            self.early + other.early,
            self.late + other.late,
            self.most + other.most,
            self.unknown + other.unknown,
            self.limits + other.limits,
            self.measured + other.measured,
        )

    @property
    def then(self) -> str:
        """What the expected end leaves out, not yet estimated ("" when nothing)."""
        return " and ".join(self.unknown)

    @property
    def limit(self) -> str:
        """What puts the "at most" where it is ("Write Saturation to its time budget")."""
        return " and ".join(dict.fromkeys(self.limits))


def ahead(plan: TestPlan, phases: Sequence[Phase | Deferred] | None = None, measured: Measured | None = None) -> Ahead:
    """The plan's `phases` (default: all) still to come; a write budget whose stimulus this run
    measured before (`measured`) at those rates, from its first round to its limit."""
    out = Ahead()
    for ph in plan.phases if phases is None else phases:
        a, b = plan.phase_seconds(ph)
        if isinstance(ph, Phase) and ph.budget_write_bytes is not None:
            limit = (f"{plan.title} to its {'time budget' if ph.time_bound() else 'round limit'}",)
            known = measured.of(ph) if measured is not None else None
            if known is None:
                budget = f"the time {plan.title} takes to write its {eng(ph.budget_write_bytes, 'B')} budget"
                out += Ahead(a, a, b, (budget,), limit)
                continue
            by, rates = known
            early, late = (min(b, max(a, ph.budget_write_bytes / r)) for r in (max(rates), min(rates)))
            how = (
                f"{plan.title} writes its {eng(ph.budget_write_bytes, 'B')} budget at {rate_span(rates)} MB/s, "
                f"the write rate of the {by} test's latest {counted(len(rates), 'interval')} of the same stimulus"
            )
            out += Ahead(early, late, b, (), limit, (how,))
        else:
            out += Ahead(a, b, b)
    return out


def plans_ahead(plans: Sequence[TestPlan], measured: Measured | None = None) -> Ahead:
    """Every phase of these plans, still to come."""
    out = Ahead()
    for p in plans:
        out += ahead(p, measured=measured)
    return out


def budget_estimate(
    plan: TestPlan, phase: Phase, done_s: float, writes: PhaseWrites, measured: Measured | None = None
) -> Estimate | None:
    """The rest of `phase` when it ends at a write budget, `done_s` planned seconds into it, at
    the rates of its intervals so far, else (before its first) of its stimulus measured before
    in this run; None for any other phase (its plan's span is the estimate)."""
    budget = phase.budget_write_bytes
    if budget is None:
        return None
    most = max(0.0, plan.phase_seconds(phase)[1] - done_s)
    limit = "its time budget" if phase.time_bound() else "its round limit"
    if writes.rates:
        rates, whose = writes.rates, f"this phase's {counted(len(writes.rates), 'interval')} so far"
    elif (known := measured.of(phase) if measured is not None else None) is not None:
        rates, whose = (
            known[1],
            f"the {known[0]} test's latest {counted(len(known[1]), 'interval')} of the same stimulus",
        )
    else:
        return Estimate(0.0, most, most, limit, None)
    rest = max(0, budget - writes.written)
    how = f"{eng(rest, 'B')} of the {eng(budget, 'B')} write budget left at {rate_span(rates)} MB/s, the write rate of {whose}"
    return Estimate(min(most, rest / max(rates)), min(most, rest / min(rates)), most, limit, how)
