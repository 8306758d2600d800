"""The suite's parallel run (scripts/test: pytest-xdist, `--dist loadgroup`) keeps a test file on
one worker and the files of a SHARED group together (tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("xdist")
ROOT = Path(__file__).resolve().parents[2]
TEST = """
import os, time, pytest

@pytest.mark.parametrize("i", range(6))
def test_one(i):
    time.sleep(0.2)  # long enough for an idle worker to be handed some of the file
    with open(os.environ["WHERE"], "a") as f:
        f.write(__name__ + " " + os.environ["PYTEST_XDIST_WORKER"] + "\\n")
"""


def three_workers(tmp_path: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The test files in tmp_path run on three xdist workers as scripts/test runs the suite (the
    suite's scheduler, tests/conftest.py); each test appends its module and worker to the file
    returned. Without the hypothesis plugin: none of these tests uses it, and it cost each of the
    four processes of the run ~0.7 CPU-s to load (2.8 of a run's 4)."""
    where = tmp_path / "where.txt"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:hypothesispytest",
            "-p",
            "tests.conftest",
            "-n",
            "3",
            "--dist",
            "loadgroup",
            "--rootdir",
            str(tmp_path),
            "-c",
            "/dev/null",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "WHERE": str(where)},
    )
    return where, p


def test_a_file_stays_on_one_worker_and_a_shared_group_together(tmp_path):
    for name in ("test_alone.py", "test_capture.py", "test_rwsw.py"):  # the last two share the tracefs instance
        (tmp_path / name).write_text(TEST)
    where, p = three_workers(tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    workers: dict[str, set[str]] = {}
    for line in where.read_text().splitlines():
        module, worker = line.split()
        workers.setdefault(module, set()).add(worker)
    assert len(workers["test_alone"]) == 1, workers
    assert len(workers["test_capture"] | workers["test_rwsw"]) == 1, workers


def test_the_slow_groups_are_handed_out_first(tmp_path):
    """The VM file (one test here, a boot of minutes in the suite) goes to a worker before the
    files with more tests, which xdist would hand out first: started last, it was the long pole."""
    for name in ("test_a.py", "test_b.py", "test_c.py", "test_d.py"):
        (tmp_path / name).write_text(TEST)
    (tmp_path / "test_drives.py").write_text(TEST.replace("range(6)", "range(1)"))
    where, p = three_workers(tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    first: dict[str, str] = {}  # each worker's first test file (a worker runs its tests one by one)
    for line in where.read_text().splitlines():
        module, worker = line.split()
        first.setdefault(worker, module)
    assert "test_drives" in first.values(), first
