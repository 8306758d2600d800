"""The pages of the PTS tests' reports (SNIA PTS 2.0), in SNIA order: steady-state
convergence, measurement window and steady-state table, tabular results, 2D and 3D plots,
then the test's own plots (latency histograms, Write Saturation over time and TGBW). Each
test's declaration in suites/ names its page builder; `generic_pages` serves any other test."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from iolab.core.units import KiB, duration, eng, kib_label, num, pct_text, percentile_min_ios, scale_for
from iolab.figures.summary import CellAverage, PhaseSummary, interval_label
from iolab.pages.report import plots
from iolab.pages.report.model import Figure, Link, Page, Table, Text
from iolab.pages.report.rundata import RunData, intervals_text
from iolab.pages.report.sections import (
    ART,
    IOPS,
    MBPS,
    MRT,
    P99999,
    convergence_page,
    histogram_page,
    matrix_table,
    measurement_window_pages,
    not_measured_page,
    plot_2d_page,
    plot_3d_pages,
    table_pages,
    window_source,
)
from iolab.pages.runwords import rounds_text


def _mix_of(ph: PhaseSummary, key: str) -> str:
    """The mix of the cell `key` (as run; a cell never measured: its key without the block size)."""
    return next((c.mix for c in ph.cells if c.key == key and c.mix is not None), key.rsplit(" ", 1)[0])


def _main(run: RunData) -> PhaseSummary | None:
    return run.phases[0] if run.phases else None


# -- IOPS (A.5) ----------------------------------------------------------------------------


def iops_pages(run: RunData) -> list[Page]:
    ph = _main(run)
    if ph is None or not ph.cells:
        return [not_measured_page(run, ph, "IOPS") if ph else _nothing(run)]
    pages = []
    tracking_mixes = list(
        dict.fromkeys(_mix_of(ph, t["cell_key"]) for t in run.plan_phase(ph.phase.name).get("tracking", ()))
    )
    for mix in tracking_mixes:
        pages.append(
            convergence_page(
                run,
                ph,
                f"Steady State Convergence — IOPS, R/W {mix}",
                [(f"IOPS per round, RND R/W {mix}, all block sizes", mix, "iops")],
                "IOPS",
            )
        )
    pages += measurement_window_pages(run, ph, lambda v: "IOPS")
    tables = [
        matrix_table(run, ph, "IOPS (read + write), mean over the measurement window", IOPS.get, IOPS.how),
        matrix_table(run, ph, "Throughput (MB/s, 10⁶ B/s), mean over the measurement window", MBPS.get, MBPS.how),
    ]
    pages += table_pages("Tabular Results — IOPS and MB/s", tables)
    pages.append(plot_2d_page(run, ph, "IOPS vs Block Size (2D)", IOPS, "IOPS"))
    pages.append(plot_2d_page(run, ph, "MB/s vs Block Size (2D)", MBPS, "throughput (MB/s)"))
    pages += plot_3d_pages(run, ph, "IOPS", IOPS, "IOPS")
    track = ph.cell("0/100", 4 * KiB)
    if track is not None:
        pages.append(histogram_page(run, ph, track))
    return pages


# -- Throughput (A.6) ----------------------------------------------------------------------


def throughput_pages(run: RunData) -> list[Page]:
    if not run.phases:
        return [_nothing(run)]
    pages = []
    for ph in run.phases:
        if not ph.rows:
            pages.append(not_measured_page(run, ph, f"{ph.phase.name}"))
            continue
        pages.append(
            convergence_page(
                run,
                ph,
                f"Steady State Convergence — {ph.phase.name}",
                [
                    (f"{ph.phase.name}: write MB/s per round (R/W 0/100)", "0/100", "write_mbps"),
                    (f"{ph.phase.name}: read MB/s per round (R/W 100/0)", "100/0", "read_mbps"),
                ],
                "throughput (MB/s)",
            )
        )
        pages += measurement_window_pages(run, ph, lambda v: "throughput (MB/s)")
    rows, sizes, reads, writes = [], [], [], []
    links: tuple[Link, ...] = ()
    for ph in run.phases:
        for bs in ph.block_sizes:
            r, w = ph.cell("100/0", bs), ph.cell("0/100", bs)
            rv = r.read_mbps if r else None
            wv = w.write_mbps if w else None
            rows.append((f"SEQ {kib_label(bs)}", num(rv), num(wv), rounds_text(ph.window)))
            sizes.append(f"SEQ {kib_label(bs)}")
            reads.append(rv)
            writes.append(wv)
        links += run.raw_links([x for x in ph.rows if x.round in ph.window])
    src = (
        "Source: results.db table cells; each block size is its own phase (purge, preconditioning, rounds); "
        "mean over that phase's measurement window (rounds listed per row)."
    )
    table = Table(
        "Throughput, mean over the measurement window (MB/s, 10⁶ B/s)",
        ("block size", "R/W 100/0 read MB/s", "R/W 0/100 write MB/s", "measurement window"),
        tuple(rows),
        src,
        links + run.store_links(),
    )
    png = plots.grouped_bars(
        sizes,
        [("R/W 100/0 (read)", reads), ("R/W 0/100 (write)", writes)],
        "throughput (MB/s)",
        "Throughput by block size (2D)",
        height_mm=100,
    )
    fig = Figure("Throughput by block size, read and write", png, src)
    pages.append(Page("Tabular Results and 2D Plot — Throughput", (table, fig)))
    return pages


# -- Latency (A.7) -------------------------------------------------------------------------


def latency_pages(run: RunData) -> list[Page]:
    ph = _main(run)
    if ph is None or not ph.cells:
        return [not_measured_page(run, ph, "Latency") if ph else _nothing(run)]
    unit, div = scale_for([c.lat_mean_us for c in ph.cells])
    munit, mdiv = scale_for([c.lat_max_us for c in ph.cells])
    pages = [
        convergence_page(
            run,
            ph,
            "Steady State Convergence — ART and MRT, R/W 0/100",
            [
                ("average response time (ART) per round, RND R/W 0/100", "0/100", "lat_mean_us"),
                ("maximum response time (MRT) per round, RND R/W 0/100", "0/100", "lat_max_us"),
            ],
            "response time (µs)",
            logy=True,
        )
    ]
    pages += measurement_window_pages(run, ph, lambda v: "ART (µs)")
    left_out = _p99999_left_out(ph)
    pages += table_pages(
        "Tabular Results — Response Times and IOPS", _latency_tables(run, ph, (unit, div, munit, mdiv), left_out)
    )
    pages.append(plot_2d_page(run, ph, "Average Response Time vs Block Size (2D)", ART, f"ART ({unit})", scale=div))
    pages.append(plot_2d_page(run, ph, "Maximum Response Time vs Block Size (2D)", MRT, f"MRT ({munit})", scale=mdiv))
    if not left_out:
        title = "99.999 % Response Time vs Block Size (2D)"
        pages.append(plot_2d_page(run, ph, title, P99999, f"99.999 % response time ({munit})", scale=mdiv, pct=99.999))
    pages += plot_3d_pages(run, ph, "Average Response Time", ART, f"ART ({unit})", lower_is_better=True, scale=div)
    pages += plot_3d_pages(run, ph, "Maximum Response Time", MRT, f"MRT ({munit})", lower_is_better=True, scale=mdiv)
    for mix in ("0/100", "65/35", "100/0"):
        c = ph.cell(mix, 4 * KiB)
        if c is not None:
            pages.append(histogram_page(run, ph, c))
    return pages


def _p99999_left_out(ph: PhaseSummary) -> str:
    """Why the 99.999 % plot is left out, as its table's caption ends; empty when a cell measured
    it. A run too short for any cell's 99.999 % (a quick one) printed that plot empty, a page a
    reviewer could publish: it is left out, and said once, where the percentiles are listed."""
    if any(P99999.get(c) is not None for c in ph.cells):
        return ""
    ios = [c.ios for c in ph.cells if c.ios]
    had = (
        f" (its cells had {min(ios):,}–{max(ios):,} IOs; a 99.999 % needs {percentile_min_ios(99.999):,})"
        if ios
        else ""
    )
    return f": no cell measured it{had}, so its plot against block size is left out"


# `get` is Any-typed: mypy cannot narrow the second of its two calls to not None
def _scaled(get: Callable[[CellAverage], Any], d: float) -> Callable[[CellAverage], float | None]:
    """A response time of a cell in the table's unit (`d` µs each), None where not measured."""
    return lambda c: None if get(c) is None else get(c) / d


