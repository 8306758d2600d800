"""Report wording that matches the run: the steady-state rule names the round limit the phases
really have (or that a phase only reports it), a partial last interval is not called complete,
the live display counts cells the one way, and the XSR comparison column uses the run's own
recovery tolerance."""

from __future__ import annotations

import html
import json
import re

import pytest

from iolab.pages.compare_pages.pts2 import hir_overlays
from iolab.pages.report.model import Table
from iolab.pages.report.pts import wsat_pages
from iolab.pages.report.rundata import RunData
from iolab.pages.report.sections import measurement_window_pages

from .conftest import iolab, killed_at

SMALL = "sim:enterprise-sas?blocks_per_plane=64&pages_per_block=16&op=0.28"


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_wsat_states_its_own_limit_and_its_partial_last_interval(tmp_path):
    runs = tmp_path / "runs"
    # the 6.3× budget runs out in interval 19 of 1 s (the profile's round limit is 25)
    p = iolab(
        "run",
        "wsat",
        "--target",
        SMALL,
        "--cell-time",
        "1s",
        "--wsat-capacity-multiple",
        "6.3",
        "--no-report",
        "--runs-dir",
        str(runs),
    )
    assert p.returncode == 0, p.stderr
    out = _flat(p.stdout)
    rule = re.search(r"steady-state rule: (.*?) note:|steady-state rule: (.*?) main:", out)
    assert rule and "at most 25 rounds" not in rule.group(0)  # main: the profile's limit beside 14 intervals
    assert "reported, not a stop, in main" in out
    run = RunData.load(next(runs.iterdir()), tmp_path / "work")
    sources = " ".join(f.source for page in wsat_pages(run) for f in page.blocks if hasattr(f, "source"))
    last = run.phases[0].rows[-1].round
    # the budget's end: the last interval and, when its cap came first, the one before it
    assert re.search(rf"every interval \(rounds 1–{last}; (round {last - 1} partial; )?round {last} partial\)", sources)
    assert "every complete interval" not in sources


def test_xsr_key_figure_uses_the_runs_recovery_tolerance(tmp_path):
    p = iolab("run", "xsr", "--quick", "--set", "recovery_tolerance=20", "--no-report", "--runs-dir", str(tmp_path))
    assert p.returncode == 0, p.stderr
    out = _flat(p.stdout.replace("│", " "))
    # main: "recovery to 95 % of group 1 mean TP", computed with 5 % whatever was set
    assert "Group 3 recovery to 80 % of group 1 mean TP" in out and "95 %" not in out
    # in seconds, not "0.04322 min" for a recovery of 2.6 s; --json: a plain number, unit "s"
    shown = re.search(r"Group 3 recovery to 80 % of group 1 mean TP +([\d.,]+)(?: \(([\d.]+ (min|h))\))? +(\S+) ", out)
    assert shown and shown[4] == "s", out
    [run] = [d for d in tmp_path.iterdir() if d.is_dir()]
    figures = json.loads(iolab("show", str(run), "--json").stdout)["runs"][0]["figures"]
    [rec] = [f for f in figures if f["name"].startswith("Group 3 recovery")]
    assert rec["unit"] == "s" and isinstance(rec["value"], float), rec
    assert float(shown[1].replace(",", "")) == pytest.approx(rec["value"], rel=1e-3)


def test_a_window_that_passes_but_is_refused_on_evidence_is_not_called_steady(tmp_path):
    # hir --quick --max-rounds 6: the preconditioning's window passed the range and slope rule,
    # but only 0.238 GB had been written since the purge (< 2× the tested 0.537 GB), so the phase
    # is not steady; its measurement-window table said "Verdict: steady state" all the same
    runs = tmp_path / "runs"
    p = iolab(
        "run", "hir", "--quick", "--cell-time", "100ms", "--max-rounds", "6", "--no-report", "--runs-dir", str(runs)
    )
    assert p.returncode == 0, p.stderr
    assert "steady state NOT accepted: the window passes the rule's range and slope, but only" in _flat(p.stdout)
    run = RunData.load(next(runs.iterdir()), tmp_path / "work")
    [pc] = [ph for ph in run.phases if ph.phase.name == "preconditioning"]
    assert pc.steady is False and pc.verdicts and all(v.steady for v in pc.verdicts)
    tables = [
        b for page in measurement_window_pages(run, pc, lambda v: v.name) for b in page.blocks if isinstance(b, Table)
    ]
    verdicts = [value for t in tables for item, value in t.rows if item == "Verdict"]
    assert verdicts and all("but was NOT accepted as steady state: only" in v for v in verdicts), verdicts


