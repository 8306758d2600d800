"""The PDF: the report's own HTML printed by WeasyPrint (same pages, same numbers).

Each `Page` is laid out to fill one A4 sheet. Should a page still spill over (a layout bug),
the printed "Page n of m" would lie, so the PDF is then printed again with page numbers taken
from the real sheets instead of the model, and the caller is told.

A document's four header columns are printed on its first page only (the others have a compact
head: spec, title, run and device lines).

A sequence's report holds each run's own pages, which `iolab run SEQUENCE` has just laid out for
the run's own report, in the same process: those laid-out pages are kept (the last few
documents') and taken again, with only each page's head (its fixed-height top block, where the
page number differs) laid out anew and put in place of the old one.
"""

from __future__ import annotations

import hashlib
import io
import logging
import struct
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from iolab.core.errors import IolabError

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Numbering from the real sheets, used only when the model's page count does not hold.
SHEET_NUMBERS = """
.pageno { visibility: hidden; }
@page { @top-right { content: "Sheet " counter(page) " of " counter(pages); font-size: 7pt;
                     font-family: "DejaVu Sans", sans-serif; } }
"""


# Laid-out documents of single-document reports, by their print HTML (newest last), for a sequence's
# report written later by the same process. A few: each holds its pages' boxes and images.
_LAID_OUT: OrderedDict[bytes, Any] = OrderedDict()
KEEP_LAID_OUT = 12


class _PageLines(logging.Handler):
    """WeasyPrint's own progress log ("Creating layout - Page 3") as "page 3 of 13" lines;
    `numbers`: the report's page number of each page the current layout makes (None: 1, 2 …)."""

    def __init__(self, say: Callable[[str, bool], None], pages: int):
        super().__init__(logging.INFO)
        self.say, self.pages = say, pages
        self.numbers: list[int] | None = None

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args if isinstance(record.args, tuple) else ()
        if record.msg.endswith("Page %d") and args and isinstance(args[0], (int, str)):
            n = int(args[0])
            if self.numbers is not None and 0 < n <= len(self.numbers):
                n = self.numbers[n - 1]
            self.say(f"page {n} of {self.pages}", n == self.pages)
        elif record.msg.endswith("Creating PDF"):
            self.say("PDF file", True)


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
def _plots_as_drawn(raster_image_class: Any) -> Iterator[None]:
    """WeasyPrint decodes every PNG and encodes it again to take its pixel rows for the PDF (about
    a third of writing the file). The report's plots are 8-bit RGB PNGs (plot_style._png), whose
    rows go into the PDF as they are; any other image takes WeasyPrint's own way."""
    own = raster_image_class.__dict__.get("_get_png_data")
    if not isinstance(own, staticmethod):  # a WeasyPrint that takes the rows otherwise
        yield
        return

    def rows(image: Any) -> bytes:
        fp = getattr(image, "fp", None)
        data = fp.getvalue() if isinstance(fp, io.BytesIO) and getattr(image, "format", None) == "PNG" else b""
        return _idat(data) or own.__func__(image)

    raster_image_class._get_png_data = staticmethod(rows)
    try:
        yield
    finally:
        raster_image_class._get_png_data = own


def _head_path(box: Any, depth: int = 0) -> list[Any] | None:
    """The boxes from the page box down to the page's head (`div.head`), both included."""
    el = getattr(box, "element", None)
    if el is not None and box.element_tag == "div" and "head" in (el.get("class") or "").split():
        return [box]
    if depth < 4:
        for child in getattr(box, "children", ()):
            if (path := _head_path(child, depth + 1)) is not None:
                return [box, *path]
    return None


