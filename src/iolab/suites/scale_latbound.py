"""Latency-bounded maximum IOPS: a mix (default 70/30 4K random) at rising
demand (fio rate_iops) on every leg of the run — one target, --paths, --hosts, or the
simulator — until a latency percentile of a step's merged histogram breaks the bound
(default 99 % ≤ 1 ms: decide.LatencyBound). The highest demand that met the bound is then
sustained for a duration (default 1 h) with IOPS and latency every second."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from iolab.core import testparams as tp
from iolab.core.cellschema import CellRow
from iolab.core.decide import PERCENTILE_COLUMNS, Decision, LatencyBound, Sample, rule_record
from iolab.core.errors import IolabError
from iolab.core.plan import Cell, Deferred, Phase, Profile, TestPlan
from iolab.core.units import KiB, ascii_number, given, kib_label, num, percentile_min_ios
from iolab.core.workload import Workload
from iolab.figures.compare import KeyMetric
from iolab.figures.latbound import RAMP, SUSTAIN, held, recorded_bound
from iolab.figures.summary import PhaseSummary
from iolab.suites import (
    active_fraction,
    bisection,
    block_size_problem,
    no_input,
    tested_capacity,
)
from iolab.suites import characterise_common as cc
from iolab.suites.char_demand import geometric
from iolab.suites.dirth_flow import read_share
from iolab.suites.figures import Getter, Metrics, Runs, last_round_pct
from iolab.suites.testdef import TestDef
from iolab.targets import Target

if TYPE_CHECKING:
    from rich.console import Console

    from iolab.pages.report.model import Page
    from iolab.pages.report.rundata import RunData


def _percentile(text: str) -> float:
    # in ASCII, as every parameter: float() read '٩٩' as 99 and said of 'abc' "could not convert
    # string to float"
    v = ascii_number(text.strip().removesuffix("%"))
    if v not in PERCENTILE_COLUMNS:
        raise ValueError(f"choose one of {', '.join(f'{p:g}' for p in PERCENTILE_COLUMNS)}")
    return v


_US = {"us": 1.0, "µs": 1.0, "ms": 1e3, "s": 1e6}
# fio's completion-latency histogram, which every percentile is read from, ends at about 17 s
# (its last bin, fio_hist.bin_value(1855)): a bound above that no measured percentile can break,
# so it is a slip of the keyboard (1e300us), not a bound; 10 s is far past any storage SLO.
MAX_BOUND_US = 10e6
# fio times each IO in whole nanoseconds, the width of its latency histogram's finest bins
# (fio_hist.bin_value: bins 0-127 are 1 ns each): a percentile below 1 ns cannot be told from 0,
# so a smaller bound (1e-9us) is broken by every step of every drive, a slip rather than a bound.
MIN_BOUND_US = 1e-3
_LIMITS = (
    f"1 ns ({given(MIN_BOUND_US)} µs: fio times IOs in whole nanoseconds, no percentile is told from 0 below it) "
    f"to {given(MAX_BOUND_US / 1e6)} s"
)


def _bound_us(text: str) -> float:
    """'700us', '700µs', '1ms', '0.001s' or a bare number of µs."""
    t = text.strip().lower()
    unit = next((u for u in ("us", "µs", "ms", "s") if t.endswith(u)), "")
    try:
        v = float(t[: len(t) - len(unit)]) * _US.get(unit, 1.0)
    except ValueError:
        raise ValueError("give a latency such as 700us, 1ms or 700 (µs)") from None
    if not math.isfinite(v) or not MIN_BOUND_US <= v <= MAX_BOUND_US:
        raise ValueError(f"give a latency from {_LIMITS}")
    return v


def _show_steps(v: tuple[int, ...]) -> str:
    step = v[1] - v[0] if len(v) > 3 else 0
    if step and all(b - a == step for a, b in zip(v, v[1:])):
        return f"{v[0]:,} to {v[-1]:,} by {step:,}"
    return tp.show_list(v)


def _show_us(v: float) -> str:
    return f"{given(v)} µs"  # the bound as the user gave it (units.given), as run, show and the report print it


def quick_steps(cell_s: float, pct: float) -> tuple[int, ...]:
    """A quick ramp: doubling from the lowest demand whose step holds the IOs that measure the
    percentile (units.percentile_min_ios: 1,000 for 99 %, so 1,000 IOPS in 1 s cells) up to
    about a million IOPS. A lower step would judge the bound by a percentile read off its few
    slowest IOs; doubling reaches a million-IOPS drive in 11 steps and places its limit within a
    factor of two, and the ramp ends at the first step that breaks the bound."""
    start = max(1, math.ceil(percentile_min_ios(pct) / cell_s))
    return geometric(start, max(start, 1_024_000), 2.0)


PARAMS = (
    read_share(70, "the published scale-out reference point (70/30 4K random)"),
    tp.Param(
        "block_size",
        4 * KiB,
        "block size of the random mix",
        tp.size,
        kib_label,
        "the published scale-out reference point",
    ),
    tp.Param(
        "percentile",
        99.0,
        "latency percentile the bound applies to (of each step's merged histogram)",
        _percentile,
        lambda v: f"{v:g} %",
        "the published scale-out reference point (p99 < 1 ms)",
    ),
    tp.Param(
        "steps",
        tuple(range(10_000, 1_000_001, 10_000)),
        "demand steps in IOPS over all hosts/paths, ascending (list or START:STEP:STOP); --quick: doubling "
        "from the lowest demand whose step holds the IOs to measure the percentile (1,000 IOPS at 1 s and "
        "99 %) to about 1,000,000, unless set",
        tp.int_list,
        _show_steps,
        "UNVERIFIED: iolab's choice",
        quick=lambda profile, v: quick_steps(profile.cell_seconds, v["percentile"]),
    ),
    tp.Param(
        "bound",
        1000.0,
        f"latency bound (e.g. 1ms, 700us; a bare number is µs), from 1 ns ({given(MIN_BOUND_US)} µs) to "
        f"{given(MAX_BOUND_US / 1e6)} s",
        _bound_us,
        _show_us,
        "the published scale-out reference point (p99 < 1 ms)",
    ),
    tp.Param(
        "threads",
        4,
        "fio jobs over all hosts/paths (outstanding IO = threads × qd, split by share)",
        tp.thread_count,
        source="UNVERIFIED: iolab's choice",
    ),
    tp.Param("qd", 32, "queue depth of each job", tp.queue_depth, source="UNVERIFIED: iolab's choice"),
    tp.Param(
        "sustain",
        3600.0,
        "how long the chosen demand is sustained; --quick uses 5 s unless set",
        tp.seconds,
        tp.show_seconds,
        "the published scale-out reference point",
        quick=5.0,
    ),
)


def _sustain(
    rule: LatencyBound, cell: Callable[[int], Cell], v: dict[str, Any], cell_s: float
) -> Callable[[Mapping[str, Sequence[Sample]]], tuple[Phase, Decision]]:
    """The sustain phase's builder: the highest demand that met the bound, over the ramp and its
    bisection; `cell(rate)` sustains a rate."""

    def build(samples: Mapping[str, Sequence[Sample]]) -> tuple[Phase, Decision]:
        seen = [x for name in (RAMP, *bisection.step_names(RAMP)) for x in samples.get(name, ())]
        # in demand order up to the lowest demand that broke the bound above the best: the rule then
        # names that step and the highest demand that met it, over the ramp and the bisection
        _, hi = bisection.bracket(seen, rule.met)
        upto = [x for x in seen if hi is None or (x.demand_iops or 0.0) <= hi]
        d = rule.decide(RAMP, sorted(upto, key=lambda x: x.demand_iops or 0.0))
        if not d.chosen:
            raise IolabError(
                f"latency-bound: {d.outcome}; there is no demand to sustain. The ramp's steps are stored; "
                + (_too_short(seen, rule, cell_s) or "start lower (--set steps=...) or relax --set bound=... .")
            )
        rate = int(d.chosen["demand_iops"])
        # one key whatever the rate ("sustained demand"), so runs that chose different rates still compare
        built = Phase(SUSTAIN, (cell(rate),), (), purge=False, max_rounds=1, stop_on_steady=False)
        return built, Decision(
            SUSTAIN,
            {"name": "highest-demand-within-bound", **{k: val for k, val in d.rule.items() if k != "name"}},
            f"sustain {rate:,} IOPS for {tp.show_seconds(v['sustain'])}: {d.outcome}",
            d.chosen,
        )

    return build


def _too_short(seen: Sequence[Sample], rule: LatencyBound, cell_s: float) -> str:
    """Why a lower start cannot help, when steps completed too few IOs to measure the percentile,
    or the bisection's next step would have (it was not run): a step of D IOPS completes D × cell
    time IOs."""
    short = sorted({int(x.demand_iops or 0) for x in seen if x.too_few(rule.percentile)})
    need = percentile_min_ios(rule.percentile)
    least = math.ceil(need / cell_s)
    lowest = min((x.demand_iops or 0.0 for x in seen if x.demand_iops), default=0.0)
    # the bisection did not halve the lowest step below what a cell measures (bisection.stop_reason)
    if not short and (not lowest or lowest / 2 >= least):
        return ""
    what = (
        f"the steps of {tp.show_list(tuple(short))} IOPS completed"
        if short
        else f"a step of {int(lowest / 2):,} IOPS, the bisection's next (half the lowest tried), would complete"
    )
    return (
        f"{what} fewer than the {need:,} IOs a {rule.percentile:g} % is measured from: in cells of "
        f"{tp.show_seconds(cell_s)} a step needs at least {least:,} IOPS. A longer --cell-time measures lower "
        "demands; or relax --set bound=... ."
    )


def _resolution(rule: LatencyBound, profile: Profile) -> bisection.Resolution:
    """The lowest demand a bisection step can judge: one whose cell completes the IOs its
    percentile is measured from (below, a step is never judged to meet the bound)."""
    need = percentile_min_ios(rule.percentile)
    cell = f"{given(profile.cell_seconds)} s"
    return bisection.Resolution(
        least=need / profile.cell_seconds,
        least_why=f"completes fewer than the {need:,} IOs a {rule.percentile:g} % is measured from in a {cell} cell",
    )


def _ramp_row(v: dict[str, Any], cell_s: float, least: float) -> str:
    """The plan's Ramp row: the steps, where they stop, and the bisection after them."""
    return (
        f"demand {_show_steps(v['steps'])} IOPS, {tp.show_seconds(cell_s)} each, until "
        f"{v['percentile']:g} % latency > {_show_us(v['bound'])}, then {bisection.STEPS} bisection steps "
        f"between the highest demand that met it and the lowest that broke it, {bisection.SPLIT}; a step is "
        f"not run where it could not be told apart (below {num(math.ceil(least))} IOPS, or closer to both "
        "ends than the step that met delivered its demand)"
    )


