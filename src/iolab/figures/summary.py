"""Results of a stored run as the reports show them: measurement-window averages per cell,
the steady-state table, and the run's completeness. Reads only the store."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

from iolab.core.cellschema import AVERAGED, CellRow, fold
from iolab.core.results import Histogram
from iolab.core.steady import SteadyRule, SteadyState, VariableVerdict, phase_steady_state, phase_verdict
from iolab.core.units import counted
from iolab.store import bulk as storebulk
from iolab.store.runstore import PhaseRow, RunStore


@dataclass(frozen=True)
class CellAverage:
    """One table entry: a cell averaged over the measurement-window rounds. Its figures
    are the cells-table columns cellschema marks as averaged (same names), folded over the
    window as declared there, plus the window's merged histogram."""

    key: str
    mix: str | None
    block_size: int | None
    rounds: tuple[int, ...]
    iops: float
    read_iops: float
    write_iops: float
    mbps: float
    read_mbps: float
    write_mbps: float
    lat_mean_us: float | None  # ART: mean of the per-round means
    lat_max_us: float | None  # MRT: the maximum over the window
    p99_999_us: float | None  # from the window's merged histogram (exact, not an average of percentiles)
    histogram: Histogram | None
    idle_before_s: float | None = None  # the device idled this long before the cell

    @property
    def ios(self) -> int | None:
        """The IOs of the window's merged histogram, which its percentiles are read from."""
        return self.histogram.total if self.histogram is not None else None


@dataclass(frozen=True)
class PhaseSummary:
    phase: PhaseRow
    rounds: tuple[int, ...]  # complete measurement rounds
    window: tuple[int, ...]  # measurement window (last 5 complete rounds)
    steady: bool | None
    verdicts: tuple[VariableVerdict, ...]
    cells: tuple[CellAverage, ...]  # in the plan's loop order
    mixes: tuple[str, ...]
    block_sizes: tuple[int, ...]
    rows: tuple[CellRow, ...]  # every complete measurement cell, for time series
    # what the phase's stop rule or builder decided (manifest.decisions), so figures read the
    # run's own decision instead of replaying a rule with defaults
    decisions: tuple[dict, ...] = ()
    # the test's own parameters as the run used them (manifest plan.values; empty for runs
    # stored before it held them), so a figure reads the run's setting, not today's default
    values: Mapping[str, Any] = field(default_factory=dict)
    # the run directory the phase was read from, for figures of its per-second series
    run_dir: Path | None = None
    # tracking variables reported with their own verdict that do not decide `steady`
    shown_only: frozenset[str] = frozenset()
    # the plan gave the phase tracking variables: `steady` None then means its rounds never
    # filled a window (not evaluated), not that it tracks nothing
    tracks: bool = False
    # the plan runs the phase to its budget or round limit whatever its verdict (Write
    # Saturation, XSR's groups): its steady state is evidence reported for information, never a
    # goal the phase missed, so every place that words it says so (header, show, comparisons)
    reports_only: bool = False
    # the steady-state rule the run was told to use (its stored profile: --strict-steady …), so a
    # verdict a figure makes of its own (a consistency run's steady part) is made by the run's rule
    rule: SteadyRule = field(default_factory=SteadyRule)
    # reached / not-reached / not-evaluated / not-applicable, from `steady` and `tracks` here
    # once (core/steady.py), so the terminal, the report and the endurance basis cannot word a
    # phase that tracks nothing as one never judged; not an argument, so `replace` recomputes it
    steady_state: SteadyState = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "steady_state", phase_steady_state(self.steady, self.tracks))

    def not_accepted(self) -> str | None:
        """Why a window that passes the rule's range and slope was not accepted as steady state
        (too little written since the purge, the phase's own write minimum, no garbage collection
        yet, a range cut below the drive's): the clause the runner added to the stop reason
        (phaseend.turned_down), without its "the window passed, but"; "" when the reason is not
        stored so; None when the phase is steady, its window fails the rule, or it tracks nothing."""
        deciding = [v for v in self.verdicts if v.name not in self.shown_only]
        if self.steady is not False or not deciding or not all(v.steady for v in deciding):
            return None
        clauses = (self.phase.stop_reason or "").split("; ")
        why = "; ".join(c for c in clauses if not c.startswith("reached the round limit"))
        return re.sub(r"^steady state not reached: the window( \(rounds [\d-]+\))? passed, but ", "", why)

    def cell(self, mix: str, block_size: int) -> CellAverage | None:
        for c in self.cells:
            if c.mix == mix and c.block_size == block_size:
                return c
        return None


def interval_label(r: CellRow) -> str:
    """An interval's number in a table, with its true length when it is partial."""
    return f"{r.round} (partial, {r.runtime_s:.3g} s)" if r.partial else str(r.round)


def rounds_count(ph: PhaseSummary) -> str:
    """How many rounds a phase measured: a partial interval is counted as such, not as complete."""
    partial = sorted(
        {r.round: r for r in ph.rows if r.partial and r.round in ph.rounds}.values(), key=lambda r: r.round
    )
    text = f"{counted(len(ph.rounds) - len(partial), 'complete round')}"
    # "and", not "then": the interval before the budget's last one can be partial too (run/budget.py)
    return text + "".join(f" and round {interval_label(r)}" for r in partial)


@dataclass
class _PhaseData:
    """What a phase's summaries read from results.db, read once per version of the database."""

    rows: list[CellRow]
    rounds: tuple[int, ...]
    verdicts: tuple[VariableVerdict, ...]
    histograms: dict[int, Histogram | None] = field(default_factory=dict)  # by cell id, as fetched
    cells: dict[tuple[int, ...], tuple[CellAverage, ...]] = field(default_factory=dict)  # by window


