"""QoS rounds: after the shared preconditioning, rounds of 4K random write at
QD1 (each a warm-up, not measured, then a measured period), then as many of 4K random read.
Per round IOPS, average and maximum latency; for chosen rounds the full-resolution histogram
as stored (fio json+ bins, the simulator's own), never averaged percentiles."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

from iolab.core import testparams as tp
from iolab.core.errors import IolabError
from iolab.core.plan import Cell, Profile, TestPlan
from iolab.core.units import KiB, counted
from iolab.core.workload import Workload
from iolab.figures.compare import KeyMetric
from iolab.pages.chartext import qos_view
from iolab.suites import active_fraction, no_input, tested_capacity
from iolab.suites import characterise_common as cc
from iolab.suites.figures import Metrics, Runs, last_round_pct, rounds
from iolab.suites.testdef import TestDef
from iolab.targets import Target

if TYPE_CHECKING:
    from iolab.pages.report.model import Page
    from iolab.pages.report.rundata import RunData

PARAMS = (
    tp.Param(
        "rounds",
        60,
        "rounds of each direction; --quick uses 10 unless set",
        tp.round_count,
        source="published reviews",
        quick=10,
    ),
    tp.Param(
        "warmup",
        9.0,
        "warm-up of each round (fio ramp_time), not measured; --quick: 10 % of --cell-time",
        tp.seconds,
        tp.show_seconds,
        source="published reviews",
        quick=lambda profile, _: profile.cell_seconds / 10,
    ),
    tp.Param(
        "measured",
        51.0,
        "measured time of each round; --quick uses --cell-time unless set",
        tp.seconds,
        tp.show_seconds,
        source="published reviews",
        quick=lambda profile, _: profile.cell_seconds,
    ),
    tp.Param("qd", 1, "queue depth (one thread)", tp.queue_depth, source="published reviews"),
    tp.Param(
        "histogram_rounds",
        "last,worst",
        "rounds whose histogram is drawn: round numbers, 'last' and 'worst' (largest maximum latency), comma-separated",
        lambda t: _rounds_choice(t),
        source="published reviews",
    ),
)


def _rounds_choice(text: str) -> str:
    tokens = [t.strip() for t in text.split(",") if t.strip()]
    if not tokens or any(t not in ("last", "worst") and not (t.isdigit() and int(t) > 0) for t in tokens):
        raise ValueError("give 'last', 'worst' or round numbers, comma-separated")
    return ",".join(tokens)


def _check_histogram_rounds(wanted: str, rounds: int, profile: Profile) -> None:
    """A round number beyond the test's rounds names a round that can never exist (the rounds
    phases run every round: no steady state ends them early): refused with the plan, not a
    report without the histogram asked for."""
    beyond = [int(t) for t in wanted.split(",") if t.isdigit() and int(t) > rounds]
    if not beyond:
        return
    how = "set with --set" if "rounds" in tp.given(profile) else "--quick" if profile.quick else "the default"
    raise IolabError(
        f"--set histogram_rounds={wanted!r} (test qos): round {beyond[0]:,} is beyond the test's "
        f"{counted(rounds, 'round')} of each direction (rounds={rounds:,}, {how}). Give round numbers from 1 to "
        f"{rounds:,}, 'last' or 'worst', or more rounds with --set rounds=N. Nothing was run or written."
    )


def build(profile: Profile, target: Target) -> TestPlan:
    s = cc.setup("qos", PARAMS, profile, target)
    v = s.values
    rounds, measured, warmup = v["rounds"], v["measured"], v["warmup"]
    _check_histogram_rounds(v["histogram_rounds"], rounds, profile)
    ar = active_fraction(profile, target)
    phases = list(s.phases)
    for op in ("write", "read"):
        w = Workload.mix(
            "rnd",
            100 if op == "read" else 0,
            4 * KiB,
            threads=1,
            queue_depth=v["qd"],
            active_range=ar,
            duration_s=measured,
            ramp_s=warmup,
        )
        cell = (Cell(f"RND 4KiB {op[0].upper()} QD{v['qd']}", w, "100/0" if op == "read" else "0/100", 4 * KiB),)
        name = f"{op} rounds"
        phases.append(
            cc.first_phase(s, name, cell, max_rounds=rounds)
            if op == "write"
            else cc.next_phase(name, cell, max_rounds=rounds)
        )
    rows = s.rows + [
        (
            "Stimulus",
            f"RND 4 KiB W then R, TC 1 × QD {v['qd']}, {counted(rounds, 'round')} each of "
            f"{tp.show_seconds(warmup)} warm-up + {tp.show_seconds(measured)} measured",
        )
    ]
    return TestPlan(
        "qos",
        "QoS Rounds",
        f"characterisation ({profile.name})",
        profile,
        tuple(phases),
        profile.rule(),
        tested_capacity(profile, target),
        tuple(rows),
        values=v,
    )


def key_figures(runs: Runs = ()) -> Metrics:
    out = []
    for op in ("write", "read"):
        name = f"{op} rounds"
        out += [
            KeyMetric(
                f"{op}: median round IOPS", "IOPS", True, rounds(name, lambda rs: statistics.median(r.iops for r in rs))
            ),
            # an extreme (one IO of every round's) and a percentile, as the PTS latency test's MRT
            # and 99.999 %: `check` and the fleet judged the worst maximum as an average, a 5 %
            # change in one IO's latency a regression, and an outlier drive on it
            KeyMetric(
                f"{op}: worst round maximum latency",
                "µs",
                False,
                rounds(name, lambda rs: max((r.lat_max_us for r in rs if r.lat_max_us), default=None)),
                kind="extreme",
            ),
            KeyMetric(
                f"{op}: last round 99.99 %",
                "µs",
                False,
                last_round_pct(name, 99.99, "p99_99"),
                kind="percentile",
            ),
        ]
    return tuple(out)


# The report's pages and the comparison's overlays (their plots) are imported when a report or
# a comparison is built: not by a run without a report, `iolab show` or `iolab tests`.
def pages(run: RunData) -> list[Page]:
    from iolab.pages.report.char_series import qos_pages

    return qos_pages(run)


def overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    from iolab.pages.compare_pages.characterise import qos_overlays

    return qos_overlays(runs, labels)


TEST = TestDef(
    "qos",
    "QoS Rounds",
    cc.FAMILY,
    "60 rounds of 4K random write then read at QD1 (9 s warm-up + 51 s): latency per round and histograms",
    build=no_input(build),
    sequence=cc.SEQUENCE,
    key_figures=key_figures,
    pages=pages,
    overlays=overlays,
    view=qos_view,
    short_title="QoS",
    params=PARAMS + cc.PARAMS,
)
