"""What a stopped run left running: processes still working in its raw directory (an fio the
kernel's parent-death signal did not reach, fio's job processes still writing their logs).
`iolab resume` ends them before it reads or moves the unfinished round's files: one that went
on would write its files into raw/ after the round was set aside, and its IO would fall into
the rounds measured next."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from iolab.core.errors import IolabError
from iolab.core.procs import process_start, process_state, working_in

WAIT_S = 30.0  # in all: half for SIGTERM (fio stops its jobs and writes its logs), half for SIGKILL


@dataclass(frozen=True)
class Leftover:
    pid: int
    start: int | None  # with the pid, tells this process from a later one that reuses the pid
    command: str

    def alive(self) -> bool:
        return process_state(self.pid) not in ("", "Z") and process_start(self.pid) == self.start


def leftovers(raw_dir: Path) -> list[Leftover]:
    """Processes whose working directory is `raw_dir` and whose command line runs one of the
    job files iolab wrote there (set aside since or not). Anything else working there (a
    shell, a viewer) is none of the run's and is left alone."""
    jobs = {p.name for p in raw_dir.rglob("*.fio")} if raw_dir.is_dir() else set()
    return [
        Leftover(pid, process_start(pid), " ".join(argv))
        for pid, argv in working_in(raw_dir)
        if any(Path(a).name in jobs for a in argv[1:])
    ]


def end_leftovers(raw_dir: Path, run_id: str, wait_s: float = WAIT_S) -> str | None:
    """End the processes the stopped run left in `raw_dir`: SIGTERM (and SIGCONT, without
    which a stopped process never acts on it), SIGKILL after half of `wait_s`. Returns what
    was ended, None if nothing ran there. Raises IolabError, having moved or changed nothing,
    when one is still there after `wait_s`."""
    found = leftovers(raw_dir)
    if not found:
        return None
    deadline = time.monotonic()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for p in found:
            if p.alive():  # checked just before: a pid taken over by another process is never signalled
                try:
                    os.kill(p.pid, sig)
                    if sig == signal.SIGTERM:
                        os.kill(p.pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass
        deadline += wait_s / 2
        while any(p.alive() for p in found) and time.monotonic() < deadline:
            time.sleep(0.05)
    left = [p for p in found if p.alive()]
    if left:
        raise IolabError(
            f"run {run_id}: {_named(left)} that the stopped run left running in {raw_dir} "
            f"{'is' if len(left) == 1 else 'are'} still there {wait_s:g} s after SIGTERM and SIGKILL "
            f"(state {', '.join(sorted({process_state(p.pid) or '?' for p in left}))}; D: waiting in the kernel for "
            "the device, which it cannot leave before its IO returns). Resuming now would let it write into the "
            "run and onto the target, so nothing was moved or changed: run `iolab resume` again once "
            f"`ps -p {left[0].pid}` no longer lists it."
        )
    return f"ended {_named(found)} that the stopped run had left running in raw/, before setting its files aside."


def _named(procs: list[Leftover]) -> str:
    """'pid 7 (fio a.fio)', or 'pids 7, 9 (fio a.fio)': fio's job processes share its command line."""
    by: dict[str, list[str]] = {}
    for p in procs:
        by.setdefault(p.command, []).append(str(p.pid))
    return "; ".join(f"pid{'s' if len(pids) > 1 else ''} {', '.join(pids)} ({cmd})" for cmd, pids in by.items())
