"""A drive's front page: the spec sheet the user gave, each line beside the figure this run
measured for it, and a verdict per criterion in words (figures/specmatch.py decides them).

A figure from a run that cannot stand for the drive (quick, not steady, limited range,
incomplete, audit failed) is shown with its verdict "not judged: <why>"; a criterion the run
has no figure for is "not measured by this run"."""

from __future__ import annotations

from typing import Any

from iolab.core.units import given, num
from iolab.figures.specmatch import (
    Measured,
    SpecLine,
    figure_steady,
    match,
    record_figures,
    run_reasons,
    tally,
    unmeasured_figures,
)
from iolab.figures.specsheet import SpecSheet
from iolab.pages.report.model import CONTENT_MM, LINE_CHARS, Page, Table, Text, block_height
from iolab.pages.report.sections import table_pages

TITLE = "Against the Spec Sheet"
_WORD = {
    "meets": "meets",
    "short": "SHORT",
    "over": "OVER",
    "not-judged": "not judged",
    "not-measured": "not measured",
    "no-unit": "not judged",
}


def run_figures(record: dict[str, Any]) -> list[Measured]:
    """The run's key figures, and its DWPD where its record has one: only a run whose test
    measures endurance, on the WAF basis its Endurance page states (figures/endurance.py), the
    same record `--json` prints and the fleet judges."""
    out = record_figures(record)
    e = record.get("endurance") or {}
    if isinstance(e.get("dwpd"), (int, float)):
        basis = f"WAF {e['waf']:.2f}, {e['short']}"
        out.append(Measured("DWPD", float(e["dwpd"]), "", basis=basis, steady=figure_steady(record, "DWPD")))
    return out


def spec_lines(record: dict[str, Any], sheet: SpecSheet) -> tuple[list[SpecLine], list[str]]:
    reasons = run_reasons(record)
    return match(sheet, run_figures(record), reasons, unmeasured_figures(record)), reasons


def _num(x: float | None, unit: str = "") -> str:
    """A measured figure as `iolab show` and the fleet print it (units.num); the sheet's own
    numbers are printed as it wrote them (units.given, Criterion.bounds_text)."""
    if x is None:
        return "-"
    return num(x) + (f" {unit}" if unit else "")


def _row(ln: SpecLine) -> tuple[str, ...]:
    c = ln.criterion
    m = ln.measured
    spec = c.bounds_text(m.unit if m is not None else None) + (
        f" (data sheet {given(c.claim)})" if c.claim is not None else ""
    )
    measured = _num(ln.value, c.unit or m.unit) if m is not None and ln.value is not None else "-"
    if m is not None and ln.value is None:
        measured = _num(m.value, m.unit)
    # a figure the run has no value for says why in words (it read "FIGURE (none)")
    figure = f"{c.figure} — {ln.missing}" if m is None else f"{c.figure} ({m.basis})" if m.basis else c.figure
    return (c.name, spec, figure, measured, _WORD[ln.verdict])


def _text_height(paragraphs: list[str]) -> float:
    lines = sum(max(1, -(-len(p) // LINE_CHARS)) for p in paragraphs)
    return 6.0 + 5.0 * lines + 2.0 * len(paragraphs)


def front_pages(record: dict[str, Any], sheet: SpecSheet) -> list[Page]:
    lines, reasons = spec_lines(record, sheet)
    return layout(lines, reasons, str(record.get("run_id")), sheet)


def layout(lines: list[SpecLine], reasons: list[str], run_id: str, sheet: SpecSheet) -> list[Page]:
    """The front page(s): the verdicts in words, then the spec lines beside the figures."""
    model = f" for {sheet.model}" if sheet.model else ""
    head = [f"This run ({run_id}) against the spec sheet {sheet.path.name}{model}: {tally(lines)}."]
    if reasons:
        head.append(
            f"Not judged: {'; '.join(reasons)}. The figures below were measured, but by a run that cannot "
            "stand for the drive's sustained performance: they are shown, and no criterion is met or missed."
        )
    verdicts = [ln.text for ln in lines]
    text = Text(tuple(head + verdicts), height_mm=_text_height(head + verdicts))
    table = Table(
        "Each spec line beside the figure it is judged against",
        ("criterion", "spec", "measured figure", "measured", "verdict"),
        tuple(_row(ln) for ln in lines),
        f"spec sheet {sheet.path}; figures: the run's key figures (iolab show {run_id})",
    )
    if block_height(text) + block_height(table) <= CONTENT_MM:
        return [Page(TITLE, (text, table))]
    # a long sheet: the verdicts on pages of their own, every one of them, then the table
    pages: list[Page] = []
    paras: list[str] = []
    for para in head + verdicts:
        if paras and _text_height([*paras, para]) > CONTENT_MM:
            pages.append(Page(TITLE, (Text(tuple(paras), height_mm=_text_height(paras)),)))
            paras = []
        paras.append(para)
    pages.append(Page(TITLE, (Text(tuple(paras), height_mm=_text_height(paras)),)))
    return pages + table_pages(TITLE, [table])


__all__ = ["front_pages", "layout", "run_figures", "spec_lines"]
