"""Small facts about processes, shared by the store (dead writers) and capture (stale locks)."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """True if a process with this pid exists (even one we may not signal)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
