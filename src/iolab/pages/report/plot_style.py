"""How the report's matplotlib plots are drawn: the style, palette and page-sized figure, the
PNG it becomes, the axis formatters, and `Series`, the plain series every plot takes (the plots
iolab draws itself as vectors, vfigure.py, take the same series and palette and match this
style). matplotlib is imported on the first plot, never with the module."""

from __future__ import annotations

import io
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from iolab.core.units import num
from iolab.pages.report.geometry import MIN_TICKS, draw_recorded, png_info
from iolab.pages.report.model import CONTENT_WIDTH_MM
from iolab.pages.report.tickcache import tick_work_cached, ticks_cloned

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure as MplFigure
    from matplotlib.ticker import FuncFormatter
    from matplotlib.typing import RcKeyType

MM = 1 / 25.4
DPI = 140
STYLE: dict[RcKeyType, Any] = {
    "font.size": 8,
    "axes.titlesize": 9,
    "axes.labelsize": 8,
    "legend.fontsize": 7,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "font.family": "DejaVu Sans",
}
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]


@dataclass(frozen=True)
class Series:
    label: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    partial: tuple[int, ...] = ()  # indices of partial intervals (ended by a budget), drawn marked


PARTIAL_LABEL = "partial interval (ended by the write budget, not the cell time)"


def _mark_partial(ax: Axes, s: Series, log: bool, labelled: bool) -> bool:
    """Ring a series' partial intervals so no reader takes them for full ones."""
    pts = [(s.x[i], s.y[i]) for i in s.partial if i < len(s.x) and (not log or (s.x[i] > 0 and s.y[i] > 0))]
    if not pts:
        return labelled
    xs, ys = zip(*pts)
    ax.plot(
        xs,
        ys,
        ls="none",
        marker="o",
        ms=7,
        mfc="none",
        mec="#d62728",
        mew=1.2,
        label=None if labelled else PARTIAL_LABEL,
    )
    return True


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


@contextmanager
def styled(extra: dict[RcKeyType, Any] | None = None) -> Iterator[None]:
    """The report's plot style, and its ticks made by copying (tickcache.ticks_cloned).
    matplotlib is imported here, on the first plot, not with the module: every CLI command
    would otherwise pay its ~2 s import."""
    import logging

    import matplotlib

    matplotlib.use("Agg")  # never open a window; reports are written headless
    # Every plot is DejaVu Sans. A font cache another matplotlib wrote (a second install, since
    # removed, sharing ~/.cache/matplotlib) lacks the bundled math fonts, and each plot worker
    # then logged 21 "findfont: ... Falling back to DejaVu Sans" lines under `--quiet`.
    for name in ("matplotlib.font_manager", "matplotlib._mathtext"):
        logging.getLogger(name).setLevel(logging.ERROR)
    with matplotlib.rc_context(STYLE | (extra or {})), ticks_cloned():
        yield


def _figure(height_mm: float, width_mm: float = CONTENT_WIDTH_MM) -> MplFigure:
    from matplotlib.figure import Figure as MplFigure

    return MplFigure(figsize=(width_mm * MM, height_mm * MM), dpi=DPI, layout="constrained")


def _png(fig: MplFigure) -> bytes:
    """The figure as an opaque RGB PNG, drawn once. `savefig` would draw it twice (a hidden pass
    for the constrained layout, then the real one) and keep an alpha channel every pixel of which
    is opaque, which the PDF would need decoded and split off as an image mask (pdfdoc.py takes an
    RGB PNG's compressed rows as they are): the same pixels at about two thirds of the CPU (a figure with see-through parts keeps its alpha)."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    canvas = FigureCanvasAgg(fig)
    with tick_work_cached():
        drawn = draw_recorded(canvas)  # lays the figure out (constrained) and renders it, in one pass
    pixels = np.asarray(canvas.buffer_rgba())
    rgba = Image.fromarray(pixels, "RGBA")
    opaque = bool(pixels[..., 3].min() == 255)
    buf = io.BytesIO()
    # what was drawn goes with the pixels: the report's geometry check reads it (geometry.py)
    (rgba.convert("RGB") if opaque else rgba).save(buf, format="png", dpi=(DPI, DPI), pnginfo=png_info(drawn))
    return buf.getvalue()


def lay_out(fig: MplFigure) -> None:
    """Lay the figure out as it will be drawn (to measure its texts), without rendering it."""
    with tick_work_cached():
        fig.draw_without_rendering()


def ticks() -> FuncFormatter:
    """Axis and colour-bar ticks print with the report's one number formatter (units.num)."""
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _: num(v, trim=True))


