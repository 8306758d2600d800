"""What `iolab resume` says and leaves: a resumed simulated run's purge said once, a run stopped
before it stored anything said as such (with the command that starts it again), and a refused
resume that changes nothing stored."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from iolab.api.runlist import list_runs

from .conftest import IOLAB, SMALL_SIM, default_signals, iolab

QUICK_SIM = ["run", "latency", "--quick", "-t", SMALL_SIM, "--no-report"]


def said(p: subprocess.CompletedProcess) -> str:
    return " ".join(p.stderr.split())  # Rich wraps long lines


def refused(p: subprocess.CompletedProcess) -> str:
    """A refusal: exit 2, one paragraph, no traceback; its text on one line."""
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and "\n\n" not in p.stderr.strip(), p.stderr
    return said(p)


def stored(run: Path) -> dict[str, bytes]:
    """Every file of the run directory, as its bytes."""
    return {str(f.relative_to(run)): f.read_bytes() for f in sorted(run.rglob("*")) if f.is_file()}


def test_a_resumed_simulated_run_says_its_purge_once(scratch):
    """A simulated drive's phase runs again from its purge on resume: the run records two purges
    of one phase, which the results printed as the same line twice."""
    runs = scratch / "runs"
    cmd = [*IOLAB, *QUICK_SIM, "--runs-dir", str(runs)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=default_signals)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None and not any(runs.glob("*/raw/main-r02-*")):
            time.sleep(0.02)
        assert proc.poll() is None, "the run ended before round 2"
        proc.send_signal(signal.SIGINT)  # round 1 is stored
    finally:
        proc.wait(timeout=300)
    [r] = list_runs(runs)
    assert r.state == "interrupted"
    for p in (iolab("resume", str(r.path), "--no-report", timeout=300), iolab("show", str(r.path))):
        assert p.returncode == 0, p.stderr
        lines = [ln for ln in p.stdout.splitlines() if ln.startswith("purge (")]
        again = "(2 times: the phase ran again from its purge when the run was resumed)"
        assert len(lines) == 1 and " ".join(p.stdout.split()).count(f"sim-purge — ok {again}") == 1, p.stdout
