"""The heat map and the 3D column plot as vector shapes (vgrid.py, v3d.py): colours as
matplotlib's viridis gives them, each cell coloured by its own value, categories in order,
every label apart and inside the figure (the geometry rules, on the record the drawing carries),
nearer columns painted over farther ones."""

from __future__ import annotations

import math

import pytest

from iolab.core.units import num
from iolab.pages.report import plots, v3d, vgrid, vticks
from iolab.pages.report.geometry import plot_violations
from iolab.pages.report.plot_style import color
from iolab.pages.report.textwidth import width_mm
from iolab.pages.report.vector import Drawing, Label, Line, Rect
from iolab.pages.report.vtext import PX_PER_MM

BLOCKS = ["0.5 KiB", "4 KiB", "8 KiB", "16 KiB", "32 KiB", "64 KiB", "128 KiB", "1024 KiB"]
MIXES = ["0/100", "5/95", "35/65", "50/50", "65/35", "95/5", "100/0"]
Z = [[1e6 * (j + 1) / (i + 1) for i in range(len(BLOCKS))] for j in range(len(MIXES))]


def _hex_close(a: str, b: str, tol: int = 3) -> bool:
    return all(abs(int(a[i : i + 2], 16) - int(b[i : i + 2], 16)) <= tol for i in (1, 3, 5))


# matplotlib 3.11's colormaps["viridis"] and ["viridis_r"] at these points, as #rrggbb (its 256
# colours are fixed data): the oracle the heat map's 33-point table is held to
VIRIDIS_AT = {
    0.0: ("#440154", "#fde725"),
    0.03: ("#460b5e", "#ece51b"),
    0.2: ("#414487", "#7ad151"),
    0.37: ("#2d718e", "#29af7f"),
    0.5: ("#21918c", "#21908d"),
    0.61: ("#25ab82", "#2b758e"),
    0.8: ("#7ad151", "#414487"),
    0.95: ("#dfe318", "#471365"),
    1.0: ("#fde725", "#440154"),
}


@pytest.mark.parametrize("t", sorted(VIRIDIS_AT))
def test_viridis_table_is_matplotlibs_viridis(t):
    for want, rev in zip(VIRIDIS_AT[t], (False, True)):
        assert _hex_close(vgrid.viridis(t, rev), want), (t, rev, vgrid.viridis(t, rev), want)


def _cells(d: Drawing) -> dict[tuple[int, int], tuple[str, Label]]:
    """Each heat map cell (column, row) by the order of its position: its fill and the label
    printed in it."""
    rects = [s for s in d.shapes if isinstance(s, Rect) and s.fill is not None and s.stroke == s.fill]
    labels = [s for s in d.shapes if isinstance(s, Label)]
    xs, ys = sorted({round(r.x, 3) for r in rects}), sorted({round(r.y, 3) for r in rects})
    out = {}
    for r in rects:
        [lab] = [t for t in labels if r.x < t.x < r.x + r.w and r.y < t.y < r.y + r.h]
        out[xs.index(round(r.x, 3)), ys.index(round(r.y, 3))] = (r.fill or "", lab)
    return out


