"""The self-audit from the command line: `iolab audit` passes a good run and fails a Write
Saturation run stored as steady on a fresh drive (no block erased in its window: what main's
runner declared of `wsat --quick` on `sim:entry-sata-compress?user_gb=4`; the runner no longer
does, so the verdict is planted in a copy of a run whose drive erased nothing, as a runner bug
would store it); the audit and its marks show in `show`, in `--json` and in the manifest;
`iolab audit` writes nothing unless asked with --store."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from ..schema_lite import errors
from .conftest import iolab
from .dbedits import check_edits_fail_raw_figures

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs/schema/outcome.schema.json").read_text())
# 300 % spare: 2.5× the capacity fits in the free flash for the first intervals, which erase nothing
FRESH = ("sim:enterprise-sas?op=3", "--wsat-capacity-multiple", "2.5")
WHOLE = ("sim:entry-sata-compress",)


def run(runs: Path, target: str, *extra: str) -> Path:
    p = iolab("run", "wsat", "--quick", "--no-report", "-t", target, *extra, "--runs-dir", str(runs), "--json")
    assert p.returncode == 0, p.stderr
    return Path(json.loads(p.stdout)["runs"][0]["path"])


def fresh_run(runs: Path) -> Path:
    """A copy of a run that never left fresh-out-of-box, stored as steady (the bug audited for)."""
    made = run(runs, *FRESH)
    copy = runs.parent / "planted" / made.name
    shutil.copytree(made, copy)
    db = sqlite3.connect(copy / "results.db")
    assert db.execute("SELECT steady FROM phases").fetchall() == [(0,)]  # the runner's own verdict
    db.execute("UPDATE phases SET steady = 1")
    db.commit()
    db.close()
    m = json.loads((copy / "manifest.json").read_text())
    m["audit"] = {}  # the stored audit was of the run as it was
    (copy / "manifest.json").write_text(json.dumps(m))
    return copy


def doc(p) -> dict:
    d = json.loads(p.stdout)
    assert errors(d, SCHEMA) == [], errors(d, SCHEMA)
    assert d["exit_code"] == p.returncode
    return d


@pytest.fixture(scope="module")
def whole_run(tmp_path_factory) -> Path:
    """A good run: Write Saturation on a whole simulated drive."""
    return run(tmp_path_factory.mktemp("runs"), *WHOLE)


def test_audit_fails_steady_state_on_a_fresh_drive_and_passes_a_good_run(whole_run, tmp_path):
    runs = tmp_path / "runs"
    fresh, whole = fresh_run(runs), whole_run

    good = iolab("audit", str(whole))
    assert good.returncode == 0, good.stdout + good.stderr
    assert "0 failed" in good.stdout and "ok   steady-evidence" in good.stdout
    assert "ok   raw-figures" in good.stdout  # every figure is what the simulator's raw JSON gives

    before = (fresh / "manifest.json").read_bytes()
    bad = iolab("audit", str(fresh))
    assert bad.returncode == 8, bad.stdout + bad.stderr
    # the runner's own reason (figures/phaseend: the audit decides with the runner's functions)
    assert "FAIL steady-evidence" in bad.stdout and "erased no flash block in round(s)" in bad.stdout
    assert (fresh / "manifest.json").read_bytes() == before  # read-only without --store

    d = doc(iolab("audit", str(fresh), "--json"))
    [a] = d["audits"]
    assert d["command"] == "audit" and a["audit"]["failed"] == ["steady-evidence"]
    steady = a["audit"]["invariants"][0]
    assert 0.0 in steady["numbers"]["main"]["erases_per_round"]

    # show and show --json carry it, with the figures it touches marked
    shown = iolab("show", str(fresh))
    assert "FAILED: steady-evidence" in shown.stdout and "⚠ audit: steady-evidence failed" in shown.stdout
    record = doc(iolab("show", str(fresh), "--json"))["runs"][0]
    assert record["audit"]["failed"] == ["steady-evidence"]
    assert record["phases"][0]["audit"] == ["steady-evidence"]
    assert all(f["audit"] == ["steady-evidence"] for f in record["figures"])
    assert all(f["audit"] == [] for f in doc(iolab("show", str(whole), "--json"))["runs"][0]["figures"])


def test_audit_store_replaces_the_stored_audit_and_bad_input_is_one_line(tmp_path):
    runs = tmp_path / "runs"
    fresh = fresh_run(runs)  # its manifest holds no audit, as a run stored before the audit existed
    assert "FAILED: steady-evidence" in iolab("show", str(fresh)).stdout  # audited when read
    p = iolab("audit", str(fresh), "--store")
    assert p.returncode == 8
    assert json.loads((fresh / "manifest.json").read_text())["audit"]["failed"] == ["steady-evidence"]

    missing = iolab("audit", str(tmp_path / "nothing"))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr and "no such run" in missing.stderr


def test_figures_edited_in_results_db_fail_against_the_simulators_raw_output(whole_run, tmp_path):
    check_edits_fail_raw_figures(whole_run, tmp_path)
