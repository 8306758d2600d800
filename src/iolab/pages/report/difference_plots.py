"""The comparison's difference plot: each drive's series and its difference from the group
mean, the drives lined up by round or interval number (never by position), drawn by iolab as
vector shapes (vfigure.py)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from iolab.pages.report import vfigure
from iolab.pages.report.model import CONTENT_WIDTH_MM
from iolab.pages.report.plot_style import Series, color
from iolab.pages.report.vaxes import TITLE_PT, Axes, Path, Rule
from iolab.pages.report.vector import Drawing
from iolab.pages.report.vtext import fill_mm
from iolab.pages.report.vticks import Tick, autoscale


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


def difference_from_mean(
    series: Sequence[Series], xlabel: str, ylabel: str, title: str, height_mm: float = 150
) -> Drawing:
    """Each drive's series (top) and its difference from the group mean (bottom, in % of the
    mean) at every x that at least two drives measured (group_means). Both panels share the
    x axis; only the bottom one labels it."""
    means = group_means(series)
    xs = [x for s in series for x in s.x]
    xlim = autoscale(xs, False)
    top = Axes(title=title, ylabel=ylabel, ylim=(0, None), xlim=xlim)
    under = f"difference from the group mean at each {xlabel} measured by at least two drives"
    bottom = Axes(title=under, xlabel=xlabel, ylabel="difference from group mean (%)", xlim=xlim)
    for k, s in enumerate(series):
        top.add(Path(s.x, s.y, color(k), 1.0, marker_pt=2.5 if len(s.x) <= 60 else 0.0, label=s.label))
        pts = [(x, 100.0 * (y - means[x]) / means[x]) for x, y in zip(s.x, s.y) if means.get(x)]
        if pts:
            px, diff = zip(*pts)
            bottom.add(Path(px, diff, color(k), 1.0, marker_pt=2.5 if len(px) <= 60 else 0.0, label=s.label))
    bottom.add(Rule(0.0, False, "#000000", 0.8))
    for a in (top, bottom):  # rounds and intervals: whole numbers, as many as the axes' width holds
        a.count_x(xs)
    _, laid = vfigure.lay_out([top, bottom], CONTENT_WIDTH_MM, height_mm)
    if top.xwhole:  # the top panel marks the bottom's ticks, unlabelled (matplotlib's sharex)
        top.xticks = [Tick(t.value, "") for t in laid.xticks]
    # wrapped to its axes' width as laid out: at a capture time's length, or beside a wide legend, it ran off the figure
    bottom.title = fill_mm(under, laid.box.w, TITLE_PT)
    return vfigure.draw([top, bottom], CONTENT_WIDTH_MM, height_mm, title)
