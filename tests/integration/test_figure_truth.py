"""A figure's label is true of the run it came from, by the run's own evidence, and the same run
gives the same answer on every page: the unit beside a spec-sheet verdict's value, which
intervals a write budget's end cut short, whether a run measured an endurance figure, the
reduction a report caption names, and a measurement window whose rounds lost cells. Real
`iolab` commands on small simulated drives, quick."""

from __future__ import annotations

import csv
import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from pypdf import PdfReader

from iolab.core.units import num

from .conftest import iolab

pytestmark = pytest.mark.integration

SIM = "sim:enterprise-sas?user_gb=0.25"


def flat(text: str) -> str:
    return " ".join(text.split())


def pdf_pages(out: Path) -> list[str]:
    """The report's pages as text, each flattened (words one space apart)."""
    [pdf] = out.glob("*.pdf")
    return [flat(pg.extract_text()) for pg in PdfReader(pdf).pages]


def only(runs: Path) -> Path:
    [run] = [p for p in runs.iterdir() if (p / "manifest.json").is_file()]
    return run


def test_a_spec_sheet_verdict_is_shown_in_the_unit_it_was_converted_to(tmp_path):
    """A latency criterion in ms: the value judged is in ms, and every page says ms (the fleet
    report's table once printed the ms value beside the figure's own µs, 1000× off)."""
    (tmp_path / "sheet.toml").write_text(
        '[sheet]\nmodel="x"\n[[criterion]]\nfigure="ART RND 4KiB R/W 100/0"\nmax=0.15\nunit="ms"\nname="read lat"\n'
    )
    (tmp_path / "fleet.toml").write_text(
        f'[fleet]\nname="f"\nspec_sheet="sheet.toml"\n[[drive]]\ntarget="{SIM}&seed={{i}}"\ncount=2\nname="sim{{i}}"\n'
    )
    runs = tmp_path / "runs"
    p = iolab(
        "run", "latency", "--quick", "--no-report", "--fleet", str(tmp_path / "fleet.toml"), "--runs-dir", str(runs)
    )
    assert p.returncode == 0, p.stdout + p.stderr
    [fleet] = (runs / "fleets").iterdir()
    verdicts = [v for r in json.loads((fleet / "report.json").read_text())["drives"] for v in r["verdicts"]]
    assert len(verdicts) == 2 and {v["unit"] for v in verdicts} == {"ms"}, verdicts
    assert all(0.001 < v["value"] < 10 for v in verdicts), verdicts  # a latency in ms, not µs
    rep = iolab("report", str(fleet), "--out", str(tmp_path / "rep"))
    assert rep.returncode == 0, rep.stderr
    text = " ".join(pdf_pages(tmp_path / "rep"))
    for r in ("sim1", "sim2"):
        v = next(
            v
            for row in json.loads((fleet / "report.json").read_text())["drives"]
            if row["name"] == r
            for v in row["verdicts"]
        )
        # show's number rule; a quick run's figure is shown but not judged (the fleet's rule, as a front page's)
        # (the verdict column is narrow: "not-judged" may break after its hyphen)
        assert re.search(rf"{r} read lat {re.escape(num(v['value']))} ms not-\s*judged", text), text
    assert "µs not-judged" not in text and "µs pass" not in text
    [page] = (tmp_path / "rep").glob("*.html")
    assert len(re.findall(r"read lat</td><td>[\d.]+ ms</td>", page.read_text())) == 2


