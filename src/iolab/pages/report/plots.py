"""The report's plots, each returned to embed in a page: steady-state convergence and
measurement window, results over categories as lines and bars, time series, the 3D columns and
the heat map, all drawn by iolab itself as vector shapes (a `vector.Drawing`, in milliseconds,
in the calling process: vfigure.py, vbars.py, v3d.py, vgrid.py), without matplotlib.

Plots take plain series, never the store, so the single-run report and the comparison draw
with the same functions. Every axis carries its unit. Sizes are in millimetres of the
printed page so text stays readable at 100 % in the PDF.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from iolab.core.steady import SteadyRule, VariableVerdict
from iolab.core.units import num, share_text
from iolab.pages.report import vfigure
from iolab.pages.report.model import CONTENT_WIDTH_MM
from iolab.pages.report.plot_style import PARTIAL_LABEL, color
from iolab.pages.report.plot_style import (
    Series as Series,  # re-exported: the pages name it plots.Series
)

# the bars, the 3D columns and the heat map are vector shapes (vector.Drawing) of modules of
# their own; the pages call them here with the other plots
from iolab.pages.report.v3d import columns_3d as columns_3d
from iolab.pages.report.vaxes import Axes, Band, Note, Path
from iolab.pages.report.vbars import grouped_bars as grouped_bars
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
    caveat: str = "",
) -> Drawing:
    """Tracking metric per round, one line per block size (one panel per metric), with the
    measurement window shaded; `caveat` is said with the window in its legend entry (a window
    never judged: the plot is read apart from the page's banner)."""
    stacked = []
    for title, series in panels:
        ax = Axes(title=title, xlabel="round", ylabel=ylabel, ylog=logy, ylim=None if logy else (0, None))
        for i, s in enumerate(series):
            ax.add(Path(s.x, s.y, color(i), 1.2, marker_pt=3, label=s.label))
        if window:
            # one round is "round 1", as the caption under the plot says it, not "rounds 1–1"
            which = f"round {window[0]}" if window[0] == window[-1] else f"rounds {window[0]}–{window[-1]}"
            span = f"measurement window ({which}{', ' + caveat if caveat else ''})"
            ax.add(Band(window[0] - 0.5, window[-1] + 0.5, None, None, "#2ca02c", 0.08, span))
        rounds = sorted({x for s in series for x in s.x})
        if rounds:
            step = max(1, math.ceil(len(rounds) / 25))
            ax.xticks = [Tick(r, num(r, trim=True)) for r in rounds[::step]]
        stacked.append(ax)
    return vfigure.draw(stacked, CONTENT_WIDTH_MM, height_mm, f"{ylabel} per round")


def measurement_window(v: VariableVerdict, ylabel: str, rule: SteadyRule, height_mm: float = 95) -> Drawing:
    """The window's data, its average, the bands of the run's rule around it (± its fit-excursion
    limit and ± its range limit, of the average), and the fit line. Drawn from the rule the run
    was judged by (SteadyRule.of_profile), so the page shows the limits its verdict used."""
    r0, r1 = v.rounds[0], v.rounds[-1]
    x0, x1 = r0 - 0.3, r1 + 0.3
    avg = v.average
    slope, rng = rule.slope_limit, rule.range_limit
    lo = min(min(v.values), (1 - rng - 0.05) * avg)
    hi = max(max(v.values), (1 + rng + 0.05) * avg)
    ax = Axes(
        title=f"{v.name}: measurement window rounds {r0}–{r1}",
        xlabel="round",
        ylabel=ylabel,
        xlim=(x0, x1),
        ylim=(lo - 0.02 * abs(hi), hi + 0.02 * abs(hi)),
        xticks=[Tick(r, num(r, trim=True)) for r in v.rounds],
    )
    ax.add(Band(x0, x1, (1 - rng) * avg, (1 + rng) * avg, "#ff7f0e", 0.08, f"±{share_text(rng)} of average"))
    ax.add(Band(x0, x1, (1 - slope) * avg, (1 + slope) * avg, "#2ca02c", 0.12, f"±{share_text(slope)} of average"))
    ax.add(Path((x0, x1), (avg, avg), "#000000", 1.0, label=f"average {num(avg)}"))
    for k in (1 + slope, 1 - slope):
        ax.add(Path((x0, x1), (k * avg, k * avg), "#2ca02c", 0.8, "--"))
    for k in (1 + rng, 1 - rng):
        ax.add(Path((x0, x1), (k * avg, k * avg), "#ff7f0e", 0.8, ":"))
    fit = (v.slope * r0 + v.intercept, v.slope * r1 + v.intercept)
    ax.add(Path((r0, r1), fit, "#d62728", 1.5, label=f"fit {v.formula()}"))
    ax.add(Path(tuple(v.rounds), tuple(v.values), "#1f77b4", 1.2, marker_pt=5, label=v.name))
    return vfigure.draw([ax], CONTENT_WIDTH_MM, height_mm, f"{v.name}: measurement window")


def window_bands(rule: SteadyRule) -> str:
    """What the measurement window's bands stand for, in the run's rule (its limits, and ≤ or <
    as --strict-steady set it), not a fixed ±10 % and ±20 % whatever rule the run was judged by."""
    cmp = "<" if rule.strict else "≤"
    slope, rng = share_text(rule.slope_limit), share_text(rule.range_limit)
    return (
        f"bands: ±{slope} (the fit-excursion limit) and ±{rng} (the range limit) of the window average; steady "
        f"when the fit-line excursion is {cmp} {slope} and the data range {cmp} {rng} of it."
    )


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


# -- time series -----------------------------------------------------------------------------


def time_series_pair(series: Sequence[Series], xlabel: str, ylabel: str, title: str, height_mm: float = 150) -> Drawing:
    """The same series twice: linear axes on top, log–log below (Write Saturation's FOB drop
    and its steady-state spread are each visible on one of them)."""
    stacked = []
    for log in (False, True):
        ax = Axes(
            title=f"{title} — {'log–log' if log else 'linear'}",
            xlabel=xlabel + (" (log scale)" if log else ""),
            ylabel=ylabel + (" (log scale)" if log else ""),
            xlog=log,
            ylog=log,
            ylim=None if log else (0, None),
        )
        for i, s in enumerate(series):
            pts = [(x, y) for x, y in zip(s.x, s.y) if not log or (x > 0 and y > 0)]
            if pts:
                xs, ys = zip(*pts)
                ax.add(Path(xs, ys, color(i), 1.0, marker_pt=2.5 if len(xs) <= 60 else 0.0, label=s.label))
                ax.add(*partial_rings(s, log))
        if not log:  # from 0, as the log axes cannot
            ax.xlim = (0.0, max(0.0, autoscale([x for s in series for x in s.x], False)[1]) or 1.0)
        ax.legend = (
            len(series) > 1
            or bool(series and series[0].label)
            or any(isinstance(a, Path) and a.ring for a in ax.artists)
        )
        stacked.append(ax)
    return vfigure.draw(stacked, CONTENT_WIDTH_MM, height_mm, title)


def partial_rings(s: Series, log: bool) -> list[Path]:
    """A series' partial intervals ringed, so no reader takes them for full ones; the legend
    names the rings once however many series have them (it keeps one entry per label)."""
    pts = [(s.x[i], s.y[i]) for i in s.partial if i < len(s.x) and (not log or (s.x[i] > 0 and s.y[i] > 0))]
    if not pts:
        return []
    xs, ys = zip(*pts)
    return [Path(xs, ys, "#d62728", 0.0, marker_pt=7.0, ring=True, label=PARTIAL_LABEL)]


def timeline_with_gaps(
    series: Sequence[Series],
    gaps: Sequence[tuple[float, float]],
    xlabel: str,
    ylabel: str,
    title: str,
    gap_label: str,
    height_mm: float = 120,
) -> Drawing:
    """Series over time with spans (e.g. host idle periods) shaded: the gaps are part of the
    time axis, so what follows each one is drawn where it happened."""
    ax = Axes(title=title, xlabel=xlabel, ylabel=ylabel, ylim=(0, None))
    for a, b in gaps:
        ax.add(Band(a, b, None, None, "#999999", 0.25, gap_label))
    for i, s in enumerate(series):
        # matplotlib's "." marker beyond 60 points: a dot half the size of "o"
        ax.add(Path(s.x, s.y, color(i), 0.8, marker_pt=2.5 if len(s.x) <= 60 else 1.25, label=s.label))
    xs = [x for s in series for x in s.x] + [v for g in gaps for v in g]
    ax.xlim = (0.0, max(0.0, autoscale(xs, False)[1]) or 1.0)
    return vfigure.draw([ax], CONTENT_WIDTH_MM, height_mm, title)
