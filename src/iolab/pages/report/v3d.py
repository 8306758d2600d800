"""The SNIA 3D column plot (block size × R/W mix) drawn as vector shapes (vector.Drawing): the
view matplotlib's plot had (elevation 24°, azimuth -58°, box aspect 1.6 : 1.2 : 0.8), projected
orthographically, the columns painted far to near so a nearer column covers a farther one.

The view looks at the box from the side of +x, -y and +z: the first mix is the front row, the
last block size the right-hand column; the floor and the walls at x = 0 and at the last mix are
the ones behind the columns.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from iolab.pages.report import vticks
from iolab.pages.report.model import CONTENT_WIDTH_MM
from iolab.pages.report.plot_style import color
from iolab.pages.report.vaxes import LABEL_PT, TICK_PT, TITLE_PT
from iolab.pages.report.vector import Drawing, Line
from iolab.pages.report.vgrid import (
    GAP_MM,
    INK,
    PAD_MM,
    TICK_MM,
    Ink,
    along,
    axis_record,
    beside,
    box,
    centred,
    corners,
    per_second,
    reach,
    shaded,
    text_height,
)

ELEV, AZIM = 24.0, -58.0
ASPECT = (1.6, 1.2, 0.8)
FOOT = 0.55  # a column's width and depth, in categories
PANE, GRID, EDGE = "#f0f0f0", "#d4d4d4", "#333333"
# faces lit from above: the top lighter than the column's colour, the side facing right darkest
TOP, FRONT, SIDE = 1.18, 0.92, 0.62
XLABEL, YLABEL = "block size", "R/W mix (%)"

Point = tuple[float, float, float]


@dataclass(frozen=True)
class View:
    """The box (ASPECT units) projected onto the drawing: `scale` mm per unit, the box's
    origin at (ox, oy) mm."""

    scale: float
    ox: float
    oy: float

    @staticmethod
    def axes() -> tuple[Point, Point, Point]:
        """Screen right, screen up and towards the eye, in box coordinates (matplotlib's view_init)."""
        e, a = math.radians(ELEV), math.radians(AZIM)
        right = (-math.sin(a), math.cos(a), 0.0)
        up = (-math.sin(e) * math.cos(a), -math.sin(e) * math.sin(a), math.cos(e))
        eye = (math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e))
        return right, up, eye

    def at(self, p: Point) -> tuple[float, float]:
        right, up, _ = View.axes()
        return (self.ox + _dot(p, right) * self.scale, self.oy - _dot(p, up) * self.scale)

    def direction(self, p: Point, d: Point) -> tuple[float, float]:
        """The unit direction on the drawing that the box direction `d` takes at `p`."""
        (x0, y0), (x1, y1) = self.at(p), self.at((p[0] + d[0], p[1] + d[1], p[2] + d[2]))
        n = math.hypot(x1 - x0, y1 - y0)
        return ((x1 - x0) / n, (y1 - y0) / n)


def _dot(a: Point, b: Point) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@dataclass(frozen=True)
class Grid:
    """The data in box units: categories at their centres, values on the z scale."""

    x_labels: tuple[str, ...]
    y_labels: tuple[str, ...]
    z: tuple[tuple[float | None, ...], ...]
    zticks: tuple[float, ...]  # empty: nothing to plot
    zlabel: str
    title: str

    def bx(self, x: float) -> float:
        return (x + 0.5) / max(1, len(self.x_labels)) * ASPECT[0]

    def by(self, y: float) -> float:
        return (y + 0.5) / max(1, len(self.y_labels)) * ASPECT[1]

    def bz(self, v: float) -> float:
        lo, hi = (self.zticks[0], self.zticks[-1]) if self.zticks else (0.0, 1.0)
        return (v - lo) / (hi - lo) * ASPECT[2]


def value_ticks(values: Sequence[float], label: str) -> tuple[float, ...]:
    """The z axis from zero (or below it) to the first round value at or above the tallest
    column, at least four labelled ticks."""
    if not values:
        return ()
    lo, hi = min(0.0, *values), max(0.0, *values)
    if lo == hi:
        hi = 1.0
    return tuple(vticks.covering(lo, hi, 4, whole=per_second(label)))


