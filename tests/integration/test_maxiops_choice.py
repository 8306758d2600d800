"""Maximum IOPS keeps the last search step that gained what its rule asks: on the simulated
entry SATA drive reads saturate at QD8 (47,605 IOPS); QD16 adds one IOPS (+0.0 %) at twice the
latency, and a 2 % rule must not choose it."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

from .conftest import iolab


def test_max_iops_runs_its_rounds_at_the_last_step_that_gained_the_minimum(tmp_path):
    p = iolab("run", "max-iops", "--quick", "-t", "sim:entry-sata-compress?user_gb=4", "--set", "thread_counts=1,2",
              "--no-report", "--runs-dir", str(tmp_path))
    assert p.returncode == 0, p.stderr
    run = Path(re.search(r"run directory: (\S+)", p.stdout).group(1))
    db = sqlite3.connect(f"file:{run}/results.db?mode=ro", uri=True)
    try:
        search = db.execute("SELECT cell_key, iops FROM cells WHERE phase='read QD search' AND kind='measure' "
                            "ORDER BY ordinal").fetchall()
        rounds = {json.loads(w)["queue_depth"] for (w,) in
                  db.execute("SELECT workload FROM cells WHERE phase='read rounds' AND kind='measure'")}
    finally:
        db.close()
    iops = dict(search)
    # the search as measured: QD16 has (marginally) the most IOPS but gained less than 2 %
    assert max(iops, key=iops.get) == "TC1/QD16" and iops["TC1/QD16"] < 1.02 * iops["TC1/QD8"]
    assert iops["TC1/QD8"] >= 1.02 * iops["TC1/QD4"]
    assert rounds == {8}
    out = " ".join(p.stdout.split())
    assert "chosen TC1/QD8" in out and "the last step that gained at least 2 %" in out
