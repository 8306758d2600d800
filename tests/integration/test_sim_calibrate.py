"""`iolab sim calibrate`: fitting a simulated preset to a stored run recovers the measured
figures, and bad runs are refused in one paragraph."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from .conftest import iolab

pytestmark = pytest.mark.integration

# The "real drive": the default preset with slower programs and a slower controller, without
# its GC pass (whose 35 s dips every 150 s move a 200 ms cell's IOPS by ~13 % from round to
# round, so 6 quick rounds did not reach steady state; the base preset has no pass either)
# and without its paced GC, which the base lacks too and none of its fitted parameters can
# stand for: on this 0.54 GB copy (131 blocks of 5 MiB, a 200 ms cell writes three) an even
# GC rate leaves the mixed cells' reads less queued behind copies at the same copying per
# host write (65/35 4 KiB 54,100 IOPS and reads of 2.45 ms paced, 48,500 and 2.85 ms at each
# victim's own cost; 100/0 and 0/100 the same), and the fit's compromise left 100/0 4 KiB
# 15.7 % off (those figures with 200 ms cells).
# The run measures 100 ms cells and the fit, replaying a cell at the run's own length, spends
# 100 evaluations: 19 CPU-s where 160 took 28 and 200 ms cells with 240 evaluations 93. The
# simulator runs in virtual time, so the fit is the same on any machine: from an RMS error of
# 224 % it ends at 12.2 % (15 % is asserted; 7.9 % after 120 evaluations, 6 % after 160), the key
# figures within 8.8 % (15 %), 50 of the 56 figures within 15 % (48).
MEASURED = "sim:enterprise-sas?t_prog_us=1600&overhead_us=55&gc_pass_period_ms=0&gc_pace_victims=0"
KEY = ("100/0 4KiB IOPS", "65/35 4KiB IOPS", "0/100 4KiB IOPS", "65/35 64KiB IOPS", "100/0 1024KiB IOPS")


@pytest.fixture(scope="module")
def iops_run(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("calib") / "runs"
    p = iolab(
        "run",
        "iops",
        "--quick",
        "--cell-time",
        "100ms",
        "--max-rounds",
        "6",
        "--no-report",
        "--runs-dir",
        str(runs),
        "--target",
        MEASURED,
    )
    assert p.returncode == 0, p.stderr + p.stdout
    [run] = [d for d in runs.iterdir() if (d / "manifest.json").exists()]
    return run


def _digest(run: Path) -> dict[str, str]:
    return {
        str(f.relative_to(run)): hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(run.rglob("*"))
        if f.is_file()
    }


def test_calibration_from_another_preset_recovers_the_measured_figures(iops_run):
    before = _digest(iops_run)
    p = iolab("sim", "calibrate", str(iops_run), "--base", "entry-sata-compress", "--budget", "100", "--json")
    assert p.returncode == 0, p.stderr + p.stdout
    res = json.loads(p.stdout)
    errors = {r["figure"]: r["error_pct"] for r in res["residuals"] if r["fitted"]}
    assert len(errors) == 56
    # The start (another drive) is far off, so a fit that returned it would fail below.
    assert res["error_before"] > 0.5
    assert res["params"] != res["start"]
    assert all(abs(errors[k]) <= 15 for k in KEY), {k: errors[k] for k in KEY}
    assert res["error_after"] <= 0.15
    within = sum(abs(e) <= 15 for e in errors.values())
    assert within >= 0.85 * len(errors), sorted(errors.items(), key=lambda kv: -abs(kv[1]))[:10]
    # The fitted spec is a target the user can pass to -t: it runs, and it is the fitted drive.
    spec = res["spec"]
    assert spec.startswith(f"sim:entry-sata-compress?user_gb={res['sim_capacity_bytes'] / 1e9:.9g}&")
    assert all(f"{k}={v}" in spec for k, v in res["params"].items())
    # Read-only on the run.
    assert _digest(iops_run) == before


def test_the_printed_target_is_the_drive_the_residuals_are_of(iops_run, tmp_path):
    """A fit on a copy of another size than the run's printed a target at the run's own size: its
    figures were not the residuals' (client-nvme-slc on this 128 MiB copy writes 4 KiB at 28,500
    IOPS, at the run's 0.54 GB at 39,600: the table said -3.6 %, the printed target ran +34 %).
    One evaluation (the base itself) is the point: what is printed is what was evaluated."""
    p = iolab(
        "sim", "calibrate", str(iops_run), "--base", "client-nvme-slc", "--capacity", "128MiB", "--budget", "1", "--json"
    )  # fmt: skip
    assert p.returncode == 0, p.stderr + p.stdout
    res = json.loads(p.stdout)
    assert res["sim_capacity_bytes"] == 128 * 2**20
    assert res["spec"].startswith("sim:client-nvme-slc?user_gb=0.134217728&"), res["spec"]
    assert any("a target of its size (user_gb=0.536871) was not evaluated" in n for n in res["notes"]), res["notes"]
    simulated = {r["figure"]: r["simulated"] for r in res["residuals"]}
    # The user's run of the printed target lands where the table says it does (two rounds, as an
    # evaluation replays: within 4 %; the target main printed ran 38-48 % off on three key figures).
    run = iolab(
        "run", "iops", "--quick", "--cell-time", "100ms", "--max-rounds", "2", "--no-report", "--json",
        "--runs-dir", str(tmp_path / "runs"), "-t", res["spec"],
    )  # fmt: skip
    assert run.returncode == 0, run.stderr + run.stdout
    ran = {f["name"]: f["value"] for f in json.loads(run.stdout)["runs"][0]["figures"]}
    gaps = {k: ran[f"RND {k.split()[1]} R/W {k.split()[0]} IOPS"] / simulated[k] - 1 for k in KEY}
    assert all(abs(g) <= 0.1 for g in gaps.values()), gaps


def _copy(run: Path, tmp_path: Path) -> Path:
    dst = tmp_path / run.name
    shutil.copytree(run, dst)
    return dst


def _edit_manifest(run: Path, **changes) -> None:
    m = json.loads((run / "manifest.json").read_text())
    m.update(changes)
    (run / "manifest.json").write_text(json.dumps(m))


def _refused(*args: str) -> str:
    p = iolab("sim", "calibrate", *args)
    assert p.returncode != 0
    assert "Traceback" not in p.stderr, p.stderr
    return " ".join(p.stderr.split())


def test_a_run_that_is_not_a_pts_iops_latency_or_wsat_run_is_refused(iops_run, tmp_path):
    run = _copy(iops_run, tmp_path)
    _edit_manifest(run, test="throughput")
    msg = _refused(str(run))
    assert "'throughput' run" in msg and "calibration reads" in msg


def test_an_incomplete_run_is_refused(iops_run, tmp_path):
    run = _copy(iops_run, tmp_path)
    _edit_manifest(run, state="interrupted")
    msg = _refused(str(run))
    # the run by its path: its id resolved only under the runs directory, and this copy is elsewhere
    assert "is interrupted, not complete" in msg and f"`iolab resume {run.resolve()}`" in msg, msg


def test_a_run_without_steady_state_is_refused(iops_run, tmp_path):
    run = _copy(iops_run, tmp_path)
    db = sqlite3.connect(run / "results.db")
    db.execute("UPDATE phases SET steady=0, stop_reason='round limit reached' WHERE name='main'")
    db.commit()
    db.close()
    msg = _refused(str(run))
    # its window passes the rule's numbers (only the stored verdict was planted): said as `show` says it
    assert "STEADY STATE NOT ACCEPTED in its main phase (round limit reached)" in msg, msg


def test_a_run_whose_steady_state_was_not_evaluated_is_refused_in_the_words_show_gives_it(tmp_path):
    """A --max-rounds 2 run (fewer rounds than the window): `show` says "steady state not
    evaluated", calibrate refused it as one that "did not reach steady state" (a failed verdict)."""
    runs = tmp_path / "runs"
    p = iolab(
        "run", "latency", "-t", "sim:enterprise-sas?user_gb=0.1", "--quick", "--cell-time", "0.5s",
        "--max-rounds", "2", "--no-report", "--runs-dir", str(runs),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr + p.stdout
    [run] = runs.iterdir()
    assert "main: 2 complete rounds; steady state not evaluated;" in " ".join(iolab("show", str(run)).stdout.split())
    msg = _refused(str(run))
    said = "steady state not evaluated in its main phase (reached the round limit (2) without steady state)"
    assert said in msg and "did not reach" not in msg, msg


def test_bad_base_and_missing_run_are_refused(iops_run, tmp_path):
    assert "simulated HDD" in _refused(str(iops_run), "--base", "sas-15k-hdd")
    assert "no-such-preset" in _refused(str(iops_run), "--base", "no-such-preset")
    assert "no such run directory" in _refused(str(tmp_path / "nothing-here"))
    assert "--budget 0" in _refused(str(iops_run), "--budget", "0")
    # a copy larger than the run's tested capacity was called "a scaled-down drive"
    big = iolab("sim", "calibrate", str(iops_run), "--capacity", "2GiB", "--budget", "1")
    said = " ".join(big.stdout.split())
    assert big.returncode == 0 and "figures of a larger drive than the run's" in said, big.stdout + big.stderr
    assert "scaled-down" not in said
    # a 0 s cell was blamed on the preset and the copy's capacity
    zero = _refused(str(iops_run), "--cell-time", "0")
    assert "--cell-time 0 s: give a duration greater than 0" in zero and "preset" not in zero, zero
