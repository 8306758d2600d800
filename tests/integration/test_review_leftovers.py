"""What a reviewer's round left on quick runs, as a user meets it: a percentile too few IOs
measure says so in show, --json and the summaries of the latency-bound test and of an RWSW
comparison; a comparison of DIRTH runs says which rule chose each run's MidIOPS; a QoS run's
measurement window says what it is used for; a forced comparison of two tests is named for both
and ranks no figure only one run has; the consistency comparison gives each steady part's verdict."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from iolab.pages.report.layoutcheck import check_report

from .conftest import SMALL_SIM, iolab
from .test_review_labels import flat, only_run, page_text
from .test_rwsw import workload  # noqa: F401  (the module-scoped capture analysed into wl/)

pytestmark = pytest.mark.integration

RWSW_SIM = "sim:enterprise-sas?user_gb=1"


def compared(tmp_path: Path, *runs: Path, extra: tuple[str, ...] = ()) -> tuple[str, Path]:
    """`iolab compare` of these runs: its terminal text and its HTML file."""
    out = tmp_path / "cmp"
    p = iolab("compare", *map(str, runs), "--out", str(out), *extra)
    assert p.returncode == 0, p.stdout + p.stderr
    [html] = out.glob("*.html")
    return flat(p.stdout), html


def test_latency_bound_says_why_its_sustained_percentile_is_not_measured(tmp_path):
    # a 1 s sustain completes 64,000 IOs, too few for a 99.99 %: show printed a bare "—"
    runs = tmp_path / "runs"
    args = ("latency-bound", "--quick", "--set", "sustain=1s", "-t", SMALL_SIM, "--no-report")
    lb = [only_run(runs, *args) for _ in (1, 2)]
    shown = flat(iolab("show", str(lb[0])).stdout)
    assert re.search(r"— sustained 99\.99 % latency: not measured, its [\d,]+ IOs are too few for a 99\.99 %", shown), (
        shown[-1500:]
    )
    doc = json.loads(iolab("show", str(lb[0]), "--json").stdout)
    [fig] = [f for f in doc["runs"][0]["figures"] if f["name"] == "sustained 99.99 % latency"]
    assert fig["value"] is None and "too few for a 99.99 %" in fig["unmeasured"], fig
    _, html = compared(tmp_path, *lb)
    text = page_text(html)
    rows = re.findall(r"D[12] iolab sim SSD [^\]]+\] [\d,]+ [\d,]+ [\d.,]+ n/m \([\d,]+ IOs\)", text)
    assert len(rows) == 2, text[:4000]


def test_an_rwsw_comparison_summary_says_which_percentiles_too_few_ios_measure(workload, tmp_path):  # noqa: F811
    # the RWSW summary printed "—" for Multi-WSAT's 99.999 % and DIRTH's 99.99 % of every drive
    runs = tmp_path / "runs"
    made = []
    for seed in (1, 2):
        target = f"{RWSW_SIM}&seed={seed}"
        common = ("-w", str(workload / "wl"), "--quick", "--cell-time", "200ms", "-t", target, "--no-report")
        made.append(only_run(runs, "multi-wsat", *common))
        made.append(only_run(runs, "dirth-rwsw", *common, "--set", "oio=1,32,1024"))
    _, html = compared(tmp_path, *made)
    text = page_text(html)
    n_m = r"n/m \([\d,]+ IOs\)"
    assert re.search(rf"Multi-WSAT: 99\.999 % RT \(composite\) \(µs\) ↓ {n_m} {n_m}", text), text[:5000]
    assert re.search(rf"DIRTH: 99\.99 % RT at OIO 32 \(µs\) ↓ {n_m} {n_m}", text), text[:5000]
    assert "n/m (N IOs): a percentile its N IOs are too few to measure" in text
    # a test neither drive ran is still a bare dash, and the caption says what it means
    assert "Replay-Native: IOPS (whole replay) ↑ — —" in text
    assert "'—': the drive has no run of that test" in text


def test_a_dirth_comparison_says_which_rule_chose_each_run_s_mid(tmp_path):
    # "each run's decision, under its own ART cutoff" said nothing of Mid, which a run decided
    # before the rule was stored (no rule.mid_from) chose among all points, past the cutoff too
    runs = tmp_path / "runs"
    args = ("dirth", "--quick", "--cell-time", "200ms", "-t", SMALL_SIM, "--no-report")
    new, old = (only_run(runs, *args) for _ in (1, 2))
    _, html = compared(tmp_path / "agree", new, old)
    text = page_text(html)
    assert "MaxIOPS under its own ART cutoff, MidIOPS as said below" in text, text[:3000]
    assert "MidIOPS of every run: IOPS closest to (Max + Min) / 2 among points with ART < 5 ms." in text
    # the second run as an older iolab stored its decision: without the Mid rule
    doc = json.loads((old / "manifest.json").read_text())
    for d in doc["decisions"]:
        d["rule"].pop("mid_from", None)
    (old / "manifest.json").write_text(json.dumps(doc))
    _, html = compared(tmp_path / "differ", new, old)
    text = page_text(html)
    said = (
        "The runs chose MidIOPS by different rules: D1: IOPS closest to (Max + Min) / 2 among points with ART < 5 ms; "
        "D2: IOPS closest to (Max + Min) / 2 among all points, whatever their ART (a run decided before MidIOPS "
        "was restricted to points under the cutoff)."
    )
    assert said in text, text[:3000]
    assert "MidIOPS of every run" not in text


def test_qos_show_says_what_its_measurement_window_is_for(tmp_path):
    # "measurement window: rounds 6–10" sat over "10 rounds: median IOPS …", figures of every round
    run = only_run(tmp_path / "runs", "qos", "--quick", "-t", SMALL_SIM, "--no-report")
    shown = flat(iolab("show", str(run)).stdout)
    write, read = re.findall(r"measurement window: rounds 6–10 \(([^)]*)\) 10 rounds: median IOPS", shown)
    assert write == "the basis of the WAF only; the figures below use all 10 rounds", shown[:3000]
    assert read == "used by no figure of this phase; the figures below use all 10 rounds"
    assert "basis: incompressible random write: the measurement window of phase 'write rounds' (rounds 6–10" in shown


def test_a_forced_comparison_of_two_tests_is_named_for_both_and_ranks_no_lone_figure(tmp_path):
    # "compare-throughput-…" for a Throughput and a latency-bound run, each figure "#1" of one value,
    # and the latency-bound run's unmeasured 99.99 % a bare "—"
    runs = tmp_path / "runs"
    qos = only_run(runs, "qos", "--quick", "--set", "rounds=2", "-t", SMALL_SIM, "--no-report")
    lb = only_run(runs, "latency-bound", "--quick", "--set", "sustain=1s", "-t", SMALL_SIM, "--no-report")
    said, html = compared(tmp_path, qos, lb, extra=("--force",))
    assert html.name.startswith("compare-mixed-qos-latency-bound-2runs-"), html.name  # one drive's two runs
    assert "(#1)" not in said, said
    assert re.search(r"sustained 99\.99 % latency \(µs; ↓\) │ — │ — \[(\w)\]", said), said
    assert re.search(r"\[\w\] not measured: its [\d,]+ IOs are too few for a 99\.99 %", said), said
    text = page_text(html)
    assert text.startswith("Mixed (QoS Rounds, Latency-Bounded Maximum IOPS) comparison"), text[:300]
    assert "a figure only one drive has is ranked for none" in text


def test_the_consistency_comparison_gives_each_steady_part_s_verdict(tmp_path):
    # the comparison's "steady part" table gave a part NOT steady by the rule (the compressing
    # entry drive's ramp from 1 s) its figures bare: only the ranking's [a] marks said so
    runs = tmp_path / "runs"
    args = ("consistency", "--quick", "--set", "duration=30s", "--set", "steady_from=1s", "--no-report")
    steady = only_run(runs, *args, "-t", SMALL_SIM)
    ramp = only_run(runs, *args, "-t", "sim:entry-sata-compress")
    _, html = compared(tmp_path, steady, ramp)
    text = page_text(html)
    table = text.split("whether it was steady by the run's rule drive steady by the rule? mean IOPS")[1][:800]
    verdicts = re.findall(r"from 1 s: ((?:NOT )?steady by the rule) \(range \d+ % [≤>] 20 %", table)
    assert verdicts == ["steady by the rule", "NOT steady by the rule"], table
    assert not [str(v) for v in check_report(html)]


def test_two_seeds_of_one_simulated_drive_compared_are_named_two_runs(tmp_path):
    # "IOPS comparison — 2 runs" was written to compare-iops-2drives-…: the file counted runs as drives
    runs = tmp_path / "runs"
    quick = ("--quick", "--cell-time", "100ms", "--max-rounds", "1", "--no-report")
    seeds = [only_run(runs, "iops", *quick, "-t", f"{SMALL_SIM}&seed={s}") for s in (1, 2)]
    _, html = compared(tmp_path, *seeds)
    assert html.name.startswith("compare-iops-2runs-"), html.name
    assert "<title>IOPS comparison — 2 runs" in html.read_text()
    assert html.with_suffix(".pdf").is_file()
