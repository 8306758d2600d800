"""Text outside DejaVu Sans in the PDF report: `--tested-by "Zoë 测试"` printed the CJK characters
as glyph 0 (an empty box) and extracted as "Zoë 测测". They are printed in the fallback font
scripts/setup installs (fonts-wqy-microhei), and a character no font has is printed as U+FFFD,
never an empty box, with a warning that names it."""

from __future__ import annotations

from pathlib import Path

import pypdf

from iolab.pages.report import ttf

from .conftest import iolab

NAME = "Zoë 测试 <b>x</b> 한글 かな 𐀀"  # 𐀀 (U+10000, Linear B): in no font iolab prints with


def _pdf(run_dir: Path) -> pypdf.PdfReader:
    (pdf,) = (run_dir / "report").glob("*.pdf")
    return pypdf.PdfReader(str(pdf))


def test_a_name_in_another_script_is_printed_and_one_no_font_has_is_named(tmp_path):
    assert ttf.FALLBACK.is_file(), f"{ttf.FALLBACK} is missing: scripts/setup installs {ttf.FALLBACK_PACKAGE}"
    runs = tmp_path / "runs"
    p = iolab("run", "latency", "--quick", "--tested-by", NAME, "--runs-dir", str(runs), timeout=600)
    assert p.returncode == 0, p.stderr
    (run_dir,) = runs.iterdir()
    said = " ".join(p.stderr.split())
    assert "cannot print 𐀀 (U+10000)" in said and "prints � in their place" in said, said
    assert "测" not in said.split("cannot print")[1], said  # the fallback prints it: not named
    reader = _pdf(run_dir)
    text = " ".join(reader.pages[0].extract_text().split())
    assert "Tested by: Zoë 测试 <b>x</b> 한글 かな �" in text, text
    fonts = {f.get_object()["/BaseFont"].split("+")[1] for f in reader.pages[0]["/Resources"]["/Font"].values()}
    assert fonts == {"DejaVuSans", "DejaVuSans-Bold", "WenQuanYiMicroHei"}, fonts
    # `iolab report` writes it again, and says the same
    again = iolab("report", str(run_dir), timeout=600)
    assert again.returncode == 0 and "cannot print 𐀀 (U+10000)" in " ".join(again.stderr.split()), again.stderr


def test_without_the_fallback_font_the_warning_names_the_characters_and_the_package(tmp_path, monkeypatch, capsys):
    from iolab.pages.report import textwidth, write_document
    from iolab.pages.report.model import Document, Page, Text

    monkeypatch.setattr(ttf, "FALLBACK", tmp_path / "none.ttc")
    for cached in (ttf.fallback, textwidth._other_em, textwidth._ems):
        cached.cache_clear()
    try:
        doc = Document("t", "spec", "Test", "s", "e", "dev", "Zoë 测试", (), (), (Page("p", (Text(("x",)),)),), "f")
        _, pdf = write_document(doc, tmp_path, "r")
    finally:
        for cached in (ttf.fallback, textwidth._other_em, textwidth._ems):
            cached.cache_clear()
    said = " ".join(capsys.readouterr().err.split())
    assert "r.pdf cannot print 测 (U+6D4B), 试 (U+8BD5)" in said and ttf.FALLBACK_PACKAGE in said, said
    assert "Zoë ��" in " ".join(pypdf.PdfReader(str(pdf)).pages[0].extract_text().split())


def test_bold_cjk_is_printed_bold_where_the_fallback_font_has_no_bold_weight(tmp_path):
    """The fallback font has one weight (Debian has no bold CJK font with TrueType outlines, which
    the PDF embeds: Noto CJK's are CFF): a comparison's drive labels, bold in its tables, printed
    in the regular weight beside DejaVu Sans Bold. They are filled and stroked now (synthetic
    bold, text render mode 2), in the text's colour; a regular-weight name is filled only."""
    import re

    runs = tmp_path / "runs"
    for _ in range(2):
        p = iolab("run", "latency", "--quick", "--cell-time", "100ms", "--no-report", "--runs-dir", str(runs))
        assert p.returncode == 0, p.stderr
    a, b = sorted(runs.iterdir())
    out = tmp_path / "cmp"
    p = iolab("compare", str(a), str(b), "--label", "固态硬盘 甲", "--label", "固态硬盘 乙", "-o", str(out))
    assert p.returncode == 0, p.stdout + p.stderr
    reader = pypdf.PdfReader(str(next(out.glob("*.pdf"))))
    streams = [page.get_contents().get_data().decode("latin-1") for page in reader.pages]
    # every text object that prints the fallback font in bold: stroked at the text's colour
    colour = r"([\d.]+ [\d.]+ [\d.]+)"
    bold = [t for s in streams for t in re.findall(colour + r" rg\nq " + colour + r" RG ([\d.]+) w BT (.*?) ET Q", s)]
    assert bold, streams[0][:3000]
    for fill, stroke, width, ops in bold:
        assert re.search(r"2 Tr /F3 [\d.]+ Tf .*? Tj 0 Tr", ops) and 0 < float(width) < 1, ops
        assert fill == stroke, (fill, stroke)
    # regular text in the fallback font (the run's notes, a label in a sentence) is filled only
    plain = [t for s in streams for t in re.findall(r"(?<!\d w )BT ([^\n]*?/F3 [^\n]*?) ET", s)]
    assert plain and not any("2 Tr" in t for t in plain), plain[:3]
    text = " ".join(" ".join(page.extract_text().split()) for page in reader.pages)
    assert "固态硬盘 甲" in text and "固态硬盘 乙" in text
