"""Whether the drive still holds the state a stopped run left (run/resume.py asks before it goes on
from the phase's last complete round): a simulated drive's ended with its process; a real
target may have been written, purged or trimmed since the run's last stored activity."""

from __future__ import annotations

import os

from iolab import targets
from iolab.core.plan import Phase
from iolab.engines import Capabilities
from iolab.run.identity import last_modified, target_identity
from iolab.store.manifest import manifest_of
from iolab.store.runstore import RunStore


def state_lost(store: RunStore, ph: Phase, target: targets.Target, caps: Capabilities) -> str | None:
    """Why the drive no longer holds the state the run left, if it does not."""
    if not caps.keeps_state:
        return (
            "a simulated drive's state (its mapping, wear, garbage collection) ended with the process that ran "
            "it, so its next round would not follow the last"
        )
    m = manifest_of(store)
    if m.target.get("identity") is None:
        return "the run does not record which target it wrote (stored by an older iolab)"
    last = store.last_activity()
    # each path a host of this machine wrote too (a hosts file may give each host its own)
    idents = (target_identity(target), *m.target.get("leg_identities", {}).values())
    modified = max((t for t in map(last_modified, idents) if t is not None), default=None)
    # The cell in flight when the run stopped wrote for at most one cell time after the last
    # stored activity (plus fio's start and stop).
    window = float(m.profile.get("cell_seconds", 60.0)) * 1.5 + 30.0
    if modified is not None and last is not None and modified > last + window:
        return (
            f"the target was written after the run stopped (modified {modified - last:,.0f} s after the run's "
            "last stored activity), so its state is no longer the run's (purged or used since?)"
        )
    if target.kind == "block" and ph.precondition:
        zeros = _zero_blocks(target.path, manifest_of(store).target.get("tested_capacity") or target.capacity)
        if zeros is not None and zeros >= 0.75:
            return (
                f"{zeros:.0%} of 64 sampled blocks read as zeros although preconditioning wrote every block: "
                "the device was purged or trimmed since"
            )
    return None


def _zero_blocks(path: str, capacity: int, samples: int = 64, size: int = 4096) -> float | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        zero = 0
        for k in range(samples):
            off = (capacity - size) * k // max(samples - 1, 1) // size * size
            if os.pread(fd, size, off).count(0) == size:
                zero += 1
        return zero / samples
    except OSError:
        return None
    finally:
        os.close(fd)
