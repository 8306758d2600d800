"""What the characterisation tests (a storage reviewer's drive characterisation) share: the preconditioning
they all start from, the endurance parameters every report's endurance page uses, quick
scaling of their lists, and the cell naming that the report and compare pages read back.

"Precondition" is 4K random writes (incompressible) for a duration (default 2 h) or until
PTS steady state (IOPS of the 4K writes over a window of rounds), whichever the user picks
with `--set precondition=time|steady`; the plan records which. A --quick run writes
QUICK_DRIVE_WRITES times the capacity it tests instead of a duration: a few seconds of a drive's fresh rate fill only
part of even a scaled-down drive, which then never leaves fresh-out-of-box.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from iolab.core import testparams as tp
from iolab.core.plan import Cell, Phase, Profile, Tracking
from iolab.core.units import KiB, kib_label
from iolab.core.workload import Workload
from iolab.figures.compare.characterise import grid
from iolab.figures.summary import PhaseSummary
from iolab.suites import active_fraction, common_parameters, tested_capacity, untested_capacity
from iolab.suites.figures import Getter
from iolab.targets import Target

FAMILY = "iolab characterisation"
SEQUENCE = "characterise"
PRECONDITION_PHASE = "precondition"

PRECONDITION = tp.Param(
    "precondition",
    "time",
    "how preconditioning ends: 'time' (4K random writes for "
    "precondition_time) or 'steady' (until PTS steady state of their IOPS)",
    tp.choice("time", "steady"),
    source="published reviews",
)
BY_CAPACITY = 0.0  # precondition_time's quick value: write QUICK_DRIVE_WRITES × the tested capacity instead
QUICK_DRIVE_WRITES = 3


def _show_precondition_time(v: float) -> str:
    return f"until {QUICK_DRIVE_WRITES} × the tested capacity is written" if v == BY_CAPACITY else tp.show_seconds(v)


PRECONDITION_PARAMS = (
    PRECONDITION,
    tp.Param(
        "precondition_time",
        7200.0,
        "how long the 4K random-write preconditioning runs (precondition=time); "
        f"--quick writes {QUICK_DRIVE_WRITES} × the tested capacity instead unless set",
        tp.seconds,
        _show_precondition_time,
        source="published reviews",
        quick=BY_CAPACITY,
        only_with=("precondition", "time"),
    ),
)


def _show_rating(v: float) -> str:
    """A rating as the report's Test Parameters give it: 0 is no "0 P/E cycles" but the drive's
    own rating (its Endurance page: "30,000 (source: preset)"), where it states one."""
    return "0: the drive's own, where it states one" if not v else str(v)


ENDURANCE_PARAMS = (
    tp.Param(
        "pe_cycles",
        0,
        # 0 is not "no TBW": a simulated preset states its own rating, which endurance.py takes
        "rated P/E cycles of the flash, for TBW (0: the drive's own, as a simulated preset states it; where "
        "neither gives one, TBW is not computed)",
        tp.count_or_zero,
        _show_rating,
    ),
    tp.Param(
        "warranty_years",
        0.0,
        "warranty period in years, for DWPD (0: the drive's own, as a simulated preset states it; where neither "
        "gives one, DWPD is not computed)",
        tp.number_or_zero,
        _show_rating,
    ),
)
PARAMS = PRECONDITION_PARAMS + ENDURANCE_PARAMS


def params_of(own: tuple[tp.Param, ...], precondition: bool = True, endurance: bool = True) -> tuple[tp.Param, ...]:
    """A test's parameters: its own, then the shared ones it does not declare itself (a test
    may redeclare a shared one, e.g. with another quick value); without preconditioning (IO
    consistency fills the drive instead) the preconditioning ones do not apply, nor the
    endurance ones to a test whose pages print no endurance (latency-bound)."""
    mine = {p.name for p in own}
    shared = (PRECONDITION_PARAMS if precondition else ()) + (ENDURANCE_PARAMS if endurance else ())
    return own + tuple(p for p in shared if p.name not in mine)


@dataclass(frozen=True)
class Setup:
    """A characterisation test's start: its parameter values, the phases before its own and
    the preconditioning workload its first own phase runs (if by time)."""

    values: dict[str, Any]
    phases: tuple[Phase, ...]
    precondition: tuple[Workload, ...]
    rows: list[tuple[str, str]]


def setup(
    name: str,
    own: tuple[tp.Param, ...],
    profile: Profile,
    target: Target,
    *,
    precondition: bool = True,
    endurance: bool = True,
) -> Setup:
    """Read the test's parameters and build the preconditioning. `precondition=False` (IO
    consistency: purge and a sequential fill instead) skips it; `endurance`: params_of."""
    params = params_of(own, precondition, endurance)
    vals = tp.values(params, profile, name)
    ar = active_fraction(profile, target)
    rows = common_parameters(profile, target) + tp.parameter_rows(params, profile, name)
    if not precondition:
        return Setup(vals, (), (), rows)
    pc_time = vals["precondition_time"]
    # A range cut to the quick limit on a drive that cannot be copied smaller (a real one) uses
    # up the purged drive's free flash only once the rest of the drive is written over too, so a
    # fill by capacity writes that as well (its figures are still not the drive's steady state).
    untested = untested_capacity(profile, target)
    rest = f" plus the {untested / 1e9:.3f} GB of the drive outside it" if untested else ""
    budget = (
        {"bytes_budget": QUICK_DRIVE_WRITES * tested_capacity(profile, target) + untested}
        if pc_time == BY_CAPACITY
        else {"duration_s": pc_time}
    )
    w = Workload.mix(
        "rnd",
        0,
        4 * KiB,
        threads=profile.threads,
        queue_depth=profile.queue_depth,
        active_range=ar,
        entropy=1.0,
        name="precondition RND 4KiB W",
        **budget,
    )
    if vals["precondition"] == "steady":
        # A fresh drive's plateau is flat too, so steady state counts only after the rule's
        # minimum is written since the purge; the drive writes as much as a preconditioning by
        # capacity (at least that minimum) first, so the rounds start past fresh-out-of-box (the
        # entry-sata drive: 2× still reads 23 % above its saturated rate, 3× 5 %).
        multiple = max(float(QUICK_DRIVE_WRITES), profile.steady_min_write_multiple)
        cell = Cell("RND 4KiB W", w.with_(duration_s=profile.cell_seconds, bytes_budget=None), "0/100", 4 * KiB)
        fill = w.with_(duration_s=None, bytes_budget=int(multiple * tested_capacity(profile, target)) + untested)
        phase = Phase(
            PRECONDITION_PHASE,
            (cell,),
            (Tracking("IOPS RND 4KiB W", cell.key, "iops"),),
            purge=True,
            precondition=(fill,),
            max_rounds=profile.max_rounds,
        )
        first = f"{multiple:g} × the tested capacity{rest}, then "
        rows.append(
            (
                "Preconditioning",
                f"RND 4 KiB W, TC {profile.threads} × QD {profile.queue_depth}, {first}"
                f"{profile.cell_seconds:g} s rounds until PTS steady state of IOPS",
            )
        )
        return Setup(vals, (phase,), (), rows)
    how = (
        _show_precondition_time(pc_time) + rest if pc_time == BY_CAPACITY else "for " + _show_precondition_time(pc_time)
    )
    rows.append(
        (
            "Preconditioning",
            f"RND 4 KiB W, TC {profile.threads} × QD {profile.queue_depth}, {how} (steady state not checked)",
        )
    )
    return Setup(vals, (), (w,), rows)


def first_phase(s: Setup, name: str, cells: tuple[Cell, ...], *, max_rounds: int = 1) -> Phase:
    """The test's first own phase: purged and preconditioned by time, or straight after the
    steady-state preconditioning phase (no purge between them)."""
    return Phase(
        name, cells, (), purge=not s.phases, precondition=s.precondition, max_rounds=max_rounds, stop_on_steady=False
    )


def next_phase(name: str, cells: tuple[Cell, ...], *, max_rounds: int = 1) -> Phase:
    return Phase(name, cells, (), purge=False, max_rounds=max_rounds, stop_on_steady=False)


def cell_key(label: str, qd: int, extra: str = "") -> str:
    """'RND R 4KiB QD32': what compare/characterise.py splits back (`qd_of`)."""
    return f"{label}{' ' + extra if extra else ''} QD{qd}"


def size_text(sizes: tuple[int, ...]) -> str:
    return ", ".join(kib_label(b) for b in sizes)


def at(name: str, series: str, qd: int, attr: str) -> Getter:
    """A key figure of a queue-depth matrix: `attr` of the cell of `series` at `qd` in the phase `name`."""

    def get(phases: list[PhaseSummary]) -> float | None:
        ph = next((p for p in phases if p.phase.name == name), None)
        c = grid(ph)[2].get((series, qd)) if ph else None
        return None if c is None else getattr(c, attr)

    return get


def series_peak(name: str, series: str, attr: str = "iops") -> Getter:
    """A key figure of a queue-depth matrix: the highest `attr` of the measured cells of `series`
    (an IO size, a write share) over the queue depths of phase `name`; None when the run
    measured no cell of it (never one worked out from another series)."""

    def get(phases: list[PhaseSummary]) -> float | None:
        ph = next((p for p in phases if p.phase.name == name), None)
        vals = [getattr(c, attr) for (s, _), c in grid(ph)[2].items() if s == series] if ph else []
        return max(vals) if vals else None

    return get
