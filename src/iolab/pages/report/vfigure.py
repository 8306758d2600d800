"""A figure of stacked `vaxes.Axes` drawn as a `vector.Drawing`: margins worked out from the
measured widths of the tick labels, axis labels, titles and legends (textwidth.py), so no text
overlaps another or leaves the figure, and the record geometry.py's rules read (the texts'
boxes as placed, each axis' labelled ticks, each legend beside the series it names).

Like matplotlib's constrained layout, panels stacked in one column share their left and right
margins (their axes line up) and the height left over is shared equally. The record's boxes
are in pixels at plot_style's 140 dpi (geometry.py's tolerances are in those pixels), y down.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from iolab.pages.report import textwidth, vlabels, vlegend, vticks
from iolab.pages.report.geometry import MIN_TICKS, PER_SECOND
from iolab.pages.report.vaxes import (
    GRID,
    LABEL_PT,
    TICK_PT,
    TITLE_PT,
    Artist,
    Axes,
    Band,
    Fill,
    Path,
    Rule,
    Stems,
    dashes,
    marker,
    marker_radius,
    on_white,
)
from iolab.pages.report.vector import PT_MM, Clip, Drawing, Line, Rect, Shape
from iolab.pages.report.vtext import PX_PER_MM, Canvas, fill_mm, text_height, wrap_mm
from iolab.pages.report.vticks import Scale, Tick

Point = tuple[float, float]
__all__ = ["PX_PER_MM", "draw", "lay_out", "wrap_mm"]

TICK_LEN, MINOR_LEN, TICK_PAD = 3.5 * PT_MM, 2.0 * PT_MM, 3.5 * PT_MM
LABEL_PAD, TITLE_PAD, FIG_PAD, PANEL_GAP = 4 * PT_MM, 6 * PT_MM, 3 * PT_MM, 2.0
RULE_CLEAR_MM = 1.0  # a text keeps this far off a reference line (vaxes.Rule), beyond its width


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    w: float
    h: float


@dataclass(frozen=True)
class Panel:
    """An axes with its scales and ticks resolved, and where it sits."""

    axes: Axes
    x: Scale
    y: Scale
    xticks: list[Tick]
    yticks: list[Tick]
    rticks: list[Tick]
    box: Box

    def X(self, v: float) -> float:
        return _clamp(self.box.x + self.x.frac(v) * self.box.w) if v > 0 or not self.x.log else -1e4

    def Y(self, v: float, right: bool = False) -> float:
        s = self.axes.right_scale() if right else self.y
        return _clamp(self.box.y + (1 - s.frac(v)) * self.box.h) if v > 0 or not s.log else 1e4


def _clamp(v: float) -> float:
    return max(-1e4, min(1e4, v)) if math.isfinite(v) else 1e4


# -- layout ------------------------------------------------------------------------------------


def draw(panels: Sequence[Axes], width_mm: float, height_mm: float, alt: str = "") -> Drawing:
    """The panels stacked top to bottom on a figure of this size."""
    laid = lay_out(panels, width_mm, height_mm)
    canvas = Canvas(width_mm, height_mm)
    axes_rec: list[dict[str, object]] = []
    twins: list[dict[str, object]] = []
    for i, p in enumerate(laid):
        axes_rec.append(_panel(canvas, p, i, len(panels) + len(twins)))
        if p.axes.right_label:
            twins.append(_twin_record(p))
    return canvas.drawing(alt, axes_rec + twins)


def lay_out(panels: Sequence[Axes], width_mm: float, height_mm: float) -> list[Panel]:
    """Where each panel's axes box sits, with its scales and ticks, as `draw` draws them (a plot
    measures its texts against it first: the bars' values, vbars.py)."""
    scales = [a.scales() for a in panels]
    boxes = [Box(20.0, 10.0, width_mm - 60.0, height_mm / len(panels) - 20.0) for _ in panels]
    for _ in range(2):  # ticks for the axes' lengths, then the margins those ticks' labels need
        laid = [_resolve(a, sx, sy, b) for a, (sx, sy), b in zip(panels, scales, boxes)]
        boxes = _layout(laid, width_mm, height_mm)
    return [Panel(p.axes, p.x, p.y, p.xticks, p.yticks, p.rticks, b) for p, b in zip(laid, boxes)]


