"""What a vector plot shows, in data coordinates: an `Axes` holds its series, shaded spans,
rules, stems, notes and point labels, its scales and labels; vfigure.py lays one or more
stacked axes out on a figure and draws them as vector.py shapes. The look is the one the
matplotlib plots had: DejaVu Sans at 9 pt for titles, 8 pt for axis labels, 7 pt for ticks
and legends, a light grey grid, plot_style.PALETTE.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from iolab.pages.report.geometry import MIN_TICKS
from iolab.pages.report.vector import PT_MM, Circle
from iolab.pages.report.vticks import Scale, Tick, autoscale, label

TITLE_PT, LABEL_PT, TICK_PT, LEGEND_PT = 9.0, 8.0, 7.0, 7.0
LEGEND_TITLE_PT = 6.5
GRID = "#e7e7e7"  # matplotlib's grid (#b0b0b0 at alpha 0.3) on white
DASHED = (3.7, 1.6)  # matplotlib's "--" and ":" in pt per pt of line width
DOTTED = (1.0, 1.65)


def dashes(style: str, width_pt: float) -> tuple[float, ...]:
    """A line style ("-", "--", ":") as on/off lengths in pt, scaled by the width as matplotlib does."""
    pattern = {"--": DASHED, ":": DOTTED}.get(style, ())
    return tuple(v * width_pt for v in pattern)


def on_white(color: str, opacity: float) -> str:
    """`color` (#rrggbb) as it shows at `opacity` over white."""
    rgb = [int(color[k : k + 2], 16) for k in (1, 3, 5)]
    return "#" + "".join(f"{round(255 - opacity * (255 - v)):02x}" for v in rgb)


def marker_radius(s: Path) -> float:
    """A dot as large as matplotlib draws it: its size is the face's diameter, and the edge
    (1 pt, in the same colour) adds half its width all round; a ring is its stroke's centre."""
    return (s.marker_pt if s.ring else s.marker_pt + 1.0) / 2 * PT_MM


def marker(s: Path, x: float, y: float) -> Circle:
    """The series' marker at (x, y) mm: a dot in its colour, or a ring."""
    r = marker_radius(s)
    return Circle(x, y, r, None, s.color, 1.2) if s.ring else Circle(x, y, r, s.color)


@dataclass(frozen=True)
class Path:
    """A series: points joined by a line (width 0 for none), each marked by a dot of
    `marker_pt` diameter (a ring when `ring`), as steps (matplotlib's where="post") if `step`,
    against the right-hand y axis if `right`."""

    xs: tuple[float, ...]
    ys: tuple[float, ...]
    color: str
    width_pt: float = 1.2
    style: str = "-"
    marker_pt: float = 0.0
    ring: bool = False
    step: bool = False
    right: bool = False
    label: str = ""


@dataclass(frozen=True)
class Band:
    """A shaded rectangle: x0…x1 by y0…y1, the whole height of the axes when y0 is None."""

    x0: float
    x1: float
    y0: float | None
    y1: float | None
    color: str
    opacity: float
    label: str = ""


@dataclass(frozen=True)
class Rule:
    """A line across the whole axes at x = value (`vertical`) or y = value; `counts`: the axes'
    autoscaled limits take it in, as matplotlib's axhline does (a bound the data must be read
    against), where a mark on the data (a percentile) leaves them to the data."""

    value: float
    vertical: bool
    color: str
    width_pt: float = 0.6
    style: str = "-"
    label: str = ""
    counts: bool = False


@dataclass(frozen=True)
class Stems:
    """Vertical lines from `base` up to each top (a histogram's bins)."""

    xs: tuple[float, ...]
    tops: tuple[float, ...]
    base: float
    color: str
    width_pt: float = 1.4
    opacity: float = 1.0
    label: str = ""


@dataclass(frozen=True)
class Fill:
    """The area between two step curves over shared x edges (a series stacked on the ones below
    it, matplotlib's stairs with a baseline): `lows[i]` to `highs[i]` from `edges[i]` to
    `edges[i + 1]`, one filled polygon however many steps."""

    edges: tuple[float, ...]  # one more than the values
    lows: tuple[float, ...]
    highs: tuple[float, ...]
    color: str
    label: str = ""


Artist = Path | Band | Rule | Stems | Fill


@dataclass(frozen=True)
class Note:
    """Text placed in axes fractions (0, 0 bottom left; 1, 1 top right), wrapped to the axes' width."""

    fx: float
    fy: float
    text: str
    size_pt: float = 7.0
    color: str = "#555555"
    valign: str = "center"  # "center" | "bottom"


@dataclass(frozen=True)
class PointLabel:
    """Text beside a data point, `dx_pt` right and `dy_pt` up from it (matplotlib's annotate),
    or on another side of it where that is clear of the series drawn (vlabels.py)."""

    x: float
    y: float
    text: str
    dx_pt: float = 6.0
    dy_pt: float = 2.0
    size_pt: float = 6.5
    color: str = "#000000"
    # on a side clear of the labels placed before it and of the series, nearer its point than
    # any other marker, or left out (a number printed over another reads as a third number:
    # the matplotlib plots left one out too; printed on a curve, it hides where the curve goes)
    drop: bool = False


@dataclass(frozen=True)
class ValueLabel:
    """Text standing on a data point (a bar's value, matplotlib's text at (x, y) with
    ha="center", va="bottom"): centred on x, its bottom at y (at the axes' bottom when y is not
    on the axis), reading bottom to top if `upright`."""

    x: float
    y: float
    text: str
    size_pt: float = 6.0
    color: str = "#000000"
    upright: bool = False


@dataclass
class Axes:
    """One plot panel. Limits left None are the data's with a margin (a log axis' in decades);
    ticks left None are vticks' (placed ticks: categories, rounds: one per point)."""

    title: str = ""
    xlabel: str = ""
    ylabel: str = ""
    xlog: bool = False
    ylog: bool = False
    xlim: tuple[float, float] | None = None
    ylim: tuple[float | None, float | None] | None = None  # (0, None): from 0 to the data's top
    xticks: list[Tick] | None = None
    yticks: list[Tick] | None = None
    y_visible: bool = True  # False: no y ticks, grid or label (overlaid histograms: no counts)
    right_label: str = ""  # a second y axis on the right (matplotlib's twinx), linear
    right_lim: tuple[float, float] = (0.0, 1.0)
    legend: bool = True  # a legend beside the axes on the right, of every labelled artist
    legend_top: bool = False  # its top level with the axes' (matplotlib's "outside right upper")
    legend_title: str = ""  # a heading over its entries (lines split at "\n"), at LEGEND_TITLE_PT
    xwhole: bool = False  # x counts rounds, intervals or steps: ticks at whole numbers alone (count_x)
    artists: list[Artist] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    point_labels: list[PointLabel] = field(default_factory=list)
    value_labels: list[ValueLabel] = field(default_factory=list)

    def add(self, *artists: Artist) -> None:
        self.artists.extend(artists)

    def scales(self) -> tuple[Scale, Scale]:
        xs, ys = _extents(self.artists)
        xlo, xhi = self.xlim or autoscale(xs, self.xlog)
        lo, hi = autoscale(ys, self.ylog)
        if self.ylim is not None:
            lo = lo if self.ylim[0] is None else self.ylim[0]
            hi = hi if self.ylim[1] is None else self.ylim[1]
            if self.ylim[0] is not None and self.ylim[1] is None:  # from 0: a margin at the top alone
                top = max((v for v in ys if math.isfinite(v)), default=lo)
                # nothing above the bottom: one unit (matplotlib's empty axes), never a range of noise
                hi = autoscale([lo, top], self.ylog)[1] if top > lo else lo + 1.0
        return Scale(xlo, xhi, self.xlog), Scale(lo, hi, self.ylog)

    def count_x(self, xs: Sequence[float]) -> None:
        """x counts rounds, intervals or steps if every x in `xs` is a whole number: then no tick
        between two (1.5), as many as the axes' width holds (vfigure), or each one labelled when
        there are fewer of them than an axis labels at least (two rounds)."""
        if not xs or not all(float(x).is_integer() for x in xs):
            return
        self.xwhole = True
        distinct = sorted(set(xs))
        if len(distinct) < MIN_TICKS:
            self.xticks = [Tick(x, label(x)) for x in distinct]

    def right_scale(self) -> Scale:
        return Scale(*self.right_lim)

    def series(self, x: Scale, y: Scale) -> dict[str, bool]:
        """Each labelled artist: whether it put anything inside the axes (geometry.py's legend
        rule: no legend entry names a series with no point on the plot)."""
        out: dict[str, bool] = {}
        right = self.right_scale()
        for a in self.artists:
            if a.label:
                out[a.label] = out.get(a.label, False) or _shows(a, x, right if getattr(a, "right", False) else y)
        return out


def _extents(artists: Sequence[Artist]) -> tuple[list[float], list[float]]:
    """The x and y values that set autoscaled limits (matplotlib's data limits: a span's x counts,
    a rule's only when it `counts`; the right axis' series count only along x)."""
    xs: list[float] = []
    ys: list[float] = []
    for a in artists:
        if isinstance(a, Path):
            xs += a.xs
            ys += [] if a.right else a.ys
        elif isinstance(a, Band):
            xs += (a.x0, a.x1)
            ys += [v for v in (a.y0, a.y1) if v is not None]
        elif isinstance(a, Stems):
            xs += a.xs
            ys += (a.base, *a.tops)
        elif isinstance(a, Fill):
            xs += a.edges
            ys += (*a.lows, *a.highs)
        elif isinstance(a, Rule) and a.counts:
            (xs if a.vertical else ys).append(a.value)
    return xs, ys


def _shows(a: Artist, x: Scale, y: Scale) -> bool:
    if isinstance(a, Path):
        return any(x.shows(px) and y.shows(py) for px, py in zip(a.xs, a.ys))
    if isinstance(a, Stems):
        return any(x.shows(px) and top > a.base and y.shows(top) for px, top in zip(a.xs, a.tops))
    if isinstance(a, Rule):
        return (x if a.vertical else y).shows(a.value)
    if isinstance(a, Fill):  # a step of some height with part of it inside the axes
        spans = zip(a.edges, a.edges[1:], a.lows, a.highs)
        return any(
            hi > lo and min(x1, x.hi) > max(x0, x.lo) and min(hi, y.hi) > max(lo, y.lo) for x0, x1, lo, hi in spans
        )
    lo, hi = max(min(a.x0, a.x1), x.lo), min(max(a.x0, a.x1), x.hi)
    if a.y0 is None or a.y1 is None:
        return hi > lo
    return hi > lo and min(max(a.y0, a.y1), y.hi) > max(min(a.y0, a.y1), y.lo)
