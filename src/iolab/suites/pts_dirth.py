"""PTS DIRTH, Demand Intensity / Response Time Histogram (SNIA PTS 2.0): the DIRTH flow
(suites/dirth_flow.py) with RND 8 KiB at R/W 65/35 over the TC × QD grid (32 … 1, high →
low); preconditioning and pre-writes are the same RND at 0/100."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from iolab.core.errors import IolabError
from iolab.core.plan import Profile, TestPlan
from iolab.core.testparams import Param, show_list, size, values
from iolab.core.units import KiB, kib_label
from iolab.core.workload import Workload
from iolab.figures.compare import KeyMetric
from iolab.figures.compare.pts2 import chosen_points, demand_points, point_cell
from iolab.figures.points import POINT_NAMES
from iolab.figures.summary import PhaseSummary
from iolab.pages.runwords import SPEC_HEADINGS
from iolab.pages.textreport import render_dirth
from iolab.suites import active_fraction, block_size_problem, no_input
from iolab.suites.dirth_flow import FLOW, TC_QD_GRID, Stimulus, WorkloadAt, build_flow, grid_points, read_share
from iolab.suites.figures import Getter, Metrics, Runs, figure
from iolab.suites.testdef import TestDef
from iolab.targets import Target

if TYPE_CHECKING:
    from iolab.pages.report.model import Page
    from iolab.pages.report.rundata import RunData

PARAMS = (
    Param("block_size", 8 * KiB, "Block size of the RND stimulus", size, kib_label, "A.11 implementation default"),
    read_share(65, "A.11 implementation default (OLTP)"),
    *TC_QD_GRID,
    *FLOW,
)


def grid_text(v: Mapping[str, Any]) -> str:
    return f"TC {show_list(v['threads'])} × QD {show_list(v['depths'])} (high → low)"


def build(profile: Profile, target: Target) -> TestPlan:
    v = values(PARAMS, profile, "dirth")
    bs, read = v["block_size"], v["read_pct"]
    if why := block_size_problem(bs, target):
        raise IolabError(f"dirth --set block_size={bs}: {why}; direct IO cannot issue it. Nothing was run or written.")
    ar = active_fraction(profile, target)

    def rnd(read_pct: int) -> WorkloadAt:
        return lambda tc, qd, secs, name: Workload.mix(
            "rnd",
            read_pct,
            bs,
            threads=tc,
            queue_depth=qd,
            active_range=ar,
            duration_s=secs,
            name=f"{name} RND {read_pct}/{100 - read_pct}",
        )

    what = f"RND {kib_label(bs)}"
    stimulus = Stimulus(f"{what}, R/W {read}/{100 - read}", f"{what} 0/100", bs, rnd(0), rnd(read))
    return build_flow(
        profile,
        target,
        "dirth",
        "DIRTH",
        f"PTS {profile.spec} ({profile.name})",
        PARAMS,
        stimulus,
        grid_points(v),
        grid_text(v),
    )


def _point(which: str, attr: str) -> Getter:
    def get(phases: list[PhaseSummary]) -> float | None:
        ops = chosen_points(phases)
        p = getattr(ops, which) if ops else None
        return None if p is None else getattr(p, attr)

    return get


@dataclass(frozen=True)
class _At:
    """The IOPS of one demand point; `unmeasured` says when the run's grid has no such point (a
    grid set with --set threads=1,4 --set depths=1,8 printed "IOPS at TC32/QD32 —" and no why)."""

    tc: int
    qd: int

    def __call__(self, phases: list[PhaseSummary]) -> float | None:
        return next((p.iops for p in demand_points(phases) if (p.threads, p.queue_depth) == (self.tc, self.qd)), None)

    def unmeasured(self, phases: list[PhaseSummary]) -> str:
        points = demand_points(phases)
        if not points or any((p.threads, p.queue_depth) == (self.tc, self.qd) for p in points):
            return ""
        tcs = ", ".join(str(t) for t in sorted({p.threads for p in points}, reverse=True))
        qds = ", ".join(str(q) for q in sorted({p.queue_depth for p in points}, reverse=True))
        return f"the run's demand grid (TC {tcs} × QD {qds}) has no TC{self.tc}/QD{self.qd}"


def _at(tc: int, qd: int) -> Getter:
    return _At(tc, qd)


HISTOGRAM_PCT = 99.99  # the histogram figure: the PTS's confidence levels run 99 … 99.999 % (A.7)


def _histogram(name: str) -> Getter:
    """The histogram workload's 99.99 % response time at the operating point `name`, read from
    the cell that measured it: Mid on Max's or Min's point reads that point's cell (measured
    once), and the figure's note says so."""

    def shared(phases: list[PhaseSummary]) -> str:
        ops = chosen_points(phases)
        return ops.shared_text(name) if ops else ""

    return figure(lambda phases: point_cell(phases, name), None, HISTOGRAM_PCT, shared)


def key_figures(runs: Runs = ()) -> Metrics:
    """The points as each run decided them, under its own ART cutoff (runs with different
    settings are compared only when forced), and each point's histogram percentile from the
    cell that measured it. CBW has the same figures."""
    return (
        KeyMetric("MaxIOPS point IOPS (ART under the cutoff)", "IOPS", True, _point("max", "iops")),
        KeyMetric("ART at the MaxIOPS point", "µs", False, _point("max", "art_us")),
        KeyMetric("IOPS at TC32/QD32", "IOPS", True, _at(32, 32)),
        KeyMetric("IOPS at the MinIOPS point (TC1/QD1)", "IOPS", True, _point("min", "iops")),
        KeyMetric("ART at the MinIOPS point (TC1/QD1)", "µs", False, _point("min", "art_us")),
        *(
            KeyMetric(f"{HISTOGRAM_PCT:g} % RT at the {n} point (histogram)", "µs", False, _histogram(n), "percentile")
            for n in POINT_NAMES
        ),
    )


# The report's pages and the comparison's overlays (their plots) are imported when a report or
# a comparison is built: not by a run without a report, `iolab show` or `iolab tests`.
def pages(run: RunData) -> list[Page]:
    from iolab.pages.report.dirth import dirth_pages

    return dirth_pages(run)


def overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    from iolab.pages.compare_pages.pts2 import dirth_overlays

    return dirth_overlays(runs, labels)


TEST = TestDef(
    "dirth",
    "DIRTH",
    "SNIA PTS",
    "DIRTH: demand variation over TC × QD to steady state, Max/Mid/Min operating points (A.11)",
    build=no_input(build),
    sequence="pts",
    optional=True,
    heading=SPEC_HEADINGS["PTS"],
    key_figures=key_figures,
    pages=pages,
    overlays=overlays,
    view=render_dirth,
    params=PARAMS,
)
