"""The PDF iolab writes itself (pages/report/pdfdoc.py, pdflayout.py, pdfvector.py, ttf.py):
the text extracts as printed, Unicode included; the fonts are subsets; a vector plot is drawn as
vector operators with its clips, dashes, opacity and rotated labels; a table that runs past its
sheet goes on over the next one with its header row."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pypdf

from iolab.pages.report import textwidth, ttf, write_document
from iolab.pages.report.model import Document, Figure, HeaderColumn, Page, Table, Text
from iolab.pages.report.pdflayout import lay_out
from iolab.pages.report.vector import Circle, Clip, Drawing, Label, Line, Rect

SYMBOLS = "µs ≤ 5 × 10⁹ — a → b · c ¹²³ ≥ ± °"


def _doc(*pages: Page, columns: tuple[HeaderColumn, ...] = ()) -> Document:
    return Document("a title", "spec", "Test", "start", "end", "device", "me", columns, (), pages, "the footer")


def _contents(pdf: Path) -> list[bytes]:
    return [p.get_contents().get_data() for p in pypdf.PdfReader(str(pdf)).pages]


def test_every_symbol_the_reports_print_is_in_both_fonts():
    for bold in (False, True):
        font = ttf.load(bold)
        assert [c for c in SYMBOLS if not c.isspace() and font.glyph(c) == 0] == []


def test_text_extracts_as_printed_with_its_symbols_and_the_fonts_are_subsets(tmp_path):
    col = HeaderColumn("Test Platform", (("Host", f"vm {SYMBOLS}"),))
    doc = _doc(Page("first", (Text((f"plain {SYMBOLS}",)),)), columns=(col,) * 4)
    _, pdf = write_document(doc, tmp_path, "r")
    reader = pypdf.PdfReader(str(pdf))
    text = " ".join(reader.pages[0].extract_text().split())
    assert f"plain {SYMBOLS}" in text and "Page 1 of 1" in text and "the footer" in text
    assert reader.metadata.title == "a title"
    fonts = reader.pages[0]["/Resources"]["/Font"]
    assert len(fonts) == 2  # regular and bold
    for font in fonts.values():
        descriptor = font.get_object()["/DescendantFonts"][0].get_object()["/FontDescriptor"]
        embedded = descriptor["/FontFile2"].get_object()
        assert re.fullmatch(r"[A-Z]{6}\+DejaVuSans(-Bold)?", descriptor["/FontName"][1:])
        # a few dozen glyphs' outlines, not the whole font (about 700 KB)
        assert len(embedded.get_data()) < 80_000 and len(embedded._data) < 40_000


def test_a_subset_keeps_the_glyphs_a_composite_glyph_is_built_from():
    font = ttf.load(False)
    glyph = font.glyph("Ä")
    subset = font.subset({glyph})
    tables = {
        tag: struct.unpack(">II", subset[20 + 16 * i : 28 + 16 * i])
        for i, tag in enumerate(subset[12 + 16 * i : 16 + 16 * i] for i in range(struct.unpack(">H", subset[4:6])[0]))
    }
    loca_at, loca_n = tables[b"loca"]
    loca = struct.unpack(f">{loca_n // 4}I", subset[loca_at : loca_at + loca_n])
    kept = [g for g in range(len(loca) - 1) if loca[g + 1] > loca[g]]
    assert glyph in kept and len(kept) >= 3  # Ä, and the A and the diaeresis it is drawn from (and .notdef)
    assert font.glyph("B") not in kept


def test_a_vector_plot_is_drawn_as_vector_operators(tmp_path):
    inner = (
        Line(((0, 40), (100, 0)), stroke="#1f77b4", dash=(4, 2)),
        Rect(10, 10, 20, 20, fill="#2ca02c", opacity=0.25),
        Circle(50, 20, 2),
    )
    shapes = (
        Clip(10, 5, 170, 40, inner),
        Label(95, 55, "response time (µs)", anchor="middle"),
        Label(5, 30, "IOPS", rotate=90),
    )
    doc = _doc(Page("plot", (Figure("A plot", Drawing(190, 60, shapes), "the source"),)))
    _, pdf = write_document(doc, tmp_path, "r")
    [page] = _contents(pdf)
    assert b" re W n" in page  # the clip
    assert re.search(rb"\[[\d.]+ [\d.]+\] 0 d", page)  # the dash
    assert re.search(rb"/GS\d+ gs", page) and b" c " in page  # the opacity, the circle's curves
    assert re.search(rb"BT /F1 7 Tf 0 1 -1 0 [\d.]+ [\d.]+ Tm", page)  # the label turned a quarter
    assert not pypdf.PdfReader(str(pdf)).pages[0].images  # no raster image of it
    text = pypdf.PdfReader(str(pdf)).pages[0].extract_text()
    assert "response time (µs)" in text and "IOPS" in text and "the source" in text


def test_a_label_is_anchored_by_its_measured_width():
    label = "response time (µs)"
    doc = _doc(Page("plot", (Figure("A plot", Drawing(190, 60, (Label(95, 55, label, anchor="middle"),)), "s"),)))
    [sheet] = lay_out([doc])
    [picture] = [i for i in sheet.items if type(i).__name__ == "Picture"]
    from iolab.pages.report.pdfdoc import Canvas, PdfFile
    from iolab.pages.report.pdfvector import draw

    canvas = Canvas(PdfFile())
    draw(canvas, picture.figure.drawing, picture.x, picture.y, 1.0)
    [op] = [o for o in canvas.ops if o.startswith("BT")]
    x = float(op.split(" Tm")[0].split()[-2]) * 25.4 / 72
    assert abs(x - (picture.x + 95 - textwidth.width_mm(label, 7.0) / 2)) < 0.01


def test_a_table_running_past_its_sheet_goes_on_with_its_header_row(tmp_path):
    rows = tuple((f"row {i}", "a value " * (i % 7 + 1)) for i in range(30))
    table = Table("A long table", ("name", "value"), rows, "the source")
    # the model's budget (row_lines) counts 95 characters a line; these rows wrap to more
    wide = Text(("x " * 40,) * 30, height_mm=10)
    _, pdf = write_document(_doc(Page("p", (wide, table))), tmp_path, "r")
    pages = [" ".join(p.extract_text().split()) for p in pypdf.PdfReader(str(pdf)).pages]
    assert len(pages) == 2 and all(f"Sheet {n} of 2" in t for n, t in enumerate(pages, 1))
    assert all("name value" in t for t in pages) and "row 29" in pages[1] and "row 0" in pages[0]


def test_the_pdf_is_in_place_before_the_html_that_links_the_report(tmp_path, monkeypatch):
    """A reader (`iolab watch`, a person) who finds the HTML finds its PDF: the HTML was put in
    place a moment before the PDF, so the HTML could be read with no PDF beside it."""
    import os

    html, pdf = tmp_path / "r.html", tmp_path / "r.pdf"
    seen, replace = [], os.replace

    def placing(src, dst):
        seen.append((Path(dst).name, html.is_file(), pdf.is_file()))
        replace(src, dst)

    monkeypatch.setattr(os, "replace", placing)
    for _ in range(2):  # a first report, then one written over it
        write_document(_doc(Page("p", (Text(("text",)),))), tmp_path, "r")
    assert [name for name, _, _ in seen] == ["r.pdf", "r.html"] * 2
    assert seen[0] == ("r.pdf", False, False) and seen[1] == ("r.html", False, True)
