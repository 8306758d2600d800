"""The heat map (block size × R/W mix, queue depth × series) drawn as vector shapes
(vector.Drawing), and what it shares with the 3D column plot (v3d.py): the viridis colours
without matplotlib, labels placed by their box, and the geometry record
geometry.plot_violations reads. Ticks, a colour bar's too, are vticks.py's.

The record is in vtext.PX_PER_MM's pixels (140 dpi), y down, as every plot's record (vfigure's
too), so geometry.py's tolerances (1.5 px overlap, 1 px edge) mean the same in each.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from iolab.core.units import num
from iolab.pages.report import vtext, vticks
from iolab.pages.report.geometry import PER_SECOND
from iolab.pages.report.model import CONTENT_WIDTH_MM
from iolab.pages.report.textwidth import fit_pt, width_mm
from iolab.pages.report.vaxes import LABEL_PT, TICK_PT, TITLE_PT
from iolab.pages.report.vector import PT_MM, Drawing, Label, Line, Rect, Shape
from iolab.pages.report.vtext import ASC, DESC, text_record
from iolab.pages.report.vticks import Tick

CELL_PT = 6.5  # a heat map cell's value, as matplotlib's heat map printed it
PAD_MM = 1.5  # the figure's edge to the outermost text
GAP_MM = 1.2  # a tick's end to its label, a tick label to the axis name
TICK_MM = 1.2
INK = "#262626"
GREY = "#555555"

# matplotlib's viridis at 33 evenly spaced points (colormaps["viridis"](k / 32)), interpolated
# linearly: within 3/255 of matplotlib's 256 colours everywhere (tests/unit/test_vgrid.py)
VIRIDIS = (
    "#440154", "#470d60", "#48186a", "#482374", "#472d7b", "#453781", "#424086", "#3e4989",
    "#3b528b", "#375b8d", "#33638d", "#2f6b8e", "#2c728e", "#297a8e", "#26828e", "#23898e",
    "#21918c", "#1f988b", "#1fa088", "#22a785", "#28ae80", "#32b67a", "#3fbc73", "#4ec36b",
    "#5ec962", "#70cf57", "#84d44b", "#98d83e", "#addc30", "#c2df23", "#d8e219", "#ece51b",
    "#fde725",
)  # fmt: skip


def rgb(hex_color: str) -> tuple[float, float, float]:
    return int(hex_color[1:3], 16) / 255, int(hex_color[3:5], 16) / 255, int(hex_color[5:7], 16) / 255


def hex_of(c: Sequence[float]) -> str:
    return "#" + "".join(f"{round(min(1.0, max(0.0, v)) * 255):02x}" for v in c[:3])


def viridis(t: float, reversed_: bool = False) -> str:
    """The colour at `t` in [0, 1] (clipped); `reversed_`: viridis_r, dark for the high end."""
    t = min(1.0, max(0.0, 1.0 - t if reversed_ else t)) * (len(VIRIDIS) - 1)
    i = min(len(VIRIDIS) - 2, int(t))
    a, b = rgb(VIRIDIS[i]), rgb(VIRIDIS[i + 1])
    return hex_of([x + (y - x) * (t - i) for x, y in zip(a, b)])


def shaded(hex_color: str, k: float) -> str:
    """Darker (k < 1) or towards white (k > 1): a column's faces lit from above."""
    c = rgb(hex_color)
    return hex_of([v * k for v in c] if k <= 1 else [v + (1 - v) * (k - 1) for v in c])


def luminance(hex_color: str) -> float:
    """WCAG relative luminance."""
    lin = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in rgb(hex_color)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    la, lb = sorted((luminance(a), luminance(b)))
    return (lb + 0.05) / (la + 0.05)


def ink_on(fill: str) -> str:
    """Black or white, whichever reads better on `fill` (on viridis never under 4.5:1)."""
    return "#000000" if contrast(fill, "#000000") >= contrast(fill, "#ffffff") else "#ffffff"


def per_second(label: str) -> bool:
    return bool(PER_SECOND.search(label))


# -- labels and the record --------------------------------------------------------------------


def corners(lab: Label) -> list[tuple[float, float]]:
    """The four corners of a label's box on the drawing (mm, y down), turned with the label."""
    w = width_mm(lab.text, lab.size_pt, lab.bold)
    up, down = ASC * lab.size_pt * PT_MM, DESC * lab.size_pt * PT_MM
    x0 = {"start": 0.0, "middle": -w / 2, "end": -w}[lab.anchor]
    a = math.radians(lab.rotate)
    ca, sa = math.cos(a), math.sin(a)
    # counter-clockwise on the page, y down: (x, y) -> (x cos a + y sin a, -x sin a + y cos a)
    return [(lab.x + x * ca + y * sa, lab.y - x * sa + y * ca) for x in (x0, x0 + w) for y in (-up, down)]


