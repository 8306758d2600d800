"""Pages, comparison overlays and terminal views of the two load-search
characterisation tests: latency vs IOPS demand and maximum IOPS.

Each figure is read back from the stored cells: a demand step's demanded rate from its
stored workload (`rate_iops`), a search level's outstanding IO from threads × QD.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from iolab.core.decide import BISECTION_LABEL, DemandShortfall, Sample, rule_from, sample_of_row
from iolab.core.errors import IolabError
from iolab.core.units import counted, num, pct_text, share_text
from iolab.figures.compare import cell_percentile
from iolab.figures.summary import CellAverage, PhaseSummary
from iolab.pages.report.char_endurance import endurance_pages
from iolab.pages.report.char_series import preconditioning_pages
from iolab.pages.report.model import Figure, Page, Table, Text
from iolab.pages.report.plot_style import Series
from iolab.pages.report.rundata import RunData
from iolab.pages.report.rwsw_plots import Panel, panels
from iolab.pages.report.sections import table_pages
from iolab.pages.report.vector import Drawing

RAMPS = (("read ramp", 100.0), ("write ramp", 0.0))  # phase name, read %
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


# -- reading the stored cells back ------------------------------------------------------------


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


def plot_series(name: str, pts: list[tuple[float | None, float | None]]) -> Series:
    known = [(x, y) for x, y in pts if x is not None and y is not None]
    return Series(name, *map(tuple, zip(*known))) if known else Series(name, (), ())


# -- latency vs demand ------------------------------------------------------------------------


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
    top, verdict = sustainable(ph, "highest ramp step met" if halved else "maximum sustainable IOPS")
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


def demand_pages(run: RunData) -> list[Page]:
    pages = preconditioning_pages(run)
    for name, _ in RAMPS:
        ph = run.phase(name)
        if ph is None or not ph.rows:
            pages.append(
                Page(f"Latency vs Demand — {name}", (Text((f"The {name} was not reached (see Run Details).",)),))
            )
            continue
        pages += _ramp_pages(run, name, ph)
    return pages + endurance_pages(run)


def _ramp_pages(run: RunData, name: str, ph: PhaseSummary) -> list[Page]:
    """One ramp's plot and table: its steps and its bisection's, in demand order."""
    halved = halves(run.phases, name)
    st = sorted([*steps(ph), *(x for h in halved for x in steps(h))], key=lambda x: x[0].demand_iops or 0.0)
    names = [name, *(h.phase.name for h in halved)]
    decided = [d for d in run.manifest.decisions if d.get("phase") == name]
    _, verdict = refined(run.phases, name)
    rule = step_rule(decided[-1]) if decided else None
    tolerance = rule.tolerance if rule is not None else None
    # with a bisection, the ramp's own decision ("maximum sustainable IOPS 64,000") is not the
    # answer: quoted alone under the table of its steps it contradicted the key figure (83,300)
    said = f" {verdict}" if halved else (f" The ramp's stop rule decided: {decided[-1]['outcome']}" if decided else "")
    src = (
        f"Source: results.db table cells, phases {', '.join(repr(n) for n in names)}: one cell per demanded rate "
        "(percentiles: each cell's histogram)." + said
    )
    rows = [
        (
            num(s.demand_iops),
            num(c.iops),
            _change(c.iops, s.demand, tolerance),
            num(c.lat_mean_us),
            pct_text(cell_percentile(c, 99), c.ios),
            pct_text(cell_percentile(c, 99.99), c.ios),
            num(c.lat_max_us),
        )
        for s, c in st
    ]
    columns = ("demanded IOPS", "delivered IOPS", "delivered − demanded", "average (µs)", "99 % (µs)")
    table = Table(
        f"Every demand step — {name}",
        (*columns, "99.99 % (µs)", "maximum (µs)"),
        tuple(rows),
        src,
        run.raw_links([*ph.rows, *(r for h in halved for r in h.rows)]) + run.store_links(),
    )
    figure = Figure(
        f"RND 4 KiB {name.split()[0]}s: delivered IOPS, average and maximum latency per demanded rate",
        _demand_plot(st),
        src,
    )
    return [Page(f"Latency vs Demand — {name}", (Text((verdict,)), figure))] + table_pages(
        f"Tabular Results — {name}", [table]
    )


def _demand_plot(st: list[tuple[Sample, CellAverage]]) -> Drawing:
    demand = [s.demand_iops for s, _ in st]
    return panels(
        [
            Panel(
                "delivered vs demanded IOPS",
                "IOPS",
                (
                    plot_series("delivered", [(d, c.iops) for d, (_, c) in zip(demand, st)]),
                    plot_series("demanded", [(d, d) for d in demand]),
                ),
            ),
            Panel(
                "average latency vs demand",
                "latency (µs)",
                (plot_series("average", [(d, c.lat_mean_us) for d, (_, c) in zip(demand, st)]),),
            ),
            Panel(
                "maximum latency vs demand",
                "latency (µs)",
                (plot_series("maximum", [(d, c.lat_max_us) for d, (_, c) in zip(demand, st)]),),
                logy=True,
            ),
        ],
        "demanded IOPS",
        150,
    )


def demand_overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    pages = []
    for name, _ in RAMPS:
        delivered, avg = [], []
        for r, lab in zip(runs, labels):
            ph = r.phase(name)
            st = steps(ph) if ph is not None else []
            delivered.append(plot_series(lab, [(s.demand_iops, c.iops) for s, c in st]))
            avg.append(plot_series(lab, [(s.demand_iops, c.lat_mean_us) for s, c in st]))
        if not any(s.x for s in delivered):
            continue
        src = f"Source: each run's results.db, phase {name!r}: one cell per demanded rate."
        png = panels(
            [
                Panel("delivered vs demanded IOPS", "IOPS", tuple(delivered)),
                Panel("average latency vs demand", "latency (µs)", tuple(avg), logy=True),
            ],
            "demanded IOPS",
            150,
        )
        pages.append(Page(f"Latency vs Demand — {name}, per drive", (Figure(f"{name}: one line per drive", png, src),)))
    return pages


def demand_view(ph: PhaseSummary, console: Console) -> None:
    t = RichTable(title=f"{escape(ph.phase.name)}: demanded vs delivered", title_justify="left")
    for col in ("demanded IOPS", "delivered IOPS", "avg µs", "99.99 % µs", "max µs"):
        t.add_column(col, justify="right")
    for s, c in steps(ph):
        t.add_row(
            num(s.demand_iops),
            num(c.iops),
            num(c.lat_mean_us),
            pct_text(cell_percentile(c, 99.99), c.ios),
            num(c.lat_max_us),
        )
    console.print(t)
    console.print(escape(halfway_text(ph) if BISECTION in ph.phase.name else sustainable(ph)[1]))


def _change(delivered: float, demanded: float, tolerance: float | None) -> str:
    """The delivered rate's change from the demand, "-0.7 %", with the digits that tell it from
    the tolerance: a step 2.007 % short printed "(-2.0 %), short by more than the 2 % tolerance"."""
    pct = (delivered / demanded - 1) * 100
    digits = 1
    while tolerance is not None and digits < 4 and round(abs(pct), digits) == round(tolerance * 100, digits):
        digits += 1
    return f"{pct:+.{digits}f} %"


def halfway_text(ph: PhaseSummary) -> str:
    """What one bisection step found: its demand met or not, by the ramp's rule. (A step is
    not a ramp: its rule does not decide in it, and the answer is the bisection's, in `refined`.)"""
    d = bisection_decision(ph)
    rule = step_rule(d) if d is not None else None
    done = [s for s, _ in steps(ph)]
    s = done[-1] if done else None
    if d is None or rule is None or s is None or not s.demand_iops:
        return "not measured" if s is None else undecided_text(s)
    return (
        f"Bisection step, {d['outcome']}: delivered {num(s.iops)} ({_change(s.iops, s.demand_iops, rule.tolerance)}), "
        + ("within" if rule.met(s) else "short by more than")
        + f" the {share_text(rule.tolerance)} tolerance: {'met' if rule.met(s) else 'not met'}. The answer of "
        "the ramp and its bisection is in the key figures."
    )
