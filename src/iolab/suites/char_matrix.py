"""Reads and writes matrices: RND and SEQ × READ and WRITE × queue depth ×
IO size, one phase per access and direction, each cell IOPS, MB/s, average and maximum
latency. After the shared preconditioning (characterise_common)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iolab.core import testparams as tp
from iolab.core.errors import IolabError
from iolab.core.plan import Cell, Profile, TestPlan
from iolab.core.units import KiB, MiB, kib_label
from iolab.core.workload import Access, Workload
from iolab.figures.compare import KeyMetric
from iolab.figures.demand import RATE
from iolab.pages.chartext import matrix_view
from iolab.suites import active_fraction, no_input, supported_block_sizes, tested_capacity
from iolab.suites import characterise_common as cc
from iolab.suites.figures import Metrics, Runs, peak
from iolab.suites.testdef import TestDef
from iolab.targets import Target

if TYPE_CHECKING:
    from iolab.pages.report.model import Page
    from iolab.pages.report.rundata import RunData

PHASES: tuple[tuple[Access, str], ...] = (("rnd", "read"), ("rnd", "write"), ("seq", "read"), ("seq", "write"))
PARAMS = (
    tp.Param(
        "qds",
        (1, 2, 4, 8, 16, 32, 64, 128),
        "queue depths (one thread)",
        tp.depth_list,
        tp.show_list,
        source="published reviews",
        quick=(1, 4, 32),
    ),
    tp.Param(
        "sizes",
        (512, 4 * KiB, 8 * KiB, 16 * KiB, 32 * KiB, 64 * KiB, 128 * KiB, 256 * KiB, 512 * KiB, MiB),
        "IO sizes",
        tp.size_list,
        cc.size_text,
        source="published reviews",
        quick=(4 * KiB, 128 * KiB),
    ),
)


def phase_name(access: str, op: str) -> str:
    return f"{access.upper()} {op.upper()}"


def build(profile: Profile, target: Target) -> TestPlan:
    s = cc.setup("rw-matrix", PARAMS, profile, target)
    qds = s.values["qds"]
    sizes, notes = supported_block_sizes(list(s.values["sizes"]), target)
    if not sizes:  # said as the sizes' own problem, not "phase 'RND READ': has no cells to measure"
        raise IolabError(
            f"rw-matrix --set sizes: {'; '.join(notes)}: no size left to measure. Nothing was run or written."
        )
    ar = active_fraction(profile, target)
    phases = list(s.phases)
    for access, op in PHASES:
        cells = tuple(
            Cell(
                cc.cell_key(kib_label(bs), qd),
                Workload.mix(
                    access,
                    100 if op == "read" else 0,
                    bs,
                    threads=1,
                    queue_depth=qd,
                    active_range=ar,
                    duration_s=profile.cell_seconds,
                ),
                kib_label(bs),
                bs,
            )
            for bs in sizes
            for qd in qds
        )
        name = phase_name(access, op)
        phases.append(cc.first_phase(s, name, cells) if len(phases) == len(s.phases) else cc.next_phase(name, cells))
    rows = s.rows + [
        ("Stimulus", f"RND/SEQ × R/W × QD {tp.show_list(qds)} × {cc.size_text(tuple(sizes))}, TC 1"),
        ("Cell duration", f"{profile.cell_seconds:g} s per cell (--cell-time)"),
    ]
    return TestPlan(
        "rw-matrix",
        "Reads and Writes Matrices",
        f"characterisation ({profile.name})",
        profile,
        tuple(phases),
        profile.rule(),
        tested_capacity(profile, target),
        tuple(rows),
        tuple(notes),
        values=s.values,
    )


def key_figures(runs: Runs = ()) -> Metrics:
    out = []
    for name, op in (("RND READ", "read"), ("RND WRITE", "write")):
        out += [
            KeyMetric(f"{name} peak IOPS", "IOPS", True, peak(name)),
            # the 4 KiB cells' peak, a rate of the workload Max IOPS and Demand measure: held against
            # theirs in a sequence's summary (figures/crosscheck.py); the peak over every IO size is not
            KeyMetric(f"{name} 4KiB peak IOPS", "IOPS", True, cc.series_peak(name, "4KiB"), rate_of=RATE[op]),
            KeyMetric(f"{name} 4KiB QD1 average latency", "µs", False, cc.at(name, "4KiB", 1, "lat_mean_us")),
        ]
    out += [KeyMetric(f"{name} peak MB/s", "MB/s", True, peak(name, "mbps")) for name in ("SEQ READ", "SEQ WRITE")]
    return tuple(out)


# The report's pages and the comparison's overlays (their plots) are imported when a report or
# a comparison is built: not by a run without a report, `iolab show` or `iolab tests`.
def pages(run: RunData) -> list[Page]:
    from iolab.pages.report.characterise import matrix_pages

    return matrix_pages(run)


def overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    from iolab.pages.compare_pages.characterise import matrix_overlays

    return matrix_overlays(runs, labels)


TEST = TestDef(
    "rw-matrix",
    "Reads and Writes Matrices",
    cc.FAMILY,
    "RND/SEQ × READ/WRITE × QD 1…128 × IO size 0.5K…1M: IOPS, MB/s, average and maximum latency",
    build=no_input(build),
    sequence=cc.SEQUENCE,
    key_figures=key_figures,
    pages=pages,
    overlays=overlays,
    view=matrix_view,
    short_title="Matrices",
    params=PARAMS + cc.PARAMS,
)
