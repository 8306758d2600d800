"""RWSW reports and comparisons from recorded runs (scripted engine, no fio): each test's
pages, the Self-Test pages from the capture's analysis, the whole-replay figures computed
by hand, and the RWSW summary table with its rankings across two drives."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from rich.console import Console

from iolab import suites
from iolab.api import registry
from iolab.api.comparisons import compare, key_metrics
from iolab.api.reports import build_document
from iolab.core.errors import IolabError
from iolab.core.units import KiB, num
from iolab.core.workload import Stream
from iolab.figures.compare import check_comparable, replay_totals
from iolab.pages.compare_pages.document import facts
from iolab.pages.compare_pages.sequence import group_by_drive, sequence_summary_metrics
from iolab.pages.report.html import render
from iolab.pages.report.rundata import RunData
from iolab.pages.textreport import render as render_text
from iolab.run.runner import Runner
from iolab.run.runstart import RunOptions, start
from iolab.store.runstore import RunStore
from iolab.suites.rwsw_common import copy_inputs
from iolab.traces.analysis import composite, replay, save_composite
from iolab.traces.analysis.streams import analyse
from iolab.traces.synth import SynthSpec, generate
from tests.unit.test_report import DriveEngine, pdf_pages, target

MIX = (Stream("rnd", "read", 64 * KiB, 0.5), Stream("seq", "write", 4 * KiB, 0.3), Stream("rnd", "write", 8 * KiB, 0.2))


class RwswEngine(DriveEngine):
    """DriveEngine, run on time: a real engine stops at whichever of the interval's duration
    and the phase's remaining byte budget comes first, and the budget is far off here."""

    def __init__(self, speed=1.0, by_tag=None, **kw):
        super().__init__(speed, **kw)
        self.by_tag = by_tag or {}

    def _iops(self, rnd, call):
        for key, iops in self.by_tag.items():
            if self.tag.endswith(key):
                return iops
        return super()._iops(rnd, call)

    def run(self, target, workload, raw_dir, tag, progress=None):
        self.tag = tag
        if workload.duration_s is not None:
            workload = workload.with_(bytes_budget=None)
        return super().run(target, workload, raw_dir, tag, progress)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """What `iolab trace analyze` writes, from a synthetic capture with known streams."""
    d = tmp_path_factory.mktemp("workload")
    table, _ = generate(SynthSpec(MIX, ios=4000, iops=1000, latency_us=500, capacity=1 << 30), d / "trace.parquet")
    a = analyse(table, step_s=1.0)
    a.save(d / "analysis.json")
    save_composite(composite(a, queue_depth=4), d / "composite.toml", a)
    replay(a, queue_depth=4).save(d / "replay.toml")
    return d, a


def record(root, test, engine, inputs_dir, tgt, quick=True, **profile):
    prof = suites.make_profile("enterprise", quick=quick, cell_seconds=1.0, **profile)
    plan = registry.build_plan(test, prof, tgt, inputs_dir)
    store = start(plan, tgt, engine, RunOptions(tested_by="QA lab"), root)
    copy_inputs(inputs_dir, store.dir)
    Runner(plan, tgt, engine, store, RunOptions(tested_by="QA lab")).run()
    return store.dir


