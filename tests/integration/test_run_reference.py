"""A run named by what `iolab runs` prints: a renamed or copied run directory (an archived
baseline) keeps its manifest's run id, which `runs` lists; `show` said there was no such run
("... and for a run id there containing ...") and exited 2. Now the id names it, its directory's
name is printed beside the id, and two copies of one id are refused as ambiguous, naming both."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .conftest import iolab


@pytest.fixture(scope="module")
def a_run(tmp_path_factory) -> Path:
    """One finished quick run on a small simulated drive (a few seconds)."""
    runs = tmp_path_factory.mktemp("ref-runs")
    p = iolab("run", "iops", "--quick", "--no-report", "-t", "sim:enterprise-sas?user_gb=1", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr
    (run,) = runs.iterdir()
    return run


def test_a_renamed_run_is_named_by_the_id_runs_prints(a_run, tmp_path):
    ren = tmp_path / "ren"
    shutil.copytree(a_run, ren / "baseline-fw12")
    listed = iolab("runs", "--runs-dir", str(ren), timeout=120)
    assert listed.returncode == 0, listed.stderr
    # the id as the manifest holds it, and the directory that holds it (the name that always works)
    assert a_run.name in listed.stdout and "(directory baseline-fw12)" in listed.stdout, listed.stdout
    for ref in (a_run.name, "baseline-fw12", "fw12"):
        p = iolab("show", ref, "--json", "--runs-dir", str(ren), timeout=120)
        assert p.returncode == 0, (ref, p.stderr)
        assert json.loads(p.stdout)["runs"][0]["path"] == str(ren / "baseline-fw12"), ref


def test_two_copies_of_one_run_id_are_refused_naming_both(a_run, tmp_path):
    ren = tmp_path / "ren"
    shutil.copytree(a_run, ren / "baseline-fw12")
    shutil.copytree(a_run, ren / "baseline-fw13")
    for ref in (a_run.name, a_run.name[9:15]):  # the whole id, and a part of it (its time)
        p = iolab("show", ref, "--runs-dir", str(ren), timeout=120)
        said = " ".join(p.stderr.split())
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        assert f"run {ref!r} is ambiguous" in said and "baseline-fw12, baseline-fw13" in said, said
    # each directory's own name still names it alone
    p = iolab("show", "baseline-fw13", "--json", "--runs-dir", str(ren), timeout=120)
    assert p.returncode == 0 and json.loads(p.stdout)["runs"][0]["path"] == str(ren / "baseline-fw13"), p.stderr


def test_a_directory_name_comes_before_a_copy_that_holds_it_as_its_id(a_run, tmp_path):
    """The original's directory is named by its id; its copy holds that id too: the name is one
    directory's, as `runs` prints it on the original's row alone."""
    runs = tmp_path / "runs"
    shutil.copytree(a_run, runs / a_run.name)
    shutil.copytree(a_run, runs / "baseline-fw12")
    p = iolab("show", a_run.name, "--json", "--runs-dir", str(runs), timeout=120)
    assert p.returncode == 0 and json.loads(p.stdout)["runs"][0]["path"] == str(runs / a_run.name), p.stderr


def test_an_export_folder_and_a_link_to_a_run_in_the_runs_directory_are_not_more_runs(a_run, tmp_path):
    """`iolab export RUN -o RUNS/ex` and `ln -s RUN RUNS/link`: `show ID` said "ambiguous: 3 run
    directories … match it", and `runs` listed the export as a broken run and the link as a second
    run. A run is listed and matched once; an export folder is said to be one, never a run."""
    runs = tmp_path / "runs"
    shutil.copytree(a_run, runs / a_run.name)
    ex = iolab("export", a_run.name, "-o", str(runs / "ex"), "--runs-dir", str(runs), timeout=120)
    assert ex.returncode == 0 and (runs / "ex" / "cells.csv").is_file(), ex.stderr
    (runs / "link").symlink_to(runs / a_run.name)
    for ref in (a_run.name[:15], "iops"):  # its date and time, as `show 20261202-003008` named it
        shown = iolab("show", ref, "--json", "--runs-dir", str(runs), timeout=120)
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)["runs"][0]["path"] == str(runs / a_run.name)
    listed = iolab("runs", "--runs-dir", str(runs), "--json", timeout=120)
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)["listed"]
    assert [(r["path"], r["state"]) for r in rows] == [(str(runs / a_run.name), "complete")], rows
    said = iolab("show", "ex", "--runs-dir", str(runs), timeout=120)
    assert said.returncode == 2 and "an `iolab export` folder (a copy of a run's tables" in " ".join(
        said.stderr.split()
    )
    # a link to a run that lives elsewhere is that run, listed under the link's name
    other = tmp_path / "other"
    other.mkdir()
    (other / "kept").symlink_to(a_run)
    listed = iolab("runs", "--runs-dir", str(other), "--json", timeout=120)
    assert [r["path"] for r in json.loads(listed.stdout)["listed"]] == [str(other / "kept")], listed.stdout
