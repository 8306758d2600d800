"""The characterise pages' own plots: the QoS test's per-round plot, the one-point-per-second
scatter and the SLC fill's rate against GB written. Apart from the pages (char_series.py) because the plot workers import the module of each
plot they draw, and char_series and char_slc import the pages, the run store and the figures; this one only
what a plot needs (about 0.1 CPU-s less in each worker)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from iolab.pages.report import plot_style
from iolab.pages.report.drawing import drawn_apart


@drawn_apart
def per_round_plot(
    name: str,
    xs: tuple[float, ...],
    iops: tuple[float, ...],
    latency: tuple[tuple[str, tuple[tuple[float, float], ...]], ...],
) -> bytes:
    """IOPS (top) and the latency series (bottom, log) per round: drawn once, in a plot worker
    while a report is written (in this process it would import matplotlib here as well)."""
    with plot_style.styled():
        fig = plot_style._figure(120)
        top, bottom = fig.subplots(2, 1, sharex=True)
        top.plot(xs, iops, marker="o", ms=2.5, color=plot_style.color(0))
        top.set_ylabel("IOPS")
        top.set_ylim(bottom=0)
        plot_style._thousands(top)
        for i, (label, pts) in enumerate(latency):
            if pts:
                bottom.plot(*zip(*pts), marker="o", ms=2.5, color=plot_style.color(i + 1), label=label)
        bottom.set_yscale("log")
        plot_style._log_ticks(bottom)
        bottom.set_ylabel("latency (µs, log scale)")
        bottom.set_xlabel("round")
        plot_style.whole_number_ticks(bottom.xaxis, xs)
        bottom.legend(loc="upper left", frameon=False)
        top.set_title(f"{name}: IOPS, average and maximum latency per round")
        return plot_style._png(fig)


@drawn_apart
def _scatter(
    t: Sequence[float],
    y: Sequence[float | None],
    title: str,
    ylabel: str,
    log: bool,
    height: float,
    xlabel: str = "time (s)",
    label: str = "",
    more: tuple[tuple[str, Sequence[float | None]], ...] = (),
) -> bytes:
    """One point per second; `more` adds labelled series (then with a legend, `label` the first's)."""
    with plot_style.styled():
        fig = plot_style._figure(height)
        ax = fig.subplots()
        pts = []
        for i, (name, ys) in enumerate(((label, y), *more)):
            some = [(a, b) for a, b in zip(t, ys) if b is not None and (not log or b > 0)]
            if some:
                xs, vs = zip(*some)
                ax.scatter(xs, vs, s=3, color=plot_style.color(i), label=name or None)
            pts += some
        if more and pts:
            ax.legend(loc="best", frameon=True, markerscale=3)  # never over a point if avoidable
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel + (" (log scale)" if log else ""))
        if log and pts:
            ax.set_yscale("log")
            # whole decades: a steady series alone would zoom the axis onto its noise (47,040–47,080)
            lo, hi = min(b for _, b in pts), max(b for _, b in pts)
            ax.set_ylim(10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi * 1.05)))
            plot_style._log_ticks(ax)
        else:
            ax.set_ylim(0, 1.05 * max((b for _, b in pts), default=1.0))  # points clear of the frame
            plot_style._thousands(ax)
        ax.set_title(title)
        return plot_style._png(fig)


@drawn_apart
def _rate_by_written(gb: list[float], mbps: list[float], size_gb: float | None, rates: tuple[float, ...]) -> bytes:
    with plot_style.styled():
        fig = plot_style._figure(95)
        ax = fig.subplots()
        # each second's rate over the GB it wrote
        ax.stairs(mbps, [0.0, *gb], linewidth=1.0, color=plot_style.color(0), label="MB/s")
        names = ("in the cache", "after it") if size_gb is not None else ("median",)
        for i, (r, name) in enumerate(zip(rates, names)):
            ax.axhline(r, linestyle="--", linewidth=0.8, color=plot_style.color(1 + i), label=f"{name}: {r:,.0f} MB/s")
        if size_gb is not None:
            ax.axvline(size_gb, linestyle=":", color=plot_style.color(3), label=f"cache: {size_gb:.2f} GB")
        ax.legend(loc="best", frameon=True)
        ax.set_xlabel("GB written since the purge")
        ax.set_ylabel("MB/s (each second)")
        ax.set_xlim(0, max(gb, default=1.0))
        ax.set_ylim(0, 1.05 * max(mbps, default=1.0))
        plot_style._thousands(ax)
        ax.set_title("Sequential fill: MB/s against GB written")
        return plot_style._png(fig)
