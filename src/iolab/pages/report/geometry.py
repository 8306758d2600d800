"""What a plot really drew, and the rules a printed plot keeps.

`record` runs inside plot_style._png on the drawn figure: every text the renderer drew (its box
in pixels and its role: tick label, axis label, title, legend entry, annotation), each axis's
labelled ticks and its label, and each legend's entries beside the series that have points in
the axes. The record travels inside the PNG (a compressed text chunk, `KEY`), so a check reads
the plots of any report, drawn in whichever process, as they were drawn; `plot_violations`
applies the rules to one record. The page layout's rules (laid-out boxes) are layoutcheck.py's.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from typing import Any

from iolab.core.units import counted

KEY = "iolab-geometry"
MIN_TICKS = 3  # labelled ticks an axis of numbers shows at least (plot_style draws them)
OVERLAP_PX = 1.5  # texts overlapping by less (anti-aliased edges touching) are not overprinted
EDGE_PX = 1.0
# An axis of counts per second (IOPS, IOs/s): a tick between whole numbers (0.5 IOPS) is noise
PER_SECOND = re.compile(r"\bIOPS\b|\bIOs?/s\b|\bIO/s\b|per second", re.IGNORECASE)
FRACTION = re.compile(r"\d[.]\d")  # as printed: "0.5", "2.5 k"; units.num groups thousands with ","
LOWER = re.compile(r"lower is better", re.IGNORECASE)
MIN_OVER_MAX = re.compile(r"\bmin(imum)?\s*(÷|/)\s*max(imum)?\b", re.IGNORECASE)


@dataclass(frozen=True)
class Violation:
    where: str  # "report.pdf page 3, figure 'IOPS vs QD'" (the caller's) or a plot's title
    rule: str  # overlap, ticks, legend, fraction, direction, edge, series, broken-word, overflow
    detail: str

    def __str__(self) -> str:
        return f"{self.where}: {self.rule}: {self.detail}"


# -- recording (in the process that draws) ----------------------------------------------------


class _Drawn:
    """matplotlib's Text.draw, wrapped while one figure is drawn: every text artist drawn, with
    its box as drawn (a 3D axis moves its labels at each draw; a multi-line text reaches the
    renderer line by line, without its artist)."""

    def __init__(self, renderer: Any) -> None:
        self.renderer = renderer
        self.texts: list[Any] = []

    def __enter__(self) -> Any:
        from matplotlib.text import Text

        own = self._own = Text.draw
        texts, renderer = self.texts, self.renderer

        def draw(text: Any, r: Any) -> Any:
            own(text, r)
            if r is renderer and text.get_visible() and text.get_text().strip():
                texts.append((text, text.get_window_extent(r)))

        Text.draw = draw  # type: ignore[method-assign,assignment]  # put back in __exit__
        return self

    def __exit__(self, *exc: Any) -> None:
        from matplotlib.text import Text

        Text.draw = self._own  # type: ignore[method-assign]


def draw_recorded(canvas: Any) -> dict[str, Any]:
    """Draw the figure on its Agg canvas (once, as _png does) and return what was drawn."""
    renderer = canvas.get_renderer()
    with _Drawn(renderer) as drawn:
        canvas.draw()
    return _record(canvas.figure, drawn.texts)


def _roles(fig: Any) -> dict[int, tuple[str, int]]:
    roles: dict[int, tuple[str, int]] = {}
    for i, ax in enumerate(fig.axes):
        for name, axis in _axes_of(ax):
            # every tick the axis holds, drawn or not: asking for its labels (get_majorticklabels)
            # would update its ticks again, and make dozens for a hidden axis (a twin's)
            for tick in axis.majorTicks + axis.minorTicks:
                roles[id(tick.label1)] = roles[id(tick.label2)] = (f"{name}tick", i)
            roles[id(axis.label)] = (f"{name}label", i)
            roles[id(axis.get_offset_text())] = (f"{name}offset", i)
        for t in (ax.title, ax._left_title, ax._right_title):
            roles[id(t)] = ("title", i)
        if (leg := ax.get_legend()) is not None:
            roles[id(leg.get_title())] = ("legend", i)
            for t in leg.get_texts():
                roles[id(t)] = ("legend", i)
    for leg in fig.legends:
        for t in leg.get_texts():
            roles[id(t)] = ("legend", -1)
    if fig._suptitle is not None:
        roles[id(fig._suptitle)] = ("title", -1)
    return roles


def _axes_of(ax: Any) -> list[tuple[str, Any]]:
    out = [("x", ax.xaxis), ("y", ax.yaxis)]
    if hasattr(ax, "zaxis"):
        out.append(("z", ax.zaxis))
    return out


def _record(fig: Any, drawn: Any) -> dict[str, Any]:
    roles = _roles(fig)
    texts = []
    for t, b in drawn:
        role, ax = roles.get(id(t), ("text", -1))
        texts.append(
            {"text": t.get_text(), "role": role, "axes": ax, "box": [float(v) for v in (b.x0, b.y0, b.x1, b.y1)]}
        )
    drawn_ids = {id(t) for t, _ in drawn}
    axes = []
    for ax in fig.axes:
        entry: dict[str, Any] = {
            "title": ax.get_title(),
            "colorbar": hasattr(ax, "_colorbar"),
            "axes3d": hasattr(ax, "zaxis"),
        }
        for name, axis in _axes_of(ax):
            entry[name] = {
                "label": axis.label.get_text(),
                "scale": axis.get_scale(),
                # ticks the plot placed itself (categories, rounds, steps): one per point it has
                "placed": type(axis.get_major_locator()).__name__ == "FixedLocator" or _categorical(axis),
                "visible": axis.get_visible() and axis.axes.axison,
                "ticks": [
                    [float(tick.get_loc()), tick.label1.get_text()]
                    for tick in axis.get_major_ticks()
                    if id(tick.label1) in drawn_ids or id(tick.label2) in drawn_ids
                ],
            }
        # an entry wrapped over lines (plot_style.legend_right) is its series' label with its spaces back
        entry["legend"] = (
            [" ".join(t.get_text().split()) for t in ax.get_legend().get_texts()] if ax.get_legend() else []
        )
        entry["series"] = _series_with_points(ax)
        axes.append(entry)
    legends = [[t.get_text() for t in leg.get_texts()] for leg in fig.legends]
    w, h = fig.canvas.get_width_height()
    return {"size": [w, h], "texts": texts, "axes": axes, "figure_legends": legends}


def _categorical(axis: Any) -> bool:
    units = getattr(axis, "units", None)
    return units is not None and type(units).__name__ == "UnitData"


def _series_with_points(ax: Any) -> dict[str, bool]:
    """Each labelled artist of the axes: whether it put anything on the plot (a line with a
    finite point inside the axes' limits, a bar of non-zero height, a shaded span)."""
    import numpy as np
    from matplotlib.collections import Collection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch, StepPatch

    out: dict[str, bool] = {}
    logx, logy = ax.get_xscale() == "log", ax.get_yscale() == "log"
    (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
    for art in [*ax.lines, *ax.collections, *ax.patches]:
        label = art.get_label()
        if not label or label.startswith("_"):
            continue
        drew = False
        if isinstance(art, Line2D):
            xy = np.asarray(art.get_xydata(), dtype=float).reshape(-1, 2)
            ok = np.isfinite(xy).all(axis=1) & (xy[:, 0] >= x0) & (xy[:, 0] <= x1) & (xy[:, 1] >= y0) & (xy[:, 1] <= y1)
            if logx:
                ok &= xy[:, 0] > 0
            if logy:
                ok &= xy[:, 1] > 0
            drew = bool(ok.any()) and art.get_visible()
        elif isinstance(art, StepPatch):  # a stairs line: flat (no height) when every step holds one value
            v = np.asarray(art.get_data()[0], dtype=np.float64)  # StairData: values, edges, baseline
            ok = np.isfinite(v) & (v >= y0) & (v <= y1) & ((v > 0) if logy else True)
            drew = bool(ok.any()) and art.get_visible()
        elif isinstance(art, Patch):
            ext = art.get_window_extent()
            drew = bool(art.get_visible() and ext.width > 0 and ext.height > 0)
        elif isinstance(art, Collection):
            drew = bool(art.get_visible() and (np.asarray(art.get_offsets()).size > 0 or len(art.get_paths()) > 0))
        out[label] = out.get(label, False) or drew
    return out


def png_info(record: dict[str, Any]) -> Any:
    """The record as a PNG's compressed text chunk (Pillow's PngInfo for `save`)."""
    from PIL import PngImagePlugin

    info = PngImagePlugin.PngInfo()
    info.add_text(KEY, json.dumps(record, separators=(",", ":")), zip=True)
    return info


def read_record(png: bytes) -> dict[str, Any] | None:
    from PIL import Image

    text = Image.open(io.BytesIO(png)).info.get(KEY)
    return json.loads(text) if text else None


# -- the rules ------------------------------------------------------------------------------


def plot_violations(rec: dict[str, Any], where: str) -> list[Violation]:
    out: list[Violation] = []
    out += _overlaps(rec, where)
    out += _off_the_figure(rec, where)
    for ax in rec["axes"]:
        name = f"{where} [{ax['title'] or 'untitled axes'}]"
        out += _tick_rules(ax, name)
        out += _legend_rules(ax, name)
    out += _direction_rules(rec, where)
    out += _over_series(rec, where)
    return out


def _overlaps(rec: dict[str, Any], where: str) -> list[Violation]:
    texts = rec["texts"]
    out = []
    for i, a in enumerate(texts):
        for b in texts[i + 1 :]:
            (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = a["box"], b["box"]
            w = min(ax1, bx1) - max(ax0, bx0)
            h = min(ay1, by1) - max(ay0, by0)
            if w > OVERLAP_PX and h > OVERLAP_PX:
                out.append(
                    Violation(
                        where,
                        "overlap",
                        f"{a['role']} {a['text']!r} overprints {b['role']} {b['text']!r} ({w:.0f}×{h:.0f} px)",
                    )
                )
    return out


def _off_the_figure(rec: dict[str, Any], where: str) -> list[Violation]:
    w, h = rec["size"]

    def outside(box: list[float]) -> bool:
        x0, y0, x1, y1 = box
        return min(x0, y0) < -EDGE_PX or x1 > w + EDGE_PX or y1 > h + EDGE_PX

    return [
        Violation(where, "edge", f"{t['role']} {t['text']!r} runs off the {w}×{h} px figure (box {t['box']})")
        for t in rec["texts"]
        if outside(t["box"])
    ]


def _tick_rules(ax: dict[str, Any], where: str) -> list[Violation]:
    out = []
    for name in ("x", "y", "z"):
        axis = ax.get(name)
        if not axis or not axis["visible"]:
            continue
        labelled = [(v, t) for v, t in axis["ticks"] if t.strip()]
        if not labelled and not axis["label"]:
            continue  # an axis left unlabelled on purpose (an image's, a pie's)
        if len(labelled) < MIN_TICKS and not axis["placed"]:
            shown = ", ".join(repr(t) for _, t in labelled) or "none"
            out.append(
                Violation(
                    where,
                    "ticks",
                    f"{name} axis {axis['label']!r}: {counted(len(labelled), 'labelled tick')} ({shown}), fewer than {MIN_TICKS}",
                )
            )
        if PER_SECOND.search(axis["label"]):
            frac = [t for _, t in labelled if FRACTION.search(t)]
            if frac:
                out.append(
                    Violation(where, "fraction", f"{name} axis {axis['label']!r}: fractional ticks {', '.join(frac)}")
                )
    return out


def _legend_rules(ax: dict[str, Any], where: str) -> list[Violation]:
    series = ax["series"]
    return [
        Violation(where, "legend", f"legend entry {label!r} names a series with no point on the plot")
        for label in ax["legend"]
        if label in series and not series[label]
    ]


def _direction_rules(rec: dict[str, Any], where: str) -> list[Violation]:
    """A direction in a title ('lower is better') must hold for every quantity plotted under
    it: a minimum ÷ maximum (a spread, higher is better) is not plotted under 'lower is better'."""
    out = []
    for ax in rec["axes"]:
        if not LOWER.search(ax["title"]):
            continue
        names = [t for _, t in ax["x"]["ticks"]] + list(ax["legend"])
        out += [
            Violation(where, "direction", f"{ax['title']!r} is said of {n!r}, of which higher is better")
            for n in names
            if MIN_OVER_MAX.search(" ".join(n.split()))
        ]
    return out


def _over_series(rec: dict[str, Any], where: str) -> list[Violation]:
    """No text over a series' line or its markers: a number printed on a curve is hard to read
    and hides where the curve goes. An axes records what its series drew ("drawn", vfigure.py:
    its box, the lines' points and half widths, the markers) when it has texts inside it; the
    lines are cut to that box, so a text is checked by its part inside it, less OVERLAP_PX."""
    out = []
    for ax in rec["axes"]:
        drawn = ax.get("drawn")
        if not drawn:
            continue
        bx0, by0, bx1, by1 = drawn["box"]
        for t in rec["texts"]:
            x0, y0, x1, y1 = t["box"]
            part = (
                max(x0, bx0) + OVERLAP_PX,
                max(y0, by0) + OVERLAP_PX,
                min(x1, bx1) - OVERLAP_PX,
                min(y1, by1) - OVERLAP_PX,
            )
            if part[2] <= part[0] or part[3] <= part[1]:
                continue
            hit = [f"a line of {label!r}" for label, half, pts in drawn["lines"] if path_to_box(pts, part) < half]
            hit += [f"a marker of {label!r}" for label, x, y, r in drawn["dots"] if point_to_box((x, y), part) < r]
            if hit:
                out.append(Violation(where, "series", f"{t['role']} {t['text']!r} is printed over {hit[0]}"))
    return out


Pt = tuple[float, float]


def point_to_box(p: Pt, box: tuple[float, float, float, float]) -> float:
    """The distance from a point to a box (x0, y0, x1, y1): 0 inside it."""
    dx = max(box[0] - p[0], 0.0, p[0] - box[2])
    dy = max(box[1] - p[1], 0.0, p[1] - box[3])
    return float((dx * dx + dy * dy) ** 0.5)


def segment_to_box(a: Pt, b: Pt, box: tuple[float, float, float, float]) -> float:
    """The distance from the segment a-b to a box: 0 where it crosses or enters the box, else the
    nearest of its ends to the box or of the box's corners to it."""
    x0, y0, x1, y1 = box
    if _crosses(a, b, box):
        return 0.0
    corners = ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
    return min(point_to_box(a, box), point_to_box(b, box), *(_point_to_segment(c, a, b) for c in corners))


def path_to_box(points: list[list[float]] | tuple[Pt, ...], box: tuple[float, float, float, float]) -> float:
    pts = [(float(p[0]), float(p[1])) for p in points]
    if len(pts) == 1:
        return point_to_box(pts[0], box)
    return min((segment_to_box(a, b, box) for a, b in zip(pts, pts[1:])), default=float("inf"))


def _point_to_segment(c: Pt, a: Pt, b: Pt) -> float:
    ux, uy = b[0] - a[0], b[1] - a[1]
    n = ux * ux + uy * uy
    k = 0.0 if n == 0 else max(0.0, min(1.0, ((c[0] - a[0]) * ux + (c[1] - a[1]) * uy) / n))
    dx, dy = a[0] + k * ux - c[0], a[1] + k * uy - c[1]
    return float((dx * dx + dy * dy) ** 0.5)


def _crosses(a: Pt, b: Pt, box: tuple[float, float, float, float]) -> bool:
    """Whether the segment a-b meets the box (Liang-Barsky clipping leaves some of it)."""
    x0, y0, x1, y1 = box
    lo, hi = 0.0, 1.0
    dx, dy = b[0] - a[0], b[1] - a[1]
    for p, q in ((-dx, a[0] - x0), (dx, x1 - a[0]), (-dy, a[1] - y0), (dy, y1 - a[1])):
        if p == 0:
            if q < 0:
                return False
            continue
        r = q / p
        if p < 0:
            lo = max(lo, r)
        else:
            hi = min(hi, r)
        if lo > hi:
            return False
    return True
