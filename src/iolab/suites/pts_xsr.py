"""PTS Cross Stimulus Recovery (SNIA PTS 2.0): SEQ 1024 KiB W for 8 h, RND 8 KiB W for 6 h,
SEQ 1024 KiB W for 8 h, logged in 1-minute intervals (no steady-state stop). The report shows
throughput across the transitions and how long the drive took to recover from each."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from iolab.core.plan import Cell, Phase, Profile, TestPlan, Tracking
from iolab.core.testparams import Param, choice, given, parameter_rows, seconds, show_seconds, values
from iolab.core.units import KiB, counted, duration, share_text
from iolab.core.workload import Access, Workload
from iolab.figures.compare import DurationMetric, KeyMetric
from iolab.figures.compare.pts2 import GROUPS, SETTLE_WINDOW, xsr_groups, xsr_result
from iolab.figures.points import RECOVERY_TOLERANCE, SETTLE_TOLERANCE
from iolab.figures.summary import PhaseSummary
from iolab.pages.runwords import SPEC_HEADINGS
from iolab.pages.textreport import render_intervals
from iolab.suites import active_fraction, common_parameters, no_input, tested_capacity
from iolab.suites.figures import Getter, Metrics, Runs
from iolab.suites.testdef import TestDef
from iolab.targets import Target

if TYPE_CHECKING:
    from iolab.pages.report.model import Page
    from iolab.pages.report.rundata import RunData

STIMULI: dict[str, tuple[Access, int]] = dict(zip(GROUPS, (("seq", 1024 * KiB), ("rnd", 8 * KiB), ("seq", 1024 * KiB))))
# A quick run logs this many intervals per group (the 8 h : 6 h : 8 h proportion), unless set.
QUICK_INTERVALS = dict(zip(GROUPS, (20, 15, 20)))

PARAMS = (
    Param(
        "group1_time", 8 * 3600.0, "Length of group 1 (SEQ 1024 KiB W)", seconds, show_seconds, "A.10 implementation"
    ),
    Param("group2_time", 6 * 3600.0, "Length of group 2 (RND 8 KiB W)", seconds, show_seconds, "A.10 implementation"),
    Param(
        "group3_time", 8 * 3600.0, "Length of group 3 (SEQ 1024 KiB W)", seconds, show_seconds, "A.10 implementation"
    ),
    Param("purge", "yes", "Purge before group 1 (yes/no)", choice("yes", "no"), str, "UNVERIFIED: purge before XSR"),
    RECOVERY_TOLERANCE,
    SETTLE_TOLERANCE,
)


def group_seconds(profile: Profile) -> dict[str, float]:
    """Each group's length: as set, else the documented default, else (quick) a few intervals."""
    vals, text = values(PARAMS, profile, "xsr"), given(profile)
    out = {}
    for i, group in enumerate(STIMULI, 1):
        name = f"group{i}_time"
        quick = profile.quick and name not in text
        out[group] = QUICK_INTERVALS[group] * profile.cell_seconds if quick else vals[name]
    return out


def build(profile: Profile, target: Target) -> TestPlan:
    vals = values(PARAMS, profile, "xsr")
    ar = active_fraction(profile, target)
    interval = profile.cell_seconds
    phases = []
    lengths = group_seconds(profile)
    for group, (access, bs) in STIMULI.items():
        label = f"{access.upper()} {bs // KiB}KiB W"
        cell = Cell(
            f"0/100 {bs // KiB}KiB {access.upper()}",
            Workload.mix(
                access,
                0,
                bs,
                threads=profile.threads,
                queue_depth=profile.queue_depth,
                active_range=ar,
                duration_s=interval,
                name=label,
            ),
            "0/100",
            bs,
        )
        phases.append(
            Phase(
                group,
                (cell,),
                (Tracking(f"MB/s {label}", cell.key, "mbps"),),
                purge=group == "group 1" and vals["purge"] == "yes",
                precondition=(),
                max_rounds=max(1, math.ceil(lengths[group] / interval - 1e-9)),
                stop_on_steady=False,
                budget_seconds=lengths[group],
            )
        )
    params = common_parameters(profile, target) + [
        (
            "Stimulus",
            " → ".join(f"{g}: {a.upper()} {bs // KiB} KiB W, {duration(lengths[g])}" for g, (a, bs) in STIMULI.items()),
        ),
        ("Outstanding IO", f"TC {profile.threads} × QD {profile.queue_depth}"),
        (
            "Logging",
            f"every {duration(interval)} of submission (one interval per round, no steady-state stop); an "
            "interval also lasts until its IO in flight completes, and its time and rates are the measured ones",
        ),
        ("Preconditioning", "none"),
        *parameter_rows(PARAMS, profile, "xsr"),
    ]
    notes: tuple[str, ...] = (
        "Cross Stimulus Recovery runs each group for its full length; the steady-state tables are for information.",
        "Recovery times are UNVERIFIED definitions (parameters recovery_tolerance, settle_tolerance): group 3 recovers "
        "at its first interval with TP ≥ (1 − recovery_tolerance) × group 1's mean TP; group 2 settles at its first "
        "interval within ± settle_tolerance of its final level.",
    )
    if profile.quick:
        # The groups are time budgets: an interval that outlasts its length (the drain of its IO
        # in flight) leaves room for fewer of them, so the note names the lengths, not a count.
        notes += (
            "Quick run: groups of "
            + ", ".join(duration(lengths[g]) for g in STIMULI)
            + f" instead of 8 h, 6 h, 8 h (at most {', '.join(str(p.max_rounds) for p in phases)} intervals of "
            f"{duration(interval)}; a group whose intervals last longer logs fewer); non-compliant.",
        )
    return TestPlan(
        "xsr",
        "Cross Stimulus Recovery",
        f"PTS {profile.spec} ({profile.name})",
        profile,
        tuple(phases),
        profile.rule(),
        tested_capacity(profile, target),
        tuple(params),
        notes,
        values=vals,
    )


