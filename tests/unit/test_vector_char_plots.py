"""The characterise, comparison and fleet plots iolab draws as vector shapes (char_plots.py,
compare_pages/characterise.py, fleet.py, vscatter.py): each keeps its series, scales, legend and
marks, puts each point where its value says on the axes it belongs to, and leaves a record the
geometry rules pass; a planted fault (a point at the wrong height, a series on the wrong panel, a
text moved off its drawing) is found."""

from __future__ import annotations

import json
import math
import random

from iolab.pages.compare_pages.characterise import _per_drive_scatter, common_scale
from iolab.pages.report import vaxes, vfigure, vscatter
from iolab.pages.report.char_plots import _rate_by_written, _scatter, per_round_plot
from iolab.pages.report.fleet import DRIVE, OUTLIER, strips
from iolab.pages.report.geometry import plot_violations
from iolab.pages.report.plot_style import Series, color
from iolab.pages.report.vector import PT_MM, Circle, Clip, Drawing, Label, Line

PX = vfigure.PX_PER_MM


def rules(d: Drawing) -> list[str]:
    return [str(v) for v in plot_violations(d.record, "plot")]


def clips(d: Drawing) -> list[Clip]:
    return [s for s in d.shapes if isinstance(s, Clip)]


def dots(clip: Clip, paint: str) -> list[Circle]:
    return [s for s in clip.shapes if isinstance(s, Circle) and paint in (s.fill, s.stroke)]


def heights(clip: Clip, shapes: list[Circle]) -> list[float]:
    """Each dot's height above the axes' bottom as a share of the axes' height."""
    return [(clip.y + clip.h - s.y) / clip.h for s in shapes]


def texts_where_drawn(d: Drawing) -> None:
    """Every text of the record is where a label of the drawing is (the record moves with the shapes)."""
    labels = [s for s in d.shapes if isinstance(s, Label)]
    for t in d.record["texts"]:
        x0, y0, x1, y1 = t["box"]
        first = t["text"].split("\n")[0]
        assert any(s.text == first and x0 - 0.01 <= s.x * PX <= x1 + 0.01 and y0 <= s.y * PX <= y1 for s in labels), t


# -- the QoS test's rounds -----------------------------------------------------------------------


def test_per_round_plot_draws_iops_on_top_and_latency_below_on_one_round_axis():
    xs = tuple(float(r) for r in range(1, 11))
    iops = tuple(20_000.0 - 30 * r for r in range(10))
    avg = tuple((x, 48.0 + 0.1 * i) for i, x in enumerate(xs))
    mx = tuple((x, 60.0 + (80.0 if i < 2 else 10.0)) for i, x in enumerate(xs))
    d = per_round_plot("write rounds", xs, iops, (("average", avg), ("maximum", mx)))
    assert rules(d) == []
    top, bottom = d.record["axes"]
    assert top["title"] == "write rounds: IOPS, average and maximum latency per round"
    assert (top["y"]["scale"], bottom["y"]["scale"]) == ("linear", "log")
    assert bottom["legend"] == ["average", "maximum"] and bottom["y"]["label"] == "latency (µs, log scale)"
    rounds = [t for _, t in bottom["x"]["ticks"]]
    assert rounds == [t for _, t in top["x"]["ticks"]] and all(t.isdigit() for t in rounds)  # whole rounds only
    upper, lower = clips(d)
    # each series in its own panel, at its value's height (the IOPS axis from 0)
    assert len(dots(upper, color(0))) == 10 and not dots(upper, color(1)) and not dots(lower, color(0))
    assert len(dots(lower, color(1))) == 10 and len(dots(lower, color(2))) == 10
    h = heights(upper, dots(upper, color(0)))
    assert all(math.isclose(a / h[0], v / iops[0], rel_tol=1e-9) for a, v in zip(h, iops))
    # the round axes line up: round k at one x in both panels
    assert [s.x for s in dots(upper, color(0))] == [s.x for s in dots(lower, color(1))]


def test_two_rounds_are_each_labelled_and_never_halved():
    d = per_round_plot("r", (1.0, 2.0), (10.0, 12.0), (("average", ((1.0, 50.0), (2.0, 55.0))),))
    assert [t for _, t in d.record["axes"][1]["x"]["ticks"]] == ["1", "2"] and rules(d) == []


