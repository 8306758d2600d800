"""RWSW Multi-WSAT: the composite workload (the capture's dominant streams as one fixed mix)
applied interval after interval from a purged drive until steady state; IOPS, MB/s, ART and
the 99.999 % response time over time and at steady state."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iolab.core.plan import Cell, Profile, TestPlan
from iolab.figures.compare import KeyMetric
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
    mix_text,
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

NAME = "multi-wsat"


def build(profile: Profile, target: Target, inp: RwswInput) -> TestPlan:
    composite = inp.need_composite(NAME)
    cell = Cell("composite", applied(composite, profile, target, "composite"), "", 0)
    phase = saturation_phase("main", cell, profile, target)
    params = common_parameters(profile, target) + [
        ("Stimulus", f"composite: {mix_text(composite)}"),
        ("Outstanding IO", oio_text(composite) + " (from the workload file)"),
        *saturation_parameters(profile, target),
        *input_parameters(inp, composite),
    ]
    notes = (
        "Multi-WSAT runs the composite at the outstanding IO written in the workload file (the capture's average "
        "by default); the RWSW spec's OIO for this test is UNVERIFIED, so edit the file to choose another.",
        "Each interval is one measurement of the composite; steady state is the PTS rule on interval IOPS, accepted "
        "only once the drive has taken the given multiple of its capacity in workload writes (the RWSW spec's "
        "threshold is UNVERIFIED; 1× means every LBA could have been rewritten and garbage collection has begun).",
        DATA_NOTE,
    )
    return TestPlan(
        NAME,
        "Multi-WSAT",
        f"{SPEC} ({profile.name})",
        profile,
        (phase,),
        profile.rule(),
        tested_capacity(profile, target),
        tuple(params),
        notes,
    )


def _composite(attr: str) -> Getter:
    return figure(
        lambda phases: next(
            (c for ph in phases if ph.phase.name == "main" for c in ph.cells if c.key == "composite"), None
        ),
        attr,
        missing=lambda phases: no_full_interval(phase(phases, "main")),
    )


def key_figures(runs: Runs = ()) -> Metrics:
    # named for what they are over, the composite's measurement window, not "(steady state)": a
    # quick run ends at its round limit with steady state NOT reached, and the name stays the
    # same on every run (history, check, spec sheets); the run's steady state is its caveat's
    return (
        KeyMetric("IOPS (composite)", "IOPS", True, _composite("iops")),
        KeyMetric("MB/s (composite)", "MB/s", True, _composite("mbps")),
        KeyMetric("ART (composite)", "µs", False, _composite("lat_mean_us")),
        KeyMetric("99.999 % RT (composite)", "µs", False, _composite("p99_999_us"), kind="percentile"),
    )


# The report's pages and the comparison's overlays (their plots) are imported when a report or
# a comparison is built: not by a run without a report, `iolab show` or `iolab tests`.
def pages(run: RunData) -> list[Page]:
    """The test's pages, then the Self-Test pages of the capture it replayed."""
    from iolab.pages.report.rwsw import multi_wsat_pages
    from iolab.pages.report.rwsw_selftest import with_selftest

    return with_selftest(multi_wsat_pages)(run)


def overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    from iolab.pages.compare_pages.rwsw import multi_wsat_overlays

    return multi_wsat_overlays(runs, labels)


TEST = TestDef(
    NAME,
    "Multi-WSAT",
    "SNIA RWSW",
    "Multi-WSAT: the composite after purge (and WIPC when it reads) to steady state, ≥ 1× capacity written",
    build=with_input(build),
    needs_workload=True,
    keep_input=copy_inputs,
    sequence="rwsw",
    heading=SPEC_HEADINGS["RWSW"],
    key_figures=key_figures,
    pages=pages,
    overlays=overlays,
    short_title="Multi-WSAT",
    summary_figures=("IOPS (composite)", "MB/s (composite)", "99.999 % RT (composite)"),
    summary_order=0,
)
