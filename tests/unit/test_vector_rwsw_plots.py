"""The RWSW, DIRTH, latency-demand and latency-bound plots drawn as vectors (rwsw_plots.panels,
rwsw_plots.demand_intensity, latbound._ramp_figure): each series on its own panel at its values,
the partial intervals ringed, an unmeasured panel saying so without ticks, point labels in their
curve's colour and never printed over one another, the bound counted in the latency axis, and
the record passing the geometry rules."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from iolab.core.decide import PERCENTILE_COLUMNS
from iolab.pages.report import vfigure, vlegend, vticks
from iolab.pages.report.geometry import path_to_box, plot_violations, point_to_box
from iolab.pages.report.latbound import _ramp_figure
from iolab.pages.report.plot_style import PARTIAL_LABEL, Series, color
from iolab.pages.report.rwsw_plots import Panel, demand_intensity, panels
from iolab.pages.report.vaxes import GRID, TICK_PT
from iolab.pages.report.vector import PT_MM, Circle, Clip, Drawing, Label, Line


def rules(d: Drawing) -> list[str]:
    return [str(v) for v in plot_violations(d.record, "plot")]


def texts(d: Drawing, role: str, k: int | None = None) -> list[dict[str, Any]]:
    return [t for t in d.record["texts"] if t["role"] == role and (k is None or t["axes"] == k)]


def centre(d: Drawing, role: str, k: int, text: str) -> float:
    """A tick label's centre along its axis (mm): where its tick is."""
    [t] = [t for t in texts(d, role, k) if t["text"] == text]
    x0, y0, x1, y1 = t["box"]
    return ((x0 + x1) if role == "xtick" else (y0 + y1)) / 2 / vfigure.PX_PER_MM


def clips(d: Drawing) -> list[Clip]:
    return [s for s in d.shapes if isinstance(s, Clip)]


def dots(clip: Clip, colour: str, ring: bool = False) -> list[tuple[float, float]]:
    return [
        (s.x, s.y)
        for s in clip.shapes
        if isinstance(s, Circle) and (s.stroke == colour and s.fill is None if ring else s.fill == colour)
    ]


def test_stacked_panels_put_each_series_on_its_panel_at_its_values():
    levels = (1.0, 32.0, 1024.0)
    d = panels(
        [
            Panel("IOPS", "IOPS", (Series("TC1", levels, (0.0, 2000.0, 4000.0), partial=(1,)),)),
            Panel("ART", "response time (µs)", (Series("TC1", levels, (100.0, 1000.0, 10000.0)),), logy=True),
        ],
        "outstanding IO (log scale)",
        140,
        logx2=True,
    )
    assert rules(d) == []
    top, bottom = d.record["axes"]
    assert [t for _, t in top["x"]["ticks"]] == ["1", "32", "1,024"] and top["x"]["scale"] == "log"
    assert bottom["y"]["scale"] == "log" and bottom["y"]["label"] == "response time (µs) (log scale)"
    assert top["legend"] == ["TC1", PARTIAL_LABEL] and bottom["legend"] == ["TC1"]
    assert bottom["x"]["label"] == "outstanding IO (log scale)" and top["x"]["label"] == ""
    c0, c1 = clips(d)
    # each point where its ticks are: a series on the other panel, or at another height, fails
    for k, clip, ys in ((0, c0, ("0", "2,000", "4,000")), (1, c1, ("100", "1,000", "10,000"))):
        got = dots(clip, color(0))
        want = [(centre(d, "xtick", k, x), centre(d, "ytick", k, y)) for x, y in zip(("1", "32", "1,024"), ys)]
        assert got == [pytest.approx(w, abs=0.05) for w in want]
    # the partial interval ringed, on its point
    assert dots(c0, "#d62728", ring=True) == [pytest.approx(dots(c0, color(0))[1], abs=1e-6)]
    assert dots(c1, "#d62728", ring=True) == []


def test_steps_are_drawn_as_steps_with_a_shaded_span_and_whole_number_ticks():
    d = panels(
        [
            Panel(
                "MB/s", "MB/s", (Series("capture", (0.0, 1.0, 2.0, 3.0, 4.0), (2.0, 20.0, 20.0, 5.0, 5.0)),), steps=True
            )
        ],
        "time (seconds)",
        80,
        shade=(2.0, 4.0),
        shade_label="last two steps",
    )
    assert rules(d) == []
    ax = d.record["axes"][0]
    assert ax["legend"] == ["capture", "last two steps"]
    assert all(float(v).is_integer() for v, _ in ax["x"]["ticks"])
    [clip] = clips(d)
    [line] = [s for s in clip.shapes if isinstance(s, Line) and s.stroke == color(0)]
    # post steps: every segment level or upright, none sloping
    assert all(a[0] == b[0] or a[1] == b[1] for a, b in zip(line.points, line.points[1:]))
    assert len(line.points) == 9 and not dots(clip, color(0))


