"""What the SNIA Real World Storage Workload (RWSW) tests share: their input files and the
phases they are built from.

Input (`--workload PATH`): the directory `iolab trace analyze` writes (analysis.json,
composite.toml, replay.toml), or any one of those files; the others are looked up beside
it under their standard names. A test takes what it needs (the composite, the replay) and
says which file is missing otherwise. The stream analysis is optional: when present it is
copied into the run directory and the report prints the Self-Test (in-situ) page from it.

Phases:
  saturation_phase  purge, WIPC when the workload reads, then intervals of one workload until
                    steady state (accepted only after 1× capacity written), a byte budget
                    (× tested capacity written) or a time budget (Multi-WSAT, Individual
                    Streams WSAT);
  steady_phase      purge, WIPC fill, then rounds of the composite until steady state (the
                    drive state before Replay-Native and DIRTH).
"""

from __future__ import annotations

import hashlib
import math
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iolab.core.errors import IolabError
from iolab.core.plan import Cell, Phase, Profile, TestPlan, Tracking
from iolab.core.runfiles import ANALYSIS_FILE, COMPOSITE_FILE, INPUTS_DIR, REPLAY_FILE
from iolab.core.safefile import loads_toml, read_text
from iolab.core.units import duration, eng
from iolab.core.workload import Workload
from iolab.suites import active_fraction, tested_capacity, wipc
from iolab.targets import Target
from iolab.traces.analysis.workloads import ReplayPlan, load_composite, load_replay

SPEC = "RWSW 1.0.x"  # the RWSW PTS for datacenter storage; 1.0.x: which revision is UNVERIFIED
# In a quick run a saturation phase also stops after this many intervals, so a test that
# never settles still ends in about a minute.
QUICK_MAX_INTERVALS = 30


@dataclass(frozen=True)
class RwswInput:
    """The files behind an RWSW run (None where absent) and the workloads read from them."""

    composite_path: Path | None
    replay_path: Path | None
    analysis_path: Path | None
    composite: Workload | None
    replay: ReplayPlan | None

    def need_composite(self, test: str) -> Workload:
        if self.composite is None:
            raise IolabError(
                f"test {test}: needs the composite workload ({COMPOSITE_FILE}); none was found with the given "
                f"--workload. Give the directory written by `iolab trace analyze TRACE --out DIR`, or a composite TOML file."
            )
        return self.composite

    def need_replay(self, test: str) -> ReplayPlan:
        if self.replay is None:
            raise IolabError(
                f"test {test}: needs the replay workload ({REPLAY_FILE}); none was found with the given --workload. "
                "Give the directory written by `iolab trace analyze TRACE --out DIR`, or its replay.toml."
            )
        return self.replay

    def files(self) -> list[Path]:
        return [p for p in (self.composite_path, self.replay_path, self.analysis_path) if p is not None]


def _kind(path: Path) -> str:
    """'composite', 'replay' or 'analysis': from the content, so renamed files still work."""
    if path.suffix == ".json":
        return "analysis"
    try:
        data = loads_toml(read_text(path, "workload file", "workload"), str(path))
    except (OSError, IolabError):
        return "unknown"  # the loader reports the file and line
    if "replay" in data:
        return "replay"
    if "workload" in data:
        return "composite"
    return "unknown"


def locate(path: str | Path) -> dict[str, Path]:
    """The input files for `path` (a directory or one of its files), by kind."""
    p = Path(path)
    if not p.exists():
        raise IolabError(
            f"--workload {p}: no such file or directory. Give the directory written by `iolab trace analyze`."
        )
    found: dict[str, Path] = {}
    if p.is_file():
        kind = _kind(p)
        if kind == "unknown":
            raise IolabError(
                f"--workload {p}: not an iolab workload file (expected a composite TOML with a [workload] table, "
                "a replay TOML with a [replay] table, or the analysis JSON written by `iolab trace analyze`)."
            )
        found[kind] = p
        folder = p.parent
    else:
        folder = p
    for kind, name in (("composite", COMPOSITE_FILE), ("replay", REPLAY_FILE), ("analysis", ANALYSIS_FILE)):
        if kind not in found and (folder / name).is_file():
            found[kind] = folder / name
    if not found:
        raise IolabError(
            f"--workload {p}: holds none of {COMPOSITE_FILE}, {REPLAY_FILE}, {ANALYSIS_FILE}. "
            "Run `iolab trace analyze TRACE --out DIR` and give DIR."
        )
    return found


def load_input(path: str | Path) -> RwswInput:
    found = locate(path)
    c, r, a = found.get("composite"), found.get("replay"), found.get("analysis")
    return RwswInput(c, r, a, load_composite(c) if c else None, load_replay(r) if r else None)


def copy_inputs(path: str | Path, run_dir: Path) -> list[Path]:
    """Copy the input files into the run directory (reports read only run directories)."""
    dest = run_dir / INPUTS_DIR
    dest.mkdir(exist_ok=True)
    names = {"composite": COMPOSITE_FILE, "replay": REPLAY_FILE, "analysis": ANALYSIS_FILE}
    return [Path(shutil.copyfile(src, dest / names[kind])) for kind, src in locate(path).items()]


# -- workloads ------------------------------------------------------------------------------


def digest(*workloads: Workload) -> str:
    """A short fingerprint of what is run (streams, shares, outstanding IO, durations), so a
    comparison can refuse runs of different workloads; file comments do not change it."""
    h = hashlib.sha256()
    for w in workloads:
        h.update(
            repr(
                (
                    sorted((s.access, s.op, s.block_size, round(s.share, 9)) for s in w.streams),
                    w.threads,
                    w.queue_depth,
                    w.duration_s,
                )
            ).encode()
        )
    return h.hexdigest()[:12]


