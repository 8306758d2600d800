"""Plots of a stream analysis (PNG, matplotlib), for the report pages.

    plot_all(analysis, out_dir) -> dict[str, Path]

  stream_map.png      IOPS of each dominant stream per step, stacked (the rest as "other"),
                      so the stack's height is the step's IOPS
  outstanding.png     average and maximum outstanding IO per step
  response_times.png  average and maximum response time per step (log scale)
  stream_table.png    the streams over the whole trace: IOs, % occurrence, MB, response time

Plots of quantities the trace does not have (no response times) are not drawn: the result
simply has no entry for them, rather than an empty chart.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .streams import StreamAnalysis  # noqa: E402


def _x(a: StreamAnalysis) -> tuple[np.ndarray, str]:
    """Step start times in a readable unit."""
    t = np.array([s.start_s for s in a.steps])
    span = a.duration_s
    if span >= 7200:
        return t / 3600, "hours"
    if span >= 120:
        return t / 60, "minutes"
    return t, "seconds"


def _title(a: StreamAnalysis, what: str) -> str:
    return f"{what} — {Path(a.source).stem}, {a.step_s:g} s steps"


def stream_map(a: StreamAnalysis, out: Path) -> Path:
    x, unit = _x(a)
    dom = [i for i, s in enumerate(a.streams) if s.dominant]
    dur = np.array([s.duration_s or 1.0 for s in a.steps])
    rates = np.zeros((len(dom) + 1, len(a.steps)))
    pos = {i: r for r, i in enumerate(dom)}
    for k, st in enumerate(a.steps):
        for i, n in st.streams:
            rates[pos.get(i, len(dom)), k] += n
    rates /= dur
    labels = [f"{a.streams[i].label()} ({a.streams[i].pct:.1f} %)" for i in dom] + ["other streams"]
    fig, ax = plt.subplots(figsize=(11, 5))
    width = (x[1] - x[0]) if len(x) > 1 else 1.0
    bottom = np.zeros(len(a.steps))
    colors = plt.get_cmap("tab20")(np.linspace(0, 1, 20))
    for r, (row, label) in enumerate(zip(rates, labels)):
        if not row.any():
            continue
        c = "lightgrey" if r == len(dom) else colors[r % 20]
        ax.bar(x, row, width=width, bottom=bottom, align="edge", label=label, color=c, linewidth=0)
        bottom += row
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel("IOPS")
    ax.set_title(_title(a, "IO stream map"))
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _per_step(a: StreamAnalysis, out: Path, avg: str, mx: str, ylabel: str, what: str, log: bool) -> Path:
    x, unit = _x(a)
    v_avg = np.array([np.nan if getattr(s, avg) is None else getattr(s, avg) for s in a.steps], dtype=float)
    v_max = np.array([np.nan if getattr(s, mx) is None else getattr(s, mx) for s in a.steps], dtype=float)
    fig, ax = plt.subplots(figsize=(11, 4))
    ax.step(x, v_max, where="post", label="maximum", color="tab:red", linewidth=1)
    ax.step(x, v_avg, where="post", label="average", color="tab:blue", linewidth=1.5)
    if log:
        ax.set_yscale("log")
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel(ylabel)
    ax.set_title(_title(a, what))
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def stream_table(a: StreamAnalysis, out: Path, max_rows: int = 25) -> Path:
    rows = []
    for s in a.streams[:max_rows]:
        rows.append([
            s.label(), f"{s.ios:,}", f"{s.pct:.2f}", "yes" if s.dominant else "",
            f"{s.io_bytes / 1e6:,.1f}", "" if s.rt_avg_us is None else f"{s.rt_avg_us:,.1f}",
        ])
    if len(a.streams) > max_rows:
        rest = a.streams[max_rows:]
        rows.append([f"{len(rest)} more streams", f"{sum(s.ios for s in rest):,}",
                     f"{sum(s.pct for s in rest):.2f}", "", f"{sum(s.io_bytes for s in rest) / 1e6:,.1f}", ""])
    cols = ["stream", "IOs", "% occurrence", "dominant", "MB", "avg RT (µs)"]
    fig, ax = plt.subplots(figsize=(10, 0.6 + 0.3 * (len(rows) + 1)))
    ax.axis("off")
    tbl = ax.table(cellText=rows, colLabels=cols, loc="center", cellLoc="right", colLoc="right")
    tbl.auto_set_font_size(False)
    tbl.set_fontsize(9)
    ax.set_title(
        f"{_title(a, 'IO streams')}: {a.total_ios:,} IOs; dominant (≥ {a.threshold * 100:g} %) "
        f"{a.dominant_pct:.1f} %", fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def plot_all(a: StreamAnalysis, out_dir: str | Path) -> dict[str, Path]:
    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    plots = {
        "stream_map": stream_map(a, d / "stream_map.png"),
        "stream_table": stream_table(a, d / "stream_table.png"),
    }
    if a.has_latency:
        plots["outstanding"] = _per_step(a, d / "outstanding.png", "oio_avg", "oio_max", "outstanding IO",
                                         "Outstanding IO", log=False)
        plots["response_times"] = _per_step(a, d / "response_times.png", "rt_avg_us", "rt_max_us",
                                            "response time (µs)", "Response times", log=True)
    return plots
