"""A vector plot (vector.Drawing) as PDF operators: the same shapes the HTML shows as SVG, with
y flipped (pdfdoc.Canvas), clips, dashes, opacity (an ExtGState), and labels anchored by their
measured width (textwidth.py) and rotated about their anchor."""

from __future__ import annotations

import math

from iolab.pages.report import textwidth
from iolab.pages.report.pdfdoc import MM, Canvas, _n
from iolab.pages.report.vector import Circle, Clip, Drawing, Label, Line, Rect, Shape

KAPPA = 0.5523  # a quarter circle's Bézier control distance, in radii


def draw(canvas: Canvas, d: Drawing, x: float, y: float, scale: float) -> None:
    """The drawing with its top-left corner at (x, y) mm on the page, `scale` times its size."""
    canvas.save()
    canvas.clip(x, y, d.width_mm * scale, d.height_mm * scale)
    for s in d.shapes:
        _shape(canvas, s, x, y, scale)
    canvas.restore()


def _shape(c: Canvas, s: Shape, ox: float, oy: float, k: float) -> None:
    def at(px: float, py: float) -> str:
        return c.xy(ox + k * px, oy + k * py)

    if isinstance(s, Clip):
        c.save()
        c.clip(ox + k * s.x, oy + k * s.y, k * s.w, k * s.h)
        for inner in s.shapes:
            _shape(c, inner, ox, oy, k)
        c.restore()
    elif isinstance(s, Label):
        _label(c, s, ox + k * s.x, oy + k * s.y, k)
    elif isinstance(s, Line):
        path = f"{at(*s.points[0])} m " + " ".join(f"{at(px, py)} l" for px, py in s.points[1:])
        _paint(c, path + (" h" if s.closed else ""), s.fill, s.stroke, s.width_pt * k, s.dash, s.opacity, k)
    elif isinstance(s, Rect):
        path = f"{at(s.x, s.y + s.h)} {_n(k * s.w * MM)} {_n(k * s.h * MM)} re"
        _paint(c, path, s.fill, s.stroke, s.width_pt * k, (), s.opacity, k)
    elif isinstance(s, Circle):
        _paint(c, _circle(c, ox + k * s.x, oy + k * s.y, k * s.r), s.fill, s.stroke, s.width_pt * k, (), 1.0, k)


def _circle(c: Canvas, x: float, y: float, r: float) -> str:
    """A closed path of four Bézier quarters (page mm, y down)."""
    q = KAPPA * r
    return (
        f"{c.xy(x + r, y)} m {c.xy(x + r, y - q)} {c.xy(x + q, y - r)} {c.xy(x, y - r)} c "
        f"{c.xy(x - q, y - r)} {c.xy(x - r, y - q)} {c.xy(x - r, y)} c "
        f"{c.xy(x - r, y + q)} {c.xy(x - q, y + r)} {c.xy(x, y + r)} c "
        f"{c.xy(x + q, y + r)} {c.xy(x + r, y + q)} {c.xy(x + r, y)} c h"
    )


def _paint(
    c: Canvas,
    path: str,
    fill: str | None,
    stroke: str | None,
    width_pt: float,
    dash: tuple[float, ...],
    opacity: float,
    k: float,
) -> None:
    if not fill and not stroke:
        return
    c.save()
    if opacity < 1.0:
        c.alpha(round(opacity, 3))
    if fill:
        c.fill(fill)
    if stroke:
        c.stroke(stroke, width_pt, tuple(v * k for v in dash))
    c.op(f"{path} {'B' if fill and stroke else 'f' if fill else 'S'}")
    c.restore()


def _label(c: Canvas, s: Label, x: float, y: float, k: float) -> None:
    size = s.size_pt * k
    shift = {"start": 0.0, "middle": 0.5, "end": 1.0}[s.anchor] * textwidth.width_mm(s.text, size, s.bold)
    a = math.radians(s.rotate)
    # the baseline runs at `rotate` degrees counter-clockwise: on a y-down page, (cos, -sin)
    c.text(x - shift * math.cos(a), y + shift * math.sin(a), s.text, size, s.color, s.bold, s.rotate)
