"""A run directory changed by hand after iolab wrote it, through the installed `iolab` command: a
manifest string that would name a path outside its directory (run_id '../../etc', an absolute
one), a results.db without a table or column the readers use, a fleet.json whose drive name
climbs out of the fleet. Each is refused with one paragraph and exit 2, `iolab runs` lists the run
broken with the reason, and nothing is written anywhere."""

from __future__ import annotations

import json
import shlex
import shutil
import sqlite3
from pathlib import Path

import pytest

from iolab.store.rawaside import finish_moves

from .conftest import SMALL_SIM, iolab, quick_sim_run

COMMANDS = ("show bad", "report bad", "report bad --out {out}", "export bad -o {d}/ex", "audit bad")


@pytest.fixture(scope="module")
def a_run(tmp_path_factory) -> Path:
    return quick_sim_run(tmp_path_factory.mktemp("tampered-runs"))


def files_under(d: Path) -> set[Path]:
    return set(d.rglob("*"))


def refused(p, d: Path, before: set[Path]) -> str:
    text = p.stderr + p.stdout
    assert p.returncode == 2 and "Traceback" not in text, text
    assert "\n\n" not in p.stderr.strip(), f"more than one paragraph:\n{p.stderr}"
    assert files_under(d) == before, f"files appeared: {sorted(files_under(d) - before)}"
    return " ".join(p.stderr.split())


def listed(runs: Path) -> dict[str, dict]:
    p = iolab("runs", "--runs-dir", str(runs), "--json", timeout=60)
    assert p.returncode == 0, p.stderr
    return {Path(r["path"]).name: r for r in json.loads(p.stdout)["listed"]}


def every_command_refuses(scratch: Path, runs: Path, says: str) -> None:
    for line in COMMANDS:
        before = files_under(scratch)
        args = [a.format(d=scratch, out=runs / "R") for a in shlex.split(line)]
        p = iolab(*args, "--runs-dir", str(runs), timeout=120)
        assert says in refused(p, scratch, before), line


# U+202E shows the id reversed wherever it is printed
@pytest.mark.parametrize("run_id", ["../../etc", "/ABSOLUTE", "..", "a/b", "x\ny", "x\u202eyz"])
def test_a_run_id_that_is_no_plain_name_is_refused_and_writes_nowhere(a_run, scratch, run_id):
    """Before: `report bad --out R` wrote R/../../etc.html and .pdf, an absolute id wherever it
    named, and `runs` listed the run complete as '../../etc'."""
    runs = scratch / "a" / "b" / "runs"  # '../../etc' from runs/R or runs/bad/report lands inside scratch
    shutil.copytree(a_run, runs / "bad")
    shutil.copytree(a_run, runs / "good")
    manifest = runs / "bad" / "manifest.json"
    value = str(scratch / "ABSOLUTE") if run_id == "/ABSOLUTE" else run_id
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "run_id": value, "uid": "bad"}))
    stored = manifest.read_bytes()
    every_command_refuses(scratch, runs, "field 'run_id' is")
    found = listed(runs)
    assert found["bad"]["state"] == "broken" and "not a plain name" in found["bad"]["problem"]
    assert found["good"]["state"] == "complete"
    assert manifest.read_bytes() == stored


def test_a_test_name_that_climbs_out_is_refused_before_a_comparison_is_named_after_it(a_run, scratch):
    runs = scratch / "runs"
    for name in ("bad", "good"):
        shutil.copytree(a_run, runs / name)
    manifest = runs / "bad" / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "test": "../../x", "uid": "bad"}))
    before = files_under(scratch)
    p = iolab("compare", "bad", "good", "--runs-dir", str(runs), "--force", "--out", str(runs / "C"), timeout=120)
    assert "field 'test' is" in refused(p, scratch, before)


