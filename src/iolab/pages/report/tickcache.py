"""matplotlib's tick work done once per layout state while one figure is drawn.

A figure drawn with the constrained layout asks each axis for its ticks and their labels' boxes
many times over: each of the layout's two passes measures every axes, the title of an axes
measures its twins' axes, an axis label its siblings' tick labels, and the draw asks again. A
quick latency report's histogram figure updated its 6 axes' ticks 104 times, 16 of them for a
new layout state (each axis's place or range moved since its last update).
Between two moves of the axes nothing those answers depend on changes, so `tick_work_cached`
keeps each axis's latest answer with what it depends on (its view interval, its axes' box in
pixels, the dpi, its locators, formatters and scale) and recomputes it only when one of those
moved: the same ticks, labels and boxes, so the same pixels (checked byte for byte on every plot of a quick
latency report and a characterise sequence report), at about a fifth less CPU per plot.

`ticks_cloned` makes each new tick of an axis a copy of its first one instead of building it
anew (see there).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


def _state(axis: Any) -> tuple[Any, ...] | None:
    """What an axis's ticks and their labels' boxes depend on; None for a 3D axis, whose tick
    labels move with the projection at each draw (never cached)."""
    ax = axis.axes
    if getattr(ax, "name", "") == "3d":
        return None
    return (
        tuple(axis.get_view_interval()),
        tuple(ax.bbox.bounds),
        axis.get_figure(root=True).dpi,
        id(axis.major.locator),
        id(axis.major.formatter),
        id(axis.minor.locator),
        id(axis.minor.formatter),
        id(axis._scale),
    )


@dataclass
class _Latest:
    """An axis's ticks as last updated, the state they were updated for, and their labels'
    boxes: the tick objects are the axis's own, moved by every update, so only the latest
    state's answer is ever true (states A, B, A update the ticks again)."""

    state: tuple[Any, ...]
    ticks: list[Any]
    boxes: dict[tuple[int, ...], tuple[list[Any], list[Any]]] = field(default_factory=dict)


@contextmanager
def tick_work_cached() -> Iterator[None]:
    """Inside, `Axis._update_ticks` and `Axis._get_ticklabel_bboxes` answer from a cache kept
    for this block only (one figure's draw): matplotlib's own methods are put back on exit."""
    from matplotlib import axis as mpl_axis

    Axis: Any = mpl_axis.Axis  # its private methods are not in matplotlib's type stubs
    update_own: Callable[[Any], list[Any]] = Axis._update_ticks
    boxes_own: Callable[[Any, list[Any], Any], tuple[list[Any], list[Any]]] = Axis._get_ticklabel_bboxes
    latest: dict[int, _Latest] = {}

    def update_ticks(axis: Any) -> list[Any]:
        state = _state(axis)
        if state is None:
            return update_own(axis)
        now = latest.get(id(axis))
        if now is None or now.state != state:
            now = latest[id(axis)] = _Latest(state, update_own(axis))
        return list(now.ticks)  # the caller's own list, as matplotlib's returns a new one

    def ticklabel_bboxes(axis: Any, drawn: list[Any], renderer: Any) -> tuple[list[Any], list[Any]]:
        now = latest.get(id(axis))
        if now is None or now.state != _state(axis):  # ticks not updated here for this state
            return boxes_own(axis, drawn, renderer)
        key = (id(renderer), *map(id, drawn))
        if key not in now.boxes:
            now.boxes[key] = boxes_own(axis, drawn, renderer)
        b1, b2 = now.boxes[key]
        return [b.frozen() for b in b1], [b.frozen() for b in b2]  # copies: a caller may move a box

    with _axis_methods_replaced(_update_ticks=update_ticks, _get_ticklabel_bboxes=ticklabel_bboxes):
        yield


@contextmanager
def _axis_methods_replaced(**methods: Callable[..., Any]) -> Iterator[None]:
    """`matplotlib.axis.Axis`'s methods of these names replaced inside, its own put back on exit."""
    from matplotlib import axis as mpl_axis

    own = {name: getattr(mpl_axis.Axis, name) for name in methods}
    for name, method in methods.items():
        setattr(mpl_axis.Axis, name, method)
    try:
        yield
    finally:
        for name, method in own.items():
            setattr(mpl_axis.Axis, name, method)


_TICK_PARTS = ("tick1line", "tick2line", "gridline", "label1", "label2")


def _clone(src: Any) -> Any:
    """A new tick as matplotlib would make it from `src` (a new `Tick` whose parts then take
    `src`'s properties, `Axis._copy_tick_props`), copied instead: `src` and its five parts
    shallow-copied, each part with its own callbacks and, for a label, its own font (a label's
    font is changed in place). What a part holds of its own beyond that (its data, path and
    transformed path, text, position) is replaced when the tick is moved to its place
    (`Tick.update_position`, then the label's text set) before anything reads it."""
    from matplotlib import cbook

    tick = copy.copy(src)
    tick._callbacks = cbook.CallbackRegistry(signals=["pchanged"])
    for name in _TICK_PARTS:
        part = copy.copy(getattr(src, name))
        part._callbacks = cbook.CallbackRegistry(signals=["pchanged"])
        if name.startswith("label"):
            part._fontproperties = part._fontproperties.copy()
        setattr(tick, name, part)
    return tick


@contextmanager
def ticks_cloned() -> Iterator[None]:
    """Inside, `Axis.get_major_ticks` and `get_minor_ticks` make the ticks an axis lacks as
    copies of its first tick (`_clone`): matplotlib builds each one in full (three lines with
    their markers, two texts, every property looked up in rcParams) and then copies the first
    tick's properties over it, about 0.5 ms a tick, and a log axis has dozens of minor ticks
    (the latency histogram 150 to 200 ticks, about a fifth of its CPU). Ticks are the same to the
    pixel (checked byte for byte on every plot of a quick latency, iops and characterise sequence
    report); matplotlib's own methods are put back on exit."""

    def more(ticks: list[Any], numticks: int) -> list[Any]:
        while len(ticks) < numticks:  # the list holds its first tick once read (matplotlib's _LazyTickList)
            ticks.append(_clone(ticks[0]))
        return ticks[:numticks]

    def get_major_ticks(axis: Any, numticks: int | None = None) -> list[Any]:
        return more(axis.majorTicks, len(axis.get_majorticklocs()) if numticks is None else numticks)

    def get_minor_ticks(axis: Any, numticks: int | None = None) -> list[Any]:
        return more(axis.minorTicks, len(axis.get_minorticklocs()) if numticks is None else numticks)

    with _axis_methods_replaced(get_major_ticks=get_major_ticks, get_minor_ticks=get_minor_ticks):
        yield
