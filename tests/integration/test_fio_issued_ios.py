"""A cell's IO count is what its latencies were measured from. fio's `total_ios` counts the IOs
issued after the warm-up (fio's "issued rwts"), while its latency histogram and io_bytes also
hold an IO issued in the warm-up and completed after it: a rate-limited QD 1 demand step on a
file held 1,001 latencies and 1,001 × 4 KiB with total_ios 1,000, and its run's self-audit
failed percentile-samples ("its latency histogram holds 1,001 IOs, the cell 1,000"), which put
AUDIT FAILED on every page of a characterisation report of a sound run. A fio that reports its
real output with one IO fewer issued (that case, in every cell) stands in for the timing."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from .conftest import fake_fio, iolab

pytestmark = pytest.mark.integration

# runs the real fio, then takes one IO off each direction's issued count in its JSON output, as
# fio reports an IO that was in flight when its warm-up ended
ONE_IN_FLIGHT = r"""
out=$(mktemp)
{real} "$@" > "$out"
rc=$?
{python} - "$out" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
cut = text.rfind('{{\n  "fio version"')  # fio's final report is its stdout's last object
if cut < 0:
    sys.stdout.write(text)
    sys.exit(0)
report = json.loads(text[cut:])
for job in report["jobs"]:
    for side in ("read", "write"):
        if job[side]["total_ios"] > 1:
            job[side]["total_ios"] -= 1
sys.stdout.write(text[:cut] + json.dumps(report, indent=2) + "\n")
PY
rm -f "$out"
exit $rc
"""


def test_an_io_in_flight_at_the_warm_ups_end_is_counted_once_and_the_audit_passes(scratch, tmp_path):
    import shutil
    import sys

    body = ONE_IN_FLIGHT.format(real=shutil.which("fio"), python=sys.executable)
    fake = fake_fio(scratch, body)
    env = {"PATH": f"{fake.parent}:{os.environ['PATH']}"}
    runs = tmp_path / "runs"
    p = iolab(
        "run",
        "qos",
        "--quick",
        "--cell-time",
        "200ms",
        "--set",
        "rounds=1",
        "-q",
        "--no-report",
        "--json",
        "-t",
        f"file:{scratch / 'inflight.img'}?size=16MiB",
        "--runs-dir",
        str(runs),
        env=env,
    )
    assert p.returncode == 0, p.stderr
    run = Path(json.loads(p.stdout)["runs"][0]["path"])
    outputs = sorted((run / "raw").glob("*-r01-*.json"))
    assert outputs, sorted(x.name for x in (run / "raw").iterdir())
    for out in outputs:  # the fake did its part: fewer issued than measured
        side = next(s for j in json.loads(out.read_text())["jobs"] for s in (j["read"], j["write"]) if s["total_ios"])
        assert side["total_ios"] == side["lat_ns"]["N"] - 1, out
    audit = iolab("audit", str(run))
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert "ok   percentile-samples" in audit.stdout and "ok   raw-output" in audit.stdout, audit.stdout


def as_stored_before(run: Path, copy: Path, less: int = 0) -> Path:
    """A copy of `run` as iolab stored it before a cell's IO count became its latencies': each
    cell's read and write IOs fio's issued ones (its raw JSON's total_ios, `less` fewer reads)."""
    shutil.copytree(run, copy)
    db = sqlite3.connect(copy / "results.db")
    for cid, raw in db.execute("SELECT id, raw_files FROM cells").fetchall():
        jobs = [j for f in json.loads(raw) if f.endswith(".json") for j in json.loads((copy / f).read_text())["jobs"]]
        issued = [sum(j[side]["total_ios"] for j in jobs) for side in ("read", "write")]
        db.execute("UPDATE cells SET read_ios = ?, write_ios = ? WHERE id = ?", (issued[0] - less, issued[1], cid))
    # nor was a round whose logs held no line stored as one row then (fio_parse.whole_round):
    # its only row, ending at the round's runtime, goes
    db.execute(
        "DELETE FROM series WHERE cell_id IN (SELECT s.cell_id FROM series s JOIN cells c ON c.id = s.cell_id"
        " GROUP BY s.cell_id HAVING COUNT(*) = 1 AND MAX(s.t_s) = MAX(c.runtime_s))"
    )
    db.commit()
    db.close()
    return copy


def test_a_run_stored_with_fios_issued_count_is_judged_by_that_rule(scratch, tmp_path):
    # runs stored before the change kept total_ios as the cell's count (one IO fewer than its
    # histogram here): no field of theirs says so, the raw output does; a count neither rule
    # gives still fails
    import shutil as sh
    import sys

    body = ONE_IN_FLIGHT.format(real=sh.which("fio"), python=sys.executable)
    env = {"PATH": f"{fake_fio(scratch, body).parent}:{os.environ['PATH']}"}
    target = f"file:{scratch / 'older.img'}?size=16MiB"
    args = ("--quick", "--cell-time", "200ms", "--set", "rounds=1", "-q", "--no-report", "--json", "-t", target)
    p = iolab("run", "qos", *args, "--runs-dir", str(tmp_path / "runs"), env=env)
    assert p.returncode == 0, p.stderr
    run = Path(json.loads(p.stdout)["runs"][0]["path"])
    older = as_stored_before(run, tmp_path / "older" / run.name)
    audit = iolab("audit", str(older))
    said = " ".join(audit.stdout.split())
    assert audit.returncode == 0, said
    assert "ok percentile-samples: 2 cells with latency histograms checked: 2 cells stored with fio's issued" in said
    assert "ok raw-figures" in said and "stored with fio's issued IO count" in said.split("raw-figures")[1], said
    wrong = iolab("audit", str(as_stored_before(run, tmp_path / "wrong" / run.name, less=1)))
    said = " ".join(wrong.stdout.split())
    assert wrong.returncode == 8, said
    assert "FAIL percentile-samples: read rounds round 1 RND 4KiB R QD1: its latency histogram holds" in said, said
    assert "FAIL raw-figures: read rounds round 1 RND 4KiB R QD1: read_ios stored" in said, said
