"""Labels beside a vector plot's data points (vaxes.PointLabel), placed clear of the axes'
edges, of each other and of what the series drew (their lines and markers): a number printed on
a curve is hard to read and hides where the curve goes. What the series drew is also the
axes' "drawn" entry in the record, which geometry.py's series rule reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from iolab.pages.report import textwidth
from iolab.pages.report.geometry import point_to_box, segment_to_box
from iolab.pages.report.vaxes import PointLabel
from iolab.pages.report.vector import PT_MM, Circle, Line, Shape
from iolab.pages.report.vtext import PX_PER_MM, Box4, Canvas, free, place, text_height

Point = tuple[float, float]
CLEAR_MM = 0.15  # a label's box this far from a line's or a marker's edge at least
NEAR_MM = 1.0  # what the record keeps of the series: what lies this near a text
FARTHER = 2.0  # the second ring of places tried: this many times the offset asked for


@dataclass(frozen=True)
class Drawn:
    """What an axes' series drew (mm, y down): each line as (series, half its width, points)
    and each marker as (series, x, y, radius to its outer edge)."""

    lines: tuple[tuple[str, float, tuple[Point, ...]], ...]
    dots: tuple[tuple[str, float, float, float], ...]

    @staticmethod
    def of(series: Sequence[tuple[str, Sequence[Shape]]]) -> Drawn:
        lines, dots = [], []
        for label, shapes in series:
            for s in shapes:
                if isinstance(s, Line) and s.stroke is not None:
                    lines.append((label, s.width_pt * PT_MM / 2, s.points))
                elif isinstance(s, Circle):
                    dots.append((label, s.x, s.y, s.r + (s.width_pt * PT_MM / 2 if s.stroke else 0.0)))
        return Drawn(tuple(lines), tuple(dots))

    def clear(self, box: Box4) -> bool:
        """Whether `box` keeps CLEAR_MM off every line and marker."""
        for _, half, pts in self.lines:
            m = half + CLEAR_MM
            for a, b in zip(pts, pts[1:]):
                if min(a[0], b[0]) > box[2] + m or max(a[0], b[0]) < box[0] - m:
                    continue  # nowhere near: most segments, and a check cheaper than the distance
                if min(a[1], b[1]) > box[3] + m or max(a[1], b[1]) < box[1] - m:
                    continue
                if segment_to_box(a, b, box) < m:
                    return False
        return all(point_to_box((x, y), box) >= r + CLEAR_MM for _, x, y, r in self.dots)

    def nearest(self, at: Point, box: Box4) -> bool:
        """Whether the marker at `at` (and any other on that spot) is nearer to `box` than any
        other marker: a label moved off its point must still name that point, not a neighbour's."""
        own = point_to_box(at, box)
        return all(point_to_box((x, y), box) > own for _, x, y, _ in self.dots if (x, y) != at)

    def record(self, area: Box4, texts: Sequence[Box4]) -> dict[str, object]:
        """The record's entry, in its pixels: the parts of the lines and the markers that come
        within NEAR_MM of a text inside `area` (the rest cannot be under one; a latency tail's
        1,600-point line whole would add 29 kB to the report for nothing)."""
        k = PX_PER_MM
        boxes = [b for b in texts if b[0] < area[2] and b[2] > area[0] and b[1] < area[3] and b[3] > area[1]]

        def near(q: Box4, m: float) -> bool:
            return any(q[0] < b[2] + m and q[2] > b[0] - m and q[1] < b[3] + m and q[3] > b[1] - m for b in boxes)

        lines = []
        for label, half, pts in self.lines:
            run: list[Point] = []
            for a, b in zip(pts, pts[1:]):
                if near((min(a[0], b[0]), min(a[1], b[1]), max(a[0], b[0]), max(a[1], b[1])), half + NEAR_MM):
                    run += [a, b] if not run or run[-1] != a else [b]
                elif run:
                    lines.append((label, half, run))
                    run = []
            if run:
                lines.append((label, half, run))
        dots = [d for d in self.dots if near((d[1], d[2], d[1], d[2]), d[3] + NEAR_MM)]

        def px(pts: Sequence[Point]) -> list[list[float]]:
            return [[round(x * k, 2), round(y * k, 2)] for x, y in pts]

        return {
            "box": [round(v * k, 2) for v in area],
            "lines": [[label, round(half * k, 2), px(pts)] for label, half, pts in lines],
            "dots": [[label, round(x * k, 2), round(y * k, 2), round(r * k, 2)] for label, x, y, r in dots],
        }


def _places(px: float, py: float, dx: float, dy: float) -> list[tuple[float, float, str, str]]:
    """Where a label may go, in order: up and right of its point as asked, down and left (the
    free sides of a falling curve), down-right, up-left, then straight right, left, above and
    below; then the same twice as far out."""
    out = []
    for k in (1.0, FARTHER):
        a, b = dx * k, dy * k
        out += [(px + a, py - b, "left", "bottom"), (px - a, py + b, "right", "top")]
        out += [(px + a, py + b, "left", "top"), (px - a, py - b, "right", "bottom")]
        out += [(px + a, py, "left", "center"), (px - a, py, "right", "center")]
        out += [(px, py - b, "center", "bottom"), (px, py + b, "center", "top")]
    return out


def place_labels(c: Canvas, labels: Sequence[tuple[PointLabel, Point]], area: Box4, drawn: Drawn, i: int) -> None:
    """Each label at the first place inside `area`, clear of the labels placed before, of the
    series' lines and markers, and nearer its own point than any other marker. With none such, or
    on a point already labelled, a label to be dropped is left out (a number printed over another, or on a curve, reads as
    another number); any other goes, as before this check, at the first of the four diagonal
    places inside the axes and clear of the labels, else on the figure."""
    placed: list[Box4] = []
    spots: set[Point] = set()
    for pl, (px, py) in labels:
        if pl.drop and (px, py) in spots:
            continue  # a second curve through a labelled point: its label beside the first reads as one number
        w, h = textwidth.width_mm(pl.text, pl.size_pt), text_height(1, pl.size_pt)
        options = _places(px, py, pl.dx_pt * PT_MM, pl.dy_pt * PT_MM)
        corners = [place(x, y, w, h, ha, va, pl.size_pt) for x, y, ha, va in options]
        boxes = [(x0, y0, x0 + w, y0 + h) for x0, y0 in corners]
        good = [
            k for k, q in enumerate(boxes) if free(q, area, placed) and drawn.clear(q) and drawn.nearest((px, py), q)
        ]
        if good:
            chosen = options[good[0]]
        elif pl.drop:
            continue
        else:
            inside = [k for k, q in enumerate(boxes[:4]) if free(q, area, placed)]
            on_figure = [k for k, q in enumerate(boxes[:4]) if free(q, (0.0, 0.0, c.w, c.h), placed)]
            chosen = options[(inside or on_figure or [0])[0]]
        placed.append(c.text(pl.text, pl.size_pt, "text", i, *chosen, color=pl.color))
        spots.add((px, py))