def _panes(ink: Ink, g: Grid, v: View) -> None:
    """The floor and the two walls behind the columns, with the grid on them."""
    X, Y, Z = ASPECT
    for quad in (
        ((0, 0, 0), (X, 0, 0), (X, Y, 0), (0, Y, 0)),
        ((0, Y, 0), (X, Y, 0), (X, Y, Z), (0, Y, Z)),
        ((0, 0, 0), (0, Y, 0), (0, Y, Z), (0, 0, Z)),
    ):
        ink.add(Line(tuple(v.at(p) for p in quad), stroke="#b8b8b8", width_pt=0.5, fill=PANE, closed=True))
    lines: list[tuple[Point, ...]] = []
    for i in range(len(g.x_labels)):
        x = g.bx(i)
        lines.append(((x, 0, 0), (x, Y, 0), (x, Y, Z)))
    for j in range(len(g.y_labels)):
        y = g.by(j)
        lines.append(((X, y, 0), (0, y, 0), (0, y, Z)))
    for t in g.zticks:
        z = g.bz(t)
        lines.append(((0, 0, z), (0, Y, z), (X, Y, z)))
    for pts in lines:
        ink.add(Line(tuple(v.at(p) for p in pts), stroke=GRID, width_pt=0.5))


def _columns(ink: Ink, g: Grid, v: View) -> None:
    """Each value's column, painted far to near: by the depth of its footprint (two columns of
    one row or one mix are apart by a plane, and the nearer side of that plane is nearer the eye
    whatever their heights)."""
    _, _, eye = View.axes()
    cells = [(xi, yi, val) for yi, row in enumerate(g.z) for xi, val in enumerate(row) if val is not None]
    cells.sort(key=lambda c: g.bx(c[0]) * eye[0] + g.by(c[1]) * eye[1])
    half = FOOT / 2
    for xi, yi, val in cells:
        x0, x1 = g.bx(xi - half), g.bx(xi + half)
        y0, y1 = g.by(yi - half), g.by(yi + half)
        zb, zt = sorted((g.bz(0.0), g.bz(val)))
        xs = x1 if eye[0] > 0 else x0  # the side facing the eye
        yf = y0 if eye[1] < 0 else y1  # the front facing the eye
        faces = (
            (((xs, y0, zb), (xs, y1, zb), (xs, y1, zt), (xs, y0, zt)), SIDE),
            (((x0, yf, zb), (x1, yf, zb), (x1, yf, zt), (x0, yf, zt)), FRONT),
            (((x0, y0, zt), (x1, y0, zt), (x1, y1, zt), (x0, y1, zt)), TOP),
        )
        base = color(yi)
        for quad, light in faces:
            pts = tuple(v.at(p) for p in quad)
            ink.add(Line(pts, stroke=EDGE, width_pt=0.2, fill=shaded(base, light), closed=True))


def _ticks(
    ink: Ink, v: View, role: str, ticks: Sequence[tuple[Point, str]], out: tuple[float, float]
) -> list[tuple[float, float]]:
    """Tick marks along `out` (a unit direction on the drawing) and their labels beyond them;
    the ends of the marks."""
    ends = []
    for p, text in ticks:
        x, y = v.at(p)
        ex, ey = x + out[0] * TICK_MM, y + out[1] * TICK_MM
        ink.add(Line(((x, y), (ex, ey)), stroke=INK, width_pt=0.6))
        ink.text(beside(text, TICK_PT, ex, ey, out, GAP_MM), f"{role}tick")
        ends.append((ex, ey))
    return ends


def _axis_name(ink: Ink, role: str, text: str, a: tuple[float, float], b: tuple[float, float]) -> None:
    """An axis' name along the axis a -> b, read from a to b, beyond its tick labels on the
    right-hand side of a -> b (the drawing's y is down)."""
    dx, dy = b[0] - a[0], b[1] - a[1]
    n = math.hypot(dx, dy)
    ux, uy = dx / n, dy / n
    normal = (-uy, ux)
    turn = -math.degrees(math.atan2(dy, dx))
    labels = [t for t, r, _ in ink.texts if r == f"{role}tick"]
    far = max((_dot2(c, a, normal) for t in labels for c in corners(t)), default=0.0)
    probe = centred(text, LABEL_PT, 0.0, 0.0, rotate=turn)
    d = far + GAP_MM + reach(probe, normal)
    mid = ((a[0] + b[0]) / 2 + normal[0] * d, (a[1] + b[1]) / 2 + normal[1] * d)
    ink.text(centred(text, LABEL_PT, *mid, rotate=turn), f"{role}label")


def _dot2(c: tuple[float, float], origin: tuple[float, float], d: tuple[float, float]) -> float:
    return (c[0] - origin[0]) * d[0] + (c[1] - origin[1]) * d[1]


