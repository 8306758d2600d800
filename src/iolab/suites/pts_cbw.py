"""PTS Composite Block Size Workload (CBW in SNIA PTS 2.0; ECW in 1.1): the DIRTH flow
(suites/dirth_flow.py) with the composite stimulus instead of one block size: random IO of
0.5 KiB … 64 KiB in the CBW proportions, skewed over the LBA range (50 % of IOs to the first
5 %, 30 % to the next 15 %, 20 % to the remaining 80 %), R/W 40/60 in demand variation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iolab.core.plan import Profile, TestPlan
from iolab.core.testparams import values
from iolab.pages.runwords import SPEC_HEADINGS
from iolab.pages.textreport import render_dirth
from iolab.suites import CBW_TEXT, active_fraction, cbw, no_input
from iolab.suites.dirth_flow import FLOW, TC_QD_GRID, Stimulus, WorkloadAt, build_flow, grid_points, read_share
from iolab.suites.pts_dirth import grid_text, key_figures  # the DIRTH flow's figures
from iolab.suites.testdef import TestDef
from iolab.targets import Target

if TYPE_CHECKING:
    from iolab.pages.report.model import Page
    from iolab.pages.report.rundata import RunData

PARAMS = (read_share(40, "A.12 (R/W 40/60)"), *TC_QD_GRID, *FLOW)


def build(profile: Profile, target: Target) -> TestPlan:
    v = values(PARAMS, profile, "cbw")
    ar = active_fraction(profile, target)
    cbw(0, target, duration_s=1)  # refuses a target that cannot issue its smallest blocks, before anything else

    def mix(read_pct: int) -> WorkloadAt:
        return lambda tc, qd, secs, name: cbw(
            read_pct,
            target,
            threads=tc,
            queue_depth=qd,
            active_range=ar,
            duration_s=secs,
            name=f"CBW {name} {read_pct}/{100 - read_pct}",
        )

    read = v["read_pct"]
    stimulus = Stimulus(f"{CBW_TEXT}, R/W {read}/{100 - read}", "CBW 0/100", 0, mix(0), mix(read))
    return build_flow(
        profile,
        target,
        "cbw",
        "Composite Block Size Workload",
        f"PTS {profile.spec} ({profile.name})",
        PARAMS,
        stimulus,
        grid_points(v),
        grid_text(v),
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
    "cbw",
    "Composite Block Size Workload",
    "SNIA PTS",
    "CBW (ECW): the 0.5–64 KiB composite with its LBA skew through the DIRTH flow (A.12)",
    build=no_input(build),
    sequence="pts",
    optional=True,
    heading=SPEC_HEADINGS["PTS"],
    key_figures=key_figures,
    pages=pages,
    overlays=overlays,
    view=render_dirth,
    params=PARAMS,
    short_title="CBW",
)
