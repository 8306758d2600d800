"""Ticks made by copying (tickcache.ticks_cloned, inside plot_style.styled): each axis builds
its first tick only, a copy has parts and a font of its own, and the geometry record asks no
hidden axis for its ticks. (The same PNG as without the copies: test_tickcache.py.)"""

from __future__ import annotations

from tests.unit.test_tickcache import CASES


def test_an_axis_builds_its_first_tick_only(monkeypatch):
    from matplotlib.axis import Tick

    built: list[bool] = []
    own = Tick.__init__

    def init(tick, *args, **kwargs):
        built.append(bool(kwargs.get("major", True)))
        own(tick, *args, **kwargs)

    monkeypatch.setattr(Tick, "__init__", init)
    CASES[0]()
    # 4 axes (two panels, one of them log-log), each a first major and minor tick at most;
    # built one by one the log axes made dozens
    assert 0 < len(built) <= 8, len(built)


def test_the_geometry_record_asks_no_hidden_axis_for_its_ticks(monkeypatch):
    from matplotlib.axis import Axis

    hidden: list[str] = []
    own = Axis._update_ticks

    def update(axis):
        if not axis.get_visible():
            hidden.append(axis.axis_name)
        return own(axis)

    monkeypatch.setattr(Axis, "_update_ticks", update)
    from iolab.pages.report import plot_style

    with plot_style.styled():
        fig = plot_style._figure(80)
        ax = fig.subplots()
        ax.plot([1, 10, 100], [5, 50, 500])
        twin = ax.twinx()  # a twin axes hides its x axis
        twin.plot([1, 10, 100], [0, 50, 100])
        assert not twin.xaxis.get_visible()
        plot_style._png(fig)
    assert hidden == []


def test_a_copied_tick_has_parts_and_a_font_of_its_own():
    from matplotlib.figure import Figure

    from iolab.pages.report.tickcache import ticks_cloned

    with ticks_cloned():
        first, second = Figure().subplots().xaxis.get_major_ticks(2)
    second.label1.set_fontsize(20)  # one label made bigger (matplotlib changes a font in place)
    second.gridline.set_color("red")
    assert first.label1.get_fontsize() != 20 and first.gridline.get_color() != "red"
    assert {id(getattr(first, p)) for p in ("tick1line", "tick2line", "gridline", "label1", "label2")}.isdisjoint(
        {id(getattr(second, p)) for p in ("tick1line", "tick2line", "gridline", "label1", "label2")}
    )
