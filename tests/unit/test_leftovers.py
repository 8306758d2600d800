"""What a stopped run left running in its raw directory: only processes working there on one of
its job files are the run's; resume ends them (SIGKILL for one that ignores SIGTERM) and leaves
every other process alone."""

from __future__ import annotations

import subprocess
import sys

from iolab.run.leftovers import end_leftovers, leftovers

IGNORES_TERM = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"
)


def test_only_the_runs_job_processes_are_ended_and_one_ignoring_sigterm_is_killed(tmp_path):
    raw = tmp_path / "raw"
    (raw / "interrupted-1").mkdir(parents=True)
    (raw / "interrupted-1" / "main-r01-c00-x.fio").write_text("[job]\n")  # set aside since: still the run's
    job = subprocess.Popen(
        [sys.executable, "-c", IGNORES_TERM, "main-r01-c00-x.fio"], cwd=raw, stdout=subprocess.PIPE, text=True
    )
    shell = subprocess.Popen(["sleep", "60"], cwd=raw)  # someone looking at the run: not the run's
    elsewhere = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", "main-r01-c00-x.fio"], cwd=tmp_path
    )
    try:
        assert job.stdout is not None and job.stdout.readline() == "ready\n"
        assert [p.pid for p in leftovers(raw)] == [job.pid]
        note = end_leftovers(raw, "run-x", wait_s=2)
        assert note is not None and f"pid {job.pid} (" in note and "main-r01-c00-x.fio" in note
        assert job.wait(timeout=10) == -9  # SIGTERM ignored, then SIGKILL
        assert shell.poll() is None and elsewhere.poll() is None
        assert end_leftovers(raw, "run-x") is None  # nothing left: nothing to wait for
    finally:
        for p in (job, shell, elsewhere):
            p.kill()
            p.wait()
