"""The fleet report's pages (pages/report/fleet.py) on the page model: what each page is headed."""

from __future__ import annotations

from iolab.pages.report.fleet import fleet_document
from iolab.pages.report.model import Table

from .test_fleet import judged_fleet


def test_the_spec_sheet_acceptance_page_has_its_own_heading(tmp_path):
    # page 2 of a fleet PDF, the spec sheet's verdicts, was headed "Fleet — Summary" as page 1 is
    pages = fleet_document(judged_fleet(tmp_path)[0]).pages
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
