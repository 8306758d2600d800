"""A written report's pages read back from its HTML (html.py's template), for the geometry check
(layoutcheck.page_rules) to lay out as the PDF does: the check needs only the report file, and
the HTML holds every text the PDF prints. Plots are read as their printed height alone."""

from __future__ import annotations

import html as _html
import re
from collections.abc import Iterator

from iolab.pages.report.model import Block, Document, Figure, HeaderColumn, Page, Table, Text
from iolab.pages.report.vector import Drawing

_SECTION = re.compile(r'<section class="page" id="page-\d+">(.*?)</section>', re.S)
_BLOCK = re.compile(r'<div class="block (figure|table|text)">')


def _text(fragment: str) -> str:
    """The text of an HTML fragment: tags (and html.breakable's <wbr>) dropped, entities read."""
    return _html.unescape(re.sub(r"<[^>]+>", "", fragment.replace("<wbr>", "")))


def _one(pattern: str, body: str, default: str = "") -> str:
    m = re.search(pattern, body, re.S)
    return _text(m.group(1)) if m else default


def sheets_of(text: str) -> Iterator[tuple[Document, Page, bool, str, int]]:
    """Each page of the report: (its document's header, the page, whether the header columns
    are printed on it, its printed number, how many header columns share the width)."""
    sections = _SECTION.findall(text)
    ncols = max((s.count('<div class="col">') for s in sections), default=0) or 1
    for body in sections:
        test, _, title = _one(r'<span class="test"[^>]*>(.*?)</span>', body).partition(" — ")
        started, _, ended = _one(r"<span>Test run: (.*?)</span>", body).partition(" → ")
        page = Page(title, tuple(_blocks(body)))
        doc = Document(
            title="",
            spec=_one(r'<span class="spec"[^>]*>(.*?)</span>', body),
            test_name=test,
            started=started,
            ended=ended,
            device=_one(r"<span>Device: (.*?)</span>", body),
            tested_by=_one(r"<span>Tested by: (.*?)</span>", body),
            columns=tuple(_columns(body)),
            banners=tuple(_text(b) for b in re.findall(r'<div class="banner[^"]*">(.*?)</div>', body, re.S)),
            pages=(page,),
            footer=_one(r'<div class="foot">(.*?)</div>', body),
        )
        yield doc, page, bool(doc.columns), _one(r'<span class="pageno">(.*?)</span>', body), ncols


def _columns(body: str) -> Iterator[HeaderColumn]:
    for title, size, rows in re.findall(
        r'<div class="col"><h3>(.*?)</h3><table style="font-size: ([\d.]+)pt">(.*?)</table>', body, re.S
    ):
        items = re.findall(r'<tr><td class="k">(.*?)</td><td>(.*?)</td></tr>', rows, re.S)
        yield HeaderColumn(_text(title), tuple((_text(k), _text(v)) for k, v in items), float(size) / 5.9)


def _blocks(body: str) -> Iterator[Block]:
    # the content's div carries a style when taller banners shorten it (html.py)
    content = re.split(r'<div class="content"[^>]*>', body, maxsplit=1)[-1].split('<div class="foot">', 1)[0]
    parts = _BLOCK.split(content)
    for kind, part in zip(parts[1::2], parts[2::2]):
        caption = _one(r'<div class="caption">(.*?)</div>', part)
        source = _one(r'<div class="source">(.*?)</div>', part)
        if kind == "text":
            yield Text(tuple(_text(p) for p in re.findall(r"<p>(.*?)</p>", part, re.S)), height_mm=0.0)
        elif kind == "figure":
            height = re.search(r'<svg[^>]* height="([\d.]+)mm"', part)
            # the plot's shapes are not read back: the layout takes its height alone
            yield Figure(caption, Drawing(0.0, float(height.group(1)) if height else 0.0, ()), source)
        else:
            head = tuple(_text(c) for c in re.findall(r"<th>(.*?)</th>", part, re.S))
            rows = [
                re.findall(r"<td( class=\"h\")?>(.*?)</td>", r, re.S) for r in re.findall(r"<tr>(.*?)</tr>", part, re.S)
            ]
            rows = [r for r in rows if r]
            header = bool(rows) and bool(rows[0][0][0])
            yield Table(caption, head, tuple(tuple(_text(v) for _, v in r) for r in rows), source, (), header)
