"""A stored run's directory is written only by that run's own commands: every other output of
iolab (any command, any option, the simulator's save= state file) that would land in it is
refused through the one write policy, exit 3, with the run's files as they were.

Before: the policy let iolab replace "files iolab wrote itself", and a run's own files
(manifest.json, results.db, live.json, power.json) are such files, so `trace import -o
RUN/results.db` left a Parquet file as the run's database, `check --junit RUN/live.json` JUnit
XML as its live record, and a simulated drive's save= its state over a run's results.db; only
`iolab export` refused (exit 3)."""

from __future__ import annotations

import hashlib
import shlex
import shutil
from pathlib import Path

import pytest

from .conftest import SMALL_SIM, iolab, quick_sim_run

MSR_LINES = "128166372000000000,hm,0,Read,0,4096,100\n128166372000100000,hm,0,Write,4096,4096,100\n"


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> tuple[Path, Path, Path]:
    """Two complete quick runs (check needs two runs, not a copy of one) and an IO table: (the
    runs directory, the first run, the IO table)."""
    d = tmp_path_factory.mktemp("run-dir-writes")
    first = quick_sim_run(d / "runs")
    quick_sim_run(d / "runs")
    (d / "a.csv").write_text(MSR_LINES)
    p = iolab("trace", "import", str(d / "a.csv"), "-o", str(d / "a.parquet"))
    assert p.returncode == 0, p.stderr
    return d / "runs", first, d / "a.parquet"


def _files(run: Path) -> dict[str, str]:
    """Every file of the run directory and a digest of its bytes."""
    return {
        str(f.relative_to(run)): hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(run.rglob("*"))
        if f.is_file()
    }


@pytest.mark.parametrize(
    "line",
    [
        "trace import {d}/a.csv -o {copy}/results.db",
        "trace export {table} -f msr -o {copy}/manifest.json",
        "history 'ART RND 4KiB R/W 0/100' --runs-dir {runs} --html {copy}/manifest.json",
        "check {first} --baseline {second} --junit {copy}/live.json",
        "trace import {d}/a.csv -o {copy}/power.json",
        "run latency --quick --target {sim}&save={copy}/results.db --runs-dir {d}/R --no-report -q",
        "report {first} -o {copy}/report",  # a new file inside another run is refused too
        "export {first} -o {copy}/export",
        "compare {first} {second} -o {copy}",
        "run latency --quick --target {sim} --runs-dir {copy} --no-report -q",  # a run inside a run
    ],
)
def test_no_output_goes_into_another_runs_directory(two_runs, tmp_path, line):
    runs, first, table = two_runs
    second = next(r for r in runs.iterdir() if r != first)
    copy = tmp_path / "copy"
    shutil.copytree(first, copy)
    (tmp_path / "a.csv").write_text(MSR_LINES)
    before = _files(copy)
    p = iolab(
        *[
            a.format(d=tmp_path, copy=copy, runs=runs, first=first, second=second, table=table, sim=SMALL_SIM)
            for a in shlex.split(line)
        ],
        timeout=300,
    )
    said = " ".join(p.stderr.split())
    assert p.returncode == 3, p.stderr + p.stdout
    assert "Traceback" not in p.stderr and "\n\n" not in p.stderr.strip(), p.stderr
    # a save= path is refused by the target's safety checks, before anything is built or written
    nothing = "Nothing overrides this" if "save=" in line else "Nothing was written"
    assert f"the run directory {copy}," in said and nothing in said, said
    assert _files(copy) == before  # byte for byte, and nothing added
    assert not (tmp_path / "R").exists()  # the refused run left no run directory


def test_a_runs_own_commands_still_write_into_it(two_runs, tmp_path):
    # the run's claim is what lets its report, export and stored audit into its directory
    runs, first, _ = two_runs
    run = tmp_path / "run"
    shutil.copytree(first, run)
    stored = {f: (run / f).read_bytes() for f in ("results.db", "live.json", "power.json")}
    for line in ("export {run}", "report {run}", "audit {run} --store"):
        p = iolab(*[a.format(run=run) for a in shlex.split(line)], timeout=300)
        assert p.returncode == 0, line + "\n" + p.stderr
    assert (run / "export" / "cells.csv").is_file()
    assert (run / "report" / f"{first.name}.html").is_file()
    assert {f: (run / f).read_bytes() for f in stored} == stored


@pytest.mark.parametrize(
    "line",
    [
        "export {run} -o {run}/raw",
        "report {run} --out {run}/raw",
        "export {run} -o {run}/mine",
        "report {run} --out {run}",
    ],
)
def test_a_runs_own_outputs_go_only_in_their_own_folder_in_it(two_runs, tmp_path, line):
    # `export RUN -o RUN/raw` put cells.csv and a manifest.json among the engine's raw output
    runs, first, _ = two_runs
    run = tmp_path / "run"
    shutil.copytree(first, run)
    before = _files(run)
    p = iolab(*[a.format(run=run) for a in shlex.split(line)], timeout=300)
    said = " ".join(p.stderr.split())
    assert p.returncode == 3, p.stderr + p.stdout
    assert "Traceback" not in p.stderr and "\n\n" not in p.stderr.strip(), p.stderr
    own = run / ("report" if line.startswith("report") else "export")
    assert f"the run directory {run}," in said and f"only in its own folder {own}," in said, said
    assert "Nothing was written" in said and _files(run) == before
