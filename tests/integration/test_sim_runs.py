"""The PTS tests end to end on the simulated drive, through the `iolab` command."""

from __future__ import annotations

import json
import re

import pytest

from iolab.api.runlist import list_runs
from iolab.core.units import counted
from iolab.figures.summary import summarise
from iolab.store.runstore import RunStore

from .conftest import iolab

pytestmark = pytest.mark.integration

# A 400 MiB copy of the default drive (same dies, timings, link): the whole drive is tested.
SMALL = "sim:enterprise-sas?blocks_per_plane=64&pages_per_block=16&op=0.28"


def only_run(runs_dir):
    [r] = list_runs(runs_dir)
    return RunStore.open(r.path)


def test_iops_without_a_target_runs_on_the_default_simulated_drive(tmp_path):
    runs = tmp_path / "runs"
    p = iolab(
        "run", "iops", "--quick", "--cell-time", "200ms", "--max-rounds", "5", "--no-report", "--runs-dir", str(runs)
    )
    assert p.returncode == 0, p.stderr + p.stdout
    store = only_run(runs)
    assert store.manifest.state == "complete"
    # --quick on a simulated drive tests a 512 MiB copy of the default drive, whole.
    spec = store.manifest.target["spec"]
    assert spec.startswith("sim:enterprise-sas?user_gb=0.536870912&op=0.28"), spec
    assert store.manifest.target["tested_capacity"] == store.manifest.target["capacity"] <= 512 * 2**20
    assert store.manifest.versions["engine"].startswith("iolab-sim-")
    assert any(n.startswith("--quick simulated a 0.537 GB copy of sim:enterprise-sas") for n in store.manifest.notes)
    [ph] = summarise(store)
    assert len(ph.cells) == 56 and all(c.iops > 0 for c in ph.cells)
    for c in store.cells():
        assert c.raw_files and all((store.dir / f).exists() for f in c.raw_files)
        raw = json.loads((store.dir / c.raw_files[0]).read_text())
        assert raw["engine"] == "iolab-sim"