def box(lab: Label) -> tuple[float, float, float, float]:
    """A label's box as drawn, upright (as matplotlib measures a turned text): x0, y0, x1, y1."""
    pts = corners(lab)
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return min(xs), min(ys), max(xs), max(ys)


def centred(text: str, size_pt: float, cx: float, cy: float, rotate: float = 0.0, **kw: Any) -> Label:
    """A label whose box has its centre at (cx, cy)."""
    probe = Label(0.0, 0.0, text, size_pt, rotate=rotate, anchor="middle", **kw)
    x0, y0, x1, y1 = box(probe)
    return Label(cx - (x0 + x1) / 2, cy - (y0 + y1) / 2, text, size_pt, rotate=rotate, anchor="middle", **kw)


def reach(lab: Label, d: tuple[float, float]) -> float:
    """How far the label's box reaches along the unit direction `d` from its centre."""
    x0, y0, x1, y1 = box(lab)
    return (x1 - x0) / 2 * abs(d[0]) + (y1 - y0) / 2 * abs(d[1])


def beside(text: str, size_pt: float, px: float, py: float, d: tuple[float, float], gap: float, **kw: Any) -> Label:
    """A label beside the point (px, py) on the side `d` points to (a unit vector), its box
    `gap` from the point."""
    probe = centred(text, size_pt, 0.0, 0.0, **kw)
    far = gap + reach(probe, d)
    return centred(text, size_pt, px + d[0] * far, py + d[1] * far, **kw)


def axis_record(label: str, ticks: Sequence[tuple[float, str]], placed: bool, scale: str = "linear") -> dict[str, Any]:
    return {
        "label": label,
        "scale": scale,
        "placed": placed,
        "visible": True,
        "ticks": [[float(v), t] for v, t in ticks],
    }


@dataclass
class Ink:
    """A drawing being made: its shapes in drawing order, and every label with its role for the
    record ("title", "xtick", "ylabel", "text" …, and the axes it belongs to)."""

    width: float
    height: float
    shapes: list[Shape] = field(default_factory=list)
    texts: list[tuple[Label, str, int]] = field(default_factory=list)

    def add(self, *shapes: Shape) -> None:
        self.shapes.extend(shapes)

    def text(self, lab: Label, role: str, axes: int = 0) -> Label:
        self.texts.append((lab, role, axes))
        return lab

    def drawing(self, alt: str, axes: list[dict[str, Any]]) -> Drawing:
        """Texts are drawn last, over every shape."""
        texts = [text_record(lab.text, role, ax, box(lab)) for lab, role, ax in self.texts if lab.text.strip()]
        return vtext.drawing(self.width, self.height, (*self.shapes, *(t for t, _, _ in self.texts)), texts, axes, alt)


def along(text: str, size_pt: float, middle: float, lo: float, hi: float) -> tuple[float, float]:
    """The size, from `size_pt` down to 5 pt, at which `text` fits between lo and hi (a long axis
    name beside a short heat map), and where its middle goes: at `middle`, or as near it as
    keeps it between them."""
    size = fit_pt(text, hi - lo, size_pt, 5.0)
    half = width_mm(text, size) / 2
    return size, min(max(middle, lo + half), hi - half) if 2 * half <= hi - lo else (lo + hi) / 2


def text_height(size_pt: float) -> float:
    """One line's box (vtext's, the box every vector plot measures a label by)."""
    return vtext.text_height(1, size_pt)


# -- the heat map -----------------------------------------------------------------------------

CB_GAP_MM, CB_W_MM = 2.5, 4.5  # the axes to the colour bar, and its width
CB_STEPS = 64  # bands of the colour bar: no step between two shows at print sizes
NOT_SHOWN = "#ffffff"  # a cell without a value (or with none a log scale can place): blank, as matplotlib drew it


