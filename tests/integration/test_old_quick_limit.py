"""A quick run stored before its profile kept --capacity-limit's text credited a copy the
user's --capacity-limit had sized to --quick on every page ("--quick simulated a copy of the drive
at this size", "--capacity-limit SIZE chooses a larger copy"). The run's own stored limit tells
them apart (store/oldscaling.py): the run is made today, then its manifest put back in the form
the older iolab wrote (no capacity_limit_given, the older texts), as a run of then would be."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from iolab.store.oldscaling import users_limit

from .conftest import iolab

pytestmark = pytest.mark.integration

COPY_NOTE = "--quick simulated a "


def _old_run(runs: Path, *limit: str) -> Path:
    p = iolab("run", "latency", "--quick", *limit, "--cell-time", "100ms", "--no-report", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stdout + p.stderr
    [run] = [d for d in runs.iterdir() if d.is_dir()]
    path = run / "manifest.json"
    m = json.loads(path.read_text())
    given = m["profile"].pop("capacity_limit_given")
    by = f", the size of --capacity-limit {given}"
    m["parameters"]["Active range"] = m["parameters"]["Active range"].replace(by, "")
    m["notes"] = [
        n.replace(f" (the size of --capacity-limit {given})", "").replace("drive would", "drive would; "
                  "--capacity-limit SIZE chooses a larger copy") if n.startswith(COPY_NOTE) and given else n
        for n in m["notes"]
    ]  # fmt: skip
    m["noncompliance"] = [n for n in m["noncompliance"] if "--capacity-limit" not in n]
    path.write_text(json.dumps(m))
    return run


def _pages(run: Path) -> str:
    p = iolab("report", str(run))
    assert p.returncode == 0, p.stdout + p.stderr
    page = next((run / "report").glob("*.html")).read_text()
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_an_old_quick_runs_own_capacity_limit_is_named_on_its_pages(tmp_path):
    run = _old_run(tmp_path / "runs", "--capacity-limit", "1GiB")
    shown = " ".join(iolab("show", str(run)).stdout.split())
    page = _pages(run)
    for said in (shown, page):
        mark = "quick profile; 0.1 s per cell instead of 60 s; a 1.074 GB copy of sim:enterprise-sas, its size set by "
        assert mark + "--capacity-limit 1GiB" in said, said
        assert "--quick simulated a 1.074 GB copy (the size of --capacity-limit 1GiB) of sim:enterprise-sas" in said
        assert "chooses a larger copy" not in said
    active = "Active range 100 %, tested whole (1.074 GB): --quick simulated a copy of the drive at this size, the "
    assert active + "size of --capacity-limit 1GiB" in page, page


def test_an_old_quick_runs_own_quick_limit_stays_credited_to_quick(tmp_path):
    run = _old_run(tmp_path / "runs")
    shown = " ".join(iolab("show", str(run)).stdout.split())
    assert "--capacity-limit SIZE chooses a larger copy" in shown and "its size set by" not in shown, shown


@pytest.mark.parametrize(
    ("limit", "named"),
    [(512 * 2**20, None), (4_000_000_000, None), (32_000_000_000, None), (2**30, "1GiB"), (3 * 2**29, "1536MiB")],
)
def test_which_stored_limits_were_the_users(limit, named):
    assert users_limit({"quick": True, "capacity_limit": limit}) == named
    # a run that stored the text, or was not quick, is named by what it stored
    assert users_limit({"quick": True, "capacity_limit": limit, "capacity_limit_given": ""}) is None
    assert users_limit({"quick": False, "capacity_limit": limit}) is None