def test_hir_does_not_call_a_preconditioning_that_never_reached_steady_state_steady(tmp_path):
    # the same quick HIR: its key figure and the comparison's table said "PC steady-state IOPS"
    runs = tmp_path / "runs"
    p = iolab(
        "run", "hir", "--quick", "--cell-time", "100ms", "--max-rounds", "6", "--no-report", "--runs-dir", str(runs)
    )
    assert p.returncode == 0, p.stderr
    [run_dir] = runs.iterdir()
    shown = iolab("show", str(run_dir), "--json")
    [doc] = json.loads(shown.stdout)["runs"]
    assert doc["steady_state"] == "not-reached"
    names = [f["name"] for f in doc["figures"]]
    assert "Preconditioning IOPS, window mean (RND 4 KiB W)" in names and not any("steady" in n for n in names), names
    run = RunData.load(run_dir, tmp_path / "work")
    tables = [b for page in hir_overlays([run, run], ["D1", "D2"]) for b in page.blocks if isinstance(b, Table)]
    [table] = [t for t in tables if t.caption == "Recovery per drive (×)"]
    # its window passes the rule's numbers (too little written): said as its own report says it,
    # not "(steady state NOT reached)", as if the numbers had failed
    said = "(its window passes the rule but was NOT accepted as steady state)"
    assert "steady" not in table.columns[1] and all(row[1].endswith(said) for row in table.rows), table.rows


def test_wsat_whose_budget_ends_within_its_first_intervals_names_no_full_interval(tmp_path):
    # a 0.05× budget is written in two partial intervals (0.07 s of 1 s cells; the first keeps
    # half the budget back): the summary line said "last 2 full intervals mean 47,061 IOPS"
    p = iolab(
        "run",
        "wsat",
        "--quick",
        "--cell-time",
        "1s",
        "--wsat-capacity-multiple",
        "0.05",
        "--no-report",
        "--runs-dir",
        str(tmp_path / "runs"),
    )
    assert p.returncode == 0, p.stderr
    out = _flat(p.stdout)
    assert "0 complete rounds" in out and "full intervals mean" not in out
    assert "none of them a full interval (the budget ran out first): no interval figures" in out


def test_compare_prints_the_caveats_every_page_carries(scratch):
    # a complete and a killed quick run compared: every page's banners said "non-compliant
    # (quick profile)" and "INCOMPLETE RUN(S): D2", the terminal ranked both without a word
    runs = scratch / "runs"
    args = ("throughput", "--quick", "--cell-time", "200ms", "--max-rounds", "5", "--no-report", "--runs-dir")
    p = iolab("run", "-t", f"file:{scratch}/a.img?size=16MiB", *args, str(runs))
    assert p.returncode == 0, p.stderr
    [done] = runs.iterdir()
    other = scratch / "other"  # its own: the kill point must not match the first run's files
    killed_at(["run", "-t", f"file:{scratch}/b.img?size=16MiB", *args, str(other)], other, "*/raw/*-r03-*.json")
    [cut] = other.iterdir()
    p = iolab("compare", str(done), str(cut), "--out", str(scratch / "cmp"))
    assert p.returncode == 0, p.stderr
    out = _flat(p.stdout)
    assert "non-compliant (quick profile): D1, D2 — quick profile; 0.2 s per cell instead of 60 s" in out, out
    assert re.search(r"INCOMPLETE RUN\(S\): D2 \(\w+\) — only their complete rounds are compared", out), out
    assert out.index("INCOMPLETE RUN(S)") < out.index("key figures and ranking")


