"""What a simulated run does with its files, watched from outside as `iolab run` runs (Python's
audit events, from a sitecustomize on its PYTHONPATH; iolab's code is not touched): live.json is
replaced once a cell (it was written as the cell started and again at its first report, which a
simulated drive gives at once), and each raw JSON output is opened again only by the run's
self-audit, which derives the stored figures from it (the store re-read each to record it whole,
and the power model at the run's end, though the engine had parsed it whole from the text it wrote)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess

import pytest

from .conftest import IOLAB, SMALL_SIM

pytestmark = pytest.mark.integration

# counts, for this process only (IOLAB_TEST_IO_LOG), each replace onto live.json and each open of
# a raw/*.json for reading; written at exit
SITECUSTOMIZE = """
import atexit, json, os, sys
log = os.environ.pop("IOLAB_TEST_IO_LOG", None)
if log:
    seen = {"live": 0, "raw_reads": []}
    def hook(event, args):
        if event == "os.rename" and str(args[1]).endswith("/live.json"):
            seen["live"] += 1
        elif event == "open" and isinstance(args[0], str) and "/raw/" in args[0] and args[0].endswith(".json"):
            mode, flags = args[1], args[2]
            reading = ("r" in mode and "+" not in mode) if isinstance(mode, str) else (flags & 3) == os.O_RDONLY
            if reading:
                seen["raw_reads"].append(args[0])
    sys.addaudithook(hook)
    atexit.register(lambda: open(log, "w").write(json.dumps(seen)))
"""


def test_a_simulated_run_writes_live_json_once_a_cell_and_reads_its_raw_output_only_to_audit_it(tmp_path):
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE)
    log, runs = tmp_path / "io.json", tmp_path / "runs"
    env = dict(os.environ, PYTHONPATH=str(hook), IOLAB_TEST_IO_LOG=str(log))
    args = ["run", "latency", "--quick", "--cell-time", "1s", "--max-rounds", "1", "--no-report"]
    p = subprocess.run(
        [*IOLAB, *args, "-t", SMALL_SIM, "--runs-dir", str(runs)], capture_output=True, text=True, env=env, timeout=300
    )
    assert p.returncode == 0, p.stdout + p.stderr
    seen = json.loads(log.read_text())
    (run,) = runs.iterdir()
    with sqlite3.connect(run / "results.db") as db:
        (cells,) = db.execute("SELECT count(*) FROM cells").fetchone()
        (recorded,) = db.execute("SELECT count(*) FROM raw_stats").fetchone()
    assert cells > 1 and seen["live"] == cells, (seen["live"], cells)
    # read once each, by the run's self-audit alone (raw-figures derives the stored figures again
    # from the files on disk: that read is its point); the store and the power model read none
    reads = seen["raw_reads"]
    assert len(reads) == len(set(reads)) <= cells, sorted(reads)[:6]
    assert recorded == cells  # each still recorded whole, as the audit takes it
    assert (run / "power.json").is_file()  # the power model modelled every cell from what was kept
    power = json.loads((run / "power.json").read_text())
    assert len(power["cells"]) == cells and all(c["energy_mj"] > 0 for c in power["cells"])
