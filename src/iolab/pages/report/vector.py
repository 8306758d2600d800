"""A plot as vector shapes, drawn by iolab itself: the report's HTML shows it as inline SVG and
its PDF draws the same shapes, so a plot costs no plotting library and no raster image.

Coordinates are millimetres from the drawing's top-left corner, y downwards (as in SVG); the
PDF writer flips them. Colours are "#rrggbb". Text is DejaVu Sans (textwidth.py measures it),
placed by its baseline: `anchor` says which end of the text (or its middle) sits at x.
"""

from __future__ import annotations

import hashlib
import html as _html
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field

PT_MM = 25.4 / 72
RECORD_CLASS = "iolab-geometry"


@dataclass(frozen=True)
class Line:
    """An open polyline, or a closed and optionally filled polygon."""

    points: tuple[tuple[float, float], ...]
    stroke: str | None = "#000000"
    width_pt: float = 0.8
    dash: tuple[float, ...] = ()  # on/off lengths in pt; () solid
    fill: str | None = None
    closed: bool = False
    opacity: float = 1.0


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float
    fill: str | None = None
    stroke: str | None = None
    width_pt: float = 0.5
    opacity: float = 1.0


@dataclass(frozen=True)
class Circle:
    x: float
    y: float
    r: float
    fill: str | None = "#000000"
    stroke: str | None = None
    width_pt: float = 0.5


@dataclass(frozen=True)
class Label:
    x: float
    y: float  # the baseline
    text: str
    size_pt: float = 7.0
    color: str = "#000000"
    bold: bool = False
    anchor: str = "start"  # "start" | "middle" | "end"
    rotate: float = 0.0  # degrees counter-clockwise about (x, y): 90 reads bottom to top


@dataclass(frozen=True)
class Clip:
    """Shapes cut to a rectangle (a plot's data inside its axes)."""

    x: float
    y: float
    w: float
    h: float
    shapes: tuple[Shape, ...]


Shape = Line | Rect | Circle | Label | Clip


@dataclass(frozen=True)
class Drawing:
    width_mm: float
    height_mm: float
    shapes: tuple[Shape, ...]
    alt: str = ""
    # what the geometry rules check (geometry.py): free-form, by the plotter
    record: dict[str, object] = field(default_factory=dict, compare=False, hash=False)


def svg(d: Drawing) -> str:
    """The drawing as an SVG element sized in mm (user units are mm)."""
    clips = itertools.count(1)
    body = "".join(_svg_shape(s, clips) for s in d.shapes)
    # clip ids named by the drawing's content: the same drawing gives the same HTML each time it is
    # rendered (pdf.py keeps laid-out pages by their HTML), two different ones never share an id
    body = body.replace(_ID, "c" + hashlib.sha1(body.encode()).hexdigest()[:12])
    if d.record:  # what the geometry rules read back from a report's HTML (layoutcheck.figures)
        body = f'<metadata class="{RECORD_CLASS}">{_e(json.dumps(d.record, separators=(",", ":")))}</metadata>{body}'
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" width="{d.width_mm:g}mm" height="{d.height_mm:g}mm" '
        f'viewBox="0 0 {d.width_mm:g} {d.height_mm:g}" role="img" aria-label="{_e(d.alt)}" '
        f'font-family="DejaVu Sans, WenQuanYi Micro Hei, sans-serif">{body}</svg>'
    )


_ID = "\x00"  # stands for the drawing's clip-id prefix until its body is known


def _svg_shape(s: Shape, clips: Iterator[int]) -> str:
    if isinstance(s, Line):
        pts = " ".join(f"{x:.2f},{y:.2f}" for x, y in s.points)
        tag = "polygon" if s.closed else "polyline"
        return f'<{tag} points="{pts}"{_paint(s.fill, s.stroke, s.width_pt, s.dash, s.opacity)}/>'
    if isinstance(s, Rect):
        return (
            f'<rect x="{s.x:.2f}" y="{s.y:.2f}" width="{s.w:.2f}" height="{s.h:.2f}"'
            f"{_paint(s.fill, s.stroke, s.width_pt, (), s.opacity)}/>"
        )
    if isinstance(s, Circle):
        return f'<circle cx="{s.x:.2f}" cy="{s.y:.2f}" r="{s.r:.2f}"{_paint(s.fill, s.stroke, s.width_pt, (), 1.0)}/>'
    if isinstance(s, Label):
        rot = f' transform="rotate({-s.rotate:g} {s.x:.2f} {s.y:.2f})"' if s.rotate else ""
        weight = ' font-weight="bold"' if s.bold else ""
        return (
            f'<text x="{s.x:.2f}" y="{s.y:.2f}" font-size="{s.size_pt * PT_MM:.3f}" fill="{s.color}" '
            f'text-anchor="{s.anchor}"{weight}{rot} xml:space="preserve">{_e(s.text)}</text>'
        )
    name = f"{_ID}_{next(clips)}"  # "_": no id reads as a number in exponent notation ("4e-1")
    inner = "".join(_svg_shape(c, clips) for c in s.shapes)
    return (
        f'<clipPath id="{name}"><rect x="{s.x:.2f}" y="{s.y:.2f}" width="{s.w:.2f}" height="{s.h:.2f}"/></clipPath>'
        f'<g clip-path="url(#{name})">{inner}</g>'
    )


def _paint(fill: str | None, stroke: str | None, width_pt: float, dash: tuple[float, ...], opacity: float) -> str:
    out = f' fill="{fill or "none"}"'
    if stroke:
        out += f' stroke="{stroke}" stroke-width="{width_pt * PT_MM:.3f}"'
        if dash:
            out += f' stroke-dasharray="{" ".join(f"{v * PT_MM:.3f}" for v in dash)}"'
    if opacity < 1.0:
        out += f' opacity="{opacity:g}"'
    return out


def _e(text: str) -> str:
    return _html.escape(text)
