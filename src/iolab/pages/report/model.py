"""The page model: what a report says, independent of how it is drawn.

HTML and PDF are two renderings of the same `Document`, so the PDF can never show something
the HTML does not. One `Page` is one printed page: page builders split long tables across
pages themselves (`split_rows`) and keep each page's content within `CONTENT_MM`, so the
page count is known before anything is rendered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a figure's type only: the drawing code (and hashlib's OpenSSL) loads where a plot is drawn
    from iolab.pages.report.vector import Drawing

# Printable height left for blocks on an A4 page once the page header, banners and the four
# header columns are drawn (see html.py's stylesheet). Builders budget against it.
CONTENT_MM = 188.0
CONTENT_WIDTH_MM = 190.0
TABLE_ROW_MM = 4.6  # one table row at the report's table font size
TABLE_EXTRA_MM = 12.0  # caption, header row and source line of a table
FIGURE_EXTRA_MM = 9.0  # caption and source line of a figure


@dataclass(frozen=True)
class Link:
    """A file behind a number, as a path relative to the report file."""

    label: str
    href: str
    group: str = ""  # links of one table cell are listed together under this name


@dataclass(frozen=True)
class Table:
    caption: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    source: str  # where the numbers come from (store table, phase, rounds)
    links: tuple[Link, ...] = ()  # raw engine output behind the table (HTML only)
    first_column_is_header: bool = True

    @property
    def height_mm(self) -> float:
        return TABLE_EXTRA_MM + TABLE_ROW_MM * (sum(row_lines(r) for r in self.rows) + 1)


@dataclass(frozen=True)
class Figure:
    caption: str
    drawing: Drawing  # the plot, drawn by iolab as vector shapes across the page's content width
    source: str
    alt: str = ""

    @property
    def height_mm(self) -> float:
        """The printed height: the drawing's (it is printed at its own size)."""
        return self.drawing.height_mm

    @property
    def total_mm(self) -> float:
        return self.height_mm + FIGURE_EXTRA_MM


@dataclass(frozen=True)
class Text:
    paragraphs: tuple[str, ...]
    height_mm: float = 20.0


Block = Table | Figure | Text

LINE_CHARS = 95  # characters of table text that fit on one line across the content width


def row_lines(row: tuple[str, ...]) -> int:
    """Printed lines a table row takes (long values wrap inside their cell)."""
    return max(1, -(-sum(len(c) for c in row) // LINE_CHARS))


def block_height(block: Block) -> float:
    if isinstance(block, Table):
        return block.height_mm
    if isinstance(block, Figure):
        return block.total_mm
    return block.height_mm


@dataclass(frozen=True)
class Page:
    title: str  # e.g. "Steady State Convergence"
    blocks: tuple[Block, ...]

    def __post_init__(self) -> None:
        used = sum(block_height(b) for b in self.blocks)
        if used > CONTENT_MM + 0.01:
            # A page builder planned more than fits: the PDF would spill onto an extra page
            # and the page count would lie. That is a bug in the builder, not bad input.
            raise ValueError(f"page {self.title!r}: {used:.0f} mm of content > {CONTENT_MM:.0f} mm")


@dataclass(frozen=True)
class HeaderColumn:
    title: str  # Test Platform | Device Under Test | Set Up Parameters | Test Parameters
    items: tuple[tuple[str, str], ...]
    scale: float = 1.0  # font size relative to the full size (header.fit_column)


@dataclass(frozen=True)
class Document:
    """Everything every page header repeats, and the pages."""

    title: str  # the HTML title / PDF metadata
    spec: str  # "Solid State Storage Performance Test Specification (PTS) 2.0.2 (enterprise)"
    test_name: str  # "IOPS"
    started: str
    ended: str
    device: str  # vendor / model (or the drives, for a comparison)
    tested_by: str
    columns: tuple[HeaderColumn, ...]
    banners: tuple[str, ...]  # printed on every page: non-compliance, incomplete run, forced comparison
    pages: tuple[Page, ...] = field(default=())
    footer: str = ""  # run id(s) and generator, printed on every page


def split_rows(rows: list[tuple[str, ...]], first_page_room_mm: float, room_mm: float) -> list[list[tuple[str, ...]]]:
    """Split table rows into chunks that fit: the first chunk in `first_page_room_mm`, the rest
    in `room_mm` each (a table header is repeated on every page)."""

    def capacity(mm: float) -> int:  # in printed lines, less the header row
        return max(1, int((mm - TABLE_EXTRA_MM) // TABLE_ROW_MM) - 1)

    chunks: list[list[tuple[str, ...]]] = [[]]
    cap, used = capacity(first_page_room_mm), 0
    for row in rows:
        n = row_lines(row)
        if used + n > cap and chunks[-1]:
            chunks.append([])
            cap, used = capacity(room_mm), 0
        chunks[-1].append(row)
        used += n
    return chunks
