"""RWSW Individual Streams WSAT: each dominant stream of the composite alone, each from a
purged drive to steady state (one phase per stream); one IOPS figure per stream per drive."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iolab.core.plan import Cell, Profile, TestPlan
from iolab.core.workload import Stream
from iolab.figures.compare import KeyMetric
from iolab.figures.summary import CellAverage, PhaseSummary
from iolab.pages.runwords import SPEC_HEADINGS
from iolab.suites import common_parameters, tested_capacity
from iolab.suites.figures import Getter, Metrics, Runs, figure, no_full_interval, phase
from iolab.suites.rwsw_common import (
    DATA_NOTE,
    SPEC,
    RwswInput,
    applied,
    copy_inputs,
    input_parameters,
    oio_text,
    saturation_parameters,
    saturation_phase,
    with_input,
)
from iolab.suites.testdef import TestDef
from iolab.targets import Target

if TYPE_CHECKING:
    from iolab.pages.report.model import Page
    from iolab.pages.report.rundata import RunData

NAME = "streams-wsat"


def build(profile: Profile, target: Target, inp: RwswInput) -> TestPlan:
    composite = inp.need_composite(NAME)
    phases = []
    for s in composite.streams:
        label = s.label()
        w = applied(composite, profile, target, label, streams=(Stream(s.access, s.op, s.block_size, 1.0),))
        phases.append(saturation_phase(label, Cell(label, w, "", s.block_size), profile, target))
    params = common_parameters(profile, target) + [
        (
            "Stimulus",
            f"each of the {len(phases)} dominant streams alone: " + ", ".join(s.label() for s in composite.streams),
        ),
        ("Outstanding IO", oio_text(composite) + " (from the workload file)"),
        *saturation_parameters(profile, target),
        *input_parameters(inp, composite),
    ]
    notes = (
        "Every stream starts from a purge. Read streams are preceded by the PTS WIPC fill so they read written "
        "LBAs (the RWSW spec's preconditioning for read streams is UNVERIFIED); a write stream reaches steady state "
        "only after the given multiple of the capacity in its own writes (threshold UNVERIFIED).",
        "Streams run at the composite's outstanding IO (from the workload file).",
        DATA_NOTE,
    )
    return TestPlan(
        NAME,
        "Individual Streams WSAT",
        f"{SPEC} ({profile.name})",
        profile,
        tuple(phases),
        profile.rule(),
        tested_capacity(profile, target),
        tuple(params),
        notes,
    )


def _stream_iops(label: str) -> Getter:
    """The stream's window IOPS; a write stream whose budget ended every interval early says so."""

    def first_cell(phases: list[PhaseSummary]) -> CellAverage | None:
        ph = phase(phases, label)
        return ph.cells[0] if ph is not None and ph.cells else None

    return figure(first_cell, "iops", missing=lambda phases: no_full_interval(phase(phases, label)))


def key_figures(runs: Runs = ()) -> Metrics:
    """One column per stream (phase) any of the drives ran, in run order."""
    labels = dict.fromkeys(ph.phase.name for phases in runs for ph in phases)
    return tuple(KeyMetric(f"{label} IOPS", "IOPS", True, _stream_iops(label)) for label in labels)


# The report's pages (their plots) are imported when a report is built: not by a run without
# a report, `iolab show` or `iolab tests`.
def pages(run: RunData) -> list[Page]:
    """The test's pages, then the Self-Test pages of the capture it replayed."""
    from iolab.pages.report.rwsw import streams_pages
    from iolab.pages.report.rwsw_selftest import with_selftest

    return with_selftest(streams_pages)(run)


TEST = TestDef(
    NAME,
    "Individual Streams WSAT",
    "SNIA RWSW",
    "Individual Streams WSAT: each stream of the composite alone to steady state",
    build=with_input(build),
    needs_workload=True,
    keep_input=copy_inputs,
    sequence="rwsw",
    heading=SPEC_HEADINGS["RWSW"],
    key_figures=key_figures,
    figures_named_by_runs=True,  # one figure per stream the run measured
    pages=pages,
    overlays=None,
    short_title="Individual Streams",
    summary_figures=None,
    summary_order=3,
)