def _resolve(a: Axes, x: Scale, y: Scale, box: Box) -> Panel:
    # an axis of IOs per second gets whole-number ticks (geometry.py's fraction rule)
    xw, yw = a.xwhole or bool(PER_SECOND.search(a.xlabel)), bool(PER_SECOND.search(a.ylabel))
    if yw and not y.log and y.hi - y.lo < MIN_TICKS - 1:  # room for three whole numbers (0, 1, 2 IOPS)
        y = Scale(y.lo, y.lo + MIN_TICKS - 1)
    xt = a.xticks if a.xticks is not None else vticks.ticks_for(x, vticks.most_ticks(box.w, TICK_PT, False), xw)
    yt = a.yticks if a.yticks is not None else vticks.ticks_for(y, vticks.most_ticks(box.h, TICK_PT, True), yw)
    rt = vticks.linear(*a.right_lim, vticks.most_ticks(box.h, TICK_PT, True)) if a.right_label else []
    inside = [t for t in xt if x.lo <= t.value <= x.hi]
    return Panel(a, x, y, inside, [t for t in yt if y.lo <= t.value <= y.hi] if a.y_visible else [], rt, box)


def _widest(ticks: Sequence[Tick]) -> float:
    return max((textwidth.width_mm(t.text, TICK_PT) for t in ticks), default=0.0)


def _margins(p: Panel) -> tuple[float, float, float, float]:
    """The room left, right, above and below the axes box its texts need (mm)."""
    a = p.axes
    left = TICK_LEN + TICK_PAD + _widest(p.yticks) if a.y_visible else 0.0
    if a.ylabel and a.y_visible:
        left += LABEL_PAD + text_height(1, LABEL_PT)
    right = _right_axis_width(p)
    entries = vlegend.entries(a)
    if entries:
        right += vlegend.GAP + vlegend.width(entries, a.legend_title)
    # a title or a tick label of several lines (wrapped titles, categories' names) needs each line's room
    top = text_height(a.title.count("\n") + 1, TITLE_PT) + TITLE_PAD if a.title else 1.0
    bottom = TICK_LEN + TICK_PAD + text_height(max((t.text.count("\n") + 1 for t in p.xticks), default=1), TICK_PT)
    if a.xlabel:
        bottom += LABEL_PAD + text_height(a.xlabel.count("\n") + 1, LABEL_PT)
    return left, right, top, bottom


def _layout(panels: Sequence[Panel], width_mm: float, height_mm: float) -> list[Box]:
    m = [_margins(p) for p in panels]
    left = FIG_PAD + max(v[0] for v in m)
    right = FIG_PAD + max(v[1] for v in m)
    free = height_mm - 2 * FIG_PAD - sum(v[2] + v[3] for v in m) - PANEL_GAP * (len(panels) - 1)
    h = max(5.0, free / len(panels))
    out, y = [], FIG_PAD
    for _, _, top, bottom in m:
        out.append(Box(left, y + top, max(10.0, width_mm - left - right), h))
        y += top + h + bottom + PANEL_GAP
    return out


# -- one panel ---------------------------------------------------------------------------------