@pytest.mark.parametrize(
    ("part", "key", "value", "says"),
    [
        ("target", "capacity", "big", "field 'target.capacity' is \"big\", not a whole number"),
        ("profile", "active_range", 1e308, "field 'profile.active_range' is 1e+308, not a share of the target"),
        # AttributeError: 'list' object has no attribute 'get' / 'int' object ...
        ("target", "facts", [], "field 'target.facts' is [], not an object"),
        ("plan", "phases", [1, 2], "field 'plan.phases' is [1, 2], not a list of objects"),
    ],
)
def test_a_target_or_profile_number_edited_out_of_its_type_is_refused_naming_it(a_run, scratch, part, key, value, says):
    """Before: show and report ended in ValueError (int('big')), audit in OverflowError (capacity
    × 1e308), each a traceback (AttributeError for the facts and phases), and `runs` listed the
    run complete."""
    runs = scratch / "runs"
    shutil.copytree(a_run, runs / "bad")
    manifest = runs / "bad" / "manifest.json"
    doc = json.loads(manifest.read_text())
    doc[part][key] = value
    manifest.write_text(json.dumps(doc))
    for line in ("show bad", "audit bad"):
        before = files_under(scratch)
        p = iolab(*line.split(), "--runs-dir", str(runs), timeout=120)
        assert says in refused(p, scratch, before), line
    assert listed(runs)["bad"]["state"] == "broken"


def test_a_quick_run_edited_to_say_it_is_compliant_is_refused(a_run, scratch):
    """Before: `compliant: true` set by hand on a --quick run took the NON-COMPLIANT line off
    `show`, the report's every page, `check` and a fleet's verdicts, while its profile said quick."""
    runs = scratch / "runs"
    shutil.copytree(a_run, runs / "bad")
    manifest = runs / "bad" / "manifest.json"
    doc = json.loads(manifest.read_text())
    assert doc["profile"]["quick"] is True and doc["compliant"] is False
    manifest.write_text(json.dumps(doc | {"compliant": True, "noncompliance": []}))
    for line in ("show bad", "audit bad"):
        before = files_under(scratch)
        p = iolab(*line.split(), "--runs-dir", str(runs), timeout=120)
        assert "field 'compliant' is true, but its 'profile.quick' is true" in refused(p, scratch, before), line
    assert listed(runs)["bad"]["state"] == "broken"


@pytest.mark.parametrize("table", ["steady", "histograms", "series", "phases"])
def test_a_results_db_without_a_table_the_readers_use_is_broken_not_a_traceback(a_run, scratch, table):
    """Before: show/report/export/audit of a run without `steady` or `histograms` ended in
    sqlite3.OperationalError with a traceback (exit 1), and `runs` listed it complete."""
    runs = scratch / "runs"
    shutil.copytree(a_run, runs / "bad")
    with sqlite3.connect(runs / "bad" / "results.db") as db:
        db.execute(f"DROP TABLE {table}")
    db.close()
    says = f"not an iolab results database (no {table} table)"
    every_command_refuses(scratch, runs, says)
    assert listed(runs)["bad"]["state"] == "broken" and says in listed(runs)["bad"]["problem"]


@pytest.mark.parametrize("table", ["steady", "histograms"])
def test_resume_of_a_run_whose_results_db_lost_a_table_is_refused_and_changes_nothing(a_run, scratch, table):
    """A stopped run (its manifest as a killed run's) whose results.db lost a table: resume is
    refused (exit 2, one paragraph) and leaves the database as it was, the table not made again
    empty. Its read-only look refuses first; RunStore's writer refuses too (test_store)."""
    runs = scratch / "runs"
    shutil.copytree(a_run, runs / "bad")
    manifest = runs / "bad" / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "state": "interrupted", "ended": None}))
    with sqlite3.connect(runs / "bad" / "results.db") as db:
        db.execute(f"DROP TABLE {table}")
    db.close()
    stored = (runs / "bad" / "results.db").read_bytes()
    before = files_under(scratch)
    p = iolab("resume", "bad", "--no-report", "--runs-dir", str(runs), timeout=120)
    assert f"no {table} table" in refused(p, scratch, before)
    assert (runs / "bad" / "results.db").read_bytes() == stored


