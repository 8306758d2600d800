"""Several paths into one simulated drive (`--paths` on a `sim:` target, each path a port), through
the `iolab` command: both ports carry IO of one drive, the report breaks it down per port, the
figures are one drive's; and what is still refused."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from iolab.engines.merge import breakdown
from iolab.store.runstore import RunStore

from .conftest import iolab, killed_at

pytestmark = pytest.mark.integration

# A 400 MiB copy of the default drive (same dies, timings, link).
SMALL = "sim:enterprise-sas?blocks_per_plane=64&pages_per_block=16&op=0.28"
TWO_PORTS = f"{SMALL},{SMALL}&port=1"
QUICK = ("--quick", "--cell-time", "100ms", "--max-rounds", "1")


def run_dir(out: str) -> Path:
    return Path(next(ln for ln in out.splitlines() if ln.startswith("run directory: ")).split(": ", 1)[1])


def test_two_ports_share_one_simulated_drive_and_add_up_to_one_path(tmp_path):
    runs = tmp_path / "runs"
    one = iolab("run", "iops", *QUICK, "--no-report", "-t", SMALL, "--runs-dir", str(runs))
    assert one.returncode == 0, one.stdout + one.stderr
    # before: refused ("--paths: splitting a round needs a fio target ..., not sim:...")
    two = iolab("run", "iops", *QUICK, "-t", SMALL, "--paths", TWO_PORTS, "--runs-dir", str(runs))
    assert two.returncode == 0, two.stdout + two.stderr
    assert "split over 2 paths into one simulated drive" in " ".join(two.stdout.split())
    single, split = RunStore.open(run_dir(one.stdout)), RunStore.open(run_dir(two.stdout))
    try:
        assert [leg["name"] for leg in split.manifest.split] == ["port 0", "port 1"]
        alone = {c.cell_key: c for c in single.cells()}
        cells = split.cells()
        assert len(cells) == len(alone) == 56
        gain: dict[str, float] = {}
        for c in cells:
            parts = breakdown(c.counters)
            assert [p.name for p in parts] == ["port 0", "port 1"]
            # iops --quick asks 4 jobs × QD 32: each port keeps 2 × 32 of it outstanding
            assert [(p.figures["threads"], p.figures["queue_depth"]) for p in parts] == [(2, 32), (2, 32)]
            assert all(p.figures["ios"] > 0 for p in parts)
            assert sum(p.figures["ios"] for p in parts) == c.read_ios + c.write_ios  # no IO counted twice
            assert sum(p.figures["iops"] for p in parts) == pytest.approx(c.iops, rel=1e-6)
            gain[c.cell_key] = c.iops / alone[c.cell_key].iops
        # One link per port, one back end behind them. Reads of 16 KiB and up are bound by one
        # port's 6 Gb/s link (550 MB/s) and double over two (before: one link shared by both
        # ports, the same IOPS to 2 %); 0.5 and 4 KiB reads are bound by the controller and
        # dies and stay what one path delivers. No cell gains more than the second link gives.
        # (Cells with writes carry GC state that now evolves in another order: not compared.)
        for key, g in gain.items():
            mix, bs = key.split()
            assert g < 2.05, (key, g)
            if mix == "100/0" and bs in ("0.5KiB", "4KiB"):
                assert g == pytest.approx(1.0, abs=0.02), (key, g)
            elif mix == "100/0" and bs not in ("8KiB",):
                assert g > 1.9, (key, g)
        # one drive's flash and write amplification: the host writes of one run, not two drives' sum
        last, ref = cells[-1].counters, alone[cells[-1].cell_key].counters
        assert last["host_write_bytes_total"] == pytest.approx(ref["host_write_bytes_total"], rel=0.02)
        assert last["waf_total"] == pytest.approx(ref["waf_total"], rel=0.02)
        ios = {"port 0": 0.0, "port 1": 0.0}
        few = set()  # (cell, port) whose part has too few IOs for a p99 of its own
        for c in cells:
            for p in breakdown(c.counters):
                ios[p.name] += p.figures["ios"]
                if p.figures["ios"] < 1000:
                    few.add((c.cell_key, p.name, int(p.figures["ios"])))
    finally:
        single.close()
        split.close()
    # the report's per-path pages: each port's IOs over the measurement window
    [html] = (split.dir / "report").glob("*.html")
    text = html.read_text()
    assert "Per-Host / Per-Path Breakdown" in text
    [body] = re.findall(r"Each part&#x27;s share, phase main, measurement.*?<tbody>(.*?)</tbody>", text, re.S)
    rows = re.findall(r'<tr><td class="h">([^<]+)</td><td>56</td><td>([\d,]+)</td>', body)
    assert {name: int(n.replace(",", "")) for name, n in rows} == {k: int(v) for k, v in ios.items()}
    # each part's p99 only where its own IOs measure one (a 1024 KiB cell's part of 30 IOs showed one)
    detail = "".join(re.findall(r"Each part per cell, phase main, measurement.*?<tbody>(.*?)</tbody>", text, re.S))
    cell = r"<td[^>]*>([^<]*)</td>"
    shown = re.findall(rf"<tr>{cell * 9}</tr>", detail)
    assert len(shown) == 2 * 56 and few
    unmeasured = {(r[0], r[2], int(r[7][5:].split()[0].replace(",", ""))) for r in shown if r[7].startswith("n/m (")}
    assert unmeasured == few


def test_a_cell_of_one_outstanding_io_says_it_ran_on_one_port(tmp_path):
    """One IO outstanding cannot be split over two ports: a latency cell runs on the first port
    alone, and the run's notes said only that each round's IO was split over both."""
    runs = tmp_path / "runs"
    p = iolab("run", "latency", *QUICK, "--no-report", "-t", SMALL, "--paths", TWO_PORTS, "--runs-dir", str(runs))
    assert p.returncode == 0, p.stdout + p.stderr
    store = RunStore.open(run_dir(p.stdout))
    try:
        notes = " ".join(" ".join(store.manifest.notes).split())
        first, second = (s["name"] for s in store.manifest.split)
        for c in store.cells():
            names = [part.name for part in breakdown(c.counters)]
            assert names == ([first] if c.kind == "measure" else [first, second]), (c.cell_key, names)
    finally:
        store.close()
    # each leg's stored figures are its raw output's (the simulator's "paths" entries), the one a
    # cell ran on alone too; one raised after the run fails raw-figures, which compared none
    good = iolab("audit", str(store.dir))
    assert good.returncode == 0 and "ok   raw-figures" in good.stdout, good.stdout
    copy = tmp_path / "edited" / store.dir.name
    shutil.copytree(store.dir, copy)
    db = sqlite3.connect(copy / "results.db")
    key = f'$."part {first} | ios"'
    cid, ios = db.execute(
        f"SELECT id, json_extract(counters, '{key}') FROM cells WHERE kind = 'measure' ORDER BY id LIMIT 1"
    ).fetchone()
    db.execute(f"UPDATE cells SET counters = json_set(counters, '{key}', ?) WHERE id = ?", (ios + 5, cid))
    db.commit()
    db.close()
    bad = iolab("audit", str(copy))
    said = " ".join(bad.stdout.split())
    assert bad.returncode == 8, said
    assert f"leg {first} stored ios {ios + 5:,.2f}, its raw output {ios:,.2f}" in said, said
    said = f"main, 100/0 4KiB: ran on 1 of its 2 legs ({first}): its 1 outstanding IO cannot be split over more"
    assert f"{said}; {second} ran none of its IO" in notes, notes


def test_the_plan_says_which_cells_run_on_one_port_as_the_run_does():
    """The plan said a latency run's IO was split over both ports, though each QD1 cell runs on
    one (the run's note above): it now says so in the run's words; an IOPS plan (its cells at more
    outstanding IO than ports, its preconditioning too) is split over both and says nothing more;
    a latency-bound plan names the phases it builds during the run, which it cannot judge."""
    split = {}
    for test in ("latency", "iops", "latency-bound"):
        p = iolab("plan", test, "--quick", "-t", SMALL, "--paths", TWO_PORTS, "--json")
        assert p.returncode == 0, p.stdout + p.stderr
        split[test] = json.loads(p.stdout)["plan"]["split"]
    assert split["latency"] == (
        "the outstanding IO split over 2 legs (--paths); a workload at 1 outstanding IO runs on 1 of its 2 legs: "
        "its 1 outstanding IO cannot be split over more (9 cells of Latency main)"
    )
    assert split["iops"] == "the outstanding IO split over 2 legs (--paths)"
    # phases built during the run (a bisection step, the sustained demand) cannot be judged at plan
    # time: the plan names them and says why, where it said nothing of them
    assert split["latency-bound"] == (
        "the outstanding IO split over 2 legs (--paths); phases built during the run are not judged here: their "
        "steps come from what the phases before them measure (a step below 2 outstanding IO will run on fewer legs, "
        "as the run's cells will say): Latency-Bounded Maximum IOPS demand ramp: bisection 1, demand ramp: "
        "bisection 2 and demand ramp: bisection 3, each from the geometric mean of the highest demand met and the "
        "lowest not met, after 'demand ramp'; Latency-Bounded Maximum IOPS sustain, from the highest demand of "
        "'demand ramp' meeting the bound"
    )
    shown = iolab("plan", "latency", "--quick", "-t", SMALL, "--paths", TWO_PORTS)
    assert "runs on 1 of its 2 legs: its 1 outstanding IO cannot be split over more" in " ".join(shown.stdout.split())


def test_a_killed_run_over_two_ports_resumes_over_both(tmp_path):
    from iolab.api.runlist import list_runs

    runs = tmp_path / "runs"
    args = ["run", "iops", "--quick", "--cell-time", "1s", "--max-rounds", "1", "--no-report"]
    killed_at([*args, "-t", SMALL, "--paths", TWO_PORTS, "--runs-dir", str(runs)], runs, "*/raw/main-r01-c01-*")
    [killed] = list_runs(runs)
    assert killed.state == "interrupted"
    # before: resume built fio's split engine for the simulated drive's ports
    r = iolab("resume", str(killed.path), "--no-report", timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    store = RunStore.open(killed.path)
    try:
        assert store.manifest.state == "complete"
        cells = [c for c in store.cells() if c.round == 1]
        assert len(cells) == 56
        for c in cells:  # the rounds run again after the resume are split over both ports too
            parts = breakdown(c.counters)
            assert [p.name for p in parts] == ["port 0", "port 1"], c.cell_key
            assert sum(p.figures["ios"] for p in parts) == c.read_ios + c.write_ios
    finally:
        store.close()


@pytest.mark.parametrize(
    ("paths", "said"),
    [
        (f"{SMALL},sim:client-nvme-slc?port=1", "preset client-nvme-slc, not enterprise-sas"),
        (f"{SMALL},{SMALL.replace('op=0.28', 'op=0.2')}&port=1", "op=0.2, not 0.28"),
        (TWO_PORTS.replace("&port=1", ""), "port 0 is given twice"),
        (f"{SMALL}&port=1", "including the --target"),
        (f"{TWO_PORTS},{SMALL}&port=2", "this drive (SAS) has 2 host ports, ports 0 and 1"),
    ],
    ids=["another-preset", "other-parameters", "same-port-twice", "target-not-among-them", "a-third-port"],
)
def test_paths_that_are_not_ports_of_the_target_drive_are_refused(tmp_path, paths, said):
    runs = tmp_path / "runs"
    p = iolab("run", "iops", *QUICK, "--no-report", "-t", SMALL, "--paths", paths, "--runs-dir", str(runs))
    assert p.returncode == 2, p.stdout + p.stderr
    assert said in " ".join(p.stderr.split()) and "Traceback" not in p.stderr
    assert not runs.exists()


def test_two_ports_carry_twice_the_link_bound_sequential_reads(tmp_path):
    """A wide port: each port has a link of its own. Sequential reads on enterprise-sas are
    bound by its 6 Gb/s link (550 MB/s on one path) and nearly double over two ports; before,
    both ports shared one link and the two runs agreed to the digit. The paths are written as
    `iolab run --help` shows them, `SPEC,SPEC&port=1` with a bare preset (before: exit 2,
    "preset enterprise-sas&port=1 is unknown")."""
    runs = tmp_path / "runs"
    args = ["run", "throughput", *QUICK, "--no-report", "--runs-dir", str(runs), "-t", "sim:enterprise-sas"]
    one = iolab(*args)
    assert one.returncode == 0, one.stdout + one.stderr
    two = iolab(*args, "--paths", "sim:enterprise-sas,sim:enterprise-sas&port=1")
    assert two.returncode == 0, two.stdout + two.stderr
    reads = []
    for out in (one.stdout, two.stdout):
        store = RunStore.open(run_dir(out))
        try:
            reads.append({c.cell_key: c.read_mbps for c in store.cells() if c.cell_key.startswith("100/0")})
        finally:
            store.close()
    assert sorted(reads[0]) == sorted(reads[1]) == ["100/0 1024KiB", "100/0 128KiB"]
    for key, mbps in reads[0].items():
        assert mbps == pytest.approx(550, rel=0.02), key  # one port: the link's rate
        assert reads[1][key] > 1.6 * mbps, (key, reads[1][key], mbps)