def _panel(c: Canvas, p: Panel, i: int, twin: int) -> dict[str, object]:
    """Draw one panel; returns its record (geometry.py's shape of one matplotlib axes)."""
    a, b = p.axes, p.box
    # shaded spans under the grid and the lines, as matplotlib's patches are (zorder 1 against
    # the grid's 1.5 and the lines' 2)
    data: list[Shape] = [shape for art in a.artists if isinstance(art, Band) for shape in _artist(p, art)]
    if a.y_visible:
        data += comb([((b.x, p.Y(t.value)), (b.x + b.w, p.Y(t.value))) for t in p.yticks], GRID, 0.8)
    data += comb([((p.X(t.value), b.y + b.h), (p.X(t.value), b.y)) for t in p.xticks], GRID, 0.8)
    series: list[tuple[str, list[Shape]]] = []
    for art in a.artists:
        if not isinstance(art, Band):
            shapes = _artist(p, art)
            data += shapes
            if isinstance(art, Path):
                series.append((art.label, shapes))
            elif isinstance(art, Rule):
                series.append(_reference(art, shapes))
    c.shapes.append(Clip(b.x, b.y, b.w, b.h, tuple(data)))
    c.shapes.append(Rect(b.x, b.y, b.w, b.h, None, "#000000", 0.8))
    xs = _x_axis(c, p, i)
    ys = _y_axis(c, p, i)
    if a.right_label:
        _right_axis(c, p, twin)
    if a.title:
        c.text(a.title, TITLE_PT, "title", i, b.x + b.w / 2, b.y - TITLE_PAD, "center", "bottom")
    _notes(c, p, i)
    drawn = vlabels.Drawn.of(series)
    area = (b.x, b.y, b.x + b.w, b.y + b.h)
    at = [(pl, (p.X(pl.x), p.Y(pl.y))) for pl in a.point_labels if p.x.shows(pl.x) and p.y.shows(pl.y)]
    vlabels.place_labels(c, at, area, drawn, i)
    _value_labels(c, p, i)
    title_h = text_height(1, TITLE_PT) + TITLE_PAD if a.title else 0.0
    x = b.x + b.w + _right_axis_width(p) + vlegend.GAP
    entries = vlegend.draw(c, a, x, b.y - title_h, b.y + b.h / 2, i)
    # what the series drew, for the rule that no text covers it: only where a text is inside the axes
    inside = {"drawn": drawn.record(area, c.boxes)} if a.point_labels or a.notes or a.value_labels else {}
    return {
        "title": a.title,
        "colorbar": False,
        "axes3d": False,
        "x": _axis_record(a.xlabel, p.x, xs, a.xticks is not None, True),
        # hidden ticks (an axis with nothing to measure) were placed so on purpose
        "y": _axis_record(a.ylabel, p.y, ys, a.yticks is not None, a.y_visible),
        "legend": [" ".join(t.split()) for t in entries],
        "series": a.series(p.x, p.y),
        **inside,
    }


def _reference(r: Rule, shapes: Sequence[Shape]) -> tuple[str, list[Shape]]:
    """A reference line as the labels and the record's series rule see it: as wide as the band
    RULE_CLEAR_MM each side of it that a text keeps off (a label 0.7 mm under a dotted
    percentile line reads as printed on it at a page's 80 dpi), named by its value if unlabelled."""
    name = r.label or f"the reference line at {'x' if r.vertical else 'y'} = {r.value:g}"
    band = r.width_pt + 2 * RULE_CLEAR_MM / PT_MM
    return name, [Line(s.points, s.stroke, band) for s in shapes if isinstance(s, Line)]


def _axis_record(label: str, s: Scale, shown: Sequence[Tick], placed: bool, visible: bool) -> dict[str, object]:
    return {
        "label": label,
        "scale": "log" if s.log else "linear",
        "placed": placed,
        "visible": visible,
        "ticks": [[t.value, t.text] for t in shown if t.text],
    }


def _twin_record(p: Panel) -> dict[str, object]:
    """The right-hand y axis as matplotlib records a twin axes: its x axis hidden."""
    return {
        "title": "",
        "colorbar": False,
        "axes3d": False,
        "x": _axis_record("", p.x, [], False, False),
        "y": _axis_record(p.axes.right_label, p.axes.right_scale(), p.rticks, False, True),
        "legend": [],
        "series": {},
    }


def _artist(p: Panel, art: Artist) -> list[Shape]:
    b = p.box
    if isinstance(art, Band):
        x0, x1 = sorted((p.X(art.x0), p.X(art.x1)))
        if art.y0 is None or art.y1 is None:
            y0, y1 = b.y, b.y + b.h
        else:
            y0, y1 = sorted((p.Y(art.y0), p.Y(art.y1)))
        x0, x1, y0, y1 = max(x0, b.x - 1), min(x1, b.x + b.w + 1), max(y0, b.y - 1), min(y1, b.y + b.h + 1)
        return [Rect(x0, y0, x1 - x0, y1 - y0, art.color, None, opacity=art.opacity)] if x1 > x0 and y1 > y0 else []
    if isinstance(art, Rule):
        d = dashes(art.style, art.width_pt)
        if art.vertical:
            return [Line(((p.X(art.value), b.y), (p.X(art.value), b.y + b.h)), art.color, art.width_pt, d)]
        return [Line(((b.x, p.Y(art.value)), (b.x + b.w, p.Y(art.value))), art.color, art.width_pt, d)]
    if isinstance(art, Stems):
        return _stems(p, art)
    if isinstance(art, Fill):
        return _fill(p, art)
    return _path(p, art)


