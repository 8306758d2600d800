"""The fleet report's pages (pages/report/fleet.py) on the page model: what each page is headed."""

from __future__ import annotations

from iolab.figures.fleet import distributions
from iolab.figures.specsheet import judge, load_spec_sheet
from iolab.pages.fleet import document
from iolab.pages.report.fleet import fleet_document
from iolab.pages.report.model import Table

from .test_fleet import W, drives


def test_the_spec_sheet_acceptance_page_has_its_own_heading(tmp_path):
    # page 2 of a fleet PDF, the spec sheet's verdicts, was headed "Fleet — Summary" as page 1 is
    values = {f"d{i}": 40_000.0 + 10 * i for i in range(6)} | {"slow": 30_000.0}
    ds = drives(values)
    rows = [
        {"name": n, "target": f"sim:x?seed={i}", "where": "local", "labels": {}, "state": "complete", "error": None}
        for i, n in enumerate(values)
    ]
    (tmp_path / "s.toml").write_text(f'[[criterion]]\nfigure = "{W}"\nmin = 35000\n')
    sheet = load_spec_sheet(tmp_path / "s.toml")
    verdicts = {d.name: judge(d.name, d.figures, {W: "IOPS"}, sheet) for d in ds}
    fleet = {"dir": "x", "name": "f", "test": "iops", "state": "complete", "started": "", "ended": ""}
    pages = fleet_document(document(fleet, rows, ds, distributions(ds), (3.5, 1.0), sheet, verdicts)).pages
    acceptance = [
        p
        for p in pages
        if any(isinstance(b, Table) and b.caption.startswith("Acceptance against the spec sheet") for b in p.blocks)
    ]
    assert [p.title for p in acceptance] == ["Fleet — Spec-Sheet Acceptance"]
    assert pages[0].title == "Fleet — Summary"
    # no other page is headed as the acceptance page is, nor carries anything but its verdicts
    assert [p for p in pages if p.title == acceptance[0].title] == acceptance
    assert all(isinstance(b, Table) and b.caption.startswith("Acceptance") for b in acceptance[0].blocks)
