"""PTS Host Idle Recovery (SNIA PTS 2.0): purge; RND 4 KiB W to steady state; then for each wait
state, bursts of RND 4 KiB W each preceded by an idle period, followed by a return to
baseline of continuous writes. The report shows how much the idle lets the drive recover."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from iolab.core.errors import IolabError
from iolab.core.plan import Cell, Phase, Profile, TestPlan, Tracking
from iolab.core.testparams import MAX_PHASE_CELLS, Param, cell_count, parameter_rows, seconds, show_seconds, values
from iolab.core.units import KiB, counted, duration
from iolab.core.workload import Workload
from iolab.figures.compare import KeyMetric
from iolab.figures.compare.hir import PC_PHASE, baseline_phase, hir_result, wait_phase
from iolab.figures.summary import PhaseSummary
from iolab.pages.runwords import SPEC_HEADINGS
from iolab.pages.textreport import render_hir
from iolab.suites import active_fraction, common_parameters, no_input, tested_capacity
from iolab.suites.figures import Getter, Metrics, Runs
from iolab.suites.testdef import TestDef
from iolab.targets import Target

if TYPE_CHECKING:
    from iolab.pages.report.model import Page
    from iolab.pages.report.rundata import RunData

WAIT_MULTIPLES = (1, 2, 3, 5, 10)  # the spec's wait states, in bursts: 5, 10, 15, 25, 50 s after 5 s bursts


def seconds_list(text: str) -> tuple[float, ...]:
    """'5,10,15' or '5s,500ms' -> seconds, ascending and distinct."""
    vals = tuple(seconds(x) for x in text.replace(" ", "").split(",") if x)
    if not vals or list(vals) != sorted(set(vals)):
        raise ValueError("give ascending, distinct durations separated by commas (e.g. 5,10,15,25,50)")
    return vals


def show_seconds_list(vals: Iterable[float]) -> str:
    return ", ".join(duration(v) for v in vals)


# A quick run keeps the spec's proportions (idle = 1, 2, 3, 5, 10 bursts; baseline = all bursts)
# at one interval (--cell-time) per burst.
PARAMS = (
    Param(
        "pc_round_intervals",
        30,
        "Intervals (of --cell-time) per preconditioning round; y = the last one's IOPS",
        cell_count,
        str,
        "UNVERIFIED: impl. round of 30 × 1 min",
        quick=2,
    ),
    Param(
        "burst_time",
        5.0,
        "Length of each RND 4 KiB W burst",
        seconds,
        show_seconds,
        "A.9",
        quick=lambda p, v: p.cell_seconds,
    ),
    Param("bursts", 360, "Bursts per wait state", cell_count, str, "A.9", quick=3),
    Param(
        "wait_states",
        tuple(5.0 * m for m in WAIT_MULTIPLES),
        "Idle before each burst, one wait state per value",
        seconds_list,
        show_seconds_list,
        "A.9",
        quick=lambda p, v: tuple(v["burst_time"] * m for m in WAIT_MULTIPLES),
    ),
    Param(
        "baseline_time",
        1800.0,
        "Continuous RND 4 KiB W after each wait state (return to baseline)",
        seconds,
        show_seconds,
        "A.9 (= 360 × 5 s)",
        quick=lambda p, v: v["bursts"] * v["burst_time"],
    ),
)


def build(profile: Profile, target: Target) -> TestPlan:
    vals = values(PARAMS, profile, "hir")
    ar = active_fraction(profile, target)
    interval = profile.cell_seconds

    def write(secs: float, name: str) -> Workload:
        return Workload.mix(
            "rnd",
            0,
            4 * KiB,
            threads=profile.threads,
            queue_depth=profile.queue_depth,
            active_range=ar,
            duration_s=secs,
            name=name,
        )

    def cell(key: str, secs: float, idle: float | None = None) -> Cell:
        return Cell(key, write(secs, "RND 4KiB W"), "0/100", 4 * KiB, idle_before_s=idle)

    n_pc = vals["pc_round_intervals"]
    pc_cells = tuple(cell(f"interval {i}", interval) for i in range(1, n_pc + 1))
    phases = [
        Phase(
            PC_PHASE,
            pc_cells,
            (Tracking(f"IOPS of interval {n_pc}", pc_cells[-1].key, "iops"),),
            purge=True,
            precondition=(),
            max_rounds=profile.max_rounds,
        )
    ]
    n_base = max(1, math.ceil(vals["baseline_time"] / interval - 1e-9))
    if n_base > MAX_PHASE_CELLS:  # refused before any cell is built (testparams.MAX_PHASE_CELLS)
        raise IolabError(
            f"hir: a baseline_time of {duration(vals['baseline_time'])} in intervals of {duration(interval)} "
            f"(--cell-time) is {n_base:,} cells of one phase; at most {MAX_PHASE_CELLS:,}: give a shorter "
            "baseline_time or a longer --cell-time. Nothing was run or written."
        )
    base_len = vals["baseline_time"] / n_base
    for idle in vals["wait_states"]:
        bursts = tuple(cell(f"burst {k}", vals["burst_time"], idle) for k in range(1, vals["bursts"] + 1))
        phases.append(Phase(wait_phase(idle), bursts, (), purge=False, max_rounds=1, stop_on_steady=False))
        phases.append(
            Phase(
                baseline_phase(idle),
                tuple(cell(f"interval {k}", base_len) for k in range(1, n_base + 1)),
                (),
                purge=False,
                max_rounds=1,
                stop_on_steady=False,
            )
        )
    params = _parameter_rows(profile, target, vals, n_pc, interval)
    notes = _notes(profile, n_pc)
    return TestPlan(
        "hir",
        "Host Idle Recovery",
        f"PTS {profile.spec} ({profile.name})",
        profile,
        tuple(phases),
        profile.rule(),
        tested_capacity(profile, target),
        tuple(params),
        notes,
        values=vals,
    )


def _parameter_rows(
    profile: Profile, target: Target, vals: dict[str, Any], n_pc: int, interval: float
) -> list[tuple[str, str]]:
    return common_parameters(profile, target) + [
        ("Stimulus", "RND 4 KiB W throughout"),
        ("Outstanding IO", f"TC {profile.threads} × QD {profile.queue_depth}"),
        (
            "Preconditioning",
            f"purge, then rounds of {n_pc} × {duration(interval)} to steady state (≤ {counted(profile.max_rounds, 'round')})",
        ),
        (
            "Wait states",
            " → ".join(
                f"{vals['bursts']} × ({duration(i)} idle, {duration(vals['burst_time'])} W), then "
                f"{duration(vals['baseline_time'])} W"
                for i in vals["wait_states"]
            ),
        ),
        *parameter_rows(PARAMS, profile, "hir"),
    ]


def _notes(profile: Profile, n_pc: int) -> tuple[str, ...]:
    # the round this run used, not only the default: a quick run's note said "30 × 1 min" beside
    # rounds of 2 × 1 s
    notes: tuple[str, ...] = (
        f"The preconditioning round length (pc_round_intervals; this run {n_pc} × {duration(profile.cell_seconds)}, "
        "the default 30 × 1 min) is UNVERIFIED against the spec; the default comes from the reference implementations.",
        "Each burst is preceded by its idle (the spec's 'burst, then idle' with the last idle moved before the first "
        "burst); the return to baseline is continuous writes, logged in intervals of the cell time.",
        f"Recovery is each wait state's mean burst IOPS over the preconditioning window's average of its tracking "
        f"variable, the IOPS of each round's last interval (interval {n_pc}), not of every interval: its steady-state "
        "level when steady state is reached.",
    )
    if profile.quick:
        notes += (
            "Quick run: bursts of one cell time, idles of 1, 2, 3, 5, 10 bursts and a baseline of all bursts "
            "(unless set); non-compliant.",
        )
    return notes


# "PC" was the PTS's shorthand, which a reader of a key-figure table need not know
PC_FIGURE = "Preconditioning IOPS, window mean (RND 4 KiB W)"
# its earlier names, oldest first: the first called the mean steady state whether it was or not
EARLIER_PC_FIGURES = ("PC steady-state IOPS (RND 4 KiB W)", "PC IOPS, window mean (RND 4 KiB W)")


class _PcLevel:
    """The preconditioning window's mean; `unmeasured` says why there is none where the
    preconditioning ran too few rounds to fill a window (a bare "—" read as a figure lost)."""

    def __call__(self, phases: list[PhaseSummary]) -> float | None:
        return hir_result(phases).steady_iops

    def unmeasured(self, phases: list[PhaseSummary]) -> str:
        pc = hir_result(phases).pc
        if pc is None or pc.verdicts or not pc.rounds:
            return ""
        return (
            f"the preconditioning ran {counted(len(pc.rounds), 'round')}, fewer than the "
            f"{pc.rule.window}-round steady-state window: no window to average"
        )


def _burst(idle: float) -> Getter:
    return lambda phases: next((w.burst_iops for w in hir_result(phases).waits if w.idle_s == idle), None)


def key_figures(runs: Runs = ()) -> Metrics:
    """One burst column per wait state any of the runs measured."""
    idles = sorted({w.idle_s for phases in runs for w in hir_result(phases).waits})
    return (
        # the level recovery is measured against; named for what it always is, the preconditioning
        # window's mean: a run whose preconditioning never reached steady state has one too
        KeyMetric(PC_FIGURE, "IOPS", True, _PcLevel()),
        *(KeyMetric(f"Mean burst IOPS after {idle:g} s idle", "IOPS", True, _burst(idle)) for idle in idles),
    )


# The report's pages and the comparison's overlays (their plots) are imported when a report or
# a comparison is built: not by a run without a report, `iolab show` or `iolab tests`.
def pages(run: RunData) -> list[Page]:
    from iolab.pages.report.hir import hir_pages

    return hir_pages(run)


def overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    from iolab.pages.compare_pages.pts2 import hir_overlays

    return hir_overlays(runs, labels)


TEST = TestDef(
    "hir",
    "Host Idle Recovery",
    "SNIA PTS",
    "Host Idle Recovery: RND 4 KiB W bursts after idles of 5–50 s, from steady state, with returns to baseline (A.9)",
    build=no_input(build),
    sequence="pts",
    optional=True,
    heading=SPEC_HEADINGS["PTS"],
    key_figures=key_figures,
    figures_named_by_runs=True,  # one burst figure per wait state the run measured
    renamed_figures=tuple((old, PC_FIGURE) for old in EARLIER_PC_FIGURES),
    pages=pages,
    overlays=overlays,
    view=render_hir,
    params=PARAMS,
    short_title="HIR",
)
