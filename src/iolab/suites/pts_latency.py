"""PTS Latency test (SNIA PTS 2.0): R/W 100/0, 65/35, 0/100 (outer) × 8, 4, 0.5 KiB (inner),
RND at TC1/QD1; ART, MRT and the 99.999 % response time per cell; tracks ART of 4 KiB 0/100."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iolab.core.plan import Cell, Phase, Profile, TestPlan, Tracking
from iolab.core.units import KiB, kib_label, num, pct_text
from iolab.core.workload import Workload
from iolab.figures.compare import KeyMetric
from iolab.pages.runwords import SPEC_HEADINGS
from iolab.pages.textreport import grid_view
from iolab.suites import active_fraction, common_parameters, no_input, supported_block_sizes, tested_capacity, wipc
from iolab.suites.figures import Metrics, Runs, from_cell
from iolab.suites.testdef import TestDef
from iolab.targets import Target

if TYPE_CHECKING:
    from iolab.pages.report.model import Page
    from iolab.pages.report.rundata import RunData

MIXES = [(100, 0), (65, 35), (0, 100)]
BLOCK_SIZES = [8 * KiB, 4 * KiB, 512]


def build(profile: Profile, target: Target) -> TestPlan:
    sizes, notes = supported_block_sizes(BLOCK_SIZES, target)
    ar = active_fraction(profile, target)
    cells = tuple(
        Cell(
            f"{r}/{w} {kib_label(bs)}",
            Workload.mix("rnd", r, bs, threads=1, queue_depth=1, active_range=ar, duration_s=profile.cell_seconds),
            f"{r}/{w}",
            bs,
        )
        for r, w in MIXES
        for bs in sizes
    )
    tracking = (Tracking("ART 0/100 4KiB", "0/100 4KiB", "lat_mean_us"),)
    phase = Phase(
        "main", cells, tracking, purge=True, precondition=(wipc(profile, target),), max_rounds=profile.max_rounds
    )
    params = common_parameters(profile, target) + [
        ("Stimulus", "RND, R/W 100/0, 65/35, 0/100 × 8, 4, 0.5 KiB"),
        ("Outstanding IO", "TC 1 × QD 1"),
        ("Preconditioning", f"SEQ 128 KiB W, {profile.precondition_factor:g}× capacity"),
        ("Tracking", "ART at RND 4 KiB 0/100"),
    ]
    return TestPlan(
        "latency",
        "Latency",
        f"PTS {profile.spec} ({profile.name})",
        profile,
        (phase,),
        profile.rule(),
        tested_capacity(profile, target),
        tuple(params),
        tuple(notes),
    )


def key_figures(runs: Runs = ()) -> Metrics:
    return (
        KeyMetric("ART RND 4KiB R/W 100/0", "µs", False, from_cell("100/0", 4 * KiB, "lat_mean_us")),
        KeyMetric("ART RND 4KiB R/W 65/35", "µs", False, from_cell("65/35", 4 * KiB, "lat_mean_us")),
        KeyMetric("ART RND 4KiB R/W 0/100", "µs", False, from_cell("0/100", 4 * KiB, "lat_mean_us")),
        KeyMetric("MRT RND 4KiB R/W 0/100", "µs", False, from_cell("0/100", 4 * KiB, "lat_max_us"), kind="extreme"),
        KeyMetric(
            "99.999 % RND 4KiB R/W 100/0", "µs", False, from_cell("100/0", 4 * KiB, "p99_999_us"), kind="percentile"
        ),
        KeyMetric(
            "99.999 % RND 4KiB R/W 0/100", "µs", False, from_cell("0/100", 4 * KiB, "p99_999_us"), kind="percentile"
        ),
    )


# The report's pages and the comparison's overlays (their plots) are imported when a report or
# a comparison is built: not by a run without a report, `iolab show` or `iolab tests`.
def pages(run: RunData) -> list[Page]:
    from iolab.pages.report.pts import latency_pages

    return latency_pages(run)


def overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    from iolab.pages.compare_pages.pts import latency_overlays

    return latency_overlays(runs, labels)


TEST = TestDef(
    "latency",
    "Latency",
    "SNIA PTS",
    "Latency: ART, MRT and 5-nines at TC1/QD1, RND, 3 mixes × 3 sizes (A.7)",
    build=no_input(build),
    sequence="pts",
    heading=SPEC_HEADINGS["PTS"],
    key_figures=key_figures,
    pages=pages,
    overlays=overlays,
    view=grid_view(
        "ART (mean) / MRT (maximum) / 99.999 % (of the merged histogram) over the measurement window, µs",
        lambda c: f"{num(c.lat_mean_us)} / {num(c.lat_max_us)} / {pct_text(c.p99_999_us, c.ios)}",
    ),
)
