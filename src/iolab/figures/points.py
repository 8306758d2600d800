"""Figures the PTS derives from measured series, as pure functions (no store, no plotting):
the recovery times of Cross Stimulus Recovery and the Max/Mid/Min operating points of DIRTH.
Reports and comparisons call them on what a run stored; unit tests call them on lists.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from iolab.core.testparams import Param, fraction, positive_float, show_percent

# The UNVERIFIED definitions, declared once: the tests list them among their parameters and
# the reports read the values a run stored.
RECOVERY_TOLERANCE = Param(
    "recovery_tolerance",
    0.05,
    "Group 3 has recovered at its first interval with TP ≥ (1 − this) × group 1's mean TP",
    fraction,
    show_percent,
    "UNVERIFIED: iolab's choice; the A.10 implementation's rule is 0 % (TP ≥ group 1 mean), "
    "which group 1's fresh first minutes alone can put out of reach",
)
SETTLE_TOLERANCE = Param(
    "settle_tolerance",
    0.10,
    "Group 2 has settled at its first interval within ± this of its final level (mean TP of its last 5 intervals)",
    fraction,
    show_percent,
    "UNVERIFIED: iolab's definition",
)
ART_CUTOFF = Param(
    "art_cutoff_ms",
    5.0,
    "MaxIOPS point: the highest IOPS whose ART is below this many ms",
    positive_float,
    lambda v: f"{v:g} ms",
    "UNVERIFIED: A.11 implementation",
)


@dataclass(frozen=True)
class Recovery:
    """When a series reached its target: `minutes` from the start of the group to the end of
    the first interval at or past the target (None: never within the group)."""

    target: float
    minutes: float | None
    interval: int | None  # 1-based interval of the group


def recovery(
    minutes: Sequence[float], values: Sequence[float], target: float, *, rising: bool = True, band: float | None = None
) -> Recovery:
    """The first interval whose value is ≥ `target` (`rising`), ≤ it (not rising), or, with
    `band`, within ± band × target of it. `minutes` are the intervals' end times counted from
    the group's start."""
    if len(minutes) != len(values):
        raise ValueError(f"{len(minutes)} times for {len(values)} values")
    for i, (t, v) in enumerate(zip(minutes, values)):
        if band is not None:
            hit = abs(v - target) <= band * abs(target)
        else:
            hit = v >= target if rising else v <= target
        if hit:
            return Recovery(target, t, i + 1)
    return Recovery(target, None, None)


@dataclass(frozen=True)
class DemandPoint:
    """One measured point of the demand-variation grid."""

    threads: int
    queue_depth: int
    iops: float
    art_us: float | None

    @property
    def oio(self) -> int:
        return self.threads * self.queue_depth

    def label(self) -> str:
        return f"TC{self.threads}/QD{self.queue_depth}"


@dataclass(frozen=True)
class OperatingPoints:
    max: DemandPoint | None  # highest IOPS with ART below the cutoff (None: no point qualifies)
    mid: DemandPoint | None  # IOPS closest to (max + min) / 2
    min: DemandPoint | None  # TC1/QD1

    def named(self) -> tuple[tuple[str, DemandPoint | None], ...]:
        return tuple(zip(POINT_NAMES, (self.max, self.mid, self.min)))

    def record(self) -> dict:
        """The points as a decision stores them (decide.Decision.chosen)."""
        return {n: asdict(p) for n, p in self.named() if p is not None}


def operating_points(points: Sequence[DemandPoint], art_cutoff_us: float) -> OperatingPoints:
    """DIRTH's Max/Mid/Min (A.11): Max = the highest IOPS whose ART is below the cutoff;
    Min = TC1/QD1; Mid = the point whose IOPS is closest to (Max + Min) / 2 (ties: the lower
    outstanding IO, the cheaper way to the same IOPS). A point without an ART never qualifies
    for Max."""
    qualified = [p for p in points if p.art_us is not None and p.art_us < art_cutoff_us]
    top = max(qualified, key=lambda p: (p.iops, -p.oio), default=None)
    low = next((p for p in points if p.threads == 1 and p.queue_depth == 1), None)
    if top is None or low is None:
        return OperatingPoints(top, None, low)
    middle = (top.iops + low.iops) / 2
    mid = min(points, key=lambda p: (abs(p.iops - middle), p.oio))
    return OperatingPoints(top, mid, low)


# The DIRTH flow's phases and cell keys: suites/dirth_flow.py builds them, reports read them.
PC_PHASE, DV_PHASE, OP_PHASE = "preconditioning", "demand variation", "operating points"
PREWRITE = "pre-write"
POINT_NAMES = ("MaxIOPS", "MidIOPS", "MinIOPS")
DECISION = "dirth-operating-points"


def point_key(threads: int, depth: int) -> str:
    return f"TC{threads}/QD{depth}"


def parse_point(key: str) -> tuple[int, int] | None:
    tc, _, qd = key.partition("/")
    if not (tc.startswith("TC") and qd.startswith("QD") and tc[2:].isdigit() and qd[2:].isdigit()):
        return None
    return int(tc[2:]), int(qd[2:])


def decided_points(decisions: Iterable[dict]) -> OperatingPoints | None:
    """The Max/Mid/Min points as the run decided them (its stored decision), with the IOPS and
    ART the choice rested on; None when the run made no such decision."""
    d = next((d for d in decisions if d.get("rule", {}).get("name") == DECISION), None)
    if d is None:
        return None
    chosen = d.get("chosen", {})
    return OperatingPoints(
        *(DemandPoint(**chosen[n]) if isinstance(chosen.get(n), dict) else None for n in POINT_NAMES)
    )
