"""Faults around a run, as a user meets them on the command line: a results filesystem that is
all but full when the run starts, a stop signal while the report is being written, and lock
files left by killed runs."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from iolab.durable import ResultsDiskFull
from tests.integration.conftest import iolab

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to mount a tmpfs")


@pytest.fixture
def small_fs():
    """A 2 MiB tmpfs; the test fills it to the free space it wants."""
    d = Path(tempfile.mkdtemp(prefix="iolab-full-", dir="/var/tmp"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2M", "tmpfs", str(d)], check=True)
    try:
        yield d
    finally:
        subprocess.run(["umount", str(d)], check=True)
        d.rmdir()


@pytest.mark.parametrize("free_kib", [64, 160, 224, 256])
def test_a_nearly_full_results_disk_ends_the_run_failed_and_says_so_once(small_fs, free_kib):
    st = os.statvfs(small_fs)
    with open(small_fs / "filler", "wb") as f:
        f.write(b"\0" * (st.f_bavail * st.f_frsize - free_kib * 1024))
    runs = small_fs / "runs"
    res = iolab("run", "latency", "--quick", "--cell-time", "200ms", "--max-rounds", "3", "--no-report",
                "--runs-dir", str(runs), timeout=600)
    assert res.returncode == 5, res.stderr
    out = " ".join((res.stdout + res.stderr).split())  # Rich wraps long lines
    assert "Traceback" not in out and out.count("results disk full at ") == 1
    assert out.count(ResultsDiskFull.ADVICE) == 1, out
    made = [d for d in runs.iterdir()] if runs.is_dir() else []
    if not made:
        assert "no room to start a run" in out and "no run directory was left" in out
    for run in made:  # the run that began ends failed, with the reason, never 'running'
        m = json.loads((run / "manifest.json").read_text())
        assert m["state"] == "failed" and m["error"].startswith(f"results disk full at {run}")
        assert m["error"].count(ResultsDiskFull.ADVICE) == 1
    listed = iolab("runs", "--runs-dir", str(runs))
    assert listed.returncode == 0 and "broken" not in listed.stdout and "interrupted" not in listed.stdout