@pytest.mark.parametrize("lower_is_better", [False, True])
@pytest.mark.parametrize("log", [True, False])
def test_each_cell_has_its_own_values_colour_on_matplotlibs_scale(log, lower_is_better):
    """Each cell's colour is the colour map (held to matplotlib's above) at its value's place
    between the smallest and the largest, on a log or linear scale as matplotlib's LogNorm and
    Normalize place it: a transposed grid, a scale not reversed for 'lower is better' or a
    linear scale for a log one each fail here."""

    xs, ys = ["4 KiB", "64 KiB", "1 MiB", "2 MiB"], ["0/100", "65/35", "100/0"]
    z = [[9e4, 2e4, 900.0, 30.0], [5e4, None, 500.0, 40.0], [7e3, 3e3, 120.0, 60.0]]
    d = plots.heatmap(xs, ys, z, "IOPS", "IOPS", log=log, lower_is_better=lower_is_better)
    finite = [v for row in z for v in row if v is not None]
    lo, hi = min(finite), max(finite)

    def norm(v: float) -> float:
        return math.log(v / lo) / math.log(hi / lo) if log else (v - lo) / (hi - lo)

    cells = _cells(d)
    assert len(cells) == 12
    for yi, row in enumerate(z):
        for xi, v in enumerate(row):
            fill, lab = cells[xi, yi]
            assert lab.text == num(v)
            if v is None:
                assert fill == "#ffffff"
                continue
            want = vgrid.viridis(norm(v), lower_is_better)
            assert _hex_close(fill, want), (xi, yi, v, fill, want)
            # the value printed on it reads: WCAG's 4.5:1 at least
            assert vgrid.contrast(fill, lab.color) >= 4.5, (v, fill, lab.color)


def _ticks(d: Drawing, role: str) -> list[dict]:
    return [t for t in d.record["texts"] if t["role"] == role]


def test_heat_map_categories_in_order_row_zero_at_the_top():
    d = plots.heatmap(BLOCKS, MIXES, Z, "IOPS", "IOPS — values")
    xt = sorted(_ticks(d, "xtick"), key=lambda t: t["box"][0])
    assert [t["text"] for t in xt] == BLOCKS
    yt = sorted(_ticks(d, "ytick"), key=lambda t: t["box"][1])  # the record's y is down: top first
    assert [t["text"] for t in yt if t["axes"] == 0] == MIXES
    [ax, cb] = d.record["axes"]
    assert [t for _, t in ax["x"]["ticks"]] == BLOCKS and [t for _, t in ax["y"]["ticks"]] == MIXES
    assert cb["colorbar"] and cb["y"]["scale"] == "log" and cb["y"]["label"] == "IOPS (log colour scale)"


@pytest.mark.parametrize("lower_is_better", [False, True])
def test_colour_bar_ticks_sit_at_their_values_colour(lower_is_better):
    """A tick's label is beside the band of the colour its value gets in a cell."""
    z = [[100.0, 200.0, 400.0], [800.0, 1600.0, 3200.0]]
    d = plots.heatmap(["a", "b", "c"], ["r", "w"], z, "MB/s", "MB/s", lower_is_better=lower_is_better)
    bands = [s for s in d.shapes if isinstance(s, Rect) and s.fill is not None and s.stroke is None]
    scale = vgrid.colour_scale(z, True, lower_is_better)
    assert scale is not None
    ticks = _ticks(d, "ytick")
    ticks = [t for t in ticks if t["axes"] == 1]
    assert len(ticks) >= 3
    k = PX_PER_MM
    for t in ticks:
        y_mm = (t["box"][1] + t["box"][3]) / 2 / k  # the label's middle
        band = next(b for b in bands if b.y <= y_mm <= b.y + b.h)
        v = float(t["text"].replace(",", ""))
        assert _hex_close(band.fill or "", scale.colour(v), tol=12), (t["text"], band.fill, scale.colour(v))
    # the better end is the dark one at the top when lower is better, the bright one otherwise
    top = min(bands, key=lambda b: b.y)
    assert (vgrid.luminance(top.fill or "") < 0.1) == lower_is_better


@pytest.mark.parametrize(
    ("xs", "ys", "height"),
    [
        (BLOCKS, MIXES, 95),
        ([f"QD{q}" for q in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)], ["TC1", "TC2"], 60),
        (["sequential read 128 KiB", "random write 4 KiB", "mixed 70/30 8 KiB"] * 3, ["drive A, firmware 1.2"], 80),
        ([str(i) for i in range(30)], [f"mix {i}" for i in range(24)], 110),
    ],
)
def test_heat_map_labels_apart_and_inside_the_figure(xs, ys, height):
    z = [[(i + 1) * 1234.5 * (j + 1) for i in range(len(xs))] for j in range(len(ys))]
    d = plots.heatmap(xs, ys, z, "IOPS", "a long title naming what the values are — IOPS", height_mm=height)
    assert plot_violations(d.record, "heat map") == []
    assert d.width_mm == 190 and d.height_mm == height


