"""`iolab run --json` summarises each phase once: the document is the run's summary the table
already computed, not a second reading of every histogram (a quick iops run made 840 histogram
queries, 7 per window cell, and --json more than doubled the run's CPU time)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# `iolab` as the console script runs it, with every SQLite statement that reads the histograms
# counted (a trace callback on each connection iolab opens) and the count printed at exit
COUNTED = """
import atexit, sqlite3, sys
reads = []
connect = sqlite3.connect
def traced(*a, **k):
    con = connect(*a, **k)
    con.set_trace_callback(lambda sql: reads.append(sql) if "FROM histograms" in sql else None)
    return con
sqlite3.connect = traced
atexit.register(lambda: print("HISTOGRAM READS", len(reads), file=sys.stderr))
sys.argv = ["iolab", *sys.argv[1:]]
from iolab.cli.main import main
main()
"""


def test_run_json_reads_each_phase_histograms_once(tmp_path: Path):
    args = ["run", "iops", "--quick", "--no-report", "--max-rounds", "2", "--cell-time", "200ms"]
    res = subprocess.run(
        [sys.executable, "-c", COUNTED, *args, "--json", "--runs-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    [run] = doc["runs"]
    assert run["state"] == "complete" and run["figures"], run
    assert all(len(f["round_values"]) == len(run["phases"][0]["window"]) for f in run["figures"])
    [line] = [ln for ln in res.stderr.splitlines() if ln.startswith("HISTOGRAM READS")]
    # the table, the record and its per-round figures share one reading per phase; the run's
    # self-audit, which reads nothing the summaries keep, adds one bulk read of every cell's totals
    assert int(line.split()[-1]) <= len(run["phases"]) + 1, line
