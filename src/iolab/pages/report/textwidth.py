"""How many lines a text takes in a table cell of the printed report: the advance widths of
DejaVu Sans, the font the stylesheet asks for (html.py; read from matplotlib's copy of it), and
the browser's wrapping (below). Kerning is left out, so a line is measured at least as wide as
printed; tests/unit/test_header_geometry.py holds the counts to WeasyPrint's layout."""

from __future__ import annotations

import importlib.util
import re
from functools import lru_cache
from pathlib import Path

PT_MM = 25.4 / 72
# Where the browser may break inside a word (Unicode line breaking): after a hyphen or a slash
# not followed by a digit, after "?" or "!". Pieces are never broken elsewhere unless one alone is
# wider than the line (`overflow-wrap: anywhere`); then it starts a line of its own.
# html.py offers a break after "_", "&" and "?" too (<wbr>): a parameter name or a target spec breaks
# between its parts, not inside one.
_BREAKS = re.compile(r".+?(?:[-/](?!\d)|[?!_&]|$)")
BREAK_AFTER = re.compile(r"([_&?])(?=\S)")
UNKNOWN_EM = 1.0  # a character the font lacks (another font prints it): as wide as the widest letters


@lru_cache(maxsize=2)
def _advances(bold: bool) -> dict[str, float]:
    """Each character's advance width in em."""
    from fontTools.ttLib import TTFont

    spec = importlib.util.find_spec("matplotlib")
    assert spec is not None and spec.origin is not None  # a dependency of iolab
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    font = TTFont(Path(spec.origin).parent / "mpl-data" / "fonts" / "ttf" / name, lazy=True)
    em = font["head"].unitsPerEm
    metrics = font["hmtx"]
    return {chr(cp): metrics[glyph][0] / em for cp, glyph in font.getBestCmap().items()}


def width_mm(text: str, size_pt: float, bold: bool = False) -> float:
    em = _advances(bold)
    return sum(em.get(c, UNKNOWN_EM) for c in text) * size_pt * PT_MM


def lines(text: str, cell_mm: float, size_pt: float, bold: bool = False) -> int:
    """The lines `text` wraps to in a cell `cell_mm` wide at `size_pt`."""
    space = width_mm(" ", size_pt, bold)
    count, x = 1, 0.0
    for word in text.split():
        gap = space if x else 0.0
        for piece in _BREAKS.findall(word):
            w = width_mm(piece, size_pt, bold)
            if x + gap + w <= cell_mm:
                x, gap = x + gap + w, 0.0
                continue
            if x:  # the piece goes to the next line, whole if it fits there
                count, x = count + 1, 0.0
            if w <= cell_mm:
                x, gap = w, 0.0
                continue
            for c in piece:  # wider than a line: broken where the line is full
                cw = width_mm(c, size_pt, bold)
                if x and x + cw > cell_mm:
                    count, x = count + 1, 0.0
                x += cw
            gap = 0.0
    return count


def fit_pt(text: str, line_mm: float, size_pt: float, floor_pt: float, bold: bool = False) -> float:
    """The largest size, from `size_pt` down to `floor_pt`, at which `text` fits on one line
    `line_mm` long (the floor when none does)."""
    wide = width_mm(text, size_pt, bold)
    return max(floor_pt, min(size_pt, size_pt * line_mm / wide)) if wide else size_pt