def _fill(p: Panel, f: Fill) -> list[Shape]:
    """One polygon: along the highs left to right, back along the lows."""
    steps = list(zip(f.edges, f.edges[1:], f.lows, f.highs))
    top = [q for x0, x1, _, hi in steps for q in ((p.X(x0), p.Y(hi)), (p.X(x1), p.Y(hi)))]
    bottom = [q for x0, x1, lo, _ in reversed(steps) for q in ((p.X(x1), p.Y(lo)), (p.X(x0), p.Y(lo)))]
    return [Line(tuple(top + bottom), None, 0.0, fill=f.color, closed=True)] if steps else []


def _stems(p: Panel, s: Stems) -> list[Shape]:
    """A line per bin; bins closer than a fifth of a line's width drawn as their tallest (a fio
    histogram has ~1,800 bins, most of them within a hair of a neighbour on a log axis). Bins no
    further apart than a line's width are one zigzag line (up each bin and down again, along the
    base to the next, which their own widths cover): a line each cost WeasyPrint 0.4 ms, 0.3
    CPU-s on the quick latency report's three histograms."""
    merged: dict[float, float] = {}
    width = s.width_pt * PT_MM
    for x, top in zip(s.xs, s.tops):
        if top > s.base and p.x.shows(x):
            key = round(p.X(x) / (width / 5)) * (width / 5)
            merged[key] = max(merged.get(key, top), top)
    base = p.Y(s.base)
    runs: list[list[tuple[float, float]]] = []
    for x in sorted(merged):
        if not runs or x - runs[-1][-1][0] > width:
            runs.append([])
        runs[-1] += [(x, base), (x, p.Y(merged[x])), (x, base)]
    # the colour they show at their opacity on the white axes, drawn opaque: a see-through line is
    # a transparency group of its own in a PDF (514 of them cost WeasyPrint 0.2 CPU-s)
    paint = on_white(s.color, s.opacity)
    return [Line(tuple(run[:-1] if len(run) == 3 else run), paint, s.width_pt) for run in runs]


def _path(p: Panel, s: Path) -> list[Shape]:
    ylog = p.axes.right_scale().log if s.right else p.y.log
    ok = [(x, y) for x, y in zip(s.xs, s.ys) if math.isfinite(x) and math.isfinite(y) and (x > 0 or not p.x.log)]
    ok = [(x, y) for x, y in ok if y > 0 or not ylog]
    pts = [(p.X(x), p.Y(y, s.right)) for x, y in ok]
    out: list[Shape] = []
    if s.width_pt > 0 and len(pts) > 1:
        line = pts
        if s.step:
            line = [q for (x0, y0), (x1, _) in zip(pts, pts[1:]) for q in ((x0, y0), (x1, y0))] + [pts[-1]]
        out.append(Line(tuple(line), s.color, s.width_pt, dashes(s.style, s.width_pt)))
    if s.marker_pt:
        r, b = marker_radius(s), p.box
        out += [marker(s, x, y) for x, y in pts if b.x - r <= x <= b.x + b.w + r and b.y - r <= y <= b.y + b.h + r]
    return out


def comb(teeth: Sequence[tuple[Point, Point]], color: str, width_pt: float) -> list[Shape]:
    """Segments rooted in order along one line (tick marks on a spine, grid lines from an edge of
    the axes) as one zigzag line: out along each and back, then along that line to the next,
    where the spine drawn over it (as wide or wider, black) hides it. A line each cost WeasyPrint
    0.4 ms, and a log axis has dozens of minor ticks."""
    points = [q for root, tip in teeth for q in (root, tip, root)]
    return [Line(tuple(points[:-1]), color, width_pt)] if points else []


