"""PTS DIRTH, Demand Intensity / Response Time Histogram (digest A.11), without the Max/Mid/Min
histogram phases: purge, RND 0/100 at TC32/QD32 to steady state, then demand-variation rounds
(a 5-minute RND 0/100 TC32/QD32 pre-write, then the chosen R/W at every TC × QD of the grid,
high to low, 1 minute each) until IOPS at TC32/QD32 is steady. The report chooses the
Max/Mid/Min operating points from the measured curve (iolab.points.operating_points)."""

from __future__ import annotations

from typing import Callable

from ..errors import IolabError
from ..compare.pts2 import DV_PHASE, PC_PHASE, PREWRITE, point_key, pts_dirth_figures
from ..plan import Cell, Phase, Profile, TestPlan, Tracking
from ..points import ART_CUTOFF
from ..report.dirth import dirth_pages
from ..report.header import SPEC_HEADINGS
from ..targets import Target
from ..testdef import TestDef
from ..testparams import Param, given, int_list, parameter_rows, seconds, show_list, show_seconds, size, values
from ..textreport import render_dirth
from ..units import KiB, duration, kib_label
from ..workload import Workload
from . import active_fraction, common_parameters, no_input, supported_block_sizes, tested_capacity


def percent(text: str) -> int:
    v = int(text.rstrip("%"))
    if not 0 <= v <= 100:
        raise ValueError("give a read percentage from 0 to 100")
    return v


def _descending(text: str) -> tuple[int, ...]:
    vals = int_list(text)
    if 0 in vals:
        raise ValueError("give values of at least 1")
    return tuple(reversed(vals))  # the PTS runs high → low


GRID = (32, 16, 8, 6, 4, 2, 1)


def read_share(default: int, source: str) -> Param:
    return Param("read_pct", default, "Read share (%) of the demand-variation stimulus", percent,
                 lambda v: f"{v}/{100 - v} R/W", source)


# The DIRTH flow's own parameters, shared by every stimulus run through it (CBW too).
FLOW = (
    Param("threads", GRID, "Thread counts of the grid (run high → low)", _descending, show_list, "A.11"),
    Param("depths", GRID, "Queue depths of the grid (run high → low)", _descending, show_list, "A.11"),
    Param("pc_round_time", 30 * 60.0, "Length of one preconditioning round (one interval; y = its IOPS)", seconds,
          show_seconds, "UNVERIFIED: A.11 implementation rounds of 30 × 1 min"),
    Param("prewrite_time", 5 * 60.0, "RND 0/100 TC32/QD32 pre-write before each demand-variation round", seconds,
          show_seconds, "A.11"),
    ART_CUTOFF,
)
PARAMS = (
    Param("block_size", 8 * KiB, "Block size of the RND stimulus", size, kib_label, "A.11 implementation default"),
    read_share(65, "A.11 implementation default (OLTP)"),
    *FLOW,
)

# (read %, threads, queue depth, seconds, name) -> the stimulus at that point
Stimulus = Callable[[int, int, int, float, str], Workload]


def build(profile: Profile, target: Target) -> TestPlan:
    v = values(PARAMS, profile, "dirth")
    bs = v["block_size"]
    if not supported_block_sizes([bs], target)[0]:
        raise IolabError(f"dirth --set block_size={bs}: below the target's {target.facts.logical_sector} B logical "
                         "sector; direct IO cannot issue it. Nothing was run or written.")
    ar = active_fraction(profile, target)

    def rnd(read_pct: int, tc: int, qd: int, secs: float, name: str) -> Workload:
        return Workload.mix("rnd", read_pct, bs, threads=tc, queue_depth=qd, active_range=ar, duration_s=secs, name=name)

    return build_flow(profile, target, "dirth", "DIRTH", PARAMS, rnd, f"RND {kib_label(bs)}", bs)


def build_flow(profile: Profile, target: Target, test: str, title: str, params: tuple[Param, ...], rnd: Stimulus,
               what: str, bs: int) -> TestPlan:
    """The DIRTH flow (A.11) with a stimulus: PC at 0/100 to steady state, then the
    demand-variation rounds at the chosen read share."""
    v, text = values(params, profile, test), given(profile)
    read = v["read_pct"]
    top_tc, top_qd = max(v["threads"]), max(v["depths"])

    # A quick run keeps every period at one cell unless the user set it.
    def length(name: str) -> float:
        return profile.cell_seconds if profile.quick and name not in text else v[name]

    pc_cell = Cell(point_key(top_tc, top_qd), rnd(0, top_tc, top_qd, length("pc_round_time"), "PC RND 0/100"),
                   f"TC{top_tc}", bs)
    pc = Phase(PC_PHASE, (pc_cell,), (Tracking(f"IOPS PC {pc_cell.key}", pc_cell.key, "iops"),), purge=True,
               max_rounds=profile.max_rounds)
    grid = [Cell(point_key(tc, qd), rnd(read, tc, qd, profile.cell_seconds, f"RND {read}/{100 - read}"), f"TC{tc}", bs)
            for tc in v["threads"] for qd in v["depths"]]
    pre = Cell(PREWRITE, rnd(0, top_tc, top_qd, length("prewrite_time"), "pre-write RND 0/100"), "pre-write", bs)
    top = point_key(top_tc, top_qd)
    dv = Phase(DV_PHASE, (pre, *grid), (Tracking(f"IOPS {top}", top, "iops"),), purge=False,
               max_rounds=profile.max_rounds)
    rows = common_parameters(profile, target) + [
        ("Stimulus", f"{what}, R/W {read}/{100 - read}, TC {show_list(v['threads'])} × "
                     f"QD {show_list(v['depths'])} (high → low)"),
        ("PC", f"{what} 0/100 at TC{top_tc}/QD{top_qd}, rounds of {duration(length('pc_round_time'))}, "
               "to steady state"),
        ("Between rounds", f"pre-write RND 0/100 TC{top_tc}/QD{top_qd} for {duration(length('prewrite_time'))}"),
        ("Tracking", f"IOPS at {top}"),
        *parameter_rows(params, profile, test),
    ]
    notes = ("The Max/Mid/Min response-time histogram phases of A.11 are not run by this test; the operating "
             "points are chosen and printed from the demand-variation measurement window.",)
    if profile.quick:
        notes += ("Quick run: the PC rounds and pre-writes last one cell each (unless set); non-compliant.",)
    return TestPlan(test, title, f"PTS {profile.spec} ({profile.name})", profile, (pc, dv), profile.rule(),
                    tested_capacity(profile, target), tuple(rows), notes)


TEST = TestDef(
    "dirth", "DIRTH", "SNIA PTS",
    "DIRTH: demand variation over TC × QD to steady state, Max/Mid/Min operating points (A.11)",
    build=no_input(build), sequence="pts", optional=True, heading=SPEC_HEADINGS["PTS"], key_figures=pts_dirth_figures,
    pages=dirth_pages, view=render_dirth, params=PARAMS,
)
