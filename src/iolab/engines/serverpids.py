"""fio servers that die with the iolab process that started them, and the pid files that
find one that did not: a local server gets the kernel's parent-death signal (SIGKILL when
iolab dies, however it dies), and a pid file beside the target locks naming it and its owner
(pid and start time, so a process that reuses a pid is never taken for either). `iolab runs`
lists a server whose owner is gone; the next hosts run stops it."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from iolab.core.errors import IolabError
from iolab.core.procs import boot_id, process_start, same_process_alive
from iolab.targets.lock import lock_dirs


def stop_pid(pid: int, wait_s: float = 5.0) -> None:
    """SIGTERM, wait up to wait_s for the process to go, then SIGKILL (see ssh_stop_command)."""
    try:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            os.kill(pid, 0)
            time.sleep(0.05)
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # gone


def servers_dir() -> Path:
    """Where local servers' pid files live: beside the target locks (one place per machine)."""
    for d in lock_dirs():
        try:
            (d / "fio-servers").mkdir(parents=True, exist_ok=True)
            return d / "fio-servers"
        except OSError:
            continue
    raise IolabError(
        f"cannot create a directory for fio server pid files in {', '.join(map(str, lock_dirs()))}; "
        "set IOLAB_LOCK_DIR to a writable directory."
    )


def record(pid: int, address: str, port: int) -> Path:
    """The pid file of a server this process started."""
    pf = servers_dir() / f"fio-server-{pid}.json"
    pf.write_text(
        json.dumps(
            {
                "pid": pid,
                "start": process_start(pid),
                "boot": boot_id(),
                "address": address,
                "port": port,
                "owner": os.getpid(),
                "owner_start": process_start(os.getpid()),
                "run_dir": None,
            }
        )
    )
    return pf


def leftover_servers(directory: Path | None = None) -> list[dict]:
    """Servers an iolab process started and did not stop: their owner is gone, they still run.
    Reads only (what `iolab runs` lists)."""
    d = directory or next((p / "fio-servers" for p in lock_dirs() if (p / "fio-servers").is_dir()), None)
    found = []
    for pf in sorted(d.glob("fio-server-*.json")) if d else ():
        try:
            rec = json.loads(pf.read_text())
            owner_alive = same_process_alive(int(rec["owner"]), rec.get("owner_start"), rec.get("boot"))
            alive = same_process_alive(int(rec["pid"]), rec.get("start"), rec.get("boot"))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if alive and not owner_alive:
            found.append({**rec, "pid_file": str(pf)})
    return found


def stop_leftovers() -> list[str]:
    """Stop the servers earlier iolab processes left (by pid and start time: never a process
    that merely reuses the pid) and drop the pid files of servers that are gone."""
    d = servers_dir()
    stopped = []
    for rec in leftover_servers(d):
        stop_pid(int(rec["pid"]))
        Path(rec["pid_file"]).unlink(missing_ok=True)
        stopped.append(
            f"stopped a fio server left running by an earlier iolab (pid {rec['pid']}, "
            f"{rec['address']}:{rec['port']}, run {rec.get('run_dir') or 'not named'})"
        )
    for pf in d.glob("fio-server-*.json"):
        try:
            rec = json.loads(pf.read_text())
            if not same_process_alive(int(rec["pid"]), rec.get("start"), rec.get("boot")):
                pf.unlink(missing_ok=True)
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return stopped
