"""Plots of the RWSW pages that the PTS plots do not cover: stacked panels of metrics over
time or over outstanding IO, and the demand-intensity curve, drawn by iolab as vector shapes
(vfigure.py, in the calling process, without matplotlib). Same style and sizing as
plot_style.py (millimetres of the printed page, units on every axis). A trace's
stream-analysis plots are stream_plots.py's."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from iolab.core.units import num
from iolab.pages.report import vfigure
from iolab.pages.report.model import CONTENT_WIDTH_MM
from iolab.pages.report.plot_style import Series, color
from iolab.pages.report.plots import partial_rings
from iolab.pages.report.vaxes import Axes, Band, Note, Path, PointLabel
from iolab.pages.report.vector import Drawing
from iolab.pages.report.vticks import Tick, autoscale


@dataclass(frozen=True)
class Panel:
    title: str
    ylabel: str
    series: tuple[Series, ...]
    logy: bool = False
    steps: bool = False  # draw as a step function (a value holds over an interval)
    missing: str = "not measured in this run"  # said in the panel when no series has a point


SHADE = "#2ca02c"  # the measurement window's green (plots.convergence)


def panels(
    items: Sequence[Panel],
    xlabel: str,
    height_mm: float,
    logx2: bool = False,
    shade: tuple[float, float] | None = None,
    shade_label: str = "",
) -> Drawing:
    """Panels stacked over a shared x axis. `logx2`: x is outstanding IO, on a base-2 log axis
    with every level labelled. `shade` marks an x span (e.g. the measurement window). Every
    panel labels its x ticks (matplotlib's shared axis labelled the bottom one alone): a panel
    read on its own needs no ruler across the page."""
    xs = [x for p in items for s in p.series for x in s.x]
    # one x range for all (matplotlib's sharex): the data's and the shaded span's
    xlim = autoscale([*xs, *(shade or ())], logx2)
    xticks = [Tick(x, num(x, trim=True)) for x in sorted(set(xs))] if logx2 else None
    stacked = []
    for k, p in enumerate(items):
        ax = _panel(p, xlabel if k == len(items) - 1 else "", logx2, xlim, xticks, shade, shade_label)
        if not logx2:  # rounds, intervals and steps: whole numbers
            ax.count_x(xs)
        stacked.append(ax)
    return vfigure.draw(stacked, CONTENT_WIDTH_MM, height_mm, xlabel)


def _panel(
    p: Panel,
    xlabel: str,
    logx2: bool,
    xlim: tuple[float, float],
    xticks: list[Tick] | None,
    shade: tuple[float, float] | None,
    shade_label: str,
) -> Axes:
    measured = any(s.x for s in p.series)
    log = measured and p.logy and any(y > 0 for s in p.series for y in s.y)
    ax = Axes(
        title=p.title,
        xlabel=xlabel,
        ylabel=p.ylabel + (" (log scale)" if p.logy and measured else ""),
        xlog=logx2,
        ylog=log,
        xlim=xlim,
        ylim=None if log else (0, None),
        xticks=xticks,
        # nothing measured: why, and no y ticks or legend, which would read as a measurement
        yticks=None if measured else [],
        legend=measured,
    )
    for i, s in enumerate(p.series):
        if not s.x:
            continue
        marker = 2.8 if len(s.x) <= 80 and not p.steps else 0.0
        ax.add(Path(s.x, s.y, color(i), 1.1, marker_pt=marker, step=p.steps, label=s.label))
        ax.add(*partial_rings(s, log))
    if shade is not None:  # after the series, as in matplotlib's legend (vfigure draws it beneath them)
        ax.add(Band(shade[0], shade[1], None, None, SHADE, 0.08, shade_label))
    if not measured:
        ax.notes.append(Note(0.5, 0.5, textwrap.fill(p.missing, 70), size_pt=8))
    return ax


def demand_intensity(
    points: Sequence[tuple[str, Sequence[tuple[float, float, int]]]],
    ylabel: str,
    title: str,
    height_mm: float = 100,
    missing: str = "no point measured in these runs",
) -> Drawing:
    """Response time vs IOPS, one curve per series, each point labelled with its outstanding
    IO: where the curve turns up, more users only add waiting (the PTS DIRTH 'demand
    intensity' plot). points: (label, [(iops, response time, oio)])."""
    if not any(pts for _, pts in points):
        ax = Axes(title=title, xlabel="IOPS", ylabel=ylabel, xticks=[], yticks=[], legend=False)
        ax.notes.append(Note(0.5, 0.5, textwrap.fill(missing, 70), size_pt=8))
        return vfigure.draw([ax], CONTENT_WIDTH_MM, height_mm, title)
    xs = [x for _, pts in points for x, _, _ in pts]
    ax = Axes(
        title=title,
        xlabel="IOPS",
        ylabel=ylabel + " (log scale)",
        ylog=True,
        xlim=(0.0, autoscale(xs, False)[1]),
        legend_title="point label:\noutstanding IO",
    )
    for i, (label, pts) in enumerate(points):
        if not pts:
            continue
        px, py, _ = zip(*pts)
        ax.add(Path(px, py, color(i), 1.2, marker_pt=3.5, label=label))
        # a label printed over another's reads as a third number, one on a curve hides it: a label
        # with no clear side near its own point is left out
        ax.point_labels += [PointLabel(x, y, f"{n}", 3, 3, 6, color(i), drop=True) for x, y, n in pts]
    return vfigure.draw([ax], CONTENT_WIDTH_MM, height_mm, title)
