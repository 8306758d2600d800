"""Grouped bars drawn by iolab as vector shapes (vfigure.py): one bar per group in each
category, its value printed on it, as plot_style's matplotlib bars looked (bars under the grid,
the legend beside the axes). The values printed and the categories' names are measured against
the laid-out axes (vfigure.lay_out) before the plot is drawn: values side by side that would run
into each other stand upright, the axis rises until every value ends inside it, and names are
wrapped narrower until none runs into the next.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence

from iolab.core.units import num
from iolab.pages.report import textwidth, vfigure
from iolab.pages.report.model import CONTENT_WIDTH_MM
from iolab.pages.report.plot_style import color
from iolab.pages.report.vaxes import TICK_PT, Axes, Band, Note, ValueLabel
from iolab.pages.report.vector import Drawing
from iolab.pages.report.vtext import text_height
from iolab.pages.report.vticks import Tick, autoscale

VALUE_PT, GAP_MM = 6.0, 0.55  # matplotlib's fontsize=6 values; 3 px apart at 140 dpi


def grouped_bars(
    categories: Sequence[str],
    groups: Sequence[tuple[str, Sequence[float | None]]],
    ylabel: str,
    title: str,
    height_mm: float = 100,
    logy: bool = False,
) -> Drawing:
    """Bars per category, one bar per group (e.g. read/write, or one per drive), values printed
    on the bars. A missing value draws no bar and says 'not measured'."""
    present = [v for _, vals in groups for v in vals if v is not None and v > 0]
    if present and max(present) / min(present) > 50:
        logy = True  # on a linear axis the small bars would be invisible
    n = max(1, len(groups))
    width = 0.8 / n
    ax = Axes(
        title=title,
        ylabel=ylabel + (" (log scale)" if logy else ""),
        ylog=logy,
        xlim=autoscale([-0.4, len(categories) - 0.6], False),
        ylim=_ylim(present, [v for _, vals in groups for v in vals if v is not None and v < 0], logy, n),
        yticks=None if present else [],  # nothing measured: no y ticks, which would read as a measurement
    )
    for gi, (label, values) in enumerate(groups):
        for ci, v in enumerate(values):
            x = ci + (gi - (n - 1) / 2) * width
            if v is None:
                if present:  # with no bar at all the panel says it once (below)
                    ax.value_labels.append(ValueLabel(x, 0.0, "not\nmeasured", VALUE_PT, "#888888"))
                continue
            half = width * 0.95 / 2
            ax.add(Band(x - half, x + half, 0.0, v, color(gi), 1.0, label))
            ax.value_labels.append(ValueLabel(x, v, num(v), VALUE_PT, upright=n > 2))
    if not present:
        ax.notes.append(Note(0.5, 0.5, "not measured on any drive", size_pt=8.0))
    _name_categories(ax, categories, height_mm)
    if n <= 2 and _crowded(ax, height_mm):  # on a log axis too (matplotlib overprinted there)
        ax.value_labels = [ValueLabel(v.x, v.y, v.text, v.size_pt, v.color, upright=True) for v in ax.value_labels]
    _headroom(ax, height_mm)
    return vfigure.draw([ax], CONTENT_WIDTH_MM, height_mm, title)


def _ylim(present: Sequence[float], negative: Sequence[float], logy: bool, n: int) -> tuple[float, float]:
    """The y axis from 0 (or below the lowest bar under it) to above the highest bar."""
    if not present:
        return (1.0, 10.0) if logy else (0.0, 1.0)
    top = max(present)
    if logy:  # the smallest bar at least a third of a decade tall, and room for the printed values
        return 10 ** math.floor(math.log10(min(present) / 2)), top * (8 if n > 2 else 2)
    margin = 0.25 if n > 2 else 0.15  # matplotlib's margins(y=0.25 / 0.15) beyond the bars' span from 0
    lo = min(negative, default=0.0)
    return lo - margin * (top - lo) if lo < 0 else 0.0, top + margin * (top - lo)


def _name_categories(ax: Axes, categories: Sequence[str], height_mm: float) -> None:
    """The categories' names under their bars, wrapped narrower for more categories, then
    narrower still until none runs into its neighbour on the laid-out axes."""
    wrap = max(8, min(16, 64 // max(1, len(categories))))
    for narrower in range(wrap, 5, -2):
        ax.xticks = [Tick(i, textwrap.fill(c, narrower, break_long_words=False)) for i, c in enumerate(categories)]
        (p,) = vfigure.lay_out([ax], CONTENT_WIDTH_MM, height_mm)
        pitch = p.box.w / (p.x.hi - p.x.lo)  # mm from one category to the next
        widths = [max(textwidth.width_mm(ln, TICK_PT) for ln in t.text.split("\n")) for t in ax.xticks]
        if all((a + b) / 2 + 1.0 <= pitch for a, b in zip(widths, widths[1:])):
            return


def _crowded(ax: Axes, height_mm: float) -> bool:
    """Whether any value printed level, as laid out, comes within 3 px of another (a value or a
    grey 'not measured', each as wide as its widest line) or runs into a bar it does not stand on."""
    (p,) = vfigure.lay_out([ax], CONTENT_WIDTH_MM, height_mm)
    bottom = p.box.y + p.box.h
    labels = []
    for v in ax.value_labels:
        lines = v.text.split("\n")
        w, h = max(textwidth.width_mm(ln, v.size_pt) for ln in lines), text_height(len(lines), v.size_pt)
        y = min(p.Y(v.y), bottom) if p.y.shows(v.y) else bottom
        labels.append((p.X(v.x) - w / 2, y - h, p.X(v.x) + w / 2, y))
    bars = [
        (p.X(b.x0), min(p.Y(b.y1), bottom), p.X(b.x1), min(p.Y(b.y0), bottom))
        for b in ax.artists
        if isinstance(b, Band) and b.y0 is not None and b.y1 is not None
    ]
    near = [(x0 - GAP_MM, y0, x1 + GAP_MM, y1) for x0, y0, x1, y1 in labels]  # 3 px apart along the row
    return any(_meet(a, b) for k, a in enumerate(near) for b in labels[k + 1 :]) or any(
        _meet(a, b) for a in labels for b in bars
    )


def _meet(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def _headroom(ax: Axes, height_mm: float) -> None:
    """Raise the top of the y axis until every printed value ends inside the axes (the figure's
    height sets the axes', which the top does not change)."""
    if not ax.value_labels or ax.ylim is None or ax.ylim[0] is None or ax.ylim[1] is None:
        return
    lo, hi = ax.ylim
    (p,) = vfigure.lay_out([ax], CONTENT_WIDTH_MM, height_mm)
    h = p.box.h
    f = (lambda v: math.log10(v)) if ax.ylog else (lambda v: v)
    top = f(hi)
    for v in ax.value_labels:
        if not p.y.shows(v.y):
            continue
        lines = v.text.split("\n")
        above = (
            max(textwidth.width_mm(ln, v.size_pt) for ln in lines) if v.upright else text_height(len(lines), v.size_pt)
        )
        if above + GAP_MM < h:
            top = max(top, f(lo) + (f(v.y) - f(lo)) * h / (h - above - GAP_MM))
    ax.ylim = (lo, 10**top if ax.ylog else top)
