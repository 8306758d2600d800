"""Comparisons: ranking maths on hand-made tables (directions, ties, missing figures), refusal
of runs that do not measure the same thing, and a three-drive comparison end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

from iolab.api.comparisons import compare, key_metrics
from iolab.core.errors import IolabError
from iolab.figures.compare import (
    KeyMetric,
    RunFacts,
    check_comparable,
    competition_ranks,
    differences,
    summary_table,
)
from iolab.pages.report.layoutcheck import figures
from iolab.pages.report.rundata import RunData
from iolab.store.runstore import RunStore
from tests.unit.test_report import DriveEngine, IdlingDriveEngine, pdf_pages, record, target

# -- ranking maths ---------------------------------------------------------------------------


def test_higher_is_better_ranks_the_largest_first():
    assert competition_ranks([100.0, 300.0, 200.0], higher_is_better=True) == [3, 1, 2]


def test_lower_is_better_ranks_the_smallest_first():
    assert competition_ranks([100.0, 300.0, 200.0], higher_is_better=False) == [1, 3, 2]


def test_ties_share_a_rank_and_the_next_rank_skips():
    assert competition_ranks([5.0, 7.0, 7.0, 1.0], higher_is_better=True) == [3, 1, 1, 4]
    assert competition_ranks([5.0, 5.0, 5.0], higher_is_better=False) == [1, 1, 1]
    assert competition_ranks([2.0, 1.0, 1.0, 3.0], higher_is_better=False) == [3, 1, 1, 4]


def test_ties_are_judged_at_the_printed_precision():
    # 12,345.4 and 12,344.6 both print as "12,345": a reader sees a tie, so it is one
    assert competition_ranks([12_345.4, 12_344.6, 12_344.0], True) == [1, 1, 3]
    assert competition_ranks([12.344, 12.341, 12.36], False) == [1, 1, 3]  # "12.34", "12.34", "12.36"
    assert competition_ranks([0.012344, 0.012336], False) == [1, 1]  # both "0.01234"


def test_a_missing_figure_is_unranked_not_last():
    assert competition_ranks([None, 10.0, 20.0], higher_is_better=True) == [None, 2, 1]
    assert competition_ranks([None, None], higher_is_better=False) == [None, None]
    # one value alone is ranked against nothing: it was "#1"
    assert competition_ranks([None, 10.0], higher_is_better=True) == [None, None]


def _metric(name, higher):
    return KeyMetric(name, "x", higher, lambda phases, n=name: dict(phases)[n])


def test_summary_table_ranks_each_column_in_its_own_direction():
    iops, art = _metric("iops", True), _metric("art", False)
    drives = ["A", "B", "C"]
    data = [[("iops", 500.0), ("art", 2.0)], [("iops", 900.0), ("art", 2.0004)], [("iops", 900.0), ("art", 9.0)]]
    t = summary_table(drives, data, [iops, art])
    assert t.values == ((500.0, 2.0), (900.0, 2.0004), (900.0, 9.0))
    # IOPS: B and C tie for first, A third. ART: A and B both print "2.000" and tie for first, C third.
    assert t.ranks == ((3, 1), (1, 1), (1, 3))


def test_every_test_has_key_figures_with_a_direction():
    for test in ("iops", "throughput", "latency", "wsat"):
        ms = key_metrics(test)
        assert ms
        for m in ms:
            assert m.higher_is_better == (m.unit in ("IOPS", "MB/s")), m.name
    with pytest.raises(IolabError):
        key_metrics("nope")


# -- refusal ---------------------------------------------------------------------------------

PROFILE = {"name": "enterprise", "spec": "2.0.2", "threads": 4, "queue_depth": 32, "cell_seconds": 60.0, "quick": False}
CELLS = (("main", ("100/0 4KiB", "0/100 4KiB")),)


def facts(label, test="iops", cells=CELLS, **profile):
    return RunFacts(label, test, PROFILE | profile, cells)


def test_same_test_and_parameters_are_comparable():
    assert differences([facts("A"), facts("B"), facts("C")]) == []
    assert check_comparable([facts("A"), facts("B")], force=False) == []


def test_different_tests_are_refused_with_a_clear_message():
    with pytest.raises(IolabError) as e:
        check_comparable([facts("A"), facts("B", test="latency")], force=False)
    msg = str(e.value)
    assert "B ran test 'latency', A ran 'iops'" in msg and "--force" in msg


def test_different_parameters_are_refused_unless_forced():
    runs = [facts("A"), facts("B", queue_depth=16, cell_seconds=1.0)]
    with pytest.raises(IolabError, match=r"queue depth \(QD\): A 32 vs B 16"):
        check_comparable(runs, force=False)
    diffs = check_comparable(runs, force=True)
    assert any("queue depth (QD)" in d for d in diffs) and any("--cell-time: A 60s vs B 1s" in d for d in diffs)


def test_different_cells_are_refused():
    other = (("main", ("100/0 4KiB",)),)
    with pytest.raises(IolabError, match=r"only A has main: 0/100 4KiB"):
        check_comparable([facts("A"), facts("B", cells=other)], force=False)


def test_a_single_run_is_not_a_comparison():
    with pytest.raises(IolabError, match="at least two runs"):
        check_comparable([facts("A")], force=True)


def test_compare_refuses_runs_of_different_tests_before_writing_anything(tmp_path):
    a = record(tmp_path / "runs", "wsat", DriveEngine(), capacity_limit=8_000_000, wsat_capacity_multiple=2)
    b = record(tmp_path / "runs", "latency", DriveEngine(), max_rounds=5)
    out = tmp_path / "out"
    with pytest.raises(IolabError, match="not comparable"):
        compare([a, b], out)
    assert not out.exists() or not any(out.iterdir())


# -- three drives end to end -----------------------------------------------------------------


@pytest.fixture(scope="module")
def wsat_comparison(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    drives = [("Acme", "Fast 1", 1.0), ("Bolt", "Slow 2", 0.5), ("Core", "Mid 3", 0.75)]
    runs = [
        record(
            root,
            "wsat",
            DriveEngine(speed, shape=lambda rnd, call: 40_000 / (1 + rnd / 3) + 5_000),
            target(vendor, model),
            capacity_limit=100_000_000,
            wsat_capacity_multiple=4,
        )
        for vendor, model, speed in drives
    ]
    out = tmp_path_factory.mktemp("cmp")
    return runs, out, compare(runs, out).paths


def test_three_drive_comparison_ranks_the_drives(wsat_comparison):
    runs, out, (html_path, pdf_path) = wsat_comparison
    html = html_path.read_text()
    for label in ("D1 Acme Fast 1", "D2 Bolt Slow 2", "D3 Core Mid 3"):
        assert label in html
    assert "Ordinal ranking per column (1 = best)" in html
    # the fast drive is first on every IOPS column and on ART (lower is better)
    import re

    ranking = html[html.index("Ordinal ranking per column") :]
    rows = re.findall(r"<tr><td class=\"h\">(D\d[^<]*)</td>(.*?)</tr>", ranking)[:3]
    ranks = {label: re.findall(r"<td>(\d) of 3</td>", cells) for label, cells in rows}
    assert set(ranks["D1 Acme Fast 1"]) == {"1"}
    assert set(ranks["D2 Bolt Slow 2"]) == {"3"}
    assert set(ranks["D3 Core Mid 3"]) == {"2"}


def test_comparison_pdf_pages_carry_the_header_and_the_quick_label(wsat_comparison):
    runs, out, (html_path, pdf_path) = wsat_comparison
    pages = pdf_pages(pdf_path)
    html = html_path.read_text()
    assert len(pages) == html.count('<section class="page"')
    titles = [" ".join(p.split()) for p in pages]
    assert any("IOPS per Interval and Difference from Group Mean" in t for t in titles)
    for n, t in enumerate(titles, 1):
        assert f"Page {n} of {len(pages)}" in t and "non-compliant (quick profile)" in t
        assert "Devices Under Test" in t


def test_forced_comparison_says_so_on_every_page(tmp_path, wsat_comparison):
    runs, _, _ = wsat_comparison
    other = record(
        tmp_path / "runs",
        "wsat",
        DriveEngine(shape=lambda rnd, call: 9_000),
        capacity_limit=10_000_000,
        wsat_capacity_multiple=3,
    )
    with pytest.raises(IolabError, match="--wsat-capacity-multiple"):
        compare([runs[0], other], tmp_path / "out")
    html_path, pdf_path = compare([runs[0], other], tmp_path / "out", force=True).paths
    html = html_path.read_text()
    assert html.count('<div class="banner">FORCED COMPARISON') == html.count('<section class="page"')
    assert "FORCED COMPARISON: settings that differ between the runs" in html  # listed in full once
    assert "--wsat-capacity-multiple" in html[html.index("settings that differ between the runs") :]


# -- drives that differ: each one's own facts, and a difference plot that lines them up --------


@pytest.fixture(scope="module")
def unequal_drives(tmp_path_factory):
    """Two WSAT runs on drives of different capacity: the larger one writes twice as much, so
    it runs more intervals."""
    import dataclasses

    root = tmp_path_factory.mktemp("runs")
    small = dataclasses.replace(target("Acme", "Small 1"), capacity=16_000_000)
    large = dataclasses.replace(target("Bolt", "Large 2"), capacity=32_000_000)
    runs = [
        record(
            root,
            "wsat",
            DriveEngine(shape=lambda rnd, call: 2_000 / (1 + rnd / 3) + 1_000),
            t,
            wsat_capacity_multiple=4,
        )
        for t in (small, large)
    ]
    out = tmp_path_factory.mktemp("cmp")
    return runs, compare(runs, out).paths


def test_comparison_header_takes_every_per_drive_fact_from_its_own_run(unequal_drives):
    import re

    from iolab.pages.report.rundata import RunData

    runs, (html_path, _) = unequal_drives
    data = [RunData.load(r, html_path.parent) for r in runs]
    rounds = [len(d.phases[0].rounds) for d in data]
    stops = [d.manifest.parameters["Stop"] for d in data]
    assert rounds[0] < rounds[1] and stops[0] != stops[1]
    html = html_path.read_text()
    head = html[html.index('<div class="columns">') : html.index('<div class="content"')]
    cells = dict(re.findall(r'<td class="k">([^<]*)</td><td>([^<]*)</td>', head))
    assert cells["Rounds measured"] == f"D1 {rounds[0]}; D2 {rounds[1]}"
    assert cells["Stop"] == f"D1 {stops[0]}; D2 {stops[1]}"
    assert "16.00 MB" in cells["D1"] and "32.00 MB" in cells["D2"]
    assert "…" not in head


def test_difference_from_group_mean_is_drawn_only_where_two_drives_measured(unequal_drives):
    from iolab.pages.report.rundata import RunData

    runs, (html_path, pdf_path) = unequal_drives
    text = " ".join(" ".join(pdf_pages(pdf_path)).split())
    n = [len(RunData.load(r, html_path.parent).phases[0].rounds) for r in runs]
    assert (
        f"a difference is drawn only where at least two drives did (intervals 1–{n[0]}). "
        f"Intervals measured: D1 1–{n[0]}; D2 1–{n[1]}."
    ) in text

    from iolab.pages.report.difference_plots import group_means
    from iolab.pages.report.plot_style import Series

    # matched by interval number, not by position; one drive alone has no group mean
    a, b = Series("D1", (1, 2, 3), (10.0, 20.0, 30.0)), Series("D2", (2, 3, 4, 5), (30.0, 40.0, 50.0, 60.0))
    assert group_means([a, b]) == {2: 25.0, 3: 35.0}


# -- the PTS 2.0 tests' overlays ---------------------------------------------------------------

PTS2 = {
    "xsr": ((), ["Throughput vs Time", "Recovery Times"]),
    "dirth": (
        (("threads", "1,2"), ("depths", "1,4")),
        ["IOPS vs Total Outstanding IO", "Operating Points", "Response Time Histogram — MaxIOPS"],
    ),
    "hir": (
        (("pc_round_intervals", "1"), ("bursts", "2"), ("wait_states", "1,2"), ("baseline_time", "2s")),
        ["Mean IOPS per Wait State"],
    ),
}


@pytest.mark.parametrize("test", list(PTS2))
def test_pts2_comparisons_overlay_every_drive(test, tmp_path):
    settings, titles = PTS2[test]
    engine = IdlingDriveEngine if test == "hir" else DriveEngine
    runs = [
        record(tmp_path / "runs", test, engine(speed), target(vendor, model), settings=settings)
        for vendor, model, speed in (("Acme", "Fast 1", 1.0), ("Bolt", "Slow 2", 0.5))
    ]
    html, pdf = compare(runs, tmp_path / "out").paths
    pages = pdf_pages(pdf)
    # each drive is named on the page: in its tables, or in its plots' legends (as drawn:
    # geometry.py's record in each PNG); the header columns that named them are on page 1 only
    drawn: dict[int, str] = {}
    for n, _, rec in figures(html.read_text()):
        drawn[n] = drawn.get(n, "") + " ".join(lab for ax in (rec or {}).get("axes", ()) for lab in ax["legend"])
    for title in titles:
        [(n, page)] = [(n, p) for n, p in enumerate(pages, 1) if title in p]
        assert "No drive has" not in page
        named = page + drawn.get(n, "")
        assert "Fast 1" in named and "Slow 2" in named, (title, drawn.get(n))


def test_a_run_is_labelled_with_how_it_reached_its_drive():
    from types import SimpleNamespace

    from iolab.pages.report.parts import legs_text

    def run(split):
        return SimpleNamespace(manifest=SimpleNamespace(split=split))

    host = {"address": "10.0.0.2", "port": 8765}
    assert legs_text(run([])) == "1 path"
    assert (
        legs_text(
            run(
                [
                    {"name": "/dev/sdb", "path": "/dev/sdb", "share": 1.0, "host": None},
                    {"name": "/dev/sdc", "path": "/dev/sdc", "share": 1.0, "host": None},
                ]
            )
        )
        == "2 paths: /dev/sdb, /dev/sdc"
    )
    assert (
        legs_text(
            run(
                [
                    {"name": "10.0.0.2:8765", "path": "/x", "share": 1.0, "host": host},
                    {"name": "10.0.0.3:8765", "path": "/x", "share": 1.0, "host": host},
                ]
            )
        )
        == "2 hosts: 10.0.0.2:8765, 10.0.0.3:8765"
    )


def test_a_phase_built_from_each_drives_results_does_not_make_runs_incomparable():
    """DIRTH's operating points (and any deferred phase) differ between drives by design; the
    cells the plan fixes still have to match."""
    from types import SimpleNamespace

    from iolab.figures.compare import differences
    from iolab.pages.compare_pages.document import facts

    def run(grid, points):
        plan = {
            "phases": [
                {"name": "demand variation", "cells": grid},
                {"name": "operating points", "deferred": "the Max/Mid/Min points", "cells": points},
            ]
        }
        return SimpleNamespace(
            manifest=SimpleNamespace(test="dirth", profile={}, parameters={}, plan=plan, ignored_options={})
        )

    a = facts(run(["TC1/QD1", "TC4/QD8"], ["MaxIOPS TC4/QD8"]), "D1")
    b = facts(run(["TC1/QD1", "TC4/QD8"], ["MaxIOPS TC1/QD1"]), "D2")
    assert differences([a, b]) == []
    c = facts(run(["TC1/QD1"], ["MaxIOPS TC1/QD1"]), "D3")
    assert differences([a, c]) and "TC4/QD8" in differences([a, c])[0]


def test_dirth_report_and_key_figures_read_the_stored_decision(tmp_path):
    """The operating points are what the run decided (manifest.decisions), not a recomputation
    from today's rule: a decision edited in the manifest is what the report and the figures show."""
    import json

    from iolab.api.reports import build_document
    from iolab.pages.report.html import render
    from iolab.pages.report.rundata import RunData

    run = record(tmp_path / "runs", "dirth", DriveEngine(), settings=(("threads", "1,2"), ("depths", "1,4")))
    path = run / "manifest.json"
    m = json.loads(path.read_text())
    [d] = m["decisions"]
    d["chosen"]["MaxIOPS"] = {"threads": 2, "queue_depth": 1, "iops": 12345.0, "art_us": 678.0}
    path.write_text(json.dumps(m))
    data = RunData.load(run, tmp_path)
    [max_iops, max_art, *_] = key_metrics("dirth", [data.phases])
    assert (max_iops.get(data.phases), max_art.get(data.phases)) == (12345.0, 678.0)
    html = render(build_document(data))
    table = html.split("Operating points (the run&#x27;s decision)")[1].split("</table>")[0]
    assert "TC2/QD1" in table and "12,345" in table and "678.0" in table


