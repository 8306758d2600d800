"""The PDF: the report's own HTML printed by WeasyPrint (same pages, same numbers).

Each `Page` is laid out to fill one A4 sheet. Should a page still spill over (a layout bug),
the printed "Page n of m" would lie, so the PDF is then printed again with page numbers taken
from the real sheets instead of the model, and the caller is told.

A document's four header columns are the same on each of its pages and were about half of the
layout time, so they are laid out once, on its first page, and the laid-out boxes copied into
the room every other page keeps for them (same place on the sheet, so the same drawing).
"""

from __future__ import annotations

import io
import logging
import struct
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import IolabError

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Numbering from the real sheets, used only when the model's page count does not hold.
SHEET_NUMBERS = """
.pageno { visibility: hidden; }
@page { @top-right { content: "Sheet " counter(page) " of " counter(pages); font-size: 7pt;
                     font-family: "DejaVu Sans", sans-serif; } }
"""


class _PageLines(logging.Handler):
    """WeasyPrint's own progress log ("Creating layout - Page 3") as "page 3 of 13" lines."""

    def __init__(self, say: Callable[[str, bool], None], pages: int):
        super().__init__(logging.INFO)
        self.say, self.pages = say, pages

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args if isinstance(record.args, tuple) else ()
        if record.msg.endswith("Page %d") and args and isinstance(args[0], (int, str)):
            n = int(args[0])
            self.say(f"page {n} of {self.pages}", n == self.pages)
        elif record.msg.endswith("Creating PDF"):
            self.say("PDF file", True)


def _copy_columns(doc) -> int:
    """Fill each empty header-column box (`data-columns-of`) with a copy of the laid-out columns
    of its document's first page; returns how many were filled."""

    def marked(box, depth: int = 0):  # the page box, html, body, the page's section, then its parts
        el = getattr(box, "element", None)
        if el is not None and box.element_tag == "div" and (el.get("data-columns") or el.get("data-columns-of")):
            yield box
        elif depth < 4:
            for child in getattr(box, "children", ()):
                yield from marked(child, depth + 1)

    laid_out, filled = {}, 0
    for page in doc.pages:
        for box in marked(page._page_box):
            if (k := box.element.get("data-columns")) is not None:
                laid_out[k] = box
            elif not box.children and (first := laid_out.get(box.element.get("data-columns-of"))) is not None:
                box.children = [c.deepcopy() for c in first.children]
                for c in box.children:
                    c.translate(box.position_x - first.position_x, box.position_y - first.position_y)
                filled += 1
    return filled


def _idat(data: bytes) -> bytes | None:
    """The compressed pixel rows of an 8-bit RGB, non-interlaced PNG (None for any other PNG):
    what a PDF image stream holds as /FlateDecode with PNG predictors."""
    if data[:8] != PNG_SIGNATURE or data[12:16] != b"IHDR" or data[24:26] != b"\x08\x02" or data[28] != 0:
        return None
    rows, i = [], 8
    while i + 8 <= len(data):
        size, kind = struct.unpack(">I4s", data[i : i + 8])
        if kind == b"IDAT":
            rows.append(data[i + 8 : i + 8 + size])
        i += size + 12  # length, type, data, CRC
    return b"".join(rows)


@contextmanager
def _plots_as_drawn(raster_image_class) -> Iterator[None]:
    """WeasyPrint decodes every PNG and encodes it again to take its pixel rows for the PDF (about
    a third of writing the file). The report's plots are 8-bit RGB PNGs (plot_style._png), whose
    rows go into the PDF as they are; any other image takes WeasyPrint's own way."""
    own = raster_image_class.__dict__.get("_get_png_data")
    if not isinstance(own, staticmethod):  # a WeasyPrint that takes the rows otherwise
        yield
        return

    def rows(image) -> bytes:
        fp = getattr(image, "fp", None)
        data = fp.getvalue() if isinstance(fp, io.BytesIO) and getattr(image, "format", None) == "PNG" else b""
        return _idat(data) or own.__func__(image)

    raster_image_class._get_png_data = staticmethod(rows)
    try:
        yield
    finally:
        raster_image_class._get_png_data = own


def write_pdf(
    html: Callable[[bool], str],
    path: Path,
    expected_pages: int,
    base_url: Path,
    say: Callable[[str, bool], None] = lambda step, last: None,
) -> int:
    """Print the report to `path`; returns the number of pages written. `html(columns_once)`: the
    report's HTML for print (pdf.py copies the columns into the other pages). `say`: progress lines."""
    try:
        from weasyprint import CSS, HTML
        from weasyprint.images import RasterImage
    except (ImportError, OSError) as e:  # OSError: the pango libraries are missing
        raise IolabError(
            f"cannot write the PDF report ({e}). WeasyPrint and its Debian libraries are needed: run "
            "`bash scripts/setup` (installs libpango-1.0-0, libpangoft2-1.0-0). The HTML report was written."
        ) from None
    logging.getLogger("weasyprint").setLevel(logging.ERROR)
    logging.getLogger("fontTools").setLevel(logging.ERROR)
    log = logging.getLogger("weasyprint.progress")
    lines = _PageLines(say, expected_pages)
    log.addHandler(lines)
    log.setLevel(logging.INFO)

    def laid_out(extra: list) -> Any:
        once = html(True)
        doc = HTML(string=once, base_url=str(base_url)).render(stylesheets=extra)
        try:
            if _copy_columns(doc) == once.count("data-columns-of="):
                return doc
        except AttributeError:  # a WeasyPrint whose boxes are built otherwise
            pass
        return HTML(string=html(False), base_url=str(base_url)).render(stylesheets=extra)  # columns on every page

    try:
        doc = laid_out([])
        if len(doc.pages) != expected_pages:
            doc = laid_out([CSS(string=SHEET_NUMBERS)])
        with _plots_as_drawn(RasterImage):
            doc.write_pdf(path)
    finally:
        log.removeHandler(lines)
    return len(doc.pages)
