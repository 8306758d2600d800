"""The figures of Host Idle Recovery (SNIA PTS 2.0), read from a run's phases: the
preconditioning steady-state level, and per wait state the mean IOPS of its bursts and of
its return-to-baseline segment. The report pages (report/hir.py), the terminal view and the
comparison read the same numbers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from iolab.figures.summary import PhaseSummary
from iolab.store.runstore import CellRow

PC_PHASE = "preconditioning"
WAIT_PREFIX, BASELINE_PREFIX = "wait ", "baseline after wait "


def wait_phase(idle_s: float) -> str:
    return f"{WAIT_PREFIX}{idle_s:g} s"


def baseline_phase(idle_s: float) -> str:
    return f"{BASELINE_PREFIX}{idle_s:g} s"


def _mean(rows: Sequence[CellRow]) -> float | None:
    return sum(r.iops for r in rows) / len(rows) if rows else None


@dataclass(frozen=True)
class WaitState:
    idle_s: float
    bursts: tuple[CellRow, ...]  # complete bursts, each after its idle
    baseline: tuple[CellRow, ...]  # the continuous writes that follow

    @property
    def burst_iops(self) -> float | None:
        return _mean(self.bursts)

    @property
    def baseline_iops(self) -> float | None:
        return _mean(self.baseline)


@dataclass(frozen=True)
class HirResult:
    pc: PhaseSummary | None
    steady_iops: float | None  # the PC tracking variable's window average: the level recovery is measured against
    waits: tuple[WaitState, ...]  # in the order run

    def level_words(self) -> str:
        """What recovery is measured against, in words: the window average of the tracking
        variable, which is each round's last interval, not the mean of every interval in the
        window (with 2 intervals a round the two differed by 2 %: 34,887 vs 35,605 IOPS)."""
        name = self.pc.verdicts[0].name if self.pc is not None and self.pc.verdicts else "its tracking variable"
        return f"the preconditioning window's average of {name}, each round's last interval"

    def recovery(self, w: WaitState) -> float | None:
        """Mean burst IOPS over the preconditioning steady-state level (1 = no recovery)."""
        return w.burst_iops / self.steady_iops if w.burst_iops is not None and self.steady_iops else None


def hir_result(phases: Sequence[PhaseSummary]) -> HirResult:
    by_name = {p.phase.name: p for p in phases}
    pc = by_name.get(PC_PHASE)
    steady = pc.verdicts[0].average if pc is not None and pc.verdicts else None
    waits = []
    for p in phases:
        if not p.phase.name.startswith(WAIT_PREFIX):
            continue
        idle = next((r.idle_before_s for r in p.rows if r.idle_before_s is not None), None)
        if idle is None:
            idle = float(p.phase.name[len(WAIT_PREFIX) :].split()[0])
        base = by_name.get(baseline_phase(idle))
        waits.append(WaitState(idle, p.rows, base.rows if base is not None else ()))
    return HirResult(pc, steady, tuple(waits))