# -- two runs of one drive (before/after) ------------------------------------------------------


def _iolab(*args):
    import os
    import subprocess
    import sys

    return subprocess.run(
        [str(Path(sys.executable).parent / "iolab"), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "400"},
    )


def test_two_runs_of_one_drive_are_told_apart_by_run_id_or_label(tmp_path):
    root = tmp_path / "runs"
    runs = [record(root, "throughput", DriveEngine(speed)) for speed in (1.0, 0.5)]
    ids = [RunStore.open(r).manifest.run_id for r in runs]
    assert ids[0] != ids[1]
    r = _iolab("compare", *map(str, runs), "-o", str(tmp_path / "cmp"))
    assert r.returncode == 0, r.stderr
    out = " ".join(r.stdout.split())
    drive = RunData.load(runs[0], tmp_path).label
    assert f"D1 {drive} [{ids[0]}]" in out and f"D2 {drive} [{ids[1]}]" in out
    html = next((tmp_path / "cmp").glob("*.html")).read_text()
    assert f"D1 {drive} [{ids[0]}]" in html and f"D2 {drive} [{ids[1]}]" in html
    # the user's names replace the drive's
    r = _iolab("compare", *map(str, runs), "-o", str(tmp_path / "named"), "--label", "before", "--label", "after fw 2")
    assert r.returncode == 0, r.stderr
    out = " ".join(r.stdout.split())
    assert "D1 before" in out and "D2 after fw 2" in out
    html = next((tmp_path / "named").glob("*.html")).read_text()
    assert "D1 before" in html and "D2 after fw 2" in html
    # one label per run, or a clear refusal before anything is written
    r = _iolab("compare", *map(str, runs), "-o", str(tmp_path / "bad"), "--label", "before")
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "--label: 1 label for 2 runs" in " ".join((r.stdout + r.stderr).split())
    assert not (tmp_path / "bad").exists()


