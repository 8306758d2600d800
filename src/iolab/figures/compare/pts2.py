"""The figures of the PTS 2.0 tests beyond IOPS/TP/LAT/WSAT, read from a run's phases:
Cross Stimulus Recovery (group levels, recovery times) and the demand and operating points of
the PTS DIRTH tests. The report pages (report/xsr.py, report/dirth.py) show the same numbers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from iolab.figures.compare import demand_cells
from iolab.figures.points import (
    OP_PHASE,
    PREWRITE,
    RECOVERY_TOLERANCE,
    SETTLE_TOLERANCE,
    DemandPoint,
    OperatingPoints,
    Recovery,
    decided_points,
    recovery,
)
from iolab.figures.summary import CellAverage, PhaseSummary
from iolab.store.runstore import CellRow

GROUPS = ("group 1", "group 2", "group 3")
SETTLE_WINDOW = 5  # group 2's final level: the mean of its last this-many intervals


@dataclass(frozen=True)
class Group:
    name: str
    rows: tuple[CellRow, ...]  # complete intervals, in order
    start_min: float  # minutes from the start of group 1 to this group's start
    minutes: tuple[float, ...]  # end of each interval, minutes from this group's start

    @property
    def mbps(self) -> tuple[float, ...]:
        return tuple(r.mbps for r in self.rows)

    @property
    def mean_mbps(self) -> float | None:
        return sum(self.mbps) / len(self.rows) if self.rows else None

    def final_mbps(self, n: int = SETTLE_WINDOW) -> float | None:
        tail = self.mbps[-n:]
        return sum(tail) / len(tail) if tail else None


@dataclass(frozen=True)
class XsrResult:
    groups: tuple[Group, ...]
    recovered: Recovery | None  # group 3 back to (1 − tol) × group 1's mean TP
    settled: Recovery | None  # group 2 within ± tol of its final level


def xsr_groups(phases: Sequence[PhaseSummary]) -> tuple[Group, ...]:
    by_name = {ph.phase.name: ph for ph in phases}
    out, t0 = [], 0.0
    for name in GROUPS:
        ph = by_name.get(name)
        rows = tuple(r for r in ph.rows if not r.partial) if ph else ()
        ends, t = [], 0.0
        for r in rows:
            t += r.runtime_s / 60
            ends.append(t)
        out.append(Group(name, rows, t0, tuple(ends)))
        t0 += t
    return tuple(out)


def xsr_result(
    phases: Sequence[PhaseSummary],
    recovery_tolerance: float = RECOVERY_TOLERANCE.default,
    settle_tolerance: float = SETTLE_TOLERANCE.default,
) -> XsrResult:
    g1, g2, g3 = xsr_groups(phases)
    recovered = settled = None
    base, final = g1.mean_mbps, g2.final_mbps()
    if g1.rows and g3.rows and base is not None:
        recovered = recovery(g3.minutes, g3.mbps, (1 - recovery_tolerance) * base)
    if g2.rows and final is not None:
        settled = recovery(g2.minutes, g2.mbps, final, band=settle_tolerance)
    return XsrResult((g1, g2, g3), recovered, settled)


# -- the DIRTH tests (PTS DIRTH, CBW) -------------------------------------------------------------


def demand_points(phases: Sequence[PhaseSummary]) -> list[DemandPoint]:
    """The demand-variation points over their measurement window, in the order run."""
    return [p for p, _ in demand_cells(phases)]


def chosen_points(phases: Sequence[PhaseSummary]) -> OperatingPoints | None:
    """The Max/Mid/Min points the run decided (its stored decision); None before it decided."""
    return decided_points(d for ph in phases if ph.phase.name == OP_PHASE for d in ph.decisions)


def point_cell(phases: Sequence[PhaseSummary], name: str) -> CellAverage | None:
    """The histogram workload's cell of the operating point `name` (MaxIOPS …): its own, or the
    cell of the point it is (OperatingPoints.shared: Mid on Min's point is measured once, as Min)."""
    ops = chosen_points(phases)
    owner = ops.cells_of(name) if ops else name
    op = next((ph for ph in phases if ph.phase.name == OP_PHASE), None)
    work = (c for c in (op.cells if op else ()) if not c.key.endswith(PREWRITE))
    return next((c for c in work if c.key.split()[0] == owner), None)
