"""The SLC cache test through the `iolab` command: a quick run finds the client preset's cache
at its configured size; a drive without one, and a file, show no cliff."""

from __future__ import annotations

import json

import pytest

from iolab import _sim
from iolab.api.results import open_run
from iolab.api.runlist import list_runs
from iolab.store.runstore import RunStore

from .conftest import iolab

pytestmark = pytest.mark.integration


def run(scratch, target: str, *extra: str):
    runs = scratch / "runs"
    p = iolab("run", "slc-cache", "--target", target, "--quick", "--runs-dir", str(runs), *extra)
    assert p.returncode == 0, p.stderr + p.stdout
    [r] = list_runs(runs)
    return " ".join(p.stdout.split()), open_run(r.path), RunStore.open(r.path).manifest


def test_quick_run_finds_the_client_presets_cache_at_its_size(scratch):
    configured = float(dict(json.loads(_sim.describe("client-nvme-slc", []))["params"])["slc_gb"])
    shown, r, m = run(scratch, "sim:client-nvme-slc")
    size = r.figure("SLC cache size").value
    assert size == pytest.approx(configured, rel=0.1), shown
    fast, slow = r.figure("in-cache write rate").value, r.figure("post-cache write rate").value
    assert fast > 2 * slow > 0, shown
    assert f"SLC cache {size:.2f} GB: {fast:,.0f} MB/s until" in shown
    # a scaled-down copy, and said so: its cache kept whole, the rest of the drive smaller
    assert "quick profile" in m.noncompliance
    assert any(
        "32.000 GB copy of sim:client-nvme-slc" in n and "SLC cache kept at the drive's 8 GB" in n for n in m.notes
    )
    [html] = (r.dir / "report").glob("*.html")
    page = html.read_text()
    assert "SLC Cache: MB/s against GB written" in page and f"SLC cache {size:.2f} GB" in page


@pytest.mark.parametrize("target", ["sim:enterprise-sas", "file"])
def test_a_drive_without_a_cache_shows_no_cliff(scratch, target):
    spec = f"file:{scratch}/d.img?size=256MiB" if target == "file" else target
    shown, r, _ = run(scratch, spec, "--no-report")
    assert "no cache found" in shown, shown
    assert r.figure("SLC cache size").value is None and r.figure("in-cache write rate").value is None
    post = r.figure("post-cache write rate").value
    if target == "file":
        # a 256 MiB file fills within one interval: no drop could show, so no rate after a cache
        assert post is None and "no rate after a cache is measured: too few intervals" in shown, shown
    else:
        assert post > 0  # the whole drive written at one rate: the rate it kept


def test_runs_on_quick_copies_of_one_drive_make_one_sequence_report(scratch):
    """Each test of a quick sequence on a simulated drive runs on its own copy (the SLC cache
    test's keeps the cache whole); the sequence report refused them as runs on two targets."""
    runs = scratch / "runs"
    for test, *extra in (("slc-cache",), ("qos", "--set", "rounds=1", "--set", "measured=200ms")):
        p = iolab("run", test, "-t", "sim:client-nvme-slc", "--quick", "--no-report", "--runs-dir", str(runs), *extra)
        assert p.returncode == 0, p.stderr + p.stdout
    dirs = [str(r.path) for r in list_runs(runs)]
    specs = {RunStore.open(d).manifest.target["spec"] for d in dirs}
    assert len(specs) == 2 and {RunStore.open(d).manifest.target["copy_of"] for d in dirs} == {"sim:client-nvme-slc"}
    p = iolab("report", "--sequence", *dirs, "--out", str(scratch / "seq"))
    assert p.returncode == 0, p.stderr + p.stdout
    assert len(list((scratch / "seq").glob("sequence-*.html"))) == 1


@pytest.mark.parametrize("cliff", ["0", "100", "0%", "100%"])
def test_a_cliff_share_of_none_or_the_whole_is_refused_before_anything_is_written(scratch, cliff):
    # at 0 no rate falls below it, at 1 every dip would be a cliff: both ran, and found nonsense
    runs = scratch / "runs"
    p = iolab(
        "run", "slc-cache", "-t", "sim:client-nvme-slc", "--quick", "--runs-dir", str(runs), "--set", f"cliff={cliff}"
    )
    assert p.returncode == 2, p.stdout + p.stderr
    said = " ".join(p.stderr.split())
    assert f"--set cliff='{cliff}' (test slc-cache): give a share above 0% and below 100%" in said, said
    assert "Traceback" not in p.stderr and "\n\n" not in p.stderr.strip()
    assert not runs.exists()
