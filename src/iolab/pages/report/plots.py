"""The report's plots, each returned to embed in a page: steady-state convergence and
measurement window, results over categories as lines, the 3D columns and the heat map, drawn by
iolab itself as vector shapes (a `vector.Drawing`, in milliseconds, in the calling process:
vfigure.py, v3d.py, vgrid.py); bars and time series by matplotlib (Agg) as PNG bytes, in the
plot workers.

Plots take plain series, never the store, so the single-run report and the comparison draw
with the same functions. Every axis carries its unit. Sizes are in millimetres of the
printed page so text stays readable at 100 % in the PDF.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from iolab.core.steady import VariableVerdict
from iolab.core.units import num
from iolab.pages.report import vfigure
from iolab.pages.report.drawing import drawn_apart
from iolab.pages.report.geometry import MIN_TICKS
from iolab.pages.report.model import CONTENT_WIDTH_MM
from iolab.pages.report.plot_style import (
    Series as Series,  # re-exported: the pages name it plots.Series
)
from iolab.pages.report.plot_style import (
    _figure,
    _log_ticks,
    _mark_partial,
    _png,
    _thousands,
    color,
    lay_out,
    legend_right,
    styled,
    unmeasured,
)

# the 3D columns and the heat map are vector shapes (vector.Drawing), drawn in milliseconds
# without matplotlib or a worker process; the pages call them here with the other plots
from iolab.pages.report.v3d import columns_3d as columns_3d
from iolab.pages.report.vaxes import Axes, Band, Note, Path
from iolab.pages.report.vector import Drawing
from iolab.pages.report.vgrid import heatmap as heatmap
from iolab.pages.report.vticks import Tick, autoscale

# -- steady state ----------------------------------------------------------------------------


def convergence(
    panels: Sequence[tuple[str, Sequence[Series]]],
    ylabel: str,
    window: Sequence[int],
    height_mm: float = 120,
    logy: bool = False,
) -> Drawing:
    """Tracking metric per round, one line per block size (one panel per metric), with the
    measurement window shaded."""
    stacked = []
    for title, series in panels:
        ax = Axes(title=title, xlabel="round", ylabel=ylabel, ylog=logy, ylim=None if logy else (0, None))
        for i, s in enumerate(series):
            ax.add(Path(s.x, s.y, color(i), 1.2, marker_pt=3, label=s.label))
        if window:
            span = f"measurement window (rounds {window[0]}–{window[-1]})"
            ax.add(Band(window[0] - 0.5, window[-1] + 0.5, None, None, "#2ca02c", 0.08, span))
        rounds = sorted({x for s in series for x in s.x})
        if rounds:
            step = max(1, math.ceil(len(rounds) / 25))
            ax.xticks = [Tick(r, num(r, trim=True)) for r in rounds[::step]]
        stacked.append(ax)
    return vfigure.draw(stacked, CONTENT_WIDTH_MM, height_mm, f"{ylabel} per round")


def measurement_window(v: VariableVerdict, ylabel: str, height_mm: float = 95) -> Drawing:
    """The window's data, its average, ±10 % and ±20 % of the average, and the fit line."""
    r0, r1 = v.rounds[0], v.rounds[-1]
    x0, x1 = r0 - 0.3, r1 + 0.3
    avg = v.average
    lo = min(min(v.values), 0.75 * avg)
    hi = max(max(v.values), 1.25 * avg)
    ax = Axes(
        title=f"{v.name}: measurement window rounds {r0}–{r1}",
        xlabel="round",
        ylabel=ylabel,
        xlim=(x0, x1),
        ylim=(lo - 0.02 * abs(hi), hi + 0.02 * abs(hi)),
        xticks=[Tick(r, num(r, trim=True)) for r in v.rounds],
    )
    ax.add(Band(x0, x1, 0.8 * avg, 1.2 * avg, "#ff7f0e", 0.08, "±20 % of average"))
    ax.add(Band(x0, x1, 0.9 * avg, 1.1 * avg, "#2ca02c", 0.12, "±10 % of average"))
    ax.add(Path((x0, x1), (avg, avg), "#000000", 1.0, label=f"average {num(avg)}"))
    for k in (1.1, 0.9):
        ax.add(Path((x0, x1), (k * avg, k * avg), "#2ca02c", 0.8, "--"))
    for k in (1.2, 0.8):
        ax.add(Path((x0, x1), (k * avg, k * avg), "#ff7f0e", 0.8, ":"))
    fit = (v.slope * r0 + v.intercept, v.slope * r1 + v.intercept)
    ax.add(Path((r0, r1), fit, "#d62728", 1.5, label=f"fit {v.formula()}"))
    ax.add(Path(tuple(v.rounds), tuple(v.values), "#1f77b4", 1.2, marker_pt=5, label=v.name))
    return vfigure.draw([ax], CONTENT_WIDTH_MM, height_mm, f"{v.name}: measurement window")


