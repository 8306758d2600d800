"""Small facts about processes, shared by the store (dead writers) and capture (stale locks)."""

from __future__ import annotations

import os
from pathlib import Path


def pid_alive(pid: int) -> bool:
    """True if a process with this pid exists (even one we may not signal)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stat(pid: int) -> list[str]:
    """/proc/PID/stat from field 3 (the state) on; empty if the process is gone."""
    try:
        text = open(f"/proc/{pid}/stat").read()
    except OSError:
        return []
    # The command name (field 2) may hold spaces and parentheses: fields follow its last ')'.
    return text[text.rfind(")") + 2 :].split()


def process_start(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22), or None.
    With the boot id it tells a live process from a later one that reused its pid."""
    fields = _stat(pid)
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def process_state(pid: int) -> str:
    """The process's state letter (R, S, D, T, Z ...), or "" if it is gone."""
    fields = _stat(pid)
    return fields[0] if fields else ""


def working_in(directory: Path) -> list[tuple[int, list[str]]]:
    """The processes whose working directory is `directory`, with their command lines. A
    zombie has none, and processes another user owns cannot be read (nor be ours)."""
    want = os.path.realpath(directory)
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{entry}/cwd") != want:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
        except OSError:
            continue
        found.append((int(entry), argv))
    return found


def boot_id() -> str | None:
    try:
        return open("/proc/sys/kernel/random/boot_id").read().strip()
    except OSError:
        return None


def same_process_alive(pid: int, start: int | None, boot: str | None) -> bool:
    """True if the process that had this pid (started at `start` in boot `boot`) still runs.
    Without a recorded start time (runs stored by older versions) only the pid is checked."""
    if not pid_alive(pid):
        return False
    if boot is not None and boot_id() not in (None, boot):
        return False  # rebooted since: any process with this pid is another one
    if start is not None:
        now = process_start(pid)
        return now is None or now == start
    return True