def test_another_run_s_results_db_under_a_run_s_manifest_is_refused(a_run, scratch, tmp_path_factory):
    """Before: a results.db copied in from another run of the same test was read under this run's
    manifest (its rule of at most 10 rounds beside the other's "reached the round limit (4)"),
    and show and audit exited 0. The database names its run's uid (store/dbidentity.py)."""
    other = quick_sim_run(tmp_path_factory.mktemp("other-run"))
    runs = scratch / "runs"
    shutil.copytree(a_run, runs / "bad")
    shutil.copy(other / "results.db", runs / "bad" / "results.db")
    uid = json.loads((other / "manifest.json").read_text())["uid"]
    every_command_refuses(scratch, runs, f"belongs to another run (uid {uid}) than the one the manifest.json")
    assert listed(runs)["bad"]["state"] == "broken"
    # resume writes nothing into it either, not even the uid of the manifest beside it
    manifest = runs / "bad" / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "state": "interrupted", "ended": None}))
    stored = (runs / "bad" / "results.db").read_bytes()
    before = files_under(scratch)
    p = iolab("resume", "bad", "--no-report", "--runs-dir", str(runs), timeout=120)
    assert "belongs to another run" in refused(p, scratch, before)
    assert (runs / "bad" / "results.db").read_bytes() == stored


def test_a_results_db_from_before_it_named_its_run_is_read_as_before(a_run, scratch):
    """An older run's results.db has no run_identity table, and its manifest no db_names_run: it
    cannot be told from its run's, and is read (its absence is no loss, unlike a table every iolab
    wrote). The same database beside a manifest that says it was made naming its run was replaced
    or had the table dropped, and is refused (a tester's copied database with the table dropped
    was read as the run's again)."""
    runs = scratch / "runs"
    shutil.copytree(a_run, runs / "bad")
    manifest = runs / "bad" / "manifest.json"
    m = json.loads(manifest.read_text())
    assert m["db_names_run"] is True
    with sqlite3.connect(runs / "bad" / "results.db") as db:
        assert db.execute("SELECT uid FROM run_identity").fetchall() == [(m["uid"],)]
        db.execute("DROP TABLE run_identity")
    db.close()
    every_command_refuses(scratch, runs, "this results database names no run, though the manifest.json beside it")
    assert listed(runs)["bad"]["state"] == "broken"
    manifest.write_text(json.dumps({k: v for k, v in m.items() if k != "db_names_run"}))  # as an older run's
    for args in (("show", "bad"), ("audit", "bad")):
        p = iolab(*args, "--runs-dir", str(runs), timeout=120)
        assert p.returncode == 0, p.stderr
    assert listed(runs)["bad"]["state"] == "complete"


def edited_copy(a_run: Path, scratch: Path, sql: str) -> Path:
    """A copy of the run as runs/bad, its results.db edited by hand with `sql`; the runs directory."""
    runs = scratch / "runs"
    shutil.copytree(a_run, runs / "bad")
    with sqlite3.connect(runs / "bad" / "results.db") as db:
        db.execute(sql)
    db.close()
    return runs


def test_a_table_without_a_column_every_iolab_wrote_is_refused_naming_it(a_run, scratch):
    runs = edited_copy(a_run, scratch, "ALTER TABLE steady DROP COLUMN vals")
    every_command_refuses(scratch, runs, "table steady has no column vals")
    assert listed(runs)["bad"]["state"] == "broken"


def test_an_infinite_figure_edited_into_results_db_is_refused_and_export_writes_nothing(a_run, scratch):
    """Before: `export -o -` printed 43 KB of JSON and a traceback, `show` printed "∞ IOPS", and
    the audit's iops-bytes check passed it (inf > tolerance × inf is False)."""
    runs = edited_copy(
        a_run, scratch, "UPDATE cells SET iops=9e999 WHERE id=(SELECT MAX(id) FROM cells WHERE kind='measure')"
    )
    every_command_refuses(scratch, runs, "column 'iops' holds inf, not a finite number")
    p = iolab("export", "bad", "-f", "json", "-o", "-", "--runs-dir", str(runs), timeout=120)
    assert p.returncode == 2 and p.stdout == "" and "Traceback" not in p.stderr, (p.stdout[:200], p.stderr)


