"""The plots iolab draws itself as vector shapes (vticks.py, vaxes.py, vfigure.py): ticks on log
and linear axes, texts kept inside the figure and apart, data kept inside its axes, the record
the geometry rules read (found again in a report's HTML), and a report of vector plots alone
that never imports matplotlib or starts the plot workers."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys

import pytest

from iolab.core.results import Histogram
from iolab.core.steady import SteadyRule, VariableVerdict
from iolab.core.units import num
from iolab.pages.report import latency_plots, plots, textwidth, vaxes, vfigure, vtext, vticks
from iolab.pages.report.geometry import MIN_TICKS, plot_violations
from iolab.pages.report.html import render
from iolab.pages.report.layoutcheck import figures
from iolab.pages.report.model import Document, Figure, Page
from iolab.pages.report.plot_style import LEGEND_WRAP_MM, Series
from iolab.pages.report.vaxes import Axes, Note, Path, Rule
from iolab.pages.report.vector import Clip, Drawing, Label, Line, svg
from iolab.pages.report.vticks import autoscale


def rules(d: Drawing) -> list[str]:
    return [str(v) for v in plot_violations(d.record, "plot")]


def histogram(lo_us: float = 40.0, bins: int = 120, step: float = 1.04) -> Histogram:
    values = [lo_us * step**i for i in range(bins)]
    counts = [
        int(5e3 * math.exp(-(((i - bins / 3) / (bins / 10)) ** 2))) + (2 if i > bins / 2 else 0) for i in range(bins)
    ]
    return Histogram(tuple(values), tuple(counts), values[-1])


def axis(d: Drawing, k: int, name: str) -> dict:
    return d.record["axes"][k][name]


def label_centres(d: Drawing, role: str, k: int = 0) -> dict[str, float]:
    """Each tick label's centre along its axis, in mm."""
    px = vfigure.PX_PER_MM
    out = {}
    for t in d.record["texts"]:
        if t["role"] == role and t["axes"] == k:
            x0, y0, x1, y1 = t["box"]
            out[t["text"]] = ((x0 + x1) if role == "xtick" else (y0 + y1)) / 2 / px
    return out


# -- ticks -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lo", "hi", "expect"),
    [
        (40, 2000, [50, 100, 200, 500, 1000, 2000]),  # under ~2.5 decades: 1-2-5
        (0.8, 5000, [1, 10, 100, 1000]),  # over: powers of ten
        (48, 74, [50, 55, 60, 65, 70]),  # between two steps: round numbers, not 50 and 70 alone
        (1e-6, 1e6, [1e-6, 1e-4, 0.01, 1, 100, 1e4, 1e6]),  # twelve decades: every second one
    ],
)
def test_log_axis_ticks(lo, hi, expect):
    ticks = vticks.log(lo, hi, 8)
    assert [t.value for t in ticks] == pytest.approx(expect)
    assert all(t.text == vticks.label(t.value) for t in ticks) and len(ticks) >= MIN_TICKS


def test_linear_axis_ticks_are_round_and_as_many_as_fit():
    assert [t.value for t in vticks.linear(0, 63, 7)] == [0, 10, 20, 30, 40, 50, 60]
    assert [t.text for t in vticks.linear(0, 63, 4)] == ["0", "20", "40", "60"]
    assert [t.text for t in vticks.linear(0, 2600, 6)] == ["0", "500", "1,000", "1,500", "2,000", "2,500"]
    assert [t.text for t in vticks.linear(0.8, 1.25, 5)] == ["0.8", "0.9", "1", "1.1", "1.2"]


def test_an_iops_axis_of_nothing_or_noise_gets_whole_ticks():
    for ys in ((0.0, 0.0, 0.0), (0.2, 0.4, 0.3)):  # a stalled drive; a few IOs in a second
        d = plots.convergence([("IOPS", [Series("4KiB", (1, 2, 3), ys)])], "IOPS", [2, 3], 80)
        ticks = [t for _, t in axis(d, 0, "y")["ticks"]]
        assert ticks == ["0", "1", "2"] and rules(d) == [], ticks


