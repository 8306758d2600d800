"""The pages of Cross Stimulus Recovery (SNIA PTS 2.0): throughput, ART and MRT over the three
groups, the recovery times with the definitions the run used, and every interval."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from iolab.core.cellschema import CellRow
from iolab.core.units import counted, duration, num, share_text
from iolab.figures.compare.pts2 import SETTLE_WINDOW, XsrResult, xsr_result
from iolab.figures.points import RECOVERY_TOLERANCE, SETTLE_TOLERANCE, Recovery
from iolab.figures.summary import interval_label
from iolab.pages.report import plots
from iolab.pages.report.model import Figure, Page, Table
from iolab.pages.report.rundata import RunData
from iolab.pages.report.sections import measurement_window_pages, not_measured_page, table_pages

TABLE_MAX_ROWS = 150


def run_xsr(run: RunData) -> tuple[XsrResult, dict[str, Any]]:
    """The result with the tolerances the run stored (its --set values, else the defaults)."""
    tol = run.values_of((RECOVERY_TOLERANCE, SETTLE_TOLERANCE), "xsr")
    return xsr_result(run.phases, tol["recovery_tolerance"], tol["settle_tolerance"]), tol


def _series(res: XsrResult, get: Callable[[CellRow], float]) -> list[plots.Series]:
    return [
        plots.Series(
            f"{g.name}: {g.rows[0].cell_key.split(' ', 1)[1]}" if g.rows else g.name,
            tuple(g.start_min + m for m in g.minutes),
            tuple(get(r) for r in g.rows),
        )
        for g in res.groups
        if g.rows
    ]


def _when(r: Recovery | None) -> str:
    if r is None:
        return "not measured (the group has no complete interval)"
    if r.minutes is None:
        return f"NOT reached within the group (target {num(r.target)} MB/s)"
    # in s below 2 minutes, min above, 3 digits: "0.04322 min" was a 2.59 s recovery
    return f"{duration(r.minutes * 60)} (interval {r.interval}; target {num(r.target)} MB/s)"


def _last(rows: Sequence[CellRow]) -> str:
    """The intervals a final level averages (Group.final_mbps): the last SETTLE_WINDOW, or every
    one of a group with fewer."""
    n = min(SETTLE_WINDOW, len(rows))
    return f"last {n} intervals" if n == SETTLE_WINDOW else f"{counted(n, 'interval')} (all it has)"


def xsr_pages(run: RunData) -> list[Page]:
    res, tol = run_xsr(run)
    if not any(g.rows for g in res.groups):
        return [not_measured_page(run, run.phases[0], "Cross Stimulus Recovery")] if run.phases else []
    src = (
        "Source: results.db table cells, phases 'group 1' … 'group 3': every complete interval; time is the "
        "cumulative measured runtime from the start of group 1."
    )
    pages = []
    for title, ylabel, get in (
        ("Throughput vs Time", "MB/s", lambda r: r.mbps),
        ("Average Response Time vs Time", "ART (µs)", lambda r: r.lat_mean_us or 0.0),
        ("Maximum Response Time vs Time", "MRT (µs)", lambda r: r.lat_max_us or 0.0),
    ):
        png = plots.time_series_pair(_series(res, get), "time (minutes)", ylabel, title, height_mm=160)
        pages.append(Page(title, (Figure(f"Cross Stimulus Recovery: {title.lower()}, all groups", png, src),)))
    g1, g2, g3 = res.groups
    rows = (
        ("Group 1 mean TP (SEQ 1024 KiB W)", f"{num(g1.mean_mbps)} MB/s over {len(g1.rows)} intervals"),
        (f"Group 2 final level (mean of its {_last(g2.rows)})", f"{num(g2.final_mbps())} MB/s"),
        (
            f"Group 2 settled (within ± {SETTLE_TOLERANCE.show(tol['settle_tolerance'])} of its final level)",
            _when(res.settled),
        ),
        (
            f"Group 3 recovered (TP ≥ {share_text(1 - tol['recovery_tolerance'])} of group 1's mean)",
            _when(res.recovered),
        ),
        (f"Group 3 final level (mean of its {_last(g3.rows)})", f"{num(g3.final_mbps())} MB/s"),
        ("recovery_tolerance", f"{RECOVERY_TOLERANCE.show(tol['recovery_tolerance'])} ({RECOVERY_TOLERANCE.source})"),
        ("settle_tolerance", f"{SETTLE_TOLERANCE.show(tol['settle_tolerance'])} ({SETTLE_TOLERANCE.source})"),
    )
    tables = [Table("Cross Stimulus Recovery: recovery times", ("item", "value"), rows, src, run.store_links())]
    every = [(g, i, r) for g in res.groups for i, r in enumerate(g.rows)]
    step = max(1, -(-len(every) // TABLE_MAX_ROWS))
    shown = [e for k, e in enumerate(every) if k % step == 0 or e[1] == len(e[0].rows) - 1]
    table_rows = tuple(
        (
            g.name,
            interval_label(r),
            num(g.start_min + g.minutes[i]),
            num(r.mbps),
            num(r.iops),
            num(r.lat_mean_us),
            num(r.lat_max_us),
        )
        for g, i, r in shown
    )
    caption = "Throughput per interval" + (
        f" (every {step}th interval shown; all are in results.db)" if step > 1 else ""
    )
    tables.append(
        Table(
            caption,
            ("group", "interval", "time (min)", "MB/s", "IOPS", "ART (µs)", "MRT (µs)"),
            table_rows,
            src,
            run.raw_links([r for _, _, r in shown]),
        )
    )
    pages += table_pages("Tabular Results — Cross Stimulus Recovery", tables)
    for ph in run.phases:  # each group's last five intervals, for information (no group stops at steady state)
        pages += measurement_window_pages(run, ph, lambda v: "MB/s")
    return pages