def mix_text(w: Workload) -> str:
    return ", ".join(f"{s.label()} {s.share * 100:.1f} %" for s in w.streams)


def applied(w: Workload, profile: Profile, target: Target, name: str, **changes: Any) -> Workload:
    """A workload from the input file as the test runs it: over the tested capacity, random
    (incompressible) data, one interval long."""
    return w.with_(
        active_range=active_fraction(profile, target),
        entropy=1.0,
        duration_s=profile.cell_seconds,
        bytes_budget=None,
        rate_iops=None,
        name=name,
        **changes,
    )


def oio_text(w: Workload) -> str:
    return f"TC {w.threads} × QD {w.queue_depth} = {w.outstanding}"


# -- phases ---------------------------------------------------------------------------------


def saturation_phase(name: str, cell: Cell, profile: Profile, target: Target) -> Phase:
    """Write saturation for one workload (Multi-WSAT, Individual Streams): from purge, a WIPC
    fill when the workload reads (so every read hits written data, as in the PTS), then
    intervals with IOPS tracked. Steady state counts only once the intervals have written
    `rwsw_min_write_multiple` × the tested capacity (a fresh drive is fast until it has been
    filled and garbage collection starts); the phase stops at steady state, when
    `wsat_capacity_multiple` × the tested capacity is written, or after `wsat_max_seconds`.
    A workload without writes has neither byte threshold (it would never reach them)."""
    interval = profile.cell_seconds
    rounds = math.ceil(profile.wsat_max_seconds / interval)
    if profile.quick:
        rounds = min(rounds, QUICK_MAX_INTERVALS)
    ops = {s.op for s in cell.workload.streams}
    cap = tested_capacity(profile, target)
    budget = int(profile.wsat_capacity_multiple * cap) if "write" in ops else None
    min_writes = int(profile.rwsw_min_write_multiple * cap) if "write" in ops else None
    precondition = (wipc(profile, target),) if "read" in ops else ()
    return Phase(
        name,
        (cell,),
        (Tracking(f"IOPS {cell.key}", cell.key, "iops"),),
        purge=True,
        precondition=precondition,
        max_rounds=rounds,
        stop_on_steady=True,
        budget_write_bytes=budget,
        budget_seconds=profile.wsat_max_seconds,
        min_write_bytes=min_writes,
    )


def saturation_stop_text(profile: Profile, target: Target) -> str:
    budget = profile.wsat_capacity_multiple * tested_capacity(profile, target)
    text = (
        f"steady state, or {profile.wsat_capacity_multiple:g}× capacity written ({eng(budget, 'B')}; "
        f"workloads with writes), or {duration(profile.wsat_max_seconds)}"
    )
    if profile.quick:
        text += f", or {QUICK_MAX_INTERVALS} intervals (quick)"
    return text


STEADY_AFTER_WORKLOAD = "Steady state after: workload writes"
STEADY_AFTER_PURGE = "Steady state after: writes since the purge"


def saturation_parameters(profile: Profile, target: Target) -> list[tuple[str, str]]:
    """The report's parameter rows for how a saturation phase starts and when it may stop."""
    cap = tested_capacity(profile, target)
    return [
        (
            "Preconditioning",
            "workloads that read: WIPC SEQ 128 KiB W "
            f"{profile.precondition_factor:g}× capacity after the purge (every read hits written data); "
            "write-only workloads: none (FOB after purge)",
        ),
        # two write thresholds, each in its own row with its option: one row for both read as
        # if the stop reason's "≥ 2× the tested capacity" contradicted "1× capacity"
        (
            STEADY_AFTER_WORKLOAD,
            f"{profile.rwsw_min_write_multiple:g}× capacity of workload writes "
            f"({profile.rwsw_min_write_multiple * cap / 1e9:.3f} GB; workloads with writes; --rwsw-min-writes)",
        ),
        (
            STEADY_AFTER_PURGE,
            f"{profile.steady_min_write_multiple:g}× capacity, preconditioning included "
            f"({profile.steady_min_write_multiple * cap / 1e9:.3f} GB; workloads with writes; --steady-min-writes)",
        ),
        ("Stop", saturation_stop_text(profile, target)),
    ]


def steady_phase(composite: Workload, profile: Profile, target: Target) -> Phase:
    """The drive state before Replay-Native and DIRTH: purge, WIPC, then rounds of the
    composite until steady state (at most `max_rounds`)."""
    cell = Cell("composite", applied(composite, profile, target, "composite"), "", 0)
    return Phase(
        "steady state (composite)",
        (cell,),
        (Tracking("IOPS composite", cell.key, "iops"),),
        purge=True,
        precondition=(wipc(profile, target),),
        max_rounds=profile.max_rounds,
        stop_on_steady=True,
    )


def input_parameters(inp: RwswInput, *workloads: Workload) -> list[tuple[str, str]]:
    files = ", ".join(p.name for p in inp.files())
    return [
        ("Workload files", files),
        ("Workload digest", digest(*workloads)),
        ("Self-Test", "from the capture's stream analysis" if inp.analysis_path else "no stream analysis given"),
    ]


DATA_NOTE = (
    "The capture has no data content, so writes use random (incompressible) data as the PTS requires; "
    "compressibility and duplication are not reproduced."
)


def with_input(build: Callable[[Profile, Target, RwswInput], TestPlan]) -> Callable[..., TestPlan]:
    """An RWSW test, as a TestDef's `build`: reads the --workload input it is given."""
    return lambda profile, target, workload: build(profile, target, load_input(workload))
