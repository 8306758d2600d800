"""What a test asks the runner to do: phases of purge, preconditioning and rounds of cells.

A test module (src/iolab/suites/*) turns a `Profile` and a `Target` into a `TestPlan`; the
runner executes any plan the same way and never knows which test it serves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .steady import SteadyRule
from .workload import Workload

Metric = Literal["iops", "mbps", "read_mbps", "write_mbps", "lat_mean_us", "lat_max_us"]


@dataclass(frozen=True)
class Cell:
    """One element of a round: a workload and the table coordinates it fills."""

    key: str  # unique within a phase, e.g. "65/35 4KiB"
    workload: Workload
    mix: str  # column label, e.g. "65/35" (R/W %)
    block_size: int  # row label, bytes


@dataclass(frozen=True)
class Tracking:
    """A steady-state tracking variable: one metric of one cell."""

    name: str
    cell_key: str
    metric: Metric


@dataclass(frozen=True)
class Phase:
    """Purge → preconditioning → rounds until steady state or a budget."""

    name: str
    cells: tuple[Cell, ...]
    tracking: tuple[Tracking, ...]
    purge: bool = True
    precondition: tuple[Workload, ...] = ()
    max_rounds: int = 25
    stop_on_steady: bool = True
    # Budgets end a phase early (Write Saturation: 4× capacity or 24 h); bytes count host writes
    # of the measurement rounds.
    budget_write_bytes: int | None = None
    budget_seconds: float | None = None
    # Steady state is not accepted before the measurement rounds wrote this much (RWSW
    # write-saturation tests: the drive must have taken its capacity in workload writes).
    min_write_bytes: int | None = None


@dataclass(frozen=True)
class Profile:
    """Enterprise/client settings and the optional quick (non-compliant) scaling."""

    name: Literal["enterprise", "client"] = "enterprise"
    spec: Literal["1.1", "2.0.2"] = "2.0.2"
    active_range: float = 1.0
    threads: int = 4
    queue_depth: int = 32
    write_cache: bool = False
    cell_seconds: float = 60.0
    precondition_factor: float = 2.0  # × user capacity (of the active range) for WIPC
    capacity_limit: int | None = None  # quick: test only this many bytes of the target
    quick: bool = False
    max_rounds: int = 25
    strict_steady: bool = False
    wsat_capacity_multiple: float = 4.0  # Write Saturation stops at this × capacity written …
    wsat_max_seconds: float = 24 * 3600.0  # … or after this long, whichever comes first
    # RWSW Multi-WSAT / Individual Streams: steady state counts only after this × capacity of
    # workload writes (UNVERIFIED in the RWSW spec; 1× fills the drive once, so GC has begun)
    rwsw_min_write_multiple: float = 1.0

    @property
    def compliant(self) -> bool:
        return not self.quick and self.cell_seconds >= 60 and self.capacity_limit is None and self.precondition_factor >= 2

    def noncompliance(self) -> list[str]:
        why = []
        if self.quick:
            why.append("quick profile")
        if self.cell_seconds < 60:
            why.append(f"{self.cell_seconds:g} s per cell instead of 60 s")
        if self.precondition_factor < 2:
            why.append(f"preconditioning {self.precondition_factor:g}× capacity instead of 2×")
        return why

    def rule(self) -> SteadyRule:
        return SteadyRule(max_rounds=self.max_rounds, strict=self.strict_steady)


@dataclass(frozen=True)
class TestPlan:
    test: str  # 'iops', 'throughput', 'latency', 'wsat'
    title: str  # e.g. "IOPS"
    spec: str  # e.g. "PTS 2.0.2 (Enterprise)"
    profile: Profile
    phases: tuple[Phase, ...]
    rule: SteadyRule
    capacity: int  # bytes addressed by the test (after any quick limit)
    parameters: tuple[tuple[str, str], ...] = field(default=())  # for the report's Test Parameters column
    notes: tuple[str, ...] = ()  # choices made where the spec is UNVERIFIED, printed in reports