def test_runs_that_share_an_id_are_named_apart_where_and_only_where_it_collides():
    """Two runs started in one second in different runs directories share their id: the pages
    name them by their runs directory too ("a/<id>"), or by their uid where those are alike;
    a run whose id is its own keeps it bare."""
    from types import SimpleNamespace

    from iolab.pages.compare_pages.document import run_labels, run_names

    def run(d: str, run_id: str, uid: str | None = None):
        m = SimpleNamespace(run_id=run_id, uid=uid, split=[], target={"spec": "sim:enterprise-sas"})
        return SimpleNamespace(manifest=m, dir=Path(d) / run_id, label="sim SSD")

    same = "20261130-092052-latency-sim"
    runs = [
        run("/x/a", same, "1234abcd99"),
        run("/y/b", same, "5678ef0099"),
        run("/x/a", "20261130-092053-latency-sim"),
    ]
    assert run_names(runs) == [f"a/{same}", f"b/{same}", "20261130-092053-latency-sim"]
    labels = run_labels(runs)
    assert labels[0] == f"D1 sim SSD [a/{same}]" and labels[1] == f"D2 sim SSD [b/{same}]"
    assert len({lab.split(" ", 1)[1] for lab in labels}) == 3  # alike but for D1/D2 no more
    # both in a directory named runs: by their uid
    twins = [run("/x/runs", same, "1234abcd99"), run("/y/runs", same, "5678ef0099")]
    assert run_names(twins) == [f"{same} (1234abcd)", f"{same} (5678ef00)"]