@pytest.mark.parametrize("sql", ["UPDATE steady SET average=9e999", "UPDATE steady SET vals='[1e999, 2, 3, 4, 5]'"])
def test_an_infinite_steady_state_value_edited_into_results_db_is_refused(a_run, scratch, sql):
    """Before: `export -f json -o -` printed 104 KB of JSON and a traceback (Out of range float
    values are not JSON compliant: inf, exit 1) and `show` printed the window's average as inf."""
    runs = edited_copy(a_run, scratch, sql)
    every_command_refuses(scratch, runs, "table steady holds a window or values that are not the lists iolab writes")
    p = iolab("export", "bad", "-f", "json", "-o", "-", "--runs-dir", str(runs), timeout=120)
    assert p.returncode == 2 and p.stdout == "" and "Traceback" not in p.stderr, (p.stdout[:200], p.stderr)
    assert "holds inf, not a finite number" in " ".join(p.stderr.split()), p.stderr


@pytest.mark.parametrize(
    ("sql", "table", "column"),
    [
        ("UPDATE series SET lat_mean_us=9e999 WHERE rowid=(SELECT MIN(rowid) FROM series)", "series", "lat_mean_us"),
        (
            "UPDATE histograms SET value_us=9e999 WHERE rowid=(SELECT MIN(rowid) FROM histograms)",
            "histograms",
            "value_us",
        ),
    ],
)
def test_an_infinite_series_or_histogram_value_never_stops_the_json_export_midway(a_run, scratch, sql, table, column):
    """Before: `export -f json -o -` printed the tables before it, then a traceback (exit 1), a
    document no JSON reader takes; `-o DIR` the same traceback. JSON has no infinity: the value is
    null there, as every iolab JSON document gives a number that is not one."""
    runs = edited_copy(a_run, scratch, sql)
    p = iolab("export", "bad", "-f", "json", "-o", "-", "--runs-dir", str(runs), timeout=120)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    doc = json.loads(p.stdout, parse_constant=lambda c: pytest.fail(f"{c} in the JSON export"))
    assert None in [row[column] for row in doc[table]]
    p = iolab("export", "bad", "-f", "json", "-o", str(scratch / "ex"), "--runs-dir", str(runs), timeout=120)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    json.loads((scratch / "ex" / f"{table}.json").read_text(), parse_constant=lambda c: pytest.fail(c))


def test_an_absurd_finite_iops_fails_the_audit_in_readable_numbers(a_run, scratch):
    """1e308 IOPS × the block size overflows to inf: before, iops-bytes passed it and, at 1e300,
    printed a 300-digit number."""
    runs = edited_copy(
        a_run, scratch, "UPDATE cells SET iops=1e308 WHERE id=(SELECT MAX(id) FROM cells WHERE kind='measure')"
    )
    p = iolab("audit", "bad", "--runs-dir", str(runs), timeout=120)
    line = next((ln for ln in p.stdout.splitlines() if "iops-bytes" in ln), "")
    assert p.returncode != 0 and "FAIL" in line, p.stdout
    assert "1e+308 IOPS" in p.stdout and max(len(w) for w in p.stdout.split()) < 60, p.stdout


def test_steady_values_that_are_not_the_lists_iolab_writes_are_refused(a_run, scratch):
    runs = scratch / "runs"
    shutil.copytree(a_run, runs / "bad")
    with sqlite3.connect(runs / "bad" / "results.db") as db:
        assert db.execute("UPDATE steady SET vals='[1, 2'").rowcount > 0
    db.close()
    before = files_under(scratch)
    p = iolab("export", "bad", "-o", str(scratch / "ex"), "--runs-dir", str(runs), timeout=120)
    assert "table steady holds a window or values" in refused(p, scratch, before)


ONE_CELL = "(SELECT id FROM cells WHERE kind='measure' AND round=2 AND cell_key='65/35 4KiB')"


