"""Reading stored runs from Python: the public API for notebooks and scripts (docs/python-api.md).

    from iolab.api.results import open_run

    with open_run("runs/20261126-014145-latency-enterprise-sas") as run:
        for f in run.figures():
            print(f.name, f.value, f.unit, f.direction)

A run is opened read-only (nothing in its directory is created or changed, as `iolab show`).
Its figures are the test's key figures (those `iolab compare` ranks and `iolab check` checks),
its cells every measurement cell stored, its phases the steady-state verdicts. The same facts
as `iolab show RUN --json` (outcome.py), as Python objects.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from iolab.api import registry
from iolab.core.cellschema import EXPORTED
from iolab.figures.summary import PhaseSummary, summarise
from iolab.pages.outcome import run_record, steady_state
from iolab.store.manifest import manifest_run_key
from iolab.store.runstore import RunStore


@dataclass(frozen=True)
class Figure:
    """One key figure of a run: `value` is None when the run did not measure it (e.g. a
    99.999 % response time the cells' IOs are too few to give)."""

    name: str
    value: float | None
    unit: str
    direction: str  # "higher-is-better" | "lower-is-better"

    @property
    def higher_is_better(self) -> bool:
        return self.direction == "higher-is-better"


@dataclass(frozen=True)
class Tracking:
    """One steady-state tracking variable of a phase, over its measurement window."""

    variable: str
    rounds: tuple[int, ...]
    values: tuple[float, ...]
    average: float
    range: float
    range_allowed: float
    fit_excursion: float
    fit_allowed: float
    steady: bool
    decides: bool = True  # False: reported with its own verdict; the phase's steady state ignores it


@dataclass(frozen=True)
class PhaseVerdict:
    """A phase's steady state: `steady` is None when the phase tracks nothing (e.g. Write
    Saturation), else whether every deciding tracking variable passed in `window`."""

    name: str
    steady: bool | None
    rounds: int
    window: tuple[int, ...]
    stop_reason: str | None
    tracking: tuple[Tracking, ...]


@dataclass(frozen=True)
class Target:
    """The drive a run measured, as the run stored it."""

    spec: str
    vendor: str | None
    model: str | None
    serial: str | None
    firmware: str | None
    identity: dict[str, Any]


# The cell columns `cells()` gives, in `iolab export`'s order (cells.csv without run_id).
CELL_COLUMNS: tuple[str, ...] = tuple(c.export_name for c in EXPORTED)


class Run:
    """A stored run, open for reading. Use `open_run`; close it (or use `with`) when done."""

    def __init__(self, store: RunStore):
        self._store = store
        m = store.manifest
        assert m is not None  # RunStore.open refuses a directory without one
        self.dir: Path = store.dir
        self.run_id: str = m.run_id
        self.key: str = manifest_run_key(m)  # one run, whichever copy of its directory this is
        self.test: str = m.test
        self.title: str = m.title
        self.started: str = m.started
        self.ended: str | None = m.ended
        facts = m.target.get("facts", {})
        self.target = Target(
            m.target.get("spec", ""),
            facts.get("vendor"),
            facts.get("model"),
            facts.get("serial"),
            facts.get("firmware"),
            dict(m.target.get("identity") or {}),
        )
        # a scaled-down or re-set run (--quick, short cells, other settings) says so wherever
        # its figures are shown (plan.Profile.noncompliance)
        self.compliant: bool = bool(m.compliant)
        self.noncompliance: tuple[str, ...] = tuple(m.noncompliance)
        self._phases: list[PhaseSummary] | None = None

    @property
    def state(self) -> str:
        """complete, failed, interrupted (its writer died) or running."""
        m = self._store.manifest
        assert m is not None
        return "interrupted" if m.state == "running" and not self._store.writer_alive() else m.state

    def _summaries(self) -> list[PhaseSummary]:
        if self._phases is None:
            self._phases = summarise(self._store)
        return self._phases

    def figures(self) -> list[Figure]:
        """The test's key figures, measured over each phase's steady-state window (empty for
        a test not registered in this iolab)."""
        test = registry.find(self.test)
        phases = self._summaries()
        if test is None or test.key_figures is None or not phases:
            return []
        return [
            Figure(m.name, m.get(phases), m.unit, "higher-is-better" if m.higher_is_better else "lower-is-better")
            for m in test.key_figures([phases])
        ]

    def figure(self, name: str) -> Figure:
        """One key figure by its name as `iolab show` prints it; KeyError lists the names."""
        figs = self.figures()
        for f in figs:
            if f.name == name:
                return f
        raise KeyError(
            f"run {self.run_id} ({self.test}) has no figure {name!r}; it has: " + ", ".join(repr(f.name) for f in figs)
        )

    @property
    def steady_state(self) -> str:
        """reached (every phase that tracks steady state reached it), not-reached, not-evaluated or
        not-applicable (outcome.steady_state)."""
        m = self._store.manifest
        return steady_state(self._summaries(), m.plan if m else None)

    def phases(self) -> list[PhaseVerdict]:
        """Each phase's steady-state verdict, in the order the phases ran."""
        return [
            PhaseVerdict(
                ph.phase.name,
                ph.steady,
                len(ph.rounds),
                tuple(ph.window),
                ph.phase.stop_reason,
                tuple(
                    Tracking(
                        v.name,
                        tuple(v.rounds),
                        tuple(v.values),
                        v.average,
                        v.range_measured,
                        v.range_allowed,
                        v.fit_excursion,
                        v.fit_allowed,
                        v.steady,
                        v.name not in ph.shown_only,
                    )
                    for v in ph.verdicts
                ),
            )
            for ph in self._summaries()
        ]

    def cells(self, phase: str | None = None) -> list[dict[str, Any]]:
        """Every measurement cell of complete rounds (of one phase, if given), one dict per
        cell with the columns CELL_COLUMNS names (throughput in MB/s, latency in µs). A
        percentile the cell's IOs are too few to measure is None, as in `iolab export`."""
        out = []
        for r in self._store.cells(phase):
            ios = r.ios
            out.append({c.export_name: c.exported(getattr(r, c.name), ios) for c in EXPORTED})
        return out

    def cell_arrays(self, phase: str | None = None) -> dict[str, Any]:
        """The numeric cell columns as numpy arrays (float64; None is NaN), one entry per column."""
        import numpy as np

        rows = self.cells(phase)
        out: dict[str, Any] = {}
        for name in CELL_COLUMNS:
            vals = [r[name] for r in rows]
            if all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in vals):
                out[name] = np.array([np.nan if v is None else v for v in vals], dtype=float)
        return out

    def dataframe(self, phase: str | None = None) -> Any:
        """The cells as a pandas DataFrame. pandas is not one of iolab's dependencies: this
        raises ImportError unless it is installed beside iolab."""
        try:
            pd = importlib.import_module("pandas")
        except ImportError:
            raise ImportError(
                "Run.dataframe() needs pandas, which iolab does not install "
                "(pip install pandas); Run.cells() gives the same rows as dicts."
            ) from None
        return pd.DataFrame(self.cells(phase), columns=list(CELL_COLUMNS))

    def record(self) -> dict[str, Any]:
        """The run as `iolab show RUN --json` prints it in `runs` (docs/automation.md)."""
        test = registry.find(self.test)
        return run_record(self._store, test.key_figures if test else None)

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> Run:
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Run({self.run_id!r}, test={self.test!r}, state={self.state!r})"


def open_run(ref: str | Path) -> Run:
    """Open a run by its directory, or its id under the runs directory ($IOLAB_RUNS or ./runs),
    read-only. iolab.core.errors.IolabError (with the reason) when it is no readable run."""
    return Run(RunStore.open(ref))
