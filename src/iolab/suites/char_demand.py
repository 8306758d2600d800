"""Latency vs IOPS demand: random 4 KiB reads, then writes, at a rising
demanded rate (fio's rate_iops), one cell per step. Each ramp ends by its DemandShortfall
rule once delivered IOPS fall short of the demand by more than the tolerance for two steps
in a row; the rule's outcome (the highest demand met) is the drive's maximum sustainable
IOPS. Both ramps follow a purge and 4 KiB random-write preconditioning."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from iolab.core import percentages as pc
from iolab.core import testparams as tp
from iolab.core.decide import DemandShortfall, Sample, rule_record
from iolab.core.plan import Cell, Deferred, Phase, Profile, TestPlan
from iolab.core.units import KiB, counted
from iolab.core.workload import Workload
from iolab.figures.compare import KeyMetric
from iolab.figures.demand import RAMPS, RATE, top_step
from iolab.figures.summary import CellAverage, PhaseSummary
from iolab.suites import active_fraction, bisection, no_input, tested_capacity
from iolab.suites import characterise_common as cc
from iolab.suites.figures import Getter, Metrics, Runs
from iolab.suites.testdef import TestDef
from iolab.targets import Target

if TYPE_CHECKING:
    from rich.console import Console

    from iolab.pages.report.model import Page
    from iolab.pages.report.rundata import RunData

NAME = "latency-demand"
WARMUP = tp.Param(
    "warmup",
    9.0,
    "unmeasured warm-up before each step or round (fio ramp_time; --quick: 0 unless set)",
    lambda t: 0.0 if t.strip() in ("0", "0s") else tp.seconds(t),
    tp.show_seconds,
    source="UNVERIFIED: the reviews exclude a warm-up; iolab uses their QoS rounds' 9 s",
    quick=0.0,
)


# The first step after the preconditioning runs at least this long unmeasured, whatever the
# warm-up: a drive with a power-loss-protected write buffer acknowledges writes before they are
# programmed, so when the last preconditioning write completes its dies still have the buffer's
# content (and GC) to program, and a read waits behind that. On a bench the next job starts a
# moment later and the backlog is gone; with no warm-up (--quick) the step was measured from
# the first instant and its maximum was that backlog, not the reads: 7.2 ms on enterprise-sas
# (1 MiB buffer draining at the steady ~42,500 IOPS) and 13.4 ms on entry-sata-compress
# against 142 / 272 µs in the next step.
SETTLE_S = 1.0


def geometric(start: int, stop: int, ratio: float = 2**0.5) -> tuple[int, ...]:
    """start, start·ratio, start·ratio², … up to stop, each rounded to two significant digits: a
    quick ladder that resolves a 10k-IOPS loop device as well as a million-IOPS drive (√2: ~20
    steps)."""
    out, k = [], 0
    while (v := start * ratio**k) <= stop:
        out.append(int(float(f"{v:.2g}")))
        k += 1
    return tuple(out)


def show_demand(v: tuple[int, ...]) -> str:
    if len(v) > 2 and len({b - a for a, b in zip(v, v[1:])}) == 1:
        return f"{v[0]:,} … {v[-1]:,} in {v[1] - v[0]:,} IOPS steps ({counted(len(v), 'step')})"
    return (
        f"{tp.show_list(v)} ({counted(len(v), 'step')})"
        if len(v) <= 30
        else f"{v[0]:,} … {v[-1]:,} ({counted(len(v), 'step')})"
    )


def positive_list(text: str) -> tuple[int, ...]:
    """An ascending list (tp.int_list) without 0: a 0 IOPS demand or QD 0 means nothing to fio."""
    return tp.int_list(text, least=1)


PARAMS = (
    tp.Param(
        "demand",
        tuple(range(5000, 2_000_001, 5000)),
        "demanded IOPS per step: a list (5000,10000,…) or "
        "START:STEP:STOP; --quick: 1,000 … 1,400,000 rising by √2 unless set",
        positive_list,
        show_demand,
        source="published reviews (5,000 IOPS steps)",
        quick=geometric(1000, 2_000_000),
    ),
    tp.Param(
        "step_time",
        60.0,
        "how long each demand step is measured (--quick: the cell time unless set)",
        tp.seconds,
        tp.show_seconds,
        source="published reviews",
        quick=lambda profile, _: profile.cell_seconds,
    ),
    tp.Param(
        "tolerance",
        0.02,
        "a step falls short when it delivers less than demand × (1 − tolerance)",
        pc.fraction_below_one,
        tp.show_percent,
        source="published reviews",
    ),
    tp.Param(
        "shortfall_steps",
        2,
        "steps in a row that must fall short to end a ramp",
        tp.positive_int,
        source="published reviews",
    ),
    tp.Param(
        "queue_depth",
        32,
        "outstanding IO that carries the demand (one thread); the rate limit, not the queue, sets the load",
        tp.queue_depth,
        source="UNVERIFIED: the reviews do not say; iolab's choice",
    ),
    WARMUP,
)


def build(profile: Profile, target: Target) -> TestPlan:
    s = cc.setup(NAME, PARAMS, profile, target)
    v = s.values
    step_s, warmup, demand = v["step_time"], v["warmup"], v["demand"]
    rule = DemandShortfall(tolerance=v["tolerance"], steps=v["shortfall_steps"])
    ar = active_fraction(profile, target)
    phases: list[Phase | Deferred] = list(s.phases)
    for i, (name, read_pct) in enumerate(RAMPS):

        def step(d: int, read_pct: float = read_pct, ramp_s: float = warmup) -> Cell:
            w = Workload.mix(
                "rnd",
                read_pct,
                4 * KiB,
                threads=1,
                queue_depth=v["queue_depth"],
                active_range=ar,
                duration_s=step_s,
                ramp_s=ramp_s,
                rate_iops=d,
            )
            return Cell(f"{d} IOPS demanded", w, f"{read_pct:g}/{100 - read_pct:g}", 4 * KiB)

        # the read ramp's first step follows the preconditioning's writes (SETTLE_S)
        cells = tuple(step(d, ramp_s=max(warmup, SETTLE_S) if i == k == 0 else warmup) for k, d in enumerate(demand))
        phase = cc.first_phase(s, name, cells) if i == 0 else cc.next_phase(name, cells)
        phases.append(replace(phase, stop_rule=rule))
        # the limit between the highest demand met and the next step, which fell short
        phases += bisection.refinements(name, step, rule.met, rule_record(rule), seconds=step_s + warmup)
    rows = s.rows + [
        ("Stimulus", "RND 4 KiB reads, then RND 4 KiB writes, at rising demanded IOPS (rate limit)"),
        ("Stop rule", rule.describe()),
        (
            "Bisection",
            f"{bisection.STEPS} steps between the highest demand met and the next, which fell short, {bisection.SPLIT}",
        ),
        ("Settle", f"the first read step after the preconditioning: at least {tp.show_seconds(SETTLE_S)} unmeasured"),
    ]
    notes = ("The writes follow the reads without a new purge: the read ramp does not change the drive's state.",)
    return TestPlan(
        NAME,
        "Latency vs IOPS Demand",
        f"characterisation ({profile.name})",
        profile,
        tuple(phases),
        profile.rule(),
        tested_capacity(profile, target),
        tuple(rows),
        notes,
        values=v,
    )


def _at_top(name: str, what: Callable[[Sample, CellAverage], float | None]) -> Getter:
    """A figure of ramp `name`'s step at its maximum sustainable demand (the ramp's stop rule's
    decision during the run, with its bisection): what it delivered is the headline, measured;
    the demand (87,100 where 85,549 were delivered) is a setting, its own figure."""

    def get(phases: list[PhaseSummary]) -> float | None:
        top = top_step(phases, name)
        return what(*top) if top else None

    return get


def key_figures(runs: Runs = ()) -> Metrics:
    return (
        KeyMetric(
            "max sustainable read IOPS", "IOPS", True, _at_top("read ramp", lambda s, c: c.iops), rate_of=RATE["read"]
        ),
        KeyMetric(
            "max sustainable write IOPS",
            "IOPS",
            True,
            _at_top("write ramp", lambda s, c: c.iops),
            rate_of=RATE["write"],
        ),
        KeyMetric("read latency at max sustainable", "µs", False, _at_top("read ramp", lambda s, c: c.lat_mean_us)),
        KeyMetric("write latency at max sustainable", "µs", False, _at_top("write ramp", lambda s, c: c.lat_mean_us)),
        KeyMetric("read demand at max sustainable", "IOPS", True, _at_top("read ramp", lambda s, c: s.demand_iops)),
        KeyMetric("write demand at max sustainable", "IOPS", True, _at_top("write ramp", lambda s, c: s.demand_iops)),
    )


# The report's pages, the comparison's overlays (their plots) and the terminal view (in the
# pages' module) are imported when shown: not by a run without a report or `iolab tests`.
def pages(run: RunData) -> list[Page]:
    from iolab.pages.report.char_demand import demand_pages

    return demand_pages(run)


def overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    from iolab.pages.report.char_demand import demand_overlays

    return demand_overlays(runs, labels)


def view(ph: PhaseSummary, console: Console) -> None:
    from iolab.pages.report.char_demand import demand_view

    demand_view(ph, console)


TEST = TestDef(
    NAME,
    "Latency vs IOPS Demand",
    cc.FAMILY,
    "RND 4 KiB reads and writes at rising demanded IOPS until the drive falls short: maximum sustainable IOPS",
    build=no_input(build),
    sequence=cc.SEQUENCE,
    key_figures=key_figures,
    pages=pages,
    overlays=overlays,
    view=view,
    short_title="Demand",
    params=PARAMS + cc.PARAMS,
)
