"""The characterisation suite through the `iolab` command: the whole `characterise` sequence
with real fio on a file (quick), and each test's shape on the simulated drives."""

from __future__ import annotations

import html
import json
import re

import pytest

from iolab.api.comparisons import key_metrics
from iolab.api.runlist import list_runs
from iolab.core.units import counted
from iolab.figures.compare import summary_table
from iolab.figures.compare.characterise import grid
from iolab.figures.summary import summarise
from iolab.pages.report.char_series import consistency_figures
from iolab.pages.report.rundata import RunData
from iolab.store.runstore import RunStore

from .conftest import iolab

pytestmark = pytest.mark.integration

TESTS = ("qos", "rw-matrix", "mixed-matrix", "entropy", "consistency")


def runs_of(runs_dir) -> dict[str, RunStore]:
    out = {}
    for r in list_runs(runs_dir):
        s = RunStore.open(r.path)
        out[s.manifest.test] = s
    return out


def phases(store) -> dict:
    return {ph.phase.name: ph for ph in summarise(store)}


def test_characterise_sequence_on_a_file(characterise_on_a_file):
    runs, p = characterise_on_a_file  # conftest.py: its settings
    stores = runs_of(runs)
    assert set(stores) == {*TESTS, "latency-demand", "max-iops"}  # the last two: test_char_demand.py
    for test, s in stores.items():
        assert s.manifest.state == "complete", test
        assert not s.manifest.compliant
        assert (s.dir / "report").is_dir()
    qos = phases(stores["qos"])
    assert len(qos["write rounds"].rows) == 2 and len(qos["read rounds"].rows) == 2
    assert all(r.iops > 0 and r.write_ios == 0 for r in qos["read rounds"].rows)
    matrix = phases(stores["rw-matrix"])
    assert list(matrix) == ["RND READ", "RND WRITE", "SEQ READ", "SEQ WRITE"]
    assert all(len(ph.cells) == 6 for ph in matrix.values())  # 2 sizes × 3 QDs
    mixed = phases(stores["mixed-matrix"])["mixed"]
    by = grid(mixed)[2]
    assert by[("0% W", 1)].write_iops == 0 and by[("100% W", 1)].read_iops == 0
    assert by[("30% W", 32)].read_iops > by[("30% W", 32)].write_iops > 0
    ent = phases(stores["entropy"])
    assert list(ent) == ["precondition", "write", "70/30"]  # quick runs precondition to steady state first
    # one report of the whole sequence: its summary, then every test's pages
    [seq_html] = [
        ln.removeprefix("sequence report: ")
        for ln in p.stdout.splitlines()
        if ln.startswith("sequence report: ") and ln.endswith(".html")
    ]
    seq = open(seq_html).read()
    assert "characterise sequence (7 tests)" in seq and all(s.manifest.title in seq for s in stores.values())
    cons = stores["consistency"]
    [row] = cons.cells("consistency")
    assert len(cons.series(row.id)) >= 3  # one point per second
    # a file reports no media writes: the endurance page says so instead of estimating
    html = next((cons.dir / "report").glob("*.html")).read_text()
    assert "not reported" in html and "periodic dips" in html


def sim_run(scratch, test, target, *extra):
    runs = scratch / f"runs-{test}-{target.replace(':', '_')}"
    p = iolab("run", test, "--target", target, "--quick", "--no-report", "--runs-dir", str(runs), *extra)
    assert p.returncode == 0, p.stderr + p.stdout
    [r] = list_runs(runs)
    return RunStore.open(r.path)


def test_qos_rounds_on_the_simulator(scratch):
    s = sim_run(scratch, "qos", "sim:entry-sata-compress", "--set", "rounds=60", "--set", "measured=200ms")
    ph = phases(s)
    for name in ("write rounds", "read rounds"):
        rows = ph[name].rows
        assert [r.round for r in rows] == list(range(1, 61))
        for r in (rows[0], rows[-1]):
            h = s.histogram(r.id)
            assert h.total == r.read_ios + r.write_ios > 0  # full-resolution bins hold every IO
            assert abs(r.runtime_s - 0.2) < 0.01  # the warm-up is not in the measured period
    assert sorted(p.name for p in (s.dir / "raw").glob("*warmup.json"))


