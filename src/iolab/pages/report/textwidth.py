"""How many lines a text takes in a table cell of the printed report: the advance widths of
DejaVu Sans, the font the report prints in (ttf.py reads the copy in fonts/; a character it
lacks, in the font that prints it: ttf.printer), and the wrapping
(below) the PDF's layout (pdflayout.py) and the plots' legends and notes (vtext.py) print with:
the lines the page builders count are the lines printed. Kerning is left out (the PDF prints
without it). tests/unit/test_header_geometry.py holds the header columns to the PDF's layout.

The wrapping breaks at a space first, not greedily at the first opportunity as a browser does:
a word goes whole to the next line when it fits there, so a drive's name never reads
"enterprise-" / "sas". The HTML's table cells are still wrapped by the browser."""

from __future__ import annotations

import re
from functools import lru_cache

from iolab.pages.report import ttf

PT_MM = 25.4 / 72
# Where a word wider than a line may break (as Unicode line breaking allows): after a hyphen or a
# slash not followed by a digit, after "?" or "!". Pieces are never broken elsewhere unless one
# alone is wider than the line (`overflow-wrap: anywhere`); then it starts a line of its own.
# html.py offers a break after "_", "&" and "?" too (<wbr>): a parameter name or a target spec breaks
# between its parts, not inside one.
_BREAKS = re.compile(r".+?(?:[-/](?!\d)|[?!_&]|$)")
BREAK_AFTER = re.compile(r"([_&?])(?=\S)")
# A line may run this far past its box (into the cell's padding) rather than break a word: the
# browser's measure (hinted, kerned) fitted "precondition" into a header key cell that the
# advance widths miss by 0.017 mm. The geometry check allows the same (layoutcheck.TOLERANCE_MM).
SLACK_MM = 0.05


@lru_cache(maxsize=2)
def _advances(bold: bool) -> dict[str, float]:
    """Each character's advance width in em."""
    font = ttf.load(bold)
    return {chr(cp): font.advances[glyph] / font.units for cp, glyph in font.cmap.items()}


def width_mm(text: str, size_pt: float, bold: bool = False) -> float:
    return _ems(text, bold) * size_pt * PT_MM


@lru_cache(maxsize=1 << 16)
def _ems(text: str, bold: bool) -> float:
    """The advance of `text` in em (cached: the layout measures the same words over and over)."""
    em = _advances(bold)
    return sum(em[c] if c in em else _other_em(c, bold) for c in text)


@lru_cache(maxsize=1 << 12)
def _other_em(c: str, bold: bool) -> float:
    """The advance of a character DejaVu Sans lacks, as the PDF prints it (pdfdoc.runs): in the
    fallback font, or as ttf.MISSING when no font has it."""
    font = ttf.printer(c, bold)
    if font is None:
        font, c = ttf.load(bold), ttf.MISSING
    return font.advances[font.glyph(c)] / font.units


def lines(text: str, cell_mm: float, size_pt: float, bold: bool = False) -> int:
    """The lines `text` wraps to in a cell `cell_mm` wide at `size_pt`."""
    return len(wrap(text, cell_mm, size_pt, bold))


def wrap(text: str, cell_mm: float, size_pt: float, bold: bool = False) -> list[str]:
    """`text` as the lines it wraps to in a cell `cell_mm` wide at `size_pt` (the PDF prints
    these; `lines` counts them for the page builders). A word that fits on the line goes on it,
    one that fits on a line of its own starts the next: a break at a space comes before one inside
    a word, which printed "enterprise-" at a line's end and "sas" under it. Only a word wider than
    a whole line breaks inside itself, after a hyphen, slash or underscore where it can."""
    space, cell_mm = width_mm(" ", size_pt, bold), cell_mm + SLACK_MM
    out, x = [""], 0.0
    for word in text.split():
        w = width_mm(word, size_pt, bold)
        if x and x + space + w <= cell_mm:
            out[-1], x = out[-1] + " " + word, x + space + w
        elif w <= cell_mm:
            if x:
                out.append("")
            out[-1], x = word, w
        else:
            x = _break_word(word, out, x + space if x else 0.0, cell_mm, size_pt, bold)
    return out


def _break_word(word: str, out: list[str], x: float, cell_mm: float, size_pt: float, bold: bool) -> float:
    """Lay a word wider than a line onto `out` from `x` (its last line's width and the space
    before the word): its pieces (up to each break opportunity) fill each line, a piece goes to
    the next line whole if it fits there, and one wider than a line alone is broken where the line
    is full. Returns the last line's width."""
    breaks = _BREAKS  # looked up here: a test plants a fault by taking break opportunities away
    lead = " " if x else ""
    for piece in breaks.findall(word):
        w = width_mm(piece, size_pt, bold)
        if x + w <= cell_mm:
            out[-1], x, lead = out[-1] + lead + piece, x + w, ""
            continue
        if out[-1]:  # the piece goes to the next line, whole if it fits there
            out.append("")
        x, lead = 0.0, ""
        if w <= cell_mm:
            out[-1], x = piece, w
            continue
        for c in piece:  # wider than a line: broken where the line is full
            cw = width_mm(c, size_pt, bold)
            if x and x + cw > cell_mm:
                out.append("")
                x = 0.0
            out[-1] += c
            x += cw
    return x


def fit_pt(text: str, line_mm: float, size_pt: float, floor_pt: float, bold: bool = False) -> float:
    """The largest size, from `size_pt` down to `floor_pt`, at which `text` fits on one line
    `line_mm` long (the floor when none does)."""
    wide = width_mm(text, size_pt, bold)
    return max(floor_pt, min(size_pt, size_pt * line_mm / wide)) if wide else size_pt