def _thousands(ax: Axes, axis: str = "y") -> None:
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(ticks())


def _log_ticks(ax: Axes, axis: str = "y") -> None:
    """Plain numbers on log axes (10, 100, 1,000 instead of 10^1 …)."""
    from matplotlib.ticker import LogLocator, MaxNLocator, NullFormatter

    a = ax.yaxis if axis == "y" else ax.xaxis
    lo, hi = sorted(ax.get_ylim() if axis == "y" else ax.get_xlim())
    steps: list[tuple[float, ...]] = [
        (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)
    ]  # under a decade: powers of ten alone may label nothing
    if lo > 0 and hi / lo >= 10:  # 1-2-5 steps under ~2.5 decades, powers of ten above, finer if too few
        steps = [(1.0, 2.0, 5.0), *steps] if hi / lo < 300 else [(1.0,), (1.0, 2.0, 5.0), *steps]
    for subs in steps if lo > 0 else ():
        a.set_major_locator(LogLocator(base=10, subs=subs))
        if len([v for v in a.get_major_locator().tick_values(lo, hi) if lo <= v <= hi]) >= MIN_TICKS:
            break
    else:
        if lo > 0:  # a narrow span (50 to 75 µs) between those steps: evenly spaced round numbers
            # (only there: on a span of decades they crowd its top and leave its bottom unlabelled)
            a.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10], min_n_ticks=MIN_TICKS))
    a.set_major_formatter(ticks())
    a.set_minor_formatter(NullFormatter())


LEGEND_WRAP = 30  # characters a legend line holds: a drive named by its file's path squeezed the plot


def legend_right(
    ax: Axes, handles: Sequence[Any] | None = None, labels: Sequence[str] | None = None, **kw: Any
) -> None:
    """The report's legend: beside the axes on the right, without a frame, each entry wrapped
    at word boundaries (geometry.py reads an entry back with its spaces, so it still names its series)."""
    import textwrap

    if handles is None or labels is None:
        handles, labels = ax.get_legend_handles_labels()
    wrapped = [textwrap.fill(lab, LEGEND_WRAP, break_long_words=False, break_on_hyphens=False) for lab in labels]
    ax.legend(handles, wrapped, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False, **kw)


def unmeasured(ax: Axes, why: str) -> None:
    """An axes with nothing to plot says why in its middle, and shows no y ticks: an empty frame
    with 0-1 ticks would read as a measurement."""
    import textwrap

    ax.text(0.5, 0.5, textwrap.fill(why, 70), transform=ax.transAxes, ha="center", va="center", color="#555555")
    ax.set_yticks([])


def spaced_labels(fig: MplFigure, axis: Axis, texts: list[str], gap_px: float = 3.0) -> list[str]:
    """The tick labels with each one that would overprint the label kept before it left
    blank (close levels on a log axis, e.g. 32 and 36): measured on the laid-out figure."""
    axis.set_ticklabels(texts)
    lay_out(fig)
    kept, out = None, []
    for text, label in zip(texts, axis.get_ticklabels()):
        box = label.get_window_extent()
        if kept is not None and box.x0 < kept.x1 + gap_px:
            out.append("")
            continue
        kept = box
        out.append(text)
    return out


def declutter(fig: MplFigure, texts: list[Any], pad_px: float = 1.0) -> int:
    """Point labels, in order, each one left out that would overprint one kept before it
    (the same outstanding IO at nearly the same point of two curves): measured on the laid-out
    figure. Returns how many were left out."""
    lay_out(fig)
    kept: list[Any] = []
    left_out = 0
    for t in texts:
        box = t.get_window_extent().expanded(1.0, 1.0).padded(pad_px)
        if any(box.overlaps(k) for k in kept):
            t.set_visible(False)
            left_out += 1
        else:
            kept.append(box)
    return left_out


def whole_number_ticks(axis: Axis, values: Sequence[float]) -> None:
    """Rounds, intervals and steps are whole numbers: no tick between them (1.5)."""
    from matplotlib.ticker import FixedLocator, MaxNLocator

    if values and all(float(v).is_integer() for v in values):
        distinct = sorted(set(values))
        # fewer whole numbers than an axis labels at least (two rounds): each one labelled
        axis.set_major_locator(FixedLocator(distinct) if len(distinct) < MIN_TICKS else MaxNLocator(integer=True))