def test_every_characterisation_report_plots_its_steady_state_preconditioning(scratch):
    # qos, like latency-demand and max-iops, had no preconditioning page at all; the matrices a text one
    runs = scratch / "runs"
    p = iolab(
        "run",
        "qos",
        "-t",
        "sim:enterprise-sas",
        "--quick",
        "--set",
        "precondition=steady",
        "--set",
        "rounds=2",
        "--set",
        "measured=200ms",
        "--runs-dir",
        str(runs),
    )
    assert p.returncode == 0, p.stderr + p.stdout
    [r] = list_runs(runs)
    pc = phases(RunStore.open(r.path))["precondition"]
    assert len(pc.rows) >= 5  # rounds until the rule decided
    html = next((r.path / "report").glob("*.html")).read_text()
    assert re.search(
        r'<div class="caption">[^<]*Preconditioning — IOPS per Round</div>(<img|<svg [^>]*) class="plot"', html
    )
    assert f"steady state {'reached' if pc.steady else 'NOT reached'} after {counted(len(pc.rows), 'round')}" in html


def test_matrix_iops_rise_with_queue_depth_on_the_simulator(scratch):
    s = sim_run(scratch, "rw-matrix", "sim:enterprise-sas")
    cells = grid(phases(s)["RND READ"])[2]
    assert cells[("4KiB", 1)].iops < cells[("4KiB", 4)].iops < cells[("4KiB", 32)].iops


@pytest.mark.parametrize("preset,compressing", [("entry-sata-compress", True), ("enterprise-sas", False)])
def test_entropy_shows_only_on_a_compressing_drive(scratch, preset, compressing):
    # preconditioned into steady state first (entropy --quick's own precondition=steady): on a
    # drive still settling, later cells are slower whatever their entropy. The precondition_time=60s
    # this once gave was never used (it acts only with precondition=time) and is now refused.
    s = sim_run(scratch, "entropy", f"sim:{preset}")
    cells = grid(phases(s)["write"])[2]
    low, high = cells[("0% entropy", 32)].iops, cells[("100% entropy", 32)].iops
    if compressing:
        assert low > 1.3 * high
    else:
        assert abs(low - high) < 0.1 * high
    # its steady-state preconditioning, shown as the rounds it measured, not "no cell measured"
    shown = iolab("show", str(s.dir), "--runs-dir", str(s.dir.parent))
    assert shown.returncode == 0 and "no cell measured" not in shown.stdout, shown.stdout


def test_consistency_on_the_simulator_reports_what_it_finds(scratch):
    s = sim_run(scratch, "consistency", "sim:enterprise-sas", "--set", "duration=60s")
    run = RunData.load(s.dir, s.dir)
    sp, dips = consistency_figures(run)
    assert sp.seconds == 45  # after 15 s (a quick run's quarter of 60 s), one point per second
    assert sp.min <= sp.mean <= sp.max
    assert dips.text().startswith(("none found", "periodic dips every"))


def test_quick_consistency_on_the_client_drive_shows_its_gc_dips(scratch):
    """--quick tested a 0.5 GB copy of the client drive for 20 s, where a GC burst runs out of
    work before it stalls the host: its seconds stayed within 1.3× and no dip was found. The
    quick copy is 4 GB, where its bursts dip every 4.3 s, run long enough to find their beat."""
    s = sim_run(scratch, "consistency", "sim:client-nvme-slc")
    assert s.manifest.target["tested_capacity"] == pytest.approx(4e9, rel=1e-3)  # the whole copy
    assert any("4.000 GB copy of sim:client-nvme-slc" in n for n in s.manifest.notes)
    sp, dips = consistency_figures(RunData.load(s.dir, s.dir))
    assert dips.count >= 4 and dips.periodic, dips.text()
    assert 3.8 <= dips.period_s <= 4.8 and dips.depth < 0.7, dips.text()
    assert sp.max / sp.min > 2
    shown = iolab("show", str(s.dir))
    assert "dips in the steady part (after 15 s): periodic dips every" in " ".join(shown.stdout.split())


def _said(s, *extra):
    shown = " ".join(iolab("show", str(s.dir), *extra).stdout.split())
    doc = json.loads(iolab("show", str(s.dir), "--json").stdout)
    figs = {f["name"]: f for f in doc["runs"][0]["figures"]}
    return shown, [figs[n] for n in ("steady-part coefficient of variation", "steady-part minimum ÷ maximum")]


