"""A report table on the PDF's page (html.py's `table.data`): the content's width, column widths
from their content as a browser's automatic table layout gives them, cells that wrap, a header
row, first-column header cells, a grid of thin lines."""

from __future__ import annotations

from iolab.pages.report import textwidth
from iolab.pages.report.model import CONTENT_WIDTH_MM, Table
from iolab.pages.report.pdfbox import GRID_PT, INK, LEFT, PT, Box, Fill, Sheet, line_height

SIZE_PT = 7.0
PAD_X, PAD_Y = 1.2, 0.35  # a cell's padding
HEAD_FILL, KEY_FILL, GRID = "#dbe5f1", "#f2f6fa", "#b7c7d7"


def _pieces(text: str) -> list[str]:
    """The pieces no line break falls inside (textwidth's rules)."""
    return [p for word in text.split() for p in textwidth._BREAKS.findall(word)]


def widths(t: Table, width: float = CONTENT_WIDTH_MM) -> list[float]:
    """Each column's width: every column as wide as its widest cell on one line when they all
    fit, else its narrowest (its longest unbreakable piece) plus a share of the room left in
    proportion to how much wider it would be on one line (CSS 2.1's automatic table layout)."""
    extra = 2 * PAD_X + GRID_PT * PT
    rows = [(t.columns, True), *((r, False) for r in t.rows)]
    lo, hi = [extra] * len(t.columns), [extra] * len(t.columns)
    for cells, head in rows:
        for i, text in enumerate(cells[: len(lo)]):
            bold = head or (i == 0 and t.first_column_is_header)
            hi[i] = max(hi[i], textwidth.width_mm(text, SIZE_PT, bold) + extra)
            lo[i] = max([lo[i], *(textwidth.width_mm(p, SIZE_PT, bold) + extra for p in _pieces(text))])
    if sum(hi) <= width:
        return [h + (width - sum(hi)) * h / sum(hi) for h in hi]
    if sum(lo) >= width:
        return lo
    slack = sum(h - low for h, low in zip(hi, lo)) or 1.0
    return [low + (width - sum(lo)) * (h - low) / slack for h, low in zip(hi, lo)]


def table(s: Sheet, t: Table, y: float) -> float:
    """Lay the table out at `y`; returns the y below it."""
    cols = widths(t)
    y = _row(s, t.columns, cols, y, "head", t)
    for r in t.rows:
        y = _row(s, r, cols, y, "body", t)
    return y


def _row(s: Sheet, cells: tuple[str, ...], cols: list[float], y: float, kind: str, t: Table) -> float:
    step = line_height(SIZE_PT)
    laid = []
    for i, (text, w) in enumerate(zip(cells, cols)):
        header = kind == "head" or (i == 0 and t.first_column_is_header)
        laid.append((text, textwidth.wrap(text, w - 2 * PAD_X - GRID_PT * PT, SIZE_PT, header), header))
    h = max(len(lines) for _, lines, _ in laid) * step + 2 * PAD_Y + GRID_PT * PT
    x = LEFT
    for (text, lines, header), w in zip(laid, cols):
        fill = HEAD_FILL if kind == "head" else KEY_FILL if header else None
        s.items.append(Fill(x, y, w, h, fill, GRID, GRID_PT))
        align = "center" if kind == "head" else "left" if header or t.columns[0] == "item" else "right"
        box = Box("table cell", x + PAD_X, y, w - 2 * PAD_X, h, source=text)
        s.boxes.append(box)
        top = y + (h - len(lines) * step) / 2  # vertical-align: middle
        s.text(box, lines, x + PAD_X, top, SIZE_PT, header, INK, align, w - 2 * PAD_X)
        x += w
    return y + h
