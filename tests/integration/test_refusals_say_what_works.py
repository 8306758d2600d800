"""Refusals that say what to do next, as a user meets them: a fleet named by its name to a command
that takes runs (compare, export, audit took the name for a run that is not there, though by its
path it was "a fleet, not a run"); a plan refused for a spec sheet's unit ("start again", though a
plan starts nothing); a directory given as a target (told "write file:DIR", which is refused
as no regular file)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.conftest import iolab

ONE_ROUND = ("--quick", "--cell-time", "100ms", "--max-rounds", "1", "--no-report")


def said(p) -> str:
    return " ".join((p.stdout + p.stderr).split())


def test_a_fleet_by_its_name_is_a_fleet_not_a_run_to_compare_export_and_audit(tmp_path):
    f = tmp_path / "fleet.toml"
    f.write_text('[fleet]\nname = "demo"\n[[drive]]\ntarget = "sim:enterprise-sas?user_gb=0.1&seed=1"\nname = "d1"\n')
    runs = tmp_path / "runs"
    r = iolab("run", "iops", *ONE_ROUND, "--fleet", str(f), "--runs-dir", str(runs), "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    [run] = json.loads(r.stdout)["runs"]
    for args in (("compare", "demo", run["path"]), ("export", "demo"), ("audit", "demo"), ("audit", "demo", "--json")):
        p = iolab(*args, "--runs-dir", str(runs))
        assert p.returncode == 2 and "'demo' is a fleet, not a run: `iolab fleet " in said(p), (args, said(p))
        assert "no such run" not in said(p), said(p)
    # its drive's run is still taken by these commands
    assert iolab("audit", Path(run["path"]).name, "--runs-dir", str(runs)).returncode == 0


def test_a_plan_refused_for_its_spec_sheet_says_to_plan_again(tmp_path):
    sheet = tmp_path / "s.toml"
    sheet.write_text(
        '[sheet]\nmodel = "X"\n[[criterion]]\nname = "w"\nfigure = "RND 4KiB R/W 0/100 IOPS"\nmin = 10\nunit = "MB/s"\n'
    )
    p = iolab("plan", "iops", "--quick", "--spec-sheet", str(sheet))
    assert p.returncode == 2 and "does not apply to it" in said(p), said(p)
    assert f"fix the sheet and plan again (`iolab plan iops ... --spec-sheet {sheet}`)" in said(p), said(p)
    assert "start again" not in said(p), said(p)


def test_a_directory_as_the_target_is_told_a_file_in_it_which_works(tmp_path):
    inside = f"file:{tmp_path / 'iolab-test.img'}?size=8GiB"
    for target in (str(tmp_path), f"file:{tmp_path}"):
        p = iolab("info", target)
        assert p.returncode == 2 and f"rite {inside} (a file iolab creates in it)" in said(p), said(p)
        assert f"write file:{tmp_path}." not in said(p), said(p)
    p = iolab("info", inside)  # what it says to write is taken
    assert p.returncode == 0 and "absent: a run creates it" in said(p), said(p)
    assert list(tmp_path.iterdir()) == []  # info created nothing