def _renumbered(page: Any, head_page: Any, own: int, number: int) -> Any:
    """`page` (laid out as page `own` of its own report) with `head_page`'s head in place of its
    own: the head has a fixed height, so nothing else on the page moves. A new page object;
    the kept one is left as it was."""
    old, new = _head_path(page._page_box), _head_path(head_page._page_box)
    if old is None or new is None:
        raise AttributeError("no page head")  # a WeasyPrint whose boxes are built otherwise
    head = new[-1]
    head.translate(old[-1].position_x - head.position_x, old[-1].position_y - head.position_y)
    for parent in reversed(old[:-1]):  # copies of the boxes above the head, the head swapped in
        copy = parent.copy()
        copy.children = [head if c is old[old.index(parent) + 1] else c for c in parent.children]
        head = copy
    out = type(page)(head)  # weasyprint's Page, gathering the anchors of the boxes given
    if (at := out.anchors.pop(f"page-{own}", None)) is not None:  # the section's id, numbered as here
        out.anchors[f"page-{number}"] = at
    return out


def _assembled(sizes: Sequence[int], kept: dict[int, Any], rest: Any, heads: Any) -> Any:
    """The report's pages in order: those of the documents in `kept` (renumbered with the heads
    laid out in `heads`, in order), the others from `rest` (laid out here, in order)."""
    made, from_rest, from_heads, number = [], iter(rest.pages if rest else ()), iter(heads.pages), 0
    for k, n in enumerate(sizes):
        for i in range(n):
            number += 1
            made.append(
                _renumbered(kept[k].pages[i], next(from_heads), i + 1, number) if k in kept else next(from_rest)
            )
    return (rest or heads).copy(made)


def _key(html: str) -> bytes:
    return hashlib.sha1(html.encode()).digest()


def _keep(key: bytes, doc: Any) -> None:
    _LAID_OUT[key] = doc
    _LAID_OUT.move_to_end(key)
    while len(_LAID_OUT) > KEEP_LAID_OUT:
        _LAID_OUT.popitem(last=False)


def write_pdf(
    html: Callable[..., str],
    path: Path,
    expected_pages: int,
    base_url: Path,
    say: Callable[[str, bool], None] = lambda step, last: None,
    sizes: Sequence[int] = (),
    own: Callable[[int], str] | None = None,
) -> int:
    """Print the report to `path`; returns the number of pages written. `html(only=None,
    heads_only=False)`: the report's HTML for print (html.render says what `only` and `heads_only` do). `sizes`: each document's page
    count; `own(k)`: document k's HTML as its own report prints it (both empty: not kept or
    reused). `say`: progress lines."""
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
    first = [sum(sizes[:k]) for k in range(len(sizes))]  # pages before each document's first

    def numbered(docs: list[int]) -> list[int]:  # the report's page numbers of these documents' pages
        return [first[k] + i + 1 for k in docs for i in range(sizes[k])]

    def laid_out(extra: list[Any], only: list[int] | None = None) -> Any:
        lines.numbers = None if only is None else numbered(only)
        return HTML(string=html(only=only), base_url=str(base_url)).render(stylesheets=extra)

    def reusing() -> Any:
        """The report with the pages of documents laid out before taken again (None: none were,
        or a page overflowed: then laid out whole)."""
        keys = [_key(own(k)) for k in range(len(sizes))] if own and len(sizes) > 1 else []
        kept = {k: _LAID_OUT[key] for k, key in enumerate(keys) if key in _LAID_OUT}
        kept = {k: d for k, d in kept.items() if len(d.pages) == sizes[k]}
        if not kept:
            return None
        fresh = [k for k in range(len(sizes)) if k not in kept]
        rest = laid_out([], fresh) if fresh else None
        lines.numbers = numbered(sorted(kept))
        heads = HTML(string=html(only=sorted(kept), heads_only=True), base_url=str(base_url)).render()
        if (rest is not None and len(rest.pages) != sum(sizes[k] for k in fresh)) or len(heads.pages) != len(
            lines.numbers
        ):
            return None
        return _assembled(sizes, kept, rest, heads)

    try:
        try:
            doc = reusing()
        except AttributeError:  # a WeasyPrint whose boxes are built otherwise
            doc = None
        if doc is None:
            doc = laid_out([])
        if len(doc.pages) != expected_pages:
            doc = laid_out([CSS(string=SHEET_NUMBERS)])
        elif len(sizes) == 1 and own is not None:
            _keep(_key(own(0)), doc)
        with _plots_as_drawn(RasterImage):
            doc.write_pdf(path)
    finally:
        log.removeHandler(lines)
    return len(doc.pages)
