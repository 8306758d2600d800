"""The probe of a scale-out run's fio servers: a 4 KiB null job each server must finish, whose
output says the server's fio version (client and servers must run the same one, hosts.py).

How long a probe may take. It is a fio client started here and a job forked by the server, so
on a busy machine it waits for CPU, not for the server: a fixed 20 s failed 14 of 32 drives of a
fleet started at once on a loaded 2-core machine (32 runs importing iolab and starting their
clients together). So the wait is one budget for all of a server's attempts:

- `IOLAB_FIO_PROBE_TIMEOUT` seconds when the user sets it;
- else 20 s times how oversubscribed this machine's cores are as the probe starts: the most of
  the 1-minute load average, the tasks runnable now (/proc/loadavg; the 1-minute average lags a
  burst of starting runs) and the probes this run starts at once, each per core, at least 1;
  at most 10 minutes.

An attempt that ends without a version before the budget is spent (a server that dropped the
connection, a client that could not reach it) is tried again after a pause that doubles from
0.5 s to 8 s; an attempt still running when the budget ends is stopped and the server refused,
naming the budget, how it was chosen and the variable that sets it."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from iolab.core.errors import EngineError, IolabError
from iolab.core.units import counted
from iolab.engines.fio_job import client_clock
from iolab.engines.fio_relay import relayed

PROBE_ENV = "IOLAB_FIO_PROBE_TIMEOUT"
BASE_S = 20.0  # one probe on an idle machine finishes in about 1 s
MAX_DEFAULT_S = 600.0
FIRST_PAUSE_S, MAX_PAUSE_S = 0.5, 8.0
_VERSION_RE = re.compile(r"\bfio=(fio-[^\s,]+)")


@dataclass(frozen=True)
class Budget:
    seconds: float
    why: str  # how it was chosen, for the run's notes and the error


@dataclass(frozen=True)
class Probe:
    version: str
    seconds: float  # from the first attempt's start to the answer
    attempts: int
    clock: str | None = None  # the clock the server chose itself (server_clock), None: not known


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def read_loadavg(path: str = "/proc/loadavg") -> tuple[float, int] | None:
    """(1-minute load average, tasks runnable now besides the reader), or None where unreadable."""
    try:
        f = Path(path).read_text().split()
        return float(f[0]), max(0, int(f[3].split("/")[0]) - 1)
    except (OSError, ValueError, IndexError):
        return None


def budget(
    concurrent: int = 1, environ=os.environ, loadavg: tuple[float, int] | None = None, ncores: int = 0
) -> Budget:
    """The time all attempts of one server's probe may take (see the module's note)."""
    raw = environ.get(PROBE_ENV, "").strip()
    if raw:
        try:
            s = float(raw)
        except ValueError:
            s = float("nan")
        if not 0 < s < float("inf"):
            raise IolabError(
                f"{PROBE_ENV}={raw!r}: give the seconds a fio server's probe may take in all, a number greater "
                "than 0 (e.g. 120), or unset it to let iolab scale the wait with this machine's load."
            )
        return Budget(s, f"set by {PROBE_ENV}")
    ncores = ncores or cores()
    load, runnable = loadavg if loadavg is not None else (read_loadavg() or (0.0, 0))
    factor = max(1.0, load / ncores, runnable / ncores, concurrent / ncores)
    s = min(MAX_DEFAULT_S, BASE_S * factor)
    return Budget(
        s,
        f"{BASE_S:g} s × {factor:.1f}: load {load:.1f}, {runnable} tasks runnable, {counted(concurrent, 'probe')} at once, "
        f"on {ncores} cores; {PROBE_ENV} sets it",
    )


def _attempt(endpoint: tuple[str, int], fio: str, timeout: float) -> tuple[str | None, str, str | None]:
    """One probe: (the version, '', the server's own clock choice) or (None, what happened instead, None).
    Through the relay (the server starts the job at once, fio_relay.py), with fio's time debug
    output, where the server says which clock it chose."""
    with tempfile.TemporaryDirectory(prefix="iolab-probe-") as tmp:
        job = Path(tmp) / "probe.fio"
        job.write_text("[probe]\nioengine=null\nsize=4k\n")
        try:
            with relayed([endpoint]) as relays:
                out = subprocess.run(
                    # options after --client go to that server: its time debug output
                    [fio, *client_clock(), f"--client={relays.client_arg(endpoint)}", "--debug=time", str(job)],
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                    cwd=tmp,
                    stdin=subprocess.DEVNULL,
                )
        except subprocess.TimeoutExpired:
            return None, "timeout", None
    m = _VERSION_RE.search(out.stdout)
    if m:
        return m.group(1), "", server_clock(out.stdout)
    said = [ln for ln in (out.stdout + "\n" + out.stderr).splitlines() if not _DEBUG_RE.match(ln)]
    return None, f"exit {out.returncode}: {' '.join(' '.join(said).split())[-300:] or '(nothing)'}", None


# fio's time debug output: "<host> time PID gettime: clocksource=N" from a server (a line
# without "<host>" is the client's own); N is fio's enum fio_cs, 3 its CPU (TSC) clock
_DEBUG_RE = re.compile(r"^(?:<[^>]*>\s+)?time\s+\d+\s")
_SERVER_CLOCK_RE = re.compile(r"^<[^>]*>\s+time\s+\d+\s+gettime: clocksource=(\d+)\s*$", re.M)
_FIO_CLOCKS = {"3": "cpu"}


def server_clock(stdout: str) -> str | None:
    """The clock a fio server chose itself for the probe's job ('cpu' for its TSC clock, after
    its own tests), from fio's time debug output; None when it chose another or did not say:
    its jobs then name none and the server chooses again."""
    chosen = _SERVER_CLOCK_RE.findall(stdout)
    return _FIO_CLOCKS.get(chosen[-1]) if chosen and len(set(chosen)) == 1 else None


def probe(
    endpoint: tuple[str, int], fio: str, b: Budget, sleep=time.sleep, refused: Callable[[], str | None] = lambda: None
) -> Probe:
    """The server's fio version, attempts repeated until `b` is spent (EngineError then).
    `refused()`: why the way to the server is refused for good (an SSH tunnel's forward its sshd
    does not allow), asked after each failed attempt: no later attempt can pass, so none waits."""
    t0 = time.monotonic()
    deadline = t0 + b.seconds
    pause, attempts, said = FIRST_PAUSE_S, 0, ""
    while True:
        attempts += 1
        version, said, clock = _attempt(endpoint, fio, max(0.1, deadline - time.monotonic()))
        if version:
            return Probe(version, time.monotonic() - t0, attempts, clock)
        why = refused()
        if why:
            raise EngineError(why)
        left = deadline - time.monotonic()
        if said == "timeout" or left <= pause:
            break
        sleep(pause)
        pause = min(2 * pause, MAX_PAUSE_S)
    where = f"fio server {endpoint[0]}:{endpoint[1]}"
    if said == "timeout":
        what = f"did not finish a 4 KiB probe job within {b.seconds:g} s"
    else:
        what = f"did not report its version (last attempt {said})"
    raise EngineError(
        f"{where} {what} ({counted(attempts, 'attempt')}; the budget {b.seconds:g} s: {b.why}). A server that is only slow "
        f"to answer on a busy machine gets more time with {PROBE_ENV}=SECONDS."
    )
