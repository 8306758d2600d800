"""The boxes of the PDF's layout (pdflayout.py) and what is drawn on a sheet: lines of text,
filled or outlined rectangles, pictures, clips. Kept apart from the layout itself so the table
layout (pdftable.py) and the geometry check (layoutcheck.py) share them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from iolab.pages.report import textwidth, ttf
from iolab.pages.report.model import Figure

PT = 25.4 / 72  # mm per point
LEFT, TOP = 10.0, 8.0  # the page's margins
W = 190.0  # model.CONTENT_WIDTH_MM
INK, BLUE, GREY, LINE_GREY = "#111111", "#1f4e79", "#555555", "#9fb6cd"
BOX_PT, GRID_PT = 0.6, 0.5  # the header boxes' and the tables' lines


def line_height(size_pt: float, bold: bool = False) -> float:
    """CSS's `line-height: normal` for DejaVu Sans: its ascent and descent, in mm."""
    f = ttf.load(bold)
    return (f.ascent - f.descent) / f.units * size_pt * PT


def ascent(size_pt: float, bold: bool = False) -> float:
    f = ttf.load(bold)
    return f.ascent / f.units * size_pt * PT


@dataclass(frozen=True)
class Line:
    """One printed line of text; `y` is its baseline, `top`/`bottom` its line box."""

    x: float
    y: float
    text: str
    size: float
    bold: bool
    color: str
    width: float
    top: float
    bottom: float


@dataclass
class Box:
    """A box of the layout: `fixed` if its height is fixed (what does not fit would print over
    what follows it); `source`: the text it was given, `lines`: that text as printed."""

    name: str
    x: float
    y: float
    w: float
    h: float
    fixed: bool = False
    source: str = ""
    lines: list[Line] = field(default_factory=list)


@dataclass(frozen=True)
class Area:
    """A rectangle on the sheet, mm from its top-left corner."""

    x: float
    y: float
    w: float
    h: float


@dataclass(frozen=True)
class Fill(Area):
    fill: str | None
    stroke: str | None = None
    width_pt: float = 0.5


@dataclass(frozen=True)
class Picture(Area):
    figure: Figure


@dataclass(frozen=True)
class ClipTo(Area):
    """Cut what follows to this rectangle, until the matching `Unclip`."""


@dataclass(frozen=True)
class Unclip:
    pass


Item = Fill | Line | Picture | ClipTo | Unclip


@dataclass
class Sheet:
    items: list[Item] = field(default_factory=list)
    boxes: list[Box] = field(default_factory=list)

    def text(self, box: Box, lines: Sequence[str], x: float, y: float, size: float, bold: bool, color: str, align: str = "left", width: float = 0.0, leading: float = 0.0) -> float:  # fmt: skip
        """Print `lines` in `box` from top `y`, each `leading` high (0: the font's normal);
        `align` within `width` from `x`. Returns the y below the last line."""
        step = leading or line_height(size, bold)
        half = (step - line_height(size, bold)) / 2
        for text in lines:
            w = textwidth.width_mm(text, size, bold)
            at = x + (width - w if align == "right" else (width - w) / 2 if align == "center" else 0.0)
            line = Line(at, y + half + ascent(size, bold), text, size, bold, color, w, y, y + step)
            box.lines.append(line)
            self.items.append(line)
            y += step
        return y
