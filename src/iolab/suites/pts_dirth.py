"""PTS DIRTH, Demand Intensity / Response Time Histogram (digest A.11): purge, RND 0/100 at
TC32/QD32 to steady state, then demand-variation rounds (a 5-minute RND 0/100 TC32/QD32
pre-write, then the chosen R/W at every TC × QD of the grid, high to low, 1 minute each) until
IOPS at TC32/QD32 is steady. From that phase's measurement window the run chooses the
Max/Mid/Min operating points (iolab.points.operating_points) and, at each, runs a 60-minute
RND 0/100 pre-write and a 10-minute test workload whose response times make the histogram."""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

from ..errors import IolabError
from ..compare.pts2 import DV_PHASE, OP_PHASE, PC_PHASE, PREWRITE, parse_point, point_key, pts_dirth_figures
from ..decide import Decision, Sample
from ..plan import Cell, Deferred, Phase, Profile, TestPlan, Tracking
from ..points import ART_CUTOFF, DemandPoint, operating_points
from ..report.dirth import dirth_pages
from ..compare.pts2_pages import dirth_overlays
from ..report.header import SPEC_HEADINGS
from ..targets import Target
from ..testdef import TestDef
from ..testparams import Param, given, int_list, parameter_rows, seconds, show_list, show_seconds, size, values
from ..textreport import render_dirth
from ..units import KiB, duration, kib_label, num
from ..workload import Workload
from . import active_fraction, common_parameters, no_input, supported_block_sizes, tested_capacity


def percent(text: str) -> int:
    v = int(text.rstrip("%"))
    if not 0 <= v <= 100:
        raise ValueError("give a read percentage from 0 to 100")
    return v


def _descending(text: str) -> tuple[int, ...]:
    vals = int_list(text)
    if 0 in vals:
        raise ValueError("give values of at least 1")
    return tuple(reversed(vals))  # the PTS runs high → low


GRID = (32, 16, 8, 6, 4, 2, 1)


def read_share(default: int, source: str) -> Param:
    return Param("read_pct", default, "Read share (%) of the random stimulus", percent,
                 lambda v: f"{v}/{100 - v} R/W", source)


# The DIRTH flow's own parameters, shared by every stimulus run through it (CBW too).
FLOW = (
    Param("threads", GRID, "Thread counts of the grid (run high → low)", _descending, show_list, "A.11"),
    Param("depths", GRID, "Queue depths of the grid (run high → low)", _descending, show_list, "A.11"),
    Param("pc_round_time", 30 * 60.0, "Length of one preconditioning round (one interval; y = its IOPS)", seconds,
          show_seconds, "UNVERIFIED: A.11 implementation rounds of 30 × 1 min"),
    Param("prewrite_time", 5 * 60.0, "RND 0/100 TC32/QD32 pre-write before each demand-variation round", seconds,
          show_seconds, "A.11"),
    ART_CUTOFF,
    Param("point_prewrite_time", 60 * 60.0, "RND 0/100 pre-write at each operating point's TC/QD", seconds,
          show_seconds, "UNVERIFIED: A.11 implementation"),
    Param("histogram_time", 10 * 60.0, "Test workload at each operating point (its response-time histogram)", seconds,
          show_seconds, "UNVERIFIED: A.11 implementation"),
)
PARAMS = (
    Param("block_size", 8 * KiB, "Block size of the RND stimulus", size, kib_label, "A.11 implementation default"),
    read_share(65, "A.11 implementation default (OLTP)"),
    *FLOW,
)

# (read %, threads, queue depth, seconds, name) -> the stimulus at that point
Stimulus = Callable[[int, int, int, float, str], Workload]


def build(profile: Profile, target: Target) -> TestPlan:
    v = values(PARAMS, profile, "dirth")
    bs = v["block_size"]
    if not supported_block_sizes([bs], target)[0]:
        raise IolabError(f"dirth --set block_size={bs}: below the target's {target.facts.logical_sector} B logical "
                         "sector; direct IO cannot issue it. Nothing was run or written.")
    ar = active_fraction(profile, target)

    def rnd(read_pct: int, tc: int, qd: int, secs: float, name: str) -> Workload:
        return Workload.mix("rnd", read_pct, bs, threads=tc, queue_depth=qd, active_range=ar, duration_s=secs, name=name)

    return build_flow(profile, target, "dirth", "DIRTH", PARAMS, rnd, f"RND {kib_label(bs)}", bs)


def window_points(samples: Sequence[Sample], window: int) -> list[DemandPoint]:
    """The demand-variation grid over its last `window` rounds (the measurement window the
    report shows), each point the mean of its cells, in the order run."""
    rounds = sorted({s.round for s in samples})[-window:]
    by_key: dict[str, list[Sample]] = {}
    for s in samples:
        if s.round in rounds and parse_point(s.key) is not None:
            by_key.setdefault(s.key, []).append(s)
    out = []
    for key, ss in by_key.items():
        tc, qd = parse_point(key)
        arts = [s.lat_mean_us for s in ss if s.lat_mean_us is not None]
        out.append(DemandPoint(tc, qd, sum(s.iops for s in ss) / len(ss), sum(arts) / len(arts) if arts else None))
    return out


