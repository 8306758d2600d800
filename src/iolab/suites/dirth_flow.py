"""The DIRTH flow (SNIA PTS 2.0), one for every stimulus: preconditioning to steady state,
demand-variation rounds (a pre-write, then the stimulus at every demand point, one cell
each) until IOPS at the highest outstanding IO is steady, then the Max/Mid/Min operating
points chosen from that phase's measurement window (iolab.figures.points.operating_points, stored
as the run's decision) with a pre-write and the histogram workload at each.

The tests differ only in their stimulus (PTS DIRTH: RND 8 KiB 65/35; CBW: the composite
block-size mix; RWSW DIRTH: the captured composite) and in their demand points (the PTS
TC × QD grid, or the RWSW outstanding-IO levels)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from iolab.core.decide import Decision, Sample
from iolab.core.errors import IolabError
from iolab.core.percentages import read_percent
from iolab.core.plan import Cell, Deferred, Phase, Profile, TestPlan, Tracking
from iolab.core.testparams import (
    Param,
    depth_list,
    parameter_rows,
    seconds,
    show_list,
    show_seconds,
    thread_list,
    values,
)
from iolab.core.units import duration, num
from iolab.core.workload import Workload
from iolab.figures.points import (
    ART_CUTOFF,
    DECISION,
    DV_PHASE,
    OP_PHASE,
    PC_PHASE,
    POINT_NAMES,
    PREWRITE,
    DemandPoint,
    operating_points,
    parse_point,
    point_key,
)
from iolab.suites import common_parameters, tested_capacity
from iolab.targets import Target


def read_share(default: int, source: str) -> Param:
    return Param(
        "read_pct",
        default,
        "Read share (%) of the random stimulus",
        read_percent,
        lambda v: f"{v}/{100 - v} R/W",
        source,
    )


def _high_to_low(parse: Callable[[str], tuple[int, ...]]) -> Callable[[str], tuple[int, ...]]:
    """A grid axis as given, low → high or high → low as `iolab tests` prints its default; the PTS
    runs it high → low."""
    return lambda text: tuple(reversed(parse(text)))


GRID = (32, 16, 8, 6, 4, 2, 1)
# The PTS demand points: every thread count × queue depth, high → low.
TC_QD_GRID = (
    Param("threads", GRID, "Thread counts of the grid (run high → low)", _high_to_low(thread_list), show_list, "A.11"),
    Param("depths", GRID, "Queue depths of the grid (run high → low)", _high_to_low(depth_list), show_list, "A.11"),
)


def _period(name: str, default: float, help: str, source: str) -> Param:
    # A quick run keeps every period at one cell unless it is set.
    return Param(name, default, help, seconds, show_seconds, source, quick=lambda profile, _: profile.cell_seconds)


# The flow's own parameters, the same for every stimulus.
FLOW = (
    _period(
        "pc_round_time",
        30 * 60.0,
        "Length of one preconditioning round (one interval; y = its IOPS)",
        "UNVERIFIED: A.11 implementation rounds of 30 × 1 min",
    ),
    _period(
        "prewrite_time",
        5 * 60.0,
        "Pre-write (the stimulus at 0/100) at the highest OIO before each demand-variation round",
        "A.11",
    ),
    ART_CUTOFF,
    _period(
        "point_prewrite_time", 60 * 60.0, "Pre-write at each operating point's TC/QD", "UNVERIFIED: A.11 implementation"
    ),
    _period(
        "histogram_time",
        10 * 60.0,
        "Test workload at each operating point (its response-time histogram)",
        "UNVERIFIED: A.11 implementation",
    ),
)


# A workload at a demand point: (threads, queue depth, seconds, name) -> the workload.
WorkloadAt = Callable[[int, int, float, str], Workload]


@dataclass(frozen=True)
class Stimulus:
    """What a DIRTH test applies: `write` preconditions and pre-writes, `test` is measured at
    each demand point and operating point; both take (threads, QD, seconds, name)."""

    text: str  # the measured workload, as the parameters page names it
    write_text: str  # the preconditioning / pre-write workload
    block_size: int  # the cells' block-size column (0: a mix of sizes)
    write: WorkloadAt
    test: WorkloadAt
    pc_point: tuple[int, int] | None = None  # None: the highest outstanding IO of the demand points
    pc_precondition: tuple[Workload, ...] = ()  # before the PC rounds (RWSW: WIPC)


def grid_points(v: Mapping[str, Any]) -> list[tuple[int, int]]:
    return [(tc, qd) for tc in v["threads"] for qd in v["depths"]]


def window_points(samples: Sequence[Sample], window: int) -> list[DemandPoint]:
    """The demand points over the last `window` rounds (the measurement window the report
    shows), each the mean of its cells, in the order run."""
    rounds = sorted({s.round for s in samples})[-window:]
    by_key: dict[str, list[Sample]] = {}
    for s in samples:
        if s.round in rounds and parse_point(s.key) is not None:
            by_key.setdefault(s.key, []).append(s)
    out = []
    for key, ss in by_key.items():
        point = parse_point(key)
        if point is None:  # by_key holds operating points only
            continue
        tc, qd = point
        arts = [s.lat_mean_us for s in ss if s.lat_mean_us is not None]
        out.append(DemandPoint(tc, qd, sum(s.iops for s in ss) / len(ss), sum(arts) / len(arts) if arts else None))
    return out


def build_flow(
    profile: Profile,
    target: Target,
    test: str,
    title: str,
    spec: str,
    params: tuple[Param, ...],
    stimulus: Stimulus,
    points: Sequence[tuple[int, int]],
    points_text: str,
    rows: Sequence[tuple[str, str]] = (),
    notes: Sequence[str] = (),
) -> TestPlan:
    v = values(params, profile, test)
    bs, top_tc, top_qd = stimulus.block_size, *max(points, key=lambda p: (p[0] * p[1], p[0]))
    top = point_key(top_tc, top_qd)
    pc_tc, pc_qd = stimulus.pc_point or (top_tc, top_qd)
    pc_cell = Cell(point_key(pc_tc, pc_qd), stimulus.write(pc_tc, pc_qd, v["pc_round_time"], "PC"), f"TC{pc_tc}", bs)
    pc = Phase(
        PC_PHASE,
        (pc_cell,),
        (Tracking(f"IOPS PC {pc_cell.key}", pc_cell.key, "iops"),),
        purge=True,
        precondition=stimulus.pc_precondition,
        max_rounds=profile.max_rounds,
    )
    grid = [
        Cell(point_key(tc, qd), stimulus.test(tc, qd, profile.cell_seconds, point_key(tc, qd)), f"TC{tc}", bs)
        for tc, qd in points
    ]
    pre = Cell(PREWRITE, stimulus.write(top_tc, top_qd, v["prewrite_time"], PREWRITE), PREWRITE, bs)
    dv = Phase(
        DV_PHASE, (pre, *grid), (Tracking(f"IOPS {top}", top, "iops"),), purge=False, max_rounds=profile.max_rounds
    )
    per_point = v["point_prewrite_time"] + v["histogram_time"]
    ops = Deferred(
        OP_PHASE,
        f"the Max/Mid/Min operating points of the {DV_PHASE} measurement window (1 to 3 points: a point "
        "two of them share is measured once)",
        _at_points(profile, title, stimulus, v),
        3 * per_point,
        least_seconds=per_point,
    )
    table = common_parameters(profile, target) + [
        ("Stimulus", stimulus.text),
        ("Demand points", f"{points_text}: {len(points)} points, each one cell per round"),
        (
            "PC",
            f"{stimulus.write_text} at TC{pc_tc}/QD{pc_qd}, rounds of {duration(v['pc_round_time'])}, to steady state"
            + (
                " (after " + ", ".join(w.name for w in stimulus.pc_precondition) + ")"
                if stimulus.pc_precondition
                else ""
            ),
        ),
        ("Between rounds", f"pre-write {stimulus.write_text} at {top} for {duration(v['prewrite_time'])}"),
        ("Tracking", f"IOPS at {top}"),
        (
            "Operating points",
            f"Max/Mid/Min from the {DV_PHASE} window: pre-write {stimulus.write_text} at the point's "
            f"TC/QD for {duration(v['point_prewrite_time'])}, then {stimulus.text} for "
            f"{duration(v['histogram_time'])} (its response-time histogram)",
        ),
        *rows,
        *parameter_rows(params, profile, test),
    ]
    return TestPlan(
        test,
        title,
        spec,
        profile,
        (pc, dv, ops),
        profile.rule(),
        tested_capacity(profile, target),
        tuple(table),
        _flow_notes(profile, notes),
    )


def _flow_notes(profile: Profile, notes: Sequence[str]) -> tuple[str, ...]:
    out = (
        "The operating-point pre-write (60 min) and histogram (10 min) lengths, the PC round length and the 5 ms "
        "ART cutoff are UNVERIFIED (A.11 implementations); they are parameters.",
        *notes,
    )
    if profile.quick:
        out += (
            "Quick run: the PC rounds, pre-writes and histogram workloads last one cell each (unless set); "
            "non-compliant.",
        )
    return out


def _at_points(
    profile: Profile, title: str, stimulus: Stimulus, v: Mapping[str, Any]
) -> Callable[[Mapping[str, Sequence[Sample]]], tuple[Phase, Decision]]:
    """How the operating-point phase is built when the run reaches it: a pre-write and a
    histogram cell at each of the Max/Mid/Min points the demand-variation window decided."""
    bs, cut = stimulus.block_size, v["art_cutoff_ms"]

    def at_points(samples: Mapping[str, Sequence[Sample]]) -> tuple[Phase, Decision]:
        ops = operating_points(window_points(samples.get(DV_PHASE, ()), profile.rule().window), cut * 1000)
        chosen = [(n, p) for n, p in ops.named() if p is not None]
        if not chosen:
            raise IolabError(
                f"{title}: no operating point could be chosen from the demand-variation results (no point "
                f"with ART < {cut:g} ms and no TC1/QD1 among the points); nothing to run the histograms "
                "at."
            )
        cells = []
        for n, p in ops.measured():  # a name on another's point reads that point's cells (ops.shared)
            cells.append(
                Cell(
                    f"{n} {PREWRITE}",
                    stimulus.write(p.threads, p.queue_depth, v["point_prewrite_time"], f"{n} {PREWRITE}"),
                    n,
                    bs,
                )
            )
            cells.append(
                Cell(f"{n} {p.label()}", stimulus.test(p.threads, p.queue_depth, v["histogram_time"], n), n, bs)
            )
        rules = dict(zip(POINT_NAMES, ops.rules()))
        # each point with the rule it was chosen by, so the decision `show` and --json print
        # names the rule where it names the point
        outcome = "; ".join(
            f"{n} at {p.label()} ({num(p.iops)} IOPS, ART {num(p.art_us)} µs: {rules[n]})" for n, p in chosen
        )
        missing = [n for n, p in ops.named() if p is None]
        outcome += f"; not determined: {', '.join(missing)}" if missing else ""
        outcome += f"; {ops.mid_same_as()}" if ops.mid_same_as() else ""
        outcome += "".join(
            f"; {ops.shared_text(n)} (its pre-write and histogram run once, as {o}'s)" for n, o in ops.shared
        )
        rule = {"name": DECISION, "art_cutoff_ms": cut, "mid_from": ops.mid_from}
        return (
            Phase(OP_PHASE, tuple(cells), (), purge=False, max_rounds=1, stop_on_steady=False),
            Decision(OP_PHASE, rule, outcome, ops.record()),
        )

    return at_points
