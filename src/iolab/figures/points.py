"""Figures the PTS derives from measured series, as pure functions (no store, no plotting):
the recovery times of Cross Stimulus Recovery and the Max/Mid/Min operating points of DIRTH.
Reports and comparisons call them on what a run stored; unit tests call them on lists.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction

from iolab.core.percentages import fraction, fraction_below_one
from iolab.core.testparams import Param, positive_float, show_percent

# The UNVERIFIED definitions, declared once: the tests list them among their parameters and
# the reports read the values a run stored.
RECOVERY_TOLERANCE = Param(
    "recovery_tolerance",
    0.05,
    "Group 3 has recovered at its first interval with TP ≥ (1 − this) × group 1's mean TP",
    # below 100 %: at 100 % the bar is 0 MB/s, every group 3 "recovers" at its first interval and
    # the recovery time is a figure of the setting, not of the drive
    fraction_below_one,
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
    "MaxIOPS: the highest IOPS of the points whose ART is below this many ms; MidIOPS is chosen among the same points",
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


# Which points MidIOPS was chosen from, as a decision stores it (rule "mid_from"). The PTS names
# Mid only as the IOPS closest to (Max + Min) / 2 (A.11); iolab chooses it among the points Max is
# chosen from (ART under the cutoff), so Mid is never a point past the cutoff Max honours. A run
# decided before the rule was stored chose among all points whatever their ART: its label says so.
MID_UNDER_CUTOFF = "under-cutoff"
MID_ALL_POINTS = "all-points"
# MinIOPS is no choice but A.11's fixed lowest demand: its rule in words, never its point's own
# label again (a table's "MinIOPS | TC1/QD1 | TC1/QD1" read as a row filled in twice by mistake)
MIN_RULE = "fixed by A.11: the lowest demand, one thread at queue depth 1"
# ... which the decisions stored from c018c145 to 3de2984c gave as its label: "MinIOPS at TC1/QD1
# (7,569 IOPS, ART 132.1 µs: TC1/QD1)", a decision naming itself as its reason
_OLD_MIN_RULE = re.compile(r"(MinIOPS at TC1/QD1 \([^();]* µs): TC1/QD1\)")


def today_decision(d: dict) -> dict:
    """A stored decision as today's runs word it: an operating-points decision of those runs gives
    MinIOPS's rule in words (MIN_RULE); any other decision is returned as stored."""
    if (d.get("rule") or {}).get("name") != DECISION or not isinstance(d.get("outcome"), str):
        return d
    return d | {"outcome": _OLD_MIN_RULE.sub(lambda m: f"{m.group(1)}: {MIN_RULE})", d["outcome"])}


@dataclass(frozen=True)
class OperatingPoints:
    max: DemandPoint | None  # highest IOPS with ART below the cutoff (None: no point qualifies)
    mid: DemandPoint | None  # IOPS closest to (max + min) / 2, among the points `mid_from` says
    min: DemandPoint | None  # TC1/QD1
    art_cutoff_ms: float | None = None
    mid_from: str = MID_UNDER_CUTOFF
    # how many demand points had ART under the cutoff (None: a run decided before it was stored)
    under_cutoff: int | None = None
    # (name, owner): a name that is another's point, measured once, under the owner's cells (Mid
    # on Max's or Min's point). Empty for a run decided before points were shared: it measured
    # every name on its own, Mid on Min's point twice.
    shared: tuple[tuple[str, str], ...] = ()

    def named(self) -> tuple[tuple[str, DemandPoint | None], ...]:
        return tuple(zip(POINT_NAMES, (self.max, self.mid, self.min)))

    def record(self) -> dict:
        """The points as a decision stores them (decide.Decision.chosen), with how many points
        the cutoff left to choose Max and Mid from."""
        out: dict = {n: asdict(p) for n, p in self.named() if p is not None}
        out |= {SHARED_KEY: dict(self.shared)} if self.shared else {}
        return out | ({UNDER_CUTOFF_KEY: self.under_cutoff} if self.under_cutoff is not None else {})

    def cells_of(self, name: str) -> str:
        """The point name whose cells hold `name`'s pre-write and histogram (its own, unless shared)."""
        return dict(self.shared).get(name, name)

    def measured(self) -> tuple[tuple[str, DemandPoint], ...]:
        """The points the run measures, each once, in POINT_NAMES' order (the PTS's Max, Mid, Min)."""
        return tuple((n, p) for n, p in self.named() if p is not None and self.cells_of(n) == n)

    def shared_text(self, name: str) -> str:
        """'MidIOPS = MaxIOPS point TC4/QD8, histogram shared' where `name` reads another point's
        cells; "" where it has its own."""
        owner, p = self.cells_of(name), dict(self.named()).get(name)
        return f"{name} = {owner} point {p.label()}, histogram shared" if owner != name and p else ""

    def _art(self) -> str:
        return f"ART < {self.art_cutoff_ms:g} ms" if self.art_cutoff_ms is not None else "ART under the cutoff"

    def rules(self) -> tuple[str, str, str]:
        """Each point's rule in words, in POINT_NAMES' order, as this run chose them."""
        among = (
            f"among points with {self._art()}"
            if self.mid_from == MID_UNDER_CUTOFF
            else "among all points, whatever their ART (the rule this run was decided by)"
        )
        return (f"highest IOPS with {self._art()}", f"IOPS closest to (Max + Min) / 2 {among}", MIN_RULE)

    def mid_is(self) -> tuple[str, ...]:
        """The other points Mid is the same point as (MaxIOPS, MinIOPS), under today's rule."""
        if self.mid is None or self.mid_from != MID_UNDER_CUTOFF:
            return ()
        return tuple(n for n, p in (("MaxIOPS", self.max), ("MinIOPS", self.min)) if p == self.mid)

    def mid_same_as(self) -> str:
        """Where the cutoff left Mid no point of its own (it is Max's or Min's point): which, and
        why; "" otherwise, so a table's MidIOPS row never reads as a third point when it is not."""
        same = self.mid_is()
        if self.mid is None or not same:
            return ""
        # the ends that are themselves under the cutoff: Max always, Min when its ART is
        ends = list(dict.fromkeys(p for p in (self.max, self.min) if p is not None and self._under(p)))
        if self.under_cutoff is not None and self.under_cutoff <= len(ends):
            others = " and ".join(p.label() for p in ends)
            why = f"no point other than {others} has {self._art()}, and of those it is the nearest to (Max + Min) / 2"
        elif self.under_cutoff is not None:
            why = f"of the {self.under_cutoff} points with {self._art()} it is the nearest to (Max + Min) / 2"
        else:
            why = f"of the points with {self._art()} it is the nearest to (Max + Min) / 2"
        return f"MidIOPS is the same point as {' and '.join(same)} ({self.mid.label()}): {why}"

    def _under(self, p: DemandPoint) -> bool:
        return self.art_cutoff_ms is None or (p.art_us is not None and p.art_us < self.art_cutoff_ms * 1000)


