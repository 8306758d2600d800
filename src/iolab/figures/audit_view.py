"""The self-audit's shared parts (audit.py, audit_checks.py): the outcome of an invariant, its
declaration, and the stored run as the checks read it, each part read once."""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from iolab.core.cellschema import CellRow
from iolab.core.errors import IolabError
from iolab.figures.audit_issued import issued_cells
from iolab.figures.summary import PhaseSummary, summarise
from iolab.store import bulk as storebulk
from iolab.store.manifest import manifest_of
from iolab.store.runstore import RunStore

PASS, FAIL, NA = "pass", "fail", "n/a"


@dataclass(frozen=True)
class Outcome:
    """What one invariant found: its status, a one-line reason and the numbers behind it."""

    status: str  # pass | fail | n/a
    reason: str
    numbers: dict[str, Any] = field(default_factory=dict)
    # A failure's figure kinds when narrower than those the invariant touches (None: all of them):
    # the figures marked are those the failure concerns (the run's banner names every failure)
    touches: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Invariant:
    name: str
    checks: str  # what it checks, in a sentence
    touches: tuple[str, ...]  # the figure kinds it touches (audit.TOUCHES)
    run: Callable[[RunView], Outcome]


class RunView:
    """The stored run as the checks read it, each part read once."""

    def __init__(self, store: RunStore):
        self.store = store
        self.m = manifest_of(store)

    @cached_property
    def cells(self) -> list[CellRow]:
        return self.store.cells()

    @cached_property
    def series(self) -> dict[int, list[tuple[float, float, float, float, float | None]]]:
        return storebulk.all_series(self.store)

    @cached_property
    def histogram_rows(self) -> dict[int, list[tuple[Any, ...]]]:
        return storebulk.histogram_rows(self.store)

    @cached_property
    def histogram_totals(self) -> dict[int, int]:
        """Each cell's IOs in its histogram, from the rows raw-figures reads too (one read for both)."""
        return {cid: sum(int(r[3]) for r in rows) for cid, rows in self.histogram_rows.items()}

    @cached_property
    def issued(self) -> dict[int, CellRow]:
        """The cells stored with fio's issued IO count, the rule before (audit_issued.py), each
        with its counts by today's rule: the checks that weigh a cell's IOs take these."""
        return issued_cells(self.store.dir, str(self.m.versions.get("engine") or ""), self.cells, self.histogram_totals)

    @cached_property
    def summaries(self) -> list[PhaseSummary]:
        return summarise(self.store)

    @cached_property
    def sim(self) -> dict[str, Any] | None:
        """The simulator's description of the drive (None: not a simulated drive)."""
        spec = str(self.m.target.get("spec", ""))
        if self.m.target.get("kind") != "sim" or not spec.startswith("sim:"):
            return None
        preset, _, query = spec[len("sim:") :].partition("?")
        try:
            from iolab.targets.sim_facts import describe

            return describe(preset, dict(urllib.parse.parse_qsl(query, keep_blank_values=True)))
        except (IolabError, ImportError):
            return None
