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


# One xdist run serves both tests (a run costs four pytest starts): the files of each test side by
# side, seven groups for three workers. Each worker is handed a group, then a second, in the
# queue's order; xdist alone orders the groups by their number of tests. So without the SHARED
# group its two files, the largest, would be the second and third handed out, to two workers; and
# without the slow-first order the VM file (one test) would be handed out last, first on none.
FILES = {
    "test_alone.py": TEST,
    "test_capture.py": TEST.replace("range(6)", "range(9)"),  # these two share the tracefs instance
    "test_rwsw.py": TEST.replace("range(6)", "range(9)"),
    **{f"test_{c}.py": TEST for c in "abcd"},
    "test_drives.py": TEST.replace("range(6)", "range(1)"),
}


@pytest.fixture(scope="module")
def placed(tmp_path_factory) -> list[tuple[str, str]]:
    """The test files in FILES run on three xdist workers as scripts/test runs the suite (the
    suite's scheduler, tests/conftest.py): each test's (module, worker), in the order they ran.
    Without the hypothesis plugin: none of these tests uses it, and it cost each of the four
    processes of the run ~0.7 CPU-s to load (2.8 of a run's 4)."""
    tmp_path = tmp_path_factory.mktemp("groups")
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
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
    assert p.returncode == 0, p.stdout + p.stderr
    return [(line.split()[0], line.split()[1]) for line in where.read_text().splitlines()]


def test_a_file_stays_on_one_worker_and_a_shared_group_together(placed):
    workers: dict[str, set[str]] = {}
    for module, worker in placed:
        workers.setdefault(module, set()).add(worker)
    assert all(len(workers[f"test_{c}"]) == 1 for c in ("alone", "a", "b", "c", "d")), workers
    assert len(workers["test_capture"] | workers["test_rwsw"]) == 1, workers


def test_the_slow_groups_are_handed_out_first(placed):
    """The VM file (one test here, a boot of minutes in the suite) goes to a worker before the
    files with more tests, which xdist would hand out first: started last, it was the long pole."""
    first: dict[str, str] = {}  # each worker's first test file (a worker runs its tests one by one)
    for module, worker in placed:
        first.setdefault(worker, module)
    assert "test_drives" in first.values(), first