def _latency_tables(
    run: RunData, ph: PhaseSummary, units: tuple[str, float, str, float], left_out: str = ""
) -> list[Table]:
    """ART, MRT, 99.999 % and IOPS by mix and block size; `units`: ART's unit and its µs, the
    others'. `left_out`: why the 99.999 % plot is not in the report, said with its table."""
    unit, div, munit, mdiv = units
    return [
        matrix_table(
            run, ph, f"Average response time (ART, {unit}), mean over the window", _scaled(ART.get, div), ART.how
        ),
        matrix_table(
            run,
            ph,
            f"Maximum response time (MRT, {munit}), maximum over the window",
            _scaled(MRT.get, mdiv),
            MRT.how,
        ),
        matrix_table(
            run,
            ph,
            f"99.999 % response time ({munit}), from the window's merged histogram{left_out}",
            lambda c: pct_text(_scaled(P99999.get, mdiv)(c), c.ios),
            f"{P99999.how}; n/m: too few IOs to measure it",
        ),
        matrix_table(run, ph, "IOPS (read + write), mean over the window", IOPS.get, IOPS.how),
    ]


# -- Write Saturation (A.8) ----------------------------------------------------------------

WSAT_TABLE_MAX_ROWS = 120


def wsat_series(ph: PhaseSummary) -> tuple[list[float], list[float], list[float]]:
    """Per interval: cumulative minutes at its end, cumulative GB written (TGBW), IOPS."""
    minutes, tgbw, iops = [], [], []
    t = written = 0.0
    for r in ph.rows:
        t += r.runtime_s
        written += r.write_bytes
        minutes.append(t / 60)
        tgbw.append(written / 1e9)
        iops.append(r.iops)
    return minutes, tgbw, iops