def test_quick_copies_a_simulated_drive_whose_target_gives_its_size_and_says_so(tmp_path):
    # before: --quick kept the 4 GB drive and tested 0.537 GB of it, whose fresh plateau it called steady
    runs = tmp_path / "runs"
    spec = "sim:enterprise-sas?user_gb=4"
    p = iolab(
        "run", "iops", "--target", spec, "--quick", "--cell-time", "100ms", "--max-rounds", "1", "--no-report",
        "--runs-dir", str(runs),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr + p.stdout
    m = only_run(runs).manifest
    assert m.target["copy_of"] == spec and m.target["capacity"] == pytest.approx(512 * 2**20, rel=0.01)
    assert m.target["tested_capacity"] == m.target["capacity"]
    assert not any("not the drive's steady state" in n for n in m.noncompliance)
    out = " ".join(p.stdout.split())
    assert f"note: --quick simulated a 0.537 GB copy of {spec} (its size as the target gives it: user_gb=4)" in out


def test_wsat_on_the_simulated_drive_shows_the_write_cliff(tmp_path):
    runs = tmp_path / "runs"
    p = iolab(
        "run",
        "wsat",
        "--target",
        SMALL,
        "--cell-time",
        "1s",
        "--wsat-capacity-multiple",
        "8",
        "--no-report",
        "--runs-dir",
        str(runs),
    )
    assert p.returncode == 0, p.stderr + p.stdout
    store = only_run(runs)
    cells = sorted(store.cells(kind="measure"), key=lambda c: c.round)
    iops = [c.iops for c in cells]
    fob, steady = max(iops[:3]), sum(iops[-3:]) / 3
    assert steady < 0.7 * fob, iops
    # The purge really returned the drive to FOB: the first interval runs at FOB speed.
    assert iops[0] > 0.9 * fob
    written = sum(c.write_bytes for c in cells)
    assert written >= 8 * 400 * 2**20


def test_throughput_and_latency_on_the_simulated_hdd(tmp_path):
    runs = tmp_path / "runs"
    p = iolab(
        "run",
        "latency",
        "--target",
        "sim:sas-15k-hdd",
        "--quick",
        "--cell-time",
        "1s",
        "--max-rounds",
        "5",
        "--no-report",
        "--runs-dir",
        str(runs),
    )
    assert p.returncode == 0, p.stderr + p.stdout
    store = only_run(runs)
    assert store.manifest.state == "complete"
    [ph] = summarise(store)
    assert len(ph.cells) == 9 and all(c.iops > 0 for c in ph.cells)  # 3 mixes × 3 block sizes


def test_unknown_preset_is_a_clear_error(tmp_path):
    p = iolab("run", "iops", "--target", "sim:no-such-drive", "--quick", "--runs-dir", str(tmp_path))
    assert p.returncode != 0
    assert "no-such-drive" in p.stderr + p.stdout and "enterprise-sas" in p.stderr + p.stdout
    assert "Traceback" not in p.stderr


def test_sim_presets_lists_every_preset():
    from iolab.engines.sim import list_presets

    p = iolab("sim", "presets", "--detail")
    assert p.returncode == 0, p.stderr
    presets = list_presets()
    assert {q.name for q in presets} >= {
        "enterprise-sas",
        "entry-sata-compress",
        "client-nvme-slc",
        "sas-15k-hdd",
        "sata-7200-hdd",
    }
    for q in presets:
        assert f"{q.name} — " in p.stdout
        # every parameter of the preset is printed as a row of its table, with its value
        for k, v in q.parameters:
            assert re.search(rf"│ {re.escape(k)}\s+│ {re.escape(str(v))}\s+│", p.stdout), (q.name, k, v)
    # every SSD preset shows its over-provisioning setting
    ssds = [q for q in presets if q.kind == "ssd"]
    assert ssds and len(re.findall(r"│ op\s+│", p.stdout)) == len(ssds)
    # ... and its power-loss-protection setting
    assert len(re.findall(r"│ plp\s+│", p.stdout)) == len(ssds)


def test_quick_wsat_on_the_default_drive_shows_its_fall(tmp_path):
    """--quick simulates a small copy of the drive with its over-provisioning, so the fall
    (FOB plateau, then a gentle bank to steady state) shows within the quick run; 512 MiB of
    the full 400 GB drive never left FOB."""
    runs = tmp_path / "runs"
    p = iolab("run", "wsat", "--quick", "--no-report", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr + p.stdout
    store = only_run(runs)
    facts = store.manifest.target["facts"]
    assert re.search(r"OP 2[78]\.\d%", facts["model"]), facts["model"]
    cells = sorted(store.cells(kind="measure"), key=lambda c: c.round)
    iops = [c.iops for c in cells]
    assert len(iops) >= 6, iops
    assert iops[1] > 0.99 * iops[0], iops  # FOB plateau
    assert iops[-1] < 0.93 * iops[0], iops  # past the fall (the enterprise drive banks ~13 %)
    assert all(b > 0.9 * a for a, b in zip(iops, iops[1:])), iops  # gently
    assert max(iops[-3:]) < 1.1 * min(iops[-3:]), iops  # near its steady level
    # Garbage collection ran and the drive measured its write amplification.
    last = cells[-1].counters
    assert last["gc_runs"] > 0 and 1.5 < last["waf"] < 3.5, last
    assert last["op"] == pytest.approx(0.28, abs=0.005)
    # The report's Device Under Test column (page 1) shows the measured write amplification:
    # flash ÷ host bytes summed over the run's cells, not one cell's figure.
    from iolab.pages.report import header
    from iolab.pages.report.rundata import RunData

    run = RunData.load(store.dir, tmp_path)
    waf, host = run.write_amplification()
    every = store.cells(kind="measure") + store.cells(kind="precondition")
    flash = sum(c.counters["flash_write_bytes"] for c in every)
    assert host == sum(c.counters["host_write_bytes"] for c in every) > 0
    assert waf == pytest.approx(flash / host) and 1.0 < waf < last["waf"]
    item = dict(header.device_items(run))["Write amplification"]
    assert item.startswith(f"{waf:.2f} measured over ") and "the whole run" in item, item
    # Run Details gives the measurement window's figure (past the cliff, higher) beside the
    # whole phase's, each from its own cells' counters.
    from iolab.pages.report.rundata import window_rows
    from iolab.pages.report.sections import details_pages

    ph = run.phases[0]
    win = run.write_amplification(window_rows(ph))
    whole = run.write_amplification(ph.rows)
    assert win[0] > whole[0] and win[1] < whole[1], (win, whole)
    text = " ".join(
        str(v) for p in details_pages(run) for t in p.blocks if hasattr(t, "rows") for row in t.rows for v in row
    )
    assert f"{win[0]:.2f} over the measurement window" in text and f"{whole[0]:.2f} over the whole phase" in text, text


def test_wsat_budget_end_on_the_sim_cuts_short_only_what_is_shorter_than_a_cell(tmp_path):
    # On SMALL at 1 s intervals the 6.3× budget is 1.7 intervals from its end after interval 18:
    # interval 19 runs its whole second, and the budget's end (run/budget.py) cuts short only the
    # last 0.7 of an interval, a capped interval and a final one by bytes. It once made the last
    # 1.7 one interval by bytes, longer than a cell, called partial and left out of the minimum.
    runs = tmp_path / "runs"
    p = iolab(
        "run",
        "wsat",
        "--target",
        SMALL,
        "--cell-time",
        "1s",
        "--wsat-capacity-multiple",
        "6.3",
        "--no-report",
        "--runs-dir",
        str(runs),
    )
    assert p.returncode == 0, p.stderr + p.stdout
    store = only_run(runs)
    cells = store.cells()
    full = [c for c in cells if not c.partial]
    cut = cells[len(full) :]
    assert full == cells[: len(full)] and all(0.98 <= c.runtime_s < 1.05 for c in full), [c.runtime_s for c in cells]
    # what the budget ended is shorter than the cell time, reported with its true length and rate
    # (IOs over that length), close to the interval before (no fake jump or drop)
    last = cells[-1]
    assert cut and last.workload["duration_s"] is None and all(c.runtime_s < 0.98 for c in cut), cut
    for c in cut:
        assert c.iops == pytest.approx(c.write_ios / c.runtime_s, rel=1e-3)
        assert 0.9 * full[-1].iops < c.iops < 1.1 * full[-1].iops, [round(c.iops) for c in cells]
    # ... and it is not counted as a complete round
    said = f"{counted(len(full), 'complete round')} and round {cut[0].round} (partial, "
    assert said in " ".join(p.stdout.split()), p.stdout
    budget = int(6.3 * 400 * 2**20)  # exactly, to whole blocks per thread
    assert budget <= sum(c.write_bytes for c in cells) < budget + 64 * 4096
    [ph] = summarise(store)
    assert all(c.round not in ph.window and all(c.round not in v.rounds for v in ph.verdicts) for c in cut)
    assert ph.window[-1] == full[-1].round  # the last whole interval is in the window


def test_runs_gives_each_non_compliant_run_its_own_reason(tmp_path):
    runs = tmp_path / "runs"
    p = iolab(
        "run",
        "wsat",
        "--target",
        SMALL,
        "--cell-time",
        "60s",
        "--wsat-capacity-multiple",
        "1",
        "--purge",
        "none",
        "--no-report",
        "--runs-dir",
        str(runs),
    )
    assert p.returncode == 0, p.stderr + p.stdout
    p = iolab("runs", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr
    [row] = [line for line in p.stdout.splitlines() if "wsat" in line]
    # a full-length run whose only fault is the skipped purge: not "scaled down"
    assert "no: no purge (--purge none)" in row and "scaled down" not in row, row


def test_xsr_on_the_simulated_drive_shows_the_transition_and_the_recovery(tmp_path):
    """SEQ 1024 KiB W → RND 8 KiB W → SEQ 1024 KiB W on a small copy of the default drive: the
    random group runs at a fraction of the sequential throughput, and group 3 climbs back to
    group 1's level some minutes in (the recovery time the report prints)."""
    from iolab.figures.compare.pts2 import xsr_result

    runs = tmp_path / "runs"
    p = iolab("run", "xsr", "--quick", "--no-report", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr + p.stdout
    res = xsr_result(summarise(only_run(runs)))
    g1, g2, g3 = res.groups
    assert g2.final_mbps() < 0.6 * g1.mean_mbps  # the transition
    assert g3.mbps[0] < 0.9 * g1.mean_mbps  # group 3 starts in group 2's drive state …
    assert res.recovered.minutes is not None and res.recovered.interval > 1  # … and recovers later
    assert res.settled.minutes is not None


def test_xsr_with_short_cells_holds_each_groups_time_budget_and_says_what_ran(tmp_path):
    """A 100 ms SEQ 1024 KiB W interval at TC4/QD32 lasts until its 128 MiB in flight is written
    (as a fio job's runtime does): about 0.4 s of virtual time on this drive. A group's time budget
    checked only for being spent was passed by most of an interval (1.18 s of a 1 s group 1); no
    interval now starts that what is left of the budget cannot hold by what an interval took so
    far, and the group's decision says the budget and what ran. The quick note claims no count."""
    from iolab.core.units import duration

    runs = tmp_path / "runs"
    times = ("--set", "group1_time=1s", "--set", "group2_time=300ms", "--set", "group3_time=1s")
    p = iolab("run", "xsr", "--quick", "--cell-time", "100ms", *times, "--no-report", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr + p.stdout
    store = only_run(runs)
    phases = {ph.phase.name: ph for ph in summarise(store)}
    decided = {d["phase"]: d for d in store.manifest.decisions}
    for group, budget in (("group 1", 1.0), ("group 2", 0.3), ("group 3", 1.0)):
        cells = store.cells(group)
        elapsed = sum(c.runtime_s for c in cells)
        drains = sorted(c.runtime_s - 0.1 for c in cells)
        # an interval and the drain to expect: the most, a single longest set aside from three on
        most = 0.1 + (drains[-1] if len(drains) < 3 else drains[-2])
        # the budget holds, and the next interval, at what the intervals took, would not have fitted
        assert elapsed <= budget < elapsed + most, (group, [c.runtime_s for c in cells])
        want = f"ran {duration(elapsed)} of its {duration(budget)} time budget in {len(cells)} interval"
        assert want in phases[group].phase.stop_reason and f"the next would take {duration(most)}" in (
            phases[group].phase.stop_reason
        ), phases[group].phase.stop_reason
        d = decided[group]
        assert d["rule"] == {"name": "time-budget", "seconds": budget} and d["chosen"]["rounds"] == len(cells), d
    g1 = store.cells("group 1")
    assert all(c.runtime_s > 2 * 0.1 for c in g1) and len(g1) == 2  # the drain outlasts the 100 ms of submission
    out = " ".join(p.stdout.split())
    assert "group 1 (after round 2): time-budget(seconds=1.0): ran " in out, out
    assert "past its" not in out and "Quick run: groups of 1.00 s, 0.300 s, 1.00 s" in out


def test_dirth_on_the_simulated_drive_rises_with_demand_and_picks_its_points(tmp_path):
    from iolab.figures.compare.pts2 import chosen_points, demand_points

    runs = tmp_path / "runs"
    p = iolab(
        "run",
        "dirth",
        "--quick",
        "--no-report",
        "--set",
        "threads=1,4,32",
        "--set",
        "depths=1,4,32",
        "--runs-dir",
        str(runs),
    )
    assert p.returncode == 0, p.stderr + p.stdout
    assert "MaxIOPS (highest IOPS with ART < 5 ms): TC" in p.stdout
    phases = summarise(only_run(runs))
    pts = {(q.threads, q.queue_depth): q for q in demand_points(phases)}
    assert len(pts) == 9
    for tc in (1, 4, 32):  # IOPS rise with the queue depth at every thread count …
        assert pts[tc, 1].iops < pts[tc, 4].iops <= 1.05 * pts[tc, 32].iops
    assert pts[1, 1].iops < pts[4, 4].iops < 1.05 * pts[32, 32].iops  # … and with the total OIO
    ops = chosen_points(phases)
    assert ops.max.iops > ops.mid.iops > ops.min.iops
    assert ops.max.art_us > ops.mid.art_us > ops.min.art_us
    assert ops.max.art_us < 5_000
    # the histogram phase at the chosen points, as measured there: Max is the busiest and slowest
    store = only_run(runs)
    at = {c.cell_key.split()[0]: c for c in store.cells("operating points") if not c.cell_key.endswith("pre-write")}
    assert set(at) == {"MaxIOPS", "MidIOPS", "MinIOPS"}
    assert at["MaxIOPS"].iops > at["MidIOPS"].iops > at["MinIOPS"].iops
    assert (
        at["MaxIOPS"].lat_mean_us > at["MidIOPS"].lat_mean_us and at["MaxIOPS"].lat_mean_us > at["MinIOPS"].lat_mean_us
    )
    assert all(store.histogram(c.id).total == c.read_ios + c.write_ios for c in at.values())
    [decision] = store.manifest.decisions
    # beside the points, how many points the cutoff left to choose Max and Mid from
    chosen = {n: f"TC{d['threads']}/QD{d['queue_depth']}" for n, d in decision["chosen"].items() if isinstance(d, dict)}
    assert decision["chosen"]["points_under_cutoff"] == sum(p.art_us < 5_000 for p in pts.values())
    assert chosen == {n: p.label() for n, p in ops.named()}
    assert all(at[n].cell_key == f"{n} {label}" for n, label in chosen.items())
    # the decision rests on the demand-variation window the report shows
    assert all(abs(p.iops - pts[p.threads, p.queue_depth].iops) <= 1e-6 * p.iops for _, p in ops.named())


def test_throughput_shows_the_read_steady_state_beside_the_write_one(tmp_path):
    runs = tmp_path / "runs"
    p = iolab(
        "run", "throughput", "--quick", "--cell-time", "200ms", "--max-rounds", "5", "--json", "--runs-dir", str(runs)
    )
    assert p.returncode == 0, p.stderr + p.stdout
    [record] = json.loads(p.stdout)["runs"]
    for phase in record["phases"]:
        bs = phase["name"].split()[-1]
        roles = {t["variable"]: t["decides"] for t in phase["tracking"]}
        assert roles == {f"Write MB/s SEQ {bs}": True, f"Read MB/s SEQ {bs}": False}
    store = only_run(runs)
    shown = iolab("show", str(store.dir))
    assert shown.returncode == 0, shown.stderr
    out = " ".join(shown.stdout.split())
    assert "Read MB/s SEQ 1024KiB 1–5" in out and "Read MB/s SEQ 128KiB 1–5" in out
    assert "* shown only: its own steady-state determination over the window" in out
    html = (store.dir / "report" / f"{store.dir.name}.html").read_text()
    assert "Steady State Measurement Window — Read MB/s SEQ 128KiB" in html


def test_one_long_drain_does_not_end_an_xsr_group_an_interval_early(tmp_path):
    """Group 3 starts in group 2's drive state: its first interval drains 0.77 s paying group 2's
    garbage collection, every later one about 0.3 s. At the most drain measured, the 20.3 s group
    stopped after 14 intervals (18.8 s: the next 'would take 1.77 s'); expecting the drain the
    intervals agree on, it runs the 15th, and still within its budget."""
    runs = tmp_path / "runs"
    p = iolab(
        "run", "xsr", "--quick", "-t", "sim:enterprise-sas?user_gb=1", "--set", "group3_time=20.3s",
        "--no-report", "--runs-dir", str(runs),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr + p.stdout
    cells = only_run(runs).cells("group 3")
    length = cells[0].workload["duration_s"]
    drains = [c.runtime_s - length for c in cells]
    before_last = sum(c.runtime_s for c in cells[:-1])
    # one drain stands alone: the longest is the first, well above every other
    assert drains[0] > 1.5 * max(drains[1:]), drains
    # the last interval began where the most drain measured said it would not fit ...
    assert before_last + length + max(drains[:-1]) > 20.3, (before_last, drains)
    # ... and the budget held
    assert sum(c.runtime_s for c in cells) <= 20.3, [c.runtime_s for c in cells]
