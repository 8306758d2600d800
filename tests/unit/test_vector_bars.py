"""The bars, time series, idle timeline and difference plots iolab draws itself (vbars.py,
plots.py, difference_plots.py): each bar as tall as its value with the value standing on it and
inside the axes, each series in the panel and on the scale it belongs to, partial intervals
ringed, idle spans where they happened, differences from the group mean around a zero line, and
a record geometry.py's rules pass."""

from __future__ import annotations

import math

import pytest

from iolab.core.units import num
from iolab.pages.report import difference_plots, plots, vlegend, vticks
from iolab.pages.report.geometry import MIN_TICKS, plot_violations
from iolab.pages.report.plot_style import PALETTE, PARTIAL_LABEL, Series
from iolab.pages.report.vaxes import GRID, TICK_PT
from iolab.pages.report.vector import Circle, Clip, Drawing, Line, Rect
from iolab.pages.report.vtext import PX_PER_MM


def rules(d: Drawing) -> list[str]:
    return [str(v) for v in plot_violations(d.record, "plot")]


def clips(d: Drawing) -> list[Clip]:
    return [s for s in d.shapes if isinstance(s, Clip)]


def bars(d: Drawing, colour: str) -> list[Rect]:
    """The bars of one group, left to right (opaque rectangles in its colour inside the axes)."""
    return sorted(
        (s for c in clips(d) for s in c.shapes if isinstance(s, Rect) and s.fill == colour), key=lambda r: r.x
    )


def boxes(d: Drawing, texts: set[str], role: str = "text") -> dict[str, tuple[float, ...]]:
    """The boxes (mm) of these texts in this role (a tick label may read as a printed value)."""
    out = {}
    for t in d.record["texts"]:
        if t["text"] in texts and t["role"] == role:
            out[t["text"]] = tuple(v / PX_PER_MM for v in t["box"])
    return out


@pytest.mark.parametrize(
    ("groups", "log"),
    [
        ([("read", [28668.0, 28042.0, 30000.0]), ("write", [27000.0, None, 26000.0])], False),  # values side by side
        ([("a", [1.0, 1000.0, 5.0]), ("b", [5.0, 2000.0, None]), ("c", [2.0, 3.0, 4.0])], True),  # > 50x: log, upright
    ],
)
def test_each_bar_is_as_tall_as_its_value_which_stands_on_it_inside_the_axes(groups, log):
    d = plots.grouped_bars(["4 KiB", "8 KiB", "16 KiB"], groups, "throughput (MB/s)", "Throughput by block size")
    assert rules(d) == []
    [clip] = clips(d)
    y = d.record["axes"][0]["y"]
    assert y["scale"] == ("log" if log else "linear")
    bottom = clip.y + clip.h
    f = (lambda v: math.log10(v)) if log else (lambda v: v)
    tops = {}
    for k, (label, values) in enumerate(groups):
        drawn = bars(d, PALETTE[k])
        measured = [v for v in values if v is not None]
        assert len(drawn) == len(measured), label
        for r, v in zip(drawn, measured):
            tops[v] = r.y
            assert r.y + r.h == pytest.approx(bottom, abs=1.01)  # from the axes' bottom
        ticks = dict(y["ticks"])
        (v0, _), (v1, _) = min(ticks.items()), max(ticks.items())
        # the tick labels' centres give the scale: every bar's top at its value on it
        centres = {v: (b[1] + b[3]) / 2 for v, b in ((v, boxes(d, {ticks[v]}, "ytick")[ticks[v]]) for v in (v0, v1))}
        for r, v in zip(drawn, measured):
            share = (f(v) - f(v0)) / (f(v1) - f(v0))
            assert r.y == pytest.approx(centres[v0] + share * (centres[v1] - centres[v0]), abs=0.15), (label, v)
    printed = boxes(d, {t["text"] for t in d.record["texts"] if t["role"] == "text"})
    for v, top in tops.items():
        x0, y0, x1, y1 = printed[num(v)]
        assert y1 == pytest.approx(top, abs=0.05) and y0 >= clip.y, v  # standing on its bar, inside the axes
    assert "not\nmeasured" in printed and d.record["axes"][0]["legend"] == [g for g, _ in groups]


def test_values_that_would_run_into_each_other_stand_upright():
    def drawn(n: int) -> Drawing:
        groups = [("read", [28668.0] + [30000.0] * (n - 1)), ("write", [27000.0] * n)]
        d = plots.grouped_bars([f"{k} KiB" for k in range(n)], groups, "MB/s", "t", height_mm=80)
        assert rules(d) == []
        return d

    for n, upright in ((3, False), (10, True)):
        x0, y0, x1, y1 = boxes(drawn(n), {"28,668"})["28,668"]
        assert (y1 - y0 > x1 - x0) == upright, n  # taller than wide: upright


