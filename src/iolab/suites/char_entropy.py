"""Entropy: queue depth × data entropy % (0 = fully compressible … 100 =
random), 4K random writes per cell, then the same for 70/30 read/write. Entropy is
Workload.entropy; fio writes it as buffer_compress_percentage = 100 − entropy % with
refill_buffers (docs/tests.md, checked by tests/integration/test_entropy_mapping.py), the
simulator compresses what a compressing preset is told is compressible."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from iolab.core import testparams as tp
from iolab.core.plan import Cell, Profile, TestPlan
from iolab.core.units import KiB
from iolab.core.workload import Workload
from iolab.figures.compare import KeyMetric
from iolab.figures.compare.characterise import grid
from iolab.figures.summary import PhaseSummary
from iolab.pages.chartext import matrix_view
from iolab.suites import active_fraction, no_input, tested_capacity
from iolab.suites import characterise_common as cc
from iolab.suites.figures import Getter, Metrics, Runs
from iolab.suites.testdef import TestDef
from iolab.targets import Target

if TYPE_CHECKING:
    from iolab.pages.report.model import Page
    from iolab.pages.report.rundata import RunData

MIXES = (("write", 0), ("70/30", 70))  # phase name, read %
PARAMS = (
    tp.Param(
        "qds",
        (1, 4, 16, 32, 64),
        "queue depths (one thread)",
        tp.depth_list,
        tp.show_list,
        source="published reviews",
        quick=(1, 32),
    ),
    tp.Param(
        "entropies",
        (0, 25, 50, 75, 100),
        "data entropy in % (0: fully compressible, 100: random)",
        tp.percent_list,
        tp.show_list,
        source="published reviews",
        quick=(0, 50, 100),
    ),
    # A quick run's 3 s of preconditioning leaves the drive still slowing down, so the cells,
    # run in entropy order, showed the drift as an entropy effect (default preset, QD32 writes:
    # 57,225 → 46,819 IOPS from 0 to 100 %); steady state first leaves entropy alone.
    replace(cc.PRECONDITION, quick="steady"),
    tp.Param(
        "cell_time",
        300.0,
        "measured time per cell; --quick uses --cell-time unless set",
        tp.seconds,
        tp.show_seconds,
        source="published reviews",
        quick=lambda profile, _: profile.cell_seconds,
    ),
)


def entropy_label(pct: int) -> str:
    return f"{pct}% entropy"


def build(profile: Profile, target: Target) -> TestPlan:
    s = cc.setup("entropy", PARAMS, profile, target)
    qds, ents = s.values["qds"], s.values["entropies"]
    secs = s.values["cell_time"]
    ar = active_fraction(profile, target)
    phases = list(s.phases)
    for name, read in MIXES:
        # Highest entropy first: the preconditioning leaves the drive full of incompressible
        # data, and compressible writes free flash for every cell after them (entry-sata, QD32
        # at 100 %: 13,493 IOPS run last, 8,331 first; saturated near 7,900).
        cells = tuple(
            Cell(
                cc.cell_key(entropy_label(e), qd),
                Workload.mix(
                    "rnd", read, 4 * KiB, threads=1, queue_depth=qd, active_range=ar, entropy=e / 100, duration_s=secs
                ),
                entropy_label(e),
                4 * KiB,
            )
            for e in sorted(ents, reverse=True)
            for qd in qds
        )
        phases.append(cc.first_phase(s, name, cells) if len(phases) == len(s.phases) else cc.next_phase(name, cells))
    # the header's default "random (incompressible)" holds for the preconditioning only
    pattern = (
        f"entropy {tp.show_list(ents)} % (0: fully compressible, 100: random); preconditioning random (incompressible)"
    )
    rows = [(k, pattern if k == "Data pattern" else v) for k, v in s.rows] + [
        ("Stimulus", f"RND 4 KiB W, then R/W 70/30; entropy % {tp.show_list(ents)} × QD {tp.show_list(qds)}, TC 1"),
        ("Cell duration", tp.show_seconds(secs)),
        ("Entropy on fio", "buffer_compress_percentage = 100 − entropy %, refill_buffers=1 (fresh data per write)"),
    ]
    notes = (
        "Entropy maps to fio's buffer_compress_percentage = 100 − entropy (default chunk of "
        "buffer_compress_chunk); iolab checks the mapping by compressing fio's written data with zlib.",
    )
    return TestPlan(
        "entropy",
        "Entropy",
        f"characterisation ({profile.name})",
        profile,
        tuple(phases),
        profile.rule(),
        tested_capacity(profile, target),
        tuple(rows),
        notes,
        values=s.values,
    )


def _peak_of_series(name: str, series: str) -> Getter:
    def get(phases: list[PhaseSummary]) -> float | None:
        ph = next((p for p in phases if p.phase.name == name), None)
        vals = [c.iops for (s, _), c in grid(ph)[2].items() if s == series] if ph else []
        return max(vals) if vals else None

    return get


def key_figures(runs: Runs = ()) -> Metrics:
    return tuple(
        KeyMetric(f"{ph} peak IOPS at {e}% entropy", "IOPS", True, _peak_of_series(ph, f"{e}% entropy"))
        for ph in ("write", "70/30")
        for e in (0, 100)
    )


# The report's pages and the comparison's overlays (their plots) are imported when a report or
# a comparison is built: not by a run without a report, `iolab show` or `iolab tests`.
def pages(run: RunData) -> list[Page]:
    from iolab.pages.report.characterise import entropy_pages

    return entropy_pages(run)


def overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    from iolab.pages.compare_pages.characterise import entropy_overlays

    return entropy_overlays(runs, labels)


TEST = TestDef(
    "entropy",
    "Entropy",
    cc.FAMILY,
    "QD × data entropy % (compressible … random): 4K random writes, then 70/30",
    build=no_input(build),
    sequence=cc.SEQUENCE,
    key_figures=key_figures,
    pages=pages,
    overlays=overlays,
    view=matrix_view,
    params=cc.params_of(PARAMS),
)
