"""The PTS tests end to end on the simulated drive, through the `iolab` command."""

from __future__ import annotations

import json
import re

import pytest

from iolab.runlist import list_runs
from iolab.store import RunStore
from iolab.summary import summarise

from .conftest import iolab

pytestmark = pytest.mark.integration

# A 400 MiB copy of the default drive (same dies, timings, link): the whole drive is tested.
SMALL = "sim:enterprise-sas?blocks_per_plane=64&pages_per_block=16&op=0.28"


def only_run(runs_dir):
    [r] = list_runs(runs_dir)
    return RunStore.open(r.path)


def test_iops_without_a_target_runs_on_the_default_simulated_drive(tmp_path):
    runs = tmp_path / "runs"
    p = iolab("run", "iops", "--quick", "--cell-time", "200ms", "--max-rounds", "5", "--no-report",
              "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr + p.stdout
    store = only_run(runs)
    assert store.manifest.state == "complete"
    # --quick on a simulated drive tests a 512 MiB copy of the default drive, whole.
    spec = store.manifest.target["spec"]
    assert spec.startswith("sim:enterprise-sas?user_gb=0.536870912&op=0.28"), spec
    assert store.manifest.target["tested_capacity"] == store.manifest.target["capacity"] <= 512 * 2**20
    assert store.manifest.versions["engine"].startswith("iolab-sim-")
    [ph] = summarise(store)
    assert len(ph.cells) == 56 and all(c.iops > 0 for c in ph.cells)
    for c in store.cells():
        assert c.raw_files and all((store.dir / f).exists() for f in c.raw_files)
        raw = json.loads((store.dir / c.raw_files[0]).read_text())
        assert raw["engine"] == "iolab-sim"


def test_wsat_on_the_simulated_drive_shows_the_write_cliff(tmp_path):
    runs = tmp_path / "runs"
    p = iolab("run", "wsat", "--target", SMALL, "--cell-time", "1s", "--wsat-capacity-multiple", "8",
              "--no-report", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr + p.stdout
    store = only_run(runs)
    cells = sorted(store.cells(kind="measure"), key=lambda c: c.round)
    iops = [c.iops for c in cells]
    fob, steady = max(iops[:3]), sum(iops[-3:]) / 3
    assert steady < 0.7 * fob, iops
    # The purge really returned the drive to FOB: the first interval runs at FOB speed.
    assert iops[0] > 0.9 * fob
    written = sum(c.write_bytes for c in cells)
    assert 8 * 400 * 2**20 <= written


def test_throughput_and_latency_on_the_simulated_hdd(tmp_path):
    runs = tmp_path / "runs"
    p = iolab("run", "latency", "--target", "sim:sas-15k-hdd", "--quick", "--cell-time", "1s", "--max-rounds", "5",
              "--no-report", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr + p.stdout
    store = only_run(runs)
    assert store.manifest.state == "complete"
    [ph] = summarise(store)
    assert all(c.iops > 0 for c in ph.cells)


def test_unknown_preset_is_a_clear_error(tmp_path):
    p = iolab("run", "iops", "--target", "sim:no-such-drive", "--quick", "--runs-dir", str(tmp_path))
    assert p.returncode != 0
    assert "no-such-drive" in p.stderr + p.stdout and "enterprise-sas" in p.stderr + p.stdout
    assert "Traceback" not in p.stderr


def test_sim_presets_lists_every_preset():
    p = iolab("sim", "presets")
    assert p.returncode == 0, p.stderr
    for name in ("enterprise-sas", "entry-sata-compress", "client-nvme-slc", "sas-15k-hdd", "sata-7200-hdd"):
        assert name in p.stdout
    # Every SSD preset lists its over-provisioning and power-loss-protection parameters.
    rows = [line.split("│")[1].strip() for line in p.stdout.splitlines() if line.startswith("│")]
    assert rows.count("op") == rows.count("plp") == 3, rows


def test_quick_wsat_on_the_default_drive_shows_the_write_cliff(tmp_path):
    """--quick simulates a small copy of the drive with its over-provisioning, so the cliff
    (FOB plateau, drop, flattening) shows within the quick run; 512 MiB of the full 400 GB
    drive never left FOB."""
    runs = tmp_path / "runs"
    p = iolab("run", "wsat", "--quick", "--no-report", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr + p.stdout
    store = only_run(runs)
    facts = store.manifest.target["facts"]
    assert re.search(r"OP 2[78]\.\d%", facts["model"]), facts["model"]
    cells = sorted(store.cells(kind="measure"), key=lambda c: c.round)
    iops = [c.iops for c in cells]
    assert len(iops) >= 6, iops
    assert iops[1] > 0.9 * iops[0], iops  # FOB plateau
    assert iops[-1] < 0.6 * iops[0], iops  # past the cliff
    drops = [a - b for a, b in zip(iops, iops[1:])]
    assert drops[-1] < 0.25 * max(drops), iops  # flattening toward steady state
    # Garbage collection ran and the drive measured its write amplification.
    last = cells[-1].counters
    assert last["gc_runs"] > 0 and 1.5 < last["waf"] < 3.5, last
    assert last["op"] == pytest.approx(0.28, abs=0.005)
    # Every report page's Device Under Test column shows the measured write amplification:
    # flash ÷ host bytes summed over the run's cells, not one cell's figure.
    from iolab.report import header
    from iolab.report.rundata import RunData

    run = RunData.load(store.dir, tmp_path)
    waf, host = run.write_amplification()
    every = store.cells(kind="measure") + store.cells(kind="precondition")
    flash = sum(c.counters["flash_write_bytes"] for c in every)
    assert host == sum(c.counters["host_write_bytes"] for c in every) > 0
    assert waf == pytest.approx(flash / host) and 1.0 < waf < last["waf"]
    item = dict(header.device_items(run))["Write amplification"]
    assert item.startswith(f"{waf:.2f} measured over "), item
