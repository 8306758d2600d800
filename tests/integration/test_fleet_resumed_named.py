"""A fleet interrupted and resumed, then found by its name, as users run it: the resumed drive's
report opens with the fleet's spec sheet as a drive's first run's does (`iolab resume RUN` took no
--spec-sheet, so its report had no front page); `iolab fleet NAME` takes the fleet's name or a part
of its directory's name as `iolab show` takes a run's (it needed the directory's whole name), an
ambiguous one refused with the fleets it matches; `iolab fleet X --json` that fails prints its
error's JSON document (it printed nothing on stdout); one drive is "1 drive" ("on 1 drives")."""

from __future__ import annotations

import json
import shutil
import signal

import pytest

from .conftest import iolab, killed_at

pytestmark = pytest.mark.integration

SIM = "sim:enterprise-sas?user_gb=0.1"
SHEET = '[[criterion]]\nfigure = "ART RND 4KiB R/W 100/0"\nmax = 500\nunit = "us"\nname = "read latency"\n'


@pytest.fixture(scope="module")
def resumed(tmp_path_factory):
    """A one-drive fleet with a spec sheet, stopped (SIGTERM to its coordinator) once its drive
    stored a cell, then resumed: (runs directory, fleet directory, resume's stdout)."""
    tmp = tmp_path_factory.mktemp("fleet-resumed")
    (tmp / "sheet.toml").write_text(SHEET)
    fleet = tmp / "fleet.toml"
    fleet.write_text(f'[fleet]\nname = "acc"\nspec_sheet = "sheet.toml"\n[[drive]]\ntarget = "{SIM}"\nname = "a"\n')
    runs = tmp / "runs"
    args = ["run", "latency", "--quick", "--cell-time", "1s", "--max-rounds", "5", "--fleet", str(fleet)]
    killed_at([*args, "--runs-dir", str(runs)], runs, "2*/raw/*.json", signal.SIGTERM)
    (d,) = (runs / "fleets").iterdir()
    (row,) = json.loads((d / "fleet.json").read_text())["members"]
    assert row["state"] == "interrupted" and row["run_dir"], row  # a stored run: resume goes on with it
    r = iolab("resume", str(d), "--runs-dir", str(runs), timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return runs, d, r.stdout


def test_a_resumed_drives_report_opens_with_the_fleets_spec_sheet(resumed):
    runs, d, out = resumed
    (row,) = json.loads((d / "fleet.json").read_text())["members"]
    assert row["state"] == "complete", row
    (html,) = (runs / row["run_dir"] / "report").glob("*.html")
    text = " ".join(html.read_text().split())
    assert "read latency: not judged: quick run" in text, text[:3000]  # the sheet's front page
    # one drive, said as one ("fleet acc: latency on 1 drives, 1 complete")
    assert "fleet acc: latency on 1 drive, 1 complete" in " ".join(out.split()), out


def test_resume_of_a_fleet_with_another_spec_sheet_is_refused(resumed):
    runs, d, _ = resumed
    p = iolab("resume", str(d), "--runs-dir", str(runs), "--spec-sheet", str(d / "spec-sheet.toml"))
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and "keeps the spec sheet it ran with" in said and "Traceback" not in said, said


def test_fleet_takes_the_fleets_name_or_a_part_of_its_directory_and_refuses_an_ambiguous_one(resumed):
    runs, d, _ = resumed
    for ref in ("acc", "latency-acc", d.name[:15]):  # its name, a part of its directory's, its start
        p = iolab("fleet", ref, "--runs-dir", str(runs), "--json")
        assert p.returncode == 0, (ref, p.stderr)
        assert json.loads(p.stdout)["fleet"]["dir"] == str(d)
    shutil.copytree(d, d.with_name(d.name + "-copy"))  # a second fleet of that name (an archived copy)
    try:
        p = iolab("fleet", "acc", "--runs-dir", str(runs))
        said = " ".join(p.stderr.split())
        assert p.returncode == 2 and "fleet 'acc' is ambiguous: 2 fleet directories" in said, said
        assert f"{d.name}, {d.name}-copy" in said and "Traceback" not in said, said
        listed = iolab("fleet", "--runs-dir", str(runs))
        assert f"{d.name}-copy  latency  1/1 drives complete" in listed.stdout, listed.stdout
        # --json that fails: its error's document on stdout, and the exit code it had
        for args in (("acc",), ("no-such-fleet",), ("acc", "--outlier-k", "0")):
            p = iolab("fleet", *args, "--runs-dir", str(runs), "--json")
            doc = json.loads(p.stdout)
            assert p.returncode == 2 and doc["command"] == "fleet" and doc["exit_code"] == 2, p.stdout
            assert " ".join(doc["error"].split()[:4]) in " ".join(p.stderr.split()), (doc, p.stderr)
    finally:
        shutil.rmtree(d.with_name(d.name + "-copy"))


def test_show_report_and_resume_take_a_fleet_by_its_name_as_fleet_does(resumed, tmp_path):
    """`iolab show acc` (and report, resume) said there was no run 'acc': they took a fleet by its
    path or its directory's whole name only. A part that the fleet and its drive's run both
    contain is refused, naming both."""
    runs, d, _ = resumed
    for ref in ("acc", "latency-acc"):  # the fleet's name, a part of its directory's
        p = iolab("show", ref, "--runs-dir", str(runs), "--json")
        assert p.returncode == 0, (ref, p.stderr)
        assert json.loads(p.stdout)["fleet_report"]["fleet"]["dir"] == str(d), p.stdout[:500]
    p = iolab("report", "acc", "--runs-dir", str(runs), "--out", str(tmp_path))
    assert p.returncode == 0 and f"fleet report: {tmp_path / d.name}.html" in p.stdout, p.stdout + p.stderr
    p = iolab("resume", "acc", "--runs-dir", str(runs), "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["fleet_report"]["fleet"]["dir"] == str(d), p.stderr
    (row,) = json.loads((d / "fleet.json").read_text())["members"]
    run_dir = runs / row["run_dir"]
    for command in ("show", "resume"):
        p = iolab(command, "latency", "--runs-dir", str(runs), "--json")  # in the run's id and the fleet's
        said = " ".join(p.stderr.split())
        assert p.returncode == 2 and "run or fleet 'latency' is ambiguous" in said, said
        assert run_dir.name in said and d.name in said and json.loads(p.stdout)["exit_code"] == 2, said


def test_a_bound_given_without_a_unit_is_printed_in_its_figures(resumed, tmp_path):
    # "rl ≤ 500" beside the figure's "(µs)": the bound is in the figure's own unit, and says so
    runs, d, _ = resumed
    sheet = tmp_path / "sheet.toml"
    sheet.write_text(SHEET.replace('unit = "us"\n', "").replace('"read latency"', '"rl"'))
    p = iolab("fleet", "acc", "--runs-dir", str(runs), "--spec-sheet", str(sheet), "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert [c["bounds"] for c in doc["spec_sheet"]["criteria"]] == ["≤ 500 µs"], doc["spec_sheet"]
    ((verdict,),) = [r["verdicts"] for r in doc["drives"]]
    assert verdict["bounds"] == "≤ 500 µs" and verdict["why"].endswith("µs; needs ≤ 500 µs)"), verdict
    p = iolab("fleet", "acc", "--runs-dir", str(runs), "--spec-sheet", str(sheet))
    assert "rl ≤ 500 µs" in p.stdout, p.stdout
