"""PTS Host Idle Recovery (A.9): quick with real fio on a file (wall-time idles kept tiny), and
its shape on the simulated drive, whose background GC cleans while the host idles."""

from __future__ import annotations

import pytest

from iolab.figures.compare.hir import hir_result
from iolab.figures.summary import summarise

from .conftest import iolab
from .test_pts2 import only_run, run_on_file

pytestmark = pytest.mark.integration

TINY = (
    "--set",
    "pc_round_intervals=1",
    "--max-rounds",
    "5",
    "--set",
    "bursts=2",
    "--set",
    "burst_time=200ms",
    "--set",
    "wait_states=10ms,50ms",
    "--set",
    "baseline_time=400ms",
)


def test_hir_quick_on_a_file(scratch):
    p, store = run_on_file(scratch, "hir", "64MiB", *TINY)
    assert store.manifest.state == "complete" and not store.manifest.compliant
    res = hir_result(summarise(store))
    assert [w.idle_s for w in res.waits] == [0.01, 0.05]
    assert all(len(w.bursts) == 2 and len(w.baseline) == 2 for w in res.waits)
    # every burst was preceded by its idle, the baseline was not
    assert [r.idle_before_s for w in res.waits for r in w.bursts] == [0.01, 0.01, 0.05, 0.05]
    assert all(r.idle_before_s is None for w in res.waits for r in w.baseline)
    assert res.steady_iops and all(w.burst_iops > 0 and w.baseline_iops > 0 for w in res.waits)
    assert "wait 0.05 s: 2 cells, mean" in p.stdout


# write_core_us=0: the flash, not the default's controller write time, limits the fresh rate,
# so what an idle's cleaning buys shows well above the baseline.
# without the periodic GC pass (enterprise-sas has one every 150 s): its walk frees blocks ahead of
# foreground GC, so the burst after an idle would not be the idle's background GC alone
SIM = "sim:enterprise-sas?blocks_per_plane=64&pages_per_block=16&op=0.28&bg_reserve_pct=50&write_core_us=0&gc_pass_period_ms=0"
# Preconditioning long enough for the small drive to reach its garbage-collected level; short
# bursts so the cleaning an idle buys is not diluted; virtual idles cost no wall time.
SHAPE = (
    "--quick",
    "--cell-time",
    "200ms",
    "--no-report",
    "--set",
    "pc_round_intervals=10",
    "--set",
    "bursts=5",
    "--set",
    "burst_time=50ms",
    "--set",
    "wait_states=0.05,5,30",
    "--set",
    "baseline_time=1s",
)


def hir_on(target: str, runs):
    p = iolab("run", "hir", "--target", target, *SHAPE, "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr + p.stdout
    return hir_result(summarise(only_run(runs)))


def test_hir_on_the_simulated_drive_recovers_during_idle_only_with_background_gc(tmp_path):
    on = hir_on(SIM, tmp_path / "on")
    # bg_reserve_pct acts only with background GC, so the drive without it does without it (refused beside bg_gc=off)
    off = hir_on(SIM.replace("&bg_reserve_pct=50", "") + "&bg_gc=off", tmp_path / "off")
    for res in (on, off):
        assert res.pc.steady and res.steady_iops > 0
    # Measured: with background GC 50k (0.05 s idle), 69k, 67k IOPS against a 42k baseline;
    # without it 46k at every idle. A burst starts with an empty queue, so even without GC it
    # is some 10 % over the continuous baseline: the idle's cleaning is what goes beyond that.
    short, *longer = on.waits
    for w in longer:
        assert w.burst_iops > 1.4 * w.baseline_iops and w.burst_iops > 1.2 * short.burst_iops, (w, short)
        assert on.recovery(w) > 1.4
    short, *longer = off.waits
    for w in longer:
        assert w.burst_iops < 1.2 * w.baseline_iops and w.burst_iops < 1.05 * short.burst_iops
        assert off.recovery(w) < 1.2
