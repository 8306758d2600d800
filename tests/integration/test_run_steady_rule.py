"""What iolab says of a stored run's steady state goes by the run's own rule (SteadyRule.of_profile),
not one built from part of its profile: a run given --strict-steady and --steady-min-writes 3 is
audited with its minimum (the steady-evidence check), rechecked with its strict comparison
(audit_steady), and reported with it (the header's rule and the determination tables). A window
planted on the rule's boundary (a range of exactly 20 % of the average: it passes ≤ and fails <)
tells the two comparisons apart."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from .conftest import iolab

pytestmark = pytest.mark.integration

TRACKED, CELL = "IOPS 0/100 4KiB", "0/100 4KiB"
# average 100,000, range 20,000 = 20 % of it exactly; fit excursion 8 % (slope -2,000 × 4 rounds)
BOUNDARY = (100_000.0, 110_000.0, 90_000.0, 110_000.0, 90_000.0)


def steady_evidence(run: Path) -> dict:
    p = iolab("audit", str(run), "--json")
    [a] = json.loads(p.stdout)["audits"]
    return next(i for i in a["audit"]["invariants"] if i["name"] == "steady-evidence")


def plant_boundary_window(run: Path) -> None:
    """The tracked cell's window rounds at BOUNDARY, and its table row and the phase's verdict as
    the strict rule stores them: the range fails (20,000 is not < 20,000), the fit passes."""
    db = sqlite3.connect(run / "results.db")
    with db:
        for rnd, iops in enumerate(BOUNDARY, 1):
            db.execute("UPDATE cells SET iops = ? WHERE cell_key = ? AND round = ?", (iops, CELL, rnd))
        db.execute(
            "UPDATE steady SET window = '[1, 2, 3, 4, 5]', vals = ?, average = 100000, range_measured = 20000, "
            "range_allowed = 20000, slope = -2000, intercept = 106000, fit_excursion = 8000, fit_allowed = 10000, "
            "range_ok = 0, slope_ok = 1 WHERE variable = ? AND round = 5",
            (json.dumps(BOUNDARY), TRACKED),
        )
        db.execute("UPDATE phases SET steady = 0 WHERE name = 'main'")
    db.close()


def test_the_audit_and_the_report_judge_a_run_by_its_own_steady_rule(tmp_path):
    runs = tmp_path / "runs"
    rule = ("--strict-steady", "--steady-min-writes", "3")
    p = iolab(
        "run", "iops", "--quick", "-t", "sim:enterprise-sas?user_gb=0.25", *rule, "--no-report", "--runs-dir", str(runs)
    )
    assert p.returncode == 0, p.stderr
    [run] = list(runs.iterdir())
    tested = json.loads((run / "manifest.json").read_text())["target"]["tested_capacity"]
    # the minimum written since the purge is the run's 3×, not the default 2×
    found = steady_evidence(run)
    main = found["numbers"]["main"]
    assert found["status"] == "pass" and main["minimum_bytes"] == 3 * tested, found
    assert main["window"] == [1, 2, 3, 4, 5], found  # the window BOUNDARY is planted in

    plant_boundary_window(run)
    # rechecked by <, the cells fail as the table says; by ≤ they passed: "its values pass the rule"
    found = steady_evidence(run)
    assert found["status"] == "pass" and found["numbers"]["main"]["recomputed_steady"] is False, found

    assert iolab("report", str(run)).returncode == 0
    page = " ".join((run / "report" / f"{run.name}.html").read_text().split())
    assert "range &lt; 20%, fit excursion &lt; 10% of average over 5 rounds" in page  # the header's rule
    # the determination table at the boundary: failed, as < says; "> 20,000 allowed" was ≤'s wording
    assert "20,000: FAIL (≥ 20,000 allowed)" in page and "FAIL (&gt; 20,000" not in page
    assert "allowed)" in page and "(≤ " not in page
