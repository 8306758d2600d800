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
from iolab.core.units import counted, num, pct_text, share_text
from iolab.figures.compare import cell_percentile
from iolab.figures.demand import (
    BISECTION,
    RAMPS,
    SEARCHES,
    bisection_decision,
    halves,
    refined,
    rounds_mean,
    rounds_phase,
    search_phase,
    step_rule,
    steps,
    sustainable,
    threads_phase,
    undecided_text,
)
from iolab.figures.summary import CellAverage, PhaseSummary
from iolab.pages.report.char_endurance import endurance_pages
from iolab.pages.report.char_series import preconditioning_pages
from iolab.pages.report.model import Block, Figure, Page, Table, Text
from iolab.pages.report.plot_style import Series
from iolab.pages.report.rundata import RunData
from iolab.pages.report.rwsw_plots import Panel, panels
from iolab.pages.report.sections import table_pages
from iolab.pages.report.vector import Drawing


def _series(name: str, pts: list[tuple[float | None, float | None]]) -> Series:
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
                    _series("delivered", [(d, c.iops) for d, (_, c) in zip(demand, st)]),
                    _series("demanded", [(d, d) for d in demand]),
                ),
            ),
            Panel(
                "average latency vs demand",
                "latency (µs)",
                (_series("average", [(d, c.lat_mean_us) for d, (_, c) in zip(demand, st)]),),
            ),
            Panel(
                "maximum latency vs demand",
                "latency (µs)",
                (_series("maximum", [(d, c.lat_max_us) for d, (_, c) in zip(demand, st)]),),
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
            delivered.append(_series(lab, [(s.demand_iops, c.iops) for s, c in st]))
            avg.append(_series(lab, [(s.demand_iops, c.lat_mean_us) for s, c in st]))
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


# -- maximum IOPS -----------------------------------------------------------------------------


def _optimum(rounds: PhaseSummary | None, fallback: str) -> str:
    """Where the rounds ran: the stored workload of their cells (threads × QD)."""
    if rounds is not None and rounds.rows:
        w = rounds.rows[0].workload
        return f"TC{w['threads']}/QD{w['queue_depth']}"
    return fallback


def _captions(run: RunData, op: str, where: str) -> tuple[str, str]:
    """The searches' figure's source with their decisions, and the rounds' figure's own."""
    decided = [
        d["outcome"]
        for d in run.manifest.decisions
        if d.get("phase") in (search_phase(op), threads_phase(op), rounds_phase(op))
    ]
    src = (
        f"Source: results.db table cells, phases {search_phase(op)!r}, {threads_phase(op)!r} (one cell per "
        f"outstanding IO) and {rounds_phase(op)!r} (one cell per round)."
        # an outcome is a clause without its full stop: each ends its own sentence
        + "".join(f" Decision: {d.rstrip('. ')}." for d in decided)
    )
    # the rounds' figure names its own phase; the searches' decisions are under the figure above
    rsrc = (
        f"Source: results.db table cells, phase {rounds_phase(op)!r} (one cell per round) at {where}, "
        "the optimum the searches chose (their decisions are under the figure above)."
    )
    return src, rsrc


def _table_rows(
    st: list[tuple[Sample, CellAverage]], tst: list[tuple[Sample, CellAverage]], rounds: PhaseSummary | None
) -> tuple[tuple[str, ...], ...]:
    """Each search step and round once, under the step that measured it: the thread search
    starts at one thread at the queue depth the first search chose, so that point is measured
    twice, and its second row says so (a bare second "TC1/QD1" read as a row printed twice)."""
    rows, seen = [], set()
    for step, pts in (("queue-depth search", st), ("thread-count search", tst)):
        for s, c in pts:
            label = c.mix or s.key
            again = " (measured again: the thread-count search starts here)" if label in seen else ""
            seen.add(label)
            rows.append((step, label + again, str(s.outstanding), num(c.iops), num(c.lat_mean_us), num(c.lat_max_us)))
    for r in rounds.rows if rounds is not None else ():
        w = r.workload
        rows.append(
            (
                f"round {r.round} at the optimum",
                f"TC{w['threads']}/QD{w['queue_depth']}",
                str(w["threads"] * w["queue_depth"]),
                num(r.iops),
                num(r.lat_mean_us),
                num(r.lat_max_us),
            )
        )
    return tuple(rows)


def maxiops_pages(run: RunData) -> list[Page]:
    pages = preconditioning_pages(run)
    for op, _ in SEARCHES:
        search, rounds = run.phase(search_phase(op)), run.phase(rounds_phase(op))
        threads = run.phase(threads_phase(op))  # absent in runs stored before the thread search
        if search is None or not search.rows:
            pages.append(
                Page(f"Maximum IOPS — {op}", (Text((f"The {op} search was not reached (see Run Details).",)),))
            )
            continue
        st, tst = steps(search), steps(threads) if threads is not None else []
        best, best_cell = max(st + tst, key=lambda sc: sc[0].iops)
        label = best_cell.mix or best.key  # threads × QD (the thread search's keys name no QD)
        where = _optimum(rounds, label)
        mean = rounds_mean(rounds)
        verdict = f"Most {op} IOPS in the searches at {label} ({num(best.iops)} IOPS); " + (
            f"{counted(len(rounds.rows), 'round')} at {where} averaged {num(mean)} IOPS."
            if mean is not None and rounds is not None
            else "the rounds at the optimum were not measured."
        )
        src, rsrc = _captions(run, op, where)
        curves = [_series("queue-depth search", [(float(s.outstanding), c.iops) for s, c in st])]
        if tst and threads is not None:
            curves.append(
                _series(
                    f"thread search at QD{threads.rows[0].workload['queue_depth']}",
                    [(float(s.outstanding), c.iops) for s, c in tst],
                )
            )
        items = [Panel(f"{op} IOPS vs outstanding IO (searches)", "IOPS", tuple(curves))]
        png = panels(items, "outstanding IO (threads × QD, log scale)", 80, logx2=True)
        blocks: list[Block] = [
            Text((verdict,)),
            Figure(f"RND 4 KiB {op}s: the queue-depth and thread-count searches", png, src),
        ]
        if rounds is not None and rounds.rows:
            rpng = panels(
                [
                    Panel(
                        f"{op} IOPS per round at {where}",
                        "IOPS",
                        (_series("IOPS", [(float(r.round), r.iops) for r in rounds.rows]),),
                    )
                ],
                "round",
                60,
            )
            blocks.append(Figure(f"Rounds at the optimum ({where})", rpng, rsrc))
        pages.append(Page(f"Maximum IOPS — {op}", tuple(blocks)))
        searched = [*search.rows, *(threads.rows if threads else ()), *(rounds.rows if rounds else ())]
        pages += table_pages(
            f"Tabular Results — {op}",
            [
                Table(
                    f"{op}: queue-depth search, thread-count search, then the rounds at the optimum",
                    ("step", "TC/QD", "outstanding IO", "IOPS", "average (µs)", "maximum (µs)"),
                    _table_rows(st, tst, rounds),
                    src,
                    run.raw_links(searched) + run.store_links(),
                )
            ],
        )
    return pages + endurance_pages(run)


def maxiops_overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    items = []
    for op, _ in SEARCHES:
        for name in (search_phase(op), threads_phase(op)):
            lines = []
            for r, lab in zip(runs, labels):
                ph = r.phase(name)
                lines.append(_series(lab, [(float(s.outstanding), c.iops) for s, c in (steps(ph) if ph else [])]))
            if any(s.x for s in lines):
                items.append(Panel(f"{name}: IOPS vs outstanding IO", "IOPS", tuple(lines)))
    if not items:
        return []
    src = "Source: each run's results.db, the phases of the queue-depth and thread-count searches."
    return [
        Page(
            "Maximum IOPS — searches per drive",
            (
                Figure(
                    "IOPS vs outstanding IO, one line per drive",
                    panels(items, "outstanding IO (log scale)", 170, logx2=True),
                    src,
                ),
            ),
        )
    ]


def maxiops_view(ph: PhaseSummary, console: Console) -> None:
    t = RichTable(title=escape(ph.phase.name), title_justify="left")
    where = [f"TC{r.workload['threads']}/QD{r.workload['queue_depth']}" for r in ph.rows]
    # the queue-depth search names each cell by its TC/QD: one column, not the same one twice
    named = any(r.cell_key != w for r, w in zip(ph.rows, where))
    for col in ("cell", "threads/QD", "round", "IOPS", "avg µs", "max µs")[0 if named else 1 :]:
        t.add_column(col, justify="right")
    for r, w in zip(ph.rows, where):
        row = (w, str(r.round), num(r.iops), num(r.lat_mean_us), num(r.lat_max_us))
        t.add_row(*((escape(r.cell_key),) if named else ()), *row)
    console.print(t)
    if ph.rows and ph.phase.name.endswith("search"):
        best = max(ph.rows, key=lambda r: r.iops)
        console.print(
            f"most IOPS at TC{best.workload['threads']}/QD{best.workload['queue_depth']}: {num(best.iops)} IOPS"
        )
