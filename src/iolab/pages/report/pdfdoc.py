"""A PDF file written by iolab itself: pages of drawing operators, the two DejaVu Sans fonts
(and the fallback for what they lack, ttf.FALLBACK) embedded as subset TrueType CID fonts; the
plots are vector operators (pdfvector.py).

Text is shown as glyph numbers (/Identity-H) with each font's /W widths and a /ToUnicode map,
so a viewer prints exactly the glyphs the layout measured (textwidth.py) and copying or
extracting text (pdftotext, pypdf) gives the characters back. Coordinates here
are millimetres from the page's top-left corner, y down (as the layout and vector.py use them);
`Canvas` turns them into PDF points from the bottom-left.
"""

from __future__ import annotations

import hashlib
import math
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from iolab.pages.report import ttf

MM = 72 / 25.4  # PDF points per millimetre
PAGE_W_MM, PAGE_H_MM = 210.0, 297.0  # A4


def rgb(color: str) -> tuple[float, float, float]:
    """ "#rrggbb" as PDF colour components."""
    return int(color[1:3], 16) / 255, int(color[3:5], 16) / 255, int(color[5:7], 16) / 255


def _n(v: float) -> str:
    return f"{v:.3f}".rstrip("0").rstrip(".") or "0"


def _text_string(text: str) -> str:
    """A PDF text string (metadata) in UTF-16BE with its byte-order mark."""
    return "<FEFF" + text.encode("utf-16-be").hex().upper() + ">"


FALLBACK_RUN = "F3"  # the resource name of the fallback font (ttf.FALLBACK: CJK)
# stroke width of a synthetic bold, × the font size: about the stem a bold weight adds
SYNTHETIC_BOLD = 0.035


@dataclass
class _FontUse:
    font: ttf.Font
    ref: int  # the Type0 font's object number
    used: dict[int, str] = field(default_factory=dict)  # glyph number -> the text it prints


@dataclass
class PdfFile:
    """The objects of one PDF file, collected page by page and written by `save`."""

    objects: list[bytes | None] = field(default_factory=lambda: [None])  # number 0 is free
    pages: list[int] = field(default_factory=list)
    fonts: dict[str, _FontUse] = field(default_factory=dict)  # by resource name: F1, F2 (bold), F3 (fallback)
    missing: set[str] = field(default_factory=set)  # characters no font has: printed as ttf.MISSING
    alphas: dict[float, str] = field(default_factory=dict)  # opacity -> ExtGState name

    def __post_init__(self) -> None:
        self.page_tree = self.reserve()

    def reserve(self) -> int:
        self.objects.append(None)
        return len(self.objects) - 1

    def put(self, body: bytes, number: int | None = None) -> int:
        if number is None:
            number = self.reserve()
        self.objects[number] = body
        return number

    def stream(self, entries: str, data: bytes, compress: bool = True) -> int:
        if compress:
            data, entries = zlib.compress(data, 6), entries + " /Filter /FlateDecode"
        return self.put(f"<< {entries} /Length {len(data)} >>\nstream\n".encode() + data + b"\nendstream")

    def font(self, name: str, font: ttf.Font) -> _FontUse:
        if name not in self.fonts:
            self.fonts[name] = _FontUse(font, self.reserve())
        return self.fonts[name]

    def runs(self, text: str, bold: bool) -> list[tuple[str, str]]:
        """`text` as (font resource name, hex string of its glyph numbers) runs, each character in
        the font that has it (ttf.printer; recorded for the subsets). A character no font has is
        printed as ttf.MISSING and kept in `missing`, for the report command to name: it was
        glyph 0, an empty box, and extracted as the character before it."""
        out: list[tuple[str, str]] = []
        for c in text:
            font = ttf.printer(c, bold)
            if font is None:
                self.missing.add(c)
                c, font = ttf.MISSING, ttf.load(bold)
            name = FALLBACK_RUN if font is ttf.fallback() else "F2" if bold else "F1"
            use = self.font(name, font)
            g = font.glyph(c)
            use.used.setdefault(g, c)
            if out and out[-1][0] == name:
                out[-1] = (name, out[-1][1] + f"{g:04X}")
            else:
                out.append((name, f"{g:04X}"))
        return out or [("F2" if bold else "F1", "")]

    def alpha(self, opacity: float) -> str:
        if opacity not in self.alphas:
            self.alphas[opacity] = f"GS{len(self.alphas) + 1}"
        return self.alphas[opacity]

    def page(self, content: bytes, used: set[str]) -> None:
        """A page of these operators; `used`: the fonts and graphics states they name (a page's
        resources list only its own)."""
        body = self.stream("", content)
        fonts = " ".join(f"/{name} {u.ref} 0 R" for name, u in self.fonts.items() if name in used)
        alphas = " ".join(f"/{name} << /ca {_n(a)} /CA {_n(a)} >>" for a, name in self.alphas.items() if name in used)
        resources = f"<< /Font << {fonts} >> /ExtGState << {alphas} >> >>"
        self.pages.append(
            self.put(
                f"<< /Type /Page /Parent {self.page_tree} 0 R /MediaBox [0 0 {_n(PAGE_W_MM * MM)} {_n(PAGE_H_MM * MM)}]"
                f" /Resources {resources} /Contents {body} 0 R >>".encode()
            )
        )

    def save(self, path: Path, title: str) -> None:
        for name, use in self.fonts.items():
            _embed(self, use, name == "F2")
        kids = " ".join(f"{p} 0 R" for p in self.pages)
        self.put(f"<< /Type /Pages /Kids [{kids}] /Count {len(self.pages)} >>".encode(), self.page_tree)
        catalog = self.put(f"<< /Type /Catalog /Pages {self.page_tree} 0 R >>".encode())
        info = self.put(f"<< /Title {_text_string(title)} /Producer (iolab) /Creator (iolab) >>".encode())
        _write(path, self.objects, catalog, info)


