"""Die allocation on the simulated drive, chosen in the target as a user types it."""

from __future__ import annotations

import json

import pytest

from iolab.api.runlist import list_runs
from iolab.store.runstore import RunStore

from .conftest import iolab

pytestmark = pytest.mark.integration

SMALL = "sim:enterprise-sas?blocks_per_plane=64&pages_per_block=16&op=0.28"


def write_cell(runs, alloc: str) -> dict:
    p = iolab(
        "run", "iops", "-t", f"{SMALL}&die_alloc={alloc}", "--quick", "--cell-time", "200ms",
        "--max-rounds", "1", "--no-report", "--runs-dir", str(runs),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr + p.stdout
    [r] = list_runs(runs)
    store = RunStore.open(r.path)
    assert f"die_alloc={alloc}" in store.manifest.target["spec"]
    [cell] = [c for c in store.cells() if c.kind == "measure" and c.cell_key == "0/100 4KiB"]
    return json.loads((store.dir / cell.raw_files[0]).read_text())


def test_striped_and_least_busy_allocation_run_the_same_workload_to_different_times(tmp_path):
    least, striped = write_cell(tmp_path / "a", "least-busy"), write_cell(tmp_path / "b", "striped")
    # The raw output says which allocation the drive used.
    assert ["die_alloc", "striped"] in striped["drive"]["params"]
    assert ["die_alloc", "least-busy"] in least["drive"]["params"]
    # Same writes, other dies: the latencies differ while the write amplification barely does.
    assert least["write"]["ios"] > 0 and striped["write"]["ios"] > 0
    assert least["write"]["lat_mean_us"] != striped["write"]["lat_mean_us"]
    assert striped["counters"]["waf"] == pytest.approx(least["counters"]["waf"], rel=0.05)


def test_an_unknown_allocation_is_refused_naming_the_choices(tmp_path):
    p = iolab("run", "iops", "-t", f"{SMALL}&die_alloc=round-robin", "--quick", "--runs-dir", str(tmp_path))
    out = " ".join((p.stdout + p.stderr).split())
    assert p.returncode != 0
    assert 'die_alloc="round-robin": choose one of least-busy, striped' in out, out
    assert "Traceback" not in out and not list(tmp_path.iterdir())
