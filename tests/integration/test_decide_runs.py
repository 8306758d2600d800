"""Plans that wait and decide, on real engines: an idle step on the simulated drive (Host
Idle Recovery: background GC during the idle raises the next burst, and does not when the
drive's background GC is off), and a queue-depth search on a file with fio whose next phase
is built from its results."""

from __future__ import annotations

import pytest
from rich.console import Console

from iolab import suites
from iolab.api import registry, reports
from iolab.api import runs as api
from iolab.core.decide import Decision, NoGain, best_by_iops
from iolab.core.plan import Cell, Deferred, Phase
from iolab.core.plan import TestPlan as Plan
from iolab.core.units import KiB
from iolab.core.workload import Workload
from iolab.store.runstore import RunStore
from iolab.suites.testdef import TestDef

from .test_registry import cli

pytestmark = pytest.mark.integration

SMALL = "sim:enterprise-sas?blocks_per_plane=64&pages_per_block=16&op=0.28"
# Background GC that cleans up to half the spare blocks while the host idles (the preset's
# default of 5 % leaves too little to see in one burst).
# write_core_us=0: the flash, not the default's controller write time, limits the fresh rate,
# so what an idle's cleaning buys shows well above the steady rate. gc_choices=0: exact greedy
# victims, so a 10 ms burst meets GC at its average pace; with victims of varying valid data
# (the preset's 20 random choices) one burst of a few hundred writes on this 64-block drive
# ran at 1.57 times the steady rate without any idle cleaning.
# without the periodic GC pass: the burst after the idle measures the idle's cleaning alone;
# and without paced GC (gc_pace_victims), whose carry of up to a block is a large share of this
# drive's spare: a burst that finds it ahead ran at 1.41 times the steady rate with no cleaning
IDLE_CLEANING = SMALL + "&bg_reserve_pct=50&write_core_us=0&gc_choices=0&gc_pass_period_ms=0&gc_pace_victims=0"


# -- Host Idle Recovery on the simulated drive ------------------------------------------------


def build_idle(prof, target, workload=None) -> Plan:
    cap = target.capacity
    fill = Workload.mix("seq", 0, 128 * KiB, threads=1, queue_depth=32, bytes_budget=2 * cap)

    def write(seconds):
        return Workload.mix("rnd", 0, 4 * KiB, threads=4, queue_depth=32, duration_s=seconds)

    cells = (
        Cell("sustained", write(2.0), "0/100", 4 * KiB),  # GC at its steady pace
        Cell("burst", write(0.01), "0/100", 4 * KiB),  # straight after: no time to clean
        Cell("burst after idle", write(0.01), "0/100", 4 * KiB, idle_before_s=30.0),
    )
    phase = Phase("idle recovery", cells, (), precondition=(fill,), max_rounds=1, stop_on_steady=False)
    return Plan("idle-recovery", "Idle Recovery", "test", prof, (phase,), prof.rule(), cap)


@pytest.fixture
def idle_test():
    test = registry.register(TestDef("idle-recovery", "Idle Recovery", "test", "bursts after idle", build=build_idle))
    yield test
    registry.unregister(test.name)


def burst_gain(target: str, runs) -> tuple[float, float, RunStore]:
    """The burst after idle against the burst straight after the sustained writes, and
    against the sustained (steady) rate."""
    [run] = api.run_test(
        "idle-recovery", target, suites.make_profile("enterprise", quick=True), runs_dir=runs, report=False
    )
    store = RunStore.open(run.dir)
    iops = {c.cell_key: c.iops for c in store.cells()}
    return iops["burst after idle"] / iops["burst"], iops["burst after idle"] / iops["sustained"], store