# -- the caveats each run's own report carries on every page ---------------------------------


def test_a_comparison_carries_each_runs_steady_state_and_audit_caveats(tmp_path, monkeypatch):
    """A forced comparison of a steady run with one cut to 4 rounds whose audit failed: each
    run's own report says STEADY STATE NOT EVALUATED and AUDIT FAILED on every page, and the
    comparison said neither, nor marked the second run's figures in the terminal's ranking."""
    import io

    from rich.console import Console

    from iolab.engines.sim import SimEngine
    from iolab.pages.report.layoutcheck import page_rules
    from iolab.pages.textreport import render_ranking
    from iolab.targets import parse_target
    from tests.unit.test_audit import planted

    tgt = "sim:enterprise-sas?user_gb=0.25"
    steady = record(tmp_path / "runs", "latency", SimEngine(), parse_target(tgt))
    short = record(tmp_path / "runs", "latency", SimEngine(), parse_target(tgt), max_rounds=4)
    bad = planted(short, tmp_path, "update cells set p99=lat_max_us*3 where id=(select min(id) from cells where round=1)", manifest=lambda m: None)  # fmt: skip
    # the edit stands for a runner that stored a percentile wrongly: raw-figures, which fails any
    # figure edited in results.db (and touches every kind), is left out so the marks are the
    # percentile invariant's alone
    from iolab.figures import audit as audit_module

    monkeypatch.setattr(
        audit_module, "INVARIANTS", tuple(i for i in audit_module.INVARIANTS if i.name != "raw-figures")
    )
    done = compare([steady, bad], tmp_path / "out", force=True)
    html = done.paths[0].read_text()
    pages = html.count('<section class="page"')
    # each caveat once per page, naming the drive it applies to (D2) and not the other
    assert (
        html.count("STEADY STATE NOT EVALUATED (D2 main: 4 rounds")
        + html.count("STEADY STATE NOT EVALUATED: D2 — in full on the Drives Compared page")
        == pages
    ), html.count("STEADY STATE NOT EVALUATED")
    assert html.count("AUDIT FAILED: D2 percentile-samples (marks: percentile)") == pages
    assert "D1" not in " ".join(c for c in done.caveats if c.startswith(("STEADY", "AUDIT")))
    assert any(
        c.startswith("AUDIT FAILED: D2 percentile-samples") and "above its largest sample" in c for c in done.caveats
    )
    # the four banners (forced, quick, steady state, audit) are each printed whole
    assert [v for v in page_rules(html, "cmp") if v.rule == "overflow"] == []
    # the ranking: every figure of D2 with a value marked, D1's none; a percentile neither run's IOs
    # measure ("—") carries only why, not D2's steady state nor the percentile invariant it failed
    st = done.summary
    assert st is not None
    dash = [v is None for v in st.values[1]]
    assert any(dash) and [v is None for v in st.values[0]] == dash
    for row in st.marks:
        assert all(mk.startswith("not measured: its ") and "too few" in mk for mk, d in zip(row, dash) if d), row
    assert all(mk == "" for mk, d in zip(st.marks[0], dash) if not d)
    assert all(mk.startswith("STEADY STATE NOT EVALUATED") for mk, d in zip(st.marks[1], dash) if not d)
    assert not any("audit" in mk for mk, d in zip(st.marks[1], dash) if d)
    out = io.StringIO()
    render_ranking(st, Console(file=out, width=400))
    text = out.getvalue()
    legend = [line.strip() for line in text.splitlines() if line.startswith("[")]
    [steady_key] = [x[1] for x in legend if x.endswith("] STEADY STATE NOT EVALUATED")]
    assert all("] not measured: its" in x for x in legend if x[1] != steady_key), legend
    assert f"— [{steady_key}]" not in text and text.count(f" [{steady_key}]") == dash.count(False), text