# -- one point per second --------------------------------------------------------------------------


def test_a_linear_scatter_runs_from_0_with_each_point_at_its_value():
    t = [float(i) for i in range(1, 61)]
    y = [40_000.0 + (5_000.0 if i < 3 else 0.0) - 10 * i for i in range(60)]
    d = _scatter(t, y, "IOPS every second", "IOPS", False, 85)
    assert rules(d) == [] and d.record["axes"][0]["legend"] == []
    ticks = d.record["axes"][0]["y"]["ticks"]
    assert ticks[0] == [0, "0"] and all(v.is_integer() for v, _ in ticks)
    [clip] = clips(d)
    shown = dots(clip, color(0))
    assert len(shown) == 60
    top = 1.05 * max(y)  # points clear of the frame
    assert all(math.isclose(h, v / top, rel_tol=1e-9) for h, v in zip(heights(clip, shown), y))


def test_a_log_scatter_spans_whole_decades_and_names_its_two_series():
    t = [float(i) for i in range(1, 31)]
    avg = [800.0 + i for i in range(30)]
    mx = [None if i == 4 else 2_000.0 + 10 * i for i in range(30)]
    d = _scatter(t, avg, "latency", "latency (µs)", True, 80, label="average", more=(("maximum", mx),))
    assert rules(d) == []
    ax = d.record["axes"][0]
    assert ax["y"]["label"] == "latency (µs) (log scale)" and ax["y"]["scale"] == "log"
    assert ax["legend"] == ["average", "maximum"] and ax["series"] == {"average": True, "maximum": True}
    values = [v for v, _ in ax["y"]["ticks"]]
    assert min(values) == 100 and max(values) == 10_000  # 800 … 2,290 within whole decades
    [clip] = clips(d)
    assert len(dots(clip, color(0))) == 30 and len(dots(clip, color(1))) == 29  # the missing second left out
    # the dots as matplotlib's scatter(s=3) draws them: a face of 3 pt² edged by 1.5 pt; the
    # legend's samples with three times the face's width (markerscale=3)
    [sample] = [s for s in d.shapes if isinstance(s, Circle) and s.fill == color(1)]
    assert math.isclose(dots(clip, color(1))[0].r, (math.sqrt(3) + 1.5) / 2 * PT_MM)
    assert math.isclose(sample.r, (3 * math.sqrt(3) + 1.5) / 2 * PT_MM)


def test_thinning_keeps_a_dot_in_every_spot_a_point_covers():
    rng = random.Random(5)
    xs = [float(i) for i in range(86_400)]
    ys = [40_000 + rng.gauss(0, 300) for _ in xs]
    ys[50_000] = 3_000.0  # one deep dip, alone in its spot
    kept = vscatter.thinned(xs, ys, False)
    assert len(kept) < 0.7 * len(xs) and (50_000.0, 3_000.0) in kept
    lo = min(ys)
    dx, dy = (xs[-1] - xs[0]) / vscatter.CELLS_X, (max(ys) - lo) / vscatter.CELLS_Y
    cells = {(int((x - xs[0]) / dx), int((y - lo) / dy)) for x, y in kept}
    assert cells == {(int((x - xs[0]) / dx), int((y - lo) / dy)) for x, y in zip(xs, ys)}


# -- the SLC fill ------------------------------------------------------------------------------------


def test_the_fill_draws_each_seconds_rate_over_the_gb_it_wrote_with_its_rules():
    mbps = [1_000.0] * 10 + [300.0] * 10
    gb = [sum(mbps[: i + 1]) / 1e3 for i in range(20)]
    d = _rate_by_written(gb, mbps, 10.0, (1_000.0, 300.0))
    assert rules(d) == []
    ax = d.record["axes"][0]
    assert ax["legend"] == ["MB/s", "in the cache: 1,000 MB/s", "after it: 300 MB/s", "cache: 10.00 GB"]
    [clip] = clips(d)
    [stairs] = [s for s in clip.shapes if isinstance(s, Line) and s.stroke == color(0)]
    rules_drawn = {s.stroke: s for s in clip.shapes if isinstance(s, Line) and s.dash}
    levels = sorted({round(y, 6) for _, y in stairs.points})
    # the in-cache and post-cache rules at the stairs' two levels, the cache size at their step down
    assert round(rules_drawn[color(1)].points[0][1], 6) in levels
    assert round(rules_drawn[color(2)].points[0][1], 6) in levels
    step_x = next(a[0] for a, b in zip(stairs.points, stairs.points[1:]) if a[0] == b[0] and b[1] > a[1] + 1)
    assert math.isclose(rules_drawn[color(3)].points[0][0], step_x, abs_tol=1e-9)
    assert math.isclose(stairs.points[0][0], clip.x) and math.isclose(stairs.points[-1][0], clip.x + clip.w)