DRIVES = (target("Acme", "Slow 1"), target("Bolt", "Fast 2"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory, inputs):
    """The four RWSW tests on two drives; the second is twice as fast."""
    root = tmp_path_factory.mktemp("runs")
    out = {}
    for speed, tgt in zip((1.0, 2.0), DRIVES):
        for test in registry.names():
            if registry.get(test).sequence != "rwsw":
                continue
            # The scripted drive writes GBs per interval: a large byte budget lets steady state end the phases.
            out[(tgt.short_name, test)] = record(
                root, test, RwswEngine(speed), inputs[0], tgt, wsat_capacity_multiple=1000
            )
    return out


def doc_for(run_dir, tmp_path):
    return build_document(RunData.load(run_dir, tmp_path))


def titles(doc):
    return [p.title for p in doc.pages]


SELFTEST = [
    "Self-Test — IO Streams",
    "Self-Test — IO Stream Map",
    "Self-Test — Outstanding IO and Response Times",
    "Self-Test — Per-Step Metrics",
]


def test_multi_wsat_pages(runs, tmp_path):
    doc = doc_for(runs[("Slow_1", "multi-wsat")], tmp_path)
    t = titles(doc)
    assert t[:3] == ["Applied Workload and Steady-State Results", "IOPS and MB/s vs Time", "Response Times vs Time"]
    assert "Steady State Measurement Window — IOPS composite" in t and "Response Time Histogram — composite" in t
    assert t[-5:-1] == SELFTEST and t[-1] == "Run Details and Notes"
    html = render(doc)
    assert "Real World Storage Workload Performance Test Specification — RWSW 1.0.x (enterprise)" in html
    assert "steady state reached" in html.lower() and "RND 64KiB R" in html


def test_streams_pages_have_one_figure_per_stream_and_one_window_per_stream(runs, tmp_path):
    run = RunData.load(runs[("Slow_1", "streams-wsat")], tmp_path)
    doc = build_document(run)
    t = titles(doc)
    assert t[:3] == ["IOPS per Stream", "IOPS per Interval — All Streams", "Stop Reasons"]
    for s in MIX:
        assert f"Steady State Measurement Window — IOPS {s.label()}" in t
    html = render(doc)
    for ph in run.phases:  # the table shows each stream's stored window mean
        assert f"{ph.cells[0].iops:,.0f}" in html


def test_replay_and_dirth_pages(runs, tmp_path):
    rt = titles(doc_for(runs[("Slow_1", "replay")], tmp_path))
    assert rt[:4] == [
        "Replay-Native Summary",
        "Response Times vs Time",
        "Tabular Results — Replay-Native",
        "Response Time Histogram — Whole Replay",
    ]
    assert "Preconditioning — Composite to Steady State" in rt
    dt = titles(doc_for(runs[("Slow_1", "dirth-rwsw")], tmp_path))
    # the DIRTH flow's pages (as the PTS DIRTH's, without the TC × QD grid's Demand Variation), then the summary
    for title in (
        "Preconditioning — IOPS per Round",
        "Demand Variation Rounds",
        "Demand Intensity",
        "Throughput vs Total Outstanding IO",
        "Response Times vs Total Outstanding IO",
        "Tabular Results — DIRTH",
        "Summary at OIO = 32",
    ):
        assert title in dt, title
    assert "Demand Variation" not in dt


def test_selftest_pages_print_the_captures_own_step_figures(runs, inputs, tmp_path):
    _, a = inputs
    html = render(doc_for(runs[("Slow_1", "replay")], tmp_path))
    for step in a.steps:
        # as the table prints them (a short last step's 879.8 IOPS; "880" was found only inside
        # the stream map's base64 PNG while it was one)
        assert f"<td>{step.ios:,}</td>" in html and f"<td>{num(step.iops)}</td>" in html
    assert f"{a.total_ios:,} reads and writes" in html
    # the replay's IOPS plot carries the capture's own IOPS as the baseline
    assert "IOPS and MB/s per step, with the capture&#x27;s own" in html


def test_a_run_without_the_analysis_says_there_is_no_self_test(runs, tmp_path):
    run = RunData.load(runs[("Slow_1", "dirth-rwsw")], tmp_path)
    (run.dir / "inputs" / "analysis.json").rename(run.dir / "inputs" / "analysis.moved")
    try:
        doc = build_document(RunData.load(run.dir, tmp_path))
    finally:
        (run.dir / "inputs" / "analysis.moved").rename(run.dir / "inputs" / "analysis.json")
    assert "Self-Test — IO Streams" not in titles(doc)
    assert "No Self-Test page: this run was given no stream analysis" in render(doc)


def test_replay_totals_weight_each_step_by_its_runtime(inputs, tmp_path):
    """Steps of 2 s at 1,000 IOPS and 1 s at 4,000 and 7,000: 13,000 IOs in 4 s is 3,250 IOPS,
    not the 4,000 mean of the steps."""
    d, a = inputs
    wl = tmp_path / "wl"
    wl.mkdir()
    for name in ("composite.toml", "analysis.json"):
        (wl / name).write_bytes((d / name).read_bytes())
    plan = replay(a, queue_depth=4)
    steps = tuple(dataclasses.replace(s, duration_s=dur) for s, dur in zip(plan.steps[:3], (2.0, 1.0, 1.0)))
    dataclasses.replace(plan, steps=steps).save(wl / "replay.toml")
    keys = [f"step_{s.index}" for s in steps]
    engine = RwswEngine(by_tag=dict(zip(keys, (1000, 4000, 7000))))
    run = record(tmp_path / "runs", "replay", engine, wl, DRIVES[0], quick=False, max_rounds=6)
    t = replay_totals(RunData.load(run, tmp_path).phases)
    assert (t.steps, t.seconds) == (3, 4.0)
    assert t.ios == pytest.approx(13000, abs=3)
    assert t.iops == pytest.approx(3250, rel=1e-3)
    # ART is IO-weighted: DriveEngine's latency is 1e6 × QD / IOPS per step
    art = (2000 * 4e6 / 1000 + 4000 * 4e6 / 4000 + 7000 * 4e6 / 7000) / 13000
    assert t.art_us == pytest.approx(art, rel=1e-3)


def test_rwsw_summary_ranks_the_faster_drive_first_in_every_column(runs, tmp_path):
    by_drive = {}
    for (drive, test), path in runs.items():
        by_drive.setdefault(drive, {})[test] = RunData.load(path, tmp_path).phases
    slow, fast = by_drive["Slow_1"], by_drive["Fast_2"]
    pairs = sequence_summary_metrics(
        registry.sequence("rwsw"), {"streams-wsat": [slow["streams-wsat"], fast["streams-wsat"]]}
    )
    names = [m.name for _, m in pairs]
    assert names[:8] == [
        "Multi-WSAT: IOPS (composite)",
        "Multi-WSAT: MB/s (composite)",
        "Multi-WSAT: 99.999 % RT (composite)",
        "Replay-Native: IOPS (whole replay)",
        "Replay-Native: MB/s (whole replay)",
        "Replay-Native: 99.999 % RT (whole replay)",
        "DIRTH: MB/s at OIO 32",
        "DIRTH: 99.99 % RT at OIO 32",
    ]
    assert names[8:] == [f"Individual Streams: {s.label()} IOPS" for s in MIX]
    from iolab.figures.compare import summary_table

    st = summary_table(["slow", "fast"], [slow, fast], [m for _, m in pairs])
    assert all(v is not None for row in st.values for v in row)
    assert st.ranks == (tuple([2] * len(names)), tuple([1] * len(names)))
    # IOPS and MB/s are higher for the fast drive, response times lower: each column has its direction
    for j, (_, m) in enumerate(pairs):
        assert (st.values[1][j] > st.values[0][j]) == m.higher_is_better


def test_rwsw_comparison_report_of_two_drives(runs, tmp_path):
    paths = compare(list(runs.values()), tmp_path / "cmp").paths
    html_path, pdf_path = paths
    assert pdf_path.name.startswith("compare-rwsw-2drives-")
    html = html_path.read_text()
    assert "RWSW summary: key figures per drive" in html and "Ordinal ranking of the drives per key figure" in html
    # every Multi-WSAT and stream phase of these runs reached steady state: their window is one
    assert "Multi-WSAT and Individual Streams: mean over the steady-state window;" in html
    assert html.count("<td>1 of 2</td>") == html.count("<td>2 of 2</td>") == 8 + len(MIX)
    pages = pdf_pages(pdf_path)
    doc_pages = html.count('<section class="page"')
    assert len(pages) == doc_pages  # nothing overflowed
    for title in (
        "Multi-WSAT — IOPS per Interval vs Group Mean",
        "Replay-Native — IOPS per Step vs Group Mean",
        "DIRTH — MB/s and 5-Nines vs OIO",
        "Self-Test — IO Streams",
        "Drives Compared",
    ):
        assert title in html, title
    assert "non-compliant (quick profile): D1, D2" in html


def test_one_test_compared_alone_uses_its_own_key_figures(runs, tmp_path):
    doc_runs = [RunData.load(runs[(d.short_name, "dirth-rwsw")], tmp_path) for d in DRIVES]
    ms = key_metrics("dirth-rwsw", [r.phases for r in doc_runs])
    assert [m.name for m in ms] == ["MB/s at OIO 32", "99.99 % RT at OIO 32", "99.999 % RT at OIO 32"]
    cell = next(c for ph in doc_runs[0].phases for c in ph.cells if c.key == "TC1/QD32")
    assert ms[0].get(doc_runs[0].phases) == cell.mbps
    assert ms[1].get(doc_runs[0].phases) == cell.histogram.percentile(99.99)
    streams = key_metrics("streams-wsat", [RunData.load(runs[("Slow_1", "streams-wsat")], tmp_path).phases])
    assert [m.name for m in streams] == [f"{s.label()} IOPS" for s in MIX]


def test_runs_of_different_workloads_are_not_compared(runs, inputs, tmp_path):
    d, a = inputs
    other = tmp_path / "other"
    other.mkdir()
    save_composite(composite(a, queue_depth=8), other / "composite.toml", a)
    run = record(tmp_path / "runs", "multi-wsat", RwswEngine(), other, DRIVES[1])
    mine = RunData.load(runs[("Slow_1", "multi-wsat")], tmp_path)
    theirs = RunData.load(run, tmp_path)
    with pytest.raises(IolabError, match="workload: .* ran workload"):
        check_comparable([facts(mine, "D1"), facts(theirs, "D2")], force=False)
    assert check_comparable([facts(mine, "D1"), facts(theirs, "D2")], force=True)


def test_two_runs_of_one_test_on_one_drive_are_ambiguous(runs, tmp_path):
    first = RunData.load(runs[("Slow_1", "replay")], tmp_path)
    with pytest.raises(IolabError, match="two replay runs on"):
        group_by_drive(
            [first, first, RunData.load(runs[("Fast_2", "multi-wsat")], tmp_path)], registry.sequence("rwsw")
        )
    with pytest.raises(IolabError, match="at least two drives"):
        group_by_drive([first, RunData.load(runs[("Slow_1", "multi-wsat")], tmp_path)], registry.sequence("rwsw"))


def test_show_prints_one_row_per_cell_for_rwsw_runs(runs):
    console = Console(record=True, width=120)
    render_text(RunStore.open(runs[("Fast_2", "dirth-rwsw")]), console, registry.get("dirth-rwsw").view)
    text = console.export_text()
    assert "per cell over the measurement window" in text and "per cell, mean" not in text
    # each column its own reduction: the 99.999 % is the merged histogram's, no mean
    assert all(h in " ".join(text.split()) for h in ("IOPS (mean)", "ART µs (mean)", "99.999 % µs (merged histogram)"))
    assert all(re.search(rf"\bOIO {n}\b", text) for n in (1, 32, 1024))


def test_show_ends_with_the_tests_key_figures_for_this_run(runs):
    from iolab.api import registry
    from iolab.api import reports as api
    from iolab.figures.summary import summarise

    store = RunStore.open(runs[("Fast_2", "multi-wsat")])
    console = Console(record=True, width=160)
    api.show(store, console)
    text = console.export_text()
    metrics = registry.find("multi-wsat").key_figures([summarise(store)])
    assert "key figures" in text and metrics
    for m in metrics:  # each figure printed with this run's value, as compare would rank it
        assert re.search(rf"{re.escape(m.name)}\s.*{re.escape(m.fmt(m.get(summarise(store))))}", text)


def test_sequence_report_prints_the_self_test_pages_once(runs, tmp_path):
    """The four RWSW tests replay one capture: its Self-Test pages follow the first test only,
    while each test's own report keeps them."""
    import os
    import subprocess
    import sys

    dirs = [str(d) for (drive, _), d in runs.items() if drive == "Slow_1"]
    r = subprocess.run(
        [str(Path(sys.executable).parent / "iolab"), "report", "--sequence", *dirs, "--out", str(tmp_path / "seq")],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "COLUMNS": "400"},
    )
    assert r.returncode == 0, r.stderr
    html = next((tmp_path / "seq").glob("sequence-*.html")).read_text(encoding="utf-8")
    heads = re.findall(r'<span class="test"[^>]*>([^<]*)</span>', html)
    selftest = [i for i, h in enumerate(heads) if " — Self-Test" in h]
    assert [heads[i].split(" — ", 1)[1] for i in selftest] == SELFTEST, heads
    first_test = heads[1].split(" — ")[0]  # the summary comes first, then the run that started first
    assert all(h.startswith(first_test) for h in heads[1 : selftest[-1] + 1])
    assert "Self-Test pages of a capture follow the first run that replayed it" in html
    # the summary's Spec is the runs' own, not the PTS revision of the profile (2.0.2 under RWSW)
    spec = re.search(r"<td class=\"k\">Spec</td><td>([^<]*)</td>", html)
    assert spec and spec.group(1).startswith("RWSW 1.0"), spec and spec.group(0)
    assert [t for t in titles(doc_for(Path(dirs[-1]), tmp_path)) if t.startswith("Self-Test")] == SELFTEST