KEY_FIGURES = [
    "ART RND 4KiB R/W 100/0",
    "ART RND 4KiB R/W 65/35",
    "ART RND 4KiB R/W 0/100",
    "MRT RND 4KiB R/W 0/100",
    "99.999 % RND 4KiB R/W 100/0",
    "99.999 % RND 4KiB R/W 0/100",
]


@pytest.mark.parametrize(
    "groups",
    [
        # the comparison of two quick latency runs: neither measured the 99.999 % figures, and the
        # two 'not measured' printed level overprinted each other (grey labels were not measured)
        [("D1", [117.9, 104.3, 49.3, 70.89, None, None]), ("D2", [117.9, 122.7, 52.63, 423.1, None, None])],
        # eight narrow figures: one drive's 'not measured', wider than its bar's place, beside the
        # other drive's tall bar (the values alone fit level)
        [("D1", [None] + [5.0] * 7), ("D2", [9.0] * 8)],
    ],
)
def test_no_printed_value_or_not_measured_overlaps_another_or_a_bar(groups):
    names = KEY_FIGURES if len(groups[0][1]) == len(KEY_FIGURES) else [f"figure {k}" for k in range(8)]
    d = plots.grouped_bars(names, groups, "µs", "Key figures in µs (lower is better)", height_mm=95)
    assert rules(d) == []
    printed = [tuple(v / PX_PER_MM for v in t["box"]) for t in d.record["texts"] if t["role"] == "text"]
    assert len(printed) == 2 * len(names)
    drawn = [(r.x, r.y, r.x + r.w, r.y + r.h) for k in range(2) for r in bars(d, PALETTE[k])]

    def meet(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
        return min(a[2], b[2]) > max(a[0], b[0]) + 0.01 and min(a[3], b[3]) > max(a[1], b[1]) + 0.01

    assert not [(a, b) for k, a in enumerate(printed) for b in printed[k + 1 :] if meet(a, b)]
    assert not [(a, b) for a in printed for b in drawn if meet(a, b)]


def test_nothing_measured_says_so_without_y_ticks():
    d = plots.grouped_bars(["a", "b"], [("Acme", [None, None])], "IOPS", "IOPS by drive")
    assert rules(d) == [] and d.record["axes"][0]["y"]["ticks"] == []
    assert any(t["text"] == "not measured on any drive" for t in d.record["texts"])
    assert bars(d, PALETTE[0]) == []


def test_long_category_names_are_wrapped_inside_the_figure():
    names = [f"steady-part minimum ÷ maximum of drive {k} with a long name" for k in range(5)]
    d = plots.grouped_bars(names, [("x", [1.0, 2.0, 3.0, 4.0, 5.0])], "%", "Key figures in %")
    assert rules(d) == []
    ticks = [t for _, t in d.record["axes"][0]["x"]["ticks"]]
    assert len(ticks) == 5 and all("\n" in t for t in ticks)


# -- time series -------------------------------------------------------------------------------


def series_lines(clip: Clip, colour: str) -> list[Line]:
    return [s for s in clip.shapes if isinstance(s, Line) and s.stroke == colour]


def test_time_series_pair_draws_each_series_on_a_linear_then_a_log_log_panel_with_partial_rings():
    s = Series("R/W 0/100", (0.5, 1, 2, 4, 8, 16, 32), (9e4, 8e4, 4e4, 2.1e4, 2e4, 1.9e4, 2e4), (6,))
    d = plots.time_series_pair([s, Series("zero", (0, 1), (0, 0))], "time (minutes)", "IOPS", "IOPS vs time")
    assert rules(d) == []
    top, bottom = d.record["axes"]
    assert (top["x"]["scale"], top["y"]["scale"]) == ("linear", "linear")
    assert (bottom["x"]["scale"], bottom["y"]["scale"]) == ("log", "log")
    assert top["legend"] == ["R/W 0/100", " ".join(PARTIAL_LABEL.split()), "zero"]
    # nothing of "zero" on the log–log panel, so no legend entry there names it
    assert bottom["legend"] == ["R/W 0/100", " ".join(PARTIAL_LABEL.split())]
    c_top, c_bottom = clips(d)
    for clip in (c_top, c_bottom):
        [line] = series_lines(clip, PALETTE[0])
        assert len(line.points) == 7 and all(clip.y <= y <= clip.y + clip.h for _, y in line.points)
        [ring] = [c for c in clip.shapes if isinstance(c, Circle) and c.fill is None]
        assert (ring.x, ring.y) == pytest.approx(line.points[6]) and ring.stroke == "#d62728"
    # on the log panel 9e4 and 4e4 are as far apart as 4e4 and 1.78e4 (ratio 2.25); not on the linear one
    ys = [y for _, y in series_lines(c_bottom, PALETTE[0])[0].points]
    assert ys[2] - ys[0] == pytest.approx(math.log(9e4 / 4e4) / math.log(4e4 / 2.1e4) * (ys[3] - ys[2]), rel=1e-6)


def test_idle_spans_are_shaded_where_they_happened():
    read = Series("read", (0, 1, 2, 3), (1e5, 7e4, 4.1e4, 6e3))
    d = plots.timeline_with_gaps([read], [(1.2, 1.8), (2.5, 2.6)], "time (minutes)", "IOPS", "t", "host idle")
    assert rules(d) == [] and d.record["axes"][0]["legend"] == ["host idle", "read"]
    [clip] = clips(d)
    [line] = series_lines(clip, PALETTE[0])
    (x0, _), (x1, _) = line.points[1], line.points[2]  # minutes 1 and 2
    spans = sorted((r for r in clip.shapes if isinstance(r, Rect) and r.fill == "#999999"), key=lambda r: r.x)
    assert len(spans) == 2 and spans[0].h == pytest.approx(clip.h)
    assert spans[0].x == pytest.approx(x0 + 0.2 * (x1 - x0)) and spans[0].w == pytest.approx(0.6 * (x1 - x0))
    assert line.points[0][0] == pytest.approx(clip.x)  # the time axis starts at 0


def test_difference_from_mean_draws_each_drive_around_a_zero_line():
    series = [Series("Acme", (1, 2, 3), (100.0, 110.0, 120.0)), Series("Bolt", (1, 2), (300.0, 330.0))]
    d = difference_plots.difference_from_mean(series, "round", "IOPS", "IOPS per round")
    assert rules(d) == []
    top, bottom = d.record["axes"]
    assert top["legend"] == bottom["legend"] == ["Acme", "Bolt"]
    assert bottom["y"]["label"] == "difference from group mean (%)" and bottom["x"]["label"] == "round"
    _, c_bottom = clips(d)
    [zero] = [s for s in c_bottom.shapes if isinstance(s, Line) and s.stroke == "#000000"]
    acme, bolt = series_lines(c_bottom, PALETTE[0])[0], series_lines(c_bottom, PALETTE[1])[0]
    # at rounds 1 and 2 both drives measured: Acme 50 % under the mean, Bolt 50 % over it
    assert len(acme.points) == len(bolt.points) == 2
    for (_, a), (_, b) in zip(acme.points, bolt.points):
        assert (a + b) / 2 == pytest.approx(zero.points[0][1]) and a > zero.points[0][1] > b


@pytest.mark.parametrize("xlabel", ["round", "capture time of the trace's busiest hour (s)"])
def test_difference_plots_lower_title_is_wrapped_to_its_axes_width(xlabel):
    """The lower panel's title fills its axes' width, measured (a 60-character wrap broke it in
    two on a page-wide axes that holds it whole), and a long x label's stays inside it."""
    series = [Series("Acme", (1, 2, 3), (100.0, 110.0, 120.0)), Series("Bolt", (1, 2), (300.0, 330.0))]
    d = difference_plots.difference_from_mean(series, xlabel, "IOPS", "IOPS per round")
    assert rules(d) == []
    [title] = [t for t in d.record["texts"] if t["role"] == "title" and t["axes"] == 1]
    _, c_bottom = clips(d)
    x0, _, x1, _ = (v / PX_PER_MM for v in title["box"])
    assert x1 - x0 <= c_bottom.w + 0.1 and c_bottom.x - 0.1 <= x0
    assert ("\n" in title["text"]) == (xlabel != "round")


def test_difference_plot_ticks_whole_rounds_as_many_as_its_real_axes_holds(monkeypatch):
    """40 rounds beside a legend as wide as half the page: the bottom panel's whole-number ticks
    are as many as its laid-out width holds (a page-wide guess gave 10 on an axes that holds
    fewer); the top panel marks the same rounds, unlabelled."""
    rounds = tuple(float(r) for r in range(1, 41))
    monkeypatch.setattr(vlegend, "LEGEND_WRAP_MM", 190.0)  # a legend line left unbroken, over half the page
    name = "capture_" * 12
    series = [
        Series(name, rounds, tuple(100.0 + r for r in rounds)),
        Series("b", rounds, tuple(90.0 + r for r in rounds)),
    ]
    d = difference_plots.difference_from_mean(series, "round", "IOPS", "IOPS per round")
    assert rules(d) == []
    top, bottom = d.record["axes"]
    c_top, c_bottom = clips(d)
    labelled = [v for v, _ in bottom["x"]["ticks"]]
    assert c_bottom.w < 100 and MIN_TICKS <= len(labelled) <= vticks.most_ticks(c_bottom.w, TICK_PT, False)
    assert all(float(v).is_integer() for v in labelled) and top["x"]["ticks"] == []

    def teeth(clip: Clip) -> list[float]:  # the x grid (one path): a tooth at each tick, unlabelled or not
        [grid] = [
            s for s in clip.shapes if isinstance(s, Line) and s.stroke == GRID and s.points[0][0] == s.points[1][0]
        ]
        return sorted({round(x - clip.x, 6) for x, _ in grid.points})

    assert teeth(c_top) == teeth(c_bottom) and len(teeth(c_bottom)) >= len(labelled)