# -- results ---------------------------------------------------------------------------------


def lines_over_categories(
    categories: Sequence[str],
    series: Sequence[Series],
    xlabel: str,
    ylabel: str,
    title: str,
    height_mm: float = 110,
    logy: bool = True,
    note: str = "",
) -> Drawing:
    """2D plot: a metric over categorical x (block sizes), one line per series (mix or drive).
    Series x values are indices into `categories`; `note`, printed in the plot, says why points
    are missing (an empty plot says why it is empty)."""
    log = logy and any(y > 0 for s in series for y in s.y)
    measured = any(s.x for s in series)
    ax = Axes(
        title=title,
        xlabel=xlabel,
        ylabel=ylabel + (" (log scale)" if logy else ""),
        ylog=log,
        ylim=None if log else (0, None),
        xlim=autoscale([*range(len(categories)), *(x for s in series for x in s.x)], False),
        xticks=[Tick(i, c) for i, c in enumerate(categories)],
        # nothing measured: no y ticks, which would read as a measurement (plot_style.unmeasured)
        yticks=None if measured else [],
    )
    for i, s in enumerate(series):
        if s.x:  # a series with no point (read IOPS of the 100 % write mix) gets no legend entry
            ax.add(Path(s.x, s.y, color(i), 1.3, marker_pt=3.5, label=s.label))
    if note:
        ax.notes.append(Note(0.5, 0.02 if series else 0.5, note, valign="bottom" if series else "center"))
    return vfigure.draw([ax], CONTENT_WIDTH_MM, height_mm, title)


def _side_by_side_overlap(fig: Any, texts: Sequence[Any], pad: float = 3) -> bool:
    """Whether any two of these texts, laid out as they are, come within a few pixels (the final
    layout, with the margins and ticks still to be set, can narrow the axes a little)."""
    lay_out(fig)
    boxes = [t.get_window_extent().padded(pad) for t in texts if t.get_text().strip()]
    return any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])


