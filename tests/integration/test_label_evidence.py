"""Each label is true of the run it came from, checked against what the run stored: a figure
named for a state (fresh-out-of-box, after a cache) is given only where the run reached that
state, and says why not where it did not."""

from __future__ import annotations

import json
import re
import urllib.request
from html import unescape
from pathlib import Path

import pytest

from .conftest import SMALL_SIM, iolab, small_loop
from .test_watch_cli import free_port, watching

pytestmark = pytest.mark.integration

FOB = "IOPS, first interval (FOB)"


def flat(text: str) -> str:
    return " ".join(text.split())


def page_text(html: Path) -> str:
    return flat(unescape(re.sub(r"<[^>]+>", " ", html.read_text())))


def one_run(runs: Path, *args: str) -> Path:
    p = iolab("run", *args, "--runs-dir", str(runs))
    assert p.returncode == 0, p.stdout + p.stderr
    [run] = list(runs.iterdir())
    return run


def figure_of(run: Path, name: str) -> dict:
    shown = iolab("show", str(run), "--json")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    [rec] = json.loads(shown.stdout)["runs"]
    return next(f for f in rec["figures"] if f["name"] == name)


def test_write_saturation_without_a_purge_gives_no_fob_figure_and_says_why(tmp_path):
    """--purge none: the first interval is of whatever the target held, not fresh-out-of-box;
    show, --json, history and the report's summary and header called it FOB."""
    purged = one_run(tmp_path / "purged", "wsat", "--quick", "-t", SMALL_SIM)
    fob = figure_of(purged, FOB)
    assert fob["value"] and fob["value"] > 0, fob  # the control: a purged run has its FOB figure

    run = one_run(tmp_path / "runs", "wsat", "--quick", "-t", SMALL_SIM, "--purge", "none")
    fig = figure_of(run, FOB)
    assert fig["value"] is None, fig
    assert "--purge none" in fig["unmeasured"] and "fresh-out-of-box" in fig["unmeasured"], fig
    shown = flat(iolab("show", str(run)).stdout)
    assert f"— {FOB}: not measured, the run did not purge the target (--purge none)" in shown, shown
    hist = iolab("history", FOB, "--runs-dir", str(tmp_path / "runs"))
    assert hist.returncode == 0, hist.stdout + hist.stderr
    assert "not measured" in hist.stdout, hist.stdout
    page = page_text(run / "report" / f"{run.name}.html")
    assert "First interval IOPS (FOB)" not in page and "starts at FOB after purge" not in page, page[:3000]
    assert "First interval IOPS (not FOB: the run did not purge the target (--purge none)" in page, page[:3000]
    # the purged run's report still names its first interval FOB
    assert "First interval IOPS (FOB)" in page_text(purged / "report" / f"{purged.name}.html")


def test_a_fill_within_the_slc_cache_gives_no_post_cache_rate(tmp_path):
    """A 17 GB fill of a 480 GB drive whose SLC cache holds 30 GB never leaves the cache: its one
    rate is the in-cache rate, yet it was printed as the 'post-cache write rate'."""
    run = one_run(
        tmp_path / "runs", "slc-cache", "-t", "sim:client-nvme-slc?slc_gb=30&op=0.3", "--capacity-limit", "16GiB"
    )
    fig = figure_of(run, "post-cache write rate")
    assert fig["value"] is None, fig
    assert "may all lie within a cache" in fig["unmeasured"], fig
    shown = flat(iolab("show", str(run)).stdout)
    assert "— post-cache write rate: not measured, no rate after a cache is measured: the fill wrote 4." in shown
    page = page_text(run / "report" / f"{run.name}.html")
    assert "post-cache rate — (no rate after a cache is measured: the fill wrote 4." in page, page[-3000:]