@dataclass(frozen=True)
class ColourScale:
    """Where a value sits on the colour bar (0 bottom, 1 top) and its colour there: viridis, or
    viridis_r when lower is better (the better end dark at the top)."""

    lo: float
    hi: float
    log: bool
    lower_is_better: bool

    def t(self, v: float) -> float:
        if self.log:
            return (math.log(v) - math.log(self.lo)) / (math.log(self.hi) - math.log(self.lo))
        return (v - self.lo) / (self.hi - self.lo)

    def shows(self, v: float | None) -> bool:
        return v is not None and math.isfinite(v) and (v > 0 or not self.log)

    def colour(self, v: float | None) -> str:
        return viridis(self.t(v), self.lower_is_better) if v is not None and self.shows(v) else NOT_SHOWN

    def ticks(self, whole: bool, length_mm: float) -> list[Tick]:
        """The colour bar's ticks as an axis this long has them (vticks' rules: round values,
        1-2-5 steps or powers of ten on a log scale), none outside the bar; on a log scale under
        a decade, which reads nearly as a linear one, at least as many as a linear bar's."""
        scale, most = vticks.Scale(self.lo, self.hi, self.log), vticks.most_ticks(length_mm, TICK_PT, True)
        # a per-second range without a whole number in it (2.1 to 2.6 IOPS) has only fractions to show
        ticks = vticks.ticks_for(scale, most, whole) or vticks.ticks_for(scale, most)
        if self.log and self.hi < 10 * self.lo:  # 1-1.5-2-3-5-7 steps: three labels on 49 to 148 µs
            even = vticks.linear(self.lo, self.hi, most, whole) or vticks.linear(self.lo, self.hi, most)
            ticks = even if len(even) > len(ticks) else ticks
        return ticks


def colour_scale(z: Sequence[Sequence[float | None]], log: bool, lower_is_better: bool) -> ColourScale | None:
    """matplotlib's choice: a log scale over the positive values when asked and they differ,
    else linear over them all; a single value gets a range around it (its colour the middle)."""
    values = [v for row in z for v in row if v is not None and math.isfinite(v)]
    positive = [v for v in values if v > 0]
    if log and positive and min(positive) < max(positive):
        return ColourScale(min(positive), max(positive), True, lower_is_better)
    if not values:
        return None
    lo, hi = min(values), max(values)
    if lo == hi:
        lo, hi = lo - (abs(lo) * 0.1 or 1.0), hi + (abs(hi) * 0.1 or 1.0)
    return ColourScale(lo, hi, False, lower_is_better)


@dataclass(frozen=True)
class Frame:
    """The heat map's axes on the drawing (mm) and its tick labels' size and turn."""

    left: float
    top: float
    width: float
    height: float
    x_pt: float
    x_turned: bool
    y_pt: float
    upright: tuple[float, float]  # where the upright axis names may reach: below the title, above the x axis' name


def heat_frame(
    ink: Ink,
    x_labels: Sequence[str],
    y_labels: Sequence[str],
    cb: tuple[str, list[str]] | None,
    xlabel: str,
    ylabel: str,
    note: bool = False,
) -> Frame:
    """Margins wide enough for the widest label on each side (text widths from textwidth.py);
    `note`: a line at the bottom for the note that the cells are too small for their values."""
    left = PAD_MM + (text_height(LABEL_PT) + GAP_MM if ylabel else 0.0) + GAP_MM + TICK_MM
    left += max((width_mm(t, TICK_PT) for t in y_labels), default=0.0)
    right = PAD_MM
    if cb is not None:
        right += text_height(LABEL_PT) + GAP_MM + max(width_mm(t, TICK_PT) for t in cb[1]) + GAP_MM + TICK_MM
        right += CB_GAP_MM + CB_W_MM
    width = ink.width - left - right
    col = width / max(1, len(x_labels))
    x_pt = min((fit_pt(t, col - 1.0, TICK_PT, 5.0) for t in x_labels), default=TICK_PT)
    turned = any(width_mm(t, x_pt) > col - 1.0 for t in x_labels)
    tall = max((width_mm(t, x_pt) for t in x_labels), default=0.0) if turned else text_height(x_pt)
    top = PAD_MM + text_height(TITLE_PT) + 2 * GAP_MM
    bottom = PAD_MM + (text_height(LABEL_PT) + GAP_MM if xlabel else 0.0) + tall + GAP_MM + TICK_MM
    bottom += text_height(TICK_PT) + GAP_MM if note else 0.0
    height = ink.height - top - bottom
    row = height / max(1, len(y_labels))
    y_pt = min(TICK_PT, max(4.0, row / 1.1 / (ASC + DESC) / PT_MM))
    upright = (
        PAD_MM + text_height(TITLE_PT) + GAP_MM,
        ink.height - PAD_MM - (text_height(LABEL_PT) + GAP_MM if xlabel else 0.0),
    )
    return Frame(left, top, width, height, x_pt, turned, y_pt, upright)