def _write(path: Path, objects: list[bytes | None], catalog: int, info: int) -> None:
    out, offsets = [b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"], []
    at = len(out[0])
    for number, body in enumerate(objects[1:], 1):
        assert body is not None, f"PDF object {number} reserved, never written"
        chunk = f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
        offsets.append(at)
        out.append(chunk)
        at += len(chunk)
    xref = [f"xref\n0 {len(objects)}\n0000000000 65535 f \n".encode()]
    xref += [f"{o:010d} 00000 n \n".encode() for o in offsets]
    trailer = f"trailer\n<< /Size {len(objects)} /Root {catalog} 0 R /Info {info} 0 R >>\nstartxref\n{at}\n%%EOF\n"
    path.write_bytes(b"".join(out + xref) + trailer.encode())


def _embed(pdf: PdfFile, use: _FontUse, bold: bool) -> None:
    """The font as a Type0 font over a CIDFontType2 of its subset, glyph numbers as CIDs."""
    font, scale = use.font, 1000 / use.font.units
    # the subset's tag: six capitals that differ with the glyphs it holds (PDF 32000-1, 9.6.4)
    tag = "".join(chr(65 + b % 26) for b in hashlib.sha1(str(sorted(use.used)).encode()).digest()[:6])
    name = f"{tag}+{font.name}"
    subset = font.subset(set(use.used))
    file = pdf.stream(f"/Length1 {len(subset)}", subset)
    x0, y0, x1, y1 = (round(v * scale) for v in font.bbox)
    descriptor = pdf.put(
        f"<< /Type /FontDescriptor /FontName /{name} /Flags 32 /FontBBox [{x0} {y0} {x1} {y1}] /ItalicAngle 0"
        f" /Ascent {round(font.ascent * scale)} /Descent {round(font.descent * scale)} /CapHeight 729"
        f" /StemV {120 if bold else 80} /FontFile2 {file} 0 R >>".encode()
    )
    widths = " ".join(f"{g} [{round(font.advances[g] * scale)}]" for g in sorted(use.used))
    cid = pdf.put(
        f"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /{name} /CIDSystemInfo << /Registry (Adobe)"
        f" /Ordering (Identity) /Supplement 0 >> /FontDescriptor {descriptor} 0 R /W [{widths}]"
        f" /DW 1000 /CIDToGIDMap /Identity >>".encode()
    )
    unicode = pdf.stream("", _to_unicode(use.used).encode())
    pdf.put(
        f"<< /Type /Font /Subtype /Type0 /BaseFont /{name} /Encoding /Identity-H /DescendantFonts [{cid} 0 R]"
        f" /ToUnicode {unicode} 0 R >>".encode(),
        use.ref,
    )


def _to_unicode(used: dict[int, str]) -> str:
    """The CMap from glyph numbers back to the characters they print."""
    pairs = [f"<{g:04X}> <{text.encode('utf-16-be').hex().upper()}>" for g, text in sorted(used.items())]
    chunks = [pairs[i : i + 100] for i in range(0, len(pairs), 100)]
    body = "".join(f"{len(c)} beginbfchar\n" + "\n".join(c) + "\nendbfchar\n" for c in chunks)
    return (
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        "/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
        "1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n"
        f"{body}endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n"
    )


class Canvas:
    """One page's drawing operators, in millimetres from the top-left corner, y down."""

    def __init__(self, pdf: PdfFile) -> None:
        self.pdf, self.ops, self.used = pdf, list[str](), set[str]()

    def op(self, text: str) -> None:
        self.ops.append(text)

    def xy(self, x: float, y: float) -> str:
        return f"{_n(x * MM)} {_n((PAGE_H_MM - y) * MM)}"

    def fill(self, color: str) -> None:
        self.op("{} {} {} rg".format(*(_n(c) for c in rgb(color))))

    def stroke(self, color: str, width_pt: float, dash: tuple[float, ...] = ()) -> None:
        self.op("{} {} {} RG".format(*(_n(c) for c in rgb(color))) + f" {_n(width_pt)} w")
        self.op(f"[{' '.join(_n(d) for d in dash)}] 0 d")

    def rect(self, x: float, y: float, w: float, h: float, fill: str | None, stroke: str | None = None, width_pt: float = 0.5) -> None:  # fmt: skip
        if fill:
            self.fill(fill)
        if stroke:
            self.stroke(stroke, width_pt)
        paint = "B" if fill and stroke else "f" if fill else "S"
        self.op(f"{self.xy(x, y + h)} {_n(w * MM)} {_n(h * MM)} re {paint}")

    def line(self, x0: float, y0: float, x1: float, y1: float, color: str, width_pt: float) -> None:
        self.stroke(color, width_pt)
        self.op(f"{self.xy(x0, y0)} m {self.xy(x1, y1)} l S")

    def alpha(self, opacity: float) -> None:
        """Paint what follows (until the enclosing `restore`) at this opacity."""
        name = self.pdf.alpha(opacity)
        self.used.add(name)
        self.op(f"/{name} gs")

    def clip(self, x: float, y: float, w: float, h: float) -> None:
        """Cut what follows (until the enclosing `restore`) to the rectangle."""
        self.op(f"{self.xy(x, y + h)} {_n(w * MM)} {_n(h * MM)} re W n")

    def save(self) -> None:
        self.op("q")

    def restore(self) -> None:
        self.op("Q")

    def text(self, x: float, y: float, text: str, size_pt: float, color: str, bold: bool = False, rotate: float = 0.0) -> None:  # fmt: skip
        """`text` with its baseline's start at (x, y); `rotate`: degrees counter-clockwise."""
        runs = self.pdf.runs(text, bold)
        self.used.update(name for name, _ in runs)
        if rotate:
            c, s = math.cos(math.radians(rotate)), math.sin(math.radians(rotate))
            matrix = f"{_n(c)} {_n(s)} {_n(-s)} {_n(c)} {self.xy(x, y)}"
        else:
            matrix = f"1 0 0 1 {self.xy(x, y)}"
        self.fill(color)
        # one text object: each run's font, then its glyphs, from where the last run ended
        shown = [f"/{name} {_n(size_pt)} Tf" + (f" {matrix} Tm" if i == 0 else "") + f" <{glyphs}> Tj" for i, (name, glyphs) in enumerate(runs)]  # fmt: skip
        if bold and any(name == FALLBACK_RUN for name, _ in runs):
            # the fallback (CJK) font has no bold: its glyphs filled and stroked in the text's
            # colour, a synthetic bold as viewers make one (they printed in the regular weight)
            r, g, b = (_n(c) for c in rgb(color))
            embolden = f"{r} {g} {b} RG {_n(size_pt * SYNTHETIC_BOLD)} w"
            shown = [f"2 Tr {t} 0 Tr" if t.startswith(f"/{FALLBACK_RUN} ") else t for t in shown]
            self.op(f"q {embolden} BT {' '.join(shown)} ET Q")
            return
        self.op(f"BT {' '.join(shown)} ET")

    def content(self) -> bytes:
        return "\n".join(self.ops).encode()