@pytest.mark.parametrize(
    ("sql", "says"),
    [
        (
            f"DELETE FROM histograms WHERE cell_id={ONE_CELL}",
            "table histograms, no latency histogram for 1 cell whose row stores percentiles computed from one "
            "(phase 'main' round 2 cell '65/35 4KiB')",
        ),
        (
            "DELETE FROM histograms WHERE cell_id=(SELECT id FROM cells WHERE kind='precondition')",
            "(phase 'main' round 0 cell 'WIPC SEQ 128KiB W')",
        ),
        (
            f"DELETE FROM series WHERE cell_id={ONE_CELL}",
            "table series, no per-second rows for 1 of its 45 cells of the complete rounds (phase 'main' round 2 "
            "cell '65/35 4KiB'), where the audit stored at the run's end found 0 of 45 without any",
        ),
        (
            "DELETE FROM steady",
            "table steady, phase 'main' has no row, though table phases holds its steady-state verdict",
        ),
    ],
)
def test_rows_deleted_from_a_table_the_run_says_it_stored_are_refused_naming_them(a_run, scratch, sql, says):
    """Before: a cell's histogram, its per-second rows or the phase's steady-state verdict deleted,
    every command read the run as whole (exit 0): the report drew no histogram, the export left
    the rows out and show said the phase was steady with no verdict behind it."""
    runs = scratch / "runs"
    shutil.copytree(a_run, runs / "bad")
    shutil.copytree(a_run, runs / "good")
    with sqlite3.connect(runs / "bad" / "results.db") as db:
        assert db.execute(sql).rowcount > 0
    db.close()
    every_command_refuses(scratch, runs, says)
    doc = json.loads(iolab("show", "bad", "--json", "--runs-dir", str(runs), timeout=120).stdout)
    assert doc["exit_code"] == 2 and says in " ".join(doc["error"].split())
    before = files_under(scratch)
    p = iolab("check", "bad", "--baseline", "good", "--runs-dir", str(runs), timeout=120)
    assert says in refused(p, scratch, before)
    found = listed(runs)
    assert found["bad"]["state"] == "broken" and says in " ".join(found["bad"]["problem"].split())
    assert found["good"]["state"] == "complete"


def test_a_steady_state_verdict_deleted_from_the_phase_s_last_round_is_refused(scratch):
    """WSAT stores a verdict each round once its window fills; its last round's deleted, every
    command took the round before's verdict as the phase's (another window, another answer)."""
    runs = scratch / "runs"
    p = iolab("run", "wsat", "--quick", "-t", SMALL_SIM, "--no-report", "--runs-dir", str(runs / "w"), timeout=300)
    assert p.returncode in (0, 6), p.stderr
    [run] = (runs / "w").iterdir()
    run.rename(runs / "bad")
    with sqlite3.connect(runs / "bad" / "results.db") as db:
        (last,) = db.execute("SELECT rounds FROM phases WHERE name='main'").fetchone()
        (first,) = db.execute("SELECT MIN(round) FROM steady").fetchone()
        assert first < last, "the verdict of one round alone: nothing before the last to fall back on"
        assert db.execute("DELETE FROM steady WHERE round=?", (last,)).rowcount > 0
    db.close()
    every_command_refuses(
        scratch, runs, f"table steady, phase 'main' lacks the steady-state verdict of round {last} ('IOPS "
    )


FLEET_TOML = f"""[fleet]
name = "f"
[[drive]]
target = "{SMALL_SIM}"
name = "a"
"""


def test_a_fleet_state_whose_drive_name_climbs_out_is_refused(scratch):
    """fleet.json names each drive's folder (drives/NAME, written when the fleet is resumed):
    a name the fleet file would refuse is refused there too; before, resume made ../../evil."""
    fleet = scratch / "runs" / "fleets" / "f"
    fleet.mkdir(parents=True)
    (fleet / "fleet.toml").write_text(FLEET_TOML)
    member = {"name": "../../../evil", "target": SMALL_SIM, "where": "local", "state": "pending"}
    state = {"schema": "iolab-fleet", "schema_version": 1, "test": "latency", "name": "f", "args": ["run", "latency"]}
    (fleet / "fleet.json").write_text(json.dumps({**state, "members": [member], "started": "", "state": "interrupted"}))
    before = files_under(scratch)
    p = iolab("resume", str(fleet), "--runs-dir", str(scratch / "runs"), timeout=120)
    assert "members[0]: field 'name' is '../../../evil'" in refused(p, scratch, before)


