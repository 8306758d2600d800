"""The pages of Host Idle Recovery (SNIA PTS 2.0): preconditioning IOPS and steady state, IOPS
over every wait state with the idle periods shaded, IOPS vs TGBW, and each wait state's mean
burst IOPS against the preconditioning steady-state level."""

from __future__ import annotations

from iolab.core.units import duration, num
from iolab.figures.compare.hir import HirResult, hir_result
from iolab.pages.report import plots
from iolab.pages.report.model import Figure, Page, Table, Text
from iolab.pages.report.rundata import RunData
from iolab.pages.report.sections import measurement_window_pages, not_measured_page, table_pages
from iolab.pages.runwords import rounds_text

SRC = "Source: results.db table cells"


def _pc_pages(run: RunData, res: HirResult) -> list[Page]:
    ph = res.pc
    if ph is None or not ph.rows:
        return []
    t, xs = 0.0, []
    for r in ph.rows:
        t += r.runtime_s
        xs.append(t / 60)
    png = plots.time_series_pair(
        [plots.Series("RND 4 KiB W", tuple(xs), tuple(r.iops for r in ph.rows))],
        "time (minutes)",
        "IOPS",
        "Preconditioning IOPS",
        height_mm=150,
    )
    src = (
        f"{SRC}, phase {ph.phase.name!r}: every complete interval of {rounds_text(ph.rounds)}; time is the "
        "cumulative measured runtime."
    )
    pages = [Page("Preconditioning IOPS", (Figure("Host Idle Recovery: preconditioning IOPS per interval", png, src),))]
    return pages + measurement_window_pages(run, ph, lambda v: "IOPS")


def _timeline(res: HirResult) -> tuple[list[plots.Series], list[tuple[float, float]], list[plots.Series]]:
    """IOPS vs time (idle included) and vs TGBW, from the first wait state on: one series per
    burst phase and one per return to baseline."""
    t = written = 0.0
    by_time, gaps, by_gb = [], [], []
    for w in res.waits:
        for label, rows in (
            (f"bursts after {duration(w.idle_s)} idle", w.bursts),
            (f"baseline after {duration(w.idle_s)}", w.baseline),
        ):
            xs, gb, ys = [], [], []
            for r in rows:
                if r.idle_before_s:
                    gaps.append((t / 60, (t + r.idle_before_s) / 60))
                    t += r.idle_before_s
                t += r.runtime_s
                written += r.write_bytes
                xs.append(t / 60)
                gb.append(written / 1e9)
                ys.append(r.iops)
            if rows:
                by_time.append(plots.Series(label, tuple(xs), tuple(ys)))
                by_gb.append(plots.Series(label, tuple(gb), tuple(ys)))
    return by_time, _merged(gaps, t / 60 / 400), by_gb


def _merged(gaps: list[tuple[float, float]], closer: float) -> list[tuple[float, float]]:
    """Idle spans less than `closer` apart as one: a full run's 360 five-second bursts between
    idles are far below a pixel, and hundreds of hairline spans render as random stripes."""
    out: list[tuple[float, float]] = []
    for a, b in gaps:
        if out and a - out[-1][1] < closer:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def hir_pages(run: RunData) -> list[Page]:
    res = hir_result(run.phases)
    pages = _pc_pages(run, res)
    if not any(w.bursts for w in res.waits):
        return pages or ([not_measured_page(run, run.phases[0], "Host Idle Recovery")] if run.phases else [])
    by_time, gaps, by_gb = _timeline(res)
    src = (
        f"{SRC}, phases 'wait …' and 'baseline after wait …': every complete cell; time runs from the first wait "
        "state and includes the idle periods (shaded; idles closer than 1/400 of the time axis are shaded as one band, the "
        "bursts between them too short to show); TGBW counts host writes from the same start."
    )
    png = plots.timeline_with_gaps(
        by_time, gaps, "time (minutes)", "IOPS", "IOPS vs time, all wait states", "host idle", height_mm=130
    )
    pages.append(
        Page(
            "IOPS vs Time — Wait States",
            (Figure("Host Idle Recovery: IOPS of each burst and baseline interval, idle periods shaded", png, src),),
        )
    )
    png = plots.time_series_pair(by_gb, "total GB written (TGBW, 10⁹ B)", "IOPS", "IOPS vs TGBW", height_mm=160)
    pages.append(
        Page("IOPS vs Total GB Written", (Figure("Host Idle Recovery: IOPS vs TGBW, linear and log–log", png, src),))
    )
    cats = [duration(w.idle_s) for w in res.waits]
    groups = [
        ("mean burst IOPS", [w.burst_iops for w in res.waits]),
        ("return-to-baseline mean IOPS", [w.baseline_iops for w in res.waits]),
    ]
    png = plots.grouped_bars(cats, groups, "IOPS", "Mean IOPS per wait state (idle before each burst)", height_mm=95)
    # the window's average is a steady-state level only when the phase reached steady state; a
    # run that never left fresh-out-of-box (a quick run's few short rounds) has a window mean
    # alone, and calling it a steady-state level would say what the run did not show
    if res.steady_iops is None:
        steady = "Preconditioning steady-state level: not measured."
    elif res.pc is not None and res.pc.steady:
        steady = f"Preconditioning steady-state level: {num(res.steady_iops)} IOPS (window average of the tracking variable)."
    else:
        passed = res.pc is not None and res.pc.not_accepted() is not None
        state = (
            "its window passes the rule but was NOT accepted as steady state" if passed else "steady state NOT reached"
        )
        steady = (
            f"Preconditioning window mean: {num(res.steady_iops)} IOPS (window average of the tracking variable; "
            f"{state}, so this is no steady-state level, and recovery is measured against it alone)."
        )
    pages.append(
        Page(
            "Mean IOPS per Wait State",
            (
                Figure(
                    "Host Idle Recovery: mean IOPS of the bursts and of the return to baseline, per wait state",
                    png,
                    src,
                ),
                Text((steady,), 12),
            ),
        )
    )
    rows = tuple(
        (
            duration(w.idle_s),
            str(len(w.bursts)),
            num(w.burst_iops),
            num(res.recovery(w)),
            str(len(w.baseline)),
            num(w.baseline_iops),
        )
        for w in res.waits
    )
    table = Table(
        f"Recovery per wait state (recovery = mean burst IOPS / {res.level_words()})",
        ("idle before burst", "bursts", "mean burst IOPS", "recovery (×)", "baseline intervals", "baseline mean IOPS"),
        rows,
        src,
        run.raw_links([r for w in res.waits for r in w.bursts[:1]]),
    )
    return pages + table_pages("Tabular Results — Host Idle Recovery", [table])
