"""Report figures measured on the laid-out matplotlib figure, as the PNG is saved: axis labels
inside the figure, legends off the bars, tick labels apart, whole-number ticks on round axes."""

from __future__ import annotations

import math

import pytest

from iolab.core.results import Histogram
from iolab.pages.report import difference_plots, latency_plots, rwsw_plots
from iolab.pages.report.plot_style import Series
from iolab.pages.report.rwsw_plots import Panel


@pytest.fixture
def drawn(monkeypatch):
    """Draw a plot function in this process (not from the cache) and return its figure as saved."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    def draw(module, fn, *args, **kwargs):
        figs = []
        save = module._png
        monkeypatch.setattr(module, "_png", lambda fig: (figs.append(fig), save(fig))[1])
        assert getattr(module, fn).__wrapped__(*args, **kwargs)[:4] == b"\x89PNG"
        fig = figs[0]
        FigureCanvasAgg(fig).draw()  # the same layout again, with a renderer to measure it
        return fig, fig.canvas.get_renderer()

    return draw


# the 3D column plot is vector shapes now: tests/unit/test_vgrid.py holds its labels inside the figure


def test_latency_histogram_legend_is_off_the_bars(drawn):
    values = [10 * 1.05**i for i in range(200)]
    counts = [int(1e6 * math.exp(-(((i - 40) / 12) ** 2))) + (3 if i > 60 else 0) for i in range(200)]
    h = Histogram(tuple(values), tuple(counts), values[-1])
    fig, r = drawn(latency_plots, "latency_histogram", [("", h)], "write rounds: round 3", 120, marks=(99, 99.9))
    legends = [leg for leg in (*fig.legends, *(a.get_legend() for a in fig.axes)) if leg is not None]
    assert legends
    top = fig.axes[0]
    bars = [c for c in top.collections if c.get_label() == "IOs per bin"][0]
    for leg in legends:
        box = leg.get_window_extent(r)
        for seg in bars.get_segments():
            (x0, y0), (_, y1) = top.transData.transform(seg)
            assert not (box.x0 <= x0 <= box.x1 and min(y0, y1) < box.y1 and max(y0, y1) > box.y0), (box, x0)
        # nor over the cumulative axis' label beside the plot
        assert not box.overlaps(fig.axes[-1].yaxis.label.get_window_extent(r))


def test_outstanding_io_tick_labels_do_not_overprint(drawn):
    """TC × QD levels 32 and 36 are close on a log axis: one of them is left unlabelled."""
    xs = (1.0, 2.0, 4.0, 8.0, 16.0, 24.0, 32.0, 36.0, 48.0, 64.0, 128.0, 256.0)
    s = (Series("every point", xs, tuple(1000 * x**0.5 for x in xs)),)
    fig, r = drawn(
        rwsw_plots, "panels", [Panel("IOPS", "IOPS", s), Panel("MB/s", "MB/s", s)], "total outstanding IO", 140, True
    )
    labels = [t for t in fig.axes[-1].get_xticklabels() if t.get_visible() and t.get_text()]
    boxes = [t.get_window_extent(r) for t in labels]
    assert len(labels) >= 8 and labels[0].get_text() == "1"
    for a, b in zip(boxes, boxes[1:]):
        assert a.x1 < b.x0, [t.get_text() for t in labels]


@pytest.mark.parametrize("xlabel", ["round", "interval"])
def test_comparison_round_axes_have_whole_number_ticks(drawn, xlabel):
    series = [Series("Acme", (1, 2, 3), (100.0, 110.0, 120.0)), Series("Bolt", (1, 2), (200.0, 190.0))]
    fig, _ = drawn(difference_plots, "difference_from_mean", series, xlabel, "IOPS", f"IOPS per {xlabel}")
    for ax in fig.axes:
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert ticks and all(float(t).is_integer() for t in ticks), ticks


def test_panels_over_rounds_have_whole_number_ticks(drawn):
    s = (Series("IOPS", (1.0, 2.0, 3.0), (5.0, 6.0, 7.0)),)
    fig, _ = drawn(rwsw_plots, "panels", [Panel("IOPS per round", "IOPS", s)], "round", 80)
    assert all(float(t).is_integer() for t in fig.axes[-1].get_xticks())
