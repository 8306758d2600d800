"""Refusals `iolab plan` makes as `iolab run` does, before anything is written, and commands on
a run directory that cannot be written: a QoS histogram asked of a round the test never runs, a
file target larger than its filesystem's free space, a report or a stored audit of a run on a
read-only filesystem (tester defects 1, 3 and 11)."""

from __future__ import annotations

import html
import os
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from .conftest import SMALL_SIM, iolab, killed_at, quick_sim_run

pytestmark = pytest.mark.integration

QUICK = ["--quick", "--cell-time", "100ms", "--no-report"]


def said(p: subprocess.CompletedProcess) -> str:
    return " ".join((p.stdout + p.stderr).split())


@contextmanager
def mounted_ext4(scratch: Path, size_mib: int = 40) -> Iterator[Path]:
    """A small ext4 filesystem on a loop device of a file under `scratch`, mounted there."""
    if os.geteuid() != 0:
        pytest.skip("needs root for a loop-mounted filesystem")
    image, mnt = scratch / "small.fs", scratch / "mnt"
    os.truncate(image, 0) if image.exists() else image.write_bytes(b"")
    os.truncate(image, size_mib << 20)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True, capture_output=True)
    dev = subprocess.run(["losetup", "-f", "--show", str(image)], check=True, capture_output=True, text=True)
    loop = dev.stdout.strip()
    mnt.mkdir()
    try:
        subprocess.run(["mount", loop, str(mnt)], check=True, capture_output=True)
        try:
            yield mnt
        finally:
            subprocess.run(["umount", str(mnt)], capture_output=True)
    finally:
        subprocess.run(["losetup", "-d", loop], capture_output=True)


@pytest.mark.parametrize("asked", ["99", "99,last", "11"])
def test_a_histogram_of_a_round_the_qos_test_never_runs_is_refused_by_plan_and_run(scratch, asked):
    """The quick QoS test runs 10 rounds of each direction, every one (no steady state ends them):
    round 99 (or 11) was accepted, its histogram silently left out of the report."""
    runs = scratch / "runs"
    args = ["qos", *QUICK, "-t", SMALL_SIM, "--set", f"histogram_rounds={asked}", "--runs-dir", str(runs)]
    plan, run = iolab("plan", *args), iolab("run", *args, timeout=300)
    for p in (plan, run):
        assert p.returncode == 2, said(p)
        assert "Traceback" not in said(p)
    first = asked.split(",")[0]
    assert f"round {first} is beyond the test's 10 rounds" in said(run) and "Nothing was run or written" in said(run)
    assert said(plan).split("iolab: ", 1)[1] == said(run).split("iolab: ", 1)[1], (
        "plan refuses with the run's paragraph"
    )
    assert not runs.exists(), "a refused run leaves no run directory"


def test_a_histogram_of_a_round_the_test_runs_is_planned(scratch):
    p = iolab("plan", "qos", *QUICK, "-t", SMALL_SIM, "--set", "histogram_rounds=10,last", "--set", "rounds=10")
    assert p.returncode == 0, said(p)
    p = iolab("plan", "qos", *QUICK, "-t", SMALL_SIM, "--set", "histogram_rounds=12", "--set", "rounds=12")
    assert p.returncode == 0, said(p)


def test_the_report_of_a_qos_run_stopped_before_an_asked_round_says_it_was_not_measured(scratch):
    """A round within the test's rounds that the run never reached (killed during the read
    rounds): its histogram was left out of the report without a word."""
    runs, out = scratch / "runs", scratch / "out"
    asked = ["--set", "rounds=10", "--set", "histogram_rounds=8,last"]
    args = ["run", "qos", *QUICK, *asked, "-t", f"file:{scratch}/q.img?size=16MiB", "--runs-dir", str(runs)]
    killed_at(args, runs, "*/raw/read_rounds-r02-*")
    [run] = runs.iterdir()
    p = iolab("report", str(run), "--out", str(out))
    assert p.returncode == 0, said(p)
    [page] = out.glob("*.html")
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.read_text())).split())
    assert "write rounds: latency histogram, round 8 (chosen)" in text  # reached: drawn
    assert "read rounds: histograms asked for and not measured" in text
    assert "histogram_rounds 8,last asks for round 8, which phase 'read rounds' did not reach" in text
    assert "read rounds: latency histogram, round 8" not in text


def test_a_file_larger_than_its_filesystems_free_space_is_refused_before_a_run_exists(scratch):
    """plan said the run was fine; run opened a run directory (a failed run, a report) before
    the allocation found the filesystem full."""
    with mounted_ext4(scratch) as mnt:
        runs = scratch / "runs"
        args = ["latency", *QUICK, "-t", f"file:{mnt}/big.img?size=100MiB", "--runs-dir", str(runs)]
        plan, run = iolab("plan", *args), iolab("run", *args, timeout=300)
        for p in (plan, run):
            assert p.returncode == 2, said(p)
            assert f"not enough space for {mnt}/big.img" in said(p) and "Nothing was run or written" in said(p)
        assert said(plan) == said(run), "plan refuses with the run's paragraph"
        assert not runs.exists(), "a refused run leaves no run directory"
        assert not (mnt / "big.img").exists()
        fits = ["latency", *QUICK, "--max-rounds", "1", "-t", f"file:{mnt}/ok.img?size=16MiB", "--runs-dir", str(runs)]
        assert iolab("run", *fits, timeout=300).returncode == 0
        again = iolab("plan", *fits)  # the file there already holds its blocks: it needs no more room
        assert again.returncode == 0, said(again)


@pytest.fixture
def run_on_read_only_fs(scratch: Path) -> Iterator[Path]:
    """A finished quick run (no report) on a filesystem then remounted read-only: its directory."""
    with mounted_ext4(scratch) as mnt:
        run = quick_sim_run(mnt / "runs")
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True, capture_output=True)
        yield run


def test_report_and_stored_audit_of_a_run_on_a_read_only_filesystem_say_so_and_the_way_out(
    run_on_read_only_fs, scratch
):
    """Both said exit 3, "a run directory is written by one iolab process at a time"."""
    run = run_on_read_only_fs
    before = sorted(p.name for p in run.iterdir())
    report = iolab("report", str(run))
    assert report.returncode == 2, said(report)
    assert f"run directory {run} is on a read-only filesystem" in said(report)
    assert "nothing was written" in said(report) and f"`iolab report {run} --out DIR`" in said(report)
    audit = iolab("audit", str(run), "--store")
    assert audit.returncode == 2, said(audit)
    assert f"run directory {run} is on a read-only filesystem" in said(audit)
    assert f"`iolab audit {run}` without --store" in said(audit)
    for p in (report, audit):
        assert "one iolab process at a time" not in said(p) and "Traceback" not in said(p)
        assert p.stderr.count("iolab: ") == 1 and "\n\n" not in p.stderr.strip()
    assert sorted(p.name for p in run.iterdir()) == before
    # the ways out the refusals name work
    out = scratch / "elsewhere"
    assert iolab("report", str(run), "--out", str(out)).returncode == 0
    assert list(out.glob("*.pdf"))
    assert iolab("audit", str(run)).returncode == 0