def test_a_steady_part_that_was_not_steady_says_so_beside_its_figures(scratch):
    """The steady part starts at a time (steady_from); the figures named "steady-part …" said
    nothing of whether the drive was steady there. From 1 s into 30 s of writes the compressing
    entry drive's IOPS ramp (piece means 64 % apart): show and --json say it is not steady."""
    s = sim_run(scratch, "consistency", "sim:entry-sata-compress", "--set", "duration=30s", "--set", "steady_from=1s")
    shown, figs = _said(s)
    assert "steady part (from 1 s): NOT steady by the rule (range 64 % > 20 %" in shown
    assert "these figures are of the part after 1 s, not of a steady drive" in shown
    for f in figs:
        assert f["caveat"] is True and "NOT steady by the rule (range 64 % > 20 %" in f["note"], f
    assert iolab("report", str(s.dir)).returncode == 0
    [page] = (s.dir / "report").glob("*.html")
    text = " ".join(re.sub(r"<[^>]+>", " ", html.unescape(page.read_text())).split())
    assert "steady part (after 1 s), NOT shown steady" in text  # the report's figures table
    assert "steady by the rule? NOT steady by the rule (range 64 % > 20 %" in text
    # the comparison's ranking marks the figures with it, as it marks a run not at steady state
    again = sim_run(
        scratch / "again", "consistency", "sim:entry-sata-compress", "--set", "duration=30s", "--set", "steady_from=1s"
    )
    ranked = " ".join(iolab("compare", str(s.dir), str(again.dir), "--out", str(scratch / "cmp")).stdout.split())
    assert ranked.count("(#1) [a]") == 4 and "[a] steady part (from 1 s): NOT steady by the rule (range 64 %" in ranked


def test_a_steady_part_that_was_steady_says_it_met_the_rule(scratch):
    s = sim_run(scratch, "consistency", "sim:enterprise-sas")  # --quick: 60 s, from 15 s
    shown, figs = _said(s)
    verdict = re.search(
        r"steady part \(from 15 s\): steady by the rule \(range (\d+) % ≤ 20 %, excursion (\d+) % ≤ 10 %", shown
    )
    assert verdict, shown
    for f in figs:
        assert f["caveat"] is False and f["note"].startswith("steady part (from 15 s): steady by the rule"), f
    assert "NOT steady" not in shown


CHEAP = {
    "qos": ("--set", "rounds=2"),
    "consistency": ("--set", "duration=6s"),
    "rw-matrix": (),
    "mixed-matrix": (),
    "entropy": (),
    # steps fine enough that both drives meet some demands and miss later ones
    "latency-demand": ("--set", "demand=5000:5000:150000"),
    "max-iops": ("--set", "thread_counts=1,2", "--set", "rounds=2"),
}


def lower_is_better(m) -> bool:
    """A response time, or a spread (the consistency's coefficient of variation)."""
    return m.unit in ("µs", "ms", "s") or "coefficient of variation" in m.name


@pytest.mark.parametrize("test", [*TESTS, "latency-demand", "max-iops"])
def test_compare_two_simulated_drives(scratch, test):
    """Each test's key figures and overlays on two quick runs: every figure found on both
    drives, ranked by its direction (a response time lower-is-better, IOPS and MB/s higher)."""
    stores = [
        sim_run(scratch, test, f"sim:{p}", "--cell-time", "200ms", *CHEAP[test])
        for p in ("enterprise-sas", "entry-sata-compress")
    ]
    out = scratch / "cmp"
    p = iolab("compare", *(str(s.dir) for s in stores), "-o", str(out))
    assert p.returncode == 0, p.stderr + p.stdout
    html = next(out.glob("*.html")).read_text()
    metrics = key_metrics(test, [summarise(s) for s in stores])
    assert metrics
    table = summary_table(["a", "b"], [summarise(s) for s in stores], metrics)
    for j, m in enumerate(metrics):
        assert m.higher_is_better == (not lower_is_better(m)), m.name
        vals = [row[j] for row in table.values]
        if " %" in m.name and vals == [None, None]:
            continue  # a tail percentile that 200 ms cells have too few IOs to measure (units.measurable)
        flat_ok = "coefficient of variation" in m.name  # a flat steady part has a CV of 0
        assert all(v is not None and (v > 0 or flat_ok and v == 0) for v in vals), (m.name, vals)  # measured on both
        best = min(vals) if lower_is_better(m) else max(vals)
        assert table.ranks[vals.index(best)][j] == 1, m.name
    # each test's overlay pages follow the summary (one series per drive)
    overlays = {
        "qos": "write rounds: per round",
        "rw-matrix": "RND READ: IOPS vs queue depth",
        "mixed-matrix": "mixed: IOPS vs queue depth",
        "entropy": "write: IOPS vs queue depth",
        "consistency": "IO Consistency: drives",
        "latency-demand": "Latency vs Demand — read ramp, per drive",
        "max-iops": "Maximum IOPS — searches per drive",
    }
    assert overlays[test] in html