def build_flow(profile: Profile, target: Target, test: str, title: str, params: tuple[Param, ...], rnd: Stimulus,
               what: str, bs: int) -> TestPlan:
    """The DIRTH flow (A.11) with a stimulus: PC at 0/100 to steady state, then the
    demand-variation rounds at the chosen read share."""
    v, text = values(params, profile, test), given(profile)
    read = v["read_pct"]
    top_tc, top_qd = max(v["threads"]), max(v["depths"])

    # A quick run keeps every period at one cell unless the user set it.
    def length(name: str) -> float:
        return profile.cell_seconds if profile.quick and name not in text else v[name]

    pc_cell = Cell(point_key(top_tc, top_qd), rnd(0, top_tc, top_qd, length("pc_round_time"), "PC RND 0/100"),
                   f"TC{top_tc}", bs)
    pc = Phase(PC_PHASE, (pc_cell,), (Tracking(f"IOPS PC {pc_cell.key}", pc_cell.key, "iops"),), purge=True,
               max_rounds=profile.max_rounds)
    grid = [Cell(point_key(tc, qd), rnd(read, tc, qd, profile.cell_seconds, f"RND {read}/{100 - read}"), f"TC{tc}", bs)
            for tc in v["threads"] for qd in v["depths"]]
    pre = Cell(PREWRITE, rnd(0, top_tc, top_qd, length("prewrite_time"), "pre-write RND 0/100"), "pre-write", bs)
    top = point_key(top_tc, top_qd)
    dv = Phase(DV_PHASE, (pre, *grid), (Tracking(f"IOPS {top}", top, "iops"),), purge=False,
               max_rounds=profile.max_rounds)
    rows = common_parameters(profile, target) + [
        ("Stimulus", f"{what}, R/W {read}/{100 - read}, TC {show_list(v['threads'])} × "
                     f"QD {show_list(v['depths'])} (high → low)"),
        ("PC", f"{what} 0/100 at TC{top_tc}/QD{top_qd}, rounds of {duration(length('pc_round_time'))}, "
               "to steady state"),
        ("Between rounds", f"pre-write RND 0/100 TC{top_tc}/QD{top_qd} for {duration(length('prewrite_time'))}"),
        ("Tracking", f"IOPS at {top}"),
        *parameter_rows(params, profile, test),
    ]
    cut = v["art_cutoff_ms"]

    def at_points(samples: Mapping[str, Sequence[Sample]]) -> tuple[Phase, Decision]:
        ops = operating_points(window_points(samples.get(DV_PHASE, ()), profile.rule().window), cut * 1000)
        chosen = [(n, p) for n, p in (("MaxIOPS", ops.max), ("MidIOPS", ops.mid), ("MinIOPS", ops.min)) if p is not None]
        if not chosen:
            raise IolabError(f"{title}: no operating point could be chosen from the demand-variation results (no point "
                             f"with ART < {cut:g} ms and no TC1/QD1 in the grid); nothing to run the histograms at.")
        cells = []
        for n, p in chosen:
            cells.append(Cell(f"{n} pre-write", rnd(0, p.threads, p.queue_depth, length("point_prewrite_time"),
                                                    f"{n} pre-write RND 0/100"), n, bs))
            cells.append(Cell(f"{n} {p.label()}", rnd(read, p.threads, p.queue_depth, length("histogram_time"),
                                                      f"{n} RND {read}/{100 - read}"), n, bs))
        missing = [n for n, p in (("MaxIOPS", ops.max), ("MidIOPS", ops.mid), ("MinIOPS", ops.min)) if p is None]
        outcome = "; ".join(f"{n} at {p.label()} ({num(p.iops)} IOPS, ART {num(p.art_us)} µs)" for n, p in chosen)
        outcome += f"; not determined: {', '.join(missing)}" if missing else ""
        return (Phase(OP_PHASE, tuple(cells), (), purge=False, max_rounds=1, stop_on_steady=False),
                Decision(OP_PHASE, {"name": "dirth-operating-points", "art_cutoff_ms": cut}, outcome,
                         {n: p.label() for n, p in chosen}))

    per_point = length("point_prewrite_time") + length("histogram_time")
    ops = Deferred(OP_PHASE, f"the Max/Mid/Min operating points of the {DV_PHASE} measurement window", at_points,
                   3 * per_point)
    rows.append(("Operating points", f"Max/Mid/Min from the {DV_PHASE} window: pre-write RND 0/100 at the point's TC/QD "
                                     f"for {duration(length('point_prewrite_time'))}, then R/W {read}/{100 - read} for "
                                     f"{duration(length('histogram_time'))} (its response-time histogram)"))
    notes = ("The operating-point pre-write (60 min) and histogram (10 min) lengths and the 5 ms ART cutoff are "
             "UNVERIFIED (A.11 implementations); they are parameters.",)
    if profile.quick:
        notes += ("Quick run: the PC rounds, pre-writes and histogram workloads last one cell each (unless set); "
                  "non-compliant.",)
    return TestPlan(test, title, f"PTS {profile.spec} ({profile.name})", profile, (pc, dv, ops), profile.rule(),
                    tested_capacity(profile, target), tuple(rows), notes)


TEST = TestDef(
    "dirth", "DIRTH", "SNIA PTS",
    "DIRTH: demand variation over TC × QD to steady state, Max/Mid/Min operating points (A.11)",
    build=no_input(build), sequence="pts", optional=True, heading=SPEC_HEADINGS["PTS"], key_figures=pts_dirth_figures,
    pages=dirth_pages, overlays=dirth_overlays, view=render_dirth, params=PARAMS,
)
