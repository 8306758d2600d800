"""What `iolab resume` says of each phase as it goes on: where a phase starts again, what of it is
kept, the rounds already stored (run/resume decides; this module words it)."""

from __future__ import annotations

from iolab.core.plan import Deferred, Phase
from iolab.core.units import counted

# What a resumed run on hosts says: only the targets read over SSH were compared with the record.
REMOTE_NOTE = (
    "the targets are on the run's hosts: iolab compared the ones it can read over SSH with the "
    "run's record; for hosts reached through fio's server only it cannot tell whether their "
    "targets were written since the run stopped"
)


def rounds_text(done: int) -> str:
    """'round 1', or 'rounds 1-3' (never 'rounds 1-1')."""
    return "round 1" if done == 1 else f"rounds 1-{done}"


def runs_from(ph: Phase | Deferred) -> str:
    """Where a phase (again) starts: its purge, or, without one (DIRTH's operating points), its
    first round on the drive as it is now; "from its purge" was said of a phase that has none."""
    if isinstance(ph, Deferred):
        return "once it is built from the results before it"
    if ph.purge:
        return "from its purge"
    return "from its first round; it has no purge, so it starts from the drive as it is now"


def from_round(done: int) -> str:
    """Where the phase would have gone on: its preconditioning (done -1) has no round to name."""
    return f" from round {done + 1}" if done >= 0 else ""


def kept_text(cells: int, files: int) -> str:
    """What of the phases run again is kept, as it is: a stop in the first preconditioning step
    (WIPC) stored no cell, and its step's raw files alone are kept."""
    if not cells:
        kept = f"; the unfinished step's output is kept in raw/interrupted-*/ ({counted(files, 'file')})"
        return "no cell of it had been stored" + (kept if files else "")
    aside = f", {counted(files, 'raw file')} in raw/interrupted-*/" if files else ""
    return f"what was measured before is kept ({counted(cells, 'cell')} marked 'interrupted'{aside})"