def partial_indices(ph: PhaseSummary) -> tuple[int, ...]:
    """Positions in `ph.rows` of partial intervals (the byte budget ended them early)."""
    return tuple(i for i, r in enumerate(ph.rows) if r.partial)


def wsat_pages(run: RunData) -> list[Page]:
    ph = _main(run)
    if ph is None or not ph.rows:
        return [not_measured_page(run, ph, "Write Saturation") if ph else _nothing(run)]
    minutes, tgbw, iops = wsat_series(ph)
    marked = partial_indices(ph)
    src = (
        f"Source: results.db table cells, phase {ph.phase.name!r}: {intervals_text(ph)}; "
        "time is the cumulative measured runtime, TGBW the cumulative bytes written."
        + (
            " A partial interval (ringed) is one the write budget's end, not the cell time, ended: its IOPS are over "
            "its true runtime and it enters neither the steady-state window nor the minimum."
            if marked
            else ""
        )
    )
    label = f"R/W {ph.rows[0].cell_key}"
    p1 = plots.time_series_pair(
        [plots.Series(label, tuple(minutes), tuple(iops), marked)],
        "time (minutes)",
        "IOPS",
        "IOPS vs time",
        height_mm=160,
    )
    p2 = plots.time_series_pair(
        [plots.Series(label, tuple(tgbw), tuple(iops), marked)],
        "total GB written (TGBW, 10⁹ B)",
        "IOPS",
        "IOPS vs TGBW",
        height_mm=160,
    )
    pages = [
        Page("IOPS vs Time", (Figure("Write Saturation: IOPS vs time, linear and log–log", p1, src),)),
        Page("IOPS vs Total GB Written", (Figure("Write Saturation: IOPS vs TGBW, linear and log–log", p2, src),)),
    ]
    pages += _wsat_latency_pages(ph, minutes, label, src)
    pages += measurement_window_pages(run, ph, lambda v: "IOPS")
    pages += table_pages("Tabular Results — Write Saturation", _wsat_tables(run, ph, minutes, tgbw, iops, marked, src))
    if ph.cells and ph.cells[0].histogram is not None:
        pages.append(histogram_page(run, ph, ph.cells[0]))
    return pages


