"""The geometry check of a written report (HTML; its PDF is the same HTML printed): every plot's
record (geometry.py; a PNG's text chunk, or an SVG plot's <metadata>) against the plot rules, and WeasyPrint's layout of the pages against the
page rules: no text outside a box of fixed height (a two-line title running over the page
head) or wider than its box, and no word broken between two letters or digits at a line's end
(`precondition_ti` / `me`). WeasyPrint lays the HTML out for print media, so the boxes are the
PDF's own.
"""

from __future__ import annotations

import base64
import html as _html
import json
import re
from pathlib import Path
from typing import Any

from iolab.pages.report.geometry import Violation, plot_violations, read_record
from iolab.pages.report.vector import RECORD_CLASS

TOLERANCE_PX = 0.75  # CSS px; sub-pixel rounding of WeasyPrint's own layout
_SECTION = re.compile(r'<section class="page" id="page-(\d+)">')
# a plot is a PNG carrying its record (geometry.py), or an SVG drawn by iolab (vector.py) with its
# record as JSON in its <metadata>
_FIGURE = re.compile(
    r'<div class="caption">(.*?)</div>(?:<img class="plot"[^>]*src="data:image/png;base64,([A-Za-z0-9+/=]+)"'
    rf'|<svg [^>]*class="plot"[^>]*>(?:<metadata class="{RECORD_CLASS}">([^<]*)</metadata>)?)',
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
        for caption, png, svg_record in _FIGURE.findall(body):
            rec = (
                read_record(base64.b64decode(png))
                if png
                else json.loads(_html.unescape(svg_record))
                if svg_record
                else None
            )
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
    from weasyprint import HTML

    out = []
    doc = HTML(string=text).render()
    for n, page in enumerate(doc.pages, 1):
        where = f"{name} sheet {n}"
        out += _boxes(page._page_box, [], where)
    return out


def _text_of(box: Any) -> str:
    from weasyprint.formatting_structure import boxes

    if isinstance(box, boxes.TextBox):
        return str(box.text)
    return "".join(_text_of(c) for c in getattr(box, "children", ()))


def _boxes(box: Any, fixed: list[Any], where: str) -> list[Violation]:
    """Walk the laid-out boxes; `fixed`: the ancestors whose height the stylesheet fixes."""
    from weasyprint.formatting_structure import boxes

    out: list[Violation] = []
    if isinstance(box, boxes.TextBox):
        return _outside(box, fixed, where)
    if isinstance(box, boxes.BlockLevelBox | boxes.TableCellBox) and box.style["height"] != "auto":
        fixed = [*fixed, box]
    children = list(getattr(box, "children", ()))
    lines = [c for c in children if isinstance(c, boxes.LineBox)]
    for a, b in zip(lines, lines[1:]):
        out += _broken(a, b, box, where)
    for c in children:
        out += _boxes(c, fixed, where)
    return out


def _outside(text: Any, fixed: list[Any], where: str) -> list[Violation]:
    if not text.text.strip() or not fixed:
        return []
    outer = fixed[-1]
    # the content box: text in the padding is printed against the border (a head's rule line)
    top, bottom = outer.content_box_y(), outer.content_box_y() + outer.height
    left, right = outer.content_box_x(), outer.content_box_x() + outer.width
    y0, y1 = text.position_y, text.position_y + text.height
    x0, x1 = text.position_x, text.position_x + text.width
    if y1 > bottom + TOLERANCE_PX or y0 < top - TOLERANCE_PX or x1 > right + TOLERANCE_PX:
        what = _describe(outer)
        return [
            Violation(
                where,
                "overflow",
                f"{text.text.strip()[:60]!r} lies outside its box {what} "
                f"(text {x0:.0f}–{x1:.0f} × {y0:.0f}–{y1:.0f} px, box {left:.0f}–{right:.0f} × {top:.0f}–{bottom:.0f})",
            )
        ]
    return []


def _describe(box: Any) -> str:
    el = box.element
    cls = (el.get("class") or "") if el is not None else ""
    return f"<{box.element_tag}{' class=' + cls if cls else ''}>"


def _broken(a: Any, b: Any, block: Any, where: str) -> list[Violation]:
    """Two consecutive lines of one block: a word broken between them (a letter or digit on each
    side, with no space there in the text the block was given)."""
    end, start = _text_of(a).rstrip(), _text_of(b).lstrip()
    if not end or not start or end != _text_of(a) or not (end[-1].isalnum() and start[0].isalnum()):
        return []
    tail, head = end.split()[-1], start.split()[0]
    source = " ".join("".join(block.element.itertext()).split()) if block.element is not None else ""
    if re.search(re.escape(tail) + re.escape(head), source) and not re.search(
        re.escape(tail) + r"\s+" + re.escape(head), source
    ):
        return [
            Violation(where, "broken-word", f"{tail + head!r} printed as {tail!r} / {head!r} in {_describe(block)}")
        ]
    return []
