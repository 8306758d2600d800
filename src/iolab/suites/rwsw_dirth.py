"""RWSW DIRTH on the composite: the DIRTH flow (suites/dirth_flow.py) with the captured
composite as its stimulus and total outstanding IO 1, 2, 4, … 1,024 ("users") as its demand
points: after WIPC the composite runs to steady state, then rounds of the sweep until IOPS at
OIO 1,024 is steady, then the Max/Mid/Min points and their histograms. Per level: IOPS,
MB/s, ART and the 99.99 % / 99.999 % response times, showing where response times saturate.
The summary figures are at OIO = 32 (MB/s and the 99.99 % response time)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iolab.core.plan import Profile, TestPlan
from iolab.core.testparams import Param, int_list, show_list, values
from iolab.core.workload import Workload
from iolab.figures.compare import DIRTH_SUMMARY_OIO, KeyMetric, dirth_level
from iolab.pages.runwords import SPEC_HEADINGS
from iolab.pages.textreport import render_dirth
from iolab.suites import wipc
from iolab.suites.dirth_flow import FLOW, Stimulus, build_flow
from iolab.suites.figures import Getter, Metrics, Runs, figure
from iolab.suites.rwsw_common import (
    DATA_NOTE,
    SPEC,
    RwswInput,
    applied,
    copy_inputs,
    input_parameters,
    mix_text,
    with_input,
)
from iolab.suites.testdef import TestDef
from iolab.targets import Target

if TYPE_CHECKING:
    from iolab.pages.report.model import Page
    from iolab.pages.report.rundata import RunData

NAME = "dirth-rwsw"
MAX_QD = 32  # per thread, as the PTS DIRTH's largest QD; more outstanding IO adds threads


def split_oio(oio: int) -> tuple[int, int]:
    """Total outstanding IO as threads × QD, exactly: one thread up to QD 32, then the fewest
    threads that divide it with QD ≤ 32 (64 = 2 × 32 … 1,024 = 32 × 32, the PTS DIRTH's
    TC32/QD32 corner)."""
    if oio < 1:
        raise ValueError(f"outstanding IO must be ≥ 1, got {oio}")
    threads = -(-oio // MAX_QD)
    while oio % threads:
        threads += 1
    return threads, oio // threads


def _levels(text: str) -> tuple[int, ...]:
    vals = int_list(text)
    if 0 in vals:
        raise ValueError("give outstanding IOs of at least 1")
    return vals


PARAMS = (
    Param(
        "oio",
        tuple(2**k for k in range(11)),
        "Total outstanding IO of the demand points (run low → high)",
        _levels,
        show_list,
        "the RWSW catalogue (1 … 1,024 users)",
    ),
    *FLOW,
)


def build(profile: Profile, target: Target, inp: RwswInput) -> TestPlan:
    composite = inp.need_composite(NAME)
    v = values(PARAMS, profile, NAME)

    def at(tc: int, qd: int, secs: float, name: str) -> Workload:
        return applied(composite, profile, target, f"composite {name}", threads=tc, queue_depth=qd).with_(
            duration_s=secs
        )

    stimulus = Stimulus(
        f"composite ({mix_text(composite)})",
        "the composite",
        0,
        at,
        at,
        pc_point=(composite.threads, composite.queue_depth),
        pc_precondition=(wipc(profile, target),),
    )
    rows = [
        ("Outstanding IO", "per level: TC1 × QD n up to 32, then n/32 threads × QD 32"),
        *input_parameters(inp, composite),
    ]
    notes = (
        "DIRTH on the composite: the PTS DIRTH flow (A.11) with the composite as its stimulus and outstanding IO "
        "levels as its demand points, ascending as users are added; the composite also preconditions and "
        "pre-writes, since it is the workload whose steady state is measured.",
        "OIO is split as one thread with QD up to 32, then threads of QD 32 (1,024 = TC32 × QD32).",
        DATA_NOTE,
    )
    return build_flow(
        profile,
        target,
        NAME,
        "DIRTH (composite)",
        f"{SPEC} ({profile.name})",
        PARAMS,
        stimulus,
        [split_oio(o) for o in v["oio"]],
        f"OIO {show_list(v['oio'])}",
        rows,
        notes,
    )


def _at_summary_oio(attr: str | None, pct: float | None = None) -> Getter:
    return figure(lambda phases: dirth_level(phases, DIRTH_SUMMARY_OIO), attr, pct)


def key_figures(runs: Runs = ()) -> Metrics:
    return (
        KeyMetric(f"MB/s at OIO {DIRTH_SUMMARY_OIO}", "MB/s", True, _at_summary_oio("mbps")),
        KeyMetric(
            f"99.99 % RT at OIO {DIRTH_SUMMARY_OIO}", "µs", False, _at_summary_oio(None, 99.99), kind="percentile"
        ),
        KeyMetric(
            f"99.999 % RT at OIO {DIRTH_SUMMARY_OIO}", "µs", False, _at_summary_oio(None, 99.999), kind="percentile"
        ),
    )


# The report's pages and the comparison's overlays (their plots) are imported when a report or
# a comparison is built: not by a run without a report, `iolab show` or `iolab tests`.
def pages(run: RunData) -> list[Page]:
    """The test's pages, then the Self-Test pages of the capture it replayed."""
    from iolab.pages.report.rwsw import rwsw_dirth_pages
    from iolab.pages.report.rwsw_selftest import with_selftest

    return with_selftest(rwsw_dirth_pages)(run)


def overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    from iolab.pages.compare_pages.rwsw import dirth_overlays

    return dirth_overlays(runs, labels)


TEST = TestDef(
    NAME,
    "DIRTH (composite)",
    "SNIA RWSW",
    "DIRTH on the composite: outstanding IO 1 … 1,024 after steady state",
    build=with_input(build),
    needs_workload=True,
    keep_input=copy_inputs,
    sequence="rwsw",
    heading=SPEC_HEADINGS["RWSW"],
    key_figures=key_figures,
    pages=pages,
    overlays=overlays,
    view=render_dirth,
    params=PARAMS,
    short_title="DIRTH",
    summary_figures=(f"MB/s at OIO {DIRTH_SUMMARY_OIO}", f"99.99 % RT at OIO {DIRTH_SUMMARY_OIO}"),
    summary_order=2,
)
