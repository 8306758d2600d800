"""Steady state is not declared on a fresh drive's plateau: a phase that stops at steady state
counts it only once the drive has taken the rule's minimum (× the tested capacity, plus the
drive outside a range cut to the quick limit) since the purge, and says how much it had
written. The simulated entry SATA drive writes ~20,000 IOPS fresh and saturates near 7,900
when the whole drive is tested; its fresh plateau passes the range and slope rule."""

from __future__ import annotations

import re
import sqlite3

from .conftest import iolab

DRIVE = "sim:entry-sata-compress?user_gb=4"
# no size given: --quick simulates a smaller drive and tests all of it
SCALED = "sim:entry-sata-compress"


def _run_dir(stdout: str):
    return re.search(r"run directory: (\S+)", stdout).group(1)


def _cells(run_dir: str) -> dict[tuple[str, str], float]:
    db = sqlite3.connect(f"file:{run_dir}/results.db?mode=ro", uri=True)
    try:
        return {
            (p, k): iops for p, k, iops in db.execute("SELECT phase, cell_key, iops FROM cells WHERE kind='measure'")
        }
    finally:
        db.close()


def test_entropy_preconditioning_leaves_the_fresh_plateau_before_it_is_steady(tmp_path):
    p = iolab(
        "run",
        "entropy",
        "--quick",
        "--set",
        "entropies=0,100",
        "--set",
        "qds=32",
        "-t",
        SCALED,
        "--no-report",
        "--runs-dir",
        str(tmp_path),
    )
    assert p.returncode == 0, p.stderr
    out = " ".join(p.stdout.split())
    # the rule names its minimum, and the preconditioning says what it wrote before it counted
    assert "accepted only after 2× the tested capacity is written since the purge" in out
    m = re.search(r"declared after ([\d.]+) GB written since the purge \(≥ 2× the tested capacity, ([\d.]+) GB\)", out)
    assert m and float(m.group(1)) >= float(m.group(2)) > 0
    cells = _cells(_run_dir(p.stdout))
    pre = [v for (ph, _), v in cells.items() if ph == "precondition"]
    # before the minimum: steady at the fresh plateau (19,988 IOPS), the 100 % entropy QD32 cell at 16,050
    assert max(pre) < 10_000
    assert cells[("write", "100% entropy QD32")] < 10_000


def test_a_range_cut_to_the_quick_limit_counts_the_rest_of_the_drive(tmp_path):
    # quick tests 0.537 GB of the 4 GB drive: 3× that never uses up the purged drive's free
    # flash (with five entropies it was declared steady after 2.023 GB); the rest of the drive counts too
    p = iolab(
        "run",
        "entropy",
        "--quick",
        "--set",
        "entropies=100",
        "--set",
        "qds=32",
        "-t",
        DRIVE,
        "--no-report",
        "--runs-dir",
        str(tmp_path),
    )
    assert p.returncode == 0, p.stderr
    out = " ".join(p.stdout.split())
    rest = re.search(
        r"accepted only after 2× the tested capacity plus the ([\d.]+) GB of the drive outside it "
        r"is written since the purge",
        out,
    )
    assert rest and 3.4 < float(rest.group(1)) < 3.5
    m = re.search(
        r"declared after ([\d.]+) GB written since the purge \(≥ 2× the tested capacity plus the "
        r"[\d.]+ GB of the drive outside it, ([\d.]+) GB\)",
        out,
    )
    assert m and float(m.group(1)) >= float(m.group(2)) > 4.0  # more than the drive's user capacity


def test_a_steady_window_on_a_fresh_drive_is_not_steady_state(tmp_path):
    # rounds of 4K writes too short to fill the drive twice: the window passes, the minimum does not
    p = iolab(
        "run", "latency", "--quick", "-t", DRIVE, "--steady-min-writes", "8", "--no-report", "--runs-dir", str(tmp_path)
    )
    assert p.returncode == 0, p.stderr
    out = " ".join(p.stdout.split())
    assert "steady state NOT reached" in out
    assert re.search(
        r"steady state not reached: the window passed, but only [\d.]+ GB was written since the purge, "
        r"below the 8× the tested capacity plus the [\d.]+ GB of the drive outside it \([\d.]+ GB\)",
        out,
    )


def test_the_minimum_is_checked_before_anything_runs(tmp_path):
    p = iolab("run", "latency", "--quick", "-t", DRIVE, "--steady-min-writes", "-1", "--runs-dir", str(tmp_path))
    assert p.returncode != 0 and "--steady-min-writes" in p.stdout + p.stderr and "Traceback" not in p.stderr
    assert not any(tmp_path.iterdir())
