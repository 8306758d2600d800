"""IO consistency: purge, fill the whole user capacity sequentially, then 4K
random writes (incompressible) at QD32 for a long period, IOPS every second (the engines'
per-second series). The steady part's spread and any periodic dips (analysis/consistency.py)
are read from that series by the report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from iolab.core import testparams as tp
from iolab.core.plan import Cell, Phase, Profile, TestPlan
from iolab.core.units import KiB
from iolab.core.workload import Workload
from iolab.figures.compare import KeyMetric
from iolab.figures.consistency import Spread, part_record, part_text
from iolab.figures.summary import PhaseSummary
from iolab.pages.chartext import consistency_view
from iolab.suites import active_fraction, no_input, tested_capacity
from iolab.suites import characterise_common as cc
from iolab.suites.figures import Getter, Metrics, Runs, phase, rounds
from iolab.suites.testdef import TestDef
from iolab.targets import Target

if TYPE_CHECKING:
    from iolab.pages.report.model import Page
    from iolab.pages.report.rundata import RunData

# A quick run on a simulated drive tests a copy of QUICK_SIM_GB for QUICK_SECONDS: on a 0.5 GB
# copy a GC burst runs out of work (its free-block target is a share of the drive) long before
# it stalls the host for a second, so the client preset showed no dips; at 4 GB its bursts dip
# every 4.3 s, but a burst that straddles two seconds splits its deficit between them and goes
# unseen, so the period is found only over ten or more of them.
QUICK_SIM_GB = 4.0
QUICK_SECONDS = 60.0

PARAMS = (
    tp.Param(
        "duration",
        2000.0,
        "4K random-write time after the fill; --quick uses 60 s unless set (dips every 4-5 s need ten of them)",
        tp.seconds,
        tp.show_seconds,
        source="published reviews",
        quick=QUICK_SECONDS,
    ),
    tp.Param(
        "steady_from",
        1400.0,
        "where the steady part starts; --quick: a quarter of the duration unless set",
        tp.seconds,
        tp.show_seconds,
        source="published reviews",
        quick=lambda _, v: 0.25 * v["duration"],
    ),
    tp.Param("qd", 32, "queue depth (one thread)", tp.queue_depth, source="published reviews"),
)


def build(profile: Profile, target: Target) -> TestPlan:
    s = cc.setup("consistency", PARAMS, profile, target, precondition=False)
    v = s.values
    duration = v["duration"]
    ar = active_fraction(profile, target)
    cap = tested_capacity(profile, target)
    fill = Workload.mix(
        "seq",
        0,
        128 * KiB,
        threads=1,
        queue_depth=32,
        active_range=ar,
        bytes_budget=cap,
        name="fill SEQ 128KiB W, 1× capacity",
    )
    w = Workload.mix(
        "rnd", 0, 4 * KiB, threads=1, queue_depth=v["qd"], active_range=ar, duration_s=duration, max_per_second=True
    )
    cell = Cell(f"RND 4KiB W QD{v['qd']}", w, "0/100", 4 * KiB)
    phase = Phase("consistency", (cell,), (), purge=True, precondition=(fill,), max_rounds=1, stop_on_steady=False)
    rows = s.rows + [
        ("Fill", f"SEQ 128 KiB W, 1× the tested capacity ({cap / 1e9:.3f} GB)"),
        ("Stimulus", f"RND 4 KiB W, TC 1 × QD {v['qd']}, {tp.show_seconds(duration)}, IOPS every second"),
    ]
    return TestPlan(
        "consistency",
        "IO Consistency",
        f"characterisation ({profile.name})",
        profile,
        (phase,),
        profile.rule(),
        cap,
        tuple(rows),
        values=v,
    )


def key_figures(runs: Runs = ()) -> Metrics:
    return (
        KeyMetric("IOPS over the whole period", "IOPS", True, rounds("consistency", lambda rs: rs[-1].iops)),
        KeyMetric("maximum latency", "µs", False, rounds("consistency", lambda rs: rs[-1].lat_max_us), kind="extreme"),
        # the steady part's spread, as the report's figures table gives it
        KeyMetric("steady-part coefficient of variation", "%", False, _spread(lambda sp: 100 * sp.cv)),
        KeyMetric("steady-part minimum ÷ maximum", "%", True, _spread(lambda sp: 100 * sp.min_over_max)),
    )


@dataclass(frozen=True)
class _Spread:
    """A figure of the part after steady_from, with whether that part was steady by the rule
    (figures/consistency.py): the figure's name says "steady-part" on every run (history, spec
    sheets, baselines), so a part that was not steady is said beside its value (`caveat`)."""

    figure: Callable[[Spread], float | None]

    def _part(self, phases: list[PhaseSummary]) -> tuple[Spread | None, float]:
        # read from the pages' module (and its plots) only when a key figure is asked: not by
        # `iolab tests` or a run, which import every test's declaration
        from iolab.pages.report.char_series import phase_spread

        ph = phase(phases, "consistency")
        if ph is None:
            return None, 0.0
        return phase_spread(ph), float(ph.values.get("steady_from", 0.0))

    def __call__(self, phases: list[PhaseSummary]) -> float | None:
        sp = self._part(phases)[0]
        return self.figure(sp) if sp else None

    def note(self, phases: list[PhaseSummary]) -> str:
        sp, start = self._part(phases)
        return part_text(sp, start) if sp else ""

    def caveat(self, phases: list[PhaseSummary]) -> str:
        sp, start = self._part(phases)
        return part_text(sp, start) if sp and not (sp.steady and sp.steady.steady) else ""

    def steady_part(self, phases: list[PhaseSummary]) -> dict[str, Any] | None:
        """The note's numbers, typed (--json `steady_part`), judged by the run's own rule."""
        ph = phase(phases, "consistency")
        sp, start = self._part(phases)
        return part_record(sp, start, ph.rule) if sp and ph else None


def _spread(figure: Callable[[Spread], float | None]) -> Getter:
    return _Spread(figure)


# The report's pages and the comparison's overlays (their plots) are imported when a report or
# a comparison is built: not by a run without a report, `iolab show` or `iolab tests`.
def pages(run: RunData) -> list[Page]:
    from iolab.pages.report.char_series import consistency_pages

    return consistency_pages(run)


def overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    from iolab.pages.compare_pages.characterise import consistency_overlays

    return consistency_overlays(runs, labels)


TEST = TestDef(
    "consistency",
    "IO Consistency",
    cc.FAMILY,
    "purge, sequential fill, then 2,000 s of 4K random writes at QD32: IOPS every second, periodic dips",
    build=no_input(build),
    sequence=cc.SEQUENCE,
    key_figures=key_figures,
    pages=pages,
    overlays=overlays,
    view=consistency_view,
    short_title="Consistency",
    params=PARAMS + cc.ENDURANCE_PARAMS,
    quick_sim_gb=QUICK_SIM_GB,
)
