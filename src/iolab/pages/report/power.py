"""The Power Consumption pages: a power meter's log aligned to the run's cells (`iolab power`,
figures/power.py), average and maximum mW per run, phase and cell, with each cell's coverage.
A cell the log covered too little of says "not measured" rather than a figure. A simulated
drive's power.json is the power model's (figures/simpower.py): its pages say "modelled", with
the values used, and give each cell's energy split instead of a maximum."""

from __future__ import annotations

from typing import Any

from iolab.figures.power import CellPower, summarise, timing_text
from iolab.pages.report.model import Page, Table
from iolab.pages.report.rundata import RunData
from iolab.pages.report.sections import table_pages


def _mw(v: float | None) -> str:
    return "not measured" if v is None else f"{v:,.0f}"


def by_cell(cells: list[dict[str, Any]]) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """The cells grouped by phase and cell label, in the order they first ran: one table row
    per workload, not per round (a quick IOPS run has 281 cells, 56 workloads)."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for c in cells:
        groups.setdefault((c["phase"], c["label"]), []).append(c)
    return [(phase, label, cs) for (phase, label), cs in groups.items()]


def pooled(cs: list[dict[str, Any]]) -> tuple[float | None, float | None, int]:
    """(average mW over the measured cells' covered time, their highest reading, how many were
    measured): figures/power.summarise over power.json's cell records."""
    s = summarise("", [CellPower(**{k: c[k] for k in CellPower.__dataclass_fields__}) for c in cs])
    return s.avg_mw, s.max_mw, s.measured


def _rounds(cs: list[dict[str, Any]]) -> str:
    rounds = sorted({c["round"] for c in cs})
    return str(rounds[0]) if len(rounds) == 1 else f"{rounds[0]}-{rounds[-1]} ({len(cs)})"


def power_pages(run: RunData) -> list[Page]:
    p = run.power
    if not p:
        return []
    if p.get("model"):
        return _model_pages(p)
    timing = timing_text(p["interval_s"], p.get("gap_s"))
    src = f"{p['source_copy']} ({p['readings']:,} readings; {timing}; meter clock {p['offset_s']:+g} s)"
    summary = Table(
        "Power Consumption: average and maximum while the cells ran",
        ("scope", "cells measured", "average mW", "maximum mW"),
        tuple(
            (s["name"], f"{s['measured']} of {s['cells']}", _mw(s["avg_mw"]), _mw(s["max_mw"]))
            for s in [p["run"], *p["phases"]]
        ),
        f"power meter log {src}; averages weigh each reading by the time it held",
    )
    rows = []
    for phase, label, cs in by_cell(p["cells"]):
        avg, peak, n = pooled(cs)
        low = min(c["coverage_pct"] for c in cs)
        rows.append((phase, _rounds(cs), label, _mw(avg), _mw(peak), f"{n} of {len(cs)}; least {low:.0f} %"))
    cells = Table(
        "Power per workload (its cells over every round)",
        ("phase", "rounds (cells)", "cell", "average mW", "maximum mW", "cells measured; log covers"),
        tuple(rows),
        f"cells' wall-clock windows (results.db cells.started/ended), pooled by time; a cell covered below "
        f"{p['min_coverage_pct']:g} % is not measured; every cell: power.json",
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
    rows = []
    for phase, label, cs in by_cell(p["cells"]):
        avg, _, _ = pooled(cs)
        energy = sum(c["energy_mj"] for c in cs)
        share = " / ".join(
            f"{100 * sum(c['energy_parts_mj'][k] for c in cs) / energy:.0f} %" if energy else "-" for k in parts
        )
        rows.append((phase, _rounds(cs), label, _mw(avg), share))
    cells = Table(
        "Modelled power per workload (its cells over every round)",
        ("phase", "rounds (cells)", "cell", "modelled mW", "read / program / erase / controller / link share"),
        tuple(rows),
        "counted from each cell's raw simulator output (flash_write_bytes, reads, erases, busy seconds), pooled "
        "by virtual time; the controller share includes its idle part; every cell: power.json",
    )
    return table_pages("Power Consumption (modelled)", [summary, cells])
