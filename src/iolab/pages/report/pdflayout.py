"""The report's pages placed on A4 sheets: the layout html.py's stylesheet describes (margins
8 mm × 10 mm, the page head 15 mm, banners 11 mm or as tall as they are, the four header columns
46 mm on a document's first page, content, footer), computed here and drawn by pdfdoc.py.

Text wraps by textwidth's rules, the ones the page builders count lines with, and every box of
text is kept (`Box`) for the geometry check (layoutcheck.page_rules): which boxes have a fixed
height, and the lines printed in each. A page whose content runs past the sheet goes on over
more sheets, its tables split between rows and its text between paragraphs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from iolab.pages.report import textwidth
from iolab.pages.report.model import CONTENT_MM, Block, Document, Figure, Page, Table, Text
from iolab.pages.report.pdfbox import (
    BLUE,
    BOX_PT,
    GREY,
    GRID_PT,
    INK,
    LEFT,
    LINE_GREY,
    PT,
    TOP,
    Box,
    ClipTo,
    Fill,
    Picture,
    Sheet,
    Unclip,
    W,
    line_height,
)
from iolab.pages.report.pdftable import table

BOTTOM = 297.0 - 8.0
HEAD_MM, BANNERS_MM, COLUMNS_MM = 15.0, 11.0, 46.0
HEAD_RULE_PT = 1.4
BANNER_PAD_MM, BANNER_GAP_MM = (0.6, 1.5), 1.0  # html.py's .banner: padding, margin-top
COLUMN_GAP_MM, HEAD_GAP_MM = 1.5, 4.0
PAGENO_MM = 22.0 + HEAD_GAP_MM  # "Page 999 of 999" in bold 7.2 pt, and the gap before it
HEAD_FLOOR_PT = 5.0  # a page head's line shrinks to fit, to no less than this
BANNER_COLORS = {False: ("#fff2cc", "#bf9000", "#5c4400"), True: ("#f8d7da", "#b02a37", "#58151c")}


def lay_out(docs: Sequence[Document]) -> list[Sheet]:
    """Every page of `docs` in order, one sheet each unless its content runs over; the sheets
    numbered "Page n of N" by the model, or "Sheet n of m" once a page has run over."""
    ncols = max((len(d.columns) for d in docs), default=1) or 1
    bodies = [(d, p, body(d, p, i == 0, ncols)) for d in docs for i, p in enumerate(d.pages)]
    total, count = sum(len(d.pages) for d in docs), sum(len(s) for _, _, s in bodies)
    label, n = ("Page" if count == total else "Sheet"), 0
    for d, p, sheets in bodies:
        for s in sheets:
            n += 1
            numbered(s, d, p, f"{label} {n} of {count}")
    return [s for _, _, sheets in bodies for s in sheets]


def numbered(s: Sheet, doc: Document, page: Page, number: str) -> None:
    """Put the page head, with its number, on a laid-out sheet."""
    top = Sheet()  # the head first in the file: text is extracted in the order drawn
    head(top, doc, page, number)
    s.items[:0], s.boxes[:0] = top.items, top.boxes


def head(s: Sheet, doc: Document, page: Page, number: str) -> None:
    """The page head: spec line and page number, the test's title, the run's line; each line
    fitted to one line (the head's height is fixed) and the blue rule below."""
    box = Box("head", LEFT, TOP, W, HEAD_MM - 1.0 - HEAD_RULE_PT * PT, fixed=True, source=" ".join((doc.spec, number)))
    s.boxes.append(box)
    y = TOP
    spec_pt = textwidth.fit_pt(doc.spec, W - PAGENO_MM, 7.6, HEAD_FLOOR_PT, True)
    s.text(box, [doc.spec], LEFT, y, spec_pt, True, BLUE)
    s.text(box, [number], LEFT, y, 7.2, True, INK, "right", W)
    y += max(line_height(spec_pt, True), line_height(7.2, True)) + 0.6
    title = f"{doc.test_name} — {page.title}"
    title_pt = textwidth.fit_pt(title, W, 10.5, HEAD_FLOOR_PT, True)
    y = s.text(box, [title], LEFT, y, title_pt, True, INK) + 0.6
    parts, meta_pt = head_meta(doc)
    widths = [textwidth.width_mm(t, meta_pt) for t in parts]
    gap = max(HEAD_GAP_MM, (W - sum(widths)) / 2)  # justify-content: space-between
    x = LEFT
    for text, w in zip(parts, widths):
        s.text(box, [text], x, y, meta_pt, False, "#333333")
        x += w + gap
    rule = TOP + HEAD_MM - HEAD_RULE_PT * PT / 2
    s.items.append(Fill(LEFT, rule - HEAD_RULE_PT * PT / 2, W, HEAD_RULE_PT * PT, BLUE))


def head_meta(doc: Document) -> tuple[list[str], float]:
    """The page head's third line, for the PDF and the HTML alike: the run's times, the device and
    who tested it, and the size at which they fit one line. The device is whole wherever the line
    fits at no less than the floor size (a drive's 60-character model was cut at 48 characters,
    room or not, its over-provisioning figures lost); cut with "…" only past that, and whole in
    the first page's Device Under Test column."""
    parts = [f"Test run: {doc.started} → {doc.ended}", f"Device: {doc.device}", f"Tested by: {doc.tested_by}"]
    room = W - 2 * HEAD_GAP_MM
    meta_pt = textwidth.fit_pt("".join(parts), room, 7.2, HEAD_FLOOR_PT)
    # past the room by more than rounding: fit_pt's size fits the line exactly, and a width
    # a hair over it once cut the device's last characters at a size where the line fitted
    while textwidth.width_mm("".join(parts), meta_pt) > room + 0.01 and len(parts[1]) > 12:
        parts[1] = parts[1][:-2] + "…"
    return parts, meta_pt


def body(doc: Document, page: Page, first: bool, ncols: int) -> list[Sheet]:
    """A page's sheets without their heads: banners, the header columns on a document's first
    page, the blocks, the footer (more than one sheet only if the blocks run past the first)."""
    sheets: list[Sheet] = []
    pending = list(page.blocks)
    while True:
        s = Sheet()
        y = banners(s, doc.banners, TOP + HEAD_MM)
        if first and not sheets:
            y = columns(s, doc, y + 1.0, ncols)
        y += 2.0  # .content's margin
        room = BOTTOM - footer_mm(doc.footer) - 1.0
        top = y
        while pending:
            block, rest = place(s, pending[0], y, room, y == top)
            if block is None:
                break
            y = block
            pending = ([rest] if rest is not None else []) + pending[1:]
            if rest is not None:
                break
        # a page's content is CONTENT_MM at most (model.Page), less when taller banners push it down:
        # the footer then ends at the sheet's foot, never below it
        footer(s, doc.footer, max(y, min(top + CONTENT_MM, room)) + 1.0)
        sheets.append(s)
        if not pending:
            return sheets


def footer_mm(text: str) -> float:
    return GRID_PT * PT + 0.5 + len(textwidth.wrap(text, W, 6.0)) * line_height(6.0)


def footer(s: Sheet, text: str, y: float) -> None:
    box = Box("footer", LEFT, y, W, footer_mm(text), source=text)
    s.boxes.append(box)
    s.items.append(Fill(LEFT, y, W, GRID_PT * PT, LINE_GREY))
    s.text(box, textwidth.wrap(text, W, 6.0), LEFT, y + GRID_PT * PT + 0.5, 6.0, False, GREY)


def banners(s: Sheet, texts: Sequence[str], y: float) -> float:
    """The banner strip: each banner on its colour, wrapped across the page. The strip is
    BANNERS_MM high, or as high as its banners when they take more (three do): every banner is
    printed whole on every page, and what follows starts below the last one."""
    heights = banner_heights(texts)
    strip = Box("banners", LEFT, y, W, strip_mm(heights), fixed=True, source=" ".join(texts))
    s.boxes.append(strip)
    at, border = y, BOX_PT * PT
    for text, (lines, h) in zip(texts, heights):
        bad = any(w in text for w in ("INCOMPLETE", "IN PROGRESS", "AUDIT FAILED"))
        fill, edge, ink = BANNER_COLORS[bad]
        at += BANNER_GAP_MM
        s.items.append(Fill(LEFT + border / 2, at + border / 2, W - border, h - border, fill, edge, BOX_PT))
        box = Box("banner", LEFT, at, W, h, source=text)
        s.boxes.append(box)
        s.text(box, lines, LEFT + border + BANNER_PAD_MM[1], at + border + BANNER_PAD_MM[0], 6.8, True, ink)
        strip.lines += box.lines
        at += h
    return y + strip.h


def banner_heights(texts: Sequence[str]) -> list[tuple[list[str], float]]:
    """Each banner's printed lines and its height (border, padding and lines; not its gap)."""
    border, pad = BOX_PT * PT, BANNER_PAD_MM
    out = []
    for text in texts:
        lines = textwidth.wrap(text, W - 2 * pad[1] - 2 * border, 6.8, True)
        out.append((lines, 2 * border + 2 * pad[0] + len(lines) * line_height(6.8, True)))
    return out


def strip_mm(heights: Sequence[tuple[list[str], float]]) -> float:
    """The banner strip's height: BANNERS_MM, or its banners' with their gaps when more."""
    return max(BANNERS_MM, sum(BANNER_GAP_MM + h for _, h in heights))


def banners_excess_mm(texts: Sequence[str]) -> float:
    """How much taller than BANNERS_MM the banner strip of `texts` is (html.py shortens the
    content's minimum height by it, so the page's footer stays on its sheet)."""
    return strip_mm(banner_heights(texts)) - BANNERS_MM


def columns(s: Sheet, doc: Document, y: float, n: int) -> float:
    """The four header columns: fixed-height boxes, their text cut at the box (overflow hidden)."""
    cw = (W - COLUMN_GAP_MM * (n - 1)) / n
    for i, col in enumerate(doc.columns):
        x = LEFT + i * (cw + COLUMN_GAP_MM)
        border = BOX_PT * PT
        box = Box("header column", x + border + 1.2, y + border + 0.8, cw - 2 * border - 2.4, COLUMNS_MM - 2 * border - 1.6, fixed=True)  # fmt: skip
        s.boxes.append(box)
        s.items.append(Fill(x + border / 2, y + border / 2, cw - border, COLUMNS_MM - border, None, LINE_GREY, BOX_PT))
        s.items.append(ClipTo(x, y, cw, COLUMNS_MM))
        title_h = line_height(7.0, True) + 0.8
        s.items.append(Fill(box.x, box.y, box.w, title_h, BLUE))
        s.text(box, [col.title], box.x + 1.0, box.y + 0.4, 7.0, True, "#ffffff")
        at = box.y + title_h + 0.6
        size = 5.9 * col.scale
        step = size * 1.22 * PT
        key_w = 0.36 * box.w
        for k, v in col.items:
            keys = textwidth.wrap(k, key_w - 0.8, size, True)
            values = textwidth.wrap(v, box.w - key_w - 0.8, size)
            row = Box("header row", box.x, at, box.w, max(len(keys), len(values)) * step + 0.3, source=f"{k} {v}")
            key = Box("header key", box.x + 0.4, at, key_w - 0.8, row.h, source=k)
            value = Box("header value", box.x + key_w + 0.4, at, box.w - key_w - 0.8, row.h, source=v)
            s.text(key, keys, key.x, at + 0.15, size, True, "#444444", leading=step)
            s.text(value, values, value.x, at + 0.15, size, False, INK, leading=step)
            box.lines += key.lines + value.lines
            s.boxes += [row, key, value]
            at += row.h
        s.items.append(Unclip())
    return y + COLUMNS_MM


def place(s: Sheet, block: Block, y: float, room: float, alone: bool) -> tuple[float | None, Block | None]:
    """Put `block` at `y` if it ends above `room` (or `alone` on the sheet, when it may not:
    a table then gives the sheet the rows that fit and returns the rest). Returns the y below it
    (None: not placed, for the next sheet) and what is left of it for the next sheet."""
    trial = Sheet()
    end = _block(trial, block, y)
    if end - 2.0 <= room:
        s.items += trial.items
        s.boxes += trial.boxes
        return end, None
    lo, hi, best = 1, _pieces(block) - 1, None  # the most rows or paragraphs that fit (binary search)
    while lo <= hi:
        k = (lo + hi) // 2
        part = Sheet()
        end = _block(part, _split(block, k)[0], y)
        if end - 2.0 <= room:
            lo, best = k + 1, (k, part, end)
        else:
            hi = k - 1
    if best is not None:
        k, part, end = best
        s.items += part.items
        s.boxes += part.boxes
        return end, _split(block, k)[1]
    if not alone:
        return None, None
    s.items += trial.items
    s.boxes += trial.boxes
    return end, None


def _pieces(block: Block) -> int:
    """Where a block may be split between sheets: a table between rows, text between paragraphs."""
    return len(block.rows) if isinstance(block, Table) else len(block.paragraphs) if isinstance(block, Text) else 1


def _split(block: Block, k: int) -> tuple[Block, Block]:
    if isinstance(block, Table):
        return replace(block, rows=block.rows[:k]), replace(block, rows=block.rows[k:])
    assert isinstance(block, Text)
    return replace(block, paragraphs=block.paragraphs[:k]), replace(block, paragraphs=block.paragraphs[k:])


def _block(s: Sheet, block: Block, y: float) -> float:
    if isinstance(block, Text):
        box = Box("text", LEFT, y, W, 0.0, source=" ".join(block.paragraphs))
        s.boxes.append(box)
        for p in block.paragraphs:
            y = s.text(box, textwidth.wrap(p, W, 7.6), LEFT, y, 7.6, False, INK) + 1.0
        return y - 1.0 + 2.0
    y = _caption(s, block.caption, y)
    if isinstance(block, Figure):
        h = block.height_mm
        d = block.drawing  # drawn to the content's width, its height kept in proportion
        h = min(h, d.height_mm * W / d.width_mm) if d.width_mm else h
        s.items.append(Picture(LEFT, y, W, h, block))
        y += h
    else:
        y = table(s, block, y)
    y += 0.5
    box = Box("source", LEFT, y, W, 0.0, source=block.source)
    s.boxes.append(box)
    return s.text(box, textwidth.wrap(block.source, W, 6.2), LEFT, y, 6.2, False, GREY) + 2.0


def _caption(s: Sheet, text: str, y: float) -> float:
    box = Box("caption", LEFT, y, W, 0.0, source=text)
    s.boxes.append(box)
    return s.text(box, textwidth.wrap(text, W, 7.6, True), LEFT, y, 7.6, True, INK) + 0.6
