"""The tick cache a report plot is drawn under and the ticks it copies (tickcache.py): the same
PNG as matplotlib draws without them, with far fewer tick updates, and matplotlib's own methods
back after them."""

from __future__ import annotations

import contextlib
from collections import Counter

import pytest

from iolab.pages.report import plot_style, plots
from iolab.pages.report.plot_style import Series
from iolab.pages.report.tickcache import tick_work_cached, ticks_cloned

# log axes with minor ticks, titles, legends beside the axes; a linear plot with a shaded span
CASES = [
    (
        plots.time_series_pair,
        (
            [Series("IOPS", (0.5, 1, 2, 4, 8, 16, 32), (9e4, 8e4, 4e4, 2.1e4, 2e4, 1.9e4, 2e4), (6,))],
            "time (minutes)",
            "IOPS",
            "IOPS vs time",
        ),
    ),
    (
        plots.timeline_with_gaps,
        (
            [Series("read", (0, 1, 2, 3), (1e5, 7e4, 4.1e4, 6e3)), Series("write", (0, 1, 2, 3), (9e4, 5e4, 3e4, 4e3))],
            [(1.2, 1.8)],
            "time (s)",
            "IOPS",
            "IOPS over time",
            "host idle",
        ),
    ),
]


# category labels given their own font size (the heat map, with its colour bar's log axis, is
# vector shapes now: vgrid.py, no matplotlib ticks)
MORE = [
    (
        plots.grouped_bars,
        (
            ["sequential read 128 KiB", "random write 4 KiB", "random", "mixed", "other"],
            [("read", [1.0, 2, 3, 4, 5])],
            "IOPS",
            "bars",
        ),
    ),
]


@pytest.mark.parametrize("helper", ["tick_work_cached", "ticks_cloned"])
@pytest.mark.parametrize(("plot", "args"), CASES + MORE, ids=["time_series_pair", "timeline_with_gaps", "grouped_bars"])
def test_the_plot_draws_the_same_png_as_without_the_helper(monkeypatch, helper, plot, args):
    helped = plot.__wrapped__(*args)
    monkeypatch.setattr(plot_style, helper, contextlib.nullcontext)
    assert plot.__wrapped__(*args) == helped  # pixels and the geometry record the PNG carries


def test_cache_updates_each_axis_once_per_layout_state(monkeypatch):
    from matplotlib.axis import Axis

    calls: list[int] = []
    own = Axis._update_ticks
    monkeypatch.setattr(Axis, "_update_ticks", lambda axis: (calls.append(id(axis)), own(axis))[1])
    plot, args = CASES[0]
    monkeypatch.setattr(plot_style, "tick_work_cached", contextlib.nullcontext)
    plot.__wrapped__(*args)
    uncached = len(calls)
    monkeypatch.undo()
    monkeypatch.setattr(Axis, "_update_ticks", lambda axis: (calls.append(id(axis)), own(axis))[1])
    calls.clear()
    plot.__wrapped__(*args)
    # the layout's two passes and the draw: three states of each axis at most
    assert max(Counter(calls).values()) <= 3, Counter(calls)
    assert len(calls) * 4 < uncached, (len(calls), uncached)


@pytest.mark.parametrize(
    ("helper", "names"),
    [
        (tick_work_cached, ("_update_ticks", "_get_ticklabel_bboxes")),
        (ticks_cloned, ("get_major_ticks", "get_minor_ticks")),
    ],
)
def test_matplotlib_methods_are_back_after_the_block_even_on_error(helper, names):
    from matplotlib.axis import Axis

    own = [getattr(Axis, n) for n in names]
    with pytest.raises(RuntimeError), helper():
        assert [getattr(Axis, n) for n in names] != own
        raise RuntimeError("drawing failed")
    assert [getattr(Axis, n) for n in names] == own
