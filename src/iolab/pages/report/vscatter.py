"""Pieces the characterise, comparison and fleet plots add to vfigure.py's: a scatter series
(one dot per second, as matplotlib's `scatter(s=3)` draws it, with its legend sample three
times as large as `markerscale=3` drew it) and a title over a whole figure of stacked panels
(matplotlib's `suptitle`)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any, cast

from iolab.pages.report.vaxes import TITLE_PT, Path
from iolab.pages.report.vector import Clip, Drawing, Line, Shape
from iolab.pages.report.vfigure import FIG_PAD, TITLE_PAD
from iolab.pages.report.vtext import PX_PER_MM, Canvas, drawing, text_height

# matplotlib's scatter(s=3): a face of 3 pt² (√3 pt across) edged in its own colour by
# lines.linewidth (1.5 pt); a Path's marker_pt is the face with a 1 pt edge (vaxes.marker_radius)
DOT_PT = math.sqrt(3.0) + 1.5 - 1.0
HANDLE_DOT_PT = 3 * math.sqrt(3.0) + 1.5 - 1.0  # legend(markerscale=3)
# dots in one cell of a CELLS_X × CELLS_Y grid over the points are drawn once: a dot is 1.14 mm
# across, a cell a quarter of that on a page-wide plot (160 × 55 mm axes), so a dot left out lies
# under the one kept. A day of noisy seconds (86,400): 10,311 dots, 0.58 MB of SVG, drawn in
# 0.12 CPU-s; with cells of 0.08 mm 53,441 dots and 3.0 MB
CELLS_X, CELLS_Y = 600, 240


def dots(xs: Sequence[float], ys: Sequence[float], color: str, label: str = "", log: bool = False) -> list[Path]:
    """One dot per point, each drawn once where several would cover the same spot. Labelled: a
    dot-less series first, the legend's larger sample (vfigure's legend shows an entry's first
    artist; the record's series take the label's points from the dots)."""
    pts = thinned(xs, ys, log)
    out = [Path((), (), color, 0.0, marker_pt=HANDLE_DOT_PT, label=label)] if label else []
    return [*out, Path(tuple(x for x, _ in pts), tuple(y for _, y in pts), color, 0.0, marker_pt=DOT_PT, label=label)]


def thinned(xs: Sequence[float], ys: Sequence[float], log: bool) -> list[tuple[float, float]]:
    """The points, in order, with each that falls in the cell of one kept before left out (the
    cells a CELLS_X × CELLS_Y grid over the points' extent, by the logarithm on a log axis)."""
    pts = [(x, y) for x, y in zip(xs, ys) if math.isfinite(x) and math.isfinite(y) and (y > 0 or not log)]
    if len(pts) < 2:
        return pts
    vy = [math.log10(y) if log else y for _, y in pts]
    x0, y0 = min(x for x, _ in pts), min(vy)
    dx = (max(x for x, _ in pts) - x0) / CELLS_X or 1.0
    dy = (max(vy) - y0) / CELLS_Y or 1.0
    seen: set[tuple[int, int]] = set()
    out = []
    for (x, y), v in zip(pts, vy):
        cell = (int((x - x0) / dx), int((v - y0) / dy))
        if cell not in seen:
            seen.add(cell)
            out.append((x, y))
    return out


def titled(d: Drawing, title: str) -> Drawing:
    """The drawing moved down under `title`, centred over the whole figure (its record's texts
    with it; the title recorded as matplotlib's suptitle is, a title of no axes)."""
    c = Canvas(d.width_mm, d.height_mm)
    box = c.text(title, TITLE_PT, "title", -1, d.width_mm / 2, FIG_PAD, "center", "top")
    dy = box[3] - FIG_PAD + TITLE_PAD
    shift = dy * PX_PER_MM
    texts = cast(list[dict[str, Any]], d.record["texts"])
    moved = [{**t, "box": [v + (shift if k % 2 else 0.0) for k, v in enumerate(t["box"])]} for t in texts]
    shapes = (*c.shapes, *(_down(s, dy) for s in d.shapes))
    axes = cast(list[dict[str, object]], d.record["axes"])
    return drawing(d.width_mm, d.height_mm + dy, shapes, c.texts + moved, axes, d.alt)


def title_height() -> float:
    """What `titled` adds to a figure's height (mm)."""
    return text_height(1, TITLE_PT) + TITLE_PAD


def _down(s: Shape, dy: float) -> Shape:
    if isinstance(s, Clip):
        return dataclasses.replace(s, y=s.y + dy, shapes=tuple(_down(k, dy) for k in s.shapes))
    if isinstance(s, Line):
        return dataclasses.replace(s, points=tuple((x, y + dy) for x, y in s.points))
    return dataclasses.replace(s, y=s.y + dy)
