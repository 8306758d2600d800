"""The PDF: the report's pages laid out by pdflayout.py and written by pdfdoc.py, the same
pages as the HTML (html.py) from the same page model.

Each `Page` fills one A4 sheet. Should a page's content still run past its sheet (the page
builders budget heights; the layout measures them), that page goes on over more sheets and
the sheets are numbered "Sheet n of m" instead of the model's "Page n of N", so no printed
number lies; the caller is told how many sheets there are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

from iolab.pages.report import pdfvector
from iolab.pages.report.model import Document
from iolab.pages.report.pdfbox import ClipTo, Fill, Line, Picture, Sheet, Unclip
from iolab.pages.report.pdfdoc import Canvas, PdfFile
from iolab.pages.report.pdflayout import lay_out


class Printed(NamedTuple):
    sheets: int  # the sheets written
    missing: str  # the characters no font has, in order, each printed as ttf.MISSING


def write_pdf(
    docs: Sequence[Document],
    path: Path,
    title: str,
    say: Callable[[str, bool], None] = lambda step, last: None,
) -> Printed:
    """Print the documents' pages, in order and numbered through, to `path`. `say`: progress
    lines ("page 3 of 13")."""
    sheets = lay_out(docs)
    pdf = PdfFile()
    for n, sheet in enumerate(sheets, 1):
        canvas = Canvas(pdf)
        paint(canvas, sheet)
        pdf.page(canvas.content(), canvas.used)
        say(f"page {n} of {len(sheets)}", n == len(sheets))
    pdf.save(path, title)
    say("PDF file", True)
    return Printed(len(sheets), "".join(sorted(pdf.missing)))


def paint(canvas: Canvas, sheet: Sheet) -> None:
    for item in sheet.items:
        if isinstance(item, Line):
            canvas.text(item.x, item.y, item.text, item.size, item.color, item.bold)
        elif isinstance(item, Fill):
            canvas.rect(item.x, item.y, item.w, item.h, item.fill, item.stroke, item.width_pt)
        elif isinstance(item, Picture):
            d = item.figure.drawing
            pdfvector.draw(canvas, d, item.x, item.y, item.w / d.width_mm if d.width_mm else 1.0)
        elif isinstance(item, ClipTo):
            canvas.save()
            canvas.clip(item.x, item.y, item.w, item.h)
        elif isinstance(item, Unclip):
            canvas.restore()
