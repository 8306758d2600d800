"""Maximum IOPS: random 4 KiB reads, then writes, at rising queue depth
(1 … 256 by default) until a step gains less than 2 % (the NoGain rule), then at rising thread
count (1, 2, 4, 8 by default) at the chosen queue depth with the same rule, then rounds of each
at the (threads, QD) both searches chose (60 × 9 s warm-up + 51 s by default). A search chooses
the last step that gained at least `min_gain`, not the most IOPS: a step that bought +1.7 % at
twice the latency is past the knee the rule looks for. `--set rule=knee` chooses the knee of
the curve itself instead (decide.knee), after running every step. The thread
search and the rounds are phases built when the run reaches them, from the stored results
(Deferred phases), so a resumed run rebuilds them the same way."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from iolab.core import percentages as pc
from iolab.core import testparams as tp
from iolab.core.decide import Decision, NoGain, Sample, knee, last_gain
from iolab.core.plan import Cell, Deferred, Phase, Profile, TestPlan
from iolab.core.units import KiB, counted
from iolab.core.workload import Workload
from iolab.figures.compare import KeyMetric
from iolab.figures.demand import RATE, SEARCHES, ramp_phase, rounds_mean, rounds_phase, search_phase, threads_phase
from iolab.suites import active_fraction, no_input, tested_capacity
from iolab.suites import characterise_common as cc
from iolab.suites.char_demand import WARMUP
from iolab.suites.figures import Getter, Metrics, Runs
from iolab.suites.testdef import TestDef
from iolab.targets import Target

if TYPE_CHECKING:
    from rich.console import Console

    from iolab.figures.summary import PhaseSummary
    from iolab.pages.report.model import Page
    from iolab.pages.report.rundata import RunData

NAME = "max-iops"

PARAMS = (
    tp.Param(
        "queue_depths",
        tuple(2**k for k in range(9)),
        "queue depths searched, ascending (1,2,4,…)",
        tp.depth_list,
        tp.show_list,
        source="published reviews (1 … 256, powers of two)",
    ),
    tp.Param(
        "threads",
        1,
        "threads at every searched queue depth",
        tp.thread_count,
        source="UNVERIFIED: the reviews search QD and thread count, not in which order",
    ),
    tp.Param(
        "thread_counts",
        (1, 2, 4, 8),
        "thread counts searched, ascending, at the queue depth search's best QD",
        tp.thread_list,
        tp.show_list,
        source="UNVERIFIED: the reviews do not list them; powers of two",
    ),
    tp.Param(
        "rule",
        "gain",
        "how a search chooses its step: gain (the last step that gained at least min_gain; the search stops "
        "when steps stop gaining) or knee (every step runs; the knee of IOPS vs log2 outstanding IO: the step "
        "farthest above the line from the first step to the last)",
        tp.choice("gain", "knee"),
        source="gain: published reviews; knee: the Kneedle definition (Satopää et al., 2011), iolab's choice",
    ),
    tp.Param(
        "min_gain",
        0.02,
        "the search stops when a step gains less than this",
        pc.fraction_below_one,
        tp.show_percent,
        source="published reviews",
    ),
    tp.Param(
        "no_gain_steps",
        1,
        "steps in a row that must gain less than min_gain to end a search (rule=gain)",
        tp.positive_int,
        source="published reviews (one step); more steps ride out a noisy step",
        only_with=("rule", "gain"),  # the knee runs every step: no search stops
    ),
    tp.Param(
        "rounds",
        60,
        "rounds at the optimum (--quick: 3 unless set)",
        tp.round_count,
        source="published reviews",
        quick=3,
    ),
    tp.Param(
        "round_time",
        51.0,
        "each round's measured time, after the warm-up (--quick: the cell time unless set)",
        tp.seconds,
        tp.show_seconds,
        source="published reviews (9 s warm-up + 51 s)",
        quick=lambda profile, _: profile.cell_seconds,
    ),
    tp.Param(
        "search_time",
        60.0,
        "each search step (--quick: the cell time unless set)",
        tp.seconds,
        tp.show_seconds,
        source="UNVERIFIED: the reviews do not say; as a PTS cell",
        quick=lambda profile, _: profile.cell_seconds,
    ),
    WARMUP,
)
OPTIMUM = "at the optimum"
CHOICE = {"gain": "last-gain", "knee": "knee"}  # the decision's rule name for each choice


# What a deferred phase is built from: each finished phase's samples, by phase name.
PhaseBuild = Callable[[Mapping[str, Sequence[Sample]]], tuple[Phase, Decision]]


@dataclass(frozen=True)
class _Searches:
    """The settings the searches and rounds share, and how each deferred phase is built from
    them. One object, so the phases built during the run and again at resume see the same."""

    v: dict[str, Any]
    ar: float

    @property
    def threads(self) -> int:
        threads: int = self.v["threads"]
        return threads

    @property
    def rule(self) -> NoGain:
        return NoGain(min_gain=self.v["min_gain"], steps=self.v["no_gain_steps"])

    @property
    def by_knee(self) -> bool:
        chosen: bool = self.v["rule"] == "knee"
        return chosen

    @property
    def stop(self) -> NoGain | None:
        # the knee is a property of the whole curve: its searches run every step, with no stop rule
        return None if self.by_knee else self.rule

    @property
    def how(self) -> str:
        return (
            "the knee of IOPS vs outstanding IO (the step farthest above the line from the first step to the last)"
            if self.by_knee
            else f"the last step that gained at least {tp.show_percent(self.rule.min_gain)}"
        )

    def choose(self, phase: str, samples: Sequence[Sample]) -> Sample:
        return knee(phase, samples) if self.by_knee else last_gain(phase, samples, self.rule.min_gain)

    def work(self, read_pct: float, qd: int, seconds: float) -> Workload:
        return Workload.mix(
            "rnd",
            read_pct,
            4 * KiB,
            threads=self.threads,
            queue_depth=qd,
            active_range=self.ar,
            duration_s=seconds,
            ramp_s=self.v["warmup"],
        )

    def cell(self, read_pct: float, qd: int, seconds: float, key: str = "", tc: int | None = None) -> Cell:
        # The rounds' key names no QD: drives with different optima still compare cell by cell.
        tc = self.threads if tc is None else tc
        w = self.work(read_pct, qd, seconds).with_(threads=tc)
        return Cell(key or f"TC{tc}/QD{qd}", w, f"TC{tc}/QD{qd}", 4 * KiB)

    def best_qd(self, op: str, samples: Mapping[str, Sequence[Sample]]) -> tuple[Sample, int]:
        best = self.choose(search_phase(op), samples[search_phase(op)])
        return best, best.outstanding // self.threads

    def thread_search(self, op: str, read_pct: float) -> PhaseBuild:
        v = self.v

        def build_threads(samples: Mapping[str, Sequence[Sample]]) -> tuple[Phase, Decision]:
            best, qd = self.best_qd(op, samples)
            # keys name no QD (as the rounds'): drives whose searches chose different QDs still compare
            cells = tuple(
                self.cell(read_pct, qd, v["search_time"], f"TC{tc} at the best QD", tc) for tc in v["thread_counts"]
            )
            phase = replace(cc.next_phase(threads_phase(op), cells), stop_rule=self.stop)
            return phase, Decision(
                threads_phase(op),
                {"name": CHOICE[v["rule"]]},
                f"the queue-depth search chose {best.key} ({best.iops:,.0f} {op} IOPS), {self.how}: "
                f"thread counts {tp.show_list(v['thread_counts'])} at QD{qd}",
                {"queue_depth": qd},
            )

        return build_threads

    def at_optimum(self, op: str, read_pct: float) -> PhaseBuild:
        v, rounds = self.v, self.v["rounds"]

        def build_rounds(samples: Mapping[str, Sequence[Sample]]) -> tuple[Phase, Decision]:
            by_qd, qd = self.best_qd(op, samples)
            searched = samples[threads_phase(op)]
            by_tc = self.choose(threads_phase(op), searched)
            # More threads only when they gained what the rule asks over the queue-depth search's
            # choice as the thread search measured it (its step at the same threads and QD): the
            # figures of one phase. The queue-depth search's own figure, a phase earlier, was of a
            # fresher drive (a write search's drive fills as it goes: on a simulated SAS SSD its
            # TC1/QD4 measured 4.5 % more than the same step a phase later), and the thread
            # search's choice, +0.45 % over that step in its own phase, lost to it.
            again = next((s for s in searched if s.outstanding == by_qd.outstanding), None)
            base = again or by_qd
            more = by_tc.outstanding > base.outstanding and by_tc.iops >= base.iops * (1 + self.rule.min_gain)
            best, tc = (by_tc, by_tc.outstanding // qd) if more else (base, self.threads)
            # a thread search that skipped the QD search's thread count has no such step: then the
            # comparison is across phases, and said so
            where = (
                "the thread search"
                if again is not None
                else "the queue-depth search (the thread search has no step there)"
            )
            cells = (self.cell(read_pct, qd, v["round_time"], OPTIMUM, tc),)
            phase = cc.next_phase(rounds_phase(op), cells, max_rounds=rounds)
            return phase, Decision(
                rounds_phase(op),
                {"name": CHOICE[v["rule"]]},
                f"the queue-depth and thread searches chose TC{tc}/QD{qd} ({best.iops:,.0f} {op} IOPS in {where}), "
                f"{self.how}: {counted(rounds, 'round')} there",
                {"threads": tc, "queue_depth": qd},
            )

        return build_rounds


def build(profile: Profile, target: Target) -> TestPlan:
    s = cc.setup(NAME, PARAMS, profile, target)
    v = s.values
    search_s, round_s, rounds, warmup = v["search_time"], v["round_time"], v["rounds"], v["warmup"]
    m = _Searches(v, active_fraction(profile, target))
    phases: list[Phase | Deferred] = list(s.phases)
    for i, (op, read_pct) in enumerate(SEARCHES):
        cells = tuple(m.cell(read_pct, qd, search_s) for qd in v["queue_depths"])
        search = cc.first_phase(s, search_phase(op), cells) if i == 0 else cc.next_phase(search_phase(op), cells)
        phases.append(replace(search, stop_rule=m.stop))
        # ETA: the thread search at most runs every count (its rule may end it sooner)
        phases.append(
            Deferred(
                threads_phase(op),
                f"the {op} QD search's most IOPS",
                m.thread_search(op, read_pct),
                len(v["thread_counts"]) * (search_s + warmup),
            )
        )
        phases.append(
            Deferred(
                rounds_phase(op),
                f"the {op} searches' most IOPS",
                m.at_optimum(op, read_pct),
                rounds * (round_s + warmup),
            )
        )
    rows = s.rows + [
        (
            "Stimulus",
            "RND 4 KiB reads, then writes: a queue-depth search, a thread-count search at its best QD, "
            "then rounds at the best (threads, QD)",
        ),
        ("Stop rule", "none: every step runs" if m.by_knee else m.rule.describe()),
        ("Choice", m.how),
    ]
    notes = ("The write search follows the read rounds without a new purge: reads do not change the drive's state.",)
    return TestPlan(
        NAME,
        "Maximum IOPS",
        f"characterisation ({profile.name})",
        profile,
        tuple(phases),
        profile.rule(),
        tested_capacity(profile, target),
        tuple(rows),
        notes,
        values=v,
    )


def key_figures(runs: Runs = ()) -> Metrics:
    def mean(op: str) -> Getter:
        return lambda phases: rounds_mean(ramp_phase(phases, rounds_phase(op)))

    return (
        KeyMetric("max read IOPS (rounds)", "IOPS", True, mean("read"), rate_of=RATE["read"], maximum=SHORT_STOP),
        KeyMetric("max write IOPS (rounds)", "IOPS", True, mean("write"), rate_of=RATE["write"], maximum=SHORT_STOP),
    )


SHORT_STOP = (
    "its search stops at the first step that gains less than min_gain, which a noisy step does early "
    "(--set no_gain_steps=2 rides out one; --set rule=knee runs every step), and searches only the queue "
    "depths and thread counts it was given"
)


# The report's pages, the comparison's overlays (their plots) and the terminal view (in the
# pages' module) are imported when shown: not by a run without a report or `iolab tests`.
def pages(run: RunData) -> list[Page]:
    from iolab.pages.report.char_maxiops import maxiops_pages

    return maxiops_pages(run)


def overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    from iolab.pages.report.char_maxiops import maxiops_overlays

    return maxiops_overlays(runs, labels)


def view(ph: PhaseSummary, console: Console) -> None:
    from iolab.pages.report.char_maxiops import maxiops_view

    maxiops_view(ph, console)


TEST = TestDef(
    NAME,
    "Maximum IOPS",
    cc.FAMILY,
    "RND 4 KiB read and write queue-depth, then thread-count search for the most IOPS, then rounds at the optimum",
    build=no_input(build),
    sequence=cc.SEQUENCE,
    key_figures=key_figures,
    pages=pages,
    overlays=overlays,
    view=view,
    short_title="Max IOPS",
    params=PARAMS + cc.PARAMS,
)