def test_long_axis_names_and_title_shrink_to_stay_inside_a_short_heat_map():
    """At 8 pt the upright names would run over the title and off the figure's bottom."""
    z = [[0.08 * q * (1 + s) for q in (1, 2, 4, 8)] for s in range(3)]
    long = "mean response time of the writes (ms)"
    title = f"{long} at each queue depth, one row per write share — " * 2
    d = plots.heatmap(["1", "2", "4", "8"], ["0% W", "50% W", "100% W"], z, long, title, height_mm=70, ylabel=long)
    assert plot_violations(d.record, "short heat map") == []
    printed = {t["text"]: t for t in d.record["texts"]}
    assert set(printed) >= {long, title, long + " (log colour scale)"}
    x0, _, x1, _ = printed[title]["box"]
    assert x1 - x0 < width_mm(title, 9) * PX_PER_MM  # shrunk


def test_record_is_in_the_pixels_of_a_png_plot_of_the_same_size():
    d = plots.heatmap(["a", "b", "c"], ["r", "w"], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "MB/s", "Title text")
    k = 140 / 25.4  # plot_style.DPI
    assert d.record["size"] == [round(190 * k), round(d.height_mm * k)]
    [title] = _ticks(d, "title")
    x0, _, x1, _ = title["box"]
    assert x1 - x0 == pytest.approx(width_mm("Title text", 9) * k, abs=0.02)  # a hundredth of a pixel, as vfigure's


def test_an_overlap_in_the_drawing_is_one_in_the_record():
    """The record's boxes are the labels' own: two labels printed over each other are caught."""
    ink = vgrid.Ink(50, 20)
    ink.text(Label(10, 10, "1,000,000", 7), "ytick")
    ink.text(Label(14, 10.5, "2,000,000", 7), "ytick")
    ink.text(Label(48, 10, "off the edge", 7), "text")
    ink.text(Label(2, 18, "ends at its x", 7, anchor="end"), "text")
    rules = sorted(v.rule for v in plot_violations(ink.drawing("", []).record, "made"))
    assert rules == ["edge", "edge", "overlap"]


@pytest.mark.parametrize(
    ("lo", "hi", "log", "label", "want"),
    [
        # a log range under a decade: a linear bar's round steps, as many as its length holds (the
        # log rules' 1-1.5-2-3-5-7 steps labelled three: 22,000 / 24,000 / 26,000 and 50 / 70 / 100)
        (21_000.0, 27_000.0, True, "IOPS", [f"{v},000" for v in range(21, 28)]),
        (49.3, 148.4, True, "MB/s", [str(v) for v in range(50, 150, 10)]),
        # over decades: 1-2-5, as a log axis of a line plot labels them
        (150.0, 94_000.0, True, "IOPS", ["200", "500", "1,000", "2,000", "5,000", "10,000", "20,000", "50,000"]),
        (1e3, 1e7, True, "IOPS", ["1,000", "10,000", "100,000", "1,000,000", "10,000,000"]),
        (3.2, 47.9, False, "CPU %", ["5", "10", "15", "20", "25", "30", "35", "40", "45"]),
        (2.2, 8.9, False, "IOPS", ["3", "4", "5", "6", "7", "8"]),  # whole numbers on a per-second bar
    ],
)
def test_colour_bar_ticks_are_round_values_inside_the_bar(lo, hi, log, label, want):
    """The colour bar is labelled as an axis is (vticks' rules): at least three round values,
    none outside the bar."""
    z = [[lo, (lo + hi) / 2], [math.sqrt(lo * hi), hi]]
    d = plots.heatmap(["a", "b"], ["r", "w"], z, label, "t", log=log)
    cb = d.record["axes"][1]
    assert cb["colorbar"] and [t for _, t in cb["y"]["ticks"]] == want
    assert all(lo <= v <= hi for v, _ in cb["y"]["ticks"])
    assert plot_violations(d.record, "heat map") == []