def bar_frame(
    ink: Ink,
    x_labels: Sequence[str],
    y_labels: Sequence[str],
    scale: ColourScale | None,
    cb_label: str,
    xlabel: str,
    ylabel: str,
    whole: bool,
    note: bool = False,
) -> tuple[Frame, list[Tick]]:
    """The frame, and the colour bar's ticks as many as its height holds: ticks for the
    drawing's height first, then for the bar's (their labels' width sets the right margin)."""
    if scale is None:
        return heat_frame(ink, x_labels, y_labels, None, xlabel, ylabel, note), []
    ticks = scale.ticks(whole, ink.height)
    f = heat_frame(ink, x_labels, y_labels, (cb_label, [t.text for t in ticks]), xlabel, ylabel, note)
    ticks = scale.ticks(whole, f.height)
    return heat_frame(ink, x_labels, y_labels, (cb_label, [t.text for t in ticks]), xlabel, ylabel, note), ticks


CELL_FLOOR_PT = 4.0  # a cell's value printed no smaller; cells too small for it print none (and say so)


def cell_pt(text: str, cw: float, ch: float) -> float | None:
    """The size a value is printed at in a cell cw × ch mm, None when it does not fit."""
    size = min(fit_pt(text, cw - 1.0, CELL_PT, CELL_FLOOR_PT), ch / 1.1 / (ASC + DESC) / PT_MM)
    return size if size >= CELL_FLOOR_PT and width_mm(text, size) <= cw - 1.0 else None


def values_fit(f: Frame, z: Sequence[Sequence[float | None]]) -> bool:
    cw, ch = f.width / max(1, max((len(r) for r in z), default=0)), f.height / max(1, len(z))
    return all(cell_pt(num(v), cw, ch) is not None for row in z for v in row)


def heat_cells(
    ink: Ink, f: Frame, z: Sequence[Sequence[float | None]], scale: ColourScale | None, values: bool
) -> None:
    """One coloured cell per value, row 0 at the top, its value printed in black or white."""
    ny, nx = len(z), max((len(r) for r in z), default=0)
    cw, ch = f.width / max(1, nx), f.height / max(1, ny)
    for yi, row in enumerate(z):
        for xi, v in enumerate(row):
            fill = scale.colour(v) if scale is not None else NOT_SHOWN
            x, y = f.left + xi * cw, f.top + yi * ch
            # the cell's own colour round its edge: no hairline seam between two cells in a viewer
            ink.add(Rect(x, y, cw, ch, fill=fill, stroke=fill, width_pt=0.3))
            size = cell_pt(num(v), cw, ch)
            if values and size is not None:
                ink.text(centred(num(v), size, x + cw / 2, y + ch / 2, color=ink_on(fill)), "text")
    ink.add(Rect(f.left, f.top, f.width, f.height, stroke=INK, width_pt=0.8))


def heat_axes(
    ink: Ink, f: Frame, x_labels: Sequence[str], y_labels: Sequence[str], xlabel: str, ylabel: str, title: str
) -> dict[str, Any]:
    """Ticks at the cells' middles, their labels, the axes' names and the title; the axes' record."""
    cw, ch = f.width / max(1, len(x_labels)), f.height / max(1, len(y_labels))
    bottom = f.top + f.height
    for i, t in enumerate(x_labels):
        cx = f.left + (i + 0.5) * cw
        ink.add(Line(((cx, bottom), (cx, bottom + TICK_MM)), stroke=INK, width_pt=0.6))
        ink.text(
            beside(t, f.x_pt, cx, bottom + TICK_MM, (0.0, 1.0), GAP_MM, rotate=90.0 if f.x_turned else 0.0), "xtick"
        )
    for i, t in enumerate(y_labels):
        cy = f.top + (i + 0.5) * ch
        ink.add(Line(((f.left, cy), (f.left - TICK_MM, cy)), stroke=INK, width_pt=0.6))
        ink.text(beside(t, f.y_pt, f.left - TICK_MM, cy, (-1.0, 0.0), GAP_MM), "ytick")
    middle = f.left + f.width / 2
    if xlabel:
        y = (
            f.top
            + f.height
            + TICK_MM
            + GAP_MM
            + max((box(t)[3] - box(t)[1] for t, r, _ in ink.texts if r == "xtick"), default=0)
        )
        size, x = along(xlabel, LABEL_PT, middle, PAD_MM, ink.width - PAD_MM)
        ink.text(centred(xlabel, size, x, y + GAP_MM + text_height(LABEL_PT) / 2), "xlabel")
    if ylabel:
        size, y = along(ylabel, LABEL_PT, f.top + f.height / 2, *f.upright)
        ink.text(centred(ylabel, size, PAD_MM + text_height(LABEL_PT) / 2, y, rotate=90.0), "ylabel")
    size, x = along(title, TITLE_PT, middle, PAD_MM, ink.width - PAD_MM)
    ink.text(centred(title, size, x, PAD_MM + text_height(TITLE_PT) / 2), "title")
    return {
        "title": title,
        "colorbar": False,
        "axes3d": False,
        "x": axis_record(xlabel, list(enumerate(x_labels)), True),
        "y": axis_record(ylabel, list(enumerate(y_labels)), True),
        "legend": [],
        "series": {},
    }


