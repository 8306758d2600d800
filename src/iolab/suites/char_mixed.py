"""4K mixed matrix: RND 4 KiB, queue depth × write share (0 … 100 % in steps
of 10): read, write and total IOPS, MB/s, average latency. After the shared preconditioning."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iolab.core import testparams as tp
from iolab.core.plan import Cell, Profile, TestPlan
from iolab.core.units import KiB
from iolab.core.workload import Workload
from iolab.figures.compare import KeyMetric
from iolab.figures.demand import RATE
from iolab.pages.chartext import matrix_view
from iolab.suites import active_fraction, no_input, tested_capacity
from iolab.suites import characterise_common as cc
from iolab.suites.figures import Metrics, Runs, peak
from iolab.suites.testdef import TestDef
from iolab.targets import Target

if TYPE_CHECKING:
    from iolab.pages.report.model import Page
    from iolab.pages.report.rundata import RunData

PARAMS = (
    tp.Param(
        "qds",
        (1, 2, 4, 8, 16, 32, 64, 128),
        "queue depths (one thread)",
        tp.depth_list,
        tp.show_list,
        source="published reviews",
        quick=(1, 32),
    ),
    tp.Param(
        "write_pcts",
        tuple(range(0, 101, 10)),
        "write shares in % (0: all reads, 100: all writes)",
        tp.percent_list,
        tp.show_list,
        source="published reviews",
        quick=(0, 30, 70, 100),
    ),
)


def mix_label(write_pct: int) -> str:
    return f"{write_pct}% W"


def build(profile: Profile, target: Target) -> TestPlan:
    s = cc.setup("mixed-matrix", PARAMS, profile, target)
    qds, pcts = s.values["qds"], s.values["write_pcts"]
    ar = active_fraction(profile, target)
    cells = tuple(
        Cell(
            cc.cell_key(mix_label(w), qd),
            Workload.mix(
                "rnd", 100 - w, 4 * KiB, threads=1, queue_depth=qd, active_range=ar, duration_s=profile.cell_seconds
            ),
            mix_label(w),
            4 * KiB,
        )
        for w in pcts
        for qd in qds
    )
    rows = s.rows + [
        ("Stimulus", f"RND 4 KiB, write % {tp.show_list(pcts)} × QD {tp.show_list(qds)}, TC 1"),
        ("Cell duration", f"{profile.cell_seconds:g} s per cell (--cell-time)"),
    ]
    return TestPlan(
        "mixed-matrix",
        "4K Mixed Matrix",
        f"characterisation ({profile.name})",
        profile,
        (*s.phases, cc.first_phase(s, "mixed", cells)),
        profile.rule(),
        tested_capacity(profile, target),
        tuple(rows),
        values=s.values,
    )


def key_figures(runs: Runs = ()) -> Metrics:
    return (
        KeyMetric("peak total IOPS", "IOPS", True, peak("mixed")),
        # all reads and all writes, where `write_pcts` measured them: 4 KiB random rates Max IOPS
        # and Demand measure too, held against theirs in a sequence's summary (figures/crosscheck.py)
        KeyMetric("0% W peak IOPS", "IOPS", True, cc.series_peak("mixed", mix_label(0)), rate_of=RATE["read"]),
        KeyMetric("100% W peak IOPS", "IOPS", True, cc.series_peak("mixed", mix_label(100)), rate_of=RATE["write"]),
        KeyMetric("30% W QD1 average latency", "µs", False, cc.at("mixed", "30% W", 1, "lat_mean_us")),
    )


# The report's pages and the comparison's overlays (their plots) are imported when a report or
# a comparison is built: not by a run without a report, `iolab show` or `iolab tests`.
def pages(run: RunData) -> list[Page]:
    from iolab.pages.report.characterise import mixed_pages

    return mixed_pages(run)


def overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    from iolab.pages.compare_pages.characterise import matrix_overlays

    return matrix_overlays(runs, labels)


TEST = TestDef(
    "mixed-matrix",
    "4K Mixed Matrix",
    cc.FAMILY,
    "RND 4K, QD × write % (0…100 step 10): read, write and total IOPS, MB/s, average latency",
    build=no_input(build),
    sequence=cc.SEQUENCE,
    key_figures=key_figures,
    pages=pages,
    overlays=overlays,
    view=matrix_view,
    short_title="Mixed",
    params=PARAMS + cc.PARAMS,
)