def test_a_set_aside_file_named_outside_raw_is_not_moved_there(tmp_path):
    """Cells set aside name their files raw/interrupted-N/NAME; a name a hand put in results.db
    that leads elsewhere moved the run's raw file out of its directory on resume."""
    run = tmp_path / "run"
    (run / "raw").mkdir(parents=True)
    (run / "raw" / "f.json").write_text("{}")
    (tmp_path / "elsewhere" / "interrupted-1").mkdir(parents=True)
    finish_moves(run, {"../elsewhere/interrupted-1/f.json", "raw/interrupted-1/../../../elsewhere/f.json"})
    assert (run / "raw" / "f.json").is_file() and not (tmp_path / "elsewhere" / "interrupted-1" / "f.json").exists()
    (run / "raw" / "interrupted-1").mkdir()
    finish_moves(run, {"raw/interrupted-1/f.json"})  # iolab's own name still moves
    assert (run / "raw" / "interrupted-1" / "f.json").is_file()


def _damaged(run: Path, how: str) -> None:
    if how == "run_id":
        manifest = run / "manifest.json"
        manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "run_id": "../x", "uid": "bad"}))
        return
    with sqlite3.connect(run / "results.db") as db:
        if how == "table":
            db.execute("DROP TABLE steady")
        else:  # a complete round's cell deleted: the round check (store/roundcheck.py)
            sql = "DELETE FROM cells WHERE rowid = (SELECT min(rowid) FROM cells WHERE kind='measure' AND round>0)"
            assert db.execute(sql).rowcount == 1
    db.close()


@pytest.mark.parametrize(
    ("how", "says"),
    [
        ("run_id", "bad/manifest.json: unreadable manifest (field 'run_id' is"),
        ("table", "bad/results.db: not an iolab results database (no steady table)"),
        ("round", "bad/results.db: table cells, phase "),
    ],
)
def test_a_bad_run_among_several_leaves_no_report_of_the_good_ones(a_run, scratch, how, says):
    """Before: `iolab report good bad` wrote good's report, then failed on bad: every run given is
    read, and its report built, before any is written (api.write_report)."""
    runs = scratch / "runs"
    shutil.copytree(a_run, runs / "good")
    shutil.copytree(a_run, runs / "bad")
    _damaged(runs / "bad", how)
    for out in ([], ["--out", str(scratch / "R")]):
        before = files_under(scratch)
        p = iolab("report", "good", "bad", *out, "--runs-dir", str(runs), timeout=300)
        assert says in refused(p, scratch, before), out


def test_history_skips_a_run_whose_rounds_fail_their_check_as_it_skips_an_unreadable_one(a_run, scratch):
    """Before: a run whose cells fail the round check as they are read ended `iolab history` over the
    whole runs directory (exit 2); a run it cannot open is skipped, and this one now is too."""
    runs = scratch / "runs"
    shutil.copytree(a_run, runs / "good")
    shutil.copytree(a_run, runs / "bad")
    _damaged(runs / "bad", "round")
    manifest = runs / "bad" / "manifest.json"  # another run, not a copy of good's (counted once)
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "uid": "bad"}))
    with sqlite3.connect(runs / "bad" / "results.db") as db:  # whose results.db names it (dbidentity)
        db.execute("UPDATE run_identity SET uid='bad'")
    db.close()
    p = iolab("history", "ART RND 4KiB R/W 0/100", "--runs-dir", str(runs), "--json", timeout=120)
    assert p.returncode == 0, p.stderr
    h = json.loads(p.stdout)["history"]
    assert [Path(s["path"]).name for s in h["skipped"]] == ["bad"], h["skipped"]
    assert "marked complete but holds" in h["skipped"][0]["reason"]
    assert [pt["run_id"] for g in h["targets"] for pt in g["points"]] == [json.loads(manifest.read_text())["run_id"]]
