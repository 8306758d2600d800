"""A drive's front page against a spec sheet (`iolab report RUN --spec-sheet FILE`, `iolab run
... --spec-sheet FILE`): page 1 of the PDF, each criterion's verdict in words; a quick run's
figures are shown but never judged."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pypdf
import pytest

from iolab.core.units import given, num
from tests.integration.conftest import iolab

SIM = "sim:enterprise-sas?user_gb=0.1"
READS, WRITES = "RND 4KiB R/W 100/0 IOPS", "RND 4KiB R/W 0/100 IOPS"


def _page_one(run_dir: Path) -> str:
    pdf = next((run_dir / "report").glob("*.pdf"))
    return " ".join(pypdf.PdfReader(str(pdf)).pages[0].extract_text().split())


def _sheet(path: Path, reads_min: float, writes_min: float, mixed_max: float) -> Path:
    path.write_text(
        '[sheet]\nmodel = "Example SAS"\n'
        f'[[criterion]]\nname = "random reads"\nfigure = "{READS}"\nmin = {reads_min}\nunit = "IOPS"\n'
        f'[[criterion]]\nname = "random writes"\nfigure = "{WRITES}"\nmin = {writes_min}\nunit = "IOPS"\n'
        f'[[criterion]]\nname = "mixed at most"\nfigure = "RND 4KiB R/W 65/35 IOPS"\nmax = {mixed_max}\n'
        '[[criterion]]\nname = "UBER"\nfigure = "UBER"\nmax = 1e-17\n'
    )
    return path


def test_a_quick_runs_figures_are_shown_but_never_judged(tmp_path):
    sheet = _sheet(tmp_path / "spec.toml", 1, 1, 1e9)  # every bound met by any figure: still not judged
    p = iolab(
        "run", "iops", "--quick", "--cell-time", "100ms", "--max-rounds", "2", "-t", SIM,
        "--runs-dir", str(tmp_path / "runs"), "--spec-sheet", str(sheet),
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    page = _page_one(next((tmp_path / "runs").glob("*-iops-*")))
    assert "Against the Spec Sheet" in page and "for Example SAS: 3 not judged, 1 not measured" in page
    assert "random reads: not judged: quick run" in page and "random writes: not judged: quick run" in page
    assert "meets the" not in page and "UBER: not measured by this run" in page
    # a bound the sheet gave no unit is in its figure's, and says so: it printed a bare "≤ 1,000,000,000"
    # beside the measured "… IOPS"
    assert f"mixed at most ≤ {given(1e9)} IOPS RND 4KiB R/W 65/35 IOPS" in page, page


def test_a_compliant_runs_figures_meet_or_miss_their_spec_by_how_much(tmp_path):
    """Only a compliant run is judged (60 s cells: a latency run of a small simulated drive takes
    under a minute); a latency is a maximum, met below it and missed above it."""
    runs = tmp_path / "runs"
    p = iolab("run", "latency", "-t", SIM, "--no-report", "--runs-dir", str(runs), "--json")
    assert p.returncode == 0, p.stderr
    (run,) = json.loads(p.stdout)["runs"]
    assert run["steady_state"] == "reached" and run["compliant"] and not run["profile"]["quick"]
    fig = {f["name"]: f["value"] for f in run["figures"]}
    read, write, tail = fig["ART RND 4KiB R/W 100/0"], fig["ART RND 4KiB R/W 0/100"], fig["MRT RND 4KiB R/W 0/100"]
    sheet = tmp_path / "spec.csv"
    sheet.write_text(
        "name,figure,min,max,unit\n"
        f"read latency,ART RND 4KiB R/W 100/0,,{1.25 * read / 1000},ms\n"  # in ms: 1.25 x the measured
        f"write latency,ART RND 4KiB R/W 0/100,,{0.8 * write},us\n"  # 0.8 x: 25 % over
        f"write tail,MRT RND 4KiB R/W 0/100,{1.25 * tail},,us\n"  # a minimum 1.25 x: 20 % short
        "UBER,UBER,,1e-17,\n"
    )
    p = iolab("report", run["run_id"], "--runs-dir", str(runs), "--spec-sheet", str(sheet))
    assert p.returncode == 0, p.stdout + p.stderr
    page = _page_one(Path(run["path"]))
    assert "1 meet, 1 short, 1 over, 1 not measured" in page, page
    # the sheet's bounds as it wrote them (units.given), the measured figures as `iolab show` prints them
    assert f"read latency: meets the ≤ {given(1.25 * read / 1000)} ms spec ({num(read / 1000)} ms)" in page
    assert f"write tail: 20 % short ({num(tail)} of {given(1.25 * tail)} us)" in page, page
    assert "write latency: 25 % over the maximum" in page and "UBER: not measured by this run" in page
    assert "not judged" not in page
    html = next((Path(run["path"]) / "report").glob("*.html")).read_text()
    assert "write tail: 20 % short" in html


def test_a_bad_spec_sheet_is_one_paragraph_and_exit_2(tmp_path):
    bad = tmp_path / "spec.csv"
    bad.write_text("figure,min\nRND 4KiB R/W 100/0 IOPS,lots\n")
    p = iolab("report", "nothing-here", "--runs-dir", str(tmp_path), "--spec-sheet", str(bad))
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "line 2: field 'min' is 'lots'; give a number" in " ".join((p.stdout + p.stderr).split())


def test_a_bound_in_a_unit_its_figure_is_never_in_is_refused_before_the_run(tmp_path):
    # found after the run, as it was, the sheet's typo cost the whole run: the front page said
    # "not judged" and the run exited 0
    sheet = tmp_path / "spec.toml"
    sheet.write_text('[[criterion]]\nfigure = "ART RND 4KiB R/W 100/0"\nmax = 500\nunit = "IOPS"\n')
    runs = tmp_path / "runs"
    p = iolab("run", "latency", "--quick", "-t", SIM, "--runs-dir", str(runs), "--spec-sheet", str(sheet))
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and "Traceback" not in said, said
    assert "'ART RND 4KiB R/W 100/0' is in µs, and the unit given, 'IOPS', does not apply" in said
    assert "Nothing was run" in said and not runs.exists()
    # `iolab resume` with that sheet: refused so too, and told to resume with the sheet fixed (it said
    # "start again", which would measure the run again from its start)
    p = iolab("run", "latency", "--quick", "--cell-time", "100ms", "--max-rounds", "1", "-t", SIM, "--no-report",
              "--runs-dir", str(runs))  # fmt: skip
    assert p.returncode == 0, p.stderr
    (run,) = runs.iterdir()
    kept = (run / "manifest.json").read_bytes()
    p = iolab("resume", run.name, "--runs-dir", str(runs), "--spec-sheet", str(sheet))
    said = " ".join(p.stderr.split())
    assert p.returncode == 2 and "does not apply" in said and "start again" not in said, said
    assert said.endswith(f"fix the sheet and resume the run with it (`iolab resume {run.name} --spec-sheet {sheet}`); "
                         "the run is as it was."), said  # fmt: skip
    assert (run / "manifest.json").read_bytes() == kept


def test_a_run_with_shortened_cells_is_not_judged_as_a_quick_one_is_not(tmp_path):
    """Short cells (1 s then, 200 ms here: a run of them costs a fifth of the simulator's work) make
    a run non-compliant as --quick does: its front page said "meets the ≥ 30 kIOPS spec" while
    every other page said "non-compliant: 1 s per cell instead of 60 s"; any
    reason a run is not compliant keeps its figures from a verdict, on the run's page, on
    `report --spec-sheet` and in a fleet (figures/specmatch.run_reasons, one rule)."""
    sheet = _sheet(tmp_path / "spec.toml", 1, 1, 1e9)  # every bound met by any figure: still not judged
    runs = tmp_path / "runs"
    args = ("--cell-time", "200ms", "--max-rounds", "8", "-t", SIM, "--runs-dir", str(runs))
    p = iolab("run", "iops", *args, "--spec-sheet", str(sheet))
    assert p.returncode == 0, p.stdout + p.stderr
    run = next(runs.glob("*-iops-*"))
    for page in (_page_one(run), _page_one(_report_again(run, sheet))):
        assert "for Example SAS: 3 not judged, 1 not measured" in page, page
        assert "random reads: not judged: 0.2 s per cell instead of 60 s (measured" in page, page
        assert "meets the" not in page and "% short" not in page
    f = tmp_path / "fleet.toml"
    f.write_text(f'[fleet]\nname = "c"\nspec_sheet = "spec.toml"\n[[drive]]\ntarget = "{SIM}"\nname = "a"\n')
    fleet = iolab("run", "iops", *args[:4], "--no-report", "--fleet", str(f), "--runs-dir", str(runs))
    assert fleet.returncode == 0 and "0 pass, 1 not measured, 3 not judged" in fleet.stdout, fleet.stdout
    where = next(ln for ln in fleet.stdout.splitlines() if ln.startswith("fleet directory: ")).split(": ", 1)[1]
    verdicts = [v for row in json.loads((Path(where) / "report.json").read_text())["drives"] for v in row["verdicts"]]
    assert {v["verdict"] for v in verdicts} == {"not-judged", "not-measured"}, verdicts
    assert all("0.2 s per cell instead of 60 s" in v["why"] for v in verdicts if v["verdict"] == "not-judged")


def _report_again(run: Path, sheet: Path) -> Path:
    """`iolab report RUN --spec-sheet FILE` of a stored run, rewritten in place: the run again."""
    (run / "report").rename(run / "report-first")
    p = iolab("report", str(run), "--spec-sheet", str(sheet))
    assert p.returncode == 0, p.stdout + p.stderr
    return run


def test_a_key_figure_too_few_ios_measured_is_said_so_not_taken_for_a_typo(tmp_path):
    """The latency test's own 99.999 % figure, named exactly, of a window with under 1,000,000
    IOs: the page said "not measured by this run; did you mean 'ART RND 4KiB R/W 100/0' or ...?"."""
    runs = tmp_path / "runs"
    p = iolab("run", "latency", "--cell-time", "1s", "-t", SIM, "--no-report", "--runs-dir", str(runs), "--json")
    assert p.returncode == 0, p.stderr
    (run,) = json.loads(p.stdout)["runs"]
    (tail,) = [f for f in run["figures"] if f["name"] == "99.999 % RND 4KiB R/W 100/0"]
    assert tail["value"] is None, tail
    sheet = tmp_path / "spec.toml"
    sheet.write_text('[[criterion]]\nfigure = "99.999 % RND 4KiB R/W 100/0"\nmax = 1\nunit = "ms"\nname = "5 nines"\n')
    p = iolab("report", run["path"], "--spec-sheet", str(sheet))
    assert p.returncode == 0, p.stdout + p.stderr
    page = _page_one(Path(run["path"]))
    assert re.search(
        r"5 nines: not measured by this run: 99\.999 % RND 4KiB R/W 100/0 is this test's figure, but its "
        r"[\d,]+ IOs are too few for a 99\.999 % \(it needs 1,000,000, 10 of them beyond it\)",
        page,
    ), page
    assert "did you mean" not in page


@pytest.mark.parametrize("bound", ["max = inf", "min = 1e400", "max = -inf"])
def test_an_infinite_bound_in_a_spec_sheet_is_refused(tmp_path, bound):
    """TOML reads inf (and 1e400) as a number: `max = inf` judged every run as meeting a spec no
    data sheet states, `min = 1e400` failed every one; now exit 2 before anything is read."""
    sheet = tmp_path / "spec.toml"
    sheet.write_text(f'[[criterion]]\nfigure = "ART RND 4KiB R/W 100/0"\n{bound}\nunit = "us"\n')
    p = iolab("report", "nothing-here", "--runs-dir", str(tmp_path), "--spec-sheet", str(sheet))
    said = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 2 and "Traceback" not in p.stderr, said
    assert f"field '{bound.split()[0]}' is " in said and "inf; give a finite number." in said, said


def test_the_table_says_why_a_criterions_figure_is_missing_in_words(tmp_path):
    """The table beside the verdicts named a figure the run has no value for "UBER (none)":
    now "not measured:" and why, the test's own figure it could not compute apart from a name
    no figure of the run has."""
    sheet = _sheet(tmp_path / "spec.toml", 1, 1, 1e9)
    with sheet.open("a") as f:
        f.write('[[criterion]]\nname = "5 nines"\nfigure = "99.999 % RND 4KiB R/W 100/0"\nmax = 1\nunit = "ms"\n')
    runs = tmp_path / "runs"
    p = iolab(
        "run", "latency", "--quick", "--cell-time", "100ms", "-t", SIM, "--runs-dir", str(runs),
        "--spec-sheet", str(sheet),
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    run = next(runs.glob("*-latency-*"))
    page = _page_one(run)
    assert "(none)" not in page, page
    assert "UBER — not measured: no figure of this run has this name" in page, page
    assert re.search(
        r"99\.999 % RND 4KiB R/W 100/0 — not measured: its [\d,]+ IOs are too few for a 99\.999 %", page
    ), page
    html = next((run / "report").glob("*.html")).read_text()
    assert "(none)" not in html and "UBER — not measured: no figure of this run has this name" in html
