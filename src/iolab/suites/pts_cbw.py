"""PTS Composite Block Size Workload (CBW, 2.0; ECW in 1.1; digest A.12): the DIRTH flow
(suites/pts_dirth.py) with the composite stimulus instead of one block size: random IO of
0.5 KiB … 64 KiB in the CBW proportions, skewed over the LBA range (50 % of IOs to the first
5 %, 30 % to the next 15 %, 20 % to the remaining 80 %), R/W 40/60 in demand variation."""

from __future__ import annotations

from ..compare.pts2 import pts_dirth_figures
from ..plan import Profile, TestPlan
from ..report.dirth import dirth_pages
from ..report.header import SPEC_HEADINGS
from ..targets import Target
from ..testdef import TestDef
from ..textreport import render_dirth
from ..units import KiB
from . import CBW_TEXT, active_fraction, cbw, no_input
from .pts_dirth import FLOW, build_flow, read_share

PARAMS = (read_share(40, "A.12 (R/W 40/60)"), *FLOW)


def build(profile: Profile, target: Target) -> TestPlan:
    ar = active_fraction(profile, target)
    cbw(0, target, duration_s=1)  # refuses a target that cannot issue its smallest blocks, before anything else

    def stimulus(read_pct: int, tc: int, qd: int, secs: float, name: str):
        return cbw(read_pct, target, threads=tc, queue_depth=qd, active_range=ar, duration_s=secs, name=f"CBW {name}")

    return build_flow(profile, target, "cbw", "Composite Block Size Workload", PARAMS, stimulus, CBW_TEXT, 4 * KiB)


TEST = TestDef(
    "cbw", "Composite Block Size Workload", "SNIA PTS",
    "CBW (ECW): the 0.5–64 KiB composite with its LBA skew through the DIRTH flow (A.12)",
    build=no_input(build), sequence="pts", optional=True, heading=SPEC_HEADINGS["PTS"], key_figures=pts_dirth_figures,
    pages=dirth_pages, view=render_dirth, params=PARAMS, short_title="CBW",
)
