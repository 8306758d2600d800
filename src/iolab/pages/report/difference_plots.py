"""The comparison's difference plot: each drive's series and its difference from the group
mean, the drives lined up by round or interval number (never by position)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence

from iolab.pages.report.drawing import drawn_apart
from iolab.pages.report.plot_style import (
    Series,
    _figure,
    _png,
    _thousands,
    color,
    legend_right,
    styled,
    whole_number_ticks,
)


def group_means(series: Sequence[Series]) -> dict[float, float]:
    """The group mean at each x (round or interval number) that at least two series measured:
    points are matched by their x, never by position, and one drive alone has no group."""
    by_x: dict[float, list[float]] = {}
    for s in series:
        for x, y in zip(s.x, s.y):
            by_x.setdefault(x, []).append(y)
    return {x: sum(ys) / len(ys) for x, ys in by_x.items() if len(ys) >= 2}


def alignment_text(series: Sequence[Series], what: str) -> str:
    """How the difference plot lines the drives up, and over which span it could."""

    def span(xs: Iterable[float]) -> str:
        xs = sorted(xs)
        return "none" if not xs else f"{xs[0]:g}" if len(xs) == 1 else f"{xs[0]:g}–{xs[-1]:g}"

    shared = group_means(series)
    each = "; ".join(f"{s.label.split()[0]} {span(s.x)}" for s in series)
    return (
        f"Drives are aligned on the {what} number: the group mean at {what} i is the mean of the drives that "
        f"measured {what} i, and a difference is drawn only where at least two drives did ({what}s "
        f"{span(shared)}). {what.capitalize()}s measured: {each}."
    )


@drawn_apart
def difference_from_mean(
    series: Sequence[Series], xlabel: str, ylabel: str, title: str, height_mm: float = 150
) -> bytes:
    """Each drive's series (top) and its difference from the group mean (bottom, in % of the
    mean) at every x that at least two drives measured (group_means)."""
    with styled():
        fig = _figure(height_mm)
        top, bottom = fig.subplots(2, 1, sharex=True)
        means = group_means(series)
        for k, s in enumerate(series):
            top.plot(s.x, s.y, lw=1.0, marker="o" if len(s.x) <= 60 else None, ms=2.5, color=color(k), label=s.label)
            pts = [(x, 100.0 * (y - means[x]) / means[x]) for x, y in zip(s.x, s.y) if means.get(x)]
            if pts:
                xs, diff = zip(*pts)
                bottom.plot(
                    xs, diff, lw=1.0, marker="o" if len(xs) <= 60 else None, ms=2.5, color=color(k), label=s.label
                )
        top.set_ylabel(ylabel)
        top.set_ylim(bottom=0)
        _thousands(top)
        top.set_title(title)
        bottom.axhline(0, color="black", lw=0.8)
        bottom.set_ylabel("difference from group mean (%)")
        bottom.set_xlabel(xlabel)
        whole_number_ticks(bottom.xaxis, [x for s in series for x in s.x])
        # wrapped: at a capture time's length it ran off the figure
        bottom.set_title(
            textwrap.fill(f"difference from the group mean at each {xlabel} measured by at least two drives", 60)
        )
        _thousands(bottom)
        for ax in (top, bottom):
            legend_right(ax)
        return _png(fig)