@drawn_apart
def grouped_bars(
    categories: Sequence[str],
    groups: Sequence[tuple[str, Sequence[float | None]]],
    ylabel: str,
    title: str,
    height_mm: float = 100,
    logy: bool = False,
) -> bytes:
    """Bars per category, one bar per group (e.g. read/write, or one per drive), values printed
    on the bars. A missing value draws no bar and says 'not measured'."""
    import textwrap

    present = [v for _, vals in groups for v in vals if v is not None and v > 0]
    if present and max(present) / min(present) > 50:
        logy = True  # on a linear axis the small bars would be invisible
    with styled():
        fig = _figure(height_mm)
        ax = fig.subplots()
        n = max(1, len(groups))
        width = 0.8 / n
        printed = []
        for gi, (label, values) in enumerate(groups):
            xs = [ci + (gi - (n - 1) / 2) * width for ci in range(len(categories))]
            for x, v in zip(xs, values):
                if v is None:
                    if present:  # with no bar at all the panel says it once (below)
                        ax.text(x, 0, "not\nmeasured", ha="center", va="bottom", fontsize=6, color="#888")
                    continue
                ax.bar(
                    x,
                    v,
                    width * 0.95,
                    color=color(gi),
                    label=label if x == xs[0] or label not in ax.get_legend_handles_labels()[1] else None,
                )
                printed.append(ax.text(x, v, num(v), ha="center", va="bottom", fontsize=6, rotation=90 if n > 2 else 0))
        if not present:
            unmeasured(ax, "not measured on any drive")
        # narrower columns for more categories, or neighbouring labels run into each other
        wrap = max(8, min(16, 64 // max(1, len(categories))))
        ax.set_xticks(
            range(len(categories)),
            [textwrap.fill(c, wrap, break_long_words=False) for c in categories],
            fontsize=7 if len(categories) > 4 else None,
        )
        ax.set_ylabel(ylabel + (" (log scale)" if logy else ""))
        if logy:
            ax.set_yscale("log")
            ax.set_ylim(top=max(present) * (8 if n > 2 else 2))  # room for the printed values
            _log_ticks(ax)
        else:
            from matplotlib.ticker import MaxNLocator

            ax.margins(y=0.25 if n > 2 else 0.15)
            if present:  # a short panel (four units on a comparison's page) would get two ticks by default
                ax.yaxis.set_major_locator(MaxNLocator(nbins=4, steps=[1, 2, 5, 10], min_n_ticks=MIN_TICKS))
                _thousands(ax)
        ax.set_title(title)
        handles, labels = ax.get_legend_handles_labels()
        uniq = dict(zip(labels, handles))
        legend_right(ax, list(uniq.values()), list(uniq.keys()))
        # measured with the legend in place (long drive names narrow the axes): 28,668 printed
        # over its neighbour's 28,042 is turned upright, with the room that needs above the bars
        if not logy and n <= 2 and _side_by_side_overlap(fig, printed):
            for t in printed:
                t.set_rotation(90)
            _headroom(fig, ax, printed)
        # the categories' names likewise: wrapped narrower, then smaller, until none runs into the next
        for narrower in range(wrap - 2, 5, -2):
            if not _side_by_side_overlap(fig, ax.get_xticklabels(), pad=1):
                break
            ax.set_xticks(
                range(len(categories)),
                [textwrap.fill(c, narrower, break_long_words=False) for c in categories],
                fontsize=6,
            )
        return _png(fig)


def _headroom(fig: Any, ax: Any, texts: list[Any]) -> None:
    """Raise the top of a linear y axis until these texts (upright values on bars) end inside it."""
    for _ in range(4):
        lay_out(fig)
        frame = ax.get_window_extent()
        over = max(t.get_window_extent().y1 for t in texts) - frame.y1
        if over <= 0:
            return
        lo, hi = ax.get_ylim()
        ax.set_ylim(lo, hi + (hi - lo) * (over + 4) / max(1.0, frame.height - over))


# -- time series -----------------------------------------------------------------------------


@drawn_apart
def time_series_pair(series: Sequence[Series], xlabel: str, ylabel: str, title: str, height_mm: float = 150) -> bytes:
    """The same series twice: linear axes on top, log–log below (Write Saturation's FOB drop
    and its steady-state spread are each visible on one of them)."""
    with styled():
        fig = _figure(height_mm)
        top, bottom = fig.subplots(2, 1)
        for ax, log in ((top, False), (bottom, True)):
            labelled = False
            for i, s in enumerate(series):
                pts = [(x, y) for x, y in zip(s.x, s.y) if not log or (x > 0 and y > 0)]
                if not pts:
                    continue
                xs, ys = zip(*pts)
                ax.plot(xs, ys, marker="o" if len(xs) <= 60 else None, ms=2.5, lw=1.0, color=color(i), label=s.label)
                labelled = _mark_partial(ax, s, log, labelled)
            ax.set_xlabel(xlabel + (" (log scale)" if log else ""))
            ax.set_ylabel(ylabel + (" (log scale)" if log else ""))
            if log:
                ax.set_xscale("log")
                ax.set_yscale("log")
                _log_ticks(ax, "y")
                _log_ticks(ax, "x")
            else:
                ax.set_ylim(bottom=0)
                ax.set_xlim(left=0)
                _thousands(ax)
            ax.set_title(f"{title} — {'log–log' if log else 'linear'}")
            if len(series) > 1 or series and series[0].label or labelled:
                legend_right(ax)
        return _png(fig)


@drawn_apart
def timeline_with_gaps(
    series: Sequence[Series],
    gaps: Sequence[tuple[float, float]],
    xlabel: str,
    ylabel: str,
    title: str,
    gap_label: str,
    height_mm: float = 120,
) -> bytes:
    """Series over time with spans (e.g. host idle periods) shaded: the gaps are part of the
    time axis, so what follows each one is drawn where it happened."""
    with styled():
        fig = _figure(height_mm)
        ax = fig.subplots()
        for k, (a, b) in enumerate(gaps):
            ax.axvspan(a, b, color="#999", alpha=0.25, lw=0, label=gap_label if k == 0 else None)
        for i, s in enumerate(series):
            ax.plot(s.x, s.y, marker="o" if len(s.x) <= 60 else ".", ms=2.5, lw=0.8, color=color(i), label=s.label)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.set_xlim(left=0)
        _thousands(ax)
        ax.set_title(title)
        legend_right(ax)
        return _png(fig)
