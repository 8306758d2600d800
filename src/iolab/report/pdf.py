"""The PDF: the report's own HTML printed by WeasyPrint (same pages, same numbers).

Each `Page` is laid out to fill one A4 sheet. Should a page still spill over (a layout bug),
the printed "Page n of m" would lie, so the PDF is then printed again with page numbers taken
from the real sheets instead of the model, and the caller is told.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from ..errors import IolabError

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


def write_pdf(
    html: str,
    path: Path,
    expected_pages: int,
    base_url: Path,
    say: Callable[[str, bool], None] = lambda step, last: None,
) -> int:
    """Print `html` to `path`; returns the number of pages written. `say`: progress lines."""
    try:
        from weasyprint import CSS, HTML
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
    try:
        doc = HTML(string=html, base_url=str(base_url)).render()
        if len(doc.pages) != expected_pages:
            doc = HTML(string=html, base_url=str(base_url)).render(stylesheets=[CSS(string=SHEET_NUMBERS)])
        doc.write_pdf(path)
    finally:
        log.removeHandler(lines)
    return len(doc.pages)
