"""Cross Stimulus Recovery runs each group to its budget: a group's steady-state verdict is
evidence for information. Run from the command line on a simulated drive whose groups cannot
show they left fresh-out-of-box (8 GB tested whole: group 1 writes less than the rule's 2×
before its window ends), `iolab show`, `--json` and the report's header agree on it: the
verdict, worded for information, and no steady-state banner. Before, the header's short form
said "SS NOT ACHIEVED" and `show` "steady state NOT reached" while no banner appeared."""

from __future__ import annotations

import json
import re

from iolab.figures.endurance import steady_random_write
from iolab.pages.report.header import banners, steady_text
from iolab.pages.report.rundata import RunData

from .conftest import iolab

XSR = ("run", "xsr", "--quick", "--no-report", "-t", "sim:enterprise-sas?user_gb=8", "--capacity-limit", "16GB")


def test_xsr_groups_say_their_steady_state_for_information_in_show_json_and_header(tmp_path):
    runs = tmp_path / "runs"
    p = iolab(*XSR, "--runs-dir", str(runs), timeout=300)
    assert p.returncode == 0, p.stderr
    (run,) = runs.iterdir()
    [record] = json.loads(iolab("show", str(run), "--json").stdout)["runs"]
    phases = {ph["name"]: ph for ph in record["phases"]}
    assert list(phases) == ["group 1", "group 2", "group 3"]
    assert all(ph["for_information"] for ph in phases.values())
    # the run's own evidence: group 1's window passed but too little was written since the purge
    assert phases["group 1"]["steady"] is False and "fresh-out-of-box" in phases["group 1"]["stop_reason"]
    unsteady = [name for name, ph in phases.items() if ph["steady"] is False]

    shown = " ".join(iolab("show", str(run)).stdout.split())
    assert "NOT reached" not in shown and "NOT ACHIEVED" not in shown
    for name, ph in phases.items():
        word = {True: "steady", False: "not steady", None: "not evaluated"}[ph["steady"]]
        assert re.search(rf"{name}: \d+ complete rounds[^;]*; for information: {word};", shown), name

    data = RunData.load(run, tmp_path / "out")
    short, full = steady_text(data, short=True), steady_text(data)
    assert "NOT ACHIEVED" not in short + full
    assert short.count("not steady, for info") == len(unsteady) and full.count("(not steady, for info)") == len(
        unsteady
    )
    assert not [b for b in banners(data) if "STEADY" in b]
    # the endurance figures' WAF basis (group 2, the last random-write window) words it so too
    waf = steady_random_write(data.phases)
    assert waf is not None and "'group 2'" in waf.basis
    word = {True: "at steady state", False: "steady state not reached"}[phases["group 2"]["steady"]]
    assert f"for information: {word})" in waf.basis


def test_a_group_shorter_than_the_settle_window_says_how_many_intervals_its_final_level_averages(tmp_path):
    # group 2 of 3 one-second intervals: its final level is the mean of the 3 it has, which the
    # recovery table called "the mean of its last 5 intervals"
    from iolab.api import registry
    from iolab.pages.report.model import Table

    runs = tmp_path / "runs"
    p = iolab(*XSR[:5], "sim:enterprise-sas?user_gb=0.25", "--set", "group2_time=3s", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr
    (run,) = runs.iterdir()
    data = RunData.load(run, tmp_path / "out")
    n = len(data.phases[1].rows)
    assert 0 < n < 5
    pages = registry.get("xsr").pages(data)
    [table] = [b for pg in pages for b in pg.blocks if isinstance(b, Table) and b.caption.endswith("recovery times")]
    items = [row[0] for row in table.rows]
    assert f"Group 2 final level (mean of its {n} interval{'s' * (n != 1)} (all it has))" in items, items
    assert "Group 3 final level (mean of its last 5 intervals)" in items, items
