"""Plots of a stream analysis (PNG, matplotlib), for the report pages.

    plot_all(analysis, out_dir) -> dict[str, Path]

  stream_map.png      IOPS of each dominant stream per step, stacked (the rest as "other"),
                      so the stack's height is the step's IOPS. Past MAX_BINS steps, runs of
                      steps are drawn as one bin (IOPS averaged over it; maxima kept as
                      maxima in the other plots) and the title says so.
  outstanding.png     average and maximum outstanding IO per step
  response_times.png  average and maximum response time per step (log scale)
  stream_table.png    the streams over the whole trace: IOs, % occurrence, MB, response time

Plots of quantities the trace does not have (no response times) are not drawn: the result
simply has no entry for them, rather than an empty chart.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
# the text is DejaVu Sans; a stale font cache (pages/report/plot_style.styled) made the log axes'
# math text log 21 "findfont: ... Falling back to DejaVu Sans" lines into a --quiet run
for _name in ("matplotlib.font_manager", "matplotlib._mathtext"):
    logging.getLogger(_name).setLevel(logging.ERROR)
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from iolab.core.units import counted  # noqa: E402
from iolab.targets.writepolicy import check_file, mark_written, output_dir  # noqa: E402
from iolab.traces.analysis.streamstats import StreamAnalysis  # noqa: E402

Save = Callable[[Figure, Path], None]


def savefig(fig: Figure, out: Path) -> None:
    fig.savefig(out, dpi=110)


MAX_BINS = 800  # columns drawn across a plot: about its width in pixels at the saved size


@dataclass(frozen=True)
class Bins:
    """Steps grouped into at most MAX_BINS consecutive runs, so drawing costs the same for
    100 or 200,000 steps: each plot draws one polygon or line per series, never a shape per
    step. `first` is the first step of each bin (plus the end); `per` the steps per bin."""

    first: np.ndarray
    per: int
    start_s: np.ndarray  # start of each bin
    dur_s: np.ndarray  # length of each bin (the sum of its steps)

    def sum(self, v: np.ndarray) -> np.ndarray:
        return np.add.reduceat(v, self.first[:-1])

    def max(self, v: np.ndarray) -> np.ndarray:
        v = np.where(np.isnan(v), -np.inf, v)
        m = np.maximum.reduceat(v, self.first[:-1])
        return np.where(np.isinf(m), np.nan, m)

    def mean(self, v: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Mean of `v` weighted by `w` over each bin, NaN where nothing is known."""
        ok = ~np.isnan(v)
        num = self.sum(np.where(ok, v * w, 0.0))
        den = self.sum(np.where(ok, w, 0.0))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)

    def note(self, n_steps: int) -> str:
        return (
            "" if self.per == 1 else f"; {counted(n_steps, 'step')} drawn as {len(self.dur_s):,} bins of {self.per:,}"
        )


