"""The page model as one self-contained HTML file: plots embedded as data URIs, no script,
no web font, no network. The stylesheet lays each `Page` out on one A4 sheet, as the PDF does
(pdflayout.py places the same pages by the same measures: keep the two in step)."""

from __future__ import annotations

import html as _html
from collections.abc import Sequence
from typing import TYPE_CHECKING

from jinja2 import Environment

from iolab.pages.report import pdflayout, textwidth, vector
from iolab.pages.report.model import CONTENT_MM, CONTENT_WIDTH_MM, Block, Document, Figure, Link, Table, Text

if TYPE_CHECKING:
    from markupsafe import Markup

# The font stack is the PDF's (pdfdoc.py): DejaVu Sans, and for what it lacks (Chinese, Japanese,
# Korean) the fallback font scripts/setup installs (ttf.FALLBACK_FAMILY).
CSS = """
@page { size: A4 portrait; margin: 8mm 10mm; }
* { box-sizing: border-box; }
body { font-family: "DejaVu Sans", "Helvetica", "WenQuanYi Micro Hei", sans-serif; font-size: 7.2pt; color: #111; margin: 0; }
.page { width: __W__mm; break-after: page; position: relative; }
.page:last-child { break-after: auto; }
.head { border-bottom: 1.4pt solid #1f4e79; padding-bottom: 1mm; height: 15mm; }
.head .row { display: flex; justify-content: space-between; gap: 4mm; white-space: nowrap; }  /* sizes: html.fit */
.head .spec { font-weight: bold; color: #1f4e79; font-size: 7.6pt; }
.head .test { font-size: 10.5pt; font-weight: bold; margin-top: 0.6mm; }
.head .meta { color: #333; margin-top: 0.6mm; }
.pageno { font-weight: bold; white-space: nowrap; }
.banner { background: #fff2cc; border: 0.6pt solid #bf9000; color: #5c4400; font-weight: bold; padding: 0.6mm 1.5mm;
          margin-top: 1mm; font-size: 6.8pt; }
.banner.incomplete { background: #f8d7da; border-color: #b02a37; color: #58151c; }
.banners { min-height: 11mm; }  /* taller when the banners need it (pdflayout.banners): each printed whole */
.columns { display: flex; gap: __GAP__mm; margin-top: 1mm; height: 46mm; }
.col { flex: 1 1 0; border: 0.6pt solid #9fb6cd; padding: 0.8mm 1.2mm; overflow: hidden; }
.col h3 { margin: 0 0 0.6mm 0; font-size: 7pt; color: #fff; background: #1f4e79; padding: 0.4mm 1mm; }
.col table { border-collapse: collapse; width: 100%; font-size: 5.9pt; line-height: 1.22; }
.col td { vertical-align: top; padding: 0.15mm 0.4mm; overflow-wrap: anywhere; }  /* a long target spec breaks, never runs out of its box */
.col td.k { color: #444; width: 36%; font-weight: bold; }
.content { min-height: __H__mm; margin-top: 2mm; }  /* min: content that overflows makes a new sheet, never vanishes */
.block { margin-bottom: 2mm; }
.caption { font-weight: bold; font-size: 7.6pt; margin-bottom: 0.6mm; }
.source { color: #555; font-size: 6.2pt; margin-top: 0.5mm; }
img.plot, svg.plot { width: __W__mm; display: block; }
table.data { border-collapse: collapse; width: 100%; font-size: 7pt; }
table.data th, table.data td { border: 0.5pt solid #b7c7d7; padding: 0.35mm 1.2mm; text-align: right; }
table.data th { background: #dbe5f1; text-align: center; }
table.data td.h { text-align: left; font-weight: bold; background: #f2f6fa; }
table.data.kv td { text-align: left; }
.text p { margin: 0 0 1mm 0; font-size: 7.6pt; }
.foot { border-top: 0.5pt solid #9fb6cd; color: #555; font-size: 6pt; padding-top: 0.5mm; margin-top: 1mm; }
details.sources { font-size: 6.4pt; margin-top: 0.5mm; }
details.sources a { margin-right: 2mm; white-space: nowrap; }
@media screen {
  body { background: #e5e5e5; }
  .page { background: #fff; margin: 6mm auto; padding: 8mm 10mm; width: 210mm; min-height: 297mm;
          box-shadow: 0 1px 4px rgba(0,0,0,.3); }
  img.plot, svg.plot { width: 100%; height: auto; }
}
nav.toc { width: 210mm; margin: 6mm auto 0 auto; font-size: 8pt; line-height: 1.6; }
nav.toc a { margin-right: 3mm; white-space: nowrap; color: #1f4e79; }
@media print { details.sources, nav.toc { display: none; } }
"""

