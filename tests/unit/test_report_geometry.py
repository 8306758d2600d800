"""The report's geometry rules on what is really drawn: each rule finds its planted fault in a
plot (a record with the fault planted, or the boxes iolab placed in a vector plot, its
`Drawing.record`) or a page (the PDF layout's boxes), and the report's own drawing code keeps it."""

from __future__ import annotations

import re

import pytest

from iolab.pages.report import pdflayout, plots, textwidth, vfigure
from iolab.pages.report.geometry import plot_violations
from iolab.pages.report.html import render
from iolab.pages.report.layoutcheck import page_rules
from iolab.pages.report.model import Document, HeaderColumn, Page, Text
from iolab.pages.report.plot_style import Series
from iolab.pages.report.vaxes import Axes, Path
from iolab.pages.report.vector import Drawing


def rules(d: Drawing | dict) -> set[str]:
    rec = d.record if isinstance(d, Drawing) else d
    assert rec, "the plot carries its record"
    return {v.rule for v in plot_violations(rec, "plot")}


def axis(label: str, ticks: list[tuple[float, str]], placed: bool = False) -> dict:
    return {"label": label, "scale": "linear", "placed": placed, "visible": True, "ticks": [list(t) for t in ticks]}


def record(texts=(), x=None, y=None, legend=(), series=None) -> dict:
    """A plot's record as vfigure.py writes it, with the parts a rule reads planted."""
    ax = {"title": "t", "x": x or axis("", []), "y": y or axis("", []), "legend": list(legend), "series": series or {}}
    return {"size": [400, 300], "texts": list(texts), "axes": [ax], "figure_legends": []}


def text(t: str, box: tuple[float, float, float, float], role: str = "text") -> dict:
    return {"text": t, "role": role, "axes": 0, "box": list(box)}


def test_overprinted_point_labels_are_found():
    # DIRTH's point labels, printed on each other, and beside each other
    assert "overlap" in rules(record([text("5512", (100, 100, 130, 110)), text("19922", (104, 101, 140, 111))]))
    assert "overlap" not in rules(record([text("5512", (100, 100, 130, 110)), text("19922", (131, 100, 170, 110))]))


def test_a_narrow_log_axis_gets_three_labelled_ticks():
    """The QoS histogram's response-time axis from 48 to 74 µs had two labels, 50 and 70."""
    two = axis("response time (µs, log scale)", [(50, "50"), (70, "70")])
    assert "ticks" in rules(record(x=two))
    ax = Axes(xlabel="response time (µs, log scale)", xlog=True)
    ax.add(Path((48, 60, 74), (1, 5, 2), "#000000"))
    assert "ticks" not in rules(vfigure.draw([ax], 190, 60))


def test_a_log_axis_over_decades_is_labelled_over_its_whole_span():
    """DIRTH's ART from 194 µs to 45 ms: two powers of ten in range sent it to evenly spaced
    ticks, 10,000 to 50,000, crowded at the top (40,000 printed over 50,000), none below."""
    ax = Axes(ylabel="response time (µs, log scale)", ylog=True)
    ax.add(Path((1, 32, 1024), (194, 1500, 45000), "#000000"))
    d = vfigure.draw([ax], 190, 45)
    assert "overlap" not in rules(d) and "ticks" not in rules(d)
    values = [v for v, t in d.record["axes"][0]["y"]["ticks"] if t.strip()]
    assert min(values) < 1000 < 10000 < max(values)  # labels at the bottom, the middle and the top


def test_a_flat_stairs_line_is_a_drawn_series():
    """The trace's outstanding IO per step, 1 in every step: a step line with no height is
    drawn all the same, and its legend entry names it."""
    ax = Axes(ylabel="outstanding IO")
    ax.add(Path((0, 1, 2, 3), (1.0, 1.0, 1.0, 1.0), "#000000", step=True, label="maximum"))
    ax.add(Path((0, 1, 2, 3), (float("nan"),) * 4, "#000000", step=True, label="average"))
    assert vfigure.draw([ax], 190, 45).record["axes"][0]["series"] == {"maximum": True, "average": False}


def test_a_series_with_no_point_has_no_legend_entry():
    """Read IOPS of the 100 % write mix: no point, so no '100% W' in the legend."""
    empty = Series("100% W", (), ())
    planted = record(legend=["0% W", "100% W"], series={"0% W": True, "100% W": False})
    assert "legend" in rules(planted)
    drawing = plots.lines_over_categories(["1", "32"], [Series("0% W", (0, 1), (5, 6)), empty], "QD", "read IOPS", "t")
    assert "legend" not in rules(drawing)
    assert drawing.record["axes"][0]["legend"] == ["0% W"]


