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
from iolab.pages.report import vfigure
from iolab.pages.report.geometry import plot_violations
from iolab.pages.report.latbound import _ramp_figure
from iolab.pages.report.plot_style import PARTIAL_LABEL, Series, color
from iolab.pages.report.rwsw_plots import Panel, demand_intensity, panels
from iolab.pages.report.vector import Circle, Clip, Drawing, Label, Line


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


def test_demand_intensity_with_no_point_says_so():
    d = demand_intensity([("TC1", [])], "ART (µs)", "Demand Intensity", missing="nothing measured")
    assert rules(d) == []
    assert [t["text"] for t in texts(d, "text")] == ["nothing measured"]
    assert d.record["axes"][0]["y"]["ticks"] == [] and d.record["axes"][0]["legend"] == []


def test_the_latency_bound_ramp_counts_its_bound_in_the_latency_axis():
    col = PERCENTILE_COLUMNS[99.0]
    rows = [
        SimpleNamespace(workload={"rate_iops": d}, iops=min(d, 3000.0), **{col: lat})
        for d, lat in ((1000.0, 120.0), (2000.0, 180.0), (4000.0, 400.0))
    ]
    fig = _ramp_figure(rows, 99.0, 1000.0, "src")  # type: ignore[arg-type]
    d = fig.png
    assert isinstance(d, Drawing) and rules(d) == []
    top, bottom = d.record["axes"]
    assert top["legend"] == ["99 % latency", "bound 1,000 µs"] and top["series"]["bound 1,000 µs"]
    assert "1,000" in [t for _, t in top["y"]["ticks"]]  # the bound above every point is on the plot
    assert bottom["legend"] == ["demanded", "delivered"] and bottom["x"]["label"] == "demand (IOPS, all hosts/paths)"
    # the bound's dashed line at its tick
    [rule] = [s for s in clips(d)[0].shapes if isinstance(s, Line) and s.dash]
    assert rule.points[0][1] == pytest.approx(centre(d, "ytick", 0, "1,000"), abs=0.05)
