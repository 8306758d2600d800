"""Supervising a running fio: fio is a child in its own session, so Ctrl-C reaches iolab
only and iolab stops fio on purpose; live IOPS come from fio's periodic JSON status reports,
which also feed the stall watchdog that kills a fio completing no IO."""

from __future__ import annotations

import codecs
import json
import math
import os
import select
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from iolab.core.errors import EngineError, IolabError
from iolab.core.workload import Workload
from iolab.targets import Target

# (seconds into the cell, IOPS since the last report, mean latency in µs over those IOs or None)
Progress = Callable[[float, float, float | None], None]


# The longest wait for one IO worth naming: the default's (3 × the cell time) for the longest
# cell a plan takes (24 h). Past it a stalled fio would hold the target for days, or forever.
MAX_STALL_SECONDS = 3 * 24 * 3600.0


def check_stall_timeout(seconds: float | None, given: str | None = None) -> None:
    """Refuse a stall timeout no run can mean; `given`: the option's text, said as typed."""
    if seconds is not None and (
        isinstance(seconds, bool)
        or not isinstance(seconds, (int, float))
        or not math.isfinite(seconds)
        or not 0 < seconds <= MAX_STALL_SECONDS
    ):
        shown = repr(given) if given is not None else f"{seconds!r} s"
        raise IolabError(
            f"stall timeout (--stall-timeout): {shown} is not allowed; give a duration greater than 0 and at "
            f"most {MAX_STALL_SECONDS / 3600:g} h (default: 3 × the cell time, at least 30 s). "
            "Nothing was run or written."
        )


class ReportStream:
    """Splits fio's stdout into its JSON reports as they arrive.

    With --status-interval fio prints a full json+ report every second and the final report
    last. Only the final one is stored (a json+ report is 25-120 KB: keeping one per second
    would store gigabytes per PTS run); the others feed live progress. Text that is not
    JSON (e.g. "fio: connected to NBD server") is kept for fio's console file.
    """

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._json = json.JSONDecoder()
        self._buf = ""
        self.final_text: str | None = None  # the last complete report, exactly as printed
        self.notes: list[str] = []
        self._prev_ios = 0
        self._prev_ms = 0.0
        self._prev_lat_ns = 0.0  # total latency of every IO counted so far
        self.ios = 0  # most IOs any report so far counted: the watchdog's sign of progress

    def feed(self, data: bytes) -> list[tuple[float, float, float | None]]:
        """Consume stdout bytes; return (elapsed s, IOPS and mean latency in µs since the
        previous report) for each complete report."""
        self._buf += self._decoder.decode(data)
        points = []
        while True:
            start = self._buf.find("{")
            if start < 0:
                self._keep_note(self._buf)
                self._buf = ""
                break
            if start:
                self._keep_note(self._buf[:start])
                self._buf = self._buf[start:]
            try:
                obj, end = self._json.raw_decode(self._buf)
            except json.JSONDecodeError:
                break  # incomplete: wait for the rest
            self.final_text = self._buf[:end]
            self._buf = self._buf[end:]
            point = self._point(obj)
            if point:
                points.append(point)
        return points

    def close(self) -> None:
        self._keep_note(self._buf + self._decoder.decode(b"", final=True))
        self._buf = ""

    def _keep_note(self, text: str) -> None:
        if text.strip():
            self.notes.append(text.strip())

    def _point(self, obj: dict) -> tuple[float, float, float | None] | None:
        try:
            jobs = obj["jobs"]
            ios = sum(j[d]["total_ios"] for j in jobs for d in ("read", "write"))
            ms = max(j[d]["runtime"] for j in jobs for d in ("read", "write"))
        except (KeyError, TypeError, ValueError):
            return None  # live progress is best effort; the final report is validated
        if isinstance(ios, int) and ios > self.ios:
            self.ios = ios
        if ms <= self._prev_ms:
            return None
        iops = (ios - self._prev_ios) / ((ms - self._prev_ms) / 1000.0)
        # fio reports each direction's mean completion latency (the latency iolab reports) over
        # all its IOs so far: the interval's mean is the growth of the total over that of the count
        try:
            lat_ns = sum(j[d]["clat_ns"]["mean"] * j[d]["total_ios"] for j in jobs for d in ("read", "write"))
        except (KeyError, TypeError, ValueError):
            lat_ns = None
        lat_us = None
        if lat_ns is not None and ios > self._prev_ios:
            lat_us = (lat_ns - self._prev_lat_ns) / (ios - self._prev_ios) / 1000.0
            self._prev_lat_ns = lat_ns
        self._prev_ios, self._prev_ms = ios, ms
        return ms / 1000.0, iops, lat_us


def _job_processes(pid: int) -> list[int]:
    """fio's job processes (its children). Each calls setsid(), so signalling fio's process
    group does not reach them."""
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat_line = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat_line.rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(entry))
    return kids


