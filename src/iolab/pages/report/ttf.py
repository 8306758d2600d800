"""The two fonts the report prints in (DejaVu Sans and DejaVu Sans Bold, shipped in fonts/:
matplotlib's copies, which the plots were measured in when matplotlib drew them), and the
installed font that prints what they lack (Chinese, Japanese, Korean: `FALLBACK`),
read with struct: the character map, advance widths and vertical metrics the layout measures
with (textwidth.py), and a subset of the font file for the PDF (pdfdoc.py).

A subset keeps every glyph's number (the PDF's text is glyph numbers, /CIDToGIDMap /Identity)
and empties the outlines of the glyphs it does not print: the file shrinks from about 700 KB
to the outlines used, with no glyph renumbering to get wrong. Reading the tables here costs a
few milliseconds where importing fontTools cost about 60.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

# Tables a PDF viewer needs of an embedded TrueType font (the others are for layout engines and
# font menus): hinting (cvt, fpgm, prep), metrics, outlines.
KEEP = (b"OS/2", b"cvt ", b"fpgm", b"head", b"hhea", b"hmtx", b"maxp", b"prep", b"glyf", b"loca")


@dataclass(frozen=True)
class Font:
    name: str  # PostScript-style name, e.g. "DejaVuSans-Bold"
    data: bytes  # the whole font file
    tables: dict[bytes, tuple[int, int]]  # tag -> (offset, length)
    units: int  # units per em
    ascent: int
    descent: int  # negative
    bbox: tuple[int, int, int, int]
    advances: tuple[int, ...]  # by glyph number
    cmap: dict[int, int]  # code point -> glyph number

    def table(self, tag: bytes) -> bytes:
        off, n = self.tables[tag]
        return self.data[off : off + n]

    def glyph(self, c: str) -> int:
        return self.cmap.get(ord(c), 0)

    def subset(self, glyphs: set[int]) -> bytes:
        """The font file with the outlines of `glyphs` (and of the glyphs they are built from)."""
        return _subset(self, glyphs)


def font_path(bold: bool) -> Path:
    return Path(__file__).parent / "fonts" / ("DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf")


# What DejaVu Sans lacks (Chinese, Japanese, Korean: a tester's name "Zoë 测试" printed .notdef
# boxes and extracted as "Zoë 测测") is printed in WenQuanYi Micro Hei, where Debian's
# fonts-wqy-microhei puts it (scripts/setup installs it: 1.6 MB, where Noto CJK is 57 MB). It has
# no bold. Debian's sans CJK with a bold, Noto CJK (57 MB), has CFF outlines this reader does not
# embed; its TrueType ones are a calligraphic Kai (fonts-lxgw-wenkai, 98 MB) or Korean alone
# (fonts-nanum): bold text prints these characters filled and stroked instead (pdfdoc.py). A character neither font has is
# printed as U+FFFD (a visible mark, not an empty box) and the report command names it.
FALLBACK = Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc")
FALLBACK_PACKAGE = "fonts-wqy-microhei"
FALLBACK_FAMILY = "WenQuanYi Micro Hei"
MISSING = "\ufffd"


@lru_cache(maxsize=2)
def load(bold: bool) -> Font:
    return _parse(font_path(bold).read_bytes(), "DejaVuSans-Bold" if bold else "DejaVuSans")


@lru_cache(maxsize=1)
def fallback() -> Font | None:
    """The font for what DejaVu Sans lacks; None where it is not installed."""
    try:
        return _parse(FALLBACK.read_bytes(), "WenQuanYiMicroHei")
    except (OSError, struct.error, KeyError):  # not installed, or not the file the package ships
        return None


def printer(c: str, bold: bool) -> Font | None:
    """The font that prints `c`: DejaVu Sans (bold or not) where it has it, else the fallback;
    None when neither has it."""
    main = load(bold)
    if ord(c) in main.cmap:
        return main
    other = fallback()
    return other if other is not None and ord(c) in other.cmap else None


def _parse(data: bytes, name: str) -> Font:
    """A TrueType font file, or the first font of a collection (.ttc: its tables' offsets are
    from the start of the file, as a single font's are)."""
    base = struct.unpack(">I", data[12:16])[0] if data[:4] == b"ttcf" else 0
    count = struct.unpack(">H", data[base + 4 : base + 6])[0]
    tables = {}
    for i in range(count):
        at = base + 12 + 16 * i
        tag, _, off, n = struct.unpack(">4sIII", data[at : at + 16])
        tables[tag] = (off, n)
    head_at, hhea_at = tables[b"head"][0], tables[b"hhea"][0]
    units = struct.unpack(">H", data[head_at + 18 : head_at + 20])[0]
    bbox = struct.unpack(">hhhh", data[head_at + 36 : head_at + 44])
    ascent, descent = struct.unpack(">hh", data[hhea_at + 4 : hhea_at + 8])
    metrics = struct.unpack(">H", data[hhea_at + 34 : hhea_at + 36])[0]
    glyphs = struct.unpack(">H", data[tables[b"maxp"][0] + 4 : tables[b"maxp"][0] + 6])[0]
    hmtx = tables[b"hmtx"][0]
    widths = struct.unpack(f">{2 * metrics}H", data[hmtx : hmtx + 4 * metrics])[0::2]
    advances = tuple(widths) + (widths[-1],) * (glyphs - metrics)
    return Font(
        name,
        data,
        tables,
        units,
        ascent,
        descent,
        (bbox[0], bbox[1], bbox[2], bbox[3]),
        advances,
        _cmap(data, tables[b"cmap"][0]),
    )


def _cmap(data: bytes, at: int) -> dict[int, int]:
    """The Unicode character map: format 12 (all planes) if the font has it, else format 4."""
    n = struct.unpack(">H", data[at + 2 : at + 4])[0]
    subtables = {}
    for i in range(n):
        platform, encoding, off = struct.unpack(">HHI", data[at + 4 + 8 * i : at + 12 + 8 * i])
        if platform in (0, 3):
            subtables[struct.unpack(">H", data[at + off : at + off + 2])[0]] = at + off
    if 12 in subtables:
        return _cmap12(data, subtables[12])
    return _cmap4(data, subtables[4])


def _cmap12(data: bytes, at: int) -> dict[int, int]:
    groups = struct.unpack(">I", data[at + 12 : at + 16])[0]
    out = {}
    for i in range(groups):
        start, end, glyph = struct.unpack(">III", data[at + 16 + 12 * i : at + 28 + 12 * i])
        for cp in range(start, end + 1):
            out[cp] = glyph + cp - start
    return out


def _cmap4(data: bytes, at: int) -> dict[int, int]:
    segs = struct.unpack(">H", data[at + 6 : at + 8])[0] // 2
    ends_at = at + 14
    starts_at = ends_at + 2 * segs + 2
    deltas_at, ranges_at = starts_at + 2 * segs, starts_at + 4 * segs
    ends = struct.unpack(f">{segs}H", data[ends_at : ends_at + 2 * segs])
    starts = struct.unpack(f">{segs}H", data[starts_at : starts_at + 2 * segs])
    deltas = struct.unpack(f">{segs}h", data[deltas_at : deltas_at + 2 * segs])
    ranges = struct.unpack(f">{segs}H", data[ranges_at : ranges_at + 2 * segs])
    out = {}
    for i in range(segs):
        for cp in range(starts[i], min(ends[i], 0xFFFE) + 1):
            if ranges[i] == 0:
                glyph = (cp + deltas[i]) & 0xFFFF
            else:
                where = ranges_at + 2 * i + ranges[i] + 2 * (cp - starts[i])
                glyph = struct.unpack(">H", data[where : where + 2])[0]
                glyph = (glyph + deltas[i]) & 0xFFFF if glyph else 0
            if glyph:
                out[cp] = glyph
    return out


def _offsets(font: Font) -> list[int]:
    loca = font.table(b"loca")
    long_format = struct.unpack(">h", font.table(b"head")[50:52])[0] == 1
    if long_format:
        return list(struct.unpack(f">{len(loca) // 4}I", loca))
    return [2 * v for v in struct.unpack(f">{len(loca) // 2}H", loca)]


def _components(outline: bytes) -> list[int]:
    """The glyphs a composite glyph is built from (none for a simple glyph)."""
    if len(outline) < 10 or struct.unpack(">h", outline[:2])[0] >= 0:
        return []
    out, i = [], 10
    while True:
        flags, glyph = struct.unpack(">HH", outline[i : i + 4])
        out.append(glyph)
        i += 4 + (4 if flags & 0x0001 else 2)  # ARG_1_AND_2_ARE_WORDS
        i += 2 if flags & 0x0008 else 4 if flags & 0x0040 else 8 if flags & 0x0080 else 0  # the scale
        if not flags & 0x0020:  # MORE_COMPONENTS
            return out


def _subset(font: Font, glyphs: set[int]) -> bytes:
    offsets, glyf = _offsets(font), font.table(b"glyf")
    keep, todo = set(), [0, *glyphs]  # glyph 0 (.notdef) is required
    while todo:
        g = todo.pop()
        if g not in keep and g < len(offsets) - 1:
            keep.add(g)
            todo += _components(glyf[offsets[g] : offsets[g + 1]])
    parts, loca, at = [], [], 0
    for g in range(len(offsets) - 1):
        loca.append(at)
        if g in keep:
            outline = glyf[offsets[g] : offsets[g + 1]]
            outline += b"\0" * (-len(outline) % 4)
            parts.append(outline)
            at += len(outline)
    loca.append(at)
    head = bytearray(font.table(b"head"))
    head[8:12] = b"\0\0\0\0"  # checkSumAdjustment: not checked by PDF viewers
    head[50:52] = struct.pack(">h", 1)  # long loca offsets
    new = {b"glyf": b"".join(parts), b"loca": struct.pack(f">{len(loca)}I", *loca), b"head": bytes(head)}
    return _file({tag: new.get(tag) or font.table(tag) for tag in KEEP if tag in font.tables})


def _file(tables: dict[bytes, bytes]) -> bytes:
    tags = sorted(tables)
    n = len(tags)
    power = 1 << (n.bit_length() - 1)
    header = struct.pack(">IHHHH", 0x00010000, n, 16 * power, power.bit_length() - 1, 16 * (n - power))
    directory, body, at = [], [], 12 + 16 * n
    for tag in tags:
        data = tables[tag]
        directory.append(struct.pack(">4sIII", tag, _checksum(data), at, len(data)))
        padded = data + b"\0" * (-len(data) % 4)
        body.append(padded)
        at += len(padded)
    return header + b"".join(directory) + b"".join(body)


def _checksum(data: bytes) -> int:
    padded = data + b"\0" * (-len(data) % 4)
    words: tuple[int, ...] = struct.unpack(f">{len(padded) // 4}I", padded)
    return sum(words) & 0xFFFFFFFF
