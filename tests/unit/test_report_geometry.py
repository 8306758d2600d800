"""The report's geometry rules on what is really drawn: each rule finds its planted fault in a
plot (matplotlib's drawn text boxes, read back from the PNG, or the boxes iolab placed in a
vector plot, its `Drawing.record`) or a page (the PDF layout's boxes), and the report's own
drawing code keeps it."""

from __future__ import annotations

import re

import pytest

from iolab.pages.report import plots, textwidth
from iolab.pages.report.geometry import plot_violations, read_record
from iolab.pages.report.html import render
from iolab.pages.report.layoutcheck import page_rules
from iolab.pages.report.model import Document, HeaderColumn, Page, Text
from iolab.pages.report.plot_style import Series, _figure, _log_ticks, _png, styled
from iolab.pages.report.vector import Drawing


def rules(png: bytes | Drawing) -> set[str]:
    rec = png.record if isinstance(png, Drawing) else read_record(png)
    assert rec, "the plot carries its record"
    return {v.rule for v in plot_violations(rec, "plot")}


def test_overprinted_point_labels_are_found():
    def draw(gap: float) -> bytes:
        with styled():
            fig = _figure(60)
            ax = fig.subplots()
            ax.plot([1, 2, 3], [10, 20, 30], label="IOPS")
            ax.set_ylabel("IOPS")
            ax.annotate("5512", (2, 20))
            ax.annotate("19922", (2 + gap, 20))  # DIRTH's point labels, printed on each other
            return _png(fig)

    assert "overlap" in rules(draw(0.02))
    assert "overlap" not in rules(draw(0.6))


def test_a_narrow_log_axis_gets_three_labelled_ticks():
    """The QoS histogram's response-time axis from 48 to 74 µs had two labels, 50 and 70."""
    from matplotlib.ticker import LogFormatter, LogLocator

    def draw(ours: bool) -> bytes:
        with styled():
            fig = _figure(60)
            ax = fig.subplots()
            ax.plot([48, 60, 74], [1, 5, 2])
            ax.set_xscale("log")
            ax.set_xlabel("response time (µs, log scale)")
            if ours:
                _log_ticks(ax, "x")
            else:  # what matplotlib places by itself on part of a decade
                ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 1.5, 2.0, 3.0, 5.0, 7.0)))
                ax.xaxis.set_major_formatter(LogFormatter())
            return _png(fig)

    assert "ticks" in rules(draw(False))
    assert "ticks" not in rules(draw(True))


def test_a_log_axis_over_decades_is_labelled_over_its_whole_span():
    """DIRTH's ART from 194 µs to 45 ms: two powers of ten in range sent it to evenly spaced
    ticks, 10,000 to 50,000, crowded at the top (40,000 printed over 50,000), none below."""
    with styled():
        fig = _figure(45)
        ax = fig.subplots()
        ax.plot([1, 32, 1024], [194, 1500, 45000])
        ax.set_yscale("log")
        ax.set_ylabel("response time (µs, log scale)")
        _log_ticks(ax)
        png = _png(fig)
    assert "overlap" not in rules(png) and "ticks" not in rules(png)
    [ax_rec] = read_record(png)["axes"]
    values = [v for v, t in ax_rec["y"]["ticks"] if t.strip()]
    assert min(values) < 1000 < 10000 < max(values)  # labels at the bottom, the middle and the top


def test_a_flat_stairs_line_is_a_drawn_series():
    """The trace's outstanding IO per step, 1 in every step: a stairs line with no height is
    drawn all the same, and its legend entry names it."""
    with styled():
        fig = _figure(45)
        ax = fig.subplots()
        ax.stairs([1.0, 1.0, 1.0], [0, 1, 2, 3], baseline=None, label="maximum")
        ax.stairs([float("nan")] * 3, [0, 1, 2, 3], baseline=None, label="average")
        ax.set_ylabel("outstanding IO")
        ax.legend()
        series = read_record(_png(fig))["axes"][0]["series"]
    assert series == {"maximum": True, "average": False}


def test_a_series_with_no_point_has_no_legend_entry():
    """Read IOPS of the 100 % write mix: no point, so no '100% W' in the legend."""
    empty = Series("100% W", (), ())
    with styled():
        fig = _figure(60)
        ax = fig.subplots()
        ax.plot([0, 1], [5, 6], label="0% W")
        ax.plot([], [], label=empty.label)
        ax.set_ylabel("read IOPS")
        ax.legend()
        planted = _png(fig)
    assert "legend" in rules(planted)
    drawing = plots.lines_over_categories(["1", "32"], [Series("0% W", (0, 1), (5, 6)), empty], "QD", "read IOPS", "t")
    assert "legend" not in rules(drawing)
    assert drawing.record["axes"][0]["legend"] == ["0% W"]