def test_whole_number_ticks_are_as_many_as_the_axes_real_width_holds(monkeypatch):
    """Rounds get whole-number ticks chosen for the axes as laid out: a legend as wide as half
    the page leaves a narrow axes, which holds fewer ticks than a page-wide guess would give."""
    rounds = tuple(float(r) for r in range(1, 41))
    # legend lines are at most LEGEND_WRAP_MM wide: let this one run to over half the page, unbroken
    monkeypatch.setattr(vlegend, "LEGEND_WRAP_MM", 190.0)
    name = "capture_" * 12
    d = panels([Panel("IOPS", "IOPS", (Series(name, rounds, tuple(100.0 + r for r in rounds)),))], "round", 80)
    assert rules(d) == []
    [clip] = clips(d)
    [grid] = [s for s in clip.shapes if isinstance(s, Line) and s.stroke == GRID and s.points[0][0] == s.points[1][0]]
    xs = {round(x, 6) for x, _ in grid.points}  # the x grid: a tooth at each tick
    assert clip.w < 60 and len(xs) <= vticks.most_ticks(clip.w, TICK_PT, False)
    assert all(float(v).is_integer() for v, _ in d.record["axes"][0]["x"]["ticks"])


def test_an_unmeasured_panel_says_why_and_shows_no_y_ticks_or_legend():
    d = panels(
        [
            Panel("ART", "response time (µs)", (Series("TC1", (1.0, 2.0), (5.0, 6.0)),), logy=True),
            Panel(
                "99.999 %", "response time (µs)", (Series("TC1", (), ()),), logy=True, missing="99.999 %: too few IOs"
            ),
        ],
        "outstanding IO",
        120,
        logx2=True,
        shade=(1.0, 2.0),
        shade_label="window",
    )
    assert rules(d) == []
    empty = d.record["axes"][1]
    assert empty["y"]["ticks"] == [] and empty["legend"] == [] and empty["y"]["label"] == "response time (µs)"
    assert [t["text"] for t in texts(d, "text", 1)] == ["99.999 %: too few IOs"]


def test_demand_intensity_labels_points_in_their_colour_and_drops_one_that_would_overprint():
    # two curves through the same point: its second label would print over the first
    d = demand_intensity(
        [("TC1", [(1000.0, 100.0, 1), (2000.0, 150.0, 2), (3000.0, 400.0, 4)]), ("TC2", [(2000.0, 150.0, 8)])],
        "ART (µs)",
        "Demand Intensity",
    )
    assert rules(d) == []
    labels = {t["text"] for t in texts(d, "text")}
    assert labels == {"1", "2", "4"}  # "8" over "2" would read as "28"
    drawn = {s.text: s.color for s in d.shapes if isinstance(s, Label) and s.text in labels}
    assert drawn == {"1": color(0), "2": color(0), "4": color(0)}
    ax = d.record["axes"][0]
    assert ax["y"]["scale"] == "log" and ax["x"]["ticks"][0] == [0, "0"]  # IOPS from 0
    assert ax["legend"] == ["TC1", "TC2"]
    heading = [t["text"] for t in texts(d, "legend")]
    assert heading[0] == "point label:\noutstanding IO"


# IOPS/ART µs/outstanding IO per TC: the DIRTH quick run on the default simulated drive
# (sim:enterprise-sas), whose curves crowd into one steep knee near 46,000 IOPS
KNEE_TABLE = """
TC32 46282/691/32  46275/1383/64  46366/2757/128  46607/4111/192  46578/5479/256  46448/10960/512  46340/21844/1024
TC16 43265/370/16  45923/698/32  46342/1381/64  46492/2064/96  46600/2744/128  46352/5507/256  46363/10974/512
TC8  32093/249/8  43330/370/16  46206/693/32  46203/1038/48  46350/1381/64  46716/2737/128  46187/5530/256
TC6  27457/219/6  40057/300/12  47172/509/24  47646/755/36  47541/1008/48  46790/2050/96  46265/4144/192
TC4  21081/190/4  32538/246/8  44307/361/16  47164/509/24  47621/671/32  47566/1344/64  47461/2691/128
TC2  12843/156/2  21012/190/4  32281/248/8  39599/303/12  44348/361/16  47857/668/32  47699/1340/64
TC1  7486/134/1  12904/155/2  21031/190/4  27191/221/6  32251/248/8  43518/368/16  46862/683/32
"""
KNEE = {
    line.split()[0]: [tuple(int(v) for v in p.split("/")) for p in line.split()[1:]]
    for line in KNEE_TABLE.strip().splitlines()
}


