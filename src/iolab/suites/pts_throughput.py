"""PTS Throughput test (SNIA PTS 2.0): SEQ 1024 KiB and SEQ 128 KiB, each its own purge, preconditioning at
the test block size, and rounds of [100/0 read, 0/100 write] at TC1/QD32. Write MB/s decides
steady state; read MB/s is tracked and reported with its own determination."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iolab.core.plan import Cell, Phase, Profile, TestPlan, Tracking
from iolab.core.units import KiB, kib_label, num
from iolab.core.workload import Workload
from iolab.figures.compare import KeyMetric
from iolab.pages.runwords import SPEC_HEADINGS
from iolab.pages.textreport import grid_view
from iolab.suites import active_fraction, common_parameters, no_input, tested_capacity, wipc
from iolab.suites.figures import Metrics, Runs, from_cell
from iolab.suites.testdef import TestDef
from iolab.targets import Target

if TYPE_CHECKING:
    from iolab.pages.report.model import Page
    from iolab.pages.report.rundata import RunData

BLOCK_SIZES = [1024 * KiB, 128 * KiB]
THREADS, QUEUE_DEPTH = 1, 32


def build(profile: Profile, target: Target) -> TestPlan:
    ar = active_fraction(profile, target)
    phases = []
    for bs in BLOCK_SIZES:
        label = kib_label(bs)
        cells = tuple(
            Cell(
                f"{mix} {label}",
                Workload.mix(
                    "seq",
                    read,
                    bs,
                    threads=THREADS,
                    queue_depth=QUEUE_DEPTH,
                    active_range=ar,
                    duration_s=profile.cell_seconds,
                ),
                mix,
                bs,
            )
            for read, mix in ((100, "100/0"), (0, "0/100"))
        )
        # The PTS ends a phase on write MB/s; read MB/s gets its own determination over the same
        # window, reported beside it (the reference reports show the read convergence too).
        tracking = (
            Tracking(f"Write MB/s SEQ {label}", f"0/100 {label}", "write_mbps"),
            Tracking(f"Read MB/s SEQ {label}", f"100/0 {label}", "read_mbps", decides=False),
        )
        phases.append(
            Phase(
                f"SEQ {label}",
                cells,
                tracking,
                purge=True,
                precondition=(wipc(profile, target, bs),),
                max_rounds=profile.max_rounds,
            )
        )
    params = common_parameters(profile, target) + [
        ("Stimulus", "SEQ 1024 KiB and SEQ 128 KiB, R/W 100/0 and 0/100, separate runs"),
        ("Outstanding IO", f"TC {THREADS} × QD {QUEUE_DEPTH}"),
        ("Preconditioning", f"SEQ W at the test block size, {profile.precondition_factor:g}× capacity, per block size"),
    ]
    notes = (
        "Preconditioning at the test block size follows PTS 1.1/2.0 implementations; its rationale is UNVERIFIED.",
    )
    return TestPlan(
        "throughput",
        "Throughput",
        f"PTS {profile.spec} ({profile.name})",
        profile,
        tuple(phases),
        profile.rule(),
        tested_capacity(profile, target),
        tuple(params),
        notes,
    )


def key_figures(runs: Runs = ()) -> Metrics:
    return tuple(
        KeyMetric(
            f"SEQ {label} {'read' if mix == '100/0' else 'write'} MB/s",
            "MB/s",
            True,
            from_cell(mix, bs, "read_mbps" if mix == "100/0" else "write_mbps", f"SEQ {label}"),
        )
        for bs, label in ((1024 * KiB, "1024KiB"), (128 * KiB, "128KiB"))
        for mix in ("100/0", "0/100")
    )


# The report's pages and the comparison's overlays (their plots) are imported when a report or
# a comparison is built: not by a run without a report, `iolab show` or `iolab tests`.
def pages(run: RunData) -> list[Page]:
    from iolab.pages.report.pts import throughput_pages

    return throughput_pages(run)


def overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    from iolab.pages.compare_pages.pts import throughput_overlays

    return throughput_overlays(runs, labels)


TEST = TestDef(
    "throughput",
    "Throughput",
    "SNIA PTS",
    "Throughput: SEQ 128 KiB and 1024 KiB read and write MB/s (A.6)",
    build=no_input(build),
    sequence="pts",
    heading=SPEC_HEADINGS["PTS"],
    key_figures=key_figures,
    pages=pages,
    overlays=overlays,
    view=grid_view("MB/s, mean over the measurement window", lambda c: num(c.mbps)),
)
