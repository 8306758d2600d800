"""PTS Latency test (digest A.7): R/W 100/0, 65/35, 0/100 (outer) × 8, 4, 0.5 KiB (inner),
RND at TC1/QD1; ART, MRT and the 99.999 % response time per cell; tracks ART of 4 KiB 0/100."""

from __future__ import annotations

from ..plan import Cell, Phase, Profile, TestPlan, Tracking
from ..targets import Target
from ..units import KiB, kib_label
from ..workload import Workload
from . import active_fraction, common_parameters, supported_block_sizes, tested_capacity, wipc

MIXES = [(100, 0), (65, 35), (0, 100)]
BLOCK_SIZES = [8 * KiB, 4 * KiB, 512]


def build(profile: Profile, target: Target) -> TestPlan:
    sizes, notes = supported_block_sizes(BLOCK_SIZES, target)
    ar = active_fraction(profile, target)
    cells = tuple(
        Cell(f"{r}/{w} {kib_label(bs)}", Workload.mix("rnd", r, bs, threads=1, queue_depth=1, active_range=ar,
                                                      duration_s=profile.cell_seconds), f"{r}/{w}", bs)
        for r, w in MIXES for bs in sizes
    )
    tracking = (Tracking("ART 0/100 4KiB", "0/100 4KiB", "lat_mean_us"),)
    phase = Phase("main", cells, tracking, purge=True, precondition=(wipc(profile, target),), max_rounds=profile.max_rounds)
    params = common_parameters(profile, target) + [
        ("Stimulus", "RND, R/W 100/0, 65/35, 0/100 × 8, 4, 0.5 KiB"),
        ("Outstanding IO", "TC 1 × QD 1"),
        ("Preconditioning", f"SEQ 128 KiB W, {profile.precondition_factor:g}× capacity"),
        ("Tracking", "ART at RND 4 KiB 0/100"),
    ]
    return TestPlan("latency", "Latency", f"PTS {profile.spec} ({profile.name})", profile, (phase,), profile.rule(),
                    tested_capacity(profile, target), tuple(params), tuple(notes))