def test_a_short_colour_bar_leaves_out_a_label_that_would_touch_the_one_below():
    d = plots.heatmap(["a", "b"], ["r"], [[150.0, 94_000.0]], "IOPS", "t", height_mm=30)
    cb = d.record["axes"][1]
    assert 3 <= len(cb["y"]["ticks"]) < 8  # of 200 … 50,000 (1-2-5): some left blank, not printed over
    assert plot_violations(d.record, "short heat map") == []


def test_a_per_second_colour_bar_with_no_whole_number_in_its_range_is_still_drawn():
    d = plots.heatmap(["a", "b"], ["r"], [[2.1, 2.6]], "IOPS", "t")
    assert all(2.1 <= v <= 2.6 for v, _ in d.record["axes"][1]["y"]["ticks"])


def test_covering_ticks_reach_past_both_ends_in_round_steps():
    """The 3D plot's value axis: from a round value at or below the lowest to one at or above
    the highest, the widest step giving at least four."""
    assert vticks.covering(0, 148.4, 4) == [0, 50, 100, 150]
    assert vticks.covering(-3, 17, 4) == [-10, 0, 10, 20]
    assert vticks.covering(0, 7, 4) == [0, 2.5, 5, 7.5]
    assert vticks.covering(0, 7, 4, whole=True) == [0, 2, 4, 6, 8]  # no 2.5 IOPS


# -- the 3D columns -------------------------------------------------------------------------


@pytest.mark.parametrize("zlabel", ["IOPS", "MRT (ms)"])
@pytest.mark.parametrize("shape", [(8, 7), (3, 3), (1, 1), (12, 2)])
def test_3d_labels_apart_and_inside_the_figure(zlabel, shape):
    nx, ny = shape
    xs = (BLOCKS * 2)[:nx]
    ys = (MIXES * 2)[:ny]
    z = [[1e6 * (j + 1) / (i + 1) for i in range(nx)] for j in range(ny)]
    d = plots.columns_3d(xs, ys, z, zlabel, "IOPS — 3D columns (block size × R/W mix)", height_mm=160)
    assert plot_violations(d.record, "3d") == []
    [ax] = d.record["axes"]
    assert ax["axes3d"] and ax["z"]["label"] == zlabel
    ticks = [v for v, _ in ax["z"]["ticks"]]
    assert len(ticks) >= 4 and ticks[0] == 0 and ticks[-1] >= max(max(r) for r in z)


def test_3d_categories_in_order():
    d = plots.columns_3d(BLOCKS, MIXES, Z, "IOPS", "IOPS")
    # block sizes left to right along the front edge; mixes from the front (low on the page) back
    assert [t["text"] for t in sorted(_ticks(d, "xtick"), key=lambda t: t["box"][0])] == BLOCKS
    assert [t["text"] for t in sorted(_ticks(d, "ytick"), key=lambda t: -t["box"][1])] == MIXES
    zt = sorted(_ticks(d, "ztick"), key=lambda t: -t["box"][1])  # bottom first
    assert [float(t["text"].replace(",", "")) for t in zt] == sorted(float(t["text"].replace(",", "")) for t in zt)


def _columns(d: Drawing) -> list[list[Line]]:
    """The columns in painting order: three faces each, the column's colour on them."""
    faces = [s for s in d.shapes if isinstance(s, Line) and s.closed and s.stroke == v3d.EDGE]
    return [faces[i : i + 3] for i in range(0, len(faces), 3)]


def _middle(col: list[Line]) -> tuple[float, float]:
    pts = [p for f in col for p in f.points]
    return sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts)