def _axes(ink: Ink, g: Grid, v: View) -> None:
    """The three axes on the box's outer edges: block sizes along the front, mixes along the
    right, values up the back-right corner."""
    X, Y, Z = ASPECT
    front, right = v.direction((0, 0, 0), (0, -1, 0)), v.direction((X, 0, 0), (1, 0, 0))
    for a, b in (((0, 0, 0), (X, 0, 0)), ((X, 0, 0), (X, Y, 0)), ((X, Y, 0), (X, Y, Z))):
        ink.add(Line((v.at(a), v.at(b)), stroke=INK, width_pt=0.6))
    _ticks(ink, v, "x", [((g.bx(i), 0, 0), t) for i, t in enumerate(g.x_labels)], front)
    _ticks(ink, v, "y", [((X, g.by(j), 0), t) for j, t in enumerate(g.y_labels)], right)
    _ticks(ink, v, "z", [((X, Y, g.bz(t)), vticks.label(t)) for t in g.zticks], (1.0, 0.0))
    _axis_name(ink, "x", XLABEL, v.at((0, 0, 0)), v.at((X, 0, 0)))
    _axis_name(ink, "y", YLABEL, v.at((X, 0, 0)), v.at((X, Y, 0)))
    if g.zticks:
        _axis_name(ink, "z", g.zlabel, v.at((X, Y, 0)), v.at((X, Y, Z)))


def _compose(g: Grid, v: View, width: float, height: float) -> Ink:
    ink = Ink(width, height)
    _panes(ink, g, v)
    _axes(ink, g, v)
    _columns(ink, g, v)
    size, x = along(g.title, TITLE_PT, width / 2, PAD_MM, width - PAD_MM)
    ink.text(centred(g.title, size, x, PAD_MM + text_height(TITLE_PT) / 2), "title")
    if not g.zticks:
        x, y = v.at((ASPECT[0] / 2, ASPECT[1] / 2, ASPECT[2] / 2))
        ink.text(centred("no value was measured", LABEL_PT, x, y, color="#555555"), "text")
    return ink


def _extent(ink: Ink) -> tuple[float, float, float, float]:
    """The box round everything drawn but the title."""
    pts = [p for s in ink.shapes if isinstance(s, Line) for p in s.points]
    for lab, role, _ in ink.texts:
        if role != "title":
            x0, y0, x1, y1 = box(lab)
            pts += [(x0, y0), (x1, y1)]
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return min(xs), min(ys), max(xs), max(ys)


def _fitted(g: Grid, width: float, height: float) -> Ink:
    """The box as large as the drawing holds with every label inside it: the labels' room is
    in mm whatever the scale, so one trial drawing measures it."""
    top = PAD_MM + text_height(TITLE_PT) + 2 * GAP_MM
    trial = View(50.0, 0.0, 0.0)
    x0, y0, x1, y1 = _extent(_compose(g, trial, width, height))
    cube = [trial.at((a, b, c)) for a in (0, ASPECT[0]) for b in (0, ASPECT[1]) for c in (0, ASPECT[2])]
    cx0, cx1 = min(p[0] for p in cube), max(p[0] for p in cube)
    cy0, cy1 = min(p[1] for p in cube), max(p[1] for p in cube)
    room_w = width - 2 * PAD_MM - (cx0 - x0) - (x1 - cx1)
    room_h = height - top - PAD_MM - (cy0 - y0) - (y1 - cy1)
    k = min(room_w / (cx1 - cx0), room_h / (cy1 - cy0))
    v = View(trial.scale * k, 0.0, 0.0)
    x0, y0, x1, y1 = _extent(_compose(g, v, width, height))
    v = View(v.scale, (width - (x1 - x0)) / 2 - x0, top + (height - PAD_MM - top - (y1 - y0)) / 2 - y0)
    return _compose(g, v, width, height)


def columns_3d(
    x_labels: Sequence[str],
    y_labels: Sequence[str],
    z: Sequence[Sequence[float | None]],
    zlabel: str,
    title: str,
    height_mm: float = 115,
) -> Drawing:
    """3D column plot as in SNIA reports: z[y][x] over (x = block size, y = R/W mix), one colour
    per mix. Missing cells draw no column."""
    values = [v for row in z for v in row if v is not None and math.isfinite(v)]
    cells = tuple(tuple(v if v is not None and math.isfinite(v) else None for v in row) for row in z)
    g = Grid(tuple(x_labels), tuple(y_labels), cells, value_ticks(values, zlabel), zlabel, title)
    ink = _fitted(g, CONTENT_WIDTH_MM, height_mm)
    axes: dict[str, Any] = {
        "title": title,
        "colorbar": False,
        "axes3d": True,
        "x": axis_record(XLABEL, list(enumerate(g.x_labels)), True),
        "y": axis_record(YLABEL, list(enumerate(g.y_labels)), True),
        "z": axis_record(g.zlabel if g.zticks else "", [(t, vticks.label(t)) for t in g.zticks], False),
        "legend": [],
        "series": {},
    }
    return ink.drawing(title, [axes])
