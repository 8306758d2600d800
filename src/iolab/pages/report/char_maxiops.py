"""Pages, comparison overlays and terminal view of the maximum-IOPS characterisation test:
its queue-depth and thread searches and the rounds at the optimum, read back from the stored
cells (a search level's outstanding IO from threads × QD)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from iolab.core.decide import Sample
from iolab.core.units import counted, num
from iolab.figures.demand import SEARCHES, rounds_mean, rounds_phase, search_phase, steps, threads_phase
from iolab.figures.summary import CellAverage, PhaseSummary
from iolab.pages.report.char_demand import plot_series
from iolab.pages.report.char_endurance import endurance_pages
from iolab.pages.report.char_series import preconditioning_pages
from iolab.pages.report.model import Block, Figure, Page, Table, Text
from iolab.pages.report.rundata import RunData
from iolab.pages.report.rwsw_plots import Panel, panels
from iolab.pages.report.sections import table_pages


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


def _measured_twice(st: list[tuple[Sample, CellAverage]], tst: list[tuple[Sample, CellAverage]], qd: int) -> str:
    """Where the thread search ran, and its first step against the same point in the queue-depth
    search: a file measured TC1 at 11,221 IOPS in the thread search where the queue-depth search
    had 31,596 at TC1/QD32, and nothing said it was that point measured again (on a file the
    host's cache and CPU serve the IOs, so its rate follows the machine's load between phases)."""
    first_s, first = tst[0]
    label = first.mix or first_s.key
    said = f"The thread search ran at QD{qd}, the queue-depth search's choice."
    before = next((c for s, c in st if (c.mix or s.key) == label), None)
    if before is None or not before.iops:
        return said
    change = 100 * (first.iops / before.iops - 1)
    return (
        f"{said} Its first step, {label}, measured that point again: {num(first.iops)} IOPS against "
        f"{num(before.iops)} in the queue-depth search ({change:+.0f} %); the difference is how far what the "
        "target delivers moved between the two searches, so its other steps are best read against it."
    )


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
        if tst and threads is not None:
            verdict += " " + _measured_twice(st, tst, threads.rows[0].workload["queue_depth"])
        src, rsrc = _captions(run, op, where)
        curves = [plot_series("queue-depth search", [(float(s.outstanding), c.iops) for s, c in st])]
        if tst and threads is not None:
            curves.append(
                plot_series(
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
                        (plot_series("IOPS", [(float(r.round), r.iops) for r in rounds.rows]),),
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
                lines.append(plot_series(lab, [(float(s.outstanding), c.iops) for s, c in (steps(ph) if ph else [])]))
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
    if ph.rows and ph.phase.name in {threads_phase(op) for op, _ in SEARCHES}:
        first = ph.rows[0].workload
        # its keys name no QD (runs with different optima compare cell by cell): said once here
        console.print(
            f"the thread search ran at QD{first['queue_depth']}, the queue-depth search's choice; its "
            f"TC{first['threads']} step measured that point again"
        )
