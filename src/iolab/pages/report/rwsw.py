"""Pages of the SNIA RWSW tests (catalogue §1): Multi-WSAT, Individual Streams WSAT, the
composite to steady state and DIRTH on the composite, and the page layout the RWSW pages
share. Replay-Native's pages are in rwsw_replay.py, the Self-Test pages that follow every RWSW
test in rwsw_selftest.py; their overlays for several drives in compare_pages/rwsw.py."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from iolab.core.units import counted, eng, kib_label, measurable, num, pct_text
from iolab.figures.compare import DIRTH_SUMMARY_OIO, cell_percentile, dirth_level
from iolab.figures.points import DV_PHASE
from iolab.figures.summary import CellAverage, PhaseSummary, interval_label
from iolab.pages.report import plots
from iolab.pages.report.dirth import dirth_pages
from iolab.pages.report.model import CONTENT_MM, Block, Figure, Page, Table, Text, block_height
from iolab.pages.report.plot_style import Series
from iolab.pages.report.pts import partial_indices, wsat_series
from iolab.pages.report.rundata import RunData, intervals_text
from iolab.pages.report.rwsw_plots import Panel, panels
from iolab.pages.report.sections import (
    histogram_page,
    measurement_window_pages,
    not_measured_page,
    table_pages,
    window_source,
)
from iolab.pages.runwords import rounds_text

STEADY_PHASE = "steady state (composite)"
TABLE_MAX_ROWS = 60  # longer per-interval/per-step tables show every k-th row (all are in results.db)

Row = TypeVar("Row")


def thin(rows: Sequence[Row], limit: int = TABLE_MAX_ROWS) -> tuple[list[tuple[int, Row]], int]:
    """Every k-th row (and the last, and any partial interval) when there are more than `limit`:
    (index, row) pairs and k."""
    step = max(1, -(-len(rows) // limit))
    keep = [(i, r) for i, r in enumerate(rows) if i % step == 0 or i == len(rows) - 1 or getattr(r, "partial", False)]
    return keep, step


def thin_caption(caption: str, step: int) -> str:
    return caption + (f" (every {step}th shown; all are in results.db)" if step > 1 else "")


def time_axis(seconds: Sequence[float]) -> tuple[float, str]:
    span = max(seconds, default=0.0)
    return (3600.0, "hours") if span >= 7200 else (60.0, "minutes") if span >= 120 else (1.0, "seconds")


def _pack(title: str, blocks: Sequence[Block]) -> list[Page]:
    """Blocks top to bottom, a new page when the next one does not fit; a table longer than a
    page is split (with its header repeated)."""
    pages: list[Page] = []
    cur: list[Block] = []
    room = CONTENT_MM
    for b in blocks:
        h = block_height(b)
        if h > room and cur:
            pages.append(Page(title, tuple(cur)))
            cur, room = [], CONTENT_MM
        if isinstance(b, Table) and h > room:
            split = table_pages(title, [b])
            pages += split[:-1]
            cur = list(split[-1].blocks)
            room = CONTENT_MM - sum(block_height(x) for x in cur)
            continue
        cur.append(b)
        room -= h
    if cur:
        pages.append(Page(title, tuple(cur)))
    return pages


def _workload_table(run: RunData, ph: PhaseSummary, caption: str) -> Table:
    """The mix a cell ran, as stored with the cell (not as the input file says today)."""
    w = ph.rows[0].workload
    rows = tuple(
        (f"{s['access'].upper()} {kib_label(s['block_size'])} {s['op'][0].upper()}", f"{num(s['share'] * 100)} %")
        for s in w["streams"]
    )
    planned = f"TC {w['threads']} × QD {w['queue_depth']} = {w['threads'] * w['queue_depth']}"
    ran = run.ran_outstanding(ph.phase.name, ph.rows[0].cell_key)  # the engine raised it (the run's notes)
    rows += (("Outstanding IO", planned if ran is None else f"{planned} planned; ran at {ran}"),)
    return Table(
        caption,
        ("stream", "share of IOs"),
        rows,
        f"Source: results.db table cells (workload of phase {ph.phase.name!r}); run {run.manifest.run_id}.",
    )


# -- WSAT-like phases: a metric per interval -------------------------------------------------


def window_shade(ph: PhaseSummary, unit: str) -> str:
    """The shaded span's label: what the window is, by what was evaluated over it. A window judged
    steady is the measurement window; one judged and not steady, the last rounds judged; one never
    judged (too few complete rounds, e.g. a phase its budget ended first) is what the figures
    average, and says it was not evaluated (it said "last five intervals" of three)."""
    if ph.steady is True:
        return "measurement window"
    last = f"last {counted(len(ph.window), unit)}"
    return f"{last} (judged: not steady)" if ph.steady is False else f"{last} averaged (not evaluated)"


def window_state(ph: PhaseSummary, unit: str) -> str:
    """The 'Steady state' entry of a phase's results table, in the words of window_shade."""
    n = counted(len(ph.window), unit)
    return {
        True: "reached",
        False: f"NOT ACHIEVED (the last {n} judged are used)",
        None: f"not evaluated (too few complete {unit}s to judge; the last {n} are averaged)",
    }[ph.steady]