def build(profile: Profile, target: Target) -> TestPlan:
    # the drive is preconditioned first (purge, then 4K random writes by time or to steady state,
    # as the characterisation tests do): a fresh drive's demand limit is not its working one
    s = cc.setup("latency-bound", PARAMS, profile, target, endurance=False)
    v = s.values
    bs, read = v["block_size"], v["read_pct"]
    if why := block_size_problem(bs, target):
        raise IolabError(
            f"latency-bound --set block_size={bs}: {why}; direct IO cannot issue it. Nothing was run or written."
        )
    if 0 in v["steps"]:
        raise IolabError(
            "latency-bound --set steps: a demand of 0 IOPS runs no IO; start at 1 or more. Nothing was run or written."
        )
    ar = active_fraction(profile, target)
    mix = f"{read}/{100 - read}"
    rule = LatencyBound(v["percentile"], v["bound"])

    def rnd(rate: int, secs: float, name: str) -> Workload:
        return Workload.mix(
            "rnd",
            read,
            bs,
            threads=v["threads"],
            queue_depth=v["qd"],
            active_range=ar,
            duration_s=secs,
            rate_iops=rate,
            name=name,
            max_per_second=name == SUSTAIN,
            # the bound it is held to, kept with the sustained cell: its key figure claims the bound
            extra=(("bound_percentile", f"{rule.percentile:g}"), ("bound_us", f"{rule.bound_us:g}"))
            if name == SUSTAIN
            else (),
        )

    def step(d: int) -> Cell:
        return Cell(f"{d:,} IOPS demanded", rnd(d, profile.cell_seconds, f"RND {mix} at {d:,} IOPS"), mix, bs)

    cells = tuple(step(d) for d in v["steps"])
    # the limit between the last step that met the bound and the first that broke it
    res = _resolution(rule, profile)
    halves = bisection.refinements(
        RAMP, step, rule.met, rule_record(rule), seconds=profile.cell_seconds, resolution=res
    )
    ramp = replace(cc.first_phase(s, RAMP, cells), stop_rule=rule)

    sustain = _sustain(
        rule, lambda rate: Cell("sustained demand", rnd(rate, v["sustain"], SUSTAIN), mix, bs), v, profile.cell_seconds
    )

    rows = s.rows + [
        ("Stimulus", f"RND {kib_label(bs)} R/W {mix}, {v['threads']} jobs × QD {v['qd']} over all hosts/paths"),
        ("Ramp", _ramp_row(v, profile.cell_seconds, res.least)),
        ("Sustain", f"the highest demand that met the bound, for {tp.show_seconds(v['sustain'])}"),
    ]
    notes: tuple[str, ...] = (
        "The percentile of each step is that of the step's latency histogram merged over every host and path "
        "(fio json+ bins summed), never an average of per-host percentiles.",
        f"A step meets the bound on latency alone, its percentile measured from enough of its IOs "
        f"({percentile_min_ios(v['percentile']):,} for a {v['percentile']:g} %); the IOPS it delivered is printed "
        "beside its demand.",
    )
    if profile.quick:
        notes += ("Quick run: short steps and sustain phase; non-compliant.",)
    return TestPlan(
        "latency-bound",
        "Latency-Bounded Maximum IOPS",
        f"scale-out ({profile.name})",
        profile,
        (*s.phases, ramp, *halves, Deferred(SUSTAIN, f"the highest demand of {RAMP!r} meeting the bound", sustain)),
        profile.rule(),
        tested_capacity(profile, target),
        tuple(rows),
        notes,
        values=v,
    )