def _wsat_latency_pages(ph: PhaseSummary, minutes: list[float], label: str, src: str) -> list[Page]:
    # An interval without a latency (no IO completed) has no point rather than a made-up zero.
    lat = [
        plots.Series(
            f"{what}, {label}",
            *zip(*[(minutes[i], v) for i, r in enumerate(ph.rows) if (v := getattr(r, attr)) is not None]),
        )
        for what, attr in (("ART", "lat_mean_us"), ("MRT", "lat_max_us"))
        if any(getattr(r, attr) is not None for r in ph.rows)
    ]
    if not lat:
        return []
    p3 = plots.time_series_pair(lat, "time (minutes)", "response time (µs)", "ART and MRT vs time", height_mm=160)
    return [
        Page(
            "Response Times vs Time",
            (
                Figure(
                    "Write Saturation: average (ART) and maximum (MRT) response time per interval, linear and log–log",
                    p3,
                    src + " ART: the interval's mean over all IOs; MRT: its slowest IO.",
                ),
            ),
        )
    ]


def _wsat_tables(
    run: RunData,
    ph: PhaseSummary,
    minutes: list[float],
    tgbw: list[float],
    iops: list[float],
    marked: tuple[int, ...],
    src: str,
) -> list[Table]:
    """The summary (FOB, minimum, the last full intervals' mean, TGBW) and the intervals, thinned
    to at most WSAT_TABLE_MAX_ROWS."""
    full = [v for i, v in enumerate(iops) if i not in marked] or iops
    last = full[-5:]
    summary = (
        ("Intervals measured", f"{len(iops)}" + (f" ({len(marked)} partial)" if marked else "")),
        # FOB only where a purge put the drive there: after --purge none it is some other state
        ("First interval IOPS" + (f" (not FOB: {ph.not_from_fob})" if ph.not_from_fob else " (FOB)"), num(full[0])),
        (
            "Minimum / maximum interval IOPS" + (" (full intervals)" if marked else ""),
            f"{num(min(full))} / {num(max(full))}",
        ),
        (f"Mean IOPS of the last {len(last)} full intervals", num(sum(last) / len(last))),
        ("Total written (TGBW)", eng(tgbw[-1] * 1e9, "B")),
        ("Measured time", duration(minutes[-1] * 60)),
        ("Stop reason", ph.phase.stop_reason or "unfinished"),
    )
    tables = [Table("Write Saturation summary", ("item", "value"), summary, src, run.store_links())]
    step = max(1, -(-len(ph.rows) // WSAT_TABLE_MAX_ROWS))
    shown = [(i, r) for i, r in enumerate(ph.rows) if i % step == 0 or i == len(ph.rows) - 1 or r.partial]
    rows = tuple(
        (interval_label(r), num(minutes[i]), num(tgbw[i]), num(r.iops), num(r.lat_mean_us), num(r.lat_max_us))
        for i, r in shown
    )
    caption = "IOPS per interval" + (f" (every {step}th interval shown; all are in results.db)" if step > 1 else "")
    tables.append(
        Table(
            caption,
            ("interval", "time (min)", "TGBW (GB)", "IOPS", "ART (µs)", "MRT (µs)"),
            rows,
            src,
            run.raw_links([r for _, r in shown]),
        )
    )
    return tables


# -- any other test -------------------------------------------------------------------------


def generic_pages(run: RunData) -> list[Page]:
    """A test without pages of its own: its steady-state pages and one row per cell, so every
    stored run still gets a report of what was measured."""
    pages = []
    for ph in run.phases:
        if not ph.rows:
            pages.append(not_measured_page(run, ph, ph.phase.name))
            continue
        pages += measurement_window_pages(run, ph, lambda v: v.name)
        rows = tuple(
            (c.key, num(c.iops), num(c.mbps), num(c.lat_mean_us), num(c.lat_max_us), pct_text(c.p99_999_us, c.ios))
            for c in ph.cells
        )
        table = Table(
            f"{ph.phase.name}: results per cell over the measurement window",
            ("cell", "IOPS", "MB/s", "ART (µs)", "MRT (µs)", "99.999 % (µs)"),
            rows,
            window_source(run, ph, "mean (MRT: maximum) of each cell"),
            run.raw_links([r for r in ph.rows if r.round in ph.window]) + run.store_links(),
        )
        pages += table_pages("Tabular Results", [table])
    return pages or [_nothing(run)]


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
