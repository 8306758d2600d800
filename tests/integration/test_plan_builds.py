"""A run start builds each test's plan once (api/runs.planned), and once more for each profile
option given, to find whether the plan is the same without it: the notes `iolab run` prints
before anything runs ("--max-rounds changes nothing in …") and the plans the run uses both come
from that one pass. The command line counts the builds: the real `iolab` command runs with
registry.build_plan wrapped by a counter (COUNTING), nothing else changed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

COUNTING = """
import atexit, json, os, sys
from iolab.api import registry

built = []
build = registry.build_plan

def counted(name, *args, **kw):
    built.append(name)
    return build(name, *args, **kw)

registry.build_plan = counted
atexit.register(lambda: open(os.environ["PLAN_BUILDS"], "w").write(json.dumps(built)))
from iolab.cli.main import main

sys.argv[0] = "iolab"
main()
"""

CHARACTERISE = ["latency-demand", "qos", "max-iops", "rw-matrix", "mixed-matrix", "entropy", "consistency"]


def counting(tmp: Path, *args: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    """`iolab ARGS` and the test names of the plans it built, in order."""
    import json

    wrapper, record = tmp / "counting.py", tmp / "builds.json"
    wrapper.write_text(COUNTING)
    env = dict(os.environ, COLUMNS="200", PLAN_BUILDS=str(record))
    p = subprocess.run([sys.executable, str(wrapper), *args], capture_output=True, text=True, timeout=600, env=env)
    return p, json.loads(record.read_text())


def test_a_run_builds_its_plan_once_and_once_more_per_option_given(scratch):
    # --cell-time and --max-rounds differ from the quick profile: one probe each, for the run's record
    p, built = counting(
        scratch, "run", "iops", "--quick", "--cell-time", "100ms", "--max-rounds", "3", "--no-report",
        "--runs-dir", str(scratch / "runs"),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr + p.stdout
    assert built == ["iops"] * 3  # main: 6, the notes' check built and probed it again
    assert "changes nothing" not in p.stderr  # IOPS stops at its round limit: it uses both


def test_a_sequence_start_builds_each_plan_once_and_says_what_its_tests_ignore(scratch):
    # a runs directory that is a file: every plan is built, the notes and the sequence's ETA are
    # printed, and the first run cannot start (nothing runs). A runs directory the write policy
    # refuses only when the run makes it (on /proc): one that is a file is refused before the
    # plans are built (cli/runsdir.py)
    p, built = counting(
        scratch, "run", "characterise", "--quick", "--max-rounds", "3", "--precondition-factor", "3",
        "--no-report", "--runs-dir", "/proc/iolab-test-runs",
    )  # fmt: skip
    assert p.returncode == 3, p.stderr + p.stdout
    assert "Refusing to write the runs directory" in p.stderr
    assert sorted(built) == sorted(CHARACTERISE * 3)  # main: 42
    said = " ".join(p.stderr.split())
    assert "iolab: note: --max-rounds changes nothing in qos, rw-matrix, mixed-matrix" in said
    assert "iolab: note: --precondition-factor changes nothing in qos, rw-matrix" in said
    assert said.index("iolab: note:") < said.index("Refusing to write")  # before anything runs
    assert "test 1/7: remaining 7 tests, ETA" in p.stdout


def test_fio_job_builds_the_plans_without_probing_the_options(scratch):
    p, built = counting(
        scratch, "fio-job", "characterise", "-t", f"file:{scratch}/d.img?size=64MiB", "--quick",
        "--cell-time", "100ms", "--active-range", "50%",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "# ---- Latency vs IOPS Demand / read ramp" in p.stdout and "[global]" in p.stdout
    assert sorted(built) == sorted(CHARACTERISE)  # main: 21, the probes of a record fio-job never keeps