def _bins(a: StreamAnalysis, max_bins: int = MAX_BINS) -> Bins:
    n = len(a.steps)
    per = max(1, -(-n // max_bins))
    first = np.append(np.arange(0, n, per), n)
    dur = np.array([s.duration_s for s in a.steps], dtype=float)
    start = np.array([s.start_s for s in a.steps], dtype=float)
    return Bins(first, per, start[first[:-1]], np.add.reduceat(dur, first[:-1]) if n else np.zeros(0))


def _unit(a: StreamAnalysis) -> tuple[float, str]:
    span = a.duration_s
    if span >= 7200:
        return 3600.0, "hours"
    if span >= 120:
        return 60.0, "minutes"
    return 1.0, "seconds"


def _title(a: StreamAnalysis, what: str, bins: Bins | None = None) -> str:
    return f"{what} — {Path(a.source).stem}, {a.step_s:g} s steps" + (bins.note(len(a.steps)) if bins else "")


def _edges(bins: Bins, div: float) -> np.ndarray:
    return np.append(bins.start_s, bins.start_s[-1] + bins.dur_s[-1]) / div if len(bins.dur_s) else np.zeros(1)


def stream_map(a: StreamAnalysis, out: Path, save: Save = savefig) -> Path:
    div, unit = _unit(a)
    bins = _bins(a)
    dom = [i for i, s in enumerate(a.streams) if s.dominant]
    row_of = np.full(len(a.streams) + 1, len(dom))
    row_of[dom] = np.arange(len(dom))
    # IO counts per (series, step) from the steps' sparse (stream, count) pairs, in numpy.
    step_idx = np.repeat(np.arange(len(a.steps)), [len(st.streams) for st in a.steps])
    pairs = np.array([p for st in a.steps for p in st.streams], dtype=np.int64).reshape(-1, 2)
    counts = np.zeros((len(dom) + 1, len(a.steps)))
    np.add.at(counts, (row_of[pairs[:, 0]], step_idx), pairs[:, 1])
    ios = np.add.reduceat(counts, bins.first[:-1], axis=1) if len(a.steps) else counts
    dur = np.where(bins.dur_s > 0, bins.dur_s, 1.0)
    rates = ios / dur
    labels = [f"{a.streams[i].label()} ({a.streams[i].pct:.1f} %)" for i in dom] + ["other streams"]
    fig, ax = plt.subplots(figsize=(11, 5))
    edges = _edges(bins, div)
    bottom = np.zeros(rates.shape[1])
    colors = plt.get_cmap("tab20")(np.linspace(0, 1, 20))
    for r, (row, label) in enumerate(zip(rates, labels)):
        if not row.any():
            continue
        c = "lightgrey" if r == len(dom) else colors[r % 20]
        top = bottom + row
        # One stepped polygon per series: each bin is a flat segment over its time span.
        ax.stairs(top, edges, baseline=bottom, fill=True, label=label, color=c, linewidth=0)
        bottom = top
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel("IOPS" + (" (average over each bin)" if bins.per > 1 else ""))
    ax.set_title(_title(a, "IO stream map", bins))
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    save(fig, out)
    plt.close(fig)
    return out


def _per_step(
    a: StreamAnalysis, out: Path, avg: str, mx: str, ylabel: str, what: str, log: bool, save: Save = savefig
) -> Path:
    div, unit = _unit(a)
    bins = _bins(a)
    v_avg = np.array([np.nan if getattr(s, avg) is None else getattr(s, avg) for s in a.steps], dtype=float)
    v_max = np.array([np.nan if getattr(s, mx) is None else getattr(s, mx) for s in a.steps], dtype=float)
    # Averages are time-weighted for outstanding IO, IO-weighted for response times.
    weight = np.array([s.duration_s if avg == "oio_avg" else s.ios for s in a.steps], dtype=float)
    b_avg, b_max = (bins.mean(v_avg, weight), bins.max(v_max)) if len(a.steps) else (v_avg, v_max)
    edges = _edges(bins, div)
    fig, ax = plt.subplots(figsize=(11, 4))
    ax.stairs(b_max, edges, baseline=None, label="maximum", color="tab:red", linewidth=1)
    ax.stairs(b_avg, edges, baseline=None, label="average", color="tab:blue", linewidth=1.5)
    if log:
        ax.set_yscale("log")
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel(ylabel)
    ax.set_title(_title(a, what, bins))
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save(fig, out)
    plt.close(fig)
    return out


def stream_table(a: StreamAnalysis, out: Path, max_rows: int = 25, save: Save = savefig) -> Path:
    rows = []
    for s in a.streams[:max_rows]:
        rows.append(
            [
                s.label(),
                f"{s.ios:,}",
                f"{s.pct:.2f}",
                "yes" if s.dominant else "",
                f"{s.io_bytes / 1e6:,.1f}",
                "" if s.rt_avg_us is None else f"{s.rt_avg_us:,.1f}",
            ]
        )
    if len(a.streams) > max_rows:
        rest = a.streams[max_rows:]
        rows.append(
            [
                f"{len(rest)} more streams",
                f"{sum(s.ios for s in rest):,}",
                f"{sum(s.pct for s in rest):.2f}",
                "",
                f"{sum(s.io_bytes for s in rest) / 1e6:,.1f}",
                "",
            ]
        )
    cols = ["stream", "IOs", "% occurrence", "dominant", "MB", "avg RT (µs)"]
    fig, ax = plt.subplots(figsize=(10, 0.6 + 0.3 * (len(rows) + 1)))
    ax.axis("off")
    tbl = ax.table(cellText=rows, colLabels=cols, loc="center", cellLoc="right", colLoc="right")
    tbl.auto_set_font_size(False)
    tbl.set_fontsize(9)
    ax.set_title(
        f"{_title(a, 'IO streams')}: {a.total_ios:,} IOs; dominant (≥ {a.threshold * 100:g} %) {a.dominant_pct:.1f} %",
        fontsize=10,
    )
    fig.tight_layout()
    save(fig, out)
    plt.close(fig)
    return out


def plot_all(a: StreamAnalysis, out_dir: str | Path, save: Save = savefig) -> dict[str, Path]:
    """Every plot of the analysis as a PNG in `out_dir`; `save` writes each figure (a report's
    pages pass one that keeps the record of what was drawn for their geometry check)."""
    d = output_dir(out_dir, "plots directory")
    names = ["stream_map", "stream_table"] + (["outstanding", "response_times"] if a.has_latency else [])
    for name in names:
        check_file(d / f"{name}.png", "plot")
    plots = {
        "stream_map": stream_map(a, d / "stream_map.png", save=save),
        "stream_table": stream_table(a, d / "stream_table.png", save=save),
    }
    if a.has_latency:
        plots["outstanding"] = _per_step(
            a, d / "outstanding.png", "oio_avg", "oio_max", "outstanding IO", "Outstanding IO", log=False, save=save
        )
        plots["response_times"] = _per_step(
            a,
            d / "response_times.png",
            "rt_avg_us",
            "rt_max_us",
            "response time (µs)",
            "Response times",
            log=True,
            save=save,
        )
    for p in plots.values():
        mark_written(p)
    return plots
