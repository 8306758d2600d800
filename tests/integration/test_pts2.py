"""The PTS 2.0 tests beyond IOPS/TP/LAT/WSAT with real fio on a file (quick, short cells):
Cross Stimulus Recovery, DIRTH on a small grid, and an optional WSAT workload."""

from __future__ import annotations

import pytest

from iolab.api.runlist import list_runs
from iolab.core.units import duration
from iolab.figures.compare.pts2 import chosen_points, demand_points, xsr_result
from iolab.figures.summary import summarise
from iolab.store.runstore import RunStore

from .conftest import iolab

pytestmark = pytest.mark.integration

QUICK = ["--quick", "--cell-time", "200ms", "--no-report"]


def only_run(runs_dir):
    [r] = list_runs(runs_dir)
    return RunStore.open(r.path)


def run_on_file(scratch, test: str, size: str, *args: str):
    """`iolab run TEST` quick on a file; the command's output and its one stored run."""
    runs = scratch / "runs"
    p = iolab("run", test, "--target", f"file:{scratch}/drive.img?size={size}", *QUICK, *args, "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr + p.stdout
    return p, only_run(runs)


def test_xsr_quick_on_a_file(scratch):
    p, store = run_on_file(
        scratch, "xsr", "128MiB", "--set", "group1_time=1s", "--set", "group2_time=600ms", "--set", "group3_time=1s"
    )
    assert store.manifest.state == "complete" and not store.manifest.compliant
    res = xsr_result(summarise(store))
    # each group ends at its time budget (wall time, fio's start-up included) or its 5/3/5 intervals
    # (at least one: on a loaded machine fio's start-up can take a 600 ms budget whole)
    assert all(1 <= len(g.rows) <= n for g, n in zip(res.groups, (5, 3, 5))), [len(g.rows) for g in res.groups]
    assert all(m > 0 for g in res.groups for m in g.mbps)
    # group 3's time axis starts where group 2 ended
    assert res.groups[2].start_min == pytest.approx(res.groups[0].minutes[-1] + res.groups[1].minutes[-1])
    assert "group 3: throughput per interval" in p.stdout
    # a group its time budget ended says how long its intervals really ran (fio's runtime, the
    # drain of its IO in flight included), never just the budget
    for ph in summarise(store):
        if "time budget" in ph.phase.stop_reason:
            ran = sum(c.runtime_s for c in store.cells(ph.phase.name))
            assert f"ran {duration(ran)}" in ph.phase.stop_reason, (ran, ph.phase.stop_reason)


def test_dirth_quick_on_a_file_measures_the_grid_and_cpu(scratch):
    p, store = run_on_file(
        scratch, "dirth", "128MiB", "--max-rounds", "1", "--set", "threads=1,2", "--set", "depths=1,4"
    )
    phases = summarise(store)
    assert [ph.phase.name for ph in phases] == ["preconditioning", "demand variation", "operating points"]
    assert {(q.threads, q.queue_depth) for q in demand_points(phases)} == {(1, 1), (1, 4), (2, 1), (2, 4)}
    assert chosen_points(phases).min.label() == "TC1/QD1"
    grid = [c for c in store.cells("demand variation") if c.cell_key.startswith("TC")]
    assert grid and all(c.counters["usr_cpu_pct"] >= 0 and c.counters["sys_cpu_pct"] >= 0 for c in grid)
    assert any(c.counters["usr_cpu_pct"] + c.counters["sys_cpu_pct"] > 0 for c in grid)
    assert "steady state" in p.stdout.lower()  # one round: the verdict says it was not reached
    # the Min point's test workload ran at TC1/QD1 and fio's json+ bins are its histogram
    [low] = [c for c in store.cells("operating points") if c.cell_key == "MinIOPS TC1/QD1"]
    assert (low.workload["threads"], low.workload["queue_depth"]) == (1, 1)
    assert store.histogram(low.id).total == low.read_ios + low.write_ios > 0


def test_wsat_optional_workload_quick_on_a_file(scratch):
    _, store = run_on_file(scratch, "wsat", "64MiB", "--set", "workload=vod", "--wsat-max-time", "1s")
    [ph] = summarise(store)
    # every interval, partial or not: a file this small can reach the 256 MiB budget in two
    # intervals that the budget both ended (a first one capped at half of it), leaving no window
    assert ph.rows and all(r.cell_key == "90/10 128KiB" for r in ph.rows)
    assert all(r.read_iops > r.write_iops > 0 for r in ph.rows)


def test_cbw_quick_on_a_file_runs_the_skewed_composite(scratch):
    p, store = run_on_file(scratch, "cbw", "128MiB", "--max-rounds", "1", "--set", "threads=1,2", "--set", "depths=1,2")
    phases = summarise(store)
    assert len(demand_points(phases)) == 4 and all(q.iops > 0 for q in demand_points(phases))
    [cell] = [c for c in store.cells("demand variation") if c.cell_key == "TC1/QD1"]
    job = next(f for f in cell.raw_files if f.endswith(".fio"))
    text = (store.dir / job).read_text()
    assert "random_distribution=zoned:50/5:30/15:20/80" in text and "bssplit=512/4:" in text
    assert cell.read_iops > 0 and cell.write_iops > 0