def test_fractional_ticks_on_an_iops_axis_are_found():
    def ticks(values: list[float]) -> dict:
        return axis("IOPS", [(v, f"{v:g}") for v in values])

    assert "fraction" in rules(record(y=ticks([0, 0.5, 1, 1.5, 2])))
    assert "fraction" not in rules(record(y=ticks([0, 1, 2])))


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


def _head_devices(d: Document) -> tuple[list[str], list[str]]:
    """The device each page head prints: in the HTML, and on the PDF's sheets."""
    html = re.findall(r"<span>Device: (.*?)</span>", render(d, for_print=True))
    pdf = [t.text for s in pdflayout.lay_out([d]) for t in s.items if getattr(t, "text", "").startswith("Device: ")]
    return html, [t.removeprefix("Device: ") for t in pdf]


@pytest.mark.parametrize("chars", [60, 90])
def test_the_page_head_shows_a_long_model_whole_where_its_line_has_room(chars):
    """device_line cut every model at 48 characters, room or not: a quick copy's 'iolab sim SSD
    client-nvme-slc, OP 9.4% for GC, …' lost its over-provisioning figures on every page."""
    model = ("iolab sim SSD client-nvme-slc, OP 9.4% for GC (9.7% at full size), 14.8% with " * 2)[:chars]
    html, pdf = _head_devices(doc("p", model))
    assert html == [model] * 2 and pdf == [model] * 2, (html, pdf)


def test_the_page_head_cuts_a_model_too_long_for_its_line_with_an_ellipsis_in_both_formats():
    model = "iolab sim SSD client-nvme-slc, OP 9.4% for GC (9.7% at full size), 14.8% with " * 3
    html, pdf = _head_devices(doc("p", model))
    assert html == pdf and len(html) == 2 and html[0].endswith("…"), (html, pdf)
    assert model.startswith(html[0][:-1]) and len(html[0]) > 80, html[0]


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


def test_an_x_tick_label_at_the_axes_end_never_runs_off_the_figure():
    # the characterise report's per-second preconditioning ended its axis on a tick whose label,
    # centred on it, ran 7 px past the figure's right edge (the layout check caught it under load)
    from iolab.pages.report import vfigure
    from iolab.pages.report.vaxes import Axes
    from iolab.pages.report.vaxes import Path as Line
    from iolab.pages.report.vticks import Tick

    ax = Axes(title="t", xlabel="time (s)", ylabel="IOPS")
    ax.add(Line((0.0, 1.09), (1.0, 3.0), "#000000", 1.0))
    ax.xlim = (0.0, 1.09)
    ax.xticks = [Tick(0.0, "0"), Tick(0.5, "0.5"), Tick(1.09, "1.09 s, the end")]
    record = vfigure.draw([ax], 170, 85, "t").record
    assert [v.detail for v in plot_violations(record, "plot") if "runs off" in v.detail] == []
    shown = [t["text"] for t in record["texts"] if t["role"] == "xtick"]
    assert shown == ["0", "0.5"]  # the end's tick mark stays, unlabelled


THREE_BANNERS = (
    "non-compliant (quick profile) — in full on the Run Details and Notes page",
    "STEADY STATE NOT EVALUATED — in full on the Run Details and Notes page",
    "AUDIT FAILED: percentile-samples (marks: percentile) — in full on the Run Details and Notes page",
)


def test_three_banners_are_printed_whole_above_the_page_content():
    """A quick run that failed its audit: its third banner was drawn under the header columns
    (page 1) and the figure's caption (later pages): the strip was 11 mm whatever it held."""
    from dataclasses import replace

    from iolab.pages.report.pdflayout import lay_out

    col = HeaderColumn("Test Platform", (("Host", "vm"),))
    three = replace(doc("first", "d", (col,) * 4), banners=THREE_BANNERS)
    html = render(three, for_print=True)
    assert [v for v in page_rules(html, "r") if v.rule == "overflow"] == []
    sheets = lay_out([three])
    assert len(sheets) == 2
    for n, sheet in enumerate(sheets, 1):
        banners = [b for b in sheet.boxes if b.name == "banner"]
        assert [b.source for b in banners] == list(THREE_BANNERS)
        below = [b for b in sheet.boxes if b.name in ("header column", "text", "caption", "footer")]
        lowest = max(b.y + b.h for b in banners)
        assert lowest <= min(b.y for b in below), (n, lowest, [(b.name, b.y) for b in below])
        foot = next(b for b in sheet.boxes if b.name == "footer")
        assert foot.y + foot.h <= 297.0 - 8.0 + 0.01  # the taller strip pushes no footer off the sheet
    # the HTML's banners grow as the PDF's do, and its content's minimum height gives way by as much
    assert ".banners { min-height: 11mm; }" in html
    assert html.count('<div class="content" style="min-height: ') == 2
