"""A reviewer's reading of quick runs: each label on a page, in `show` and in the notes is true
of the run it came from (its parameters as run, what a figure is the mean of, what the drive
is), and a figure that is missing says why."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest

from .conftest import SMALL_SIM, iolab

pytestmark = pytest.mark.integration


def flat(text: str) -> str:
    return " ".join(text.split())


def page_text(html: Path) -> str:
    """The report's words, as a reader sees them: tags and drawings dropped, blanks folded."""
    t = re.sub(r"<(style|svg)\b.*?</\1>", " ", html.read_text(), flags=re.S)
    return flat(unescape(re.sub(r"<[^>]+>", " ", t)))


def only_run(runs: Path, *args: str) -> Path:
    before = set(runs.iterdir()) if runs.exists() else set()
    p = iolab("run", *args, "--runs-dir", str(runs), timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    (run,) = set(runs.iterdir()) - before
    return run


@pytest.fixture(scope="module")
def hir_run(tmp_path_factory) -> Path:
    """A quick HIR run with its report (rounds of 2 × 1 s intervals, a few seconds)."""
    return only_run(tmp_path_factory.mktemp("hir") / "runs", "hir", "--quick", "-t", SMALL_SIM)


def test_hir_notes_give_the_preconditioning_round_the_run_used(hir_run):
    # the note said "(pc_round_intervals, 30 × 1 min)" on a run whose rounds were 2 × 1 s
    shown = flat(iolab("show", str(hir_run)).stdout)
    said = "pc_round_intervals; this run 2 × 1.00 s, the default 30 × 1 min"
    assert said in shown, shown[:1500]
    assert said in page_text(hir_run / "report" / f"{hir_run.name}.html")


def test_hir_says_recovery_is_against_the_tracking_variable_not_every_interval(hir_run):
    # "the preconditioning window's mean IOPS" read as the mean of every window interval; the
    # level is the average of each round's last interval only
    text = page_text(hir_run / "report" / f"{hir_run.name}.html")
    said = "(recovery = mean burst IOPS / the preconditioning window's average of IOPS of interval 2, each round's last interval)"
    assert said in text, text[-3000:]
    assert "window's mean IOPS" not in text
    assert "the IOPS of each round's last interval (interval 2), not of every interval" in text


def test_hir_preconditioning_caption_names_its_rounds_once(hir_run):
    text = page_text(hir_run / "report" / f"{hir_run.name}.html")
    assert "rounds rounds" not in text
    assert re.search(r"every complete interval of rounds 1–\d+; time is", text), text[:3000]


def test_a_quick_copy_names_the_drive_it_stands_for_and_its_size(tmp_path):
    # both drives read "Capacity 536.9 MB", a 400 GB and a 480 GB drive alike, in the report, the
    # comparison and `show`
    runs = tmp_path / "runs"
    a = only_run(runs, "latency", "--quick", "--max-rounds", "5", "-t", "sim:enterprise-sas")
    b = only_run(runs, "latency", "--quick", "--max-rounds", "5", "-t", "sim:client-nvme-slc", "--no-report")
    shown = flat(iolab("show", str(a)).stdout)
    assert "536.9 MB, tested 536.9 MB; a copy of sim:enterprise-sas, a 400.0 GB drive)" in shown, shown[:600]
    target = json.loads(iolab("show", str(a), "--json").stdout)["runs"][0]["target"]
    assert (target["copy_of"], target["copy_of_capacity_bytes"], target["capacity_bytes"]) == (
        "sim:enterprise-sas",
        400_000_000_000,
        536_870_912,
    ), target
    report = page_text(a / "report" / f"{a.name}.html")
    # the header column names the size (its Target row the preset; the whole spec overflowed the
    # column), Run Details' note the drive copied
    assert "Capacity 536.9 MB (a copy of a 400.0 GB drive)" in report, report[:3000]
    assert "--quick simulated a 0.537 GB copy of sim:enterprise-sas" in report, report
    p = iolab("compare", str(a), str(b), "--out", str(tmp_path / "cmp"))
    assert p.returncode == 0, p.stdout + p.stderr
    [html] = (tmp_path / "cmp").glob("*.html")
    both = page_text(html)
    # each drive's model names its preset beside it
    assert (
        "client-nvme-slc, OP 9.4% for GC (9.7% at full size), 14.8% with the SLC cache; FW sim-0.1.0; 536.9 MB "
        "(a copy of a 480.0 GB drive)" in both
    ), both[:3000]
    assert "enterprise-sas, OP 27.9% (28.0% at full size); FW sim-0.1.0; 536.9 MB (a copy of a 400.0 GB drive)" in both


def test_a_percentile_too_few_ios_measured_says_so_in_summaries_and_in_show(tmp_path):
    # a sequence's and a comparison's summary printed a bare "—" ("where the run measured none")
    # for a 99.999 % of 42,398 IOs, and `show` of a WSAT run gave no reason for its "—"
    runs = tmp_path / "runs"
    lat = [only_run(runs, "latency", "--quick", "--max-rounds", "5", "-t", SMALL_SIM, "--no-report") for _ in (1, 2)]
    wsat = only_run(runs, "wsat", "--quick", "-t", SMALL_SIM, "--no-report")
    shown = flat(iolab("show", str(wsat)).stdout)
    assert re.search(r"— 99\.999 %, window \(last ≤5 intervals\): not measured, its [\d,]+ IOs are too few", shown), (
        shown[-1500:]
    )
    p = iolab("report", "--sequence", str(lat[0]), str(wsat), "-o", str(tmp_path / "seq"))
    assert p.returncode == 0, p.stdout + p.stderr
    [seq] = (tmp_path / "seq").glob("*.html")
    summary = page_text(seq)
    assert re.search(r"Latency 99\.999 % RND 4KiB R/W 0/100 \(µs\) ↓ n/m \([\d,]+ IOs\)", summary), summary[:4000]
    assert re.search(r"Write Saturation 99\.999 %, window \(last ≤5 intervals\) \(µs\) ↓ n/m \([\d,]+ IOs\)", summary)
    assert "n/m (N IOs): a percentile its N IOs are too few to measure" in summary
    p = iolab("compare", *map(str, lat), "--out", str(tmp_path / "cmp"))
    assert p.returncode == 0, p.stdout + p.stderr
    [cmp] = (tmp_path / "cmp").glob("*.html")
    text = page_text(cmp)
    # each drive's row: four figures, then the two 99.999 % it could not measure
    rows = re.findall(
        r"D[12] iolab sim SSD [^\]]+\] [\d.,]+ [\d.,]+ [\d.,]+ [\d.,]+ n/m \(\S+ IOs\) n/m \(\S+ IOs\)", text
    )
    assert len(rows) == 2, text[:4000]
    assert "n/m (N IOs): a percentile its N IOs are too few to measure" in text


def test_dirth_says_why_a_fixed_demand_point_outside_its_grid_has_no_figure_and_names_its_cells(tmp_path):
    # a grid set with --set printed "IOPS at TC32/QD32 —" and nothing more
    grid = ("--set", "threads=1,4", "--set", "depths=1,8")
    run = only_run(tmp_path / "runs", "dirth", "--quick", *grid, "-t", SMALL_SIM, "--no-report")
    why = "the run's demand grid (TC 4, 1 × QD 8, 1) has no TC32/QD32"
    shown = flat(iolab("show", str(run)).stdout)
    assert f"— IOPS at TC32/QD32: not measured, {why}" in shown, shown[-1500:]
    # its preconditioning's one cell, keyed TC4/QD8, printed as a column "R/W TC4"
    assert "R/W TC4" not in shown
    pc = shown[shown.index("preconditioning:") : shown.index("demand variation:")]
    assert "per cell over the measurement window" in pc and "TC4/QD8" in pc, pc
    doc = json.loads(iolab("show", str(run), "--json").stdout)
    [fig] = [f for f in doc["runs"][0]["figures"] if f["name"] == "IOPS at TC32/QD32"]
    assert fig["value"] is None and fig["unmeasured"] == why, fig
    # its report's workload-dependent preconditioning read "the test loop, not reported"
    p = iolab("report", str(run))
    assert p.returncode == 0, p.stdout + p.stderr
    text = page_text(run / "report" / f"{run.name}.html")
    assert "not reported" not in text[text.index("PC2 (WDPC)") :][:60]
    assert "PC2 (WDPC) the PC phase: RND 8KiB 0/100 at TC4/QD8, rounds of 1.00 s, to steady state" in text


def test_a_file_target_s_media_is_named_as_its_block_device_s(scratch):
    # a file on a VM's virtio disk read "Sectors / media ... rotational (HDD)", as if the file
    # were a disk; the flag is the block device's under the file's filesystem
    run = only_run(
        scratch / "runs", "wsat", "--quick", "--cell-time", "200ms", "-t", f"file:{scratch}/d.img?size=16MiB"
    )
    facts = json.loads((run / "manifest.json").read_text())["target"]["facts"]
    if not facts.get("backing_device"):
        pytest.skip("the scratch directory sits on no block device (tmpfs, overlay)")
    text = page_text(run / "report" / f"{run.name}.html")
    media = re.search(r"Sectors / media (.*?) Purge", text)
    assert media and media.group(1).endswith(f"; of {facts['backing_device']}, the block device under the file"), (
        media.group(1) if media else text[:3000]
    )


def test_qos_says_why_its_last_round_percentile_is_not_measured(tmp_path):
    # "write: last round 99.99 % —" in show, --json and the ranking, with no reason
    run = only_run(tmp_path / "runs", "qos", "--quick", "--set", "rounds=2", "-t", SMALL_SIM, "--no-report")
    shown = flat(iolab("show", str(run)).stdout)
    for op in ("write", "read"):
        assert re.search(
            rf"— {op}: last round 99\.99 %: not measured, its [\d,]+ IOs are too few for a 99\.99 %", shown
        ), shown[-1500:]
    doc = json.loads(iolab("show", str(run), "--json").stdout)
    [fig] = [f for f in doc["runs"][0]["figures"] if f["name"] == "write: last round 99.99 %"]
    assert fig["value"] is None and "too few for a 99.99 %" in fig["unmeasured"], fig


def test_a_bisection_step_s_shortfall_is_printed_apart_from_the_tolerance(tmp_path):
    # "delivered 85,352 (-2.0 %), short by more than the 2 % tolerance: not met": the change, as
    # printed, must agree with the verdict beside it (the default drive's quick ramp makes a step
    # 2.007 % short)
    run = only_run(tmp_path / "runs", "latency-demand", "--quick")
    shown = flat(iolab("show", str(run)).stdout)
    steps = re.findall(
        r"delivered [\d,]+ \(([+-][\d.]+) %\), (within|short by more than) the ([\d.]+) % tolerance", shown
    )
    assert steps, shown[-2000:]
    for change, verdict, tolerance in steps:
        # short: delivered more than the tolerance below the demand (above it is never short)
        assert (-float(change) <= float(tolerance)) == (verdict == "within"), (change, verdict, tolerance)
    # the report's table of every step: no change printed as the tolerance itself ("-2.0 %" for
    # a step judged short)
    text = page_text(run / "report" / f"{run.name}.html")
    tables = re.findall(r"Every demand step — .*? Source:", text)
    assert tables and not any(re.search(r" [+-]2\.0 % ", t) for t in tables), tables


def test_wsat_s_header_and_histogram_name_only_what_it_ran(tmp_path):
    # WSAT starts at FOB with no preconditioning, yet its header read "(the whole run,
    # preconditioning included)"
    run = only_run(tmp_path / "runs", "wsat", "--quick", "-t", SMALL_SIM)
    text = page_text(run / "report" / f"{run.name}.html")
    assert "PC1 (WIPC) none (starts at FOB after purge)" in text
    assert re.search(r"Write amplification [\d.]+ measured over [\d.]+ [MG]B host writes \(the whole run\)", text), (
        text[:3000]
    )
    assert "preconditioning included" not in text
    # nor its histogram of 4 KiB writes to hold "all IOs, read and write"
    assert "Response time histogram, 0/100 4KiB (all IOs, writes)" in text
    assert "read and write" not in text
    # its minimum interval (41,082) stood beside the budget's cut last interval (40,695) in the
    # table, unexplained: `show` says which intervals the minimum is of
    shown = flat(iolab("show", str(run)).stdout)
    minimum = re.search(r"IOPS, minimum interval │ ([\d,]+) │", shown)
    one = re.search(
        r"IOPS, minimum interval: the slowest of (\d+) full intervals; the last, cut to ([\d.]+) s by the budget "
        r"\(([\d,]+) IOPS\), is no interval of their length and is left out",
        shown,
    )
    # the interval before the final one may end at its cap too: every interval the budget cut is
    # named (only the last was, beside a slower one in the table)
    several = re.search(
        r"IOPS, minimum interval: the slowest of (\d+) full intervals; the (\d+) the budget cut short, (.*?), are "
        r"no intervals of their length and are left out",
        shown,
    )
    assert minimum and (one or several), shown[-1500:]
    cuts = [one.group(2, 3)] if one else re.findall(r"interval \d+ \(([\d.]+) s, ([\d,]+) IOPS\)", several.group(3))
    assert several is None or len(cuts) == int(several.group(2)), shown
    # each cut interval is a partial row of the table, and the minimum is none of them
    for seconds, iops in cuts:
        assert re.search(rf"\(partial, {re.escape(seconds)} s\)", text) and minimum.group(1) != iops, shown


def sequence_summary(out: Path, *runs: Path) -> str:
    """`iolab report --sequence RUNS -o OUT`'s words."""
    p = iolab("report", "--sequence", *map(str, runs), "-o", str(out))
    assert p.returncode == 0, p.stdout + p.stderr
    [html] = out.glob("*.html")
    return page_text(html)


def disagreement(text: str, most: str, more: str, why: str) -> re.Match:
    """The summary's row of a maximum (`most`, a pattern) below another test's figure (`more`),
    its ratio checked against the two values printed."""
    row = re.search(rf"{most} ([\d,]+) {more} ([\d,]+) ([\d.]+)x: {why}", text)
    assert row, text[text.find("Tests that disagree") :][:1500]
    low, high, ratio = (float(g.replace(",", "")) for g in row.groups())
    assert high > 1.1 * low and abs(high / low - ratio) < 0.01, row.group(0)
    return row


def test_a_maximum_below_another_tests_measured_rate_is_said_on_the_sequence_summary(tmp_path):
    # a characterise summary printed "max read IOPS (rounds) 7,800" (Max IOPS, its search ended by
    # a noisy step) beside "max sustainable read IOPS 44,767" (Demand) of one drive, unremarked
    runs = tmp_path / "runs"
    quick = ("--quick", "--cell-time", "1s", "--no-report", "-t", SMALL_SIM)
    # a search of QD1 alone stops far below the rate the demand ramp sustains at its depths
    most = only_run(runs, "max-iops", *quick, "--set", "queue_depths=1", "--set", "thread_counts=1")
    ramp = only_run(runs, "latency-demand", *quick)
    text = sequence_summary(tmp_path / "seq", most, ramp)
    assert "TESTS DISAGREE: Max IOPS 4 KiB random read IOPS below Demand's" in text, text[:3000]
    row = disagreement(
        text, r"Max IOPS: max read IOPS \(rounds\)", r"Demand: max sustainable read IOPS", "its search stops at"
    )
    # the figures are the runs' own, as `iolab show` prints them
    assert f"max read IOPS (rounds) │ {row.group(1)} │" in flat(iolab("show", str(most)).stdout)
    assert f"max sustainable read IOPS │ {row.group(2)} │" in flat(iolab("show", str(ramp)).stdout)