def test_a_cell_time_the_test_ignores_is_no_non_compliance_of_the_run(tmp_path):
    """slc-cache fills to a byte budget: --cell-time 100ms changes nothing in its plan (iolab says
    so), yet the run was labelled 'non-compliant: 0.1 s per cell instead of 60 s' everywhere."""
    target = f"file:{tmp_path}/d.img?size=64MiB"
    run = one_run(tmp_path / "runs", "slc-cache", "--quick", "--cell-time", "100ms", "-t", target, "--no-report")
    m = json.loads((run / "manifest.json").read_text())
    assert "cell_seconds" in m["ignored_options"], m["ignored_options"]
    assert m["noncompliance"][0] == "quick profile", m["noncompliance"]
    assert not any("per cell" in n for n in m["noncompliance"]), m["noncompliance"]
    shown = flat(iolab("show", str(run)).stdout)
    assert "NON-COMPLIANT: quick profile;" in shown and "per cell instead of 60 s" not in shown, shown
    # a test whose cells the option sets keeps the label
    used = one_run(
        tmp_path / "used", "latency", "--quick", "--cell-time", "100ms", "--max-rounds", "1", "-t", SMALL_SIM
    )
    assert "0.1 s per cell instead of 60 s" in json.loads((used / "manifest.json").read_text())["noncompliance"]
    # its one round's window is named as the caption under each convergence plot names it, "round
    # 1", not "rounds 1–1"
    page = page_text(used / "report" / f"{used.name}.html")
    assert "measurement window (round 1, steady state not evaluated)" in page and "rounds 1–1" not in page, page[:3000]


def test_the_means_of_repeats_say_their_runs_were_not_steady_and_scaled_down(tmp_path):
    """--repeat's table gave each figure's mean and 95 % interval over runs none of which showed
    steady state (3 rounds, fewer than the window) on a quick profile, with no word of either: each
    run's own page says both."""
    args = ("latency", "--repeat", "2", "--quick", "--cell-time", "100ms", "-t", SMALL_SIM, "--no-report", "--json")
    p = iolab("run", *args, "--max-rounds", "3", "--runs-dir", str(tmp_path / "short"))
    assert p.returncode == 0, p.stdout + p.stderr
    doc = json.loads(p.stdout)
    assert [r["steady_state"] for r in doc["runs"]] == ["not-evaluated"] * 2
    said = doc["repeat"]["caveats"]
    assert any(c.startswith("steady state not shown in 2 of 2 runs (not evaluated in 2)") for c in said), said
    assert "NON-COMPLIANT: 2 of 2 runs: quick profile; 0.1 s per cell instead of 60 s" in said, said
    assert "caveat: steady state not shown in 2 of 2 runs" in flat(p.stderr), p.stderr[-3000:]
    # runs that reached steady state carry no such caveat, only the scaled-down one
    q = iolab("run", *args, "--runs-dir", str(tmp_path / "steady"))
    assert q.returncode == 0, q.stdout + q.stderr
    doc = json.loads(q.stdout)
    assert [r["steady_state"] for r in doc["runs"]] == ["reached"] * 2, [r["steady_state"] for r in doc["runs"]]
    assert [c for c in doc["repeat"]["caveats"] if "steady" in c] == [], doc["repeat"]["caveats"]


def test_a_run_whose_write_cache_no_run_can_set_is_not_compliant(tmp_path):
    """The enterprise profile asks for WCD; iolab cannot switch a file's cache (nor a loop
    device's, an NBD export's), yet a full run on one was planned and stored as 'compliant'."""
    target = f"file:{tmp_path}/d.img?size=64MiB"
    planned = iolab("plan", "latency", "-t", target, "--json")
    assert planned.returncode == 0, planned.stdout + planned.stderr
    [t] = json.loads(planned.stdout)["plan"]["tests"]
    assert t["noncompliance"] == ["write cache WCD not set: not settable on files (the filesystem and page cache "
                                  "decide; fio uses direct IO)"], t["noncompliance"]  # fmt: skip
    run = one_run(tmp_path / "runs", "latency", "--cell-time", "100ms", "--max-rounds", "1", "-t", target)
    m = json.loads((run / "manifest.json").read_text())
    assert m["compliant"] is False and "write cache WCD not set: not settable on files" in "; ".join(
        m["noncompliance"]
    ), m["noncompliance"]
    page = page_text(run / "report" / f"{run.name}.html")
    assert "write cache WCD not set: not settable on files" in page, page[:3000]
    # a simulated drive's cache is its model's, set as asked: compliant where nothing else differs
    sim = iolab("plan", "latency", "--json")
    assert json.loads(sim.stdout)["plan"]["tests"][0]["noncompliance"] == [], sim.stdout[:2000]


def test_a_loop_device_without_direct_io_is_said_to_run_through_the_page_cache(scratch, loop_device):
    """losetup's default loop device reads and writes its backing file through the page cache
    (its 1024 KiB reads ran at 8 GB/s), and its plan said "direct IO bypasses the page cache"."""
    with small_loop(scratch) as buffered:
        for dev, said in (
            (buffered, "this one has direct IO off (losetup's default): it reads and writes its backing file through"),
            (loop_device, "not settable on loop devices (direct IO bypasses the page cache"),
        ):
            p = iolab("plan", "latency", "-t", dev, "--json")
            assert p.returncode == 0, p.stdout + p.stderr
            [t] = json.loads(p.stdout)["plan"]["tests"]
            assert any(said in n for n in t["noncompliance"]), (dev, t["noncompliance"])


