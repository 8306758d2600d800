"""Plans that decide: stop rules a phase evaluates on its own results after every cell, and
the decisions they (or a phase built from earlier results) record.

A rule is a frozen dataclass with a `name` found in `RULES`, so the stored plan names the
rule and its parameters and `rule_from` makes it again. `check` sees the phase's samples so
far, in the order they were measured, and returns a `Decision` when the phase should end.
The runner stores every decision in the manifest (`decisions`); `iolab run`, `iolab show`
and the report's Run Details print them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import Field, asdict, dataclass, field
from typing import Any, ClassVar, Protocol

from iolab.core.cellschema import CellRow
from iolab.core.errors import IolabError
from iolab.core.results import RoundResult
from iolab.core.units import counted, given, measurable, num, percentile_min_ios, share_text
from iolab.core.workload import Workload


@dataclass(frozen=True)
class Sample:
    """One measured cell as a rule sees it."""

    round: int
    key: str
    iops: float
    demand_iops: float | None  # the workload's rate limit, when it has one
    outstanding: int  # threads × queue depth
    lat_mean_us: float | None = None
    # (percentile, µs) for each of PERCENTILE_COLUMNS, from the cell's (merged) histogram
    percentiles: tuple[tuple[float, float | None], ...] = ()
    # the IOs completed (read + write): a percentile read off fewer than units.measurable asks is
    # not one (a 99 % of 500 IOs is their 5th-slowest), so no rule may judge by it; None: not known
    ios: int | None = None

    @classmethod
    def of(cls, rnd: int, key: str, w: Workload, result: RoundResult) -> Sample:
        return cls(
            rnd,
            key,
            result.iops,
            w.rate_iops,
            w.outstanding,
            result.lat_mean_us,
            tuple((p, result.percentile(p)) for p in PERCENTILE_COLUMNS),
            result.ios,
        )

    def percentile(self, pct: float) -> float | None:
        """The pct % latency, None where none was measured or the IOs are too few to measure it."""
        return dict(self.percentiles).get(pct) if not self.too_few(pct) else None

    def too_few(self, pct: float) -> bool:
        """Whether IOs completed, but too few to measure the pct % latency from (units.measurable)."""
        return bool(self.ios) and not measurable(pct, self.ios)

    @property
    def demand(self) -> float:
        """The demanded IOPS; 0 for a cell without a rate limit (the rules skip those)."""
        return self.demand_iops or 0.0


# The percentiles results.db stores per cell (cellschema), so a resumed run's rules see the
# same figures the live run saw.
PERCENTILE_COLUMNS = {99.0: "p99", 99.9: "p99_9", 99.99: "p99_99", 99.999: "p99_999"}


def sample_of_row(row: CellRow) -> Sample:
    """A stored cell (its workload is the stored record of Sample.of's workload)."""
    w = row.workload
    return Sample(
        row.round,
        row.cell_key,
        row.iops,
        w.get("rate_iops"),
        w["threads"] * w["queue_depth"],
        row.lat_mean_us,
        tuple((p, getattr(row, col)) for p, col in PERCENTILE_COLUMNS.items()),
        row.ios,
    )


BISECTION_LABEL = "bisection"  # the label of a bisection step's decision (suites/bisection.py)


@dataclass(frozen=True)
class Decision:
    """What a rule or a phase builder decided: stored in manifest.decisions as a dict."""

    phase: str
    rule: dict[str, Any]  # {"name": ..., parameters ...}: rule_record of the rule that judged
    outcome: str  # one sentence with the measured figures it rests on
    chosen: dict[str, Any] = field(default_factory=dict)  # the values decided (e.g. {"queue_depth": 16})
    round: int | None = None  # after which round (None: before the phase ran)
    cell: str | None = None  # after which cell
    # Who decided, where not the rule itself: a bisection step (BISECTION_LABEL) is built by the
    # bisection and judged by its ramp's rule, whose record `rule` is, as the ramp stored it.
    label: str | None = None

    def record(self) -> dict[str, Any]:
        """The stored dict; `label` only where there is one (the other decisions stay as they were)."""
        out = asdict(self)
        if self.label is None:
            del out["label"]
        return out


def stored_decision(d: dict[str, Any]) -> dict[str, Any]:
    """A stored decision in today's form. A bisection step's decision stored before `label`
    existed named the rule "bisection", with the ramp rule's parameters and, from 178c823 on, its
    name as `judged_by` (before that, the parameters alone name it: tolerance and steps are
    demand-shortfall's, percentile and bound_us latency-bound's)."""
    rule = d.get("rule") or {}
    if rule.get("name") != BISECTION_LABEL or "label" in d:
        return d
    params = {k: v for k, v in rule.items() if k not in ("name", "judged_by")}
    name = rule.get("judged_by") or next(
        (n for n in RULES if set(rule_record(RULES[n]())) - {"name"} == set(params)), None
    )
    return d | {"rule": {"name": name or BISECTION_LABEL, **params}, "label": BISECTION_LABEL}


def decision_text(d: dict[str, Any]) -> str:
    """A stored decision (Decision.record()) as `iolab show` and the report print it."""
    where = (
        "before it ran"
        if d.get("round") is None
        else f"after round {d['round']}" + (f", cell {d['cell']}" if d.get("cell") else "")
    )
    rule = d["rule"]
    params = ", ".join(f"{k}={v}" for k, v in rule.items() if k not in ("name", "describe"))
    # a decision judged by a rule it was not made by (a bisection step, by its ramp's rule) names
    # both: the parameters are that rule's, not the decision's own (a ramp's `steps` is not the bisection's)
    how = f"{rule['name']}({params})"
    return f"{d['phase']} ({where}): {d['label'] + ', judged by ' if d.get('label') else ''}{how}: {d['outcome']}"


class StopRule(Protocol):
    name: ClassVar[str]
    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]  # a dataclass: rule_record stores its fields

    def check(self, phase: str, samples: Sequence[Sample]) -> Decision | None: ...
    def describe(self) -> str: ...


