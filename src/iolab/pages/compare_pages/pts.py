"""The PTS 1.1 tests' overlays in a comparison: IOPS and response time against block size, the
tracking variable per round with each drive's difference from the group mean, response-time
distributions, and Write Saturation's IOPS against time, TGBW and interval."""

from __future__ import annotations

from iolab.core.units import KiB, kib_label
from iolab.figures.summary import PhaseSummary
from iolab.pages.report import difference_plots, latency_plots, plots
from iolab.pages.report.model import Figure, Page, Text
from iolab.pages.report.pts import partial_indices, wsat_series
from iolab.pages.report.rundata import RunData


def iops_overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    pages = [
        _by_block_size_page(runs, labels, mix, "iops", "IOPS", f"IOPS vs block size, R/W {mix}")
        for mix in ("100/0", "65/35", "0/100")
    ]
    pages.append(_tracking_page(runs, labels, "0/100", 4 * KiB, "iops", "IOPS", "main"))
    return pages


def throughput_overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    pages = []
    for bs in (1024 * KiB, 128 * KiB):
        phase = f"SEQ {kib_label(bs)}"
        pages.append(_tracking_page(runs, labels, "0/100", bs, "write_mbps", "write MB/s", phase))
    return pages


def latency_overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    pages = [
        _by_block_size_page(
            runs, labels, mix, "lat_mean_us", "ART (µs)", f"Average response time vs block size, R/W {mix}", logy=False
        )
        for mix in ("100/0", "0/100")
    ]
    pages.append(_tracking_page(runs, labels, "0/100", 4 * KiB, "lat_mean_us", "ART (µs)", "main"))
    pages.append(_histogram_overlay_page(runs, labels, "0/100", 4 * KiB))
    pages.append(_histogram_overlay_page(runs, labels, "100/0", 4 * KiB))
    return pages


def _phase(run: RunData, name: str) -> PhaseSummary | None:
    return run.phase(name) or (run.phases[0] if len(run.phases) == 1 else None)


def _by_block_size_page(runs, labels, mix: str, attr: str, ylabel: str, title: str, logy: bool = True) -> Page:
    sizes = sorted({bs for r in runs for ph in r.phases for bs in ph.block_sizes})
    series = []
    for r, lab in zip(runs, labels):
        pts = []
        for i, bs in enumerate(sizes):
            c = next((ph.cell(mix, bs) for ph in r.phases if ph.cell(mix, bs) is not None), None)
            v = getattr(c, attr) if c is not None else None
            if v is not None:
                pts.append((i, v))
        if pts:
            xs, ys = zip(*pts)
            series.append(plots.Series(lab, xs, ys))
    png = plots.lines_over_categories(
        [kib_label(b) for b in sizes], series, "block size", ylabel, title, height_mm=125, logy=logy
    )
    src = "Source: each run's results.db, mean of each cell over that run's measurement window."
    return Page(title[0].upper() + title[1:], (Figure(f"{title}, one line per drive", png, src),))


def _tracking_page(runs, labels, mix: str, bs: int, attr: str, ylabel: str, phase: str) -> Page:
    """The tracking variable per round for every drive, and its difference from the group mean."""
    series = []
    for r, lab in zip(runs, labels):
        ph = _phase(r, phase)
        if ph is None:
            continue
        pts = [(row.round, getattr(row, attr)) for row in ph.rows if row.mix == mix and row.block_size == bs]
        pts = [(x, y) for x, y in pts if y is not None]
        if pts:
            xs, ys = zip(*pts)
            series.append(plots.Series(lab, xs, ys))
    what = f"{ylabel}, {kib_label(bs)} R/W {mix}" if phase == "main" else f"{ylabel}, {phase} R/W {mix}"
    title = f"Per-Round {what.split(',')[0]} and Difference from Group Mean"
    if not series:
        return Page(title, (Text(("No drive has this cell measured.",)),))
    png = difference_plots.difference_from_mean(series, "round", ylabel, f"{what} per round", height_mm=155)
    src = "Source: each run's results.db, every complete round. " + difference_plots.alignment_text(series, "round")
    return Page(title, (Figure(f"{what}: per round, and difference from the group mean", png, src),))


def _histogram_overlay_page(runs, labels, mix: str, bs: int) -> Page:
    hists = []
    for r, lab in zip(runs, labels):
        c = next((ph.cell(mix, bs) for ph in r.phases if ph.cell(mix, bs) is not None), None)
        if c is not None and c.histogram is not None and c.histogram.total:
            hists.append((lab, c.histogram))
    title = f"Response Time Distribution — {mix} {kib_label(bs)}"
    if not hists:
        return Page(title, (Text(("No drive stored a latency histogram for this cell.",)),))
    png = latency_plots.latency_histogram(
        hists, f"R/W {mix} {kib_label(bs)}: cumulative response times per drive", height_mm=150
    )
    src = "Source: each run's results.db histograms, merged over its measurement window (exact bin counts)."
    return Page(title, (Figure(f"R/W {mix} {kib_label(bs)}: response-time distribution per drive", png, src),))


def wsat_overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    by_time, by_tgbw, by_interval = [], [], []
    for r, lab in zip(runs, labels):
        if not r.phases or not r.phases[0].rows:
            continue
        minutes, tgbw, iops = wsat_series(r.phases[0])
        marked = partial_indices(r.phases[0])
        by_time.append(plots.Series(lab, tuple(minutes), tuple(iops), marked))
        by_tgbw.append(plots.Series(lab, tuple(tgbw), tuple(iops), marked))
        by_interval.append(plots.Series(lab, tuple(row.round for row in r.phases[0].rows), tuple(iops), marked))
    src = "Source: each run's results.db, every complete interval (cumulative runtime and bytes written)."
    if not by_time:
        return [Page("Write Saturation", (Text(("No drive has a measured interval.",)),))]
    return [
        Page(
            "IOPS vs Time",
            (
                Figure(
                    "IOPS vs time, one line per drive",
                    plots.time_series_pair(by_time, "time (minutes)", "IOPS", "IOPS vs time", height_mm=160),
                    src,
                ),
            ),
        ),
        Page(
            "IOPS vs Total GB Written",
            (
                Figure(
                    "IOPS vs TGBW, one line per drive",
                    plots.time_series_pair(
                        by_tgbw, "total GB written (TGBW, 10⁹ B)", "IOPS", "IOPS vs TGBW", height_mm=160
                    ),
                    src,
                ),
            ),
        ),
        Page(
            "IOPS per Interval and Difference from Group Mean",
            (
                Figure(
                    "IOPS per interval and difference from the group mean",
                    difference_plots.difference_from_mean(
                        by_interval, "interval", "IOPS", "IOPS per interval", height_mm=155
                    ),
                    src + " " + difference_plots.alignment_text(by_interval, "interval"),
                ),
            ),
        ),
    ]
