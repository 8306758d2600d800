"""The self-audit from the command line: `iolab audit` passes a good run and fails a Write
Saturation run that declares steady state on a fresh drive (0 erases in every interval, 13 % of
the drive's LBAs tested); the audit and its marks show in `show`, in `--json` and in the
manifest; `iolab audit` writes nothing unless asked with --store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..schema_lite import errors
from .conftest import iolab

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs/schema/outcome.schema.json").read_text())
# user_gb=4: --quick keeps the drive at 4 GB and tests 0.537 GB of it, which it fills without
# ever collecting garbage; the same test on a drive --quick scales to its limit does collect
FRESH = "sim:entry-sata-compress?user_gb=4"
WHOLE = "sim:entry-sata-compress"


def run(runs: Path, target: str) -> Path:
    p = iolab("run", "wsat", "--quick", "--no-report", "-t", target, "--runs-dir", str(runs), "--json")
    assert p.returncode == 0, p.stderr
    return Path(json.loads(p.stdout)["runs"][0]["path"])


def doc(p) -> dict:
    d = json.loads(p.stdout)
    assert errors(d, SCHEMA) == [], errors(d, SCHEMA)
    assert d["exit_code"] == p.returncode
    return d


def test_audit_fails_steady_state_on_a_fresh_drive_and_passes_a_good_run(tmp_path):
    runs = tmp_path / "runs"
    fresh, whole = run(runs, FRESH), run(runs, WHOLE)

    good = iolab("audit", str(whole))
    assert good.returncode == 0, good.stdout + good.stderr
    assert "0 failed" in good.stdout and "ok   steady-evidence" in good.stdout

    before = (fresh / "manifest.json").read_bytes()
    bad = iolab("audit", str(fresh))
    assert bad.returncode == 8, bad.stdout + bad.stderr
    assert "FAIL steady-evidence" in bad.stdout and "0 erases in round(s) 8, 9, 10, 11, 12" in bad.stdout
    assert "13% of the drive's LBAs" in bad.stdout
    assert (fresh / "manifest.json").read_bytes() == before  # read-only without --store

    d = doc(iolab("audit", str(fresh), "--json"))
    [a] = d["audits"]
    assert d["command"] == "audit" and a["audit"]["failed"] == ["steady-evidence"]
    steady = a["audit"]["invariants"][0]
    assert steady["numbers"]["main"]["erases_per_round"] == [0.0] * 5
    assert a["stored"]["failed"] == ["steady-evidence"]  # the run's own end stored the same verdict

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
    fresh = run(runs, FRESH)
    m = json.loads((fresh / "manifest.json").read_text())
    m["audit"] = {}  # as a run stored before the audit existed
    (fresh / "manifest.json").write_text(json.dumps(m))
    assert "FAILED: steady-evidence" in iolab("show", str(fresh)).stdout  # audited when read
    p = iolab("audit", str(fresh), "--store")
    assert p.returncode == 8
    assert json.loads((fresh / "manifest.json").read_text())["audit"]["failed"] == ["steady-evidence"]

    missing = iolab("audit", str(tmp_path / "nothing"))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr and "no such run" in missing.stderr