def test_a_log_axis_places_its_labels_by_the_logarithm_of_their_values():
    d = latency_plots.latency_histogram([("", histogram())], "t", 125)
    assert axis(d, 0, "x")["scale"] == "log" and axis(d, 1, "y")["scale"] == "log"
    centres = label_centres(d, "xtick")
    values = {t: v for v, t in axis(d, 0, "x")["ticks"]}
    assert len(values) >= MIN_TICKS and set(values) == set(centres)
    (a, va), (b, vb) = sorted(values.items(), key=lambda kv: kv[1])[0], sorted(values.items(), key=lambda kv: kv[1])[-1]
    for text, v in values.items():  # each label at its share of the axis' decades
        share = math.log10(v / va) / math.log10(vb / va)
        assert centres[text] == pytest.approx(centres[a] + share * (centres[b] - centres[a]), abs=0.05), text


def test_category_labels_too_close_to_print_are_thinned_not_overprinted():
    d = plots.lines_over_categories(
        [f"{n} outstanding" for n in (1, 2, 4, 8, 16, 24, 32, 36, 48, 64, 128, 256)],
        [Series("IOPS", tuple(range(12)), tuple(1000.0 * (k + 1) for k in range(12)))],
        "outstanding IO",
        "IOPS",
        "IOPS by outstanding IO",
        height_mm=60,
    )
    assert [v for v in rules(d) if "overlap" in v] == []
    shown = [t for _, t in axis(d, 0, "x")["ticks"]]
    assert 3 <= len(shown) < 12 and shown[0] == "1 outstanding"


# -- texts inside the figure, data inside the axes ---------------------------------------------


def test_long_tick_labels_and_legends_stay_on_the_figure():
    wide = Series("drive with a long name: /dev/disk/by-id/nvme-Vendor_Model_1234567890", (0, 1, 2), (1e6, 2e6, 3e6))
    d = plots.lines_over_categories(
        ["sequential read 128 KiB", "random write 4 KiB", "mixed 70/30 8 KiB"],
        [wide, Series("b", (0, 1, 2), (5e5, 1.2e6, 1.25e6))],
        "workload",
        "IOPS",
        "IOPS by workload",
        logy=False,
    )
    assert rules(d) == []
    w, h = d.record["size"]
    for t in d.record["texts"]:
        x0, y0, x1, y1 = t["box"]
        assert x0 >= 0 and x1 <= w and y0 >= 0 and y1 <= h, t


def test_a_tick_label_beyond_the_figure_is_found():
    d = plots.lines_over_categories(["4 KiB", "8 KiB"], [Series("a", (0, 1), (5e3, 6e3))], "bs", "IOPS", "t")
    assert rules(d) == []
    rec = json.loads(json.dumps(d.record))
    tick = next(t for t in rec["texts"] if t["role"] == "ytick")
    tick["box"] = [tick["box"][0] - 200, tick["box"][1], tick["box"][2] - 200, tick["box"][3]]
    assert [v.rule for v in plot_violations(rec, "p")] == ["edge"]


def test_the_record_holds_the_boxes_of_the_labels_drawn():
    d = plots.convergence([("ART", [Series("4KiB", (1, 2, 3), (50.0, 49.0, 49.5))])], "ART (µs)", [2, 3], 80)
    px = vfigure.PX_PER_MM
    labels = [s for s in d.shapes if isinstance(s, Label)]
    assert len(labels) == sum(len(t["text"].split("\n")) for t in d.record["texts"])  # a text per line drawn
    for s in labels:
        [t] = [t for t in d.record["texts"] if s.text in t["text"].split("\n")]
        x0, y0, x1, y1 = t["box"]
        assert y0 <= s.y * px <= y1 and x0 - 0.01 <= s.x * px <= x1 + 0.01