def _group_mean(i: int) -> Getter:
    return lambda phases: xsr_groups(phases)[i].mean_mbps


def _group_final(i: int) -> Getter:
    return lambda phases: xsr_groups(phases)[i].final_mbps()


def _tolerance(phases: list[PhaseSummary]) -> float:
    """The recovery tolerance the run set (stored with its plan), else the default."""
    tolerance: float = next(
        (ph.values["recovery_tolerance"] for ph in phases if "recovery_tolerance" in ph.values),
        RECOVERY_TOLERANCE.default,
    )
    return tolerance


class _Recovery:
    """Group 3's recovery time in seconds; `unmeasured` says why there is none where group 3 ran and never
    came within the tolerance of group 1's mean (a bare "—" read as a figure lost)."""

    def __call__(self, phases: list[PhaseSummary]) -> float | None:
        r = xsr_result(phases, _tolerance(phases)).recovered
        return None if r is None or r.minutes is None else r.minutes * 60

    def unmeasured(self, phases: list[PhaseSummary]) -> str:
        res = xsr_result(phases, _tolerance(phases))
        g1, _, g3 = res.groups
        if res.recovered is None or res.recovered.minutes is not None or not g3.rows or g1.mean_mbps is None:
            return ""
        line = res.recovered.target
        return (
            f"group 3 did not recover: none of its {counted(len(g3.rows), 'interval')} reached {line:,.1f} MB/s "
            f"({share_text(1 - _tolerance(phases))} of group 1's mean {g1.mean_mbps:,.1f} MB/s)"
        )


def key_figures(runs: Runs = ()) -> Metrics:
    """The recovery column uses each run's own tolerance and names it when the runs share one
    (runs with different settings are compared only when forced)."""
    tolerances = {_tolerance(phases) for phases in runs} or {RECOVERY_TOLERANCE.default}
    target = (
        f"{share_text(1 - tolerances.pop())} of group 1 mean TP"
        if len(tolerances) == 1
        else "group 1 mean TP less each run's own recovery_tolerance"
    )
    return (
        KeyMetric("Group 1 mean MB/s (SEQ 1024 KiB W)", "MB/s", True, _group_mean(0)),
        KeyMetric(f"Group 2 final MB/s (RND 8 KiB W, last ≤{SETTLE_WINDOW} intervals)", "MB/s", True, _group_final(1)),
        KeyMetric(
            f"Group 3 final MB/s (SEQ 1024 KiB W, last ≤{SETTLE_WINDOW} intervals)", "MB/s", True, _group_final(2)
        ),
        DurationMetric(f"Group 3 recovery to {target}", "s", False, _Recovery()),
    )


# The report's pages and the comparison's overlays (their plots) are imported when a report or
# a comparison is built: not by a run without a report, `iolab show` or `iolab tests`.
def pages(run: RunData) -> list[Page]:
    from iolab.pages.report.xsr import xsr_pages

    return xsr_pages(run)


def overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    from iolab.pages.compare_pages.pts2 import xsr_overlays

    return xsr_overlays(runs, labels)


TEST = TestDef(
    "xsr",
    "Cross Stimulus Recovery",
    "SNIA PTS",
    "Cross Stimulus Recovery: SEQ 1024 KiB W → RND 8 KiB W → SEQ 1024 KiB W, recovery times (A.10)",
    build=no_input(build),
    sequence="pts",
    optional=True,
    heading=SPEC_HEADINGS["PTS"],
    key_figures=key_figures,
    figures_named_by_runs=True,  # the recovery figure names the run's own tolerance
    pages=pages,
    overlays=overlays,
    view=render_intervals,
    params=PARAMS,
    short_title="XSR",
)