def _sustained(fn: Callable[[CellRow], float | None]) -> Getter:
    """`fn` of the last round of the sustained demand, or None before it ran."""

    def get(phases: list[PhaseSummary]) -> float | None:
        ph = next((p for p in phases if p.phase.name == SUSTAIN), None)
        return fn(ph.rows[-1]) if ph is not None and ph.rows else None

    return get


def _within_bound(row: CellRow) -> float | None:
    """The sustained demand, when the sustain phase held the bound the ramp found it under (kept in
    the cell's workload): the figure's name claims the bound, so a demand whose sustained
    percentile broke it, or completed too few IOs to measure it, or whose bound is not recorded
    (a run made before it was), is not given. The sustain page's table and `show` say which."""
    bound = recorded_bound(row)
    return row.workload.get("rate_iops") if bound is not None and held(row, bound) else None


def _sustained_pct(p: float) -> Getter:
    """The sustained demand's `p` percentile when its IOs can measure it (units.measurable); a
    figure that says why not (its 64,000 IOs), where a bare getter printed only "—"."""
    return last_round_pct(SUSTAIN, p, PERCENTILE_COLUMNS[p])


def key_figures(runs: Runs = ()) -> Metrics:
    return (
        KeyMetric("highest demand within the bound (sustained)", "IOPS", True, _sustained(_within_bound)),
        KeyMetric("sustained IOPS delivered", "IOPS", True, _sustained(lambda r: r.iops)),
        KeyMetric("sustained 99 % latency", "µs", False, _sustained_pct(99.0), kind="percentile"),
        KeyMetric("sustained 99.99 % latency", "µs", False, _sustained_pct(99.99), kind="percentile"),
    )


# The report's pages and the terminal view (their module holds the plots) are imported when
# shown: not by a run without a report or `iolab tests`.
def pages(run: RunData) -> list[Page]:
    from iolab.pages.report.latbound import latbound_pages

    return latbound_pages(run)


def view(ph: PhaseSummary, console: Console) -> None:
    from iolab.pages.report.latbound import latbound_view

    latbound_view(ph, console)


TEST = TestDef(
    "latency-bound",
    "Latency-Bounded Maximum IOPS",
    "scale-out",
    "70/30 4K random at rising demand until p99 > 1 ms, then the highest demand that met it sustained for 1 h",
    build=no_input(build),
    key_figures=key_figures,
    pages=pages,
    view=view,
    short_title="Latency-bound IOPS",
    params=cc.params_of(PARAMS, endurance=False),
)
