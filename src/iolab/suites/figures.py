"""What the tests' key figures are built from. Each test declares its key figures in its own
module (`key_figures`, named in its TEST); these getters read one figure from one drive's
phases, or None when that drive did not measure it (the column is left unranked for it,
never filled with a made-up value)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from iolab.core.cellschema import CELL_COLUMNS, CellRow
from iolab.core.units import counted, measurable, too_few_ios
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


# The latency percentile each exported column holds ("p99_999_us": 99.999)
_PCT_OF = {c.export_name: c.pct for c in CELL_COLUMNS if c.pct is not None}


@dataclass(frozen=True)
class _Figure:
    """`attr` of what `find` picks from one drive's phases (a cell, the replay's totals), or the
    `pct` percentile of its histogram when the IOs measured it; `unmeasured` says why a
    percentile is None, so a page can answer "too few IOs" where it would otherwise only know
    that the run has no value (pages/outcome.py stores it with the figure)."""

    find: Callable[[list[PhaseSummary]], Any]
    attr: str | None
    pct: float | None = None
    # what the value is of where its name may claim more (KeyMetric.note); None: nothing to say
    said: Callable[[list[PhaseSummary]], str] | None = None
    # why `find` found nothing, where the test knows (every interval cut short by a write budget)
    missing: Callable[[list[PhaseSummary]], str] | None = None
    # the phase the value is measured in, where the getter names one: its steady-state caveats
    # are that phase's alone (pages/report/header.figure_caveats)
    phase: str | None = None

    def note(self, phases: list[PhaseSummary]) -> str:
        return self.said(phases) if self.said is not None else ""

    def __call__(self, phases: list[PhaseSummary]) -> float | None:
        x = self.find(phases)
        if x is None:
            return None
        if self.pct is not None:
            return x.histogram.measured(self.pct) if x.histogram is not None else None
        return getattr(x, self.attr) if self.attr is not None else None

    def unmeasured(self, phases: list[PhaseSummary]) -> str:
        """Why the percentile is not measured, or why there is nothing to read it from ('' when
        it is measured, or the test cannot say)."""
        if self.missing is not None and self.find(phases) is None:
            return self.missing(phases)
        ios = self.unmeasured_ios(phases)
        pct = self.pct if self.pct is not None else _PCT_OF.get(self.attr or "")
        why = too_few_ios(pct, ios) if ios is not None and pct is not None else ""
        return f"{why} ({note})" if why and (note := self.note(phases)) else why

    def unmeasured_ios(self, phases: list[PhaseSummary]) -> int | None:
        """The IOs too few to measure the percentile (None when it is measured, or is no percentile)."""
        x = self.find(phases)
        pct = self.pct if self.pct is not None else _PCT_OF.get(self.attr or "")
        hist = getattr(x, "histogram", None)
        if pct is None or hist is None or measurable(pct, hist.total):
            return None
        return int(hist.total)


def figure(
    find: Callable[[list[PhaseSummary]], Any],
    attr: str | None,
    pct: float | None = None,
    note: Callable[[list[PhaseSummary]], str] | None = None,
    missing: Callable[[list[PhaseSummary]], str] | None = None,
) -> Getter:
    return _Figure(find, attr, pct, note, missing)


def no_full_interval(ph: PhaseSummary | None) -> str:
    """Why a phase run to a write budget has no interval figure: the budget ran out before any
    interval ran its planned length ('' when one did). An interval the budget cut short is shown
    but is no sample of the planned stimulus (run/budget.py), so a small drive's WSAT whose 4x
    capacity went in a second printed its figures as a bare "—" with no reason anywhere."""
    if ph is None or not ph.rows or any(not r.partial for r in ph.rows):
        return ""
    return (
        f"none of its {counted(len(ph.rows), 'interval')} ran its planned length: the write budget ran "
        "out first, and an interval the budget cut short is no sample of the stimulus"
    )


def from_cell(mix: str, bs: int, attr: str, name: str | None = None) -> Getter:
    return _Figure(lambda phases: cell(phases, mix, bs, name), attr, phase=name)


def peak(name: str, attr: str = "iops") -> Getter:
    """The highest `attr` of any cell of the phase `name`."""

    def get(phases: list[PhaseSummary]) -> float | None:
        ph = phase(phases, name)
        vals = [getattr(c, attr) for c in ph.cells] if ph else []
        return max(vals) if vals else None

    return get


@dataclass(frozen=True)
class _LastRoundPct:
    """The `pct` percentile (`attr`, as stored) of the last round of the phase `name`, when that
    round's IOs measure it; `unmeasured` says why not (a QoS run's "last round 99.99 %" printed a
    bare "—" for its 20,337 IOs)."""

    name: str
    pct: float
    attr: str

    def _last(self, phases: list[PhaseSummary]) -> CellRow | None:
        ph = phase(phases, self.name)
        return ph.rows[-1] if ph and ph.rows else None

    def __call__(self, phases: list[PhaseSummary]) -> float | None:
        r = self._last(phases)
        return getattr(r, self.attr) if r is not None and measurable(self.pct, r.ios) else None

    def unmeasured_ios(self, phases: list[PhaseSummary]) -> int | None:
        r = self._last(phases)
        return int(r.ios) if r is not None and r.ios and not measurable(self.pct, r.ios) else None

    def unmeasured(self, phases: list[PhaseSummary]) -> str:
        ios = self.unmeasured_ios(phases)
        return too_few_ios(self.pct, ios) if ios is not None else ""


def last_round_pct(name: str, pct: float, attr: str) -> Getter:
    return _LastRoundPct(name, pct, attr)


def rounds(name: str, fn: Callable[[list[CellRow]], float | None]) -> Getter:
    """`fn` of the stored rounds (cells) of the phase `name`, in the order run."""

    def get(phases: list[PhaseSummary]) -> float | None:
        ph = phase(phases, name)
        return fn(list(ph.rows)) if ph and ph.rows else None

    return get
