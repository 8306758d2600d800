"""PTS Write Saturation (SNIA PTS 2.0): from purge (no preconditioning), continuous writes (RND
4 KiB W, or an optional PTS 2.0 workload) logged in 1-minute intervals until 4× user capacity
is written or 24 h pass."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from iolab.core.errors import IolabError
from iolab.core.plan import Cell, Phase, Profile, TestPlan, Tracking
from iolab.core.testparams import Param, choice, parameter_rows, values
from iolab.core.units import KiB, counted, duration, eng, kib_label, num
from iolab.core.workload import Workload
from iolab.figures.compare import KeyMetric
from iolab.figures.summary import PhaseSummary
from iolab.pages.runwords import SPEC_HEADINGS
from iolab.pages.textreport import render_wsat
from iolab.suites import active_fraction, cbw, common_parameters, no_input, supported_block_sizes, tested_capacity
from iolab.suites.figures import Getter, Metrics, Runs, figure, no_full_interval
from iolab.suites.testdef import TestDef
from iolab.targets import Target

if TYPE_CHECKING:
    from iolab.pages.report.model import Page
    from iolab.pages.report.rundata import RunData

# Name -> (access, read %, block size, label); "rnd4k" is the WSAT of PTS 1.1, the others are
# the optional workloads of PTS 2.0 (A.8).
WORKLOADS: dict[str, tuple[Literal["rnd", "seq", "cbw"], int, int, str]] = {
    "rnd4k": ("rnd", 0, 4 * KiB, "RND 4 KiB W"),
    "oltp": ("rnd", 65, 8 * KiB, "Mixed/OLTP: RND 8 KiB R/W 65/35"),
    "vod": ("seq", 90, 128 * KiB, "Video on demand: SEQ 128 KiB R/W 90/10"),
    "metadata": ("seq", 50, 512, "Metadata: SEQ 0.5 KiB R/W 50/50"),
    "cbw": ("cbw", 40, 4 * KiB, "Composite Block Size Workload, R/W 40/60 (A.12)"),  # 4 KiB: its dominant size
}
PARAMS = (
    Param(
        "workload",
        "rnd4k",
        "The WSAT stimulus: " + ", ".join(f"{k} ({v[3]})" for k, v in WORKLOADS.items()),
        choice(*WORKLOADS),
        str,
        "A.8; the optional 2.0 workloads by name",
    ),
)


def build(profile: Profile, target: Target) -> TestPlan:
    capacity_multiple, max_seconds = profile.wsat_capacity_multiple, profile.wsat_max_seconds
    cap = tested_capacity(profile, target)
    interval = profile.cell_seconds
    name = values(PARAMS, profile, "wsat")["workload"]
    access, read, bs, label = WORKLOADS[name]
    if not supported_block_sizes([bs], target)[0]:
        raise IolabError(
            f"wsat --set workload={name}: its {bs} B block is below the target's "
            f"{target.facts.logical_sector} B logical sector; direct IO cannot issue it. Nothing was run or written."
        )
    mix = f"{read}/{100 - read}"
    shape = {
        "threads": profile.threads,
        "queue_depth": profile.queue_depth,
        "active_range": active_fraction(profile, target),
        "duration_s": interval,
        "name": label,
    }
    w = cbw(read, target, **shape) if access == "cbw" else Workload.mix(access, read, bs, **shape)
    cell = Cell(f"{mix} {'CBW' if access == 'cbw' else kib_label(bs)}", w, mix, bs)
    budget = int(capacity_multiple * cap)
    phase = Phase(
        "main",
        (cell,),
        (Tracking(f"IOPS {cell.key}", cell.key, "iops"),),
        purge=True,
        precondition=(),
        max_rounds=math.ceil(max_seconds / interval),
        stop_on_steady=False,
        budget_write_bytes=budget,
        budget_seconds=max_seconds,
    )
    params = common_parameters(profile, target) + [
        ("Stimulus", f"{label}, continuous, logged per interval"),
        ("Outstanding IO", f"TC {profile.threads} × QD {profile.queue_depth}"),
        ("Preconditioning", "none (starts at FOB after purge)"),
        ("Stop", f"{capacity_multiple:g}× capacity ({eng(budget, 'B')} written) or {duration(max_seconds)}"),
        *parameter_rows(PARAMS, profile, "wsat"),
    ]
    notes = (
        "WSAT stops on its byte/time budget, not on steady state (PTS 1.1 rule; the 2.0 early stop is UNVERIFIED); "
        "the steady-state table is reported for information.",
    )
    return TestPlan(
        "wsat",
        "Write Saturation",
        f"PTS {profile.spec} ({profile.name})",
        profile,
        (phase,),
        profile.rule(),
        cap,
        tuple(params),
        notes,
    )


def _full(phases: list[PhaseSummary]) -> list[float]:
    """Interval IOPS of the main phase; a partial interval (ended by the budget) is no
    interval of the same length and never sets the first or the minimum figure."""
    return [r.iops for r in phases[0].rows if not r.partial] if phases else []


@dataclass(frozen=True)
class _FirstInterval:
    """The first full interval's IOPS, the drive fresh-out-of-box: only of a main phase a purge
    put there. After --purge none (or a failed purge) the first interval is of whatever state the
    target was left in, and the figure is not measured (`unmeasured` says why), so history, check
    and a spec sheet never take it for a FOB figure."""

    def __call__(self, phases: list[PhaseSummary]) -> float | None:
        if not phases or phases[0].not_from_fob:
            return None
        return next(iter(_full(phases)), None)

    def unmeasured(self, phases: list[PhaseSummary]) -> str:
        return phases[0].not_from_fob if phases and _full(phases) else _no_full(phases)


def _no_full(phases: list[PhaseSummary]) -> str:
    return no_full_interval(phases[0] if phases else None)


@dataclass(frozen=True)
class _Minimum:
    """The slowest full interval; `unmeasured` says why there is none."""

    def __call__(self, phases: list[PhaseSummary]) -> float | None:
        return min(_full(phases), default=None)

    def unmeasured(self, phases: list[PhaseSummary]) -> str:
        return _no_full(phases)

    def note(self, phases: list[PhaseSummary]) -> str:
        """The interval the budget cut, printed in the table beside the full ones (and maybe below
        the figure), is said to be left out: "40,695" there stood beside a minimum of 41,082."""
        cut = [r for r in phases[0].rows if r.partial] if phases else []
        if not (cut and _full(phases)):
            return ""
        slowest = f"the slowest of {counted(len(_full(phases)), 'full interval')}"
        if len(cut) == 1:
            return (
                f"{slowest}; the last, cut to {cut[0].runtime_s:.3g} s by the budget ({num(cut[0].iops)} IOPS), "
                "is no interval of their length and is left out"
            )
        # the interval before the final one may end at its byte cap too (run/budget.py): naming
        # the last alone left the other, slower than the minimum in the table, unexplained
        each = [f"interval {r.round} ({r.runtime_s:.3g} s, {num(r.iops)} IOPS)" for r in cut]
        return (
            f"{slowest}; the {len(cut)} the budget cut short, {', '.join(each[:-1])} and {each[-1]}, "
            "are no intervals of their length and are left out"
        )


def _window(attr: str) -> Getter:
    """The one cell of the main phase, whichever workload it ran (runs of different WSAT
    workloads differ in their settings and are compared only when forced). A figure, not a bare
    getter, so a percentile the window's IOs cannot measure says why (its 197,477 IOs) where it
    read only "—", and so does a window with no full interval in it."""
    return figure(lambda phases: phases[0].cells[0] if phases and phases[0].cells else None, attr, missing=_no_full)


def key_figures(runs: Runs = ()) -> Metrics:
    return (
        KeyMetric("IOPS, first interval (FOB)", "IOPS", True, _FirstInterval()),
        KeyMetric("IOPS, minimum interval", "IOPS", True, _Minimum(), kind="extreme"),
        # the window: the last five intervals, or all of them in a run with fewer
        KeyMetric("IOPS, window mean (last ≤5 intervals)", "IOPS", True, _window("iops")),
        KeyMetric("ART, window (last ≤5 intervals)", "µs", False, _window("lat_mean_us")),
        KeyMetric("99.999 %, window (last ≤5 intervals)", "µs", False, _window("p99_999_us"), kind="percentile"),
    )


# The report's pages and the comparison's overlays (their plots) are imported when a report or
# a comparison is built: not by a run without a report, `iolab show` or `iolab tests`.
def pages(run: RunData) -> list[Page]:
    from iolab.pages.report.pts import wsat_pages

    return wsat_pages(run)


def overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    from iolab.pages.compare_pages.pts import wsat_overlays

    return wsat_overlays(runs, labels)


TEST = TestDef(
    "wsat",
    "Write Saturation",
    "SNIA PTS",
    "Write Saturation: RND 4 KiB W (or an optional 2.0 workload) from FOB to 4× capacity or 24 h (A.8)",
    build=no_input(build),
    sequence="pts",
    heading=SPEC_HEADINGS["PTS"],
    key_figures=key_figures,
    pages=pages,
    overlays=overlays,
    view=render_wsat,
    params=PARAMS,
)
