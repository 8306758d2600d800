"""The rules a printed plot keeps, applied to what it drew.

Each plot (a vector.Drawing) records what it placed (vfigure.py, vgrid.py, v3d.py): every text
(its box in pixels and its role: tick label, axis label, title, legend entry, annotation), each
axis's labelled ticks and its label, and each legend's entries beside the series that have
points in the axes. The record travels in the report's HTML (the SVG's <metadata>), so a check
reads the plots of any report as they were drawn; `plot_violations` applies the rules to one
record. The page layout's rules (laid-out boxes) are layoutcheck.py's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from iolab.core.units import counted

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
