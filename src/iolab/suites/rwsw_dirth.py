"""RWSW DIRTH on the composite: after the composite has brought the drive to steady state,
the composite at total outstanding IO 1, 2, 4, … 1,024 ("users"); per level IOPS, MB/s,
ART and the 99.99 % / 99.999 % response times, showing where response times saturate.
The summary figures are at OIO = 32 (MB/s and the 99.99 % response time)."""

from __future__ import annotations

from ..compare import dirth_figures
from ..compare.rwsw import dirth_overlays
from ..plan import Cell, Phase, Profile, TestPlan
from ..report.header import SPEC_HEADINGS
from ..report.rwsw import dirth_pages, with_selftest
from ..targets import Target
from ..testdef import TestDef
from . import common_parameters, tested_capacity
from .rwsw_common import DATA_NOTE, SPEC, RwswInput, copy_inputs, applied, input_parameters, mix_text, steady_phase, with_input

NAME = "dirth-rwsw"
OIO_LEVELS = tuple(2**k for k in range(11))  # 1 … 1,024
MAX_QD = 32  # per thread, as the PTS DIRTH's largest QD; more outstanding IO adds threads
SUMMARY_OIO = 32


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


def level_key(oio: int) -> str:
    return f"OIO {oio}"


def build(profile: Profile, target: Target, inp: RwswInput) -> TestPlan:
    composite = inp.need_composite(NAME)
    cells = []
    for oio in OIO_LEVELS:
        tc, qd = split_oio(oio)
        w = applied(composite, profile, target, f"composite at OIO {oio}", threads=tc, queue_depth=qd)
        cells.append(Cell(level_key(oio), w, f"TC{tc}/QD{qd}", 0))
    sweep = Phase("demand intensity", tuple(cells), (), purge=False, max_rounds=1, stop_on_steady=False)
    params = common_parameters(profile, target) + [
        ("Stimulus", f"composite ({mix_text(composite)}) at OIO 1, 2, 4 … 1,024"),
        ("Outstanding IO", "per level: TC1 × QD n up to 32, then n/32 threads × QD 32"),
        ("Preconditioning", f"purge, WIPC, then the composite to steady state at TC {composite.threads} × "
         f"QD {composite.queue_depth}"),
        ("PC2 (WDPC)", "the composite until steady state"),
        ("Summary point", f"OIO {SUMMARY_OIO}"),
        *input_parameters(inp, composite),
    ]
    notes = (
        "DIRTH on the composite: one sweep of OIO 1 → 1,024 (ascending, as users are added) after the composite "
        "reached steady state; the PTS DIRTH repeats its sweep until steady state, the RWSW catalogue does not "
        "say, so iolab runs it once.",
        "OIO is split as one thread with QD up to 32, then threads of QD 32 (1,024 = TC32 × QD32).",
        DATA_NOTE,
    )
    return TestPlan(NAME, "DIRTH (composite)", f"{SPEC} ({profile.name})", profile,
                    (steady_phase(composite, profile, target), sweep), profile.rule(),
                    tested_capacity(profile, target), tuple(params), notes)


TEST = TestDef(
    NAME, "DIRTH (composite)", "SNIA RWSW", "DIRTH on the composite: outstanding IO 1 … 1,024 after steady state",
    build=with_input(build), needs_workload=True, keep_input=copy_inputs, sequence="rwsw", heading=SPEC_HEADINGS["RWSW"],
    key_figures=dirth_figures, pages=with_selftest(dirth_pages), overlays=dirth_overlays, short_title="DIRTH",
    summary_figures=(f"MB/s at OIO {SUMMARY_OIO}", f"99.99 % RT at OIO {SUMMARY_OIO}"), summary_order=2,
)