def _interval_panels(run: RunData, ph: PhaseSummary, title: str) -> list[Page]:
    """IOPS and MB/s vs time, then response times vs time, with the window shaded."""
    minutes, _, iops = wsat_series(ph)
    div, unit = time_axis([m * 60 for m in minutes])
    ends = [m * 60 / div for m in minutes]  # end of each interval, in `unit`
    window = [(e - r.runtime_s / div, e) for e, r in zip(ends, ph.rows) if r.round in ph.window]
    shade = (window[0][0], window[-1][1]) if window else None
    label = window_shade(ph, "interval")
    src = (
        f"Source: results.db table cells, phase {ph.phase.name!r}: {intervals_text(ph)}; "
        "time is the cumulative measured runtime at the end of each interval."
    )
    x = tuple(ends)
    marked = partial_indices(ph)
    png1 = panels(
        [
            Panel(f"{title}: IOPS per interval", "IOPS", (Series("", x, tuple(iops), marked),)),
            Panel(
                f"{title}: MB/s per interval",
                "MB/s (10⁶ B/s)",
                (Series("", x, tuple(r.mbps for r in ph.rows), marked),),
            ),
        ],
        f"time ({unit})",
        150,
        shade=shade,
        shade_label=label,
    )
    rt = [
        ("ART", [r.lat_mean_us for r in ph.rows]),
        ("99.999 %", [r.p99_999 if measurable(99.999, r.ios) else None for r in ph.rows]),
        ("MRT", [r.lat_max_us for r in ph.rows]),
    ]
    series = []
    for name, vals in rt:
        pts = [(e, v) for e, v in zip(ends, vals) if v is not None]
        if pts:
            xs, ys = zip(*pts)
            series.append(Series(name, xs, ys))
    pages = [Page("IOPS and MB/s vs Time", (Figure(f"{title}: IOPS and MB/s per interval", png1, src),))]
    if series:
        png2 = panels(
            [Panel(f"{title}: response times per interval", "response time (µs)", tuple(series), logy=True)],
            f"time ({unit})",
            110,
            shade=shade,
            shade_label=label,
        )
        pages.append(
            Page(
                "Response Times vs Time",
                (Figure(f"{title}: ART, 99.999 % and maximum response time per interval", png2, src),),
            )
        )
    return pages


def _interval_table(run: RunData, ph: PhaseSummary, caption: str) -> Table:
    minutes, tgbw, _ = wsat_series(ph)
    shown, step = thin(list(ph.rows))
    rows = tuple(
        (
            interval_label(r),
            num(minutes[i]),
            num(tgbw[i]),
            num(r.iops),
            num(r.mbps),
            num(r.lat_mean_us),
            pct_text(r.p99_999, r.ios, 99.999),
        )
        for i, r in shown
    )
    return Table(
        thin_caption(caption, step),
        ("interval", "time (min)", "TGBW (GB)", "IOPS", "MB/s", "ART (µs)", "99.999 % (µs)"),
        rows,
        f"Source: results.db table cells, phase {ph.phase.name!r}, every complete interval.",
        run.raw_links([r for _, r in shown]),
    )


