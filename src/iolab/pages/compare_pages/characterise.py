"""The characterisation tests' overlays in a comparison: matrices as IOPS vs queue depth per
drive (entropy also as IOPS vs entropy per queue depth), QoS as per-round figures per drive,
IO consistency as the per-second series per drive on one linear scale."""

from __future__ import annotations

from iolab.core.units import num
from iolab.figures.compare.characterise import grid
from iolab.figures.consistency import part_verdict
from iolab.figures.summary import PhaseSummary
from iolab.pages.report import plot_style, plots, vfigure
from iolab.pages.report.char_series import consistency_figures as consistency_facts
from iolab.pages.report.char_series import consistency_series, steady_from
from iolab.pages.report.model import CONTENT_WIDTH_MM, Figure, Page, Table
from iolab.pages.report.rundata import RunData
from iolab.pages.report.vaxes import Axes
from iolab.pages.report.vector import Drawing
from iolab.pages.report.vscatter import dots, title_height, titled
from iolab.pages.report.vticks import autoscale

PREFERRED_SERIES = ("4KiB", "30% W", "0% entropy")


def _common_series(phs: list[PhaseSummary]) -> str | None:
    sets = [set(grid(p)[0]) for p in phs]
    common = set.intersection(*sets) if sets else set()
    return next((s for s in PREFERRED_SERIES if s in common), None) or next(
        (s for s in grid(phs[0])[0] if s in common), None
    )


def _phases(runs: list[RunData], name: str, has: str) -> list[PhaseSummary] | None:
    """Each run's phase `name`, or None where a run lacks it or it has no `has` (cells, rows)."""
    phs = [r.phase(name) for r in runs]
    found = [p for p in phs if p is not None and getattr(p, has)]
    return found if len(found) == len(phs) else None


def matrix_overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    pages = []
    names = list(dict.fromkeys(p.phase.name for p in runs[0].phases if p.phase.name != "precondition"))
    for name in names:
        phs = _phases(runs, name, "cells")
        if phs is None:
            continue
        series = _common_series(phs)
        if series is None:
            continue
        qds = sorted({q for p in phs for (s, q) in grid(p)[2] if s == series})
        lines = []
        for label, p in zip(labels, phs):
            cells = grid(p)[2]
            pts = [(i, cells[(series, q)].iops) for i, q in enumerate(qds) if (series, q) in cells]
            lines.append(plots.Series(label, *map(tuple, zip(*pts))) if pts else plots.Series(label, (), ()))
        png = plots.lines_over_categories(
            [str(q) for q in qds], lines, "queue depth", "IOPS", f"{name}, {series}: IOPS vs queue depth", height_mm=110
        )
        pages.append(
            Page(
                f"{name}: IOPS vs queue depth ({series})",
                (Figure(f"{name}, {series}: one line per drive", png, "Source: each run's results.db table cells."),),
            )
        )
    return pages


def entropy_overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    """The matrix overlays (IOPS vs QD at 0 % entropy), then per phase and queue depth every
    drive's IOPS over entropy: where compression pays, the line rises towards 0 %."""
    pages = matrix_overlays(runs, labels)
    names = list(dict.fromkeys(p.phase.name for p in runs[0].phases if p.phase.name != "precondition"))
    for name in names:
        phs = _phases(runs, name, "cells")
        if phs is None:
            continue
        grids = [grid(p) for p in phs]
        qds = sorted(set.intersection(*({q for _, q in g[2]} for g in grids)))
        entropies = list(dict.fromkeys(e for g in grids for e in g[0]))
        figures = []
        for qd in qds:
            lines = []
            for label, (_, _, cells) in zip(labels, grids):
                pts = [(i, cells[(e, qd)].iops) for i, e in enumerate(entropies) if (e, qd) in cells]
                lines.append(plots.Series(label, *map(tuple, zip(*pts))) if pts else plots.Series(label, (), ()))
            png = plots.lines_over_categories(
                entropies,
                lines,
                "data entropy (0 %: compressible)",
                "IOPS",
                f"{name}, QD{qd}: IOPS vs entropy",
                height_mm=85,
            )
            figures.append(
                Figure(
                    f"{name}, QD{qd}: IOPS vs entropy, one line per drive",
                    png,
                    "Source: each run's results.db table cells.",
                )
            )
        for i in range(0, len(figures), 2):
            qd_text = ", ".join(f"QD{q}" for q in qds[i : i + 2])
            pages.append(Page(f"{name}: IOPS vs entropy ({qd_text})", tuple(figures[i : i + 2])))
    return pages