def test_the_watch_page_gives_no_p99_of_a_cell_too_short_to_measure_it(tmp_path):
    """A quick latency run's last cell (QD1 0.5 KiB W, 0.1 s) completes a few hundred IOs, fewer
    than the 1,000 a 99 % needs; `iolab watch` showed its stored p99 as a figure, in the list and
    on the run page, where every other page says n/m."""
    runs = tmp_path / "runs"
    run = one_run(runs, "latency", "--quick", "--cell-time", "100ms", "--max-rounds", "1", "-t", SMALL_SIM)
    shown = iolab("export", str(run), "--out", str(tmp_path / "x"))
    assert shown.returncode == 0, shown.stdout + shown.stderr
    last = (tmp_path / "x" / "cells.csv").read_text().splitlines()
    head = last[0].split(",")
    ios = int(float(last[-1].split(",")[head.index("read_ios")])) + int(
        float(last[-1].split(",")[head.index("write_ios")])
    )
    assert 0 < ios < 1000, ios  # the premise: the run's last cell is too short for a 99 %
    port = free_port()
    with watching(runs, port):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/runs", timeout=20) as r:
            [row] = json.loads(r.read())["runs"]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/runs/{run.name}", timeout=20) as r:
            detail = json.loads(r.read())
    assert row["p99_us"] is None and row["p99_note"] == f"n/m ({ios:,} IOs)", row
    cell = detail["detail"]["last_cell"]
    assert cell["p99_us"] is None and cell["p99_note"] == f"n/m ({ios:,} IOs)", cell


def test_a_cross_stimulus_run_whose_group_3_never_recovered_says_so(tmp_path):
    """Group 3 ran its 2 s budget below 95 % of group 1's mean: the recovery figure was a bare
    '—', as if it were lost, where the run measured that it did not recover."""
    run = one_run(tmp_path / "runs", "xsr", "--quick", "--cell-time", "100ms", "-t", SMALL_SIM, "--no-report")
    fig = next(
        f for f in json.loads(iolab("show", str(run), "--json").stdout)["runs"][0]["figures"] if "recovery" in f["name"]
    )
    assert fig["value"] is None, fig  # the premise: this simulated drive's group 3 stays below the line
    assert re.fullmatch(
        r"group 3 did not recover: none of its \d+ intervals? reached [\d,.]+ MB/s \(95 % of group 1's mean [\d,.]+ MB/s\)",
        fig["unmeasured"],
    ), fig
    assert f"— {fig['name']}: not measured, group 3 did not recover" in flat(iolab("show", str(run)).stdout)


def test_host_idle_recovery_says_why_its_preconditioning_level_is_missing(tmp_path):
    """--max-rounds 3 leaves the preconditioning short of a 5-round window: its level was a bare
    '—' with no word why, where the run's own phase line says it was never judged."""
    run = one_run(
        tmp_path / "runs", "hir", "--quick", "--cell-time", "100ms", "--max-rounds", "3", "-t", SMALL_SIM, "--no-report"
    )
    fig = figure_of(run, "Preconditioning IOPS, window mean (RND 4 KiB W)")
    assert fig["value"] is None, fig
    assert fig["unmeasured"] == (
        "the preconditioning ran 3 rounds, fewer than the 5-round steady-state window: no window to average"
    ), fig


def test_a_run_without_a_purge_counts_its_steady_state_minimum_from_its_start_and_says_so(tmp_path):
    """--purge none: steady state was 'declared after 0.634 GB written since the purge', the rule
    'accepted only after ... written since the purge' and the audit's evidence alike, of a run
    with no purge; what was counted is what the run wrote from its start."""
    run = one_run(tmp_path / "runs", "latency", "--quick", "--cell-time", "100ms", "--purge", "none", "-t", SMALL_SIM)
    said = flat(iolab("show", str(run)).stdout) + flat(iolab("audit", str(run)).stdout)
    said += page_text(run / "report" / f"{run.name}.html")
    assert "since the purge" not in said, said
    assert re.search(r"declared after [\d.]+ GB written since the run began \(no purge: --purge none\)", said), said
    assert "is written since the run began (no purge: --purge none)" in said, said
    assert re.search(r"GB written since the run began \(no purge: --purge none\) \(≥ [\d.]+ GB\)", said), said
