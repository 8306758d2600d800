"""The geometry check of a written report (HTML; its PDF prints the same pages): every plot's
record (geometry.py; the SVG's <metadata>) against the plot rules, and the PDF's own layout of the pages
(pdflayout.py, its boxes and the lines printed in them) against the page rules: no text outside
a box of fixed height (a two-line title running over the page head) or wider than its box, and
no word broken between two letters or digits at a line's end (`precondition_ti` / `me`). The
pages are read back from the report's HTML (its sections, one per page) and laid out as the
PDF lays them out.
"""

from __future__ import annotations

import html as _html
import json
import re
from pathlib import Path
from typing import Any

from iolab.pages.report.geometry import Violation, plot_violations
from iolab.pages.report.pdfbox import Box, Line
from iolab.pages.report.vector import RECORD_CLASS

TOLERANCE_MM = 0.06  # textwidth.SLACK_MM, and rounding
_SECTION = re.compile(r'<section class="page" id="page-(\d+)">')
# a plot is an SVG drawn by iolab (vector.py) with its record as JSON in its <metadata>
_FIGURE = re.compile(
    rf'<div class="caption">(.*?)</div><svg [^>]*class="plot"[^>]*>(?:<metadata class="{RECORD_CLASS}">([^<]*)</metadata>)?',
    re.S,
)


def check_report(path: Path) -> list[Violation]:
    """Every rule on the report `path` (its .html); its violations, none for a clean report."""
    text = path.read_text(encoding="utf-8")
    return plot_rules(text, path.name) + page_rules(text, path.name)


def figures(text: str) -> list[tuple[int, str, dict[str, Any] | None]]:
    """Each plot of a report's HTML: (its page number, its caption, its record or None)."""
    out = []
    parts = _SECTION.split(text)
    for number, body in zip(parts[1::2], parts[2::2]):
        for caption, svg_record in _FIGURE.findall(body):
            rec = json.loads(_html.unescape(svg_record)) if svg_record else None
            out.append((int(number), _html.unescape(caption), rec))
    return out


def plot_rules(text: str, name: str) -> list[Violation]:
    out = []
    for number, caption, rec in figures(text):
        where = f"{name} page {number}, figure {caption!r}"
        if rec is None:
            out.append(Violation(where, "record", "the plot carries no record of what was drawn"))
        else:
            out += plot_violations(rec, where)
    return out


def page_rules(text: str, name: str) -> list[Violation]:
    from iolab.pages.report.pagesread import sheets_of
    from iolab.pages.report.pdflayout import body, numbered

    out, n = [], 0
    for doc, page, first, number, ncols in sheets_of(text):
        for sheet in body(doc, page, first, ncols):
            numbered(sheet, doc, page, number)
            n += 1
            out += box_rules(sheet.boxes, f"{name} sheet {n}")
    return out


def box_rules(boxes: list[Box], where: str) -> list[Violation]:
    """The page rules on one sheet's boxes."""
    out = []
    for box in boxes:
        for line in box.lines:
            if _outside(line, box):
                out.append(
                    Violation(
                        where,
                        "overflow",
                        f"{line.text.strip()[:60]!r} lies outside its box <{box.name}> (text "
                        f"{line.x:.1f}–{line.x + line.width:.1f} × {line.top:.1f}–{line.bottom:.1f} mm, box "
                        f"{box.x:.1f}–{box.x + box.w:.1f} × {box.y:.1f}–{box.y + box.h:.1f})",
                    )
                )
        if not box.fixed:  # a fixed box holds its parts' lines: each part is checked itself
            out += [v for a, b in zip(box.lines, box.lines[1:]) for v in _broken(a.text, b.text, box, where)]
    return out


def _outside(line: Line, box: Box) -> bool:
    """Wider than its box, or out of a box of fixed height."""
    if not line.text.strip():
        return False
    wide = line.x + line.width > box.x + box.w + TOLERANCE_MM or line.x < box.x - TOLERANCE_MM
    return wide or (box.fixed and (line.bottom > box.y + box.h + TOLERANCE_MM or line.top < box.y - TOLERANCE_MM))


def _broken(end: str, start: str, box: Box, where: str) -> list[Violation]:
    """Two consecutive lines of one box: a word broken between them (a letter or digit on each
    side, with no space there in the text the box was given)."""
    end, start = end.rstrip(), start.lstrip()
    if not end or not start or not (end[-1].isalnum() and start[0].isalnum()):
        return []
    tail, head = end.split()[-1], start.split()[0]
    source = " ".join(box.source.split())
    if re.search(re.escape(tail) + re.escape(head), source) and not re.search(
        re.escape(tail) + r"\s+" + re.escape(head), source
    ):
        return [Violation(where, "broken-word", f"{tail + head!r} printed as {tail!r} / {head!r} in <{box.name}>")]
    return []