def test_data_outside_the_axes_limits_is_cut_at_the_axes():
    ax = Axes(title="t", xlabel="x", ylabel="IOPS", xlim=(0, 10), ylim=(0, 10))
    ax.add(Path((1, 5, 9), (2, 100, 3), "#d62728", marker_pt=4, label="spike"))
    d = vfigure.draw([ax], 190, 60)
    [clip] = [s for s in d.shapes if isinstance(s, Clip)]
    frame = next(s for s in d.shapes if not isinstance(s, Clip | Label) and getattr(s, "stroke", None) == "#000000")
    assert (clip.x, clip.y, clip.w, clip.h) == (frame.x, frame.y, frame.w, frame.h)  # the axes' frame
    drawn = [s for s in clip.shapes if isinstance(s, Line) and s.stroke == "#d62728"]
    assert drawn and min(y for s in drawn for _, y in s.points) < clip.y  # the spike runs above the axes, cut there
    # outside the clip, the series' colour is only its legend sample, right of the axes
    loose = [
        s
        for s in d.shapes
        if not isinstance(s, Clip) and "#d62728" in (getattr(s, "stroke", None), getattr(s, "fill", None))
    ]
    assert loose and all(min(p[0] for p in s.points) > clip.x + clip.w for s in loose if isinstance(s, Line))
    assert d.record["axes"][0]["series"] == {"spike": True}


def test_a_series_entirely_outside_the_axes_is_no_legend_series_with_points():
    ax = Axes(ylabel="IOPS", xlim=(0, 10), ylim=(0, 10))
    ax.add(Path((1, 2), (20, 30), "#1f77b4", label="above"), Path((1, 2), (3, 4), "#ff7f0e", label="inside"))
    d = vfigure.draw([ax], 190, 60)
    assert d.record["axes"][0]["series"] == {"above": False, "inside": True}
    assert [v.rule for v in plot_violations(d.record, "p")] == ["legend"]


# -- the converted plots keep their content ----------------------------------------------------


def test_the_latency_histogram_keeps_its_marks_axes_and_unmeasured_note():
    h = histogram()
    d = latency_plots.latency_histogram([("", h)], "65/35 4KiB", 125)
    texts = [t["text"] for t in d.record["texts"]]
    assert any(t.startswith("99 % ≤ ") for t in texts) and any(t.startswith("99.9 % ≤ ") for t in texts)
    assert "not measured from" in axis(d, 1, "x")["label"]  # 99.99 and 99.999 % need more IOs
    assert [t for _, t in axis(d, 1, "y")["ticks"]][2] == "1 % (99)"
    assert axis(d, 2, "y")["label"] == "cumulative IOs (%)" and not axis(d, 2, "x")["visible"]
    assert rules(d) == []
    # several drives overlaid: no count axis, a legend entry per drive under the tail
    two = latency_plots.latency_histogram([("A", h), ("B", histogram(60))], "both", 150)
    assert not axis(two, 0, "y")["visible"] and two.record["axes"][1]["legend"] == ["A", "B"]
    assert rules(two) == []


def test_histogram_bars_are_drawn_opaque_in_the_colour_they_show_at_80_percent():
    assert vaxes.on_white("#1f77b4", 0.8) == "#4c92c3" and vaxes.on_white("#000000", 0.5) == "#808080"
    d = latency_plots.latency_histogram([("", histogram())], "t", 125)
    top = next(s for s in d.shapes if isinstance(s, Clip))
    bars = [s for s in top.shapes if isinstance(s, Line) and s.stroke == "#4c92c3"]
    assert bars and all(s.opacity == 1.0 for s in bars)
    # each bin one upright stroke from the base (0.8 IOs) to its count, in runs of close bins
    ups = [(a, b) for s in bars for a, b in zip(s.points, s.points[1:]) if a[0] == b[0] and b[1] < a[1]]
    counted = sum(1 for c in histogram().counts if c > 0)
    assert 0.5 * counted <= len(ups) <= counted and len({a[1] for a, _ in ups}) == 1


def test_close_percentile_labels_do_not_overprint():
    values = [50.0 + 0.01 * i for i in range(400)]
    counts = [1000] * 390 + [1] * 10  # the 99, 99.9 and 99.99 % marks a hair apart
    d = latency_plots.latency_histogram([("", Histogram(tuple(values), tuple(counts), values[-1]))], "t", 125)
    assert sum(t["text"].startswith("99") for t in d.record["texts"] if t["role"] == "text") == 3
    assert rules(d) == []