def test_demand_intensity_labels_keep_off_the_curves_and_their_markers():
    """At a crowded knee no label is printed over a curve or a marker (measured on the shapes
    drawn, not on the record alone), each is nearer its own point than any other marker, and
    most points keep theirs."""
    points = [(tc, [(float(x), float(y), n) for x, y, n in pts]) for tc, pts in KNEE.items()]
    d = demand_intensity(points, "ART (µs)", "Demand Intensity: ART vs IOPS per TC", height_mm=120)
    assert rules(d) == []
    [clip] = clips(d)
    colours = {color(i) for i in range(len(KNEE))}
    lines = [s for s in clip.shapes if isinstance(s, Line) and s.stroke in colours]
    dots = [s for s in clip.shapes if isinstance(s, Circle)]
    assert len(lines) == len(KNEE) and len(dots) == sum(len(v) for v in KNEE.values())
    labels = texts(d, "text")
    assert len(labels) >= 0.6 * len(dots)
    for t in labels:
        box = tuple(v / vfigure.PX_PER_MM for v in t["box"])
        for ln in lines:
            assert path_to_box(ln.points, box) >= ln.width_pt * PT_MM / 2, (t["text"], ln.stroke)
        assert all(point_to_box((c.x, c.y), box) >= c.r for c in dots), t["text"]
        # the point it names: its curve's (the label's colour) with that outstanding IO
        x0, y0, x1, y1 = box[0] - 0.01, box[1] - 0.01, box[2] + 0.01, box[3] + 0.01  # the record rounds
        [drawn] = [
            s for s in d.shapes if isinstance(s, Label) and s.text == t["text"] and x0 <= s.x <= x1 and y0 <= s.y <= y1
        ]
        i = [color(k) for k in range(len(KNEE))].index(drawn.color)
        k = [n for _, _, n in points[i][1]].index(int(t["text"]))
        at = [c for c in dots if c.fill == drawn.color][k]
        others = [c for c in dots if (c.x, c.y) != (at.x, at.y)]
        assert all(point_to_box((c.x, c.y), box) > point_to_box((at.x, at.y), box) for c in others), t["text"]


def test_demand_intensity_with_no_point_says_so():
    d = demand_intensity([("TC1", [])], "ART (µs)", "Demand Intensity", missing="nothing measured")
    assert rules(d) == []
    assert [t["text"] for t in texts(d, "text")] == ["nothing measured"]
    assert d.record["axes"][0]["y"]["ticks"] == [] and d.record["axes"][0]["legend"] == []


def test_the_latency_bound_ramp_counts_its_bound_in_the_latency_axis():
    col = PERCENTILE_COLUMNS[99.0]
    rows = [
        SimpleNamespace(workload={"rate_iops": d}, iops=min(d, 3000.0), ios=int(min(d, 3000.0) * 60), **{col: lat})
        for d, lat in ((1000.0, 120.0), (2000.0, 180.0), (4000.0, 400.0))
    ]
    fig = _ramp_figure(rows, 99.0, 1000.0, "src")  # type: ignore[arg-type]
    d = fig.drawing
    assert isinstance(d, Drawing) and rules(d) == []
    top, bottom = d.record["axes"]
    assert top["legend"] == ["99 % latency", "bound 1,000 µs"] and top["series"]["bound 1,000 µs"]
    assert "1,000" in [t for _, t in top["y"]["ticks"]]  # the bound above every point is on the plot
    assert bottom["legend"] == ["demanded", "delivered"] and bottom["x"]["label"] == "demand (IOPS, all hosts/paths)"
    # the bound's dashed line at its tick
    [rule] = [s for s in clips(d)[0].shapes if isinstance(s, Line) and s.dash]
    assert rule.points[0][1] == pytest.approx(centre(d, "ytick", 0, "1,000"), abs=0.05)


def test_an_unmeasured_panels_note_fills_its_axes_width_not_seventy_characters():
    """The note's lines are as long as its axes (92 % of it) hold: a 70-character wrap broke a
    page-wide note after 'needs 10' with room for half a line more."""
    why = "99.999 %: not measured from 5,076–27,068 IOs (a percentile needs 10 IOs beyond it: 1,000,000 IOs)"
    d = panels([Panel("99.999 %", "response time (µs)", (Series("TC1", (), ()),), missing=why)], "round", 80)
    assert rules(d) == []
    [note] = texts(d, "text", 0)
    [clip] = clips(d)
    lines = note["text"].split("\n")
    assert " ".join(lines) == why and len(lines[0]) > 70
    assert (note["box"][2] - note["box"][0]) / vfigure.PX_PER_MM <= 0.92 * clip.w + 0.1
