"""Block IO capture on Linux through tracefs block tracepoints.

    capture(device, seconds, out, process=None, on_tick=None, stop=None) -> CaptureResult

Records `block:block_rq_issue` and `block:block_rq_complete` for one block device in a
private tracefs instance (instances/iolab), so the top-level trace buffer and other tracers
are left alone. (blktrace's relay interface does not work on every kernel; tracepoints do.)
The kernel filters by device (and, for issues, by process name when `process` is given:
`fio`, or a glob like `postgres*`), so only the wanted events cross into user space.

The kernel's binary ring-buffer pages are copied from each CPU's trace_pipe_raw, unparsed,
into `<out>.tracefs/cpuN.raw` with the layout files that describe them (the engine output,
as recorded; tracefs_raw.py), about every PUMP_S, and decoded in bulk once tracing ends
(issue/complete pairs -> one IO with its response time). The text trace_pipe is not used:
the kernel formatting every event as text cost the traced workload ~4 µs of CPU per IO.
`on_tick` is called about once a second with the live IOPS (from the buffer's event
counters: trace events / 2) for a progress display.

Refusals (IolabError / RefusedError, nothing left enabled):
  - not root, tracefs missing and not mountable, DEVICE not a block device;
  - tracing already in use: another live iolab capture, block_rq_issue/complete enabled
    at the top level or in another tracefs instance, or blktrace running on the device.

Cleanup: whatever happens (end of duration, `stop` set, Ctrl-C, an exception) the events
are disabled, the buffers are drained and the instance is removed before returning.
Ctrl-C ends the capture early and the IOs recorded so far are still imported.

Lost events: when the reader falls behind, the kernel overwrites unread events. Their
count (the buffer's `overrun` and `dropped events` counters, and the counts the pages
carry) is stored in the table's metadata (`lost_events`) with a note saying the trace is
incomplete, and returned in `CaptureResult.lost_events`; never silently ignored.

Timestamps come from the `mono` trace clock in ns.

Written data (`sample_data` bytes, off by default): once tracing has ended, up to that many
bytes of the whole 4 KiB blocks the trace wrote are read back from the device, O_RDONLY,
and measured: zstd compression and duplicate blocks (analysis/datasample.py; kept in
`<out>.data.json`, which `iolab trace analyze` reports).

Sources (`source`): "tracefs" as above; "blktrace" runs the blktrace tool and imports its
binary per-CPU files (blktrace_capture.py; ns timestamps, no process filter); "auto" (the
default) uses blktrace when a probe shows it works on this machine and tracefs otherwise,
with a note in the table saying why blktrace was not used (on many kernels and containers
its relay files cannot be opened).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from iolab.core.errors import IolabError, RefusedError
from iolab.core.procs import pid_alive
from iolab.targets.writepolicy import check_file, output_dir
from iolab.traces.analysis.streamstats import DataSample
from iolab.traces.blktrace_capture import blktrace_problem, capture_blktrace
from iolab.traces.readers import import_trace
from iolab.traces.table import TraceTable
from iolab.traces.tracefs_raw import EVENTS, NoIssues, import_tracefs_raw, snapshot_layout

TRACEFS = Path("/sys/kernel/tracing")
INSTANCE = "iolab"
SOURCES = ("auto", "tracefs", "blktrace")
LOCK = Path("/run/iolab-capture.pid")
PUMP_S = 0.1  # how often the buffers are emptied (16 MiB per CPU holds ~1 s at 200 K IOPS on one CPU)


@dataclass(frozen=True)
class CaptureTick:
    elapsed_s: float
    iops: float  # issues per second over the last tick
    ios: int  # issues so far


@dataclass(frozen=True)
class CaptureResult:
    table: TraceTable
    raw_path: Path  # the directory of per-CPU raw files (tracefs pages or blktrace's records)
    device: str
    devno: str  # "major,minor"
    seconds: float  # how long tracing was on
    interrupted: bool  # ended early by Ctrl-C or `stop`
    lost_events: int  # events the kernel dropped (ring buffer overrun)
    data: DataSample | None = None  # the written data read back (sample_data > 0)


def _block_device(device: str) -> tuple[int, int]:
    try:
        st = os.stat(device)
    except FileNotFoundError:
        raise IolabError(f"{device}: no such device. Give a block device node, e.g. /dev/nvme0n1.") from None
    if not stat.S_ISBLK(st.st_mode):
        raise IolabError(
            f"{device}: not a block device. Capture traces block IO to a device node (e.g. /dev/sda, "
            "/dev/nvme0n1, /dev/loop0); to trace a file, capture the device that holds it."
        )
    return os.major(st.st_rdev), os.minor(st.st_rdev)


def _tracefs() -> Path:
    if os.geteuid() != 0:
        raise IolabError(
            "capture needs root: the kernel's block tracepoints are only reachable by root. Run as root (sudo)."
        )
    if not (TRACEFS / "events" / "block").is_dir():
        r = subprocess.run(["mount", "-t", "tracefs", "none", str(TRACEFS)], capture_output=True, text=True)
        if not (TRACEFS / "events" / "block").is_dir():
            raise IolabError(
                f"tracefs is not available at {TRACEFS} and mounting it failed ({r.stderr.strip() or r.returncode}). "
                "The kernel needs CONFIG_FTRACE and block tracepoints; try `mount -t tracefs none /sys/kernel/tracing`."
            )
    return TRACEFS


def _read(p: Path) -> str:
    try:
        return p.read_text().strip()
    except OSError:
        return ""


def _write(p: Path, value: str) -> None:
    with open(p, "w") as f:
        f.write(value)


def _check_free(root: Path, major: int, minor: int, device: str) -> list[str]:
    """Refuse if someone else traces block requests; clean a stale instance of our own."""
    notes = []
    inst = root / "instances" / INSTANCE
    if inst.exists():
        owner = LOCK.read_text().strip() if LOCK.exists() else ""
        if owner.isdigit() and pid_alive(int(owner)) and int(owner) != os.getpid():
            raise RefusedError(
                f"another iolab capture (pid {owner}) is running (tracefs instance {inst}). Wait for it to "
                f"finish or stop it (kill {owner}); two captures cannot share the instance."
            )
        _teardown(inst)
        notes.append(f"removed a stale tracefs instance {inst} left by an earlier capture that did not finish")
    users = []
    for where in [root] + [p for p in (root / "instances").iterdir() if p.name != INSTANCE]:
        for ev in EVENTS:
            if _read(where / "events" / "block" / ev / "enable") == "1":
                users.append(f"{where / 'events' / 'block' / ev / 'enable'}")
    if users:
        raise RefusedError(
            "block tracing is already in use by something else: " + ", ".join(users) + " is enabled. "
            "Stop that tracer first (e.g. `echo 0 > FILE` for each file named, or end the perf/trace-cmd/bpftrace "
            "session); iolab refuses to share the block tracepoints."
        )
    name = Path(os.path.realpath(device)).name
    bt = Path("/sys/class/block") / name / "trace" / "enable"
    if _read(bt) == "1":
        raise RefusedError(
            f"blktrace is running on {device} ({bt} = 1). Stop it (`blktrace -k` or end blktrace) first."
        )
    return notes


def _teardown(inst: Path) -> None:
    """Disable our events and remove the instance (idempotent, never raises)."""
    for ev in EVENTS:
        try:
            _write(inst / "events" / "block" / ev / "enable", "0")
        except OSError:
            pass
    try:
        _write(inst / "tracing_on", "0")
    except OSError:
        pass
    for _ in range(50):  # rmdir fails with EBUSY while a reader still has trace_pipe open
        try:
            os.rmdir(inst)
            return
        except FileNotFoundError:
            return
        except OSError as e:
            if e.errno != errno.EBUSY:
                return
            time.sleep(0.1)


def capture(
    device: str,
    seconds: float,
    out: str | Path,
    process: str | None = None,
    on_tick: Callable[[CaptureTick], None] | None = None,
    stop: threading.Event | None = None,
    ready: threading.Event | None = None,
    buffer_kb: int = 16384,
    source: str = "auto",
    sample_data: int = 0,
) -> CaptureResult:
    """Trace block IO on `device` for `seconds` (or until `stop` is set or Ctrl-C) and write
    the normalised IO table to `out`. `ready` is set once tracing is armed. `source`:
    tracefs, blktrace or auto (see the module doc). `sample_data` > 0: then read back up to
    that many bytes of the blocks written, read-only (see the module doc)."""
    _check_request(seconds, process, source)
    if 0 < sample_data < 4096:
        raise IolabError(f"data sample of {sample_data} B: give at least 4096 B (one block), e.g. 64MiB.")
    if sample_data:
        from iolab.traces.analysis.datasample import sample_written_data, sidecar  # numpy: only when asked

        check_file(sidecar(out), "data sample file")  # refused before tracing, not after
    result = _capture(device, seconds, out, process, on_tick, stop, ready, buffer_kb, source)
    if sample_data:
        result = replace(result, data=sample_written_data(device, result.table, sample_data))
    return result


def _capture(device, seconds, out, process, on_tick, stop, ready, buffer_kb, source) -> CaptureResult:
    major, minor = _block_device(device)
    out = check_file(out, "IO table")
    fallback: list[str] = []
    if source != "tracefs":
        if os.geteuid() != 0:
            _tracefs()  # says why root is needed
        problem = "blktrace cannot filter by process name" if process else blktrace_problem(device)
        if problem is None:
            return _via_blktrace(device, f"{major},{minor}", seconds, out, stop, ready)
        if source == "blktrace":
            raise IolabError(f"cannot capture {device} with blktrace: {problem}. Use --source tracefs (or auto).")
        fallback.append(f"blktrace not used ({problem}); captured with the tracefs block tracepoints")
    root = _tracefs()
    notes = fallback + _check_free(root, major, minor, device)
    raw_dir = output_dir(out.with_name(out.name + ".tracefs"), "raw trace directory")
    inst = root / "instances" / INSTANCE
    interrupted = False
    started = time.monotonic()
    lost = 0
    try:
        os.mkdir(inst)
    except FileExistsError:
        raise RefusedError(f"another capture created {inst} just now; wait for it to finish.") from None
    try:
        layout = _arm(inst, raw_dir, buffer_kb, major, minor, process)
        with contextlib.ExitStack() as stack:
            pipes = _open_pipes(stack, inst, raw_dir)
            for ev in EVENTS:
                _write(inst / "events" / "block" / ev / "enable", "1")
            _write(inst / "tracing_on", "1")
            started = time.monotonic()
            if ready is not None:
                ready.set()
            with _ctrl_c_sets(stop := stop or threading.Event()):
                interrupted = _pump(pipes, layout.page_size, inst, started, seconds, on_tick, stop)
            for ev in EVENTS:
                _write(inst / "events" / "block" / ev / "enable", "0")
            for fd, sink in pipes:  # the events are off: what is left is all there will be
                _copy_pages(fd, sink, layout.page_size)
        lost = _lost(inst)
    finally:
        elapsed = time.monotonic() - started
        _teardown(inst)
        LOCK.unlink(missing_ok=True)
    # The trace clock is CLOCK_MONOTONIC: its offset to the wall clock dates the capture.
    mono_to_unix = time.time_ns() - time.monotonic_ns()
    if interrupted:
        notes.append(f"capture ended early after {elapsed:.1f} s of {seconds:g} s")
    try:
        table = import_tracefs_raw(raw_dir, out, notes=tuple(notes), clock_unix_ns=mono_to_unix, lost_events=lost)
    except NoIssues:
        raise IolabError(
            f"no block IO was issued to {device}"
            + (f" by {process!r}" if process else "")
            + f" during the {elapsed:.1f} s capture; nothing to analyse (raw trace kept in {raw_dir})."
        ) from None
    return CaptureResult(table, raw_dir, device, f"{major},{minor}", elapsed, interrupted, table.lost_events or 0)


def _check_request(seconds: float, process: str | None, source: str) -> None:
    if seconds <= 0:
        raise IolabError(f"capture duration must be > 0 s, got {seconds}")
    if process is not None and not re.fullmatch(r"[\w.:*/+@-]{1,15}", process):
        raise IolabError(
            f"process filter {process!r}: give a process name as the kernel shows it (up to 15 characters, "
            "letters, digits and . _ - : / + @; * as a wildcard)."
        )
    if source not in SOURCES:
        raise IolabError(f"capture source {source!r}: give one of {', '.join(SOURCES)}.")


def _arm(inst: Path, raw_dir: Path, buffer_kb: int, major: int, minor: int, process: str | None):
    """Set up our instance (clock, buffer, the kernel's device and process filters), clear an
    earlier capture's pages and keep the layout files; returns the layout. The events are
    not enabled yet."""
    LOCK.write_text(str(os.getpid()))
    _write(inst / "trace_clock", "mono")
    _write(inst / "buffer_size_kb", str(buffer_kb))
    dev_filter = f"dev == {(major << 20) | minor}"
    comm = "" if process is None else f' && comm {"~" if "*" in process else "=="} "{process}"'
    _write(inst / "events" / "block" / "block_rq_issue" / "filter", dev_filter + comm)
    _write(inst / "events" / "block" / "block_rq_complete" / "filter", dev_filter)
    for old in raw_dir.glob("cpu*.raw"):  # an earlier capture's pages
        old.unlink()
    return snapshot_layout(inst, raw_dir)


def _open_pipes(stack: contextlib.ExitStack, inst: Path, raw_dir: Path) -> list:
    """(trace_pipe_raw fd, raw file) per CPU, both closed when `stack` ends."""
    cpus = sorted(int(p.name[3:]) for p in (inst / "per_cpu").glob("cpu*") if p.name[3:].isdigit())
    pipes = []
    for cpu in cpus:
        fd = os.open(inst / "per_cpu" / f"cpu{cpu}" / "trace_pipe_raw", os.O_RDONLY | os.O_NONBLOCK)
        stack.callback(os.close, fd)
        pipes.append((fd, stack.enter_context(open(raw_dir / f"cpu{cpu}.raw", "wb"))))
    return pipes


def _via_blktrace(device: str, devno: str, seconds: float, out: Path, stop, ready) -> CaptureResult:
    with _ctrl_c_sets(stop := stop or threading.Event()):
        files, interrupted, elapsed, output = capture_blktrace(device, seconds, out, stop, ready)
    notes = [f"blktrace: {ln.strip()}" for ln in output.splitlines() if "dropped" in ln.lower()]
    m = re.search(r"(\d+)\s.*dropped", output, re.I)
    lost = int(m.group(1)) if m else 0
    if lost:
        notes.insert(0, f"INCOMPLETE TRACE: blktrace dropped {lost:,} events; the IOs they described are missing.")
    if interrupted:
        notes.append(f"capture ended early after {elapsed:.1f} s of {seconds:g} s")
    table = import_trace(files, "blktrace", out, notes=tuple(notes), lost_events=lost)
    return CaptureResult(table, files[0].parent, device, devno, elapsed, interrupted, lost)


def _pump(pipes, page_size: int, inst: Path, started: float, seconds: float, on_tick, stop) -> bool:
    """Copy the per-CPU pages to the raw files until the time is up; True if ended early."""
    tick_events, tick_t = _events_written(inst), started
    try:
        while True:
            now = time.monotonic()
            if now - started >= seconds:
                return False
            if stop is not None and stop.is_set():
                return True
            # Wake up at most every PUMP_S and take every page buffered then: waking on
            # each event would cost the traced workload CPU time.
            time.sleep(min(PUMP_S, max(0.0, seconds - (now - started))))
            for fd, sink in pipes:
                _copy_pages(fd, sink, page_size)
            now = time.monotonic()
            if on_tick is not None and now - tick_t >= 1.0:
                events = _events_written(inst)
                on_tick(CaptureTick(now - started, (events - tick_events) / 2 / (now - tick_t), events // 2))
                tick_events, tick_t = events, now
    except KeyboardInterrupt:  # Ctrl-C when the handler could not be installed
        return True


@contextlib.contextmanager
def _ctrl_c_sets(stop: threading.Event):
    """While tracing, Ctrl-C sets `stop` instead of raising KeyboardInterrupt: an exception
    raised between the read of a page and its write would lose that page's events (the
    read consumes them from the kernel buffer). SIGTERM and SIGHUP (`timeout`, a closed
    terminal) end it the same way: by default they killed iolab at once, leaving the kernel
    tracing into its instance's buffers and no table written."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def _copy_pages(fd: int, sink, page_size: int) -> None:
    """Copy the pages trace_pipe_raw holds now (one page per read) to `sink`."""
    while True:
        try:
            page = os.read(fd, page_size)
        except BlockingIOError:
            return
        if not page:
            return
        sink.write(page)


def _stats(inst: Path) -> dict[str, int]:
    """The per-CPU ring-buffer counters of the instance, summed over CPUs."""
    total: dict[str, int] = {}
    for stats in (inst / "per_cpu").glob("cpu*/stats"):
        for key, value in re.findall(r"^([a-z ]+):\s*(\d+)\s*$", _read(stats), re.M):
            total[key] = total.get(key, 0) + int(value)
    return total


def _events_written(inst: Path) -> int:
    """Events the kernel has put in the buffer so far (read, waiting, or overwritten)."""
    s = _stats(inst)
    return s.get("read events", 0) + s.get("entries", 0) + s.get("overrun", 0)


def _lost(inst: Path) -> int:
    """Events the kernel could not keep: overwritten before they were read (overrun) or
    refused because the buffer was full (dropped events, when overwrite is off)."""
    s = _stats(inst)
    return s.get("overrun", 0) + s.get("dropped events", 0)