COLUMN_GAP_MM = 1.5  # .columns' gap
HEAD_GAP_MM = 4.0  # .head .row's gap
PAGENO_MM = 22.0 + HEAD_GAP_MM  # "Page 999 of 999" in bold 7.2 pt, and the gap before it
HEAD_FLOOR_PT = 5.0  # a page head's line shrinks to fit, to no less than this


def fit(text: str, size_pt: float, bold: bool = False, reserve_mm: float = 0.0) -> str:
    """The font size at which one of the page head's lines fits on one line (its box has a fixed
    height: a second line would print over what follows it)."""
    return f"{textwidth.fit_pt(text, CONTENT_WIDTH_MM - reserve_mm, size_pt, HEAD_FLOOR_PT, bold):.2f}"


def breakable(text: object) -> Markup:
    """A header value with a line-break opportunity after each "_", "&" and "?": a parameter
    name or a target spec wraps between its parts (precondition_ / time), never inside a word."""
    # marked before escaping: a break after the "&" of an escaped "&amp;" printed "&amp;op"
    return _Markup(_e(textwidth.BREAK_AFTER.sub("\\1\0", str(text))).replace("\0", "<wbr>"))


TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{{ title }}</title>
<meta name="generator" content="iolab">
<style>{{ css }}</style></head>
<body>
{% if not for_print %}
<nav class="toc"><b>{{ title }}</b> — {{ total }} pages:
{% for doc, page, d, first, n in sheets %}<a href="#page-{{ n }}">{{ n }}. {% if docs|length > 1 %}{{ doc.test_name }}: {% endif %}{{ page.title }}</a>
{% endfor %}
</nav>
{% endif %}
{% for doc, page, d, first, n in sheets %}
<section class="page" id="page-{{ n }}">
  {% set pageno = "Page %d of %d" % (n, total) %}
  <div class="head">
    <div class="row"><span class="spec" style="font-size: {{ fit(doc.spec, 7.6, True, PAGENO_MM) }}pt">{{ doc.spec }}</span>
      <span class="pageno">{{ pageno }}</span></div>
    <div class="row"><span class="test" style="font-size: {{ fit(doc.test_name ~ " — " ~ page.title, 10.5, True) }}pt">{{ doc.test_name }} — {{ page.title }}</span></div>
    {% set meta, meta_pt = head_meta(doc) %}<div class="row meta" style="font-size: {{ '%.2f' % meta_pt }}pt"><span>{{ meta[0] }}</span>
      <span>{{ meta[1] }}</span><span>{{ meta[2] }}</span></div>
  </div>
  <div class="banners">
  {% for b in doc.banners %}<div class="banner{% if 'INCOMPLETE' in b or 'IN PROGRESS' in b or 'AUDIT FAILED' in b %} incomplete{% endif %}">{{ b }}</div>{% endfor %}
  </div>
  {% if first %}<div class="columns">
  {% for col in doc.columns %}
    <div class="col"><h3>{{ col.title }}</h3><table style="font-size: {{ '%.2f' % (5.9 * col.scale) }}pt">
    {% for k, v in col.items %}<tr><td class="k">{{ k | breakable }}</td><td>{{ v | breakable }}</td></tr>{% endfor %}
    </table></div>
  {% endfor %}
  </div>{% endif %}
  <div class="content"{% if excess(doc.banners) > 0 %} style="min-height: {{ '%.2f' % (CONTENT_MM - excess(doc.banners)) }}mm"{% endif %}>
  {% for b in page.blocks %}{{ render_block(b) }}{% endfor %}
  </div>
  <div class="foot">{{ doc.footer }}</div>
