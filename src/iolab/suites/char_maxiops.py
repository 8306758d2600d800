"""Maximum IOPS (issue 11, item 3): random 4 KiB reads, then writes, at rising queue depth
(1 … 256 by default) until a step gains less than 2 % (the NoGain rule), then rounds of each
at the search's optimum (60 × 9 s warm-up + 51 s by default). The rounds are phases built
when the run reaches them, from the search's stored results (a Deferred phase), so a resumed
run rebuilds them the same way."""

from __future__ import annotations

from typing import Mapping, Sequence

from .. import testparams as tp
from ..decide import Decision, NoGain, Sample, best_by_iops
from ..plan import Cell, Deferred, Phase, Profile, TestPlan
from ..report.char_demand import SEARCHES, maxiops_figures, maxiops_overlays, maxiops_pages, maxiops_view, rounds_phase, search_phase
from ..targets import Target
from ..testdef import TestDef
from ..units import KiB
from ..workload import Workload
from . import active_fraction, common_parameters, no_input, tested_capacity
from .char_demand import FAMILY, QUICK_PRECONDITION_S, positive_list, precondition

NAME = "max-iops"

PARAMS = (
    tp.Param("queue_depths", tuple(2**k for k in range(9)), "queue depths searched, ascending (1,2,4,…)",
             positive_list, tp.show_list, source="published reviews (1 … 256, powers of two)"),
    tp.Param("threads", 1, "threads at every searched queue depth", tp.positive_int,
             source="UNVERIFIED: the reviews search QD and thread count; iolab searches QD at this thread count"),
    tp.Param("min_gain", 0.02, "the search stops when a step gains less than this", tp.fraction, tp.show_percent,
             source="published reviews"),
    tp.Param("rounds", 60, "rounds at the optimum (--quick: 3 unless set)", tp.positive_int, source="published reviews"),
    tp.Param("round_time", 60.0, "each round, warm-up included (--quick: the cell time unless set)", tp.seconds,
             tp.show_seconds, source="published reviews (9 s + 51 s)"),
    tp.Param("search_time", 60.0, "each search step (--quick: the cell time unless set)", tp.seconds, tp.show_seconds,
             source="UNVERIFIED: the reviews do not say; as a PTS cell"),
    tp.Param("precondition_time", 7200.0, "4 KiB random writes before the search (--quick: 3 s unless set)",
             tp.seconds, tp.show_seconds, source="published reviews"),
)
QUICK_ROUNDS = 3
OPTIMUM = "at the optimum"


def build(profile: Profile, target: Target) -> TestPlan:
    v = tp.values(PARAMS, profile, NAME)
    given = tp.given(profile)

    def scaled(name: str, quick_value):
        return quick_value if profile.quick and name not in given else v[name]

    search_s, round_s = scaled("search_time", profile.cell_seconds), scaled("round_time", profile.cell_seconds)
    rounds, pc_s = scaled("rounds", QUICK_ROUNDS), scaled("precondition_time", QUICK_PRECONDITION_S)
    ar, threads = active_fraction(profile, target), v["threads"]
    rule = NoGain(min_gain=v["min_gain"], steps=1)

    def work(read_pct: float, qd: int, seconds: float) -> Workload:
        return Workload.mix("rnd", read_pct, 4 * KiB, threads=threads, queue_depth=qd, active_range=ar, duration_s=seconds)

    def cell(read_pct: float, qd: int, seconds: float, key: str = "") -> Cell:
        # The rounds' key names no QD: drives with different optima still compare cell by cell.
        return Cell(key or f"TC{threads}/QD{qd}", work(read_pct, qd, seconds), f"TC{threads}/QD{qd}", 4 * KiB)

    def at_optimum(op: str, read_pct: float):
        def build_rounds(samples: Mapping[str, Sequence[Sample]]) -> tuple[Phase, Decision]:
            best = best_by_iops(search_phase(op), samples[search_phase(op)])
            qd = best.outstanding // threads
            phase = Phase(rounds_phase(op), (cell(read_pct, qd, round_s, OPTIMUM),), (), purge=False, max_rounds=rounds,
                          stop_on_steady=False)
            return phase, Decision(rounds_phase(op), {"name": "most-iops"},
                                   f"{best.key} delivered the most {op} IOPS of the search ({best.iops:,.0f}): "
                                   f"{rounds} rounds there", {"threads": threads, "queue_depth": qd})
        return build_rounds

    phases: list = []
    for i, (op, read_pct) in enumerate(SEARCHES):
        phases.append(Phase(search_phase(op), tuple(cell(read_pct, qd, search_s) for qd in v["queue_depths"]), (),
                            purge=i == 0, precondition=(precondition(profile, target, pc_s),) if i == 0 else (),
                            max_rounds=1, stop_on_steady=False, stop_rule=rule))
        phases.append(Deferred(rounds_phase(op), f"the {op} search's most IOPS", at_optimum(op, read_pct)))
    params = common_parameters(profile, target) + tp.parameter_rows(PARAMS, profile, NAME) + [
        ("Stimulus", "RND 4 KiB reads, then writes: a queue-depth search, then rounds at its optimum"),
        ("Preconditioning", f"purge, then RND 4 KiB W at TC {profile.threads} × QD {profile.queue_depth} for "
                            f"{tp.show_seconds(pc_s)} (steady state not checked)"),
        ("Stop rule", rule.describe()),
    ]
    notes = ("Each round's figures cover the whole round: this build has no warm-up window, so the reviews' 9 s "
             "warm-up is measured with the 51 s.",
             "The write search follows the read rounds without a new purge: reads do not change the drive's state.")
    return TestPlan(NAME, "Maximum IOPS", f"{FAMILY} ({profile.name})", profile, tuple(phases), profile.rule(),
                    tested_capacity(profile, target), tuple(params), notes)


TEST = TestDef(
    NAME, "Maximum IOPS", FAMILY,
    "RND 4 KiB read and write queue-depth search for the most IOPS, then rounds at the optimum",
    build=no_input(build), sequence="characterise", key_figures=maxiops_figures, pages=maxiops_pages,
    overlays=maxiops_overlays, view=maxiops_view, short_title="Max IOPS", params=PARAMS,
)