def eng_pct(v: float | None, ios: int | None) -> str:
    return eng(v, "µs") if v is not None else pct_text(v, ios)


def _steady_results(run: RunData, ph: PhaseSummary, c: CellAverage, caption: str) -> Table:
    _, tgbw, _ = wsat_series(ph)
    rows = (
        ("Steady state", f"{window_state(ph, 'interval')}: {rounds_text(ph.window)}"),
        ("IOPS (read + write)", f"{num(c.iops)} ({num(c.read_iops)} read, {num(c.write_iops)} write)"),
        ("MB/s (10⁶ B/s)", f"{num(c.mbps)} ({num(c.read_mbps)} read, {num(c.write_mbps)} write)"),
        ("Average response time (ART)", eng(c.lat_mean_us, "µs")),
        ("99.99 % response time", eng_pct(cell_percentile(c, 99.99), c.ios)),
        ("99.999 % response time (5 nines)", eng_pct(c.p99_999_us, c.ios)),
        ("Maximum response time (MRT)", eng(c.lat_max_us, "µs")),
        ("Intervals measured", f"{len(ph.rounds)}; {eng(tgbw[-1] * 1e9, 'B')} written"),
        ("Stop reason", ph.phase.stop_reason or "unfinished"),
    )
    return Table(
        caption,
        ("item", "value"),
        rows,
        window_source(run, ph, "mean (MRT: maximum; percentiles: merged histogram) of the cell"),
        run.raw_links([r for r in ph.rows if r.round in ph.window]) + run.store_links(),
    )


# -- Multi-WSAT ------------------------------------------------------------------------------


def multi_wsat_pages(run: RunData) -> list[Page]:
    ph = run.phase("main")
    if ph is None or not ph.rows or not ph.cells:
        return [not_measured_page(run, ph, "Multi-WSAT") if ph else _nothing(run)]
    c = ph.cells[0]
    pages = _pack(
        "Applied Workload and Steady-State Results",
        (
            _steady_results(run, ph, c, "Multi-WSAT results over the measurement window"),
            _workload_table(run, ph, "The composite workload (dominant streams renormalised to 100 %)"),
        ),
    )
    pages += _interval_panels(run, ph, "Multi-WSAT")
    pages += measurement_window_pages(run, ph, lambda v: "IOPS")
    pages += table_pages("Tabular Results — Multi-WSAT", [_interval_table(run, ph, "Composite: every interval")])
    pages.append(histogram_page(run, ph, c))
    return pages


# -- Individual Streams WSAT -----------------------------------------------------------------


def streams_pages(run: RunData) -> list[Page]:
    phases = [ph for ph in run.phases if ph.cells]
    if not phases:
        return [_nothing(run)]
    state = {True: "yes", False: "NOT ACHIEVED", None: "not evaluated"}
    rows = tuple(
        (
            ph.phase.name,
            num(ph.cells[0].iops),
            num(ph.cells[0].mbps),
            num(ph.cells[0].lat_mean_us),
            pct_text(ph.cells[0].p99_999_us, ph.cells[0].ios),
            f"{len(ph.rounds)}",
            state[ph.steady],
        )
        for ph in phases
    )
    src = (
        "Source: results.db table cells; each stream is its own phase (purge, rounds to steady state); mean over "
        "that phase's measurement window (percentiles: merged histogram)."
    )
    # over each stream's measurement window, steady or not: the last column says which (a stream
    # stopped at its round limit was titled "at steady state" beside "NOT ACHIEVED")
    table = Table(
        "IOPS per stream over its measurement window",
        ("stream", "IOPS", "MB/s", "ART (µs)", "99.999 % (µs)", "intervals", "steady state"),
        rows,
        src,
        tuple(link for ph in phases for link in run.raw_links([r for r in ph.rows if r.round in ph.window]))
        + run.store_links(),
    )
    png = plots.grouped_bars(
        [ph.phase.name for ph in phases],
        [("IOPS", [ph.cells[0].iops for ph in phases])],
        "IOPS",
        "IOPS per stream (measurement window)",
        height_mm=90,
    )
    pages = _pack("IOPS per Stream", (table, Figure("Individual Streams: IOPS of each stream alone", png, src)))
    series = []
    for ph in phases:
        series.append(Series(ph.phase.name, tuple(r.round for r in ph.rows), tuple(r.iops for r in ph.rows)))
    conv = panels(
        [Panel("IOPS per interval, each stream from its own purge", "IOPS", tuple(series), logy=True)], "interval", 120
    )
    pages.append(
        Page(
            "IOPS per Interval — All Streams",
            (
                Figure(
                    "Individual Streams: IOPS per interval (one line per stream)",
                    conv,
                    "Source: results.db table cells, every complete interval of each stream's phase.",
                ),
            ),
        )
    )
    stops = tuple((ph.phase.name, rounds_text(ph.window), ph.phase.stop_reason or "unfinished") for ph in phases)
    pages += table_pages(
        "Stop Reasons",
        [
            Table(
                "Why each stream's phase ended",
                ("stream", "window", "stop reason"),
                stops,
                "Source: results.db table phases.",
            )
        ],
    )
    for ph in phases:
        pages += measurement_window_pages(run, ph, lambda v: "IOPS")
    return pages


