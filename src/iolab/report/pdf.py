"""The PDF: the report's own HTML printed by WeasyPrint (same pages, same numbers).

Each `Page` is laid out to fill one A4 sheet. Should a page still spill over (a layout bug),
the printed "Page n of m" would lie, so the PDF is then printed again with page numbers taken
from the real sheets instead of the model, and the caller is told.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ..errors import IolabError

# Numbering from the real sheets, used only when the model's page count does not hold.
SHEET_NUMBERS = """
.pageno { visibility: hidden; }
@page { @top-right { content: "Sheet " counter(page) " of " counter(pages); font-size: 7pt;
                     font-family: "DejaVu Sans", sans-serif; } }
"""


def write_pdf(html: str, path: Path, expected_pages: int, base_url: Path) -> int:
    """Print `html` to `path`; returns the number of pages written."""
    try:
        from weasyprint import CSS, HTML
    except (ImportError, OSError) as e:  # OSError: the pango libraries are missing
        raise IolabError(
            f"cannot write the PDF report ({e}). WeasyPrint and its Debian libraries are needed: run "
            "`bash scripts/setup` (installs libpango-1.0-0, libpangoft2-1.0-0). The HTML report was written."
        ) from None
    logging.getLogger("weasyprint").setLevel(logging.ERROR)
    logging.getLogger("fontTools").setLevel(logging.ERROR)
    doc = HTML(string=html, base_url=str(base_url)).render()
    if len(doc.pages) != expected_pages:
        doc = HTML(string=html, base_url=str(base_url)).render(stylesheets=[CSS(string=SHEET_NUMBERS)])
    doc.write_pdf(path)
    return len(doc.pages)
