"""The Power Consumption pages: a power meter's log aligned to the run's cells (`iolab power`,
figures/power.py), average and maximum mW per run, phase and cell, with each cell's coverage.
A cell the log covered too little of says "not measured" rather than a figure. A simulated
drive's power.json is the power model's (figures/simpower.py): its pages say "modelled", with
the values used, and give each cell's energy split instead of a maximum."""

from __future__ import annotations

from typing import Any

from iolab.pages.report.model import Page, Table
from iolab.pages.report.rundata import RunData
from iolab.pages.report.sections import table_pages


def _mw(v: float | None) -> str:
    return "not measured" if v is None else f"{v:,.0f}"


def power_pages(run: RunData) -> list[Page]:
    p = run.power
    if not p:
        return []
    if p.get("model"):
        return _model_pages(p)
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


def _model_pages(p: dict[str, Any]) -> list[Page]:
    """A simulated drive's modelled power: never a measurement, and each table says so."""
    m = p["model"]
    used = (
        f"{p['source']}: NAND {m['read_uj_per_page']:g} µJ per {m['page_bytes'] // 1024} KiB page read, "
        f"{m['prog_uj_per_page']:g} µJ per page programmed, {m['erase_uj_per_block']:g} µJ per block erased "
        f"({m['blocks_per_erase']:g} blocks per FTL erase); controller {m['active_mw']:g} mW busy, "
        f"{m['idle_mw']:g} mW idle; {m['interface'].upper()} link {m['link_mw']:g} mW while transferring"
    )
    summary = Table(
        "Power Consumption (modelled, not measured): average while the cells ran",
        ("scope", "cells", "modelled average mW"),
        tuple((s["name"], str(s["cells"]), _mw(s["avg_mw"])) for s in [p["run"], *p["phases"]]),
        f"{used}; averages are each scope's modelled energy over its virtual seconds",
    )
    parts = ("nand_read_mj", "nand_program_mj", "nand_erase_mj", "controller_active_mj", "link_mj")
    cells = Table(
        "Modelled power per cell",
        ("phase", "round", "cell", "modelled mW", "read / program / erase / controller / link share"),
        tuple(
            (
                c["phase"],
                str(c["round"]),
                c["label"],
                _mw(c["avg_mw"]),
                " / ".join(
                    f"{100 * c['energy_parts_mj'][k] / c['energy_mj']:.0f} %" if c["energy_mj"] else "-" for k in parts
                ),
            )
            for c in p["cells"]
        ),
        "counted from each cell's raw simulator output (flash_write_bytes, reads, erases, busy seconds); "
        "the controller share includes its idle part",
    )
    return table_pages("Power Consumption (modelled)", [summary, cells])
