"""The RWSW tests' comparison overlays: the same figure for several drives, each series with
its difference from the group mean (Multi-WSAT per interval, Replay-Native per step, DIRTH per
outstanding-IO level). Individual Streams has none: the summary table and its bars are its
comparison."""

from __future__ import annotations

from iolab.core.units import percentile_min_ios
from iolab.figures.compare import dirth_levels
from iolab.pages.report import difference_plots
from iolab.pages.report.model import Figure, Page
from iolab.pages.report.plot_style import Series
from iolab.pages.report.rundata import RunData
from iolab.pages.report.rwsw import time_axis
from iolab.pages.report.rwsw_plots import Panel, demand_intensity, panels
from iolab.pages.report.rwsw_replay import replay_steps


def multi_wsat_overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    series = []
    for r, lab in zip(runs, labels):
        ph = r.phase("main")
        if ph is not None and ph.rows:
            series.append(Series(lab, tuple(x.round for x in ph.rows), tuple(x.iops for x in ph.rows)))
    if not series:
        return []
    png = difference_plots.difference_from_mean(
        series, "interval", "IOPS", "Multi-WSAT: IOPS per interval", height_mm=155
    )
    return [
        Page(
            "Multi-WSAT — IOPS per Interval vs Group Mean",
            (
                Figure(
                    "Multi-WSAT: composite IOPS per interval, and difference from the group mean",
                    png,
                    "Source: each run's results.db, every complete interval. "
                    + difference_plots.alignment_text(series, "interval"),
                ),
            ),
        )
    ]


def replay_overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    series = []
    for r, lab in zip(runs, labels):
        _, steps, axis = replay_steps(r)
        if steps:
            div, unit = time_axis([s for s, _ in steps])
            series.append(Series(lab, tuple(s / div for s, _ in steps), tuple(c.iops for _, c in steps)))
    if not series:
        return []
    png = difference_plots.difference_from_mean(
        series, f"{axis} ({unit})", "IOPS", "Replay-Native: IOPS per step", height_mm=155
    )
    return [
        Page(
            "Replay-Native — IOPS per Step vs Group Mean",
            (
                Figure(
                    "Replay-Native: IOPS per step for each drive, and difference from the group mean",
                    png,
                    "Source: each run's results.db, every replay step. Steps are matched by their start time in the capture "
                    "(the same for every drive): the group mean at a step is the mean of the drives that replayed it, and a "
                    "difference is drawn only where at least two drives did.",
                ),
            ),
        )
    ]


def dirth_overlays(runs: list[RunData], labels: list[str]) -> list[Page]:
    mb, rt, di = [], [], []
    for r, lab in zip(runs, labels):
        levels = dirth_levels(r.phases)
        if not levels:
            continue
        mb.append(Series(lab, tuple(float(n) for n, _ in levels), tuple(c.mbps for _, c in levels)))
        pts = [(float(n), c.p99_999_us) for n, c in levels if c.p99_999_us is not None]
        if pts:
            rt.append(Series(lab, *map(tuple, zip(*pts))))
        di.append((lab, [(c.iops, c.p99_999_us, n) for n, c in levels if c.p99_999_us is not None]))
    if not mb:
        return []
    src = (
        "Source: each run's results.db, phase 'demand variation': each outstanding-IO level's mean over the "
        "measurement window."
    )
    png = panels(
        [
            Panel("MB/s vs outstanding IO", "MB/s (10⁶ B/s)", tuple(mb)),
            Panel("99.999 % response time vs outstanding IO", "response time (µs)", tuple(rt), logy=True),
        ],
        "total outstanding IO (threads × QD, log scale)",
        160,
        logx2=True,
    )
    return [
        Page(
            "DIRTH — MB/s and 5-Nines vs OIO",
            (
                Figure(
                    "DIRTH on the composite: MB/s and 99.999 % response time per level, one line per drive",
                    png,
                    src,
                ),
            ),
        ),
        Page(
            "DIRTH — Demand Intensity",
            (
                Figure(
                    "99.999 % response time vs IOPS per drive (labels: outstanding IO)",
                    demand_intensity(
                        di,
                        "99.999 % response time (µs)",
                        "Demand intensity per drive",
                        missing=f"no drive measured a 99.999 % response time: it needs {percentile_min_ios(99.999):,}"
                        " IOs in a level's window",
                    ),
                    src,
                ),
            ),
        ),
    ]