def _x_axis(c: Canvas, p: Panel, i: int) -> list[Tick]:
    b, bottom = p.box, p.box.y + p.box.h
    minor = vticks.minor_log(p.x.lo, p.x.hi, p.xticks) if p.x.log and p.axes.xticks is None else []
    c.shapes += comb([((p.X(v), bottom), (p.X(v), bottom + MINOR_LEN)) for v in minor], "#000000", 0.6)
    c.shapes += comb([((p.X(t.value), bottom), (p.X(t.value), bottom + TICK_LEN)) for t in p.xticks], "#000000", 0.8)
    widths = [max(textwidth.width_mm(ln, TICK_PT) for ln in t.text.split("\n")) for t in p.xticks]
    shown = vticks.spaced(p.xticks, [p.X(t.value) for t in p.xticks], widths, 1.0)
    # a label centred on a tick at the axes' end would run off the figure (the characterise
    # report's per-second preconditioning, its axis ending at 1.09 s): its tick stays, unlabelled
    shown = [
        t if not t.text or w / 2 <= p.X(t.value) <= c.w - w / 2 else vticks.Tick(t.value, "")
        for t, w in zip(shown, widths)
    ]
    y = bottom + TICK_LEN + TICK_PAD
    ends = [c.text(t.text, TICK_PT, "xtick", i, p.X(t.value), y, "center", "top")[3] for t in shown if t.text]
    if p.axes.xlabel:
        below = max(ends, default=y + text_height(1, TICK_PT)) + LABEL_PAD
        c.text(p.axes.xlabel, LABEL_PT, "xlabel", i, b.x + b.w / 2, below, "center", "top")
    return shown


def _y_axis(c: Canvas, p: Panel, i: int) -> list[Tick]:
    if not p.axes.y_visible:
        return []
    b = p.box
    minor = vticks.minor_log(p.y.lo, p.y.hi, p.yticks) if p.y.log and p.axes.yticks is None else []
    c.shapes += comb([((b.x, p.Y(v)), (b.x - MINOR_LEN, p.Y(v))) for v in minor], "#000000", 0.6)
    c.shapes += comb([((b.x, p.Y(t.value)), (b.x - TICK_LEN, p.Y(t.value))) for t in p.yticks], "#000000", 0.8)
    shown = _spaced_up(p.yticks, [p.Y(t.value) for t in p.yticks])
    x = b.x - TICK_LEN - TICK_PAD
    lefts = [c.text(t.text, TICK_PT, "ytick", i, x, p.Y(t.value), "right", "center")[0] for t in shown if t.text]
    if p.axes.ylabel:
        left = min(lefts, default=x) - LABEL_PAD
        c.text(p.axes.ylabel, LABEL_PT, "ylabel", i, left, b.y + b.h / 2, "right", "center", upright=True)
    return shown


def _spaced_up(ticks: Sequence[Tick], ys: Sequence[float]) -> list[Tick]:
    """Tick labels up a y axis, each that would touch the one kept below it left blank."""
    h = text_height(1, TICK_PT)
    order = sorted(range(len(ticks)), key=lambda k: -ys[k])  # bottom first
    kept = vticks.spaced([ticks[k] for k in order], [-ys[k] for k in order], [h] * len(order), 0.3)
    back = dict(zip(order, kept))
    return [back[k] for k in range(len(ticks))]


def _right_axis(c: Canvas, p: Panel, twin: int) -> None:
    b, edge = p.box, p.box.x + p.box.w
    ys = [p.Y(t.value, True) for t in p.rticks]
    c.shapes += comb([((edge, y), (edge + TICK_LEN, y)) for y in ys], "#000000", 0.8)
    x = edge + TICK_LEN + TICK_PAD
    rights = [c.text(t.text, TICK_PT, "ytick", twin, x, y, "left", "center")[2] for t, y in zip(p.rticks, ys)]
    right = max(rights, default=x) + LABEL_PAD
    c.text(p.axes.right_label, LABEL_PT, "ylabel", twin, right, b.y + b.h / 2, "left", "center", upright=True)


def _notes(c: Canvas, p: Panel, i: int) -> None:
    b = p.box
    for n in p.axes.notes:
        text, y = fill_mm(n.text, b.w * 0.92, n.size_pt), b.y + (1 - n.fy) * b.h
        c.text(text, n.size_pt, "text", i, b.x + n.fx * b.w, y, "center", n.valign, color=n.color)


def _right_axis_width(p: Panel) -> float:
    if not p.axes.right_label:
        return 0.0
    return TICK_LEN + TICK_PAD + _widest(p.rticks) + LABEL_PAD + text_height(1, LABEL_PT)


def _value_labels(c: Canvas, p: Panel, i: int) -> None:
    """Each value label centred on its x, standing on its y (on the axes' bottom when y is off
    the axis: 0 on a log axis)."""
    b = p.box
    for v in p.axes.value_labels:
        if p.x.shows(v.x):
            y = min(p.Y(v.y), b.y + b.h) if p.y.shows(v.y) else b.y + b.h
            c.text(v.text, v.size_pt, "text", i, p.X(v.x), y, "center", "bottom", v.upright, v.color)