def _wait_draining(proc: subprocess.Popen, timeout: float) -> bool:
    """Wait for fio to exit while discarding its stdout: a stopping fio prints its final
    report, and with nobody reading, a full pipe would block it forever."""
    fd = proc.stdout.fileno()  # type: ignore[union-attr]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return True
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready and not os.read(fd, 1 << 20):
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
                return True
            except subprocess.TimeoutExpired:
                return False
    return proc.poll() is not None


def stop(proc: subprocess.Popen) -> None:
    """Stop fio the way Ctrl-C in a terminal would (SIGINT: fio tells its jobs to stop and
    prints its report), escalating if it does not exit; a second Ctrl-C while waiting goes
    straight to SIGKILL of fio and its job processes."""
    try:
        for sig, wait_s in ((signal.SIGINT, 15.0), (signal.SIGTERM, 5.0)):
            if proc.poll() is not None:
                return
            proc.send_signal(sig)
            if _wait_draining(proc, wait_s):
                return
    except KeyboardInterrupt:
        pass
    kill(proc)


KILL_WAIT_S = 10.0


def kill(proc: subprocess.Popen) -> bool:
    """SIGKILL fio's process group and its job processes (each in its own session, so the
    group does not reach them). False if fio is still there after KILL_WAIT_S: a process
    blocked in the kernel (a dead block device) cannot die until its IO returns, and iolab
    must not hang waiting for it."""
    if proc.poll() is not None:
        return True
    jobs = _job_processes(proc.pid)  # before fio dies: orphans lose the parent link
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in [*jobs, proc.pid]:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        proc.wait(timeout=KILL_WAIT_S)
        return True
    except subprocess.TimeoutExpired:
        return False


def default_stall_timeout(workload: Workload) -> float:
    """How long fio may complete no IO before the watchdog stops it: 3 × the cell time, at
    least MIN_STALL_S (a round without a duration, e.g. byte-budget preconditioning, gets the
    minimum). Per-second status reports make progress visible every second, so this only
    has to absorb a slow start or a drive's own pauses."""
    return max(MIN_STALL_S, 3.0 * (workload.duration_s or 0.0))


MIN_STALL_S = 30.0


class Stalled(Exception):
    """fio completed no IO (or did not exit) for the stall timeout."""

    def __init__(self, seconds: float, what: str):
        super().__init__(what)
        self.seconds, self.what = seconds, what  # seconds: the timeout that ran out


def pump(proc: subprocess.Popen, reports: ReportStream, progress: Progress | None, stall_s: float) -> None:
    """Drain fio's stdout as it comes (a full pipe would stall fio's status output) until
    fio closes it and exits. Raises Stalled when no report shows a new completed IO for
    `stall_s` seconds (a frozen server, a hung device, a fio printing nothing), or when fio
    closes its output but does not exit within that time."""
    fd = proc.stdout.fileno()  # type: ignore[union-attr]
    last_ios, last_progress = 0, time.monotonic()
    while True:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if ready:
            data = os.read(fd, 1 << 20)
            if not data:
                break
            for elapsed, iops, lat_us in reports.feed(data):
                if progress is not None:
                    progress(elapsed, iops, lat_us)
            if reports.ios > last_ios:
                last_ios, last_progress = reports.ios, time.monotonic()
        idle = time.monotonic() - last_progress
        if idle >= stall_s:
            raise Stalled(
                stall_s, "completed no IO" if last_ios == 0 else f"completed no IO after its first {last_ios:,}"
            )
    try:
        proc.wait(timeout=max(1.0, stall_s - (time.monotonic() - last_progress)))
    except subprocess.TimeoutExpired:
        raise Stalled(stall_s, "closed its output but did not exit") from None


def stall_error(
    stalled: Stalled,
    target: Target,
    tag: str,
    job: Path,
    raw_dir: Path,
    reports: ReportStream,
    proc: subprocess.Popen,
    killed: bool,
    err_path: Path,
) -> EngineError:
    kept = ""
    if reports.final_text is not None:
        path = raw_dir / f"{tag}.stalled.txt"
        path.write_text(reports.final_text + "\n")
        kept = f" fio's last status report is kept in {path}."
    fate = (
        "fio was killed, with its jobs"
        if killed
        else f"fio (pid {proc.pid}) did not die within {KILL_WAIT_S:g} s of SIGKILL (stuck in the kernel?) and was left behind"
    )
    tail = stderr_tail(err_path)
    return EngineError(
        f"no progress for {stalled.seconds:g} s on {target.spec}: fio {stalled.what} (round {tag!r}, job file {job}); "
        f"{fate}. The round is not stored; finished rounds are kept.{kept}"
        + (f" fio said: {tail.rstrip('.')}." if tail else "")
        + " If the target is just this slow, raise --stall-timeout."
    )


def stderr_tail(path: Path, lines: int = 12) -> str:
    try:
        text = path.read_text(errors="replace").strip()
    except FileNotFoundError:
        return ""
    return " | ".join(text.splitlines()[-lines:])[-1500:]