def operating_points(points: Sequence[DemandPoint], art_cutoff_us: float) -> OperatingPoints:
    """DIRTH's Max/Mid/Min (A.11): Max = the highest IOPS whose ART is below the cutoff;
    Min = TC1/QD1; Mid = of the points Max is chosen from (ART below the cutoff), the one whose
    IOPS is closest to (Max + Min) / 2 (ties: the lower outstanding IO, the cheaper way to the
    same IOPS); it may be Max's or Min's own point when the cutoff leaves none nearer
    (OperatingPoints.mid_same_as says so). A point without an ART never qualifies."""
    qualified = [p for p in points if p.art_us is not None and p.art_us < art_cutoff_us]
    top = max(qualified, key=lambda p: (p.iops, -p.oio), default=None)
    low = next((p for p in points if p.threads == 1 and p.queue_depth == 1), None)
    mid = None
    if top is not None and low is not None:
        # distances to the middle in exact arithmetic: with two points under the cutoff both are
        # equally far, and float rounding of (max + min) / 2 chose either (a file run's Mid fell on
        # Max where the tie rule says Min's lower outstanding IO)
        twice_middle = Fraction(top.iops) + Fraction(low.iops)
        mid = min(qualified, key=lambda p: (abs(2 * Fraction(p.iops) - twice_middle), p.oio))
    return OperatingPoints(
        top, mid, low, art_cutoff_us / 1000, MID_UNDER_CUTOFF, len(qualified), _shared((top, mid, low))
    )


def _shared(points: tuple[DemandPoint | None, ...]) -> tuple[tuple[str, str], ...]:
    """Each name whose point another name owns: Max first, then Min, Mid last (Mid on Min's point is
    measured as Min; TC1/QD1 alone under the cutoff is all three, measured as Max), so a pre-write
    and histogram (70 min at full length) never run twice at one TC/QD."""
    at = {n: p.label() for n, p in zip(POINT_NAMES, points) if p is not None}
    owners = [n for n in ("MaxIOPS", "MinIOPS", "MidIOPS") if n in at]
    owner = {n: next(o for o in owners if at[o] == at[n]) for n in at}
    return tuple((n, owner[n]) for n in POINT_NAMES if n in at and owner[n] != n)


# The DIRTH flow's phases and cell keys: suites/dirth_flow.py builds them, reports read them.
PC_PHASE, DV_PHASE, OP_PHASE = "preconditioning", "demand variation", "operating points"
PREWRITE = "pre-write"
POINT_NAMES = ("MaxIOPS", "MidIOPS", "MinIOPS")
DECISION = "dirth-operating-points"
UNDER_CUTOFF_KEY = "points_under_cutoff"  # in the decision's `chosen`, beside the points
SHARED_KEY = "cells_of"  # in `chosen`: {name: owner} for a name measured under another's cells


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
    chosen, rule = d.get("chosen", {}), d.get("rule", {})
    under, shared = chosen.get(UNDER_CUTOFF_KEY), chosen.get(SHARED_KEY)
    top, mid, low = (DemandPoint(**chosen[n]) if isinstance(chosen.get(n), dict) else None for n in POINT_NAMES)
    return OperatingPoints(
        top,
        mid,
        low,
        art_cutoff_ms=rule.get("art_cutoff_ms"),
        # a decision stored before the rule was named chose Mid among all points
        mid_from=rule.get("mid_from", MID_ALL_POINTS),
        under_cutoff=under if isinstance(under, int) else None,
        # a decision stored before points were shared: each name has its own cells
        shared=tuple((str(n), str(o)) for n, o in shared.items()) if isinstance(shared, dict) else (),
    )