def rule_record(rule: StopRule) -> dict[str, Any]:
    """The rule as the stored plan names it: its name and its parameters."""
    return {"name": rule.name, **asdict(rule)}


def _fraction(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 <= value < 1:
        raise IolabError(f"stop rule {what}: {value!r} is not allowed; give a fraction from 0 to below 1.")
    return float(value)


def _steps(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise IolabError(f"stop rule {what}: {value!r} is not allowed; give a whole number, at least 1.")
    return value


@dataclass(frozen=True)
class DemandShortfall:
    """A demand ramp ends once `steps` cells in a row delivered less than their demanded
    IOPS by more than `tolerance`; the maximum sustainable IOPS is what the step of the highest
    demand met delivered (chosen: "demand_iops" and "delivered_iops"; older runs stored the demand
    as "max_sustainable_iops", which pages/report/char_demand.chosen_demand reads too)."""

    name: ClassVar[str] = "demand-shortfall"
    tolerance: float = 0.02
    steps: int = 2

    def __post_init__(self) -> None:
        _fraction(self.tolerance, "demand-shortfall tolerance")
        _steps(self.steps, "demand-shortfall steps")

    def describe(self) -> str:
        return (
            f"stop after {counted(self.steps, 'cell')} in a row delivering more than {share_text(self.tolerance)} below "
            "the demanded IOPS"
        )

    def check(self, phase: str, samples: Sequence[Sample]) -> Decision | None:
        demanded = [s for s in samples if s.demand_iops]
        last = demanded[-self.steps :]
        if len(last) < self.steps or not all(self._short(s) for s in last):
            return None
        met = max((m for m in demanded if not self._short(m)), key=lambda m: m.demand, default=None)
        s = last[-1]
        outcome = (
            f"delivered {num(s.iops)} IOPS at a demand of {num(s.demand_iops)} "
            f"({(s.iops / s.demand - 1) * 100:+.1f} %) for {counted(self.steps, 'step')}: "
            + (
                # the figure is what the step delivered; its demand is a setting, named as one. Not
                # "maximum sustainable IOPS": the bisection after the ramp (suites/bisection.py) refines
                # it, and show and Run Details printed this 63,993 beside the key figure's 82,707
                f"highest ramp step met {num(met.iops)} (delivered at a demand of {num(met.demand_iops)}, within "
                f"{share_text(self.tolerance)})"
                if met is not None
                else "no demand was met, so no sustainable rate was found"
            )
        )
        chosen = {"demand_iops": met.demand_iops, "delivered_iops": met.iops} if met else {}
        return Decision(phase, rule_record(self), outcome, chosen, s.round, s.key)

    def _short(self, s: Sample) -> bool:
        return s.iops < s.demand * (1 - self.tolerance)

    def met(self, s: Sample) -> bool:
        """Whether a step delivered its demand within the tolerance."""
        return not self._short(s)


@dataclass(frozen=True)
class NoGain:
    """A ramp of rising load (queue depth, threads) ends once `steps` cells in a row gained
    less than `min_gain` in IOPS over the best before them; the last cell that gained at least
    `min_gain` is chosen (`last_gain`): a step that bought less than the rule asks, often at a
    much higher latency, is not the answer even when its IOPS are a little higher."""

    name: ClassVar[str] = "no-gain"
    min_gain: float = 0.02
    steps: int = 1

    def __post_init__(self) -> None:
        _fraction(self.min_gain, "no-gain min_gain")
        _steps(self.steps, "no-gain steps")

    def describe(self) -> str:
        return f"stop after {counted(self.steps, 'cell')} in a row gaining less than {share_text(self.min_gain)} IOPS over the best so far"

    def check(self, phase: str, samples: Sequence[Sample]) -> Decision | None:
        if len(samples) <= self.steps:
            return None
        before = samples[: -self.steps]
        best = max(before, key=lambda s: s.iops)
        if any(s.iops >= best.iops * (1 + self.min_gain) for s in samples[-self.steps :]):
            return None
        s, top = samples[-1], last_gain(phase, samples, self.min_gain)
        outcome = (
            f"{s.key}: {num(s.iops)} IOPS, {(s.iops / best.iops - 1) * 100:+.1f} % against the best before "
            f"({best.key}: {num(best.iops)} IOPS), less than {share_text(self.min_gain)} gained for "
            f"{counted(self.steps, 'step')}: chosen {top.key} ({num(top.iops)} IOPS), the last step that gained "
            f"at least {share_text(self.min_gain)}"
        )
        return Decision(
            phase,
            rule_record(self),
            outcome,
            {"best": top.key, "outstanding": top.outstanding, "iops": top.iops},
            s.round,
            s.key,
        )


@dataclass(frozen=True)
class LatencyBound:
    """A demand ramp ends at the first step whose latency `percentile` (from the step's merged
    histogram) exceeds `bound_us`; the answer is the highest demand whose percentile met it.
    A step with no latency measured (no IO completed, or too few IOs to measure the percentile:
    Sample.too_few) never meets the bound: nothing shows it met. Such a step ends the ramp only
    when the drive fell short of its demand; one that delivered it (a low demand in a short
    cell) is passed over, as the steps above it complete more IOs."""

    name: ClassVar[str] = "latency-bound"
    percentile: float = 99.0
    bound_us: float = 1000.0

    def __post_init__(self) -> None:
        if self.percentile not in PERCENTILE_COLUMNS:
            raise IolabError(
                f"stop rule latency-bound percentile: {self.percentile!r} is not allowed; choose one of "
                f"{', '.join(f'{p:g}' for p in PERCENTILE_COLUMNS)} (the percentiles stored per cell)."
            )
        b = self.bound_us
        if isinstance(b, bool) or not isinstance(b, (int, float)) or not math.isfinite(b) or b <= 0:
            raise IolabError(f"stop rule latency-bound bound_us: {b!r} is not allowed; give a latency above 0 µs.")

    def describe(self) -> str:
        return f"stop at the first demand step whose {self.percentile:g} % latency exceeds {given(self.bound_us)} µs"

    def met(self, s: Sample) -> bool:
        v = s.percentile(self.percentile)
        return v is not None and v <= self.bound_us

    def check(self, phase: str, samples: Sequence[Sample]) -> Decision | None:
        if not samples or self.met(samples[-1]) or self._passed_over(samples[-1]):
            return None
        return self.decide(phase, samples)

    def _passed_over(self, s: Sample) -> bool:
        """Too few IOs to judge, yet the demand delivered: the cell time's limit, not the drive's."""
        return s.too_few(self.percentile) and bool(s.demand_iops) and s.iops >= 0.98 * (s.demand_iops or 0.0)

    def _short(self, s: Sample) -> str:
        need = percentile_min_ios(self.percentile)
        return f"its {counted(s.ios or 0, 'IO')} are too few to measure a {self.percentile:g} %, which needs {need:,}"

    def decide(self, phase: str, samples: Sequence[Sample]) -> Decision:
        """The answer on a finished ramp, broken or not."""
        if not samples:
            return Decision(phase, rule_record(self), "no demand step was measured: no demand step met the bound")
        s = samples[-1]
        best = max((m for m in samples if m.demand_iops and self.met(m)), key=lambda m: m.demand, default=None)
        p = f"{self.percentile:g} %"
        if self.met(s):
            head = (
                f"every step met {p} ≤ {given(self.bound_us)} µs up to the last demand of {num(s.demand_iops)} IOPS "
                "(the bound did not break; the maximum may be higher)"
            )
        elif s.too_few(self.percentile):
            head = (
                f"{p} latency not measured at a demand of {num(s.demand_iops)} IOPS (delivered {num(s.iops)}; "
                f"{self._short(s)}), so it did not show the bound of {given(self.bound_us)} µs met"
            )
        else:
            head = (
                f"{p} latency {_us(s.percentile(self.percentile))} at a demand of {num(s.demand_iops)} IOPS "
                f"(delivered {num(s.iops)}) broke the bound of {given(self.bound_us)} µs"
            )
        if best is None:
            tail = "no demand step met the bound"
            chosen: dict[str, Any] = {}
        else:
            tail = (
                f"highest demand meeting it: {num(best.demand_iops)} IOPS (delivered {num(best.iops)}, "
                f"{p} {_us(best.percentile(self.percentile))})"
            )
            chosen = {
                "demand_iops": best.demand_iops,
                "delivered_iops": best.iops,
                "latency_us": best.percentile(self.percentile),
                "step": best.key,
            }
        return Decision(phase, rule_record(self), f"{head}: {tail}", chosen, s.round, s.key)


def _us(v: float | None) -> str:
    return "not measured" if v is None else f"{num(v)} µs"


RULES: dict[str, Callable[..., StopRule]] = {r.name: r for r in (DemandShortfall, NoGain, LatencyBound)}


def rule_from(record: dict[str, Any]) -> StopRule:
    """The rule a stored plan names (see `rule_record`)."""
    params = dict(record)
    name = params.pop("name", None)
    if name not in RULES:
        raise IolabError(f"stop rule {name!r}: unknown; iolab knows {', '.join(RULES)}.")
    try:
        return RULES[name](**params)
    except TypeError as e:
        raise IolabError(f"stop rule {name!r}: {e}") from None


def last_gain(phase: str, samples: Sequence[Sample], min_gain: float) -> Sample:
    """A load search's answer: the last sample that gained at least `min_gain` in IOPS over
    the best before it (the first sample stands on its own)."""
    if not samples:
        raise IolabError(f"phase {phase!r}: no measured cells to choose from.")
    chosen, best = samples[0], samples[0].iops
    for s in samples[1:]:
        if s.iops >= best * (1 + min_gain):
            chosen = s
        best = max(best, s.iops)
    return chosen


def best_by_iops(phase: str, samples: Sequence[Sample]) -> Sample:
    """The sample with the most IOPS (a search's answer)."""
    if not samples:
        raise IolabError(f"phase {phase!r}: no measured cells to choose from.")
    return max(samples, key=lambda s: s.iops)


def knee(phase: str, samples: Sequence[Sample]) -> Sample:
    """A load search's answer by the knee of its curve (Kneedle, Satopää et al. 2011, without
    its smoothing): on IOPS against log₂ of the outstanding IO, the sample farthest above the
    straight line from the first sample to the last. Distance is measured vertically, which
    picks the same sample as the perpendicular distance in Kneedle's normalised axes. A curve
    with no sample above that line has not bent (it is straight or still steepening): the
    sample with the most IOPS."""
    if not samples:
        raise IolabError(f"phase {phase!r}: no measured cells to choose from.")
    first, last = samples[0], samples[-1]
    x0, x1 = math.log2(first.outstanding), math.log2(last.outstanding)
    if x1 == x0:
        return best_by_iops(phase, samples)

    def above(s: Sample) -> float:
        return s.iops - (first.iops + (last.iops - first.iops) * (math.log2(s.outstanding) - x0) / (x1 - x0))

    top = max(samples, key=above)
    # a tolerance, so that rounding on a straight line is not taken for a bend
    return top if above(top) > 1e-9 * max(s.iops for s in samples) else best_by_iops(phase, samples)
