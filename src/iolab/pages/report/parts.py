"""The per-host / per-path breakdown of a run whose rounds were split over several fio job
targets (`--hosts`, `--paths`): what each part measured, beside the merged figure the other
pages show. Any test gets these pages when its cells carry a breakdown."""

from __future__ import annotations

from iolab.core.units import eng, measurable, num
from iolab.engines.merge import breakdown
from iolab.pages.report.model import Page, Table
from iolab.pages.report.rundata import RunData, window_rows
from iolab.pages.report.sections import table_pages
from iolab.pages.runwords import rounds_text

TITLE = "Per-Host / Per-Path Breakdown"


def legs_text(run: RunData) -> str:
    """How the run reached its drive: "1 path", or its legs ("2 paths: /dev/sdb, /dev/sdc",
    "3 hosts: …"), as the manifest stored them (`split`)."""
    legs = run.manifest.split
    if not legs:
        return "1 path"
    kind = "host" if all(leg.get("host") for leg in legs) else "path"
    return f"{len(legs)} {kind}s: " + ", ".join(str(leg.get("name") or leg.get("path")) for leg in legs)


def part_p99(f: dict[str, float]) -> str:
    """A part's p99, or "n/m (N IOs)" where its own IOs are too few to measure one: the part's
    figure is read off its histogram however few its IOs (a 1024 KiB cell over two paths printed
    the p99 of 27 IOs)."""
    ios = int(f.get("ios", 0))
    return eng(f.get("p99_us"), "µs") if measurable(99.0, ios) else f"n/m ({ios:,} IOs)"


def parts_pages(run: RunData, whose: str = "") -> list[Page]:
    """`whose`: the run's name in the page title, where several runs' breakdowns share a report."""
    tables = []
    for ph in run.phases:
        rows_in = [r for r in window_rows(ph) if breakdown(r.counters)]
        if not rows_in:
            continue
        totals: dict[str, list[float]] = {}
        detail = []
        for r in rows_in:
            for p in breakdown(r.counters):
                f = p.figures
                t = totals.setdefault(p.name, [0.0, 0.0, 0])
                t[0] += f.get("ios", 0.0)
                t[1] += f.get("iops", 0.0)
                t[2] += 1
                detail.append(
                    (
                        r.cell_key,
                        str(r.round),
                        p.name,
                        f"{f.get('threads', 0):.0f}×{f.get('queue_depth', 0):.0f}",
                        num(f.get("iops")),
                        num(f.get("mbps")),
                        eng(f.get("lat_mean_us"), "µs"),
                        part_p99(f),
                        f"{100 * f.get('iops', 0.0) / r.iops:.1f} %" if r.iops else "—",
                    )
                )
        all_ios = sum(t[0] for t in totals.values()) or 1.0
        summary = tuple(
            (name, str(int(t[2])), f"{t[0]:,.0f}", f"{100 * t[0] / all_ios:.1f} %", num(t[1] / t[2]))
            for name, t in totals.items()
        )
        where = f"phase {ph.phase.name}, measurement window ({rounds_text(ph.window)})"
        tables.append(
            Table(
                f"Each part's share, {where}",
                ("host / path", "cells", "IOs", "share of IOs", "mean IOPS per cell"),
                summary,
                "Source: results.db table cells, counters 'part … | …' (each part's own fio json+).",
            )
        )
        tables.append(
            Table(
                f"Each part per cell, {where}. Merged figures on the other pages add rates and take percentiles from "
                "the summed latency bins, not from these rows.",
                ("cell", "round", "host / path", "threads×QD", "IOPS", "MB/s", "mean lat", "p99 lat", "share of IOPS"),
                tuple(detail),
                "Source: results.db table cells, counters; raw per-part fio output under raw/.",
                run.raw_links(rows_in),
            )
        )
    return table_pages(f"{TITLE} — {whose}" if whose else TITLE, tables) if tables else []