def qos_overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    pages = []
    for name in ("write rounds", "read rounds"):
        phs = _phases(runs, name, "rows")
        if phs is None:
            continue
        blocks = []
        for what, attr, log in (("IOPS", "iops", False), ("maximum latency (µs)", "lat_max_us", True)):
            series = [
                plots.Series(
                    label, tuple(float(r.round) for r in p.rows), tuple(float(getattr(r, attr) or 0) for r in p.rows)
                )
                for label, p in zip(labels, phs)
            ]
            png = plots.lines_over_categories(
                [str(r.round) for r in phs[0].rows],
                [plots.Series(s.label, tuple(x - 1 for x in s.x), s.y) for s in series],
                "round",
                what,
                f"{name}: {what} per round",
                height_mm=85,
                logy=log,
            )
            blocks.append(Figure(f"{name}: {what}, one line per drive", png, "Source: each run's results.db."))
        pages.append(Page(f"{name}: per round", tuple(blocks)))
    return pages


def common_scale(series: list[plots.Series]) -> float:
    """The top of the one linear IOPS axis every drive's panel shares: the highest second of
    any drive, with room so no point sits on the frame."""
    return 1.05 * max((y for s in series for y in s.y), default=0.0) or 1.0


def per_drive_axes(series: list[plots.Series]) -> list[Axes]:
    """One panel per drive, each second a point, all on one linear axis from 0 to the common
    maximum: a 4 % spread looks like 4 %, not like a collapse an auto-zoomed axis would draw."""
    top = common_scale(series)
    span = autoscale([x for s in series for x in s.x], False)  # one time axis (matplotlib's sharex)
    axes = []
    for i, s in enumerate(series):
        ax = Axes(title=s.label, ylabel="IOPS", ylim=(0, top), xlim=span, legend=False)
        ax.add(*dots(s.x, s.y, plot_style.color(i)))
        axes.append(ax)
    if axes:
        axes[-1].xlabel = "time (s)"
    return axes


def _per_drive_scatter(series: list[plots.Series], height: float) -> Drawing:
    title = "IOPS every second, one panel per drive (one linear scale from 0)"
    drawn = vfigure.draw(per_drive_axes(series), CONTENT_WIDTH_MM, height - title_height(), title)
    return titled(drawn, title)


def consistency_overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    series, rows = [], []
    for label, run in zip(labels, runs):
        t, iops, _, _, _ = consistency_series(run)
        series.append(plots.Series(label, tuple(t), tuple(iops)))
        sp, dips = consistency_facts(run)
        rows.append(
            (
                label,
                # the verdict beside the figures, as the run's own report gives it: only the ranking's
                # marks said a part was NOT steady, and this table gave its figures bare
                f"from {steady_from(run):g} s: {part_verdict(sp)}",
                num(sp.mean) if sp else "—",
                f"{sp.cv:.1%}" if sp else "—",
                f"{sp.min_over_max:.1%}" if sp else "—",
                dips.text() if dips else "not evaluated",
            )
        )
    height = min(170.0, 30.0 + 40.0 * len(series))  # the panels and their captions fill one page at most
    figure = Figure(
        f"IOPS every second, one panel per drive, linear from 0 to {num(common_scale(series))}",
        _per_drive_scatter(series, height),
        "Source: each run's results.db table series.",
    )
    table = Table(
        "steady part of each run (after its own start), and whether it was steady by the run's rule",
        ("drive", "steady by the rule?", "mean IOPS", "CV", "min ÷ max", "periodic dips"),
        tuple(rows),
        "Source: each run's results.db table series, after the run's steady-part start; the rule: "
        "the steady-state range and fit-line excursion over pieces of the part.",
    )
    if height <= 120:
        return [Page("IO Consistency: drives", (figure, table))]
    return [Page("IO Consistency: drives", (figure,)), Page("IO Consistency: steady part", (table,))]
