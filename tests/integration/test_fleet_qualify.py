"""A qualification engineer's fleet, run as the docs say (`iolab run TEST --quick --fleet FILE`,
`iolab fleet`, `iolab resume FLEET`): drives of several simulated presets and files, one spec
sheet, a verdict per drive backed by what that drive's own run measured, the facts that tell the
drives apart, and the re-run of the drives that failed."""

from __future__ import annotations

import json
import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from .conftest import IOLAB, iolab
from .test_fleet import fleet_dir

QUICK = ("--quick", "--cell-time", "100ms", "--max-rounds", "1", "--no-report")
SIM = "sim:enterprise-sas?user_gb=0.1"


def _cases(d: Path) -> dict[tuple[str, str], ET.Element]:
    suite = ET.parse(d / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    return {(c.get("classname") or "", c.get("name") or ""): c for c in suite.iter("testcase")}


def test_resume_of_a_fleet_gives_its_drives_the_override_it_was_given(tmp_path):
    """A drive refused for want of --allow-unsafe-target (a file iolab did not make), resumed with
    it: the option reached no drive, which was refused again telling the user to pass it."""
    foreign = tmp_path / "foreign.img"
    foreign.write_bytes(b"\x5a" * (16 << 20))  # someone's data, as far as iolab knows
    f = tmp_path / "fleet.toml"
    f.write_text(
        f'[fleet]\nname = "res"\n[[drive]]\ntarget = "{SIM}"\nname = "sim"\n'
        f'[[drive]]\ntarget = "file:{foreign}"\nname = "foreign"\n'
    )
    runs = tmp_path / "runs"
    r = iolab("run", "latency", *QUICK, "--purge", "none", "--fleet", str(f), "--runs-dir", str(runs))
    assert r.returncode == 3 and "Pass --allow-unsafe-target" in r.stdout, r.stdout + r.stderr
    d = fleet_dir(r.stdout)
    again = iolab("resume", str(d), "--allow-unsafe-target", "--runs-dir", str(runs), "--json")
    assert again.returncode == 0, again.stdout + again.stderr
    rows = {row["name"]: row for row in json.loads(again.stdout)["fleet_report"]["drives"]}
    assert rows["foreign"]["state"] == "complete", rows["foreign"]
    manifest = json.loads((Path(rows["foreign"]["run_dir"]) / "manifest.json").read_text())
    assert any("overridden by --allow-unsafe-target" in o for o in manifest["safety_overrides"]), manifest
    assert "--allow-unsafe-target" in json.loads((d / "fleet.json").read_text())["args"]


def _four_drives(tmp: Path) -> Path:
    """Three drives of one model and one of a lower class (entry-sata-compress: about half the
    4 KiB read IOPS and an eighth of the writes): four drives, one fewer than the outlier rule needs."""
    f = tmp / "fleet.toml"
    f.write_text(
        f'[fleet]\nname = "four"\n[[drive]]\ntarget = "{SIM}&seed={{i}}"\ncount = 3\nname = "ent{{i}}"\n'
        '[[drive]]\ntarget = "sim:entry-sata-compress?user_gb=0.1"\nname = "entry"\n'
    )
    return f


@pytest.fixture(scope="module")
def four_drives_run(tmp_path_factory) -> subprocess.CompletedProcess:
    """`iolab run iops --quick --fleet` of _four_drives, finished: the outlier test and the drive
    rows test read the same command's fleet (neither writes into it), so it is run once."""
    tmp = tmp_path_factory.mktemp("four")
    runs = tmp / "runs"
    r = iolab("run", "iops", *QUICK, "--fleet", str(_four_drives(tmp)), "--runs-dir", str(runs), timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def test_a_fleet_too_small_for_the_outlier_rule_does_not_pass_it(four_drives_run):
    """Four drives, one of them twice as slow: the rule judged no figure (it needs five drives), yet
    each drive's JUnit case `outlier rule` passed ("within the fleet on every figure") and the
    summary said "outlier drives: none"."""
    r = four_drives_run
    d = fleet_dir(r.stdout)
    doc = json.loads((d / "report.json").read_text())
    write = next(f for f in doc["figures"] if f["name"] == "RND 4KiB R/W 0/100 IOPS")
    assert write["values"]["entry"] < 0.5 * write["median"] and not write["judged"]
    assert doc["summary"]["outlier_rule_applied"] is False
    assert doc["summary"]["outliers_not_judged_why"].endswith("5 or more drives measured it; at most 4 did")
    assert {tuple(row["outlier_judged"]) for row in doc["drives"]} == {()}
    cases = _cases(d)
    for drive in ("ent1", "ent2", "ent3", "entry"):
        case = cases[(f"fleet.{drive}", "outlier rule")]
        skipped = case.find("skipped")
        assert skipped is not None and "5 or more drives" in (skipped.get("message") or ""), ET.tostring(case)
    said = " ".join(r.stdout.split())
    assert "outlier drives: none" not in said, said
    assert "outlier drives: not judged (a figure is judged when 5 or more drives measured it; at most 4 did)" in said


def test_a_drive_that_did_not_complete_is_an_error_and_judges_no_outlier(tmp_path):
    """A fleet whose one drive was refused (too small for the test): the summary said "1 FAILED
    (tiny)" where junit.xml called it an <error> (not judged), and "outlier drives: none" though
    no drive was measured."""
    tiny = tmp_path / "tiny.img"
    tiny.write_bytes(b"x" * 4096)  # refused before any IO
    f = tmp_path / "fleet.toml"
    f.write_text(f'[fleet]\nname = "err"\n[[drive]]\ntarget = "file:{tiny}"\nname = "tiny"\n')
    r = iolab("run", "iops", *QUICK, "--fleet", str(f), "--runs-dir", str(tmp_path / "runs"))
    assert r.returncode == 2, r.stdout + r.stderr  # the drive's own status
    d = fleet_dir(r.stdout)
    said = " ".join(r.stdout.split())
    assert "drives: 0 passed, 0 failed, 1 did not complete: error (tiny), 0 not judged;" in said, said
    assert "outlier drives: not judged (no drive's run completed)" in said and "FAIL" not in said, said
    s = json.loads((d / "report.json").read_text())["summary"]
    assert (s["failed_drives"], s["error_drives"]) == ([], ["tiny"]), s
    assert s["outlier_rule_applied"] is False and s["outliers_not_judged_why"] == "no drive's run completed", s
    suite = ET.parse(d / "junit.xml").getroot().find("testsuite")
    assert suite is not None and (suite.get("errors"), suite.get("failures")) == ("1", "0")


def test_each_drive_row_says_which_drive_it_was(four_drives_run):
    """A row named only by the fleet file's name: no model, serial, firmware or capacity in the
    report, its JSON or its JUnit, though each drive's own run had read them."""
    r = four_drives_run
    d = fleet_dir(r.stdout)
    doc = json.loads((d / "report.json").read_text())
    rows = {row["name"]: row for row in doc["drives"]}
    for name, row in rows.items():
        rec = json.loads((d / "drives" / name / "out.json").read_text())["runs"][0]["target"]
        assert {k: row[k] for k in ("model", "serial", "firmware", "capacity_bytes")} == {
            k: rec[k] for k in ("model", "serial", "firmware", "capacity_bytes")
        }
    assert rows["entry"]["model"].startswith("sim SSD entry-sata-compress") and rows["ent1"]["capacity_bytes"] > 0
    table = r.stdout.split("\ndrives", 1)[1]
    entry_line = next(ln for ln in table.splitlines() if "entry " in ln)
    assert "sim SSD entry-sata-compress" in entry_line and "sim-0.1.0" in entry_line and "100.00 MB" in entry_line
    run_case = _cases(d)[("fleet.entry", "run")]
    out = run_case.findtext("system-out") or ""
    assert "model sim SSD entry-sata-compress" in out and "firmware sim-0.1.0" in out and "capacity 100.00 MB" in out


SHEET = (
    '[sheet]\nmodel = "Example 400 GB SAS"\n'
    '[[criterion]]\nfigure = "RND 4KiB R/W 0/100 IOPS"\nmin = 20\nunit = "kIOPS"\nname = "4K random write"\n'
    '[[criterion]]\nfigure = "RND 4KiB R/W 100/0 IOPS"\nmin = 60\nunit = "kIOPS"\nname = "4K random read"\n'
)


def test_the_spec_sheets_bounds_stand_beside_the_figures(tmp_path):
    """A quick fleet against a sheet: each verdict said "not judged: quick run (... = 4.795 kIOPS)"
    without the bound it is held to, and the key figures gave no bound beside the distribution, so
    the drive that would miss the sheet (entry: 4.8 kIOPS against ≥ 20) read like the others."""
    (tmp_path / "sheet.toml").write_text(SHEET)
    f = _four_drives(tmp_path)
    f.write_text(f.read_text().replace('name = "four"\n', 'name = "four"\nspec_sheet = "sheet.toml"\n'))
    runs = tmp_path / "runs"
    r = iolab("run", "iops", *QUICK, "--fleet", str(f), "--runs-dir", str(runs), timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    d = fleet_dir(r.stdout)
    doc = json.loads((d / "report.json").read_text())
    entry = next(row for row in doc["drives"] if row["name"] == "entry")
    write = next(v for v in entry["verdicts"] if v["criterion"] == "4K random write")
    assert write["verdict"] == "not-judged" and write["why"].endswith("kIOPS; needs ≥ 20 kIOPS)"), write
    assert write["bounds"] == "≥ 20 kIOPS" and doc["spec_sheet"]["criteria"][1]["bounds"] == "≥ 60 kIOPS"
    skipped = _cases(d)[("fleet.entry", "criterion: 4K random write")].find("skipped")
    assert skipped is not None and "needs ≥ 20 kIOPS" in (skipped.get("message") or "")
    figures = r.stdout.split("key figures over the fleet", 1)[1].split("\ndrives", 1)[0]
    line = next(ln for ln in figures.splitlines() if "RND 4KiB R/W 0/100 IOPS" in ln)
    assert "4K random write ≥ 20 kIOPS" in line, figures
    assert "spec sheet" in figures.splitlines()[2], figures  # the column's head
    # nothing failed on a quick run, but nothing passed either: its figures are not the drive's
    ent = next(row for row in doc["drives"] if row["name"] == "ent1")
    assert ent["verdict"] == "not-judged" and ent["verdict_why"][0].startswith("non-compliant run (quick profile")
    assert "steady state not evaluated" in ent["verdict_why"] and doc["summary"]["passed_drives"] == []


def test_each_drive_has_its_own_verdict_and_the_failed_criteria_are_named(tmp_path):
    """Full (not quick) latency runs reach steady state, so the sheet judges them: the slower drive
    fails its write latency. There was no verdict per drive (one line per check, and a JUnit case
    each), and the summary said "failing criteria: 2" for one criterion failed on two drives."""
    (tmp_path / "sheet.toml").write_text(
        '[[criterion]]\nfigure = "ART RND 4KiB R/W 0/100"\nmax = 150\nunit = "us"\nname = "write latency"\n'
        '[[criterion]]\nfigure = "DWPD"\nmin = 3\n'  # the latency test does not measure endurance
    )
    f = tmp_path / "fleet.toml"
    f.write_text(
        f'[fleet]\nname = "v"\nspec_sheet = "sheet.toml"\n[[drive]]\ntarget = "{SIM}"\nname = "ent"\n'
        '[[drive]]\ntarget = "sim:entry-sata-compress?user_gb=0.1&seed={i}"\ncount = 2\nname = "entry{i}"\n'
    )
    runs = tmp_path / "runs"
    r = iolab("run", "latency", "--no-report", "--fleet", str(f), "--runs-dir", str(runs), timeout=600)
    assert r.returncode == 7, r.stdout + r.stderr
    doc = json.loads((fleet_dir(r.stdout) / "report.json").read_text())
    rows = {row["name"]: row for row in doc["drives"]}
    assert {row["steady_state"] for row in rows.values()} == {"reached"}
    assert rows["entry1"]["verdict"] == "failed" and rows["entry2"]["verdict"] == "failed"
    assert any(w.startswith("fails write latency ") and "(needs ≤ 150 us)" in w for w in rows["entry1"]["verdict_why"])
    # the fast drive passed what was judged, but DWPD was never measured and three drives are too
    # few for the outlier rule: not a pass
    assert rows["ent"]["verdict"] == "not-judged", rows["ent"]
    assert rows["ent"]["verdict_why"] == ["DWPD: not measured", "outlier rule: no figure judged"]
    s = doc["summary"]
    assert (s["passed_drives"], s["failed_drives"], s["not_judged_drives"]) == ([], ["entry1", "entry2"], ["ent"])
    assert s["failed_criteria"] == {"write latency": ["entry1", "entry2"]} and s["failing_criteria"] == 2
    said = " ".join(r.stdout.split())
    assert "drives: 0 passed, 2 FAILED (entry1, entry2), 1 not judged (ent)" in said, said
    assert "criteria failed: write latency (2 drives)" in said and "failing criteria: 2" not in said
    entry_line = next(ln for ln in r.stdout.split("\ndrives", 1)[1].splitlines() if "entry1 " in ln)
    assert " FAIL " in entry_line and "FAIL: write latency " in entry_line and "(needs ≤ 150 us)" in entry_line
    # a sheet of what the runs measured: three drives are too few for the outlier rule, but the
    # fast drive met every criterion and passes on the spec sheet alone, saying so (it was "not
    # judged", so a fleet of fewer than five drives could never qualify a drive); the sheet judged
    # all three, so the slow ones still fail
    (tmp_path / "measured.toml").write_text(
        '[[criterion]]\nfigure = "ART RND 4KiB R/W 0/100"\nmax = 150\nunit = "us"\nname = "write latency"\n'
    )
    f = iolab("fleet", str(fleet_dir(r.stdout)), "--spec-sheet", str(tmp_path / "measured.toml"), "--json")
    assert f.returncode == 7, f.stderr  # the slow drives fail it
    again = {row["name"]: row for row in json.loads(f.stdout)["drives"]}
    assert again["ent"]["verdict"] == "passed", again["ent"]
    assert again["ent"]["verdict_why"] == ["outlier rule: no figure judged (passed on the spec sheet alone)"]
    assert again["entry1"]["verdict"] == again["entry2"]["verdict"] == "failed"


def _iolab_in(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS="200")
    return subprocess.run([*IOLAB, *args], capture_output=True, text=True, timeout=600, cwd=cwd, env=env)


def test_a_fleet_resumed_from_another_directory_runs_its_own_file_drive(tmp_path):
    """A fleet file naming its file drive by a relative path, resumed from another directory: the
    refused drive was run on a new file of that name there, and reported complete as the fleet's."""
    here, elsewhere, runs = tmp_path / "lab", tmp_path / "elsewhere", tmp_path / "runs"
    here.mkdir()
    elsewhere.mkdir()
    (here / "d.img").write_bytes(b"\x5a" * (16 << 20))  # not iolab's: refused until overridden
    (here / "fleet.toml").write_text(
        f'[fleet]\nname = "rel"\n[[drive]]\ntarget = "{SIM}"\nname = "sim"\n'
        '[[drive]]\ntarget = "file:d.img?size=16MiB"\nname = "d"\n'
    )
    args = ("run", "latency", *QUICK, "--purge", "none", "--fleet", "fleet.toml", "--runs-dir", str(runs))
    r = _iolab_in(here, *args)
    assert r.returncode == 3, r.stdout + r.stderr
    d = fleet_dir(r.stdout)
    again = _iolab_in(elsewhere, "resume", str(d), "--allow-unsafe-target", "--runs-dir", str(runs), "--json")
    assert again.returncode == 0, again.stdout + again.stderr
    row = next(x for x in json.loads(again.stdout)["fleet_report"]["drives"] if x["name"] == "d")
    assert row["target"] == f"file:{here / 'd.img'}?size=16MiB", row["target"]
    run_target = json.loads((Path(row["run_dir"]) / "manifest.json").read_text())["target"]["path"]
    assert run_target == str(here / "d.img") and not (elsewhere / "d.img").exists(), run_target


def test_junit_class_names_hold_no_dots_of_a_drive_or_group_name(tmp_path):
    """A CI system reads a JUnit class name's dots as packages: a file drive's default name
    (`d.img`), a drive named `ent.1` and firmware `1.0.2` made `fleet.ent.1` class `1` of
    package `fleet.ent`, and `fleet.group.1.1.0` class `0`."""
    f = tmp_path / "fleet.toml"
    f.write_text(
        '[fleet]\nname = "dots"\ngroup_by = "firmware"\n'
        f'[[drive]]\ntarget = "{SIM}&seed={{i}}"\ncount = 2\nname = "ent.{{i}}"\nlabels = {{ firmware = "1.0.2" }}\n'
        f'[[drive]]\ntarget = "{SIM}&seed=1{{i}}"\ncount = 2\nname = "ent_{{i}}"\nlabels = {{ firmware = "1.1.0" }}\n'
        f'[[drive]]\ntarget = "file:{tmp_path}/d.img?size=16MiB"\nlabels = {{ firmware = "1.1.0" }}\n'
    )
    runs = tmp_path / "runs"
    r = iolab("run", "latency", *QUICK, "--purge", "none", "--fleet", str(f), "--runs-dir", str(runs), timeout=600)
    assert r.returncode in (0, 7), r.stdout + r.stderr
    d = fleet_dir(r.stdout)
    doc = json.loads((d / "report.json").read_text())
    names = [row["name"] for row in doc["drives"]]
    # five quick runs, no sheet, no outlier: nothing failed, and nothing qualified (it said "5 passed")
    assert doc["summary"]["passed_drives"] == [] and "0 passed" in r.stdout, doc["summary"]
    assert "ent.1" in names and "d.img" in names, names  # a file's default name: its own, short
    classes = {c for c, _ in _cases(d)}
    drives = {c for c in classes if not c.startswith("fleet.group.")}
    assert all(c.count(".") == 1 for c in drives), sorted(classes)
    assert {"fleet.ent_1", "fleet.ent_1_2", "fleet.ent_2", "fleet.ent_2_2"} <= drives, sorted(drives)
    assert {c for c in classes if c.startswith("fleet.group.")} == {"fleet.group.1_1_0"}, sorted(classes)
    out = {c: e.findtext("system-out") for (c, n), e in _cases(d).items() if n == "run"}
    assert out["fleet.ent_1"].startswith("ent.1 (") and out["fleet.ent_1_2"].startswith("ent_1 (")


def test_a_fleet_resumed_with_a_relative_runs_dir_is_read_from_any_directory(tmp_path):
    """`iolab resume FLEET --runs-dir runs`: the refused drive, started again, was recorded by the
    relative path its run printed, and `iolab fleet` from another directory called it unreadable
    (exit 2), as `run --fleet` did before its own fix."""
    lab, elsewhere = tmp_path / "lab", tmp_path / "elsewhere"
    lab.mkdir()
    elsewhere.mkdir()
    (lab / "d.img").write_bytes(b"\x5a" * (16 << 20))
    (lab / "fleet.toml").write_text(
        f'[fleet]\nname = "relres"\n[[drive]]\ntarget = "{SIM}"\nname = "sim"\n'
        f'[[drive]]\ntarget = "file:{lab / "d.img"}"\nname = "d"\n'
    )
    r = _iolab_in(lab, "run", "latency", *QUICK, "--purge", "none", "--fleet", "fleet.toml", "--runs-dir", "runs")
    assert r.returncode == 3, r.stdout + r.stderr
    d = lab / fleet_dir(r.stdout)
    again = _iolab_in(lab, "resume", str(d), "--allow-unsafe-target", "--runs-dir", "runs")
    assert again.returncode == 0, again.stdout + again.stderr
    rows = json.loads((d / "fleet.json").read_text())["members"]
    assert all(Path(m["run_dir"]).is_absolute() for m in rows), rows
    later = _iolab_in(elsewhere, "fleet", str(d))
    assert later.returncode == 0 and "unreadable" not in later.stdout, later.stdout + later.stderr


def test_resume_again_measures_a_named_complete_drive_anew_and_no_other(tmp_path):
    """A qualification engineer fixed the cable of a drive whose complete run strayed: `iolab resume
    FLEET --again NAME` measures that drive with a new run, judged with its fleet; the others keep
    their runs, and a name the fleet does not hold is refused before anything runs."""
    f = tmp_path / "fleet.toml"
    f.write_text(f'[fleet]\nname = "again"\n[[drive]]\ntarget = "{SIM}&seed={{i}}"\ncount = 2\nname = "s{{i}}"\n')
    runs = tmp_path / "runs"
    r = iolab("run", "latency", *QUICK, "--fleet", str(f), "--runs-dir", str(runs))
    assert r.returncode == 0, r.stdout + r.stderr
    d = fleet_dir(r.stdout)
    before = {m["name"]: m for m in json.loads((d / "fleet.json").read_text())["members"]}
    assert {m["state"] for m in before.values()} == {"complete"}
    bad = iolab("resume", str(d), "--runs-dir", str(runs), "--again", "s9")
    said = " ".join(bad.stderr.split())
    assert bad.returncode == 2 and "--again s9: no drive of that name; its drives are s1, s2" in said, said
    assert {m["name"]: m for m in json.loads((d / "fleet.json").read_text())["members"]} == before
    again = iolab("resume", str(d), "--runs-dir", str(runs), "--again", "s2", "--json")
    assert again.returncode == 0, again.stdout + again.stderr
    rows = {row["name"]: row for row in json.loads(again.stdout)["fleet_report"]["drives"]}
    assert rows["s1"]["run_dir"] == before["s1"]["run_dir"]  # not named: kept
    assert rows["s2"]["state"] == "complete" and rows["s2"]["run_dir"] != before["s2"]["run_dir"]
    assert Path(before["s2"]["run_dir"]).is_dir()  # the earlier run stays, and its drive's document with it
    kept = json.loads((d / "drives" / "s2" / "out.attempt1.json").read_text())
    assert kept["runs"][0]["path"] == before["s2"]["run_dir"]
    # --again names a fleet's drive: with a run it is refused, not ignored
    run = iolab("resume", before["s1"]["run_dir"], "--runs-dir", str(runs), "--again", "s1")
    assert run.returncode == 2 and "is a run, not a fleet" in " ".join(run.stderr.split()), run.stderr


def test_file_drives_get_short_default_names_longer_only_where_they_meet(tmp_path):
    """A file drive the fleet file does not name was named by its whole path and query
    (`tmp_pytest-of-root_..._x_d.img_size_16MiB`, cut to its last 64 characters): now by its file
    name, with the directories above it only where two drives' names would meet; a name the file
    gives is kept, and a default name that meets it is the one made longer."""
    for sub in ("x", "y"):
        (tmp_path / sub).mkdir()
    f = tmp_path / "fleet.toml"
    f.write_text(
        "".join(f'[[drive]]\ntarget = "file:{tmp_path}/{p}?size=16MiB"\n' for p in ("x/d.img", "y/d.img", "e.img"))
        + f'[[drive]]\ntarget = "file:{tmp_path}/x/f.img?size=16MiB"\n'
        + f'[[drive]]\ntarget = "file:{tmp_path}/g.img?size=16MiB"\nname = "f.img"\n'
    )
    runs = tmp_path / "runs"
    r = iolab("run", "latency", *QUICK, "--purge", "none", "--fleet", str(f), "--runs-dir", str(runs), timeout=600)
    assert r.returncode in (0, 7), r.stdout + r.stderr
    d = fleet_dir(r.stdout)
    names = [m["name"] for m in json.loads((d / "fleet.json").read_text())["members"]]
    assert names == ["x_d.img", "y_d.img", "e.img", "x_f.img", "f.img"], names
    assert sorted(p.name for p in (d / "drives").iterdir()) == sorted(names)
