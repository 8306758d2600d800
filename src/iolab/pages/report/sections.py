"""Page builders shared by the PTS tests: steady-state convergence, measurement window with
its steady-state table, block size × mix tables and plots, latency histograms, run details.

Every table and figure carries a source line naming the store rows and the rounds behind it;
tables link the raw engine files of those rounds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from iolab.core.decide import decision_text
from iolab.core.results import PERCENTILES
from iolab.core.steady import SteadyRule, VariableVerdict
from iolab.core.units import counted, duration, eng, kib_label, num, pct_text, sentence, unmeasured_text
from iolab.figures.points import today_decision
from iolab.figures.summary import CellAverage, PhaseSummary, rounds_count
from iolab.pages.report import header, latency_plots, plots
from iolab.pages.report.model import CONTENT_MM, Figure, Page, Table, Text, split_rows
from iolab.pages.report.rundata import RunData, window_rows
from iolab.pages.report.steadywords import passes_but, steady_table
from iolab.pages.runwords import once_each, rounds_text

Getter = Callable[[CellAverage], float | None]
TextGetter = Callable[[CellAverage], float | str | None]  # text: a getter may say n/m itself


@dataclass(frozen=True)
class CellFigure:
    """A figure of each cell of the block size × mix matrix and how the cell's rounds are reduced
    over the measurement window, in the words every source line of it prints: declared once, so
    its table, 2D plot, 3D column plot and heat map say the same (the MRT's 3D pages once said
    "mean" of the window maxima they showed)."""

    get: Getter
    how: str


MEAN = "mean of each cell"
IOPS = CellFigure(lambda c: c.iops, MEAN)
MBPS = CellFigure(lambda c: c.mbps, MEAN)
ART = CellFigure(lambda c: c.lat_mean_us, MEAN)
MRT = CellFigure(lambda c: c.lat_max_us, "maximum of each cell")
P99999 = CellFigure(lambda c: c.p99_999_us, "99.999 % of each cell's merged histogram")


def phase_prefix(run: RunData, ph: PhaseSummary) -> str:
    return f"{ph.phase.name} — " if len(run.phases) > 1 else ""


def window_caveat(run: RunData, ph: PhaseSummary) -> str:
    """What a window never judged is called wherever the window is named (a table's source, a
    plot's legend), as the banner says it on every page; "" for one judged, or one whose phase
    runs to its budget (RunData.not_judged)."""
    return "steady state not evaluated" if run.not_judged(ph) else ""


def window_source(run: RunData, ph: PhaseSummary, what: str) -> str:
    # a window of fewer rounds than the rule judges is said so where its figures are (the banner too)
    judged = f"; {caveat}: too few rounds to judge" if (caveat := window_caveat(run, ph)) else ""
    return (
        f"Source: results.db table cells, phase {ph.phase.name!r}, {what} over the measurement window "
        f"({rounds_text(ph.window)}{judged}); run {run.manifest.run_id}."
    )


def not_measured_page(run: RunData, ph: PhaseSummary, title: str) -> Page:
    return Page(
        title,
        (
            Text(
                (
                    f"Phase {ph.phase.name!r}: no complete measurement round was stored, so there is "
                    "nothing to show here. Nothing on this page is estimated.",
                )
            ),
        ),
    )


# -- steady state ----------------------------------------------------------------------------


def convergence_page(
    run: RunData, ph: PhaseSummary, title: str, panels: Sequence[tuple[str, str, str]], ylabel: str, logy: bool = False
) -> Page:
    """panels: (panel title, mix, metric attribute of CellRow); one line per block size."""
    data = []
    for panel_title, mix, attr in panels:
        series = []
        for bs in ph.block_sizes:
            pts = [(r.round, getattr(r, attr)) for r in ph.rows if r.mix == mix and r.block_size == bs]
            pts = [(x, y) for x, y in pts if y is not None]
            if pts:
                xs, ys = zip(*pts)
                series.append(plots.Series(kib_label(bs), xs, ys))
        if series:
            data.append((panel_title, series))
    if not data:
        return not_measured_page(run, ph, title)
    height = 150 if len(data) > 1 else 115
    png = plots.convergence(data, ylabel, ph.window, height_mm=height, logy=logy, caveat=window_caveat(run, ph))
    src = (
        f"Source: results.db table cells, phase {ph.phase.name!r}, every complete round "
        f"({rounds_text(ph.rounds)}); shaded: measurement window {rounds_text(ph.window)}."
    )
    return Page(title, (Figure(f"{phase_prefix(run, ph)}{title}", png, src), steady_note(run, ph)))


def steady_note(run: RunData, ph: PhaseSummary) -> Text:
    if ph.steady is True:
        msg = f"Steady state reached: measurement window {rounds_text(ph.window)}."
    elif ph.steady is False and (refused := ph.not_accepted()) is not None:
        msg = (
            f"STEADY STATE NOT ACHIEVED: {passes_but(refused)}. The results use its "
            f"{counted(len(ph.window), 'complete round')} ({rounds_text(ph.window)}) as the measurement window."
        )
    elif ph.steady is False:
        msg = (
            f"STEADY STATE NOT ACHIEVED. The results use the last {counted(len(ph.window), 'complete round')} "
            f"({rounds_text(ph.window)}) "
            f"as the measurement window. {sentence(ph.phase.stop_reason or 'the run ended before the round limit')}"
        )
    else:
        msg = (
            f"Steady state not evaluated (fewer than five complete rounds: {rounds_text(ph.rounds)}). "
            "Results are the mean over the rounds that were measured."
        )
    if run.runs_to_budget(ph):
        # the intervals checked when there was a check; none when too few filled a window (it
        # said "the check over the last five intervals" of a phase of three)
        check = (
            f"the steady-state check over the last {counted(len(ph.window), 'interval')} ({rounds_text(ph.window)}) "
            f"is for information ({_INFO_CHECK[ph.steady]})"
            if ph.steady is not None
            else "its steady-state check is for information (not evaluated: fewer than five intervals)"
        )
        msg = (
            f"{run.manifest.title} runs to its byte/time budget, not to steady state; {check}. "
            f"{sentence(ph.phase.stop_reason or '')}"
        )
    return Text((msg,), height_mm=14)


# The for-information check's outcome; None: too few intervals to judge, which is neither
# steady nor "not steady" (it said "not steady" there).
_INFO_CHECK: dict[bool | None, str] = {True: "steady", False: "not steady"}


def measurement_window_pages(
    run: RunData, ph: PhaseSummary, ylabel_for: Callable[[VariableVerdict], str]
) -> list[Page]:
    rule = SteadyRule.of_profile(run.manifest.profile)
    pages = []
    for v in ph.verdicts:
        png = plots.measurement_window(v, ylabel_for(v), rule, height_mm=95)
        decides = v.name not in ph.shown_only
        fig = Figure(
            f"{phase_prefix(run, ph)}Steady-state measurement window: {v.name}" + ("" if decides else " (shown only)"),
            png,
            f"Source: the tracking variable of each window round (results.db tables cells and steady); {plots.window_bands(rule)}",
        )
        pages.append(
            Page(
                f"Steady State Measurement Window — {v.name}",
                (fig, steady_table(v, rule.strict, decides, ph.steady, ph.not_accepted())),
            )
        )
    return pages


# -- block size × mix results ----------------------------------------------------------------


def matrix(ph: PhaseSummary, get: Getter) -> list[list[float | None]]:
    """z[mix][block size] in plan order; None where the cell was not measured."""
    out = []
    for mix in ph.mixes:
        row = []
        for bs in ph.block_sizes:
            c = ph.cell(mix, bs)
            row.append(get(c) if c is not None else None)
        out.append(row)
    return out


def matrix_table(run: RunData, ph: PhaseSummary, caption: str, get: TextGetter, how: str) -> Table:
    rows = []
    for bs in ph.block_sizes:
        cells = []
        for mix in ph.mixes:
            c = ph.cell(mix, bs)
            v = get(c) if c is not None else None
            cells.append(v if isinstance(v, str) else num(v))  # a getter may give its own text (n/m)
        rows.append((kib_label(bs), *cells))
    return Table(
        caption,
        ("block size", *(f"R/W {m}" for m in ph.mixes)),
        tuple(rows),
        window_source(run, ph, how),
        run.raw_links(window_rows(ph)) + run.store_links(),
    )


def table_pages(title: str, tables: Sequence[Table]) -> list[Page]:
    """Lay out tables top to bottom, starting a new page when the next one does not fit, and
    splitting a table that is longer than a page."""
    pages: list[list[Table]] = [[]]
    room = CONTENT_MM
    for t in tables:
        if t.height_mm > room and pages[-1]:
            pages.append([])
            room = CONTENT_MM
        chunks = split_rows(list(t.rows), room, CONTENT_MM)
        for i, chunk in enumerate(chunks):
            part = Table(
                t.caption + (f" (continued, part {i + 1} of {len(chunks)})" if len(chunks) > 1 and i else ""),
                t.columns,
                tuple(chunk),
                t.source,
                t.links if i == len(chunks) - 1 else (),
                t.first_column_is_header,
            )
            if i:
                pages.append([])
                room = CONTENT_MM
            pages[-1].append(part)
            room -= part.height_mm
    return [Page(title, tuple(p)) for p in pages if p]


def size_labels(ph: PhaseSummary, ascending: bool = True) -> tuple[list[int], list[str]]:
    sizes = sorted(ph.block_sizes) if ascending else list(ph.block_sizes)
    return sizes, [kib_label(b) for b in sizes]


def plot_2d_page(
    run: RunData,
    ph: PhaseSummary,
    title: str,
    fig: CellFigure,
    ylabel: str,
    logy: bool = True,
    mixes: Sequence[str] | None = None,
    scale: float = 1.0,
    pct: float | None = None,
) -> Page:
    """`pct`: the plot is of this latency percentile; a cell whose IOs cannot measure it has no
    point, and the plot and page say so."""
    sizes, labels = size_labels(ph)
    series, unmeasured = [], []
    for mix in mixes or ph.mixes:
        pts = []
        for i, bs in enumerate(sizes):
            c = ph.cell(mix, bs)
            v = fig.get(c) if c is not None else None
            if v is not None:
                pts.append((i, v / scale))
            elif c is not None and pct is not None and c.ios:
                unmeasured.append(c.ios)
        if pts:
            xs, ys = zip(*pts)
            series.append(plots.Series(f"R/W {mix}", xs, ys))
    cells = sum(1 for mix in mixes or ph.mixes for bs in sizes if ph.cell(mix, bs) is not None)
    note = (
        f"no point for {len(unmeasured)} of {cells} cells: {unmeasured_text([pct], max(unmeasured), min(unmeasured))}"
        if unmeasured and pct is not None
        else ""
    )
    png = plots.lines_over_categories(labels, series, "block size", ylabel, title, height_mm=120, logy=logy, note=note)
    shown = Figure(f"{phase_prefix(run, ph)}{title}", png, window_source(run, ph, fig.how))
    return Page(title, (shown, Text((sentence(note),))) if note else (shown,))


def plot_3d_pages(
    run: RunData,
    ph: PhaseSummary,
    what: str,
    fig: CellFigure,
    zlabel: str,
    lower_is_better: bool = False,
    scale: float = 1.0,
) -> list[Page]:
    """The SNIA 3D column plot, and on its own page a heat map with the values printed (the
    readable alternative: no bar hides another). Page titles name `what` unless it is the
    test's own name (the page header already says "IOPS — …")."""
    prefix = "" if what == run.manifest.title else f"{what} — "
    sizes, labels = size_labels(ph)
    z = []
    for mix in ph.mixes:
        row = []
        for bs in sizes:
            c = ph.cell(mix, bs)
            v = fig.get(c) if c is not None else None
            row.append(None if v is None else v / scale)
        z.append(row)
    mixes = [f"{m}" for m in ph.mixes]
    src = window_source(run, ph, fig.how)
    png3d = plots.columns_3d(labels, mixes, z, zlabel, f"{what} — 3D columns (block size × R/W mix)", height_mm=160)
    heat = plots.heatmap(
        labels,
        mixes,
        z,
        zlabel,
        f"{what} — values (block size × R/W mix)",
        height_mm=95,
        lower_is_better=lower_is_better,
    )
    return [
        Page(f"{prefix}3D Column Plot", (Figure(f"{phase_prefix(run, ph)}{what}: 3D column plot", png3d, src),)),
        Page(f"{prefix}Heat Map", (Figure(f"{phase_prefix(run, ph)}{what}: heat map with values", heat, src),)),
    ]


# -- latency distribution --------------------------------------------------------------------


def histogram_page(run: RunData, ph: PhaseSummary, cell: CellAverage) -> Page:
    title = f"Response Time Histogram — {cell.key}"
    if cell.histogram is None or cell.histogram.total == 0:
        return Page(
            title,
            (
                Text(
                    (f"{cell.key}: the engine stored no latency histogram for this cell, so no distribution is shown.",)
                ),
            ),
        )
    h = cell.histogram
    png = latency_plots.latency_histogram(
        [("", h)], f"{cell.key}: response times over {rounds_text(cell.rounds)}", height_mm=125
    )
    # the percentiles the IOs can measure (Histogram.measured), as every table and export shows them
    pct = {p: h.measured(p) for p in PERCENTILES}
    unit, div = latency_plots.histogram_unit([h])
    columns = ("", *(f"{p:g} %" for p in pct), "maximum")
    rows = (
        (
            f"response time ({unit})",
            *(pct_text(None if v is None else v / div, h.total, p) for p, v in pct.items()),
            num(h.max_us / div),
        ),
    )
    why = unmeasured_text(PERCENTILES, h.total)
    table = Table(
        f"{cell.key}: percentiles of the merged histogram ({h.total:,} IOs)" + (f"; n/m: {why}" if why else ""),
        columns,
        rows,
        window_source(run, ph, "histograms merged (bin counts summed)"),
        run.raw_links(window_rows(ph, {cell.key})),
    )
    fig = Figure(
        f"{phase_prefix(run, ph)}Response time histogram, {cell.key} ({_which_ios(cell)})",
        png,
        window_source(run, ph, "histograms merged (exact; percentiles are not averaged)"),
    )
    return Page(title, (fig, table))


def _which_ios(cell: CellAverage) -> str:
    """Which IOs the histogram holds, as the cell ran them: a WSAT's 0/100 cell read "(all IOs,
    read and write)" with no read among them."""
    if cell.read_iops and cell.write_iops:
        return "all IOs, read and write"
    return "all IOs, writes" if cell.write_iops else "all IOs, reads"


# -- details ---------------------------------------------------------------------------------


def nvme_power_rows(facts: dict[str, Any]) -> list[tuple[str, str]]:
    """The NVMe drive's power state and APST as read when the run started (targets/facts.py);
    nothing for a drive that is not NVMe or whose nvme-cli did not answer."""
    ps, apst, mx = facts.get("nvme_power_state"), facts.get("nvme_apst"), facts.get("nvme_power_state_max_w")
    if ps is None and apst is None:
        return []
    state = "not reported" if ps is None else f"PS{ps}" + (f" (rated at most {mx:g} W)" if mx is not None else "")
    return [("NVMe power state", f"{state}; APST {apst or 'not reported'} (nvme get-feature 0x02, 0x0c)")]


def details_pages(run: RunData) -> list[Page]:
    """Everything the header cuts short, in full: state, stop reasons, purges, notes, files."""
    m = run.manifest
    rows = [
        ("Run", m.run_id),
        ("Run directory", str(run.dir)),
        ("State", m.state + (f" — {m.error}" if m.error else "")),
        ("Started / ended", f"{m.started} / {m.ended or '—'}"),
        ("Compliance", "spec-compliant settings" if m.compliant else "NON-COMPLIANT: " + "; ".join(m.noncompliance)),
        ("Steady-state rule", m.steady_rule),
        *([("Steady state", text)] if (text := header.not_evaluated_text(run)) else []),  # its banner in full
        ("Write cache", m.write_cache or "not recorded"),
        *nvme_power_rows(m.target.get("facts", {})),
        *([("Power model", f"{m.power_model['source']}: see the Power Consumption pages")] if m.power_model else []),
    ]
    for ph in run.phases:
        rows.append(
            (
                f"Phase {ph.phase.name}",
                f"{rounds_count(ph)}; window {rounds_text(ph.window)}; {ph.phase.stop_reason or 'unfinished'}",
            )
        )
        # per idle length, not per cell: a full HIR wait state idles before each of its 360 bursts
        idle: dict[float, int] = {}
        for r in ph.rows:
            if r.idle_before_s:
                idle[r.idle_before_s] = idle.get(r.idle_before_s, 0) + 1
        if idle:
            rows.append(
                (
                    f"Phase {ph.phase.name}: idle before cells",
                    "; ".join(f"{duration(s)} before each of {counted(n, 'cell')}" for s, n in idle.items()),
                )
            )
        # The window's figure is the drive's steady state; the phase's includes its fresh start.
        parts = [
            f"{w[0]:.2f} over {what} ({eng(w[1], 'B')} host writes)"
            for what, w in (
                (
                    f"the measurement window, {rounds_text(ph.window)}",
                    run.write_amplification(window_rows(ph)) if ph.window else None,
                ),
                ("the whole phase", run.write_amplification(ph.rows)),
            )
            if w is not None
        ]
        if parts:
            rows.append((f"Phase {ph.phase.name}: write amplification (flash ÷ host writes)", "; ".join(parts)))
    for i, d in enumerate(m.decisions, 1):
        rows.append((f"Decision {i}", decision_text(today_decision(d))))
    if run.audit is not None:
        rows.append(("Audit", header.audit_detail(run.audit)))
    rows += purge_rows(m.purges)
    for o in m.safety_overrides:
        rows.append(("Safety override", o))
    for k, v in m.versions.items():
        rows.append((f"Version: {k}", str(v)))
    for i, note in enumerate(m.notes, 1):
        rows.append((f"Note {i}", note))
    # what the page header could not hold (it points here)
    shown = {(c.title, k): v for c in header.header_columns(run) for k, v in c.items}
    rows += [
        (f"{title}: {k}", v)
        for title, items in header.COLUMNS
        for k, v in items(run)
        if shown.get((title, k)) != " ".join(str(v).split())
    ]
    rows = [(k, " ".join(str(v).split())) for k, v in rows]  # long values wrap; row_lines counts them
    table = Table(
        "Run details",
        ("item", "value"),
        tuple(rows),
        "Source: manifest.json and results.db table phases.",
        run.store_links(),
    )
    return table_pages(header.RUN_DETAILS, [table])


def header_table(run: RunData, caption: str) -> Table:
    """The four header columns of one run, nothing shortened."""
    rows = tuple((f"{title}: {k}", " ".join(str(v).split())) for title, items in header.COLUMNS for k, v in items(run))
    return Table(caption, ("item", "value"), rows, "Source: the run's manifest.json and results.db.", run.store_links())


def purge_rows(purges: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Run Details' purge rows; a purge run again on resume is one row with its count, as in show."""
    rows = [
        (f"Purge ({p['phase']})", f"{p['method']}: {'ok' if p['ok'] else 'FAILED'} — {p['detail']}") for p in purges
    ]
    return [(k, v + more) for (k, v), more in once_each(rows)]
