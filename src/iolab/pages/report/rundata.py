"""One stored run as the report pages read it: manifest, per-phase summaries, and links from
the report file to the raw files inside the run directory. Reads only the run directory."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iolab.core.cellschema import CellRow
from iolab.core.results import cell_where, raised_in
from iolab.core.steady import STEADY_NOT_EVALUATED
from iolab.core.testparams import Param, stored_values
from iolab.figures.audit import Audit, stored_audit
from iolab.figures.endurance import written
from iolab.figures.power import stored_power
from iolab.figures.summary import PhaseSummary, summarise, unstored_tracking
from iolab.pages.report.model import Link
from iolab.pages.runwords import rounds_text
from iolab.store.manifest import Manifest, manifest_of
from iolab.store.runstore import RunStore


@dataclass
class RunData:
    dir: Path
    manifest: Manifest
    phases: list[PhaseSummary]
    preconditioning: list[CellRow]  # WIPC cells (round 0) of every phase
    out_dir: Path  # where the report file goes; links are relative to it
    # the run's self-audit (audit.py): stored at its end, or made when loaded for an older run
    audit: Audit | None = None
    # a power meter's log aligned to the cells (`iolab power`, figures/power.py); None: none attached
    power: dict[str, Any] | None = None

    @classmethod
    def load(cls, ref: str | Path, out_dir: Path) -> RunData:
        store = RunStore.open(ref)
        try:
            phases = summarise(store)
            pc = store.cells(kind="precondition")
            audit = stored_audit(store)
        finally:
            store.close()
        return cls(store.dir, manifest_of(store), phases, pc, out_dir, audit, stored_power(store.dir))

    # -- what the pages say about completeness -----------------------------------------
    @property
    def complete(self) -> bool:
        return self.manifest.state == "complete"

    @property
    def quick(self) -> bool:
        return bool(self.manifest.profile.get("quick"))

    def plan_phase(self, name: str) -> dict[str, Any]:
        """The phase as the run stored its plan (manifest.json), {} if absent: reports read what
        was run, never today's suite code."""
        return next((p for p in self.manifest.plan.get("phases", ()) if p.get("name") == name), {})

    def value(self, name: str, default: Any) -> Any:
        """A test parameter as the run used it (TestPlan.values in manifest.json); `default`
        for runs stored before the manifest held them."""
        return self.manifest.plan.get("values", {}).get(name, default)

    def values_of(self, params: Sequence[Param], test: str) -> dict[str, Any]:
        """These test parameters as the run used them: the stored typed values, or for runs
        stored before the manifest held them, their --set text (else the defaults)."""
        if "values" in self.manifest.plan:
            return {p.name: self.value(p.name, p.default) for p in params}
        return stored_values(params, self.manifest.profile.get("settings", ()), test)

    def runs_to_budget(self, ph: PhaseSummary | str) -> bool:
        """The phase (or the planned phase of this name) ends by its budget, not at steady state
        (Write Saturation): its steady-state check is for information."""
        name = ph if isinstance(ph, str) else ph.phase.name
        return self.plan_phase(name).get("stop_on_steady") is False

    def not_judged(self, ph: PhaseSummary) -> bool:
        """The phase tracks steady state and stops at it, but its rounds never filled a window
        (--max-rounds below it, or a run that ended first): its figures are no steady state's."""
        return ph.steady_state == STEADY_NOT_EVALUATED and not self.runs_to_budget(ph)

    def unjudged(self) -> list[tuple[str, PhaseSummary | None]]:
        """Every phase `not_judged`, and each the plan gives tracking variables that stored no
        round (a failed or stopped run: summary.unstored_tracking) and stops at steady state, by
        name; None for a phase not stored. A phase that runs to its budget is left out whether
        stored or not, as `not_judged` leaves it: its figures never claim a steady state."""
        planned = [str(p["name"]) for p in unstored_tracking(self.phases, self.manifest.plan)]
        return [(ph.phase.name, ph) for ph in self.phases if self.not_judged(ph)] + [
            (name, None) for name in planned if not self.runs_to_budget(name)
        ]

    def phase(self, name: str) -> PhaseSummary | None:
        for ph in self.phases:
            if ph.phase.name == name:
                return ph
        return None

    def write_amplification(self, rows: list[CellRow] | tuple[CellRow, ...] | None = None) -> tuple[float, int] | None:
        """(WAF, host bytes written) over these cells (default: every stored cell, preconditioning
        included), from the engine's flash and host write counters; None where the engine does
        not count flash writes (fio on a real drive) or nothing was written."""
        if rows is None:
            rows = [*self.preconditioning, *(r for ph in self.phases for r in ph.rows)]
        return written(rows)

    def ran_outstanding(self, phase: str, key: str) -> int | None:
        """The outstanding IO a cell ran at where the engine raised it above the plan's (the
        run's notes: results.raised_in); None where it ran as planned."""
        raised = raised_in(self.manifest.notes).get(cell_where(phase, key))
        return raised[1] if raised else None

    def outstanding_as_run(self, planned: str) -> str:
        """A plan's "Outstanding IO" words, with each cell the engine ran at more (it read only
        what was planned: "TC 1 × the step's QD (1–1)" of a replay fio ran at 2)."""
        raised = raised_in(self.manifest.notes)
        if not raised:
            return planned
        cells = [f"{where} at {ran} (planned {was})" for where, (was, ran) in raised.items()]
        more = f" and {len(cells) - 3} more (the notes name each)" if len(cells) > 3 else ""
        return f"{planned}; as run: {'; '.join(cells[:3])}{more}"

    # -- links ------------------------------------------------------------------------
    def href(self, rel: str) -> str:
        """A path inside the run directory, relative to the report file."""
        return Path(os.path.relpath(self.dir / rel, self.out_dir)).as_posix()

    def link(self, rel: str, label: str | None = None) -> Link:
        return Link(label or rel, self.href(rel))

    def store_links(self) -> tuple[Link, ...]:
        return (self.link("manifest.json"), self.link("results.db"))

    def raw_links(self, rows: list[CellRow] | tuple[CellRow, ...]) -> tuple[Link, ...]:
        """One link per stored cell and round, to the engine's main output (its JSON where there
        is one); the cell's other raw files (job file, logs) sit beside it with the same prefix."""
        out = []
        for r in sorted(rows, key=lambda r: (r.ordinal, r.round)):
            if not r.raw_files:
                continue
            main = next((f for f in r.raw_files if f.endswith(".json")), r.raw_files[0])
            out.append(Link(f"r{r.round}", self.href(main), group=r.cell_key))
        return tuple(out)

    @property
    def label(self) -> str:
        """How a comparison names this drive: vendor and model, else the target."""
        facts = self.manifest.target.get("facts", {})
        name = " ".join(x for x in (facts.get("vendor"), facts.get("model")) if x)
        return name or self.manifest.target.get("spec", self.manifest.run_id)


def window_rows(ph: PhaseSummary, keys: set[str] | None = None) -> list[CellRow]:
    """The stored cells averaged into the tables: the measurement-window rounds."""
    return [r for r in ph.rows if r.round in ph.window and (keys is None or r.cell_key in keys)]


def intervals_text(ph: PhaseSummary) -> str:
    """Which intervals a per-interval figure shows: every one measured, naming a partial one
    (a write budget's end), which is not a complete interval."""
    partial = sorted({r.round for r in ph.rows if r.partial and r.round in ph.rounds})
    cut = "".join(f"; round {r} partial" for r in partial)
    return f"every interval ({rounds_text(ph.rounds)}{cut})"


def cell_series(
    run_dir: str | Path, cell_id: int
) -> list[tuple[float, float, float, float, float | None, float | None]]:
    """One cell's per-second series (RunStore.series) from a run directory, closed again after."""
    store = RunStore.open(run_dir)
    try:
        return store.series(cell_id)
    finally:
        store.close()
