"""A fleet directory as users handle it: copied without its files' iolab marks (`cp -r`, rsync
without -X, a filesystem without xattrs) it is still the fleet's, and reports again, while a file
of the same name where no fleet is stays someone's; its fleet.json edited so that a row names
another row's run, another test's run or another drive's, it is refused (exit 2, one paragraph
naming the row and the field) rather than counted."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import iolab

pytestmark = pytest.mark.integration

QUICK = ("--quick", "--cell-time", "100ms", "--max-rounds", "2", "--no-report")
SIM = "sim:enterprise-sas?user_gb=0.1"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> tuple[Path, Path]:
    """A latency fleet of two simulated drives, with its report pages; and an iops run of
    another drive, in the same runs directory."""
    root = tmp_path_factory.mktemp("fleet-copies")
    f = root / "fleet.toml"
    f.write_text(f'[fleet]\nname = "c"\n[[drive]]\ntarget = "{SIM}&seed={{i}}"\ncount = 2\nname = "sim{{i}}"\n')
    runs = root / "runs"
    r = iolab("run", "latency", *QUICK, "--fleet", str(f), "--runs-dir", str(runs))
    assert r.returncode == 0, r.stdout + r.stderr
    (d,) = (runs / "fleets").iterdir()
    pages = iolab("report", str(d))
    assert pages.returncode == 0 and any((d / "report").glob("*.pdf")), pages.stderr
    other = root / "other"
    r = iolab("run", "iops", "-t", f"{SIM}&seed=9", *QUICK, "--runs-dir", str(other))
    assert r.returncode == 0, r.stderr
    (run,) = other.iterdir()
    return d, run


def _said(p: subprocess.CompletedProcess) -> str:
    return " ".join(p.stderr.split())


def test_a_fleet_directory_copied_without_its_marks_reports_again(fleet, tmp_path):
    """`cp -r` of a fleet directory was refused, exit 3: its report.json 'holds 5.93 KB that
    iolab did not write'; `cp -a` (the marks kept) and a run directory copied either way were not."""
    d, _ = fleet
    copy = tmp_path / "copy"
    shutil.copytree(d, copy, copy_function=shutil.copyfile)  # as `cp -r`: the bytes, without the files' marks
    # `iolab fleet` rewrites report.json and junit.xml, `iolab report` the pages in report/
    for line in (["fleet", str(copy)], ["report", str(copy)], ["fleet", str(copy)]):  # again: now marked
        p = iolab(*line)
        assert p.returncode == 0, (line, p.stdout + p.stderr)
    assert json.loads((copy / "report.json").read_text())["fleet"]["dir"] == str(copy)  # rewritten, for the copy
    assert json.loads((d / "report.json").read_text())["fleet"]["dir"] == str(d)  # the original untouched


@pytest.mark.parametrize("state", [None, {"schema": "someone-else", "members": []}, "{not json"])
def test_a_file_of_a_fleets_name_where_no_iolab_fleet_is_stays_someones(fleet, tmp_path, state):
    """The fleet's files are recognised by the fleet.json beside them being iolab's fleet state,
    never by their names: beside no fleet.json, or one of something else, they are refused."""
    d, _ = fleet
    out = tmp_path / "out"
    out.mkdir()
    if state is not None:
        (out / "fleet.json").write_text(state if isinstance(state, str) else json.dumps(state))
    theirs = {out / f"{d.name}{suffix}": f"someone's {suffix} notes\n" for suffix in (".html", ".pdf")}
    for path, text in theirs.items():
        path.write_text(text)
    p = iolab("report", str(d), "--out", str(out))
    assert p.returncode == 3 and "iolab did not write" in _said(p), p.stdout + p.stderr
    assert all(path.read_text() == text for path, text in theirs.items())


def _row_names_another_rows_run(doc: dict, _: Path, tmp: Path) -> None:
    doc["members"][0]["run_dir"] = doc["members"][1]["run_dir"]


def _row_names_a_copy_of_another_rows_run(doc: dict, _: Path, tmp: Path) -> None:
    copy = tmp / "copied-run"  # another path, the same run (its manifest's uid)
    shutil.copytree(doc["members"][1]["run_dir"], copy)
    doc["members"][0]["run_dir"] = str(copy)


def _row_names_another_tests_run(doc: dict, other: Path, tmp: Path) -> None:
    doc["members"][0]["run_dir"] = str(other)


def _row_names_another_drive(doc: dict, _: Path, tmp: Path) -> None:
    doc["members"][0]["target"] = doc["members"][0]["target"].replace("seed=1", "seed=7")


Edit = Callable[[dict, Path, Path], None]


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (_row_names_another_rows_run, "members[0] ('sim1') and members[1] ('sim2'): field 'run_dir' of both names run"),
        (_row_names_a_copy_of_another_rows_run, "members[0] ('sim1') and members[1] ('sim2'): field 'run_dir' of both"),
        (_row_names_another_tests_run, "members[0] ('sim1'): field 'run_dir' names run"),
        (_row_names_another_drive, "members[0] ('sim1'): field 'target' is"),
    ],
)
def test_a_fleet_json_row_that_is_not_its_own_drives_run_is_refused(fleet, tmp_path, edit: Edit, says):
    """Each was reported, exit 0: one run as two drives with identical figures (n=3 of two runs),
    or another test's figures in the fleet (5 IOPS figures with n=1), with at most a warning that
    the fleet mixes models."""
    d, other = fleet
    copy = tmp_path / "edited"
    shutil.copytree(d, copy)  # marks kept (cp -a): the edit alone is what is refused
    doc = json.loads((copy / "fleet.json").read_text())
    edit(doc, other, tmp_path)
    (copy / "fleet.json").write_text(json.dumps(doc))
    stored = (copy / "report.json").read_bytes()
    for line in (["fleet", str(copy)], ["show", str(copy), "--json"], ["report", str(copy)]):
        p = iolab(*line)
        said = _said(p)
        assert p.returncode == 2 and says in said and "Nothing was reported" in said, (line, said)
        assert "Traceback" not in said
    assert (copy / "report.json").read_bytes() == stored
    if edit is _row_names_another_tests_run:
        assert "a run of test 'iops'; the fleet ran 'latency'" in said
    if edit is _row_names_a_copy_of_another_rows_run:
        assert "uid " in said and "a copy of a run's directory is the same run" in said