def colour_bar(ink: Ink, f: Frame, scale: ColourScale, label: str, ticks: Sequence[Tick]) -> dict[str, Any]:
    """The scale beside the axes, as tall as they are, its ticks at round values; a label that
    would touch the one below it left blank, as up a y axis (vfigure)."""
    x, top, h = f.left + f.width + CB_GAP_MM, f.top, f.height
    band = h / CB_STEPS
    for k in range(CB_STEPS):
        fill = viridis((k + 0.5) / CB_STEPS, scale.lower_is_better)
        # each band reaches a little into the one above: no white seam between them
        ink.add(Rect(x, top + h - (k + 1) * band, CB_W_MM, band + (0.05 if k < CB_STEPS - 1 else 0.0), fill=fill))
    ink.add(Rect(x, top, CB_W_MM, h, stroke=INK, width_pt=0.6))
    up = [h * scale.t(t.value) for t in ticks]  # ticks come in rising value: bottom first
    shown = vticks.spaced(ticks, up, [text_height(TICK_PT)] * len(ticks), 0.3)
    placed = []
    for t, u in zip(shown, up):
        y = top + h - u
        ink.add(Line(((x + CB_W_MM, y), (x + CB_W_MM + TICK_MM, y)), stroke=INK, width_pt=0.6))
        if t.text:
            ink.text(beside(t.text, TICK_PT, x + CB_W_MM + TICK_MM, y, (1.0, 0.0), GAP_MM), "ytick", 1)
            placed.append((t.value, t.text))
    size, y = along(label, LABEL_PT, top + h / 2, *f.upright)
    ink.text(centred(label, size, ink.width - PAD_MM - text_height(LABEL_PT) / 2, y, rotate=90.0), "ylabel", 1)
    return {
        "title": "",
        "colorbar": True,
        "axes3d": False,
        "x": axis_record("", [], False),
        "y": axis_record(label, placed, False, "log" if scale.log else "linear"),
        "legend": [],
        "series": {},
    }


def heatmap(
    x_labels: Sequence[str],
    y_labels: Sequence[str],
    z: Sequence[Sequence[float | None]],
    label: str,
    title: str,
    height_mm: float = 80,
    log: bool = True,
    lower_is_better: bool = False,
    xlabel: str = "block size",
    ylabel: str = "R/W mix (%)",
) -> Drawing:
    """One coloured, labelled cell per value z[y][x] (row 0 at the top), and the colour bar:
    viridis on a log scale where the values allow one, reversed when lower is better."""
    ink = Ink(CONTENT_WIDTH_MM, height_mm)
    scale = colour_scale(z, log, lower_is_better)
    cb_label = label + (" (log colour scale)" if scale is not None and scale.log else "")
    f, ticks = bar_frame(ink, x_labels, y_labels, scale, cb_label, xlabel, ylabel, per_second(label))
    values = values_fit(f, z)
    if not values:  # rather than values printed over each other
        f, ticks = bar_frame(ink, x_labels, y_labels, scale, cb_label, xlabel, ylabel, per_second(label), True)
        why = f"{len(z)} × {max(len(r) for r in z)} cells: too small to print their values (the tables give them)"
        ink.text(
            centred(why, TICK_PT, f.left + f.width / 2, ink.height - PAD_MM - text_height(TICK_PT) / 2, color=GREY),
            "text",
        )
    heat_cells(ink, f, z, scale, values)
    axes = [heat_axes(ink, f, x_labels, y_labels, xlabel, ylabel, title)]
    if scale is not None:
        axes.append(colour_bar(ink, f, scale, cb_label, ticks))
    return ink.drawing(title, axes)
