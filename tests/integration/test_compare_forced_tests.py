"""`iolab compare --force` of runs of different tests, as a user runs it: each test's key
figures are read only from its own runs; another test's figure is "—", never a value of a
different stimulus under its name."""

from __future__ import annotations

import json

import pytest

from .conftest import SMALL_SIM, iolab

pytestmark = pytest.mark.integration


def test_a_forced_comparison_of_iops_and_throughput_keeps_each_tests_figures(tmp_path):
    """A Throughput run's SEQ 1024 KiB reads were ranked #1 as 'RND 1024KiB R/W 100/0 IOPS'
    (its cell matched on '100/0 1024KiB' alone), and its own MB/s figures were not shown; which
    test's figures were shown depended on set order."""
    runs = tmp_path / "runs"
    # one round of short cells: every figure compared here is one a single round measures (the
    # set-order bug and the names are in the comparison, not in how long the runs measured)
    short = ("--cell-time", "100ms", "--max-rounds", "1")
    for test, target in (("iops", SMALL_SIM), ("throughput", f"file:{tmp_path}/x.img?size=64MiB")):
        p = iolab("run", test, "--quick", *short, "-t", target, "--no-report", "--runs-dir", str(runs), timeout=600)
        assert p.returncode == 0, p.stderr[-2000:]
    iops_run, tp_run = sorted(runs.iterdir(), key=lambda d: "throughput" in d.name)
    p = iolab("compare", str(iops_run), str(tp_run), "--force", "--json", "--out", str(tmp_path / "c"))
    assert p.returncode == 0, p.stderr[-2000:]
    figures = {f["name"]: f for f in json.loads(p.stdout)["ranking"]["figures"]}
    rnd = figures["RND 1024KiB R/W 100/0 IOPS"]
    # a figure only one run has is ranked for none: it was "#1" of one value
    assert rnd["values"][0] > 0 and rnd["values"][1] is None and rnd["ranks"] == [None, None], rnd
    for name in ("SEQ 1024KiB read MB/s", "SEQ 1024KiB write MB/s", "SEQ 128KiB read MB/s", "SEQ 128KiB write MB/s"):
        seq = figures[name]
        assert seq["values"][0] is None and seq["values"][1] > 0 and seq["ranks"] == [None, None], seq
    # the report is named and titled for both tests, not the first run's ("compare-iops-2drives-…")
    [html] = (tmp_path / "c").glob("*.html")
    assert html.name.startswith("compare-mixed-iops-throughput-2drives-"), html.name
    assert "<title>Mixed (IOPS, Throughput) comparison" in html.read_text()
    # the terminal's ranking says the same
    p = iolab("compare", str(tp_run), str(iops_run), "--force", "--out", str(tmp_path / "c2"))
    assert p.returncode == 0, p.stderr[-2000:]
    row = next(line for line in p.stdout.splitlines() if "RND 1024KiB R/W 100/0 IOPS" in line)
    assert row.split("│")[2].strip().startswith("—"), row
    assert "(#1)" not in p.stdout, p.stdout
    assert any("SEQ 1024KiB read MB/s" in line for line in p.stdout.splitlines()), p.stdout
