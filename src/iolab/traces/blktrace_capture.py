"""Block IO capture with the `blktrace` tool, when this machine allows it.

    blktrace_problem(device) -> str | None        why blktrace cannot capture here (None: it can)
    capture_blktrace(device, seconds, out, ...) -> (raw files, interrupted, seconds, stderr)

blktrace needs its binary, debugfs mounted at /sys/kernel/debug and the kernel's relay
channel for the device (/sys/kernel/debug/block/DEV/trace0). On some kernels and
containers the relay files cannot be opened ("Operation not permitted") even as root, and
blktrace still exits 0 after printing the failure; so availability is decided by a one
second probe that must leave per-CPU files and no failure message. capture.py uses this
only when it works and falls back to the tracefs tracepoints otherwise, saying why.

The per-CPU binary files (`<out>.blktrace/trace.blktrace.N`) are kept as recorded and
imported with the blktrace binary reader (blktrace.py).
"""

from __future__ import annotations

import math
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from iolab.core.errors import IolabError
from iolab.targets.writepolicy import output_dir

DEBUGFS = Path("/sys/kernel/debug")
PROBE_S = 1
_FAILED = re.compile(r"fail|not mounted|cannot|permission|invalid", re.I)


def blktrace_problem(device: str) -> str | None:
    """Why blktrace cannot trace `device` on this machine, or None when a probe worked."""
    exe = shutil.which("blktrace")
    if exe is None:
        return "the blktrace tool is not installed (Debian: apt-get install blktrace)"
    if not (DEBUGFS / "block").is_dir():
        return f"debugfs is not mounted at {DEBUGFS} (mount -t debugfs none {DEBUGFS})"
    with tempfile.TemporaryDirectory(prefix="iolab-blkprobe-") as d:
        try:
            r = subprocess.run(
                [exe, "-d", device, "-w", str(PROBE_S), "-D", d, "-o", "probe"],
                capture_output=True,
                text=True,
                timeout=PROBE_S + 15,
            )
        except subprocess.TimeoutExpired:
            return "a 1 s blktrace probe did not finish within 16 s"
        msg = (r.stderr or "") + (r.stdout or "")
        bad = next((ln.strip() for ln in msg.splitlines() if _FAILED.search(ln)), None)
        if r.returncode != 0 or bad is not None:
            return f"a blktrace probe failed: {bad or msg.strip()[:200] or f'exit code {r.returncode}'}"
        if not list(Path(d).glob("probe.blktrace.*")):
            return "a blktrace probe wrote no per-CPU files"
    return None


def capture_blktrace(
    device: str, seconds: float, out: Path, stop: threading.Event | None = None, ready: threading.Event | None = None
) -> tuple[list[Path], bool, float, str]:
    """Run blktrace on `device` for `seconds` (Ctrl-C or `stop` end it early).

    Returns the per-CPU files, whether it ended early, how long it ran and blktrace's own
    summary (its stderr/stdout: per-CPU event counts and any dropped-event warning)."""
    raw_dir = output_dir(out.with_name(out.name + ".blktrace"), "raw trace directory")
    for old in raw_dir.glob("trace.blktrace.*"):
        old.unlink()
    p = subprocess.Popen(
        ["blktrace", "-d", device, "-w", str(math.ceil(seconds)), "-D", str(raw_dir), "-o", "trace"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    started = time.monotonic()
    interrupted = False
    if ready is not None:
        ready.set()
    try:
        while p.poll() is None:
            if stop is not None and stop.is_set():
                interrupted = True
                break
            time.sleep(0.1)
    except KeyboardInterrupt:
        interrupted = True
    if p.poll() is None:
        p.send_signal(signal.SIGINT)  # blktrace stops tracing and flushes its files
    output, _ = p.communicate(timeout=60)
    elapsed = time.monotonic() - started
    files = sorted(raw_dir.glob("trace.blktrace.*"), key=lambda f: int(f.suffix[1:]) if f.suffix[1:].isdigit() else 0)
    bad = next((ln.strip() for ln in output.splitlines() if _FAILED.search(ln)), None)
    if bad is not None or not files:
        raise IolabError(
            f"blktrace on {device} failed: {bad or 'it wrote no trace files'} (raw output kept in {raw_dir}). "
            "Capture with the tracefs tracepoints instead: --source tracefs."
        )
    return [f for f in files if os.path.getsize(f) > 0] or files, interrupted, elapsed, output


__all__ = ["blktrace_problem", "capture_blktrace"]
