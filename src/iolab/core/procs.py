"""Small facts about processes, shared by the store (dead writers), capture (stale locks) and
resume (what a stopped run left running), the children that die with iolab, and waiting for
a child without polling."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
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


def holder_record(fd: int) -> dict:
    """What a lock file open on `fd` says of the process that holds it (a target's lock, a run
    directory's claim): its JSON object, {} when it is empty or unreadable."""
    try:
        data = json.loads(os.pread(fd, 65536, 0) or b"{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


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


PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGKILL):
    """preexec_fn: the kernel sends the child `sig` when this process dies, even by SIGKILL.
    Armed in the child before it execs, and the child exits at once if its parent died before
    that (a wrapper such as setpriv would arm it only after its own exec, too late for a parent
    killed in between). (The kernel means the thread that started the child: it is started
    from the thread that runs the test, which lasts as long as the run.)"""
    import ctypes  # here, not at import: most commands start no child

    libc = ctypes.CDLL(None, use_errno=True)
    parent = os.getpid()

    def arm() -> None:
        libc.prctl(PR_SET_PDEATHSIG, sig)
        if os.getppid() != parent:  # the parent died before the signal was armed
            os._exit(1)

    return arm


def wait_exit(proc: subprocess.Popen, timeout: float) -> int:
    """`proc.wait(timeout)` without its polling: Popen.wait with a timeout asks for the child's
    exit every 50 ms (after a few shorter sleeps), 20 wake-ups a second for as long as fio's
    client runs, each round of every drive of a fleet; a pidfd becomes readable when the
    process ends. Raises subprocess.TimeoutExpired as Popen.wait does; falls back to it where
    the kernel has no pidfd (Linux < 5.3)."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # no pidfd, or the child is already reaped
        return proc.wait(timeout=timeout)
    try:
        waiter = select.poll()
        waiter.register(fd, select.POLLIN)
        if not waiter.poll(max(0, int(timeout * 1000))):  # retried on EINTR with the time left (PEP 475)
            raise subprocess.TimeoutExpired(proc.args, timeout)
    finally:
        os.close(fd)
    return proc.wait()
