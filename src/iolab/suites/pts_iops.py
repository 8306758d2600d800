"""PTS IOPS test (SNIA PTS 2.0): 7 R/W mixes (outer) × 8 block sizes (inner), RND, per round."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iolab.core.plan import Cell, Phase, Profile, TestPlan, Tracking
from iolab.core.units import KiB, kib_label
from iolab.core.workload import Workload
from iolab.figures.compare import KeyMetric
from iolab.pages.runwords import SPEC_HEADINGS
from iolab.pages.textreport import iops_grid
from iolab.suites import active_fraction, common_parameters, no_input, supported_block_sizes, tested_capacity, wipc
from iolab.suites.figures import Metrics, Runs, from_cell
from iolab.suites.testdef import TestDef
from iolab.targets import Target

if TYPE_CHECKING:
    from iolab.pages.report.model import Page
    from iolab.pages.report.rundata import RunData

MIXES = [(100, 0), (95, 5), (65, 35), (50, 50), (35, 65), (5, 95), (0, 100)]  # R/W %, outer loop
BLOCK_SIZES = [1024 * KiB, 128 * KiB, 64 * KiB, 32 * KiB, 16 * KiB, 8 * KiB, 4 * KiB, 512]  # inner loop

# 1.1 tracks one variable; 2.0.2 tracks three that must all pass (the PTS's steady-state rule).
TRACKING = {
    "1.1": [("0/100", 4 * KiB)],
    "2.0.2": [("0/100", 4 * KiB), ("65/35", 64 * KiB), ("100/0", 1024 * KiB)],
}


def mix_label(read: int, write: int) -> str:
    return f"{read}/{write}"


def build(profile: Profile, target: Target) -> TestPlan:
    sizes, notes = supported_block_sizes(BLOCK_SIZES, target)
    ar = active_fraction(profile, target)
    cells = []
    for read, write in MIXES:
        for bs in sizes:
            mix = mix_label(read, write)
            cells.append(
                Cell(
                    key=f"{mix} {kib_label(bs)}",
                    mix=mix,
                    block_size=bs,
                    workload=Workload.mix(
                        "rnd",
                        read,
                        bs,
                        threads=profile.threads,
                        queue_depth=profile.queue_depth,
                        active_range=ar,
                        duration_s=profile.cell_seconds,
                    ),
                )
            )
    tracking = tuple(
        Tracking(f"IOPS {mix} {kib_label(bs)}", f"{mix} {kib_label(bs)}", "iops")
        for mix, bs in TRACKING[profile.spec]
        if bs in sizes
    )
    phase = Phase(
        "main", tuple(cells), tracking, purge=True, precondition=(wipc(profile, target),), max_rounds=profile.max_rounds
    )
    params = common_parameters(profile, target) + [
        ("Stimulus", "RND, R/W 100/0 … 0/100 (7 mixes) × 1024 … 0.5 KiB (8 sizes)"),
        ("Outstanding IO", f"TC {profile.threads} × QD {profile.queue_depth}"),
        (
            "Preconditioning",
            f"SEQ 128 KiB W, {profile.precondition_factor:g}× {tested_capacity(profile, target) / 1e9:.3f} GB",
        ),
        ("Tracking", ", ".join(t.name for t in tracking)),
        ("IOPS of a mixed cell", "total (read + write) IOPS, as the PTS reports them"),
    ]
    return TestPlan(
        "iops",
        "IOPS",
        f"PTS {profile.spec} ({profile.name})",
        profile,
        (phase,),
        profile.rule(),
        tested_capacity(profile, target),
        tuple(params),
        tuple(notes),
    )


def key_figures(runs: Runs = ()) -> Metrics:
    return tuple(
        KeyMetric(f"RND {kib_label(bs)} R/W {mix} IOPS", "IOPS", True, from_cell(mix, bs, "iops"))
        for mix, bs in (
            ("100/0", 4 * KiB),
            ("65/35", 4 * KiB),
            ("0/100", 4 * KiB),
            ("65/35", 64 * KiB),
            ("100/0", 1024 * KiB),
        )
    )


# The report's pages and the comparison's overlays (their plots) are imported when a report or
# a comparison is built: not by a run without a report, `iolab show` or `iolab tests`.
def pages(run: RunData) -> list[Page]:
    from iolab.pages.report.pts import iops_pages

    return iops_pages(run)


def overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    from iolab.pages.compare_pages.pts import iops_overlays

    return iops_overlays(runs, labels)


TEST = TestDef(
    "iops",
    "IOPS",
    "SNIA PTS",
    "IOPS: 7 R/W mixes × 8 block sizes, RND, to steady state (A.5)",
    build=no_input(build),
    sequence="pts",
    heading=SPEC_HEADINGS["PTS"],
    key_figures=key_figures,
    pages=pages,
    overlays=overlays,
    view=iops_grid,
)