# Per open store: the database version read (RunStore.data_version) and each phase's data. A run
# summarises a phase for its table, its --json record and the record's per-round figures; each of
# those read the same rows and histograms again (840 histogram queries for a quick iops run). Any
# write to results.db changes the version and drops what was kept, so a summary never outlives
# the data it came from; the manifest's parts are read afresh on every call.
_kept: WeakKeyDictionary[RunStore, tuple[tuple[int, int], dict[str, _PhaseData]]] = WeakKeyDictionary()


def _phase_data(store: RunStore, phase: str) -> _PhaseData:
    version = store.data_version()
    kept = _kept.get(store)
    if kept is None or kept[0] != version:
        kept = (version, {})
        _kept[store] = kept
    data = kept[1].get(phase)
    if data is None:
        data = _PhaseData(store.cells(phase), tuple(store.complete_rounds(phase)), tuple(store.steady_rows(phase)))
        kept[1][phase] = data
    return data


def _window_cells(store: RunStore, data: _PhaseData, window: tuple[int, ...]) -> tuple[CellAverage, ...]:
    """The window's cell averages, in the plan's loop order (computed once per window)."""
    if window in data.cells:
        return data.cells[window]
    in_window = [r for r in data.rows if r.round in window and not r.partial]
    missing = [r.id for r in in_window if r.id not in data.histograms]
    if missing:
        found = storebulk.histograms(store, missing)
        data.histograms.update({cid: found.get(cid) for cid in missing})
    order: list[str] = []
    by_key: dict[str, list[CellRow]] = {}
    for r in in_window:
        if r.cell_key not in by_key:
            order.append(r.cell_key)
        by_key.setdefault(r.cell_key, []).append(r)
    cells = []
    for key in order:
        rs = by_key[key]
        hists = [h for h in (data.histograms[r.id] for r in rs) if h is not None]
        merged = Histogram.merge(hists) if hists else None
        # each averaged column's window value, under its CellAverage field of the same name
        averages: dict[str, Any] = {c.name: fold(c, [getattr(r, c.name) for r in rs]) for c in AVERAGED}
        cells.append(
            CellAverage(
                key=key,
                mix=rs[0].mix,
                block_size=rs[0].block_size,
                rounds=tuple(r.round for r in rs),
                **averages,
                p99_999_us=merged.measured(99.999) if merged else None,
                histogram=merged,
                idle_before_s=rs[0].idle_before_s,
            )
        )
    data.cells[window] = tuple(cells)
    return data.cells[window]


def summarise_phase(
    store: RunStore, phase: PhaseRow, window_size: int = 5, window: tuple[int, ...] | None = None
) -> PhaseSummary:
    """`window`: average these rounds instead of the measurement window (one round alone, for
    its own figures)."""
    data = _phase_data(store, phase.name)
    rows, rounds, verdicts = data.rows, data.rounds, data.verdicts
    # A partial interval (ended by a byte budget) is shown but never averaged as a window round.
    partial = {c.round for c in rows if c.partial}
    full = [r for r in rounds if r not in partial]
    if window is None:
        window = verdicts[0].rounds if verdicts else tuple(full[-window_size:])
    window = tuple(window)
    cells = _window_cells(store, data, window)
    mixes = tuple(dict.fromkeys(c.mix for c in cells if c.mix))
    sizes = tuple(dict.fromkeys(c.block_size for c in cells if c.block_size))
    decisions = tuple(d for d in (store.manifest.decisions if store.manifest else ()) if d.get("phase") == phase.name)
    values = dict(store.manifest.plan.get("values", {})) if store.manifest else {}
    plan_phases = store.manifest.plan.get("phases", ()) if store.manifest else ()
    planned: dict[str, Any] = next((p for p in plan_phases if p.get("name") == phase.name), {})
    shown_only = frozenset(t["name"] for t in planned.get("tracking", ()) if t.get("decides") is False)
    steady = phase_verdict(phase.steady, bool(verdicts))
    return PhaseSummary(
        phase,
        rounds,
        window,
        steady,
        verdicts,
        cells,
        mixes,
        sizes,
        tuple(rows),
        decisions,
        values,
        store.dir,
        shown_only,
        bool(planned.get("tracking")) or steady is not None,
        bool(planned.get("tracking")) and planned.get("stop_on_steady") is False,
        SteadyRule.of_profile(store.manifest.profile) if store.manifest else SteadyRule(),
    )


def unstored_tracking(phases: Sequence[PhaseSummary], plan: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """The plan's phases (manifest plan summary) that track steady state but stored no round: a
    run that failed or was stopped before them. Their state is not-evaluated; the stored plan is
    all that says they track it.

    Every such phase, whether it stops at steady state or only reports it (Write Saturation
    runs to its budget): the run's state (outcome.steady_state) counts a stored phase of either
    kind, so leaving out an unstored reporting one (as the report's own list did) would make a
    Write Saturation run that failed before its first round 'not-applicable', as if the test
    tracked nothing, where the same run finished says reached or not-reached. The report's
    not-evaluated caveat leaves reporting phases out, stored or not, by its own rule
    (RunData.runs_to_budget: their figures never claim a steady state), which it applies to
    this list as to the stored phases."""
    stored = {ph.phase.name for ph in phases}
    return [p for p in (plan or {}).get("phases", ()) if p.get("tracking") and p.get("name") not in stored]


def summarise(store: RunStore) -> list[PhaseSummary]:
    return [summarise_phase(store, ph) for ph in store.phases()]