@pytest.mark.parametrize(
    ("path", "value", "says"),
    [
        (("members", 0, "labels"), float("nan"), "members[0]: field 'labels' is NaN, not an object of strings"),
        (("members", 1, "labels"), ["firmware"], "members[1]: field 'labels' is [\"firmware\"], not an object"),
        (("members", 0, "where"), True, "members[0]: field 'where' is true, not a string"),
        (("members", 1, "run_dir"), True, "members[1]: field 'run_dir' is true, not a string or null"),
        (("members", 0, "state"), [], "members[0]: field 'state' is [], not a string"),
        (("members", 0, "state"), "done", "members[0]: field 'state' is \"done\", not one of pending, running"),
        (("outlier_k",), "/proc/self/status", "field 'outlier_k' is \"/proc/self/status\", not a finite number"),
        (("outlier_min_pct",), float("inf"), "field 'outlier_min_pct' is Infinity, not a finite number"),
        (("spec_sheet",), True, "field 'spec_sheet' is true, not a string or null"),
        (("members",), {"sim1": {}}, "field 'members' is {\"sim1\": {}}, not a list of objects"),
        # no drive at all: was a report of 0 drives, a JUnit file of 0 tests and exit 0, a pass for CI
        (("members",), [], "field 'members' is empty, and a fleet holds every drive of its fleet file"),
    ],
)
def test_a_fleet_json_field_of_the_wrong_type_is_refused(fleet, tmp_path, path, value, says):
    """A hand-edited or damaged fleet.json field of another type than the fleet writes ended
    `iolab fleet` and `iolab show FLEET` with a traceback (exit 1): 'float' object has no
    attribute 'items' for labels NaN, a str compared with a float for outlier_k."""
    d, _ = fleet
    copy = tmp_path / "edited"
    shutil.copytree(d, copy)
    doc = json.loads((copy / "fleet.json").read_text())
    where = doc
    for key in path[:-1]:
        where = where[key]
    where[path[-1]] = value
    (copy / "fleet.json").write_text(json.dumps(doc))
    stored = (copy / "report.json").read_bytes()
    for line in (["fleet", str(copy)], ["show", str(copy)], ["fleet", str(copy), "--json"]):
        p = iolab(*line)
        said = _said(p)
        assert p.returncode == 2 and "Traceback" not in p.stdout + p.stderr, (line, p.stdout + p.stderr)
        assert f"{copy / 'fleet.json'}: cannot read the fleet state ({says}" in said, (line, said)
        assert "\n\n" not in p.stderr.strip(), p.stderr
    assert (copy / "report.json").read_bytes() == stored


def test_runs_names_a_fleet_it_cannot_read_with_the_reason(fleet, tmp_path):
    """`iolab runs` lists a broken run with its reason, and named the readable fleets only: a
    fleet whose fleet.json was damaged vanished from its output without a word."""
    d, _ = fleet
    copy = tmp_path / "runs" / "fleets" / d.name
    shutil.copytree(d, copy)
    doc = json.loads((copy / "fleet.json").read_text())
    (copy / "fleet.json").write_text(json.dumps({**doc, "members": []}))
    p = iolab("runs", "--runs-dir", str(tmp_path / "runs"))
    assert p.returncode == 0, p.stdout + p.stderr
    said = " ".join(p.stdout.split())
    assert f"fleet not listed: {copy / 'fleet.json'}: cannot read the fleet state (field 'members' is empty" in said


def test_a_drives_out_json_edited_after_it_ended_is_not_the_drives_figures(fleet, tmp_path):
    """The fleet report took each drive's run record from its out.json whenever the run's id,
    state and end still matched its manifest: a figure edited there was reported as the drive's
    (an outlier at 1e300), and one made text was dropped (n = 1 of 2), exit 0. Now the record is
    taken from out.json only while it is the bytes the coordinator read as the drive ended;
    otherwise it is rebuilt from the run's own results.db."""
    d, _ = fleet
    copy = tmp_path / "edited"
    shutil.copytree(d, copy)
    out = copy / "drives" / "sim1" / "out.json"
    doc = json.loads(out.read_text())
    run = doc["runs"][0]
    first, second = run["figures"][0], run["figures"][1]
    measured = {f["name"]: f["value"] for f in (first, second)}
    first["value"], second["value"] = 1e300, "not measured"
    out.write_text(json.dumps(doc))
    p = iolab("fleet", str(copy), "--json")
    assert p.returncode == 0, p.stdout + p.stderr
    report = json.loads(p.stdout)
    (row,) = [r for r in report["drives"] if r["name"] == "sim1"]
    assert {k: row["figures"][k] for k in measured} == measured, (row["figures"], measured)
    shown = json.loads(iolab("show", run["path"], "--json").stdout)["runs"][0]["figures"]
    assert {f["name"]: f["value"] for f in shown if f["name"] in measured} == measured
    assert all(f["n"] == 2 for f in report["figures"] if f["name"] in measured), report["figures"]
