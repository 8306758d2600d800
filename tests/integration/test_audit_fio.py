"""The self-audit from the command line on a real fio run on a file: its per-second rows pass
series-totals (fio leaves out what completes after a thread's last row; audit_series.py), every
stored figure is what fio's reports give (raw-figures: a database edited after the run fails), and
a copy whose stored verdict contradicts its own steady-state window (a phase's `steady` flipped
in results.db, as the tester did) fails steady-evidence with the variables that contradict it,
in `iolab audit` (exit 8) and in `show`."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from .conftest import _scratch_dir, iolab
from .dbedits import check_edits_fail_raw_figures

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def fio_run(tmp_path_factory) -> Path:
    """A quick throughput run with real fio on a 64 MiB file (its raw/ holds fio's JSON+ reports)."""
    runs = tmp_path_factory.mktemp("runs")
    with _scratch_dir() as scratch:
        target = f"file:{scratch / 'audit.img'}?size=64MiB"
        p = iolab(
            "run",
            "throughput",
            "--quick",
            "--max-rounds",
            "5",
            "-q",
            "--no-report",
            "-t",
            target,
            "--runs-dir",
            str(runs),
            "--json",
        )
    assert p.returncode == 0, p.stderr
    return Path(json.loads(p.stdout)["runs"][0]["path"])


def test_a_real_run_passes_and_a_flipped_verdict_fails(fio_run, tmp_path):
    run = fio_run
    good = iolab("audit", str(run))
    assert "FAIL" not in good.stdout and good.returncode == 0, good.stdout + good.stderr
    assert "ok   series-totals" in good.stdout and "ok   steady-evidence" in good.stdout
    assert "ok   raw-figures" in good.stdout  # every figure is what fio's reports give

    copy = tmp_path / "flipped" / run.name
    shutil.copytree(run, copy)
    db = sqlite3.connect(copy / "results.db")
    # a phase whose window the rule judged, its stored verdict turned round: whatever this machine
    # measured, the verdict then contradicts the window (a passing window on a drive the run's
    # evidence says left fresh-out-of-box is stored as steady)
    phase, steady = db.execute("SELECT name, steady FROM phases WHERE steady IS NOT NULL ORDER BY ordinal").fetchone()
    db.execute("UPDATE phases SET steady = ?, stop_reason = 'planted' WHERE name = ?", (1 - steady, phase))
    db.commit()
    db.close()
    m = json.loads((copy / "manifest.json").read_text())
    m["audit"] = {}  # the stored audit was of the run as it was
    (copy / "manifest.json").write_text(json.dumps(m))

    bad = iolab("audit", str(copy))
    assert bad.returncode == 8, bad.stdout + bad.stderr
    said = "stored as not steady, but its window" if steady else "stored as steady, but its window"
    assert f"FAIL steady-evidence: {phase}: {said} (rounds 1-5)" in bad.stdout.replace("\n", " ")
    assert "FAILED: steady-evidence" in iolab("show", str(copy)).stdout

    # a copy whose raw fio output of one cell was cut short after the run (a copy stopped
    # midway): the audit names the cell and fails raw-output, and `show` marks every figure
    cut = tmp_path / "cut" / run.name
    shutil.copytree(run, cut)
    db = sqlite3.connect(cut / "results.db")
    phase, rnd, key, raw = db.execute(
        "SELECT phase, round, cell_key, raw_files FROM cells WHERE kind = 'measure' AND round = 2 ORDER BY ordinal"
    ).fetchone()
    db.close()
    out = next(f for f in json.loads(raw) if f.endswith(".json"))
    whole = (cut / out).read_bytes()
    (cut / out).write_bytes(whole[: len(whole) // 2])
    truncated = iolab("audit", str(cut))
    assert truncated.returncode == 8, truncated.stdout + truncated.stderr
    said = truncated.stdout.replace("\n", " ")
    assert f"FAIL raw-output: {phase} round {rnd} {key}: raw output {out} is truncated" in said, said
    shown = iolab("show", str(cut)).stdout
    assert "FAILED: raw-output" in shown and "⚠ audit: raw-output failed" in shown, shown

    # whole JSON the cell's figures were not computed from: another round's whole report copied
    # over one cell's (a file that ends where an object ends), and a report whose jobs list lost
    # its job: each fails raw-output with the counts the file holds against the stored ones
    other = tmp_path / "other" / run.name
    shutil.copytree(run, other)
    db = sqlite3.connect(other / "results.db")
    cells = db.execute(
        "SELECT phase, round, cell_key, raw_files, read_ios, write_ios FROM cells WHERE kind = 'measure' ORDER BY ordinal"
    ).fetchall()
    db.close()
    first = cells[0]
    donor = next(c for c in cells[1:] if (c[4], c[5]) != (first[4], first[5]))
    raw_of = lambda c: next(f for f in json.loads(c[3]) if f.endswith(".json"))  # noqa: E731
    (other / raw_of(first)).write_bytes((other / raw_of(donor)).read_bytes())
    last = cells[-1]
    report = json.loads((other / raw_of(last)).read_text())
    (other / raw_of(last)).write_text(json.dumps({**report, "jobs": report["jobs"][1:]}))
    m = json.loads((other / "manifest.json").read_text())
    m["audit"] = {}
    (other / "manifest.json").write_text(json.dumps(m))
    p = iolab("audit", str(other))
    said = " ".join(p.stdout.split())
    assert p.returncode == 8, said
    for c in (first, last):
        assert f"{c[0]} round {c[1]} {c[2]}: raw output {raw_of(c)} is not the cell's result" in said, said
    assert f"the cell's figures {first[4]:,} and {first[5]:,}" in said, said


def test_figures_edited_in_results_db_fail_against_fios_reports(fio_run, tmp_path):
    # the tester's edit: every IOPS and MB/s ×1.5 with the steady-state rows, which passed every
    # check that compared the database with itself; lowered too, and one percentile of one cell
    check_edits_fail_raw_figures(fio_run, tmp_path)


def test_a_per_second_row_edited_within_the_totals_bound_fails_against_fios_logs(fio_run, tmp_path):
    # series-totals bounds the rows by the cell's totals only: a row raised 3 % passed it and every
    # other check; the rows fio's per-second logs give (its own parser, fio_parse) are the stored ones
    copy = tmp_path / "series" / fio_run.name
    shutil.copytree(fio_run, copy)
    db = sqlite3.connect(copy / "results.db")
    phase, rnd, key, t = db.execute(
        "SELECT c.phase, c.round, c.cell_key, s.t_s FROM series s JOIN cells c ON c.id = s.cell_id "
        "WHERE c.kind = 'measure' AND s.read_iops > 0 ORDER BY s.rowid LIMIT 1"
    ).fetchone()
    db.execute(
        "UPDATE series SET read_iops = read_iops * 1.03, mbps = mbps * 1.03 WHERE rowid = (SELECT MIN(s.rowid) "
        "FROM series s JOIN cells c ON c.id = s.cell_id WHERE c.kind = 'measure' AND s.read_iops > 0)"
    )
    db.commit()
    db.close()
    p = iolab("audit", str(copy))
    said = " ".join(p.stdout.split())
    assert p.returncode == 8 and "ok series-totals" in said, said
    assert f"FAIL raw-figures: {phase} round {rnd} {key}: its per-second row at {t:g} s stores read_iops" in said, said
    good = " ".join(iolab("audit", str(fio_run)).stdout.split())
    # every cell's series, those without a whole second's row too (their logs give none)
    n = re.search(r"ok raw-figures: (\d+) cells with raw engine output checked", good)
    assert n and f"per-second series of {n[1]} cells derived again from their raw output" in good, good