# -- the composite to steady state (before Replay-Native and DIRTH) ---------------------------


def steady_pages(run: RunData, what: str) -> list[Page]:
    ph = run.phase(STEADY_PHASE)
    if ph is None or not ph.rows:
        return [not_measured_page(run, ph, f"Steady State before {what}")] if ph else []
    src = f"Source: results.db table cells, phase {ph.phase.name!r}: every complete round ({rounds_text(ph.rounds)})."
    png = panels(
        [
            Panel(
                f"composite IOPS per round before {what}",
                "IOPS",
                (Series("", tuple(r.round for r in ph.rows), tuple(r.iops for r in ph.rows)),),
            )
        ],
        "round",
        85,
        shade=(ph.window[0] - 0.5, ph.window[-1] + 0.5) if ph.window else None,
        shade_label=window_shade(ph, "round"),
    )
    verdict = {
        True: f"Steady state reached in {rounds_text(ph.window)}.",
        False: f"STEADY STATE NOT ACHIEVED before {what}: {ph.phase.stop_reason}. The test went on from this state.",
        None: f"Steady state not evaluated (too few complete rounds to judge: {rounds_text(ph.rounds)}).",
    }[ph.steady]
    return _pack(
        "Preconditioning — Composite to Steady State",
        (
            Figure(f"Composite IOPS per round (after purge and WIPC) before {what}", png, src),
            Text((verdict,), height_mm=12),
            _workload_table(run, ph, "The composite workload used to reach steady state"),
        ),
    ) + measurement_window_pages(run, ph, lambda v: "IOPS")


# -- DIRTH on the composite ------------------------------------------------------------------


def rwsw_dirth_pages(run: RunData) -> list[Page]:
    """The DIRTH flow's pages, then the catalogue's summary at OIO = 32."""
    at = dirth_level(run.phases, DIRTH_SUMMARY_OIO)
    ph = run.phase(DV_PHASE)
    rows = (
        ("Threads / QD", at.key if at else "not measured"),
        *(
            (name, pct_text(get(at), at.ios) if at else "not measured")
            for name, get in (
                ("IOPS", lambda c: c.iops),
                ("MB/s", lambda c: c.mbps),
                ("ART (µs)", lambda c: c.lat_mean_us),
                ("99.99 % response time (µs)", lambda c: cell_percentile(c, 99.99)),
                ("99.999 % response time (µs)", lambda c: c.p99_999_us),
            )
        ),
    )
    src = window_source(run, ph, "mean of the point") if ph else "not measured"
    return dirth_pages(run) + [
        Page(
            f"Summary at OIO = {DIRTH_SUMMARY_OIO}",
            (
                Table(
                    f"DIRTH on the composite at total outstanding IO {DIRTH_SUMMARY_OIO} (the RWSW summary figures)",
                    ("item", "value"),
                    rows,
                    src,
                ),
            ),
        )
    ]


def _nothing(run: RunData) -> Page:
    return Page(
        run.manifest.title,
        (
            Text(
                (
                    "No phase of this run was started, so nothing was measured. "
                    f"State: {run.manifest.state}. {run.manifest.error or ''}",
                )
            ),
        ),
    )
