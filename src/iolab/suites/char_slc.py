"""SLC cache: a client drive's write cache, crossed by one sequential fill from fresh (a purge,
no preconditioning): MB/s every second against GB written, and where the rate falls off its
cliff (analysis/slc.py): the cache size, the rate in the cache and after it. A drive without a
cache, or a file, writes at one rate and the test says "no cache found"."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from iolab.core import percentages as pc
from iolab.core import testparams as tp
from iolab.core.plan import Cell, Phase, Profile, TestPlan
from iolab.core.units import KiB
from iolab.core.workload import Workload
from iolab.figures.compare import KeyMetric
from iolab.figures.slc import Cache
from iolab.figures.summary import PhaseSummary
from iolab.pages.report.char_slc import PHASE, phase_cache, slc_view
from iolab.suites import active_fraction, common_parameters, no_input, tested_capacity
from iolab.suites import characterise_common as cc
from iolab.suites.figures import Getter, Metrics, Runs, phase
from iolab.suites.testdef import TestDef
from iolab.targets import Target

if TYPE_CHECKING:
    from iolab.pages.report.model import Page
    from iolab.pages.report.rundata import RunData

NAME = "slc-cache"
BLOCK = 128 * KiB
# A --quick run on a simulated drive writes a copy of this size whose SLC cache is the drive's
# own: the client preset's 8 GB, crossed in about 2.3 s at its 3.5 GB/s, then 24 GB after it. A
# copy scaled whole (0.5 GB) keeps a 8 MB cache, crossed within a few milliseconds, which a
# series of one point a second cannot show.
QUICK_SIM_GB = 32.0

PARAMS = (
    tp.Param(
        "writes",
        1.0,
        "how much the fill writes, × the tested capacity (a reviewer fills the whole drive)",
        tp.capacity_multiple,
        lambda v: f"{v:g} × the tested capacity",
        source="published reviews",
    ),
    tp.Param("qd", 32, "queue depth of the one thread", tp.queue_depth, source="published reviews"),
    tp.Param(
        "cliff",
        0.75,
        "a cache's cliff: the rate after it stays below this share of the rate in it",
        pc.share_within,
        tp.show_percent,
        source="UNVERIFIED: iolab's choice",
    ),
)


def build(profile: Profile, target: Target) -> TestPlan:
    v = tp.values(PARAMS, profile, NAME)
    cap = tested_capacity(profile, target)
    budget = int(v["writes"] * cap)
    fill = Workload.mix(
        "seq",
        0,
        BLOCK,
        threads=1,
        queue_depth=v["qd"],
        active_range=active_fraction(profile, target),
        bytes_budget=budget,
        name=f"fill SEQ 128KiB W, {v['writes']:g}× capacity",
    )
    cell = Cell(f"SEQ 128KiB W QD{v['qd']}", fill, "0/100", BLOCK)
    ph = Phase(PHASE, (cell,), (), purge=True, max_rounds=1, stop_on_steady=False)
    rows = (
        common_parameters(profile, target)
        + tp.parameter_rows(PARAMS, profile, NAME)
        + [
            ("Stimulus", f"SEQ 128 KiB W, TC 1 × QD {v['qd']}, {budget / 1e9:.3f} GB from a purge, MB/s every second"),
            ("Cache found by", "the one change point of the MB/s series (least squares over both parts)"),
        ]
    )
    # the fill's bytes against the whole drive's: a fill of less may lie within a cache, so a
    # fill without a cliff gives no rate "after the cache" (figures/slc.py)
    v = {**v, "fill_of_drive": budget / target.drive_capacity}
    return TestPlan(
        NAME,
        "SLC Cache",
        f"characterisation ({profile.name})",
        profile,
        (ph,),
        profile.rule(),
        cap,
        tuple(rows),
        values=v,
    )


@dataclass(frozen=True)
class _CacheFigure:
    """A figure of the cache the fill crossed; `unmeasured` says why a figure has no value (no
    cache found; no rate after a cache where the fill may have stayed within one)."""

    figure: Callable[[Cache], float | None]
    why: Callable[[Cache], str]

    def _cache(self, phases: list[PhaseSummary]) -> Cache | None:
        ph = phase(phases, PHASE)
        return phase_cache(ph) if ph else None

    def __call__(self, phases: list[PhaseSummary]) -> float | None:
        found = self._cache(phases)
        return self.figure(found) if found else None

    def unmeasured(self, phases: list[PhaseSummary]) -> str:
        found = self._cache(phases)
        return self.why(found) if found and self.figure(found) is None else ""


def _cache(figure: Callable[[Cache], float | None]) -> Getter:
    return _CacheFigure(figure, lambda c: f"no cache found: {c.reason}")


def key_figures(runs: Runs = ()) -> Metrics:
    return (
        KeyMetric("SLC cache size", "GB", True, _cache(lambda c: c.size_gb)),
        KeyMetric("in-cache write rate", "MB/s", True, _cache(lambda c: c.in_cache_mbps)),
        # without a cliff, the rate the fill kept only where it wrote the whole drive (figures/slc.py)
        KeyMetric(
            "post-cache write rate", "MB/s", True, _CacheFigure(lambda c: c.post_cache_mbps, lambda c: c.no_post)
        ),
    )


# The report's pages and the comparison's overlays (their plots) are imported when a report or
# a comparison is built: not by a run without a report, `iolab show` or `iolab tests`.
def pages(run: RunData) -> list[Page]:
    from iolab.pages.report.char_slc import slc_pages

    return slc_pages(run)


TEST = TestDef(
    NAME,
    "SLC Cache",
    cc.FAMILY,
    "purge, then one sequential fill: MB/s against GB written, the SLC cache size and the rates in and after it",
    build=no_input(build),
    sequence=cc.SEQUENCE,
    optional=True,
    key_figures=key_figures,
    pages=pages,
    view=slc_view,
    short_title="SLC cache",
    params=PARAMS,
    quick_sim_gb=QUICK_SIM_GB,
    quick_keeps_cache=True,
)
