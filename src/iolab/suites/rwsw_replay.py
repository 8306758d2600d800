"""RWSW Replay-Native: the capture re-created step by step. Each replay step runs flat out
(not throttled to the captured IO count) at its own stream mix and queue depth for its
(compressed) duration, in capture order, after the drive is brought to steady state with
the composite workload."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iolab.core.plan import Cell, Phase, Profile, TestPlan
from iolab.core.units import counted
from iolab.figures.compare import KeyMetric, replay_totals
from iolab.pages.runwords import SPEC_HEADINGS
from iolab.suites import active_fraction, common_parameters, tested_capacity
from iolab.suites.figures import Metrics, Runs, figure
from iolab.suites.rwsw_common import (
    DATA_NOTE,
    SPEC,
    RwswInput,
    copy_inputs,
    input_parameters,
    mix_text,
    steady_phase,
    with_input,
)
from iolab.suites.testdef import TestDef
from iolab.targets import Target

if TYPE_CHECKING:
    from iolab.pages.report.model import Page
    from iolab.pages.report.rundata import RunData

NAME = "replay"


def build(profile: Profile, target: Target, inp: RwswInput) -> TestPlan:
    composite = inp.need_composite(NAME)
    plan = inp.need_replay(NAME)
    steps = plan.workloads()
    ar = active_fraction(profile, target)
    cells = []
    total = 0.0
    for step, w in zip(plan.steps, steps):
        # A quick run shortens long steps to the cell time so a many-step replay stays short.
        seconds = min(step.duration_s, profile.cell_seconds) if profile.quick else step.duration_s
        cells.append(Cell(f"step {step.index}", w.with_(active_range=ar, entropy=1.0, duration_s=seconds), "", 0))
        total += seconds
    replay_phase = Phase("replay", tuple(cells), (), purge=False, max_rounds=1, stop_on_steady=False)
    params = common_parameters(profile, target) + [
        (
            "Stimulus",
            f"replay of {len(cells)} capture steps of {plan.step_s:g} s"
            + (f", compressed {plan.compress:g}×" if plan.compress != 1 else "")
            + f": {total:,.1f} s flat out",
        ),
        (
            "Outstanding IO",
            f"per step: TC {plan.threads} × the step's QD "
            f"({min(s.queue_depth for s in plan.steps)}–{max(s.queue_depth for s in plan.steps)})",
        ),
        (
            "Preconditioning",
            f"purge, WIPC, then the composite to steady state ({mix_text(composite)}, "
            f"TC {composite.threads} × QD {composite.queue_depth})",
        ),
        ("PC2 (WDPC)", "the composite until steady state"),
        *input_parameters(inp, composite, *steps),
    ]
    notes = [
        "Replay-Native: the composite first runs to steady state or its round limit (the catalogue does not say "
        "how the drive is prepared; this is iolab's choice), then every step of the replay runs once, in order.",
        "Each step runs flat out at its mix and queue depth for its duration; between steps the drive idles for "
        "the engine's start-up (fio: a fraction of a second; the simulator: none).",
        DATA_NOTE,
    ]
    if profile.quick:
        notes.append(
            f"Quick profile: every step runs at most {profile.cell_seconds:g} s instead of its "
            "duration in the replay file."
        )
    if plan.skipped:
        notes.append(f"{counted(len(plan.skipped), 'capture step')} without IOs of the replayed streams, not replayed.")
    return TestPlan(
        NAME,
        "Replay-Native",
        f"{SPEC} ({profile.name})",
        profile,
        (steady_phase(composite, profile, target), replay_phase),
        profile.rule(),
        tested_capacity(profile, target),
        tuple(params),
        tuple(notes),
    )


def key_figures(runs: Runs = ()) -> Metrics:
    return (
        KeyMetric("IOPS (whole replay)", "IOPS", True, figure(replay_totals, "iops")),
        KeyMetric("MB/s (whole replay)", "MB/s", True, figure(replay_totals, "mbps")),
        KeyMetric("ART (whole replay)", "µs", False, figure(replay_totals, "art_us")),
        KeyMetric("MRT (whole replay)", "µs", False, figure(replay_totals, "mrt_us"), kind="extreme"),
        KeyMetric("99.999 % RT (whole replay)", "µs", False, figure(replay_totals, None, 99.999), kind="percentile"),
    )


# The report's pages and the comparison's overlays (their plots) are imported when a report or
# a comparison is built: not by a run without a report, `iolab show` or `iolab tests`.
def pages(run: RunData) -> list[Page]:
    """The test's pages, then the Self-Test pages of the capture it replayed."""
    from iolab.pages.report.rwsw_replay import replay_pages
    from iolab.pages.report.rwsw_selftest import with_selftest

    return with_selftest(replay_pages)(run)


def overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    from iolab.pages.compare_pages.rwsw import replay_overlays

    return replay_overlays(runs, labels)


TEST = TestDef(
    NAME,
    "Replay-Native",
    "SNIA RWSW",
    "Replay-Native: the capture's steps replayed in order after the composite's steady state",
    build=with_input(build),
    needs_workload=True,
    keep_input=copy_inputs,
    sequence="rwsw",
    heading=SPEC_HEADINGS["RWSW"],
    key_figures=key_figures,
    pages=pages,
    overlays=overlays,
    short_title="Replay-Native",
    summary_figures=("IOPS (whole replay)", "MB/s (whole replay)", "99.999 % RT (whole replay)"),
    summary_order=1,
)
