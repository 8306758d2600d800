"""Pages, comparison overlays and terminal views of the two load-search
characterisation tests: latency vs IOPS demand and maximum IOPS.

Each figure is read back from the stored cells: a demand step's demanded rate from its
stored workload (`rate_iops`), a search level's outstanding IO from threads × QD.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from iolab.core.decide import Sample
from iolab.core.units import num, pct_text, share_text
from iolab.figures.compare import cell_percentile
from iolab.figures.demand import (
    BISECTION,
    RAMP_MET,
    RAMPS,
    bisection_decision,
    halves,
    refined,
    step_rule,
    steps,
    sustainable,
    undecided_text,
)
from iolab.figures.summary import CellAverage, PhaseSummary
from iolab.pages.report.char_endurance import endurance_pages
from iolab.pages.report.char_series import preconditioning_pages
from iolab.pages.report.model import Figure, Page, Table, Text
from iolab.pages.report.plot_style import Series
from iolab.pages.report.rundata import RunData
from iolab.pages.report.rwsw_plots import Panel, panels
from iolab.pages.report.sections import table_pages
from iolab.pages.report.vector import Drawing


def plot_series(name: str, pts: list[tuple[float | None, float | None]]) -> Series:
    known = [(x, y) for x, y in pts if x is not None and y is not None]
    return Series(name, *map(tuple, zip(*known))) if known else Series(name, (), ())


# -- latency vs demand ------------------------------------------------------------------------


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
    # the ramp's own decision, which its bisection refines: the answer is the key figure (the view
    # sees one phase, so it names the ramp's figure as the report's ramp page does)
    console.print(escape(halfway_text(ph) if BISECTION in ph.phase.name else sustainable(ph, RAMP_MET)[1]))


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