# -- the comparison's panels and the fleet's strips ----------------------------------------------


def test_per_drive_panels_share_one_scale_under_one_title():
    a = Series("D1 a", tuple(float(i) for i in range(1, 41)), tuple(37_000.0 + 50 * (i % 7) for i in range(40)))
    b = Series("D2 b", a.x, tuple(45_000.0 - 100 * i for i in range(40)))
    d = _per_drive_scatter([a, b], 110)
    assert rules(d) == [] and math.isclose(d.height_mm, 110)
    texts_where_drawn(d)
    title = next(t for t in d.record["texts"] if t["axes"] == -1)
    assert title["role"] == "title" and title["text"].startswith("IOPS every second, one panel per drive")
    assert all(title["box"][3] < t["box"][1] for t in d.record["texts"] if t is not title)  # above every other
    first, second = d.record["axes"]
    assert (first["title"], second["title"]) == ("D1 a", "D2 b") and first["y"]["ticks"] == second["y"]["ticks"]
    top = common_scale([a, b])
    for clip, s, k in zip(clips(d), (a, b), (0, 1)):
        assert all(math.isclose(h, v / top, rel_tol=1e-9) for h, v in zip(heights(clip, dots(clip, color(k))), s.y))


def test_a_moved_text_is_found_by_the_check_of_where_texts_are_drawn():
    a = Series("D1", (1.0, 2.0, 3.0), (10.0, 20.0, 30.0))
    d = _per_drive_scatter([a], 70)
    rec = json.loads(json.dumps(d.record))
    title = next(t for t in rec["texts"] if t["axes"] == -1)
    title["box"] = [v + (30 if k % 2 else 0) for k, v in enumerate(title["box"])]  # as if not moved with the rest
    try:
        texts_where_drawn(Drawing(d.width_mm, d.height_mm, d.shapes, d.alt, rec))
    except AssertionError:
        return
    raise AssertionError("a title 30 px off its label passed")


def figure(name: str, values: dict[str, float], outliers: tuple[str, ...] = ()) -> dict:
    return {
        "name": name,
        "unit": "IOPS",
        "median": 100.0,
        "values": values,
        "outliers": [{"drive": o} for o in outliers],
        "judged": True,
        "fence_low": 95.0,
        "fence_high": 105.0,
    }


def test_the_fleet_strips_put_each_drive_on_its_figures_line_and_name_the_outliers():
    figs = [
        figure("random read", {"sim1": 100.0, "sim2": 101.0, "slow": 76.0}, ("slow",)),
        figure("random write", {"sim1": 99.0, "sim2": 100.0, "slow": 99.5}),
    ]
    d = strips(figs)
    assert rules(d) == []
    ax = d.record["axes"][0]
    assert [t for _, t in ax["y"]["ticks"]] == ["random read (IOPS)", "random write (IOPS)"]
    assert ax["x"]["label"] == "% of the fleet median"
    [clip] = clips(d)
    red = dots(clip, vaxes.on_white(OUTLIER, 0.75))
    grey = dots(clip, vaxes.on_white(DRIVE, 0.75))
    assert len(red) == 1 and len(grey) == 5
    # the outlier on the first figure's strip, level with its name, and named beside it
    name_y = {t["text"]: (t["box"][1] + t["box"][3]) / 2 / PX for t in d.record["texts"] if t["role"] == "ytick"}
    assert math.isclose(red[0].y, name_y["random read (IOPS)"], abs_tol=0.3)
    assert sum(math.isclose(g.y, name_y["random write (IOPS)"], abs_tol=0.3) for g in grey) == 3
    [label] = [t for t in d.record["texts"] if t["role"] == "text"]
    assert label["text"] == "slow" and label["box"][3] / PX < red[0].y
    fences = [s for s in clip.shapes if isinstance(s, Line) and s.dash]
    assert len(fences) == 4