def test_3d_nearer_column_painted_over_a_taller_farther_one():
    """Same mix: the right-hand block size is nearer; same block size: the first mix is nearer.
    The farther column is the tall one, so ordering by the columns' middles would fail."""
    row = [10.0] * 8
    row[3] = 1000.0
    d = plots.columns_3d(BLOCKS, ["0/100"], [row], "IOPS", "t")
    lefts = [_middle(c)[0] for c in _columns(d)]
    assert lefts == sorted(lefts)  # the tall 16 KiB before the short 32 KiB on its right
    column = [[10.0] for _ in MIXES]
    column[4] = [1000.0]
    d = plots.columns_3d(["4 KiB"], MIXES, column, "IOPS", "t")
    fronts = [c[1].fill for c in _columns(d)]
    assert fronts == [vgrid.shaded(color(j), v3d.FRONT) for j in reversed(range(len(MIXES)))]


def test_3d_column_heights_follow_their_values():
    """Each column's height on the page is its value on the z axis' scale."""
    z = [[100.0, 50.0, None], [25.0, 75.0, 10.0]]
    d = plots.columns_3d(["a", "b", "c"], ["r", "w"], z, "IOPS", "t")
    cols = _columns(d)
    assert len(cols) == 5  # no column for the missing cell
    # the front face's vertical edge: the column's height on the page
    front_h = sorted((abs(c[1].points[0][1] - c[1].points[3][1]), c[1].fill or "") for c in cols)
    heights: dict[str, list[float]] = {fill: [] for _, fill in front_h}
    for h, fill in front_h:
        heights[fill].append(h)
    blue, orange = vgrid.shaded(color(0), v3d.FRONT), vgrid.shaded(color(1), v3d.FRONT)
    assert [round(h / heights[blue][-1], 3) for h in heights[blue]] == [0.5, 1.0]
    assert [round(h / heights[blue][-1], 3) for h in heights[orange]] == [0.1, 0.25, 0.75]


def test_3d_nothing_measured_says_so():
    d = plots.columns_3d(["a"], ["r"], [[None]], "IOPS", "t")
    assert any(t["text"] == "no value was measured" for t in d.record["texts"])
    assert plot_violations(d.record, "3d") == []


def test_the_plots_module_hands_back_the_vector_drawings():
    args = (["a", "b"], ["r", "w"], [[1.0, 2.0], [3.0, math.nan]], "IOPS", "t")
    assert plots.heatmap(*args) == vgrid.heatmap(*args)
    assert plots.columns_3d(*args) == v3d.columns_3d(*args)


@pytest.mark.parametrize("draw", [plots.heatmap, plots.columns_3d])
def test_the_record_is_y_down_as_every_plots_record(draw):
    """The heat map's and the 3D plot's records measure y down from the top, as vfigure's do
    (matplotlib's y-up boxes are gone): the title's box at the top, above every other text."""
    d = draw(BLOCKS, MIXES, Z, "IOPS", "IOPS — values")
    [title] = _ticks(d, "title")
    assert 0 <= title["box"][1] < 10
    assert all(title["box"][3] <= t["box"][1] + 0.5 for t in d.record["texts"] if t is not title)


def test_a_log_colour_bar_under_a_decade_is_labelled_as_a_linear_one_would_be():
    """49 to 148 µs on a log colour scale: the log steps (1, 1.5, 2, 3, 5, 7) label only 50, 70
    and 100; under a decade the bar reads nearly linear, so it gets a linear bar's round values."""
    z = [[111.3, 117.9, 134.2], [122.9, 104.3, 132.1], [148.4, 49.3, 59.15]]
    d = plots.heatmap(BLOCKS, MIXES, z, "ART (µs)", "ART — values", height_mm=95)
    assert plot_violations(d.record, "heat") == []
    [_, cb] = d.record["axes"]
    values = [v for v, _ in cb["y"]["ticks"]]
    assert cb["y"]["scale"] == "log" and len(values) >= 6
    assert values == sorted(values) and all(float(v / 10).is_integer() for v in values)  # 50, 60, … 140
