"""What the two load-search characterisation tests (latency vs IOPS demand, maximum IOPS)
decided, read back from their stored phases: the phases' names, each demand step's sample, the
maximum sustainable IOPS and the sentence that says so. Their plans (suites/char_demand.py,
suites/char_maxiops.py), key figures and pages (pages/report/char_demand.py) read them alike;
here, below the pages, so that declaring the tests (`iolab tests`, a run) imports no plot.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from iolab.core.decide import BISECTION_LABEL, DemandShortfall, Sample, rule_from, sample_of_row
from iolab.core.errors import IolabError
from iolab.core.units import counted, num
from iolab.figures.summary import CellAverage, PhaseSummary

RAMPS = (("read ramp", 100.0), ("write ramp", 0.0))  # phase name, read %
# the rate each direction's figures are of, in the demand and the max-IOPS tests alike: a
# sequence holds one test's against the other's (figures/crosscheck.py)
RATE = {"read": "4 KiB random read IOPS", "write": "4 KiB random write IOPS"}
SEARCHES = (
    ("read", 100.0),
    ("write", 0.0),
)  # the max-IOPS test's phases: "<op> QD search", "<op> TC search", "<op> rounds"


def search_phase(op: str) -> str:
    return f"{op} QD search"


def threads_phase(op: str) -> str:
    return f"{op} TC search"


def rounds_phase(op: str) -> str:
    return f"{op} rounds"


def steps(ph: PhaseSummary) -> list[tuple[Sample, CellAverage]]:
    """Each measured cell of a phase with its sample (demand, outstanding IO), in run order."""
    by_key = {c.key: c for c in ph.cells}
    return [(sample_of_row(r), by_key[r.cell_key]) for r in ph.rows if r.cell_key in by_key]


def sustainable(ph: PhaseSummary | None, what: str = "maximum sustainable IOPS") -> tuple[float | None, str]:
    """The maximum sustainable IOPS the ramp's stop rule decided during the run (its stored
    decision, with the run's own --set tolerance and steps) and the sentence that says so, or
    None and why there is none. `what` names the figure in that sentence (a ramp refined by a
    bisection: the highest step it met, not yet the drive's maximum)."""
    if ph is None:
        return None, "not measured"
    samples = [s for s, _ in steps(ph)]
    decided = [d for d in ph.decisions if d["rule"].get("name") == DemandShortfall.name]
    if decided:
        d = decided[-1]
        rule = rule_from(d["rule"])
        n = rule.steps if isinstance(rule, DemandShortfall) else 1  # `decided` holds this rule's decisions
        top = chosen_demand(d["chosen"])
        if top is None:
            return None, f"{ph.phase.name}: no demand was met ({d['outcome']})"
        # the first of the steps that fell short: `steps` cells before and including the deciding one
        at = next((i for i, s in enumerate(samples) if s.key == d.get("cell") and s.round == d.get("round")), None)
        short = f" at {num(samples[at - n + 1].demand_iops)} IOPS" if at is not None and at >= n - 1 else ""
        return top, (
            f"The drive can no longer meet the increase in IOPS demand{short}: {what} "
            f"{num(d['chosen']['delivered_iops'])} (delivered at a demand of {num(top)}; rule: {rule.describe()})."
        )
    if not samples:
        return None, "not measured"
    return None, undecided_text(samples[-1])


def chosen_demand(chosen: dict[str, Any]) -> float | None:
    """The demand a DemandShortfall decision chose (older runs stored it as "max_sustainable_iops")."""
    return chosen.get("demand_iops", chosen.get("max_sustainable_iops"))


def top_step(phases: Sequence[PhaseSummary], name: str) -> tuple[Sample, CellAverage] | None:
    """Ramp `name`'s step at its maximum sustainable demand (`refined`), among the ramp's and its
    bisection's steps: what it delivered is the maximum sustainable IOPS, the demand its setting."""
    demand, ph = refined(phases, name)[0], ramp_phase(phases, name)
    every = [x for p in ([ph] if ph else []) + halves(phases, name) for x in steps(p)]
    return next((x for x in every if x[0].demand_iops == demand), None) if demand else None


def _answer(samples: Sequence[Sample], demand: float | None) -> str:
    """'maximum sustainable IOPS 85,549 (delivered at a demand of 87,100)': the measured figure first."""
    got = next((s.iops for s in samples if s.demand_iops == demand), None)
    return f"maximum sustainable IOPS {num(got)} (delivered at a demand of {num(demand)})"


def undecided_text(last: Sample) -> str:
    """The ramp ended without its rule deciding: it ran out of planned demands, whether or
    not the last ones were met (fewer short steps in a row than the rule needs)."""
    gap = f" ({(last.iops / last.demand_iops - 1) * 100:+.1f} %)" if last.demand_iops else ""
    return (
        f"The ramp's stop rule never decided: its last planned demand, {num(last.demand_iops)} IOPS, delivered "
        f"{num(last.iops)}{gap}; every step is in the table (raise --set demand=… to find the drive's limit)."
    )


def ramp_phase(phases: Sequence[PhaseSummary], name: str) -> PhaseSummary | None:
    return next((p for p in phases if p.phase.name == name), None)


def rounds_mean(ph: PhaseSummary | None) -> float | None:
    return sum(r.iops for r in ph.rows) / len(ph.rows) if ph is not None and ph.rows else None


RAMP_MET = "highest ramp step met"  # a ramp's own answer where a bisection refines it
BISECTION = ": bisection"  # suites/bisection.py names its steps '<ramp>: bisection <k>'


def halves(phases: Sequence[PhaseSummary], name: str) -> list[PhaseSummary]:
    """The bisection steps run after ramp `name` (none in a run stored before them)."""
    return [p for p in phases if p.phase.name.startswith(name + BISECTION)]


def refined(phases: Sequence[PhaseSummary], name: str) -> tuple[float | None, str]:
    """The maximum sustainable IOPS of ramp `name` with its bisection steps (sustainable: the
    ramp's own decision, or where the ramp ran out of demands undecided, the same rule over the
    ramp's and the bisection's steps together), and the sentence that says so."""
    ph, hs = ramp_phase(phases, name), halves(phases, name)
    halved = [s for h in hs for s, _ in steps(h)]
    top, verdict = sustainable(ph, RAMP_MET if halved else "maximum sustainable IOPS")
    decided = [d for d in (ph.decisions if ph else ()) if d["rule"].get("name") == DemandShortfall.name]
    judged = [rule for rule in (step_rule(d) for d in map(bisection_decision, hs) if d is not None) if rule]
    rule = rule_from(decided[-1]["rule"]) if decided else next(iter(judged), None)
    if not halved or ph is None or not isinstance(rule, DemandShortfall):
        return top, verdict
    ramp = [s for s, _ in steps(ph)]
    tried = ", ".join(f"{num(s.demand_iops)} {'met' if rule.met(s) else 'short'}" for s in halved)
    if decided:
        best = max((s.demand_iops for s in ramp + halved if s.demand_iops and rule.met(s)), default=None)
        return best, f"{verdict} Bisection between the steps: {tried}; {_answer(ramp + halved, best)}."
    # The ramp ran out of planned demands with fewer short steps in a row than its rule needs; the
    # bisection's steps may supply them: the rule decides on every step tried, in demand order.
    d = rule.check(name, sorted((s for s in ramp + halved if s.demand_iops), key=lambda s: s.demand_iops or 0.0))
    best = chosen_demand(d.chosen) if d is not None else None
    if best is None:
        return None, (
            f"{verdict} Bisection between the steps: {tried}; fewer than {counted(rule.steps, 'step')} above the "
            "highest demand met fell short, so the rule decided nothing: no maximum sustainable IOPS."
        )
    return best, (
        f"{verdict} Bisection between the steps: {tried}. Over the ramp's and the bisection's steps together, "
        f"the {counted(rule.steps, 'step')} tried above {num(best)} IOPS all fell short ({rule.describe()}): "
        f"{_answer(ramp + halved, best)}."
    )


def bisection_decision(ph: PhaseSummary) -> dict[str, Any] | None:
    """A bisection step's decision (suites/bisection.py), which names the demand it tried."""
    return next((d for d in ph.decisions if d.get("label") == BISECTION_LABEL), None)


def step_rule(d: dict[str, Any]) -> DemandShortfall | None:
    """The ramp's rule a bisection step was judged by (its decision's rule, as the ramp stored it);
    None for a rule this page does not judge by, or one this iolab does not know."""
    try:
        rule = rule_from(d["rule"])
    except IolabError:
        return None
    return rule if isinstance(rule, DemandShortfall) else None
