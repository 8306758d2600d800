"""Plots of the RWSW pages that the PTS plots do not cover: stacked panels of metrics over
time or over outstanding IO, and the demand-intensity curve. Same style and sizing as
plot_style.py (millimetres of the printed page, units on every axis)."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from iolab.core.units import num
from iolab.pages.report.drawing import drawn_apart
from iolab.pages.report.plot_style import (
    Series,
    _figure,
    _log_ticks,
    _mark_partial,
    _png,
    _thousands,
    color,
    declutter,
    legend_right,
    spaced_labels,
    styled,
    unmeasured,
    whole_number_ticks,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

    from iolab.traces.analysis.streamstats import StreamAnalysis


@dataclass(frozen=True)
class Panel:
    title: str
    ylabel: str
    series: tuple[Series, ...]
    logy: bool = False
    steps: bool = False  # draw as a step function (a value holds over an interval)
    missing: str = "not measured in this run"  # said in the panel when no series has a point


@drawn_apart
def panels(
    items: Sequence[Panel],
    xlabel: str,
    height_mm: float,
    logx2: bool = False,
    shade: tuple[float, float] | None = None,
    shade_label: str = "",
) -> bytes:
    """Panels stacked over a shared x axis. `logx2`: x is outstanding IO, on a base-2 log axis
    with every level labelled. `shade` marks an x span (e.g. the measurement window)."""
    with styled():
        fig = _figure(height_mm)
        axes = fig.subplots(len(items), 1, squeeze=False, sharex=True)[:, 0]
        for ax, p in zip(axes, items):
            labelled = False
            for i, s in enumerate(p.series):
                if not s.x:
                    continue
                if p.steps:
                    ax.step(s.x, s.y, where="post", lw=1.1, color=color(i), label=s.label)
                else:
                    ax.plot(
                        s.x, s.y, marker="o" if len(s.x) <= 80 else None, ms=2.8, lw=1.1, color=color(i), label=s.label
                    )
                labelled = _mark_partial(ax, s, p.logy, labelled)
            if shade is not None:
                ax.axvspan(shade[0], shade[1], color="#2ca02c", alpha=0.08, label=shade_label or None)
            ax.set_title(p.title)
            if not any(s.x for s in p.series):
                unmeasured(ax, p.missing)
                ax.set_ylabel(p.ylabel)
                continue
            ax.set_ylabel(p.ylabel + (" (log scale)" if p.logy else ""))
            if p.logy and any(y > 0 for s in p.series for y in s.y):
                ax.set_yscale("log")
                _log_ticks(ax)
            else:
                ax.set_ylim(bottom=0)
                _thousands(ax)
            if ax.get_legend_handles_labels()[0]:  # only what was drawn: a series without points has no entry
                legend_right(ax)
        last = axes[-1]
        last.set_xlabel(xlabel)
        if logx2:
            levels = sorted({x for p in items for s in p.series for x in s.x})
            last.set_xscale("log", base=2)
            last.set_xticks(levels)
            last.minorticks_off()
            last.set_xticks(levels, spaced_labels(fig, last.xaxis, [num(x, trim=True) for x in levels]))
        else:
            whole_number_ticks(last.xaxis, [x for p in items for s in p.series for x in s.x])
            _thousands(last, "x")  # 2,000,000, not 2.0 under a "1e6" offset
        return _png(fig)


@drawn_apart
def demand_intensity(
    points: Sequence[tuple[str, Sequence[tuple[float, float, int]]]],
    ylabel: str,
    title: str,
    height_mm: float = 100,
    missing: str = "no point measured in these runs",
) -> bytes:
    """Response time vs IOPS, one curve per series, each point labelled with its outstanding
    IO: where the curve turns up, more users only add waiting (the PTS DIRTH 'demand
    intensity' plot). points: (label, [(iops, response time, oio)])."""
    with styled():
        fig = _figure(height_mm)
        ax = fig.subplots()
        if not any(pts for _, pts in points):
            unmeasured(ax, missing)
            ax.set(xticks=[], xlabel="IOPS", ylabel=ylabel, title=title)
            return _png(fig)
        marks = []
        for i, (label, pts) in enumerate(points):
            if not pts:
                continue
            xs, ys, oio = zip(*pts)
            ax.plot(xs, ys, marker="o", ms=3.5, lw=1.2, color=color(i), label=label)
            for x, y, n in pts:
                marks.append(
                    ax.annotate(f"{n}", (x, y), xytext=(3, 3), textcoords="offset points", fontsize=6, color=color(i))
                )
        ax.set_xlabel("IOPS")
        ax.set_ylabel(ylabel + " (log scale)")
        ax.set_yscale("log")
        _log_ticks(ax)
        ax.set_xlim(left=0)
        _thousands(ax, "x")
        ax.set_title(title)
        legend_right(ax, title="point label:\noutstanding IO", title_fontsize=6.5)
        declutter(fig, marks)  # a label printed over another's reads as a third number: the later one is left out
        return _png(fig)


def analysis_pngs(analysis: StreamAnalysis) -> dict[str, tuple[bytes, float]]:
    """The stream-analysis plots (analysis/plots.py) as PNG bytes with their height in mm at
    the page's width. A plot the trace cannot have (no response times: no outstanding-IO or
    RT plot) is absent."""
    from PIL import Image

    from iolab.pages.report.model import CONTENT_WIDTH_MM
    from iolab.traces.analysis.plots import plot_all

    def recorded(fig: MplFigure, out: Path) -> None:
        """As every report plot: plain numbers on log axes, and the pixels with what was drawn."""
        for ax in fig.axes:
            if ax.get_yscale() == "log":
                _log_ticks(ax)
        fig.tight_layout()
        fig.set_dpi(110)
        out.write_bytes(_png(fig))

    out = {}
    with tempfile.TemporaryDirectory(prefix="iolab-selftest-") as d:
        for name, path in plot_all(analysis, Path(d), save=recorded).items():
            with Image.open(path) as im:
                w, h = im.size
            out[name] = (path.read_bytes(), CONTENT_WIDTH_MM * h / w)
    return out
