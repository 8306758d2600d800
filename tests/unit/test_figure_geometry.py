"""Report figures measured as drawn (the shapes of a plot iolab draws itself): axis labels inside the figure, legends off the bars, tick
labels apart, whole-number ticks on round axes."""

from __future__ import annotations

import math

import pytest

from iolab.core.results import Histogram
from iolab.pages.report import difference_plots, latency_plots, rwsw_plots, vaxes, vfigure
from iolab.pages.report.plot_style import Series
from iolab.pages.report.rwsw_plots import Panel

# the 3D column plot is vector shapes now: tests/unit/test_vgrid.py holds its labels inside the figure


def test_latency_histogram_legend_is_off_the_bars():
    from iolab.pages.report.vector import Clip, Line

    values = [10 * 1.05**i for i in range(200)]
    counts = [int(1e6 * math.exp(-(((i - 40) / 12) ** 2))) + (3 if i > 60 else 0) for i in range(200)]
    h = Histogram(tuple(values), tuple(counts), values[-1])
    d = latency_plots.latency_histogram([("", h)], "write rounds: round 3", 120, marks=(99, 99.9))
    px = vfigure.PX_PER_MM  # the record's pixels per mm
    legend = [t["box"] for t in d.record["texts"] if t["role"] == "legend"]
    assert [t["text"] for t in d.record["texts"] if t["role"] == "legend"] == [
        "IOs per bin",
        "99 / 99.9 % marks",
        "cumulative %",
    ]
    top = next(s for s in d.shapes if isinstance(s, Clip))  # the histogram's axes
    bars = [s for s in top.shapes if isinstance(s, Line) and s.stroke == vaxes.on_white("#1f77b4", 0.8)]
    assert bars
    strokes = [(a, b) for bar in bars for a, b in zip(bar.points, bar.points[1:]) if a[0] == b[0]]  # upright
    assert len(strokes) > 50
    for x0, y0, x1, y1 in legend:
        for (bx, by0), (_, by1) in strokes:
            assert not (x0 <= bx * px <= x1 and min(by0, by1) * px < y1 and max(by0, by1) * px > y0), (bx, x0)
        # nor over the cumulative axis' label beside the plot
        [label] = [t["box"] for t in d.record["texts"] if t["text"] == "cumulative IOs (%)"]
        assert x0 >= label[2] or y0 >= label[3] or x1 <= label[0] or y1 <= label[1]


def test_outstanding_io_tick_labels_do_not_overprint():
    """TC × QD levels 32 and 36 are close on a log axis: one of them is left unlabelled."""
    xs = (1.0, 2.0, 4.0, 8.0, 16.0, 24.0, 32.0, 36.0, 48.0, 64.0, 128.0, 256.0)
    s = (Series("every point", xs, tuple(1000 * x**0.5 for x in xs)),)
    d = rwsw_plots.panels([Panel("IOPS", "IOPS", s), Panel("MB/s", "MB/s", s)], "total outstanding IO", 140, True)
    labels = [t for t in d.record["texts"] if t["role"] == "xtick" and t["axes"] == 1]
    assert len(labels) >= 8 and labels[0]["text"] == "1"
    for a, b in zip(labels, labels[1:]):
        assert a["box"][2] < b["box"][0], [t["text"] for t in labels]


@pytest.mark.parametrize("xlabel", ["round", "interval"])
def test_comparison_round_axes_have_whole_number_ticks(xlabel):
    short = [Series("Acme", (1, 2, 3), (100.0, 110.0, 120.0)), Series("Bolt", (1, 2), (200.0, 190.0))]
    long = [Series(s.label, tuple(range(1, 26)), tuple(100.0 + k for k in range(25))) for s in short]
    for series in (short, long):
        d = difference_plots.difference_from_mean(series, xlabel, "IOPS", f"IOPS per {xlabel}")
        top, bottom = (ax["x"] for ax in d.record["axes"])
        ticks = [v for v, _ in bottom["ticks"]]
        assert len(ticks) >= 3 and all(float(t).is_integer() for t in ticks), ticks
        assert top["ticks"] == [] and top["label"] == ""  # the panels share the x axis: the bottom one labels it


def test_panels_over_rounds_have_whole_number_ticks():
    s = (Series("IOPS", (1.0, 2.0, 3.0), (5.0, 6.0, 7.0)),)
    d = rwsw_plots.panels([Panel("IOPS per round", "IOPS", s)], "round", 80)
    ticks = d.record["axes"][-1]["x"]["ticks"]
    assert ticks and all(float(v).is_integer() for v, _ in ticks), ticks
