"""The Power Consumption pages: a power meter's log aligned to the run's cells (`iolab power`,
figures/power.py), average and maximum mW per run, phase and cell, with each cell's coverage.
A cell the log covered too little of says "not measured" rather than a figure."""

from __future__ import annotations

from iolab.pages.report.model import Page, Table
from iolab.pages.report.rundata import RunData
from iolab.pages.report.sections import table_pages


def _mw(v: float | None) -> str:
    return "not measured" if v is None else f"{v:,.0f}"


def power_pages(run: RunData) -> list[Page]:
    p = run.power
    if not p:
        return []
    src = f"{p['source_copy']} ({p['readings']:,} readings, every {p['interval_s']:g} s; meter clock {p['offset_s']:+g} s)"
    summary = Table(
        "Power Consumption: average and maximum while the cells ran",
        ("scope", "cells measured", "average mW", "maximum mW"),
        tuple(
            (s["name"], f"{s['measured']} of {s['cells']}", _mw(s["avg_mw"]), _mw(s["max_mw"]))
            for s in [p["run"], *p["phases"]]
        ),
        f"power meter log {src}; averages weigh each reading by the time it held",
    )
    cells = Table(
        "Power per cell",
        ("phase", "round", "cell", "average mW", "maximum mW", "log covers"),
        tuple(
            (c["phase"], str(c["round"]), c["label"], _mw(c["avg_mw"]), _mw(c["max_mw"]), f"{c['coverage_pct']:.0f} %")
            for c in p["cells"]
        ),
        f"cells' wall-clock windows (results.db cells.started/ended); a cell covered below "
        f"{p['min_coverage_pct']:g} % is not measured",
    )
    return table_pages("Power Consumption", [summary, cells])