def test_background_gc_during_an_idle_step_raises_the_next_burst_only_when_the_drive_has_it(idle_test, tmp_path):
    gain_on, over_steady_on, store = burst_gain(IDLE_CLEANING, tmp_path / "on")
    # bg_reserve_pct acts only with background GC: refused beside bg_gc=off, so left out there
    off = IDLE_CLEANING.replace("&bg_reserve_pct=50", "") + "&bg_gc=off"
    gain_off, over_steady_off, _ = burst_gain(off, tmp_path / "off")
    # Measured: with background GC the burst after idle runs at 2.02× the sustained rate (3.35× the
    # burst straight after it, which meets the GC work the sustained writes left); without, 1.11×
    # the sustained rate (1.85× that burst: an idle drive also starts with empty queues and its
    # owed GC done). Only the idle's cleaning lifts it well above the steady rate.
    assert over_steady_on > 1.5 and gain_on > 1.3 * gain_off, (over_steady_on, gain_on, gain_off)
    assert over_steady_off < 1.25, over_steady_off
    assert [c.idle_before_s for c in store.cells()] == [None, None, 30.0]
    out = Console(record=True, width=160)
    reports.show(store, out)
    shown = out.export_text()
    assert "idle before" in shown and "30.0 s" in shown


# -- a queue-depth search on a file, then rounds at the best queue depth ---------------------

QDS = (1, 4, 16, 64)


def read(qd: int, seconds: float) -> Workload:
    return Workload.mix("rnd", 100, 4 * KiB, threads=1, queue_depth=qd, duration_s=seconds)


def build_search(prof, target, workload=None) -> Plan:
    cap = min(target.capacity, prof.capacity_limit or target.capacity)
    search = Phase(
        "qd search",
        tuple(Cell(f"QD {qd}", read(qd, prof.cell_seconds), "100/0", 4 * KiB) for qd in QDS),
        (),
        max_rounds=1,
        stop_on_steady=False,
        stop_rule=NoGain(min_gain=0.05, steps=2),
    )

    def at_best(samples):
        best = best_by_iops("qd search", samples["qd search"])
        qd = best.outstanding
        phase = Phase(
            "at the best QD",
            (Cell(f"QD {qd}", read(qd, prof.cell_seconds), "100/0", 4 * KiB),),
            (),
            purge=False,
            max_rounds=2,
            stop_on_steady=False,
        )
        return phase, Decision(
            "at the best QD",
            {"name": "most-iops"},
            f"{best.key} delivered the most IOPS ({best.iops:,.0f})",
            {"queue_depth": qd},
        )

    return Plan(
        "qd-search",
        "QD search",
        "test",
        prof,
        (search, Deferred("at the best QD", "the search's most IOPS", at_best)),
        prof.rule(),
        cap,
    )


@pytest.fixture
def search():
    test = registry.register(
        TestDef("qd-search", "QD search", "test", "QD search, then rounds at the best", build=build_search)
    )
    yield test
    registry.unregister(test.name)


def test_a_queue_depth_search_on_a_file_builds_its_next_phase_at_the_best_queue_depth(search, scratch, tmp_path):
    runs = tmp_path / "runs"
    out = cli(
        "run",
        "qd-search",
        "--target",
        f"file:{scratch / 'qd.img'}?size=64MiB",
        "--quick",
        "--cell-time",
        "200ms",
        "--runs-dir",
        str(runs),
        "--no-report",
    )
    [run] = [p for p in runs.iterdir() if (p / "manifest.json").exists()]
    store = RunStore.open(run)
    m = store.manifest
    assert m.state == "complete" and m.versions["engine"].startswith("fio")
    searched = {c.cell_key: c.iops for c in store.cells("qd search")}
    best = max(searched, key=searched.get)
    qd = int(best.split()[1])
    built = m.decisions[-1]
    assert built["phase"] == "at the best QD" and built["chosen"] == {"queue_depth": qd}
    assert m.plan["phases"][1]["cells"] == [best] and m.plan["phases"][1]["deferred"] == "the search's most IOPS"
    rows = store.cells("at the best QD")
    assert len(rows) == 2 and {r.workload["queue_depth"] for r in rows} == {qd}
    jobs = [(run / f).read_text() for r in rows for f in r.raw_files if f.endswith(".fio")]
    assert len(jobs) == 2 and all(f"iodepth={qd}\n" in j for j in jobs)  # fio ran it at that depth
    if len(searched) < len(QDS):  # the rule ended the search: it says why
        assert m.decisions[0]["rule"]["name"] == "no-gain" and "no-gain" in store.phases()[0].stop_reason
    assert "at the best QD (before it ran): most-iops" in " ".join(out.split())
    assert "at the best QD (before it ran): most-iops" in " ".join(cli("show", str(run)).split())
