"""The characterise pages' own plots: the QoS test's per-round plot, the one-point-per-second
scatter and the SLC fill's rate against GB written, drawn by iolab as vector shapes
(vfigure.py) in the calling process. Apart from the pages (char_series.py, char_slc.py), which
import the run store and the figures, so the comparison and latbound draw them alike."""

from __future__ import annotations

import math
from collections.abc import Sequence

from iolab.pages.report import vfigure, vticks
from iolab.pages.report.model import CONTENT_WIDTH_MM
from iolab.pages.report.plot_style import color
from iolab.pages.report.vaxes import Axes, Path, Rule
from iolab.pages.report.vector import Drawing
from iolab.pages.report.vscatter import dots

LINE_PT = 1.5  # matplotlib's lines.linewidth, which the report's style keeps


def per_round_plot(
    name: str,
    xs: tuple[float, ...],
    iops: tuple[float, ...],
    latency: tuple[tuple[str, tuple[tuple[float, float], ...]], ...],
) -> Drawing:
    """IOPS (top) and the latency series (bottom, log) per round, on one round axis."""
    every = [*xs, *(x for _, pts in latency for x, _ in pts)]
    shared = vticks.autoscale(every, False)  # matplotlib's sharex: both panels span every round
    title = f"{name}: IOPS, average and maximum latency per round"
    top = Axes(title=title, ylabel="IOPS", ylim=(0, None), xlim=shared)
    top.add(Path(xs, iops, color(0), LINE_PT, marker_pt=2.5))
    bottom = Axes(xlabel="round", ylabel="latency (µs, log scale)", ylog=True, xlim=shared)
    top.count_x(xs)
    bottom.count_x(xs)
    for i, (label, pts) in enumerate(latency):
        if pts:
            lx, ly = zip(*pts)
            bottom.add(Path(lx, ly, color(i + 1), LINE_PT, marker_pt=2.5, label=label))
    return vfigure.draw([top, bottom], CONTENT_WIDTH_MM, 120, f"{name}: per round")


def _scatter(
    t: Sequence[float],
    y: Sequence[float | None],
    title: str,
    ylabel: str,
    log: bool,
    height: float,
    xlabel: str = "time (s)",
    label: str = "",
    more: tuple[tuple[str, Sequence[float | None]], ...] = (),
) -> Drawing:
    """One point per second; `more` adds labelled series (then with a legend, `label` the first's)."""
    ax = Axes(title=title, xlabel=xlabel, ylabel=ylabel + (" (log scale)" if log else ""), ylog=log, legend=bool(more))
    pts: list[float] = []
    for i, (name, ys) in enumerate(((label, y), *more)):
        some = [(a, b) for a, b in zip(t, ys) if b is not None and (not log or b > 0)]
        if some:
            xs, vs = zip(*some)
            ax.add(*dots(xs, vs, color(i), name if more else "", log))
        pts += [b for _, b in some]
    if log and pts:
        # whole decades: a steady series alone would zoom the axis onto its noise (47,040–47,080)
        ax.ylim = (10 ** math.floor(math.log10(min(pts))), 10 ** math.ceil(math.log10(max(pts) * 1.05)))
    else:
        ax.ylog = False  # nothing above 0 to draw on a log axis: matplotlib's stays linear
        ax.ylim = (0, 1.05 * max(pts, default=1.0) or 1.0)  # points clear of the frame
    return vfigure.draw([ax], CONTENT_WIDTH_MM, height, title)


def _rate_by_written(gb: list[float], mbps: list[float], size_gb: float | None, rates: tuple[float, ...]) -> Drawing:
    title = "Sequential fill: MB/s against GB written"
    ax = Axes(title=title, xlabel="GB written since the purge", ylabel="MB/s (each second)")
    ax.xlim = (0.0, max(gb, default=1.0) or 1.0)
    ax.ylim = (0.0, 1.05 * max(mbps, default=1.0) or 1.0)
    if gb:
        # each second's rate over the GB it wrote (matplotlib's stairs, from 0 and back to it)
        xs = (0.0, 0.0, *gb[:-1], gb[-1], gb[-1])
        ax.add(Path(xs, (0.0, *mbps, mbps[-1], 0.0), color(0), 1.0, step=True, label="MB/s"))
    names = ("in the cache", "after it") if size_gb is not None else ("median",)
    for i, (r, name) in enumerate(zip(rates, names)):
        ax.add(Rule(r, False, color(1 + i), 0.8, "--", f"{name}: {r:,.0f} MB/s"))
    if size_gb is not None:
        ax.add(Rule(size_gb, True, color(3), LINE_PT, ":", f"cache: {size_gb:.2f} GB"))
    return vfigure.draw([ax], CONTENT_WIDTH_MM, 95, title)