def test_the_budget_end_cuts_short_only_what_is_shorter_than_a_cell_and_the_minimum_counts_the_rest(tmp_path):
    """Quick WSAT on a small simulated drive: every interval the budget's end cut short (partial)
    is shorter than the cell time, and the minimum interval printed is that of every whole one
    (a last interval of 1.7 cells was once called partial and left out of the minimum)."""
    runs = tmp_path / "runs"
    p = iolab("run", "wsat", "--quick", "-t", SIM, "--no-report", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stdout + p.stderr
    run = only(runs)
    assert iolab("export", str(run), "-o", str(tmp_path / "e")).returncode == 0
    cells = list(csv.DictReader((tmp_path / "e" / "cells.csv").open()))
    length = json.loads(cells[0]["workload"])["duration_s"]
    cut = [c for c in cells if c["partial"] == "true"]
    whole = [c for c in cells if c["partial"] == "false"]
    assert cut and whole and all(float(c["runtime_s"]) < length for c in cut), [
        (c["runtime_s"], c["partial"]) for c in cells
    ]
    assert all(float(c["runtime_s"]) >= 0.98 * length for c in whole)
    lowest = min(float(c["iops"]) for c in whole)
    shown = flat(iolab("show", str(run)).stdout)
    assert re.search(rf"IOPS, minimum interval │ {lowest:,.0f} │", shown), shown


DWPD_SHEET = '[sheet]\nmodel="x"\n[[criterion]]\nfigure="DWPD"\nmin=3\n'


def _front(out: Path) -> str:
    """The report's front page (Against the Spec Sheet), as text."""
    return pdf_pages(out)[0]


def test_dwpd_is_measured_only_by_a_run_that_measures_endurance_and_every_page_says_the_same(tmp_path):
    """A latency run's counters (its WIPC preconditioning counted) are no endurance figure: no
    page gives it a DWPD (its front page once said 8.206 from a whole-run WAF while show, --json
    and the fleet said not measured). A QoS run measures endurance: show, --json, its front page
    and the fleet's verdict give the same DWPD."""
    (tmp_path / "dwpd.toml").write_text(DWPD_SHEET)
    lat = tmp_path / "lat"
    assert iolab("run", "latency", "--quick", "-t", SIM, "--no-report", "--runs-dir", str(lat)).returncode == 0
    run = only(lat)
    assert json.loads(iolab("show", str(run), "--json").stdout)["runs"][0]["endurance"] is None
    assert (
        iolab("report", str(run), "--spec-sheet", str(tmp_path / "dwpd.toml"), "--out", str(tmp_path / "D")).returncode
        == 0
    )
    front = _front(tmp_path / "D")
    assert "DWPD: not measured by this run" in front and "WAF" not in front, front

    (tmp_path / "fleet.toml").write_text(
        f'[fleet]\nname="q"\n[[drive]]\ntarget="{SIM}&seed={{i}}"\ncount=2\nname="d{{i}}"\n'
    )
    runs = tmp_path / "runs"
    p = iolab("run", "qos", "--quick", "--no-report", "--fleet", str(tmp_path / "fleet.toml"), "--runs-dir", str(runs))
    assert p.returncode == 0, p.stdout + p.stderr
    [fleet] = (runs / "fleets").iterdir()
    doc = json.loads(
        iolab(
            "fleet", fleet.name, "--runs-dir", str(runs), "--spec-sheet", str(tmp_path / "dwpd.toml"), "--json"
        ).stdout
    )
    for row in doc["drives"]:
        [v] = row["verdicts"]
        e = json.loads(iolab("show", row["run_dir"], "--json").stdout)["runs"][0]["endurance"]
        # measured, and the same DWPD as show's; a quick run's figure is not judged, as on its front page
        assert e["dwpd"] > 0 and v["value"] == pytest.approx(e["dwpd"]) and v["verdict"] == "not-judged", (v, e)
        assert f"DWPD {e['dwpd']:.2f} over" in flat(iolab("show", row["run_dir"]).stdout)
        out = tmp_path / row["name"]
        rep = iolab("report", row["run_dir"], "--spec-sheet", str(tmp_path / "dwpd.toml"), "--out", str(out))
        assert rep.returncode == 0, rep.stderr
        front = _front(out)
        assert f"DWPD (WAF {e['waf']:.2f}, {e['short']})" in front and f"{e['dwpd']:,.4g}" in front, front


def _page(pages: list[str], *words: str) -> list[str]:
    return [p for p in pages if all(w in p for w in words)]


def test_each_caption_names_the_reduction_its_figure_shows_and_preconditioning_is_named_by_what_ran(tmp_path):
    """The MRT's 3D column plot and heat map show each cell's maximum over the window and say
    so (they once said "mean", as the 2D page did not); a QoS run's RND 4 KiB W preconditioning
    is workload-dependent (WDPC), a latency run's SEQ 128 KiB W fill is the WIPC."""
    runs = tmp_path / "runs"
    for test in ("latency", "qos"):
        p = iolab("run", test, "--quick", "-t", SIM, "--runs-dir", str(runs / test))
        assert p.returncode == 0, p.stdout + p.stderr
    lat = pdf_pages(only(runs / "latency") / "report")
    for title in ("Maximum Response Time — 3D Column Plot", "Maximum Response Time — Heat Map"):
        [page] = _page(lat, title, "Source:")
        assert "maximum of each cell over the measurement window" in page and "mean of each cell" not in page, page
    for title in ("Average Response Time — 3D Column Plot", "Average Response Time — Heat Map"):
        [page] = _page(lat, title, "Source:")
        assert "mean of each cell over the measurement window" in page, page
    assert re.search(r"PC1 \(WIPC\) SEQ 128KiB W", lat[0]), lat[0]
    qos = pdf_pages(only(runs / "qos") / "report")
    assert "PC1 (WIPC) none" in qos[0] and re.search(r"PC2 \(WDPC\) RND 4KiB W, TC4×QD32", qos[0]), qos[0]
    assert not re.search(r"PC1 \(WIPC\) RND", " ".join(qos))


def test_a_complete_round_whose_cell_rows_were_deleted_is_refused_not_averaged_over_fewer_rounds(tmp_path):
    """Deleting one cell of round 3 left show saying "measurement window: rounds 1–5" over a
    4-round mean and audit passing: a round marked complete holds every cell the run's plan says
    it ran, else every command refuses the run, as for a value no run stores. The untouched run,
    and one stopped mid-round (its last round not complete), read as before."""
    runs = tmp_path / "runs"
    assert iolab("run", "latency", "--quick", "-t", SIM, "--no-report", "--runs-dir", str(runs)).returncode == 0
    run = only(runs)
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    with sqlite3.connect(copy / "results.db") as db:
        assert db.execute("DELETE FROM cells WHERE round=3 AND cell_key='100/0 8KiB'").rowcount == 1
    said = "phase 'main' round 3 is marked complete but holds 8 of its 9 planned cells (missing: '100/0 8KiB')"
    for args in (
        ("show",),
        ("audit",),
        ("export", "-o", str(tmp_path / "e")),
        ("report", "--out", str(tmp_path / "r")),
    ):
        p = iolab(args[0], str(copy), *args[1:])
        assert p.returncode == 2 and said in flat(p.stderr) and "Traceback" not in p.stderr, (args, p.stdout, p.stderr)
    doc = json.loads(iolab("show", str(copy), "--json").stdout)
    assert doc["exit_code"] == 2 and said in flat(doc["error"])
    assert iolab("show", str(run)).returncode == 0 and iolab("audit", str(run)).returncode == 0
    # a round the run had not finished is no complete round: the run reads, its rounds before it
    # (stored as a run killed in round 3 has it: its phase not ended, so no verdict of the phase)
    with sqlite3.connect(copy / "results.db") as db:
        db.execute("UPDATE rounds SET complete=0 WHERE round=3")
        db.execute("DELETE FROM rounds WHERE round>3")
        db.execute("DELETE FROM steady")
        db.execute("UPDATE phases SET steady=NULL, rounds=NULL, stop_reason=NULL, ended=NULL")
    shown = iolab("show", str(copy))
    assert shown.returncode == 0 and "2 complete rounds" in flat(shown.stdout), shown.stdout + shown.stderr