</section>
{% endfor %}
</body></html>
"""


def _e(text: str) -> str:
    return _html.escape(str(text))


def render_block(block: Block, for_print: bool = False) -> str:
    """One block as HTML (plain functions, not template macros: the blocks are typed)."""
    if isinstance(block, Figure):
        return (
            f'<div class="block figure"><div class="caption">{_e(block.caption)}</div>'
            f"{vector.svg(block.drawing)}"
            f'<div class="source">{_e(block.source)}</div></div>'
        )
    if isinstance(block, Table):
        kv = " kv" if block.columns[0] == "item" else ""
        head = "".join(f"<th>{_e(c)}</th>" for c in block.columns)
        body = []
        for row in block.rows:
            cells = []
            for i, v in enumerate(row):
                cls = ' class="h"' if i == 0 and block.first_column_is_header else ""
                cells.append(f"<td{cls}>{_e(v)}</td>")
            body.append("<tr>" + "".join(cells) + "</tr>")
        links = ""
        if block.links and not for_print:  # the PDF prints the source line; links are for the HTML
            groups: dict[str, list[Link]] = {}
            for link in block.links:
                groups.setdefault(link.group, []).append(link)
            items = "".join(
                "<div>"
                + (f"<b>{_e(g)}</b>: " if g else "")
                + " ".join(f'<a href="{_e(link.href)}">{_e(link.label)}</a>' for link in ls)
                + "</div>"
                for g, ls in groups.items()
            )
            links = (
                f'<details class="sources"><summary>Files behind this table: engine output per cell and round '
                f"(rN = round N), store files; paths relative to this report</summary>{items}</details>"
            )
        return (
            f'<div class="block table"><div class="caption">{_e(block.caption)}</div>'
            f'<table class="data{kv}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
            f'<div class="source">{_e(block.source)}</div>{links}</div>'
        )
    if isinstance(block, Text):
        return '<div class="block text">' + "".join(f"<p>{_e(p)}</p>" for p in block.paragraphs) + "</div>"
    raise TypeError(f"unknown block {type(block).__name__}")


def render(doc: Document | Sequence[Document], for_print: bool = False, title: str | None = None) -> str:
    """The HTML file of one document, or of several in order as one file (a sequence's report:
    pages numbered through, each page under its own document's header); `for_print` leaves out
    what a printed page cannot use (the per-table lists of linked raw files, which the HTML
    folds away anyway). A document's header columns are printed on its first page only, as
    many across as the most any of the documents has."""
    docs = [doc] if isinstance(doc, Document) else list(doc)
    pages = [(d, p, k, i == 0) for k, d in enumerate(docs) for i, p in enumerate(d.pages)]
    sheets = [(*page, n) for n, page in enumerate(pages, 1)]
    env = Environment(autoescape=True)
    env.globals["render_block"] = lambda b: _Markup(render_block(b, for_print))
    env.globals.update(fit=fit, PAGENO_MM=PAGENO_MM, HEAD_GAP_MM=HEAD_GAP_MM, CONTENT_MM=CONTENT_MM)
    env.globals["excess"] = pdflayout.banners_excess_mm
    env.globals["head_meta"] = pdflayout.head_meta
    env.filters["breakable"] = breakable
    css = (
        CSS.replace("__W__", f"{CONTENT_WIDTH_MM:g}")
        .replace("__H__", f"{CONTENT_MM:g}")
        .replace("__GAP__", f"{COLUMN_GAP_MM:g}")
    )
    return env.from_string(TEMPLATE).render(
        title=title or docs[0].title,
        docs=docs,
        sheets=sheets,
        total=len(sheets),
        css=_Markup(css),
        for_print=for_print,
    )


def _Markup(s: str) -> Markup:
    from markupsafe import Markup

    return Markup(s)
