"""The legend beside a vector plot's axes (vfigure.py lays it out and calls `draw`): one entry
per label in the order drawn, each with its artist's sample (a line with its marker, a shaded
patch), under an optional heading; its width, which sets the figure's right margin.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from iolab.pages.report import textwidth
from iolab.pages.report.plot_style import LEGEND_WRAP
from iolab.pages.report.vaxes import (
    LEGEND_PT,
    LEGEND_TITLE_PT,
    Artist,
    Axes,
    Band,
    Fill,
    Rule,
    Stems,
    dashes,
    marker,
    on_white,
)
from iolab.pages.report.vector import PT_MM, Line, Rect, Shape
from iolab.pages.report.vtext import Canvas, em, text_height

HANDLE, HANDLE_PAD, GAP, ENTRY_GAP = 14 * PT_MM, 5.6 * PT_MM, 2.5, 0.5  # mm; ENTRY_GAP in em
Entry = tuple[str, Artist]


def entries(a: Axes) -> list[Entry]:
    """The legend's entries, each wrapped at word boundaries: one per label, in the order drawn."""
    if not a.legend:
        return []
    seen: dict[str, Artist] = {}
    for art in a.artists:
        if art.label and art.label not in seen:
            seen[art.label] = art
    return [
        (textwrap.fill(t, LEGEND_WRAP, break_long_words=False, break_on_hyphens=False), art) for t, art in seen.items()
    ]


def width(items: Sequence[Entry], heading: str) -> float:
    """The legend's width: its widest entry beside its sample, or its heading if wider."""
    widest = max(_widest_lines(t, LEGEND_PT) for t, _ in items)
    return max(HANDLE + HANDLE_PAD + widest, _widest_lines(heading, LEGEND_TITLE_PT))


def draw(c: Canvas, a: Axes, x: float, top: float, middle: float, i: int) -> list[str]:
    """The legend of axes `i` from `x` (mm), its top at `top` if `a.legend_top`, else centred on
    `middle`; returns its entries' texts."""
    items = entries(a)
    if not items:
        return []
    e = em(LEGEND_PT)
    heights = [text_height(t.count("\n") + 1, LEGEND_PT) for t, _ in items]
    total = sum(heights) + ENTRY_GAP * e * (len(items) - 1)
    heading = a.legend_title
    head_h = text_height(heading.count("\n") + 1, LEGEND_TITLE_PT) + ENTRY_GAP * e if heading else 0.0
    y = top if a.legend_top else middle - (total + head_h) / 2
    if heading:  # centred over the entries, as matplotlib's legend title
        c.text(heading, LEGEND_TITLE_PT, "legend", i, x + width(items, heading) / 2, y, "center", "top")
        y += head_h
    for (text, art), h in zip(items, heights):
        mid = y + h / 2
        c.shapes.extend(_handle(art, x, mid))
        c.text(text, LEGEND_PT, "legend", i, x + HANDLE + HANDLE_PAD, mid, "left", "center")
        y += h + ENTRY_GAP * e
    return [t for t, _ in items]


def _widest_lines(text: str, size_pt: float) -> float:
    return max(textwidth.width_mm(ln, size_pt) for ln in text.split("\n"))


def _handle(art: Artist, x: float, y: float) -> list[Shape]:
    """An entry's sample: a line (with its marker in the middle), or a shaded patch."""
    seg = ((x, y), (x + HANDLE, y))
    if isinstance(art, Band | Fill):
        h = 0.7 * em(LEGEND_PT)
        return [Rect(x, y - h / 2, HANDLE, h, art.color, None, opacity=art.opacity if isinstance(art, Band) else 1.0)]
    if isinstance(art, Rule):
        return [Line(seg, art.color, art.width_pt, dashes(art.style, art.width_pt))]
    if isinstance(art, Stems):
        return [Line(seg, on_white(art.color, art.opacity), art.width_pt)]
    out: list[Shape] = []
    if art.width_pt > 0:
        out.append(Line(seg, art.color, art.width_pt, dashes(art.style, art.width_pt)))
    if art.marker_pt:
        out.append(marker(art, x + HANDLE / 2, y))
    return out
