"""The tick cache a report plot is drawn under and the ticks it copies (tickcache.py): the same
PNG as matplotlib draws without them, with far fewer tick updates, and matplotlib's own methods
back after them."""

from __future__ import annotations

import contextlib
from collections import Counter

import pytest

from iolab.pages.report import plot_style
from iolab.pages.report.tickcache import tick_work_cached, ticks_cloned

# The report's plots are vector drawings now (vfigure.py); the matplotlib plots left draw with
# plot_style's figure, formatters and PNG as these do: log axes with minor ticks, titles,
# legends beside the axes, a shaded span, category labels given their own font size.


def log_log() -> bytes:
    with plot_style.styled():
        fig = plot_style._figure(150)
        for ax, log in zip(fig.subplots(2, 1), (False, True)):
            ax.plot(
                (0.5, 1, 2, 4, 8, 16, 32), (9e4, 8e4, 4e4, 2.1e4, 2e4, 1.9e4, 2e4), marker="o", ms=2.5, label="IOPS"
            )
            ax.set_xlabel("time (minutes)")
            ax.set_ylabel("IOPS")
            if log:
                ax.set_xscale("log")
                ax.set_yscale("log")
                plot_style._log_ticks(ax, "y")
                plot_style._log_ticks(ax, "x")
            else:
                plot_style._thousands(ax)
            ax.set_title(f"IOPS vs time — {'log–log' if log else 'linear'}")
            plot_style.legend_right(ax)
        return plot_style._png(fig)


def shaded_span() -> bytes:
    with plot_style.styled():
        fig = plot_style._figure(120)
        ax = fig.subplots()
        ax.axvspan(1.2, 1.8, color="#999", alpha=0.25, lw=0, label="host idle")
        ax.plot((0, 1, 2, 3), (1e5, 7e4, 4.1e4, 6e3), marker="o", ms=2.5, label="read")
        ax.plot((0, 1, 2, 3), (9e4, 5e4, 3e4, 4e3), marker="o", ms=2.5, label="write")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("IOPS")
        plot_style._thousands(ax)
        ax.set_title("IOPS over time")
        plot_style.legend_right(ax)
        return plot_style._png(fig)


def category_bars() -> bytes:
    cats = ["sequential read 128 KiB", "random write 4 KiB", "random", "mixed", "other"]
    with plot_style.styled():
        fig = plot_style._figure(100)
        ax = fig.subplots()
        ax.bar(range(len(cats)), [1.0, 2, 3, 4, 5], 0.76, label="read")
        ax.set_xticks(range(len(cats)), cats, fontsize=7)
        ax.set_ylabel("IOPS")
        plot_style._thousands(ax)
        ax.set_title("bars")
        plot_style.legend_right(ax)
        return plot_style._png(fig)


CASES = [log_log, shaded_span, category_bars]


@pytest.mark.parametrize("helper", ["tick_work_cached", "ticks_cloned"])
@pytest.mark.parametrize("plot", CASES, ids=[c.__name__ for c in CASES])
def test_the_plot_draws_the_same_png_as_without_the_helper(monkeypatch, helper, plot):
    helped = plot()
    monkeypatch.setattr(plot_style, helper, contextlib.nullcontext)
    assert plot() == helped  # pixels and the geometry record the PNG carries


def test_cache_updates_each_axis_once_per_layout_state(monkeypatch):
    from matplotlib.axis import Axis

    calls: list[int] = []
    own = Axis._update_ticks
    monkeypatch.setattr(Axis, "_update_ticks", lambda axis: (calls.append(id(axis)), own(axis))[1])
    monkeypatch.setattr(plot_style, "tick_work_cached", contextlib.nullcontext)
    log_log()
    uncached = len(calls)
    monkeypatch.undo()
    monkeypatch.setattr(Axis, "_update_ticks", lambda axis: (calls.append(id(axis)), own(axis))[1])
    calls.clear()
    log_log()
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