def test_measurement_window_and_convergence_keep_their_bands_and_window():
    values = (49.35, 49.29, 49.27, 49.31, 49.28)
    v = VariableVerdict(
        "ART 0/100 4KiB", (1, 2, 3, 4, 5), values, 49.3, 0.0787, 9.86, -0.0122, 49.34, 0.0486, 4.93, True, True
    )
    d = plots.measurement_window(v, "ART (µs)", SteadyRule())
    assert d.record["axes"][0]["legend"][:2] == ["±20 % of average", "±10 % of average"]
    # the bands are the rule's: drawn ±10 %/±20 % whatever rule the verdict used
    wide = plots.measurement_window(v, "ART (µs)", SteadyRule(range_limit=0.3, slope_limit=0.15))
    assert wide.record["axes"][0]["legend"][:2] == ["±30 % of average", "±15 % of average"]
    assert [t for _, t in axis(d, 0, "x")["ticks"]] == ["1", "2", "3", "4", "5"] and rules(d) == []
    c = plots.convergence(
        [("IOPS", [Series("4KiB", (1, 2, 3, 4), (1.0, 10.0, 100.0, 1000.0))])], "IOPS", [3, 4], logy=True
    )
    assert c.record["axes"][0]["legend"] == ["4KiB", "measurement window (rounds 3–4)"]
    assert axis(c, 0, "y")["scale"] == "log" and rules(c) == []


# -- in a report -------------------------------------------------------------------------------


def test_a_reports_html_carries_each_vector_plots_record():
    d = plots.lines_over_categories(["4 KiB", "8 KiB"], [Series("a <&> b", (0, 1), (5, 6))], "bs", "IOPS", "t")
    doc = Document("t", "spec", "IOPS", "s", "e", "dev", "me", (), (), (Page("p", (Figure("IOPS & more", d, "src"),)),))
    html = render(doc)
    # the same HTML each time (pdf.py keeps laid-out pages by their HTML): clip ids by content
    assert svg(d) in html and render(doc) == html
    other = plots.lines_over_categories(["4 KiB", "8 KiB"], [Series("a", (0, 1), (5, 7))], "bs", "IOPS", "t")
    assert re.findall(r'clipPath id="([^"]+)"', svg(d)) != re.findall(r'clipPath id="([^"]+)"', svg(other))
    [(page, caption, rec)] = figures(html)
    assert (page, caption) == (1, "IOPS & more") and rec == json.loads(json.dumps(d.record))


REPORT_OF_VECTORS = """
import os, sys
from iolab.pages.report import latency_plots, plots
from iolab.pages.report.html import render
from iolab.pages.report.model import Document, Figure, Page
from iolab.pages.report.plot_style import LEGEND_WRAP_MM, Series
from iolab.core.results import Histogram
s = [Series("4KiB", (1, 2, 3), (5.0, 6.0, 7.0))]
figs = [plots.convergence([("ART", s)], "ART", [2, 3]), plots.lines_over_categories(["a", "b", "c"], s, "bs", "IOPS", "t"),
        latency_plots.latency_histogram([("", Histogram((10.0, 20.0, 40.0), (5, 90, 5), 40.0))], "h")]
html = render(Document("t", "s", "n", "a", "b", "d", "me", (), (), tuple(Page("p", (Figure("c", f, "s"),)) for f in figs)))
print("matplotlib" in sys.modules, html.count("<svg"))
"""