def test_fractional_ticks_on_an_iops_axis_are_found():
    def draw(ticks: list[float]) -> bytes:
        with styled():
            fig = _figure(60)
            ax = fig.subplots()
            ax.plot([0, 1, 2], [0, 1, 2])
            ax.set_yticks(ticks)
            ax.set_ylabel("IOPS")
            return _png(fig)

    assert "fraction" in rules(draw([0, 0.5, 1, 1.5, 2]))
    assert "fraction" not in rules(draw([0, 1, 2]))


def test_lower_is_better_is_not_said_of_a_minimum_over_maximum():
    """The consistency comparison's % panel took its direction from its first figure (the
    coefficient of variation) and said 'lower is better' of the steady part's minimum ÷ maximum."""

    def draw(title: str) -> Drawing:
        cats = ["coefficient of variation", "steady-part minimum ÷ maximum"]
        return plots.grouped_bars(cats, [("a", [1.0, 90.0]), ("b", [2.0, 80.0])], "%", title)

    assert "direction" in rules(draw("Key figures in % (lower is better)"))
    assert "direction" not in rules(draw("Key figures in % (higher is better)"))


def doc(title: str, device: str, columns: tuple[HeaderColumn, ...] = ()) -> Document:
    return Document("t", "SNIA PTS", "QoS Rounds", "2026-11-29T03:00:18+00:00", "2026-11-29T03:00:19+00:00", device,
                    "not given (--tested-by)", columns, (), (Page(title, (Text(("x",)),)), Page("second", (Text(("y",)),))))  # fmt: skip


def test_the_page_head_keeps_long_lines_inside_its_box(monkeypatch):
    long = doc(
        "read rounds: latency histogram, round 9 (worst by maximum latency) " * 2,
        "iolab sim SSD enterprise-sas, OP 28.9% " * 3,
    )
    assert [v for v in page_rules(render(long, for_print=True), "r") if v.rule == "overflow"] == []
    # the same head at the stylesheet's sizes (as before html.fit): its lines run out of the box
    monkeypatch.setattr(textwidth, "fit_pt", lambda text, line_mm, size_pt, floor_pt, bold=False: size_pt)
    planted = page_rules(render(long, for_print=True), "r")
    assert any(v.rule == "overflow" and "<head>" in v.detail for v in planted), planted


def test_header_values_break_between_their_parts_not_inside_a_word(monkeypatch):
    col = HeaderColumn(
        "Test Parameters",
        (("precondition_time", "1.00 s"), ("Target", "sim:enterprise-sas?user_gb=0.536870912&op=0.285030546")),
    )
    html = render(doc("p", "d", (col,) * 4), for_print=True)
    assert [v for v in page_rules(html, "r") if v.rule == "broken-word"] == []
    # without the break opportunities after "_", "&" and "?", a long name breaks inside a word
    monkeypatch.setattr(textwidth, "_BREAKS", re.compile(r".+?(?:[-/](?!\d)|[?!]|$)"))
    planted = page_rules(html, "r")
    broken = [v.detail for v in planted if v.rule == "broken-word"]
    assert any("user_gb=0.536870912&op=0.285030546" in d for d in broken), broken
    # the header's columns are printed on a document's first page only
    assert html.count('class="col"') == 4


def _drawn_record(label_box: list[float]) -> dict:
    """One axes (box 50…350 × 30…250 px) whose series drew a line across y = 106, a line down
    x = 150 (cut at the axes' edges: the title above them is clear of it) and a marker; a label at
    `label_box`."""
    hidden = {"label": "", "scale": "linear", "placed": False, "visible": False, "ticks": []}
    drawn = {
        "box": [50, 30, 350, 250],
        "lines": [["TC1", 1.2, [[60, 106], [130, 106]]], ["TC2", 1.2, [[150, 0], [150, 300]]]],
        "dots": [["TC1", 118, 128, 3]],
    }
    axes = {"title": "t", "colorbar": False, "axes3d": False, "x": hidden, "y": hidden}
    texts = [{"text": "t", "role": "title", "axes": 0, "box": [100, 5, 200, 20]}]
    texts.append({"text": "64", "role": "text", "axes": 0, "box": label_box})
    return {"size": [400, 300], "texts": texts, "axes": [{**axes, "legend": [], "series": {}, "drawn": drawn}]}


@pytest.mark.parametrize(
    ("label_box", "over"),
    [
        ([100, 100, 120, 112], "a line of 'TC1'"),  # the line runs through its middle
        ([100, 115, 120, 127], "a marker of 'TC1'"),  # the marker's edge reaches 2 px into it
        ([100, 106.5, 120, 118.5], ""),  # the line's edge reaches 0.7 px into it: within OVERLAP_PX
        ([140, 40, 160, 52], "a line of 'TC2'"),
        ([200, 150, 220, 162], ""),
    ],
)
def test_a_text_printed_over_a_series_line_or_marker_is_found(label_box, over):
    found = [v.detail for v in plot_violations(_drawn_record(label_box), "plot") if v.rule == "series"]
    assert found == ([f"text '64' is printed over {over}"] if over else [])