def test_the_comparison_banner_gives_each_non_compliant_drive_its_own_reasons(scratch):
    # D1 ran with short cells, D2 with --quick and the same cells: the banner said "non-compliant
    # (quick profile): D1, D2", lending D2's quick profile to D1, whose own report says only "0.2 s
    # per cell" (200 ms cells, not 1 s ones: the banner is the same, the two runs 6 CPU-s -> 3.6)
    runs = scratch / "runs"
    common = ("iops", "--max-rounds", "3", "-t", "sim:enterprise-sas?user_gb=0.25", "--no-report", "--runs-dir")
    for how in (("--cell-time", "200ms"), ("--quick", "--cell-time", "200ms")):
        p = iolab("run", *common, str(runs), *how)
        assert p.returncode == 0, p.stderr
    quick, slow = sorted(
        runs.iterdir(), key=lambda r: not json.loads((r / "manifest.json").read_text())["profile"]["quick"]
    )
    p = iolab("compare", str(slow), str(quick), "--out", str(scratch / "cmp"), "--force")
    assert p.returncode == 0, p.stderr
    out = _flat(p.stdout)
    assert "non-compliant: D1, D2 — 0.2 s per cell instead of 60 s; D2: quick profile" in out, out
    assert "(quick profile)" not in out
    html = _flat(next((scratch / "cmp").glob("*.html")).read_text())
    assert "non-compliant: D1, D2" in html and "non-compliant (quick profile)" not in html


def test_xsr_final_levels_do_not_claim_five_intervals_a_group_did_not_have(tmp_path):
    # groups 2 and 3 of 3 s each: their key figures said "last 5" over 2 or 3 intervals
    p = iolab(
        "run",
        "xsr",
        "--quick",
        "--cell-time",
        "1s",
        "--set",
        "group2_time=3s",
        "--set",
        "group3_time=3s",
        "--no-report",
        "--runs-dir",
        str(tmp_path / "runs"),
    )
    assert p.returncode == 0, p.stderr
    out = _flat(p.stdout.replace("│", " "))
    # (a 1 MiB QD128 interval on the simulated drive outlasts its 1 s cell: 2 or 3 per group)
    m = re.search(r"group 3: (\d+) intervals", out)
    assert m and int(m.group(1)) < 5 and "last 5)" not in out, out
    assert "Group 3 final MB/s (SEQ 1024 KiB W, last ≤5 intervals)" in out


def test_a_run_that_is_not_steady_says_so_in_sentences_and_names_each_bound(tmp_path):
    """A quick IOPS run stopped by its round limit: the report's note read 'STEADY STATE NOT
    ACHIEVED. ... as the measurement window. reached the round limit (5) without steady state'
    (a lower-case sentence, no full stop), and its steady-state tables '4,551 — FAIL (≤)', a
    dash (iolab's 'not measured') beside a verdict whose '≤' named no bound."""
    runs = tmp_path / "runs"
    p = iolab(
        *("run", "iops", "-t", "sim:enterprise-sas?seed=1", "--quick", "--cell-time", "100ms", "--max-rounds", "5"),
        *("--runs-dir", str(runs)),
    )
    assert p.returncode == 0, p.stderr
    assert "reached the round limit (5) without steady state" in _flat(p.stdout + p.stderr)
    (page,) = next(runs.iterdir()).glob("report/*.html")
    text = _flat(html.unescape(re.sub(r"<[^>]+>", " ", page.read_text())))
    note = re.findall(r"STEADY STATE NOT ACHIEVED\. The results .{0,160}", text)
    assert note and "as the measurement window. Reached the round limit (5) without steady state." in text, note
    assert "as the measurement window. reached" not in text
    judged = re.findall(r"Measured (?:data|slope) excursion \([^)]*\) (\S+: \S+ \(\S+ \S+ allowed\))", text)
    assert judged and any("FAIL" in j for j in judged), judged
    for j in judged:  # the measured value, the verdict and the bound it was compared with
        m = re.fullmatch(r"([\d,.]+): (pass|FAIL) \(([≤>]) ([\d,.]+) allowed\)", j)
        assert m and (m.group(2) == "pass") == (m.group(3) == "≤"), j
        measured, bound = (float(m.group(i).replace(",", "")) for i in (1, 4))
        assert measured == bound or (measured <= bound) == (m.group(2) == "pass"), j  # equal: rounded alike
    assert "— FAIL" not in text and "— pass" not in text