def test_a_report_of_vector_plots_imports_no_matplotlib():
    res = subprocess.run([sys.executable, "-c", REPORT_OF_VECTORS], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False", "3"]


@pytest.mark.parametrize(("fx", "fy", "over"), [(0.5, 0.5, True), (0.15, 0.85, False)])
def test_a_note_printed_over_a_series_line_is_found(fx, fy, over):
    """The record keeps the parts of a series near a text inside the axes (not the whole line),
    enough for the series rule to see a note printed across it."""
    ax = Axes(title="t", xlabel="x", ylabel="y", legend=False)
    xs = tuple(i / 199 for i in range(200))
    ax.add(Path(xs, xs, "#1f77b4", 1.2, label="diagonal"))
    ax.notes.append(Note(fx, fy, "a note"))
    d = vfigure.draw([ax], 120, 60)
    assert [v.rule for v in plot_violations(d.record, "p")] == (["series"] if over else [])
    kept = sum(len(pts) for _, _, pts in d.record["axes"][0]["drawn"]["lines"])
    assert (0 < kept < 50) if over else kept == 0


def test_percentile_labels_keep_off_the_nines_lines_and_the_record_holds_them():
    # "99 % ≤ 138.8 µs" 0.7 mm under the dotted 1 % line read as printed on it at 80 dpi
    for h in (histogram(), histogram(90.0, 60, 1.01)):
        d = latency_plots.latency_histogram([("", h)], "t", 125)
        tail = [s for s in d.shapes if isinstance(s, Clip)][1]
        nines = [s.points[0][1] for s in tail.shapes if isinstance(s, Line) and s.stroke == "#999999"]
        labels = [t["box"] for t in d.record["texts"] if " % ≤ " in t["text"]]
        assert len(nines) == 4 and labels
        for _, y0, _, y1 in labels:
            y0, y1 = y0 / vfigure.PX_PER_MM, y1 / vfigure.PX_PER_MM
            assert all(y > y1 + 1.0 or y < y0 - 1.0 for y in nines), (y0, y1, nines)
        assert rules(d) == []
    # a text over a reference line is a violation of the series rule, as over a series' line
    ax = Axes(ylim=(0, 10), xlim=(0, 10))
    ax.add(Path((0.0, 1.0), (9.0, 10.0), "#1f77b4", label="s"), Rule(5.0, False, "#999999", 0.6, ":"))
    ax.notes.append(Note(0.5, 0.5, "on the line"))
    assert [str(v) for v in plot_violations(vfigure.draw([ax], 190, 60).record, "p")] == [
        "p: series: text 'on the line' is printed over a line of 'the reference line at y = 5'"
    ]


def test_a_tick_of_a_quarter_step_shows_all_its_digits():
    # num's four significant digits printed the tick at 100.25 as "100.2", a value not marked
    assert [t.text for t in vticks.linear(100.2, 100.8, 3)] == ["100.25", "100.5", "100.75"]
    assert [t.text for t in vticks.linear(2.2, 2.8, 3)] == ["2.25", "2.5", "2.75"]
    assert vticks.label(1234.5) == "1,234.5" and vticks.label(0.1 + 0.2) == "0.3" and vticks.label(-100.25) == "-100.25"
    assert num(100.25) == "100.2"  # a measured figure keeps the report's precision


def test_a_note_with_a_word_wider_than_its_axes_is_broken_inside_them():
    """A note wraps as the report's table cells do (textwidth.wrap): at spaces and after a
    slash, and inside a word only when it alone is wider than the line, so it stays in its axes."""
    ax = Axes(title="t", xlabel="x", ylabel="y", ylim=(0.0, 1.0), legend=False)
    ax.add(Path((0.0, 1.0), (0.0, 0.0), "#1f77b4"))  # along the bottom, clear of the note
    ax.notes.append(Note(0.5, 0.5, "read from /runs/" + "a" * 150 + "/results.db"))
    d = vfigure.draw([ax], 120, 60)
    [note] = [t for t in d.record["texts"] if t["role"] == "text"]
    [clip] = [s for s in d.shapes if isinstance(s, Clip)]
    x0, _, x1, _ = (v / vfigure.PX_PER_MM for v in note["box"])
    assert clip.x <= x0 and x1 <= clip.x + clip.w
    assert note["text"].startswith("read from /runs/\n")  # the path breaks after its slash first
    assert plot_violations(d.record, "note") == []


def test_a_word_that_fits_on_the_next_line_goes_there_whole_not_broken_after_its_hyphen():
    """A legend entry, a note and a table cell break at a space before they break inside a word:
    "enterprise-" at a line's end and "sas" under it read as two words where the whole word fit
    on the next line. Only a word wider than a line breaks after its hyphen (or "/", "_")."""
    size = 7.0
    head = "D1 iolab sim SSD enterprise-"
    cell = textwidth.width_mm(head, size) + 0.5  # room for "enterprise-", not for "enterprise-sas,"
    assert textwidth.width_mm(head + "sas,", size) > cell + textwidth.SLACK_MM
    text = "D1 iolab sim SSD enterprise-sas, OP 27.9% [20261130-102929-latency-enterprise-sas]"
    lines = textwidth.wrap(text, cell, size)
    assert lines[:2] == ["D1 iolab sim SSD", "enterprise-sas, OP 27.9%"], lines
    # the run id is wider than a line alone: broken after a hyphen, never inside a part
    assert lines[2:] == ["[20261130-102929-latency-", "enterprise-sas]"], lines
    assert vtext.wrap_mm(text, cell, size) == lines
    # an underscore and a slash are break opportunities only inside a word too wide for a line
    path = "read from /runs/" + "a" * 20 + "/results_db"
    wide = textwidth.width_mm("read from", size) + 0.5
    assert textwidth.wrap(path, wide, size)[0] == "read from"
    assert "results_db" in textwidth.wrap(path, textwidth.width_mm("/runs/" + "a" * 20 + "/", size) + 0.5, size)


def test_a_rule_that_counts_is_in_the_autoscaled_limits_and_a_mark_is_not():
    """A bound the data is read against (counts=True) widens the axes' range to show it, as
    matplotlib's axhline did; a mark on the data (a percentile line) leaves the range to the data."""
    ax = Axes(ylog=True)
    ax.add(Path((0.0, 1.0), (10.0, 20.0), "#1f77b4"), Rule(1000.0, False, "#d62728", counts=True))
    ax.add(Rule(5.0, True, "#000000"))  # beyond the data along x: a mark, not counted
    x, y = ax.scales()
    assert y.shows(1000.0) and y.lo < 10.0 and not x.shows(5.0)
    assert (y.lo, y.hi) == pytest.approx(tuple(autoscale([10.0, 20.0, 1000.0], True)))


def test_a_log_axis_under_a_decade_is_labelled_as_a_linear_axis_of_its_length():
    """50 to 70 µs on a log axis (the comparison's response times): the log steps (1, 1.5, 2, 3,
    5, 7) labelled three values; under a decade the axis reads nearly linear, so it gets the round
    values a linear axis of its length would show, as the heat map's colour bar does."""
    ax = Axes(ylabel="response time (µs)", ylog=True)
    ax.add(Path((1.0, 2.0, 3.0, 4.0), (51.0, 55.0, 63.0, 69.0), "#1f77b4"))
    d = vfigure.draw([ax], 160.0, 90.0, "t")
    (p,) = vfigure.lay_out([ax], 160.0, 90.0)
    labelled = [t for v, t in axis(d, 0, "y")["ticks"] if t]
    even = vticks.linear(p.y.lo, p.y.hi, vticks.most_ticks(p.box.h, vaxes.TICK_PT, True))
    assert axis(d, 0, "y")["scale"] == "log" and rules(d) == []
    assert len(labelled) >= len(even) > 3, labelled


def test_legend_lines_are_no_wider_than_the_legends_width_in_millimetres():
    """A legend wraps its labels to LEGEND_WRAP_MM by their measured width, as a table cell does:
    30 characters of wide letters were 60 mm, and a path (no space) stayed one line as wide as it
    is long, squeezing the axes."""
    ax = Axes()
    wide = "WWW MMM " * 6
    path = "/srv/captures/2024-03-11/production_capture_of_the_database_host.csv"
    ax.add(Path((1.0, 2.0), (1.0, 2.0), "#1f77b4", label=wide), Path((1.0, 2.0), (2.0, 1.0), "#ff7f0e", label=path))
    d = vfigure.draw([ax], 190.0, 90.0, "t")
    assert rules(d) == []
    lines = [ln for t in d.record["texts"] if t["role"] == "legend" for ln in t["text"].split("\n")]
    assert len(lines) > 4 and all(textwidth.width_mm(ln, vaxes.LEGEND_PT) <= LEGEND_WRAP_MM + 0.1 for ln in lines)
    assert [e.replace(" ", "") for e in d.record["axes"][0]["legend"]] == [wide.replace(" ", ""), path]
