"""PTS Write Saturation (digest A.8): from purge (no preconditioning), continuous RND 4 KiB
writes logged in 1-minute intervals until 4× user capacity is written or 24 h pass."""

from __future__ import annotations

import math

from ..compare import wsat_figures
from ..compare.pages import wsat_overlays
from ..plan import Cell, Phase, Profile, TestPlan, Tracking
from ..report.header import SPEC_HEADINGS
from ..report.pts import wsat_pages
from ..targets import Target
from ..testdef import TestDef
from ..textreport import render_wsat
from ..units import KiB, duration, eng
from ..workload import Workload
from . import active_fraction, common_parameters, no_input, tested_capacity


def build(profile: Profile, target: Target) -> TestPlan:
    capacity_multiple, max_seconds = profile.wsat_capacity_multiple, profile.wsat_max_seconds
    cap = tested_capacity(profile, target)
    interval = profile.cell_seconds
    cell = Cell("0/100 4KiB", Workload.mix("rnd", 0, 4 * KiB, threads=profile.threads, queue_depth=profile.queue_depth,
                                           active_range=active_fraction(profile, target), duration_s=interval),
                "0/100", 4 * KiB)
    budget = int(capacity_multiple * cap)
    phase = Phase(
        "main", (cell,), (Tracking("IOPS 0/100 4KiB", cell.key, "iops"),), purge=True, precondition=(),
        max_rounds=math.ceil(max_seconds / interval), stop_on_steady=False,
        budget_write_bytes=budget, budget_seconds=max_seconds,
    )
    params = common_parameters(profile, target) + [
        ("Stimulus", "RND 4 KiB W, continuous, logged per interval"),
        ("Outstanding IO", f"TC {profile.threads} × QD {profile.queue_depth}"),
        ("Preconditioning", "none (starts at FOB after purge)"),
        ("Stop", f"{capacity_multiple:g}× capacity ({eng(budget, 'B')} written) or {duration(max_seconds)}"),
    ]
    notes = ("WSAT stops on its byte/time budget, not on steady state (PTS 1.1 rule; the 2.0 early stop is UNVERIFIED); "
             "the steady-state table is reported for information.",)
    return TestPlan("wsat", "Write Saturation", f"PTS {profile.spec} ({profile.name})", profile, (phase,),
                    profile.rule(), cap, tuple(params), notes)


TEST = TestDef(
    "wsat", "Write Saturation", "SNIA PTS", "Write Saturation: RND 4 KiB writes from FOB to 4× capacity or 24 h (A.8)",
    build=no_input(build), sequence="pts", heading=SPEC_HEADINGS["PTS"], key_figures=wsat_figures,
    pages=wsat_pages, overlays=wsat_overlays, view=render_wsat,
)
