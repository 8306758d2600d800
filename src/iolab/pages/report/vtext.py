"""Text in the plots iolab draws itself (vfigure.py): a text's box from the advance widths of
DejaVu Sans (textwidth.py) and the font's height, its placement by that box, word wrapping to a
width in mm, and the `Canvas` that collects the shapes drawn and the boxes of the texts placed
(the record geometry.py's rules read: pixels at plot_style's 140 dpi, y down).
"""

from __future__ import annotations

from collections.abc import Iterable

from iolab.pages.report import textwidth
from iolab.pages.report.vector import PT_MM, Drawing, Label, Shape

PX_PER_MM = 140 / 25.4  # the record's unit: plot_style.DPI's pixels
ASC, DESC, LINE = 0.76, 0.24, 1.2  # a text line's box above and below its baseline, line pitch (em)
Box4 = tuple[float, float, float, float]  # x0, y0, x1, y1 in mm


def em(size_pt: float) -> float:
    return size_pt * PT_MM


def text_height(lines: int, size_pt: float) -> float:
    return ((lines - 1) * LINE + ASC + DESC) * em(size_pt)


def place(x: float, y: float, w: float, h: float, ha: str, va: str, size_pt: float) -> tuple[float, float]:
    """The top left corner of a w × h text box set `ha` (left/center/right) of x and `va`
    (top/center/bottom, or baseline: its first line's) at y."""
    x0 = x - {"left": 0.0, "center": w / 2, "right": w}[ha]
    y0 = y - ASC * em(size_pt) if va == "baseline" else y - {"top": 0.0, "center": h / 2, "bottom": h}[va]
    return x0, y0


class Canvas:
    """The shapes drawn and the record's texts, as they are placed."""

    def __init__(self, width_mm: float, height_mm: float) -> None:
        self.w, self.h = width_mm, height_mm
        self.shapes: list[Shape] = []
        self.texts: list[dict[str, object]] = []
        self.boxes: list[Box4] = []  # the texts' boxes in mm, as `texts` records them

    def text(
        self,
        text: str,
        size_pt: float,
        role: str,
        axes: int,
        x: float,
        y: float,
        ha: str = "left",
        va: str = "baseline",
        upright: bool = False,
        color: str = "#000000",
    ) -> Box4:
        """Place `text` (lines split at "\\n") by its box: `ha` left/center/right of x, `va`
        top/center/bottom/baseline (of its first line) at y; `upright` reads bottom to top.
        Returns and records the box (x0, y0, x1, y1) in mm."""
        lines = text.split("\n")
        along = max(textwidth.width_mm(ln, size_pt) for ln in lines)
        across = text_height(len(lines), size_pt)
        w, h = (across, along) if upright else (along, across)
        x0, y0 = place(x, y, w, h, ha, va, size_pt)
        for i, ln in enumerate(lines):
            pitch = (ASC + i * LINE) * em(size_pt)
            if upright:
                self.shapes.append(Label(x0 + pitch, y0 + h / 2, ln, size_pt, color, anchor="middle", rotate=90))
            else:
                anchor, at = {"left": ("start", x0), "center": ("middle", x0 + w / 2), "right": ("end", x0 + w)}[ha]
                self.shapes.append(Label(at, y0 + pitch, ln, size_pt, color, anchor=anchor))
        box = (x0, y0, x0 + w, y0 + h)
        if text.strip():
            self.texts.append(text_record(text, role, axes, box))
            self.boxes.append(box)
        return box

    def drawing(self, alt: str, axes: Iterable[dict[str, object]]) -> Drawing:
        return drawing(self.w, self.h, self.shapes, self.texts, axes, alt)


def text_record(text: str, role: str, axes: int, box: Box4) -> dict[str, object]:
    """A text as the record holds it: its role, the axes it belongs to (-1: the figure's), its
    box (x0, y0, x1, y1 in mm) in pixels, y down."""
    return {"text": text, "role": role, "axes": axes, "box": [round(v * PX_PER_MM, 2) for v in box]}


def drawing(
    width_mm: float,
    height_mm: float,
    shapes: Iterable[Shape],
    texts: Iterable[dict[str, object]],
    axes: Iterable[dict[str, object]],
    alt: str = "",
) -> Drawing:
    """A plot with the record geometry.py's rules read: its size in pixels, every text placed
    (text_record) and each axes' record (vfigure's, vgrid's)."""
    record = {
        "size": [round(width_mm * PX_PER_MM), round(height_mm * PX_PER_MM)],
        "texts": list(texts),
        "axes": list(axes),
        "figure_legends": [],
    }
    return Drawing(width_mm, height_mm, tuple(shapes), alt, record)


def wrap_mm(text: str, width_mm: float, size_pt: float) -> list[str]:
    """`text` in lines no wider than `width_mm`, each "\n" starting a new one: broken as the
    report's table cells are (textwidth.wrap: at spaces, after a hyphen, slash or underscore, and
    inside a word only when it alone is wider than a line)."""
    return [ln for para in text.split("\n") for ln in textwidth.wrap(para, width_mm, size_pt)]


def fill_mm(text: str, width_mm: float, size_pt: float) -> str:
    """`wrap_mm`'s lines as one text."""
    return "\n".join(wrap_mm(text, width_mm, size_pt))


def free(box: Box4, area: Box4, placed: list[Box4]) -> bool:
    """Whether `box` lies inside `area` and clear of every box placed."""
    x0, y0, x1, y1 = box
    inside = area[0] <= x0 and x1 <= area[2] and area[1] <= y0 and y1 <= area[3]
    return inside and not any(_overlap(box, q) for q in placed)


def _overlap(a: Box4, b: Box4) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])
