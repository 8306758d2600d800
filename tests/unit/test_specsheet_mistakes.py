"""Mistakes in a spec sheet are the sheet's, never the drive's: a figure name no run measured is
said (with the names it measured most like it) and never reads as a pass; a bound in a unit its
figure cannot be in is refused, not failed on every drive."""

from __future__ import annotations

import pytest
from rich.console import Console

from iolab.core.errors import Exit, IolabError
from iolab.figures.fleet import DriveFigures, distributions
from iolab.figures.specmatch import Measured, match
from iolab.figures.specsheet import judge, load_spec_sheet
from iolab.pages.fleet import document
from iolab.pages.fleet_terminal import render

W = "RND 4KiB R/W 0/100 IOPS"
R = "RND 4KiB R/W 100/0 IOPS"
UNITS = {W: "IOPS", R: "IOPS", "RND 4KiB R/W 0/100 ART": "µs"}
FIGS = {W: 40_000.0, R: 90_000.0, "RND 4KiB R/W 0/100 ART": 150.0}


def sheet(tmp_path, criteria: str):
    p = tmp_path / "s.toml"
    p.write_text(criteria)
    return load_spec_sheet(p)


def test_a_typo_in_a_figure_name_is_not_measured_and_names_the_close_ones(tmp_path):
    s = sheet(tmp_path, '[[criterion]]\nfigure = "RND 4K R/W 0/100 IOPS"\nmin = 99999999\n')
    (v,) = judge("d1", FIGS, UNITS, s)
    assert v.verdict == "not-measured"
    assert v.why.startswith("RND 4K R/W 0/100 IOPS: not measured by this run; did you mean ")
    assert v.why.index(repr(W)) < v.why.index(repr(R))  # the closest first
    # a figure no name resembles: a few of the run's figures, and how many it has
    (v,) = judge(
        "d1",
        FIGS | {f"f{i}": 1.0 for i in range(5)},
        UNITS,
        sheet(tmp_path, '[[criterion]]\nfigure = "DWPD"\nmin = 3\n'),
    )
    assert "none of its figures is named like it" in v.why and "and 5 more)" in v.why
    # the front page says the same
    (ln,) = match(s, [Measured(n, v, UNITS[n]) for n, v in FIGS.items()], [])
    assert ln.verdict == "not-measured" and f"did you mean {W!r}" in ln.text


def _terminal(tmp_path, s) -> str:
    meta = {n: {"unit": u, "direction": "higher-is-better", "kind": "value"} for n, u in UNITS.items()}
    ds = [DriveFigures(f"d{i}", {}, "complete", dict(FIGS), meta) for i in range(2)]
    rows = [
        {"name": d.name, "target": "sim:x", "where": "local", "labels": {}, "state": "complete", "error": None}
        for d in ds
    ]
    verdicts = {d.name: judge(d.name, d.figures, UNITS, s) for d in ds}
    fleet = {"dir": "x", "name": "f", "test": "iops", "state": "complete", "started": "", "ended": ""}
    doc = document(fleet, rows, ds, distributions(ds), (3.5, 5.0), s, verdicts)
    console = Console(width=250, record=True)
    render(doc, console)
    return console.export_text()


def test_a_criterion_no_drive_measured_does_not_read_as_a_pass(tmp_path):
    s = sheet(tmp_path, '[[criterion]]\nfigure = "RND 4K R/W 0/100 IOPS"\nmin = 99999999\n')
    out = _terminal(tmp_path, s)
    assert "0 pass, 1 not measured" in out and "pass (0/1)" not in out
    both = sheet(tmp_path, f'[[criterion]]\nfigure = "{W}"\nmin = 1\n[[criterion]]\nfigure = "DWPD"\nmin = 3\n')
    assert "1 pass, 1 not measured" in _terminal(tmp_path, both)
    assert "pass (1/1)" in _terminal(tmp_path, sheet(tmp_path, f'[[criterion]]\nfigure = "{W}"\nmin = 1\n'))


def test_a_unit_that_cannot_apply_to_its_figure_is_refused_not_failed(tmp_path):
    s = sheet(tmp_path, f'[[criterion]]\nfigure = "{W}"\nmax = 5\nunit = "ms"\nname = "write latency"\n')
    with pytest.raises(IolabError) as e:
        judge("d1", FIGS, UNITS, s)
    said = str(e.value)
    assert "criterion 'write latency'" in said and "is in IOPS" in said and "'ms'" in said
    assert "'IOPS', 'kIOPS'" in said and "\n" not in said and e.value.exit_code == Exit.BAD_INPUT
    # the same unit in a sheet for a figure that is a time is judged
    t = sheet(tmp_path, '[[criterion]]\nfigure = "RND 4KiB R/W 0/100 ART"\nmax = 0.2\nunit = "ms"\n')
    assert judge("d1", FIGS, UNITS, t)[0].verdict == "pass"
    # the front page, written as a run ends, shows it not judged rather than losing the report
    (ln,) = match(s, [Measured(W, 40_000.0, "IOPS")], [])
    assert ln.verdict == "no-unit" and "not judged" in ln.text


def test_a_unit_that_is_no_unit_is_refused_when_the_sheet_is_read(tmp_path):
    with pytest.raises(IolabError, match="field 'unit' is 'kiops'"):
        sheet(tmp_path, f'[[criterion]]\nfigure = "{W}"\nmin = 5\nunit = "kiops"\n')
    with pytest.raises(IolabError, match="field 'unit' is 5"):
        sheet(tmp_path, f'[[criterion]]\nfigure = "{W}"\nmin = 5\nunit = 5\n')
