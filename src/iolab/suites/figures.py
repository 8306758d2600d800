"""What the tests' key figures are built from. Each test declares its key figures in its own
module (`key_figures`, named in its TEST); these getters read one figure from one drive's
phases, or None when that drive did not measure it (the column is left unranked for it,
never filled with a made-up value)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from iolab.core.cellschema import CellRow
from iolab.figures.compare import KeyMetric
from iolab.figures.summary import CellAverage, PhaseSummary

Getter = Callable[[list[PhaseSummary]], float | None]
# What `key_figures` is given: each compared run's phase summaries.
Runs = Sequence[list[PhaseSummary]]
# What `key_figures` returns: the summary table's columns, each read from one drive's phases.
Metrics = tuple[KeyMetric[list[PhaseSummary]], ...]


def phase(phases: list[PhaseSummary], name: str) -> PhaseSummary | None:
    return next((p for p in phases if p.phase.name == name), None)


def cell(phases: list[PhaseSummary], mix: str, bs: int, name: str | None = None) -> CellAverage | None:
    """The cell of this mix and block size (in the phase `name`, or the first phase that has one)."""
    for ph in phases:
        if name is not None and ph.phase.name != name:
            continue
        c = ph.cell(mix, bs)
        if c is not None:
            return c
    return None


def figure(find: Callable[[list[PhaseSummary]], Any], attr: str | None, pct: float | None = None) -> Getter:
    """`attr` of what `find` picks from one drive's phases (a cell, the replay's totals), or the
    `pct` percentile of its histogram when the IOs measured it."""

    def get(phases: list[PhaseSummary]) -> float | None:
        x = find(phases)
        if x is None:
            return None
        if pct is not None:
            return x.histogram.measured(pct) if x.histogram is not None else None
        return getattr(x, attr) if attr is not None else None

    return get


def from_cell(mix: str, bs: int, attr: str, name: str | None = None) -> Getter:
    return figure(lambda phases: cell(phases, mix, bs, name), attr)


def peak(name: str, attr: str = "iops") -> Getter:
    """The highest `attr` of any cell of the phase `name`."""

    def get(phases: list[PhaseSummary]) -> float | None:
        ph = phase(phases, name)
        vals = [getattr(c, attr) for c in ph.cells] if ph else []
        return max(vals) if vals else None

    return get


def rounds(name: str, fn: Callable[[list[CellRow]], float | None]) -> Getter:
    """`fn` of the stored rounds (cells) of the phase `name`, in the order run."""

    def get(phases: list[PhaseSummary]) -> float | None:
        ph = phase(phases, name)
        return fn(list(ph.rows)) if ph and ph.rows else None

    return get
