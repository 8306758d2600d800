"""Plots of a trace's stream analysis, drawn as vector Drawings (vfigure.py): the RWSW
Self-Test pages show them, and `iolab trace analyze` writes each as an SVG file.

    drawings(analysis) -> dict[str, Drawing]
    write_all(analysis, out_dir) -> dict[str, Path]

  stream_map      IOPS of each dominant stream per step, stacked (the rest as "other"),
                  so the stack's height is the step's IOPS. Past MAX_BINS steps, runs of
                  steps are drawn as one bin (IOPS averaged over it; maxima kept as
                  maxima in the other plots) and the title says so.
  outstanding     average and maximum outstanding IO per step
  response_times  average and maximum response time per step (log scale)
  stream_table    the streams over the whole trace: IOs, % occurrence, MB, response time

Plots of quantities the trace does not have (no response times) are not drawn: the result
simply has no entry for them, rather than an empty chart.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iolab.core.units import counted, human_span
from iolab.pages.report import textwidth, vfigure
from iolab.pages.report.model import CONTENT_WIDTH_MM
from iolab.pages.report.vaxes import TITLE_PT, Axes, Fill
from iolab.pages.report.vaxes import Path as Series
from iolab.pages.report.vector import Drawing, Line, Rect, svg
from iolab.pages.report.vtext import Canvas, fill_mm, text_height
from iolab.targets.writepolicy import check_file, output_dir, output_file
from iolab.traces.analysis.streamstats import StreamAnalysis

MAX_BINS = 800  # columns drawn across a plot: about as many as its width has pixels on screen
# matplotlib's tab20, which the stream map's streams were coloured by; the rest light grey
TAB20 = [
    "#1f77b4",
    "#aec7e8",
    "#ff7f0e",
    "#ffbb78",
    "#2ca02c",
    "#98df8a",
    "#d62728",
    "#ff9896",
    "#9467bd",
    "#c5b0d5",
    "#8c564b",
    "#c49c94",
    "#e377c2",
    "#f7b6d2",
    "#7f7f7f",
    "#c7c7c7",
    "#bcbd22",
    "#dbdb8d",
    "#17becf",
    "#9edae5",
]
OTHER, MAXIMUM, AVERAGE = "#d3d3d3", "#d62728", "#1f77b4"
W = CONTENT_WIDTH_MM
TITLE_WRAP_MM = 0.65 * W  # a title stays over its axes, clear of the legend beside them


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
    n = len(a.rated_steps())
    per = max(1, -(-n // max_bins))
    first = np.append(np.arange(0, n, per), n)
    dur = np.array([s.duration_s for s in a.rated_steps()], dtype=float)
    start = np.array([s.start_s for s in a.rated_steps()], dtype=float)
    return Bins(first, per, start[first[:-1]], np.add.reduceat(dur, first[:-1]) if n else np.zeros(0))


def _unit(a: StreamAnalysis) -> tuple[float, str]:
    span = a.duration_s
    if span >= 7200:
        return 3600.0, "hours"
    if span >= 120:
        return 60.0, "minutes"
    return 1.0, "seconds"


def _title(a: StreamAnalysis, what: str, bins: Bins | None = None) -> str:
    # a short final step is drawn as the summary counts it: not at all (StreamAnalysis.short_step)
    short = a.short_step()
    return (
        f"{what} — {Path(a.source).stem}, {a.step_s:g} s steps"
        + (bins.note(len(a.rated_steps())) if bins else "")
        + (f" (partial last step {short.index}, {human_span(short.duration_s)}, left out)" if short else "")
    )


def _edges(bins: Bins, div: float) -> np.ndarray:
    return np.append(bins.start_s, bins.start_s[-1] + bins.dur_s[-1]) / div if len(bins.dur_s) else np.zeros(1)


def stream_map(a: StreamAnalysis) -> Drawing:
    div, unit = _unit(a)
    bins = _bins(a)
    dom = [i for i, s in enumerate(a.streams) if s.dominant]
    row_of = np.full(len(a.streams) + 1, len(dom))
    row_of[dom] = np.arange(len(dom))
    # IO counts per (series, step) from the steps' sparse (stream, count) pairs, in numpy.
    steps = a.rated_steps()
    step_idx = np.repeat(np.arange(len(steps)), [len(st.streams) for st in steps])
    pairs = np.array([p for st in steps for p in st.streams], dtype=np.int64).reshape(-1, 2)
    counts = np.zeros((len(dom) + 1, len(steps)))
    np.add.at(counts, (row_of[pairs[:, 0]], step_idx), pairs[:, 1])
    ios = np.add.reduceat(counts, bins.first[:-1], axis=1) if len(steps) else counts
    rates = ios / np.where(bins.dur_s > 0, bins.dur_s, 1.0)
    labels = [f"{a.streams[i].label()} ({a.streams[i].pct:.1f} %)" for i in dom] + ["other streams"]
    ax = Axes(
        title=fill_mm(_title(a, "IO stream map", bins), TITLE_WRAP_MM, TITLE_PT),
        xlabel=f"time ({unit})",
        ylabel="IOPS" + (" (average over each bin)" if bins.per > 1 else ""),
        ylim=(0, None),
    )
    edges = tuple(_edges(bins, div).tolist())
    bottom = np.zeros(rates.shape[1])
    for r, (row, label) in enumerate(zip(rates, labels)):
        if not row.any():
            continue
        top = bottom + row
        # one stepped polygon per series: each bin a flat segment over its time span
        color = OTHER if r == len(dom) else TAB20[r % 20]
        ax.add(Fill(edges, tuple(bottom.tolist()), tuple(top.tolist()), color, label))
        bottom = top
    return vfigure.draw([ax], W, W * 5 / 11, "IO stream map")


def _runs(edges: np.ndarray, v: np.ndarray) -> list[tuple[tuple[float, ...], tuple[float, ...]]]:
    """The steps of `v` (one value per bin between `edges`) as runs of known values, each as a
    post-step line's points: a bin with nothing known (NaN) is a gap, as matplotlib's stairs left it."""
    out = []
    known = np.flatnonzero(~np.isnan(v))
    for run in np.split(known, np.flatnonzero(np.diff(known) > 1) + 1) if len(known) else []:
        i, j = int(run[0]), int(run[-1]) + 1
        ys = v[i:j].tolist()
        out.append((tuple(edges[i : j + 1].tolist()), tuple(ys + ys[-1:])))
    return out


def per_step(a: StreamAnalysis, avg: str, mx: str, ylabel: str, what: str, log: bool) -> Drawing:
    """The average and the maximum of a step's quantity (`avg`, `mx`: StepStat fields) per bin."""
    div, unit = _unit(a)
    bins = _bins(a)
    steps = a.rated_steps()
    v_avg = np.array([np.nan if getattr(s, avg) is None else getattr(s, avg) for s in steps], dtype=float)
    v_max = np.array([np.nan if getattr(s, mx) is None else getattr(s, mx) for s in steps], dtype=float)
    # Averages are time-weighted for outstanding IO, IO-weighted for response times.
    weight = np.array([s.duration_s if avg == "oio_avg" else s.ios for s in steps], dtype=float)
    b_avg, b_max = (bins.mean(v_avg, weight), bins.max(v_max)) if len(steps) else (v_avg, v_max)
    edges = _edges(bins, div)
    title = fill_mm(_title(a, what, bins), TITLE_WRAP_MM, TITLE_PT)
    ax = Axes(title=title, xlabel=f"time ({unit})", ylabel=ylabel, ylog=log)
    for values, label, color, width in ((b_max, "maximum", MAXIMUM, 1.0), (b_avg, "average", AVERAGE, 1.5)):
        for xs, ys in _runs(edges, values):
            ax.add(Series(xs, ys, color, width, step=True, label=label))
    return vfigure.draw([ax], W, W * 4 / 11, what)


TABLE_PT, TABLE_TITLE_PT, CELL_PAD = 9.0, 10.0, 1.5  # matplotlib's table at fontsize 9, its title at 10


def _table_rows(a: StreamAnalysis, max_rows: int) -> list[list[str]]:
    rows = [
        [
            s.label(),
            f"{s.ios:,}",
            f"{s.pct:.2f}",
            "yes" if s.dominant else "",
            f"{s.io_bytes / 1e6:,.1f}",
            "" if s.rt_avg_us is None else f"{s.rt_avg_us:,.1f}",
        ]
        for s in a.streams[:max_rows]
    ]
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
    return rows


def stream_table(a: StreamAnalysis, max_rows: int = 25) -> Drawing:
    """The streams as a ruled table, each cell's text set right (as matplotlib's table was), its
    columns as wide as their widest text; the record holds every text for the overlap and edge rules."""
    cols = ["stream", "IOs", "% occurrence", "dominant", "MB", "avg RT (µs)"]
    rows = [cols, *_table_rows(a, max_rows)]
    title = (
        f"{_title(a, 'IO streams')}: {a.total_ios:,} IOs; dominant (≥ {a.threshold * 100:g} %) {a.dominant_pct:.1f} %"
    )
    title = fill_mm(title, 0.9 * W, TABLE_TITLE_PT)
    widths = [max(textwidth.width_mm(r[k], TABLE_PT) for r in rows) + 2 * CELL_PAD for k in range(len(cols))]
    pitch = text_height(1, TABLE_PT) + CELL_PAD
    top = 3.0 + text_height(title.count("\n") + 1, TABLE_TITLE_PT) + 2.0
    height = top + pitch * len(rows) + 3.0
    c = Canvas(W, height)
    c.text(title, TABLE_TITLE_PT, "title", 0, W / 2, 3.0, "center", "top")
    left = (W - sum(widths)) / 2
    rights = np.cumsum([left, *widths]).tolist()
    bottom = top + pitch * len(rows)
    for k, row in enumerate(rows):
        for text, right in zip(row, rights[1:]):
            if text:
                c.text(text, TABLE_PT, "text", 0, right - CELL_PAD, top + pitch * (k + 0.5), "right", "center")
    rules = [((left, top + pitch * k), (rights[-1], top + pitch * k)) for k in range(len(rows) + 1)]
    rules += [((x, top), (x, bottom)) for x in rights]
    c.shapes += [Line(seg, "#000000", 0.5) for seg in rules]
    return c.drawing("IO streams", [])


def drawings(a: StreamAnalysis, table: bool = True) -> dict[str, Drawing]:
    """Every plot of the analysis by name (the table of streams if `table`); the outstanding-IO
    and response-time plots only for a trace with response times."""
    out = {"stream_map": stream_map(a)} | ({"stream_table": stream_table(a)} if table else {})
    if a.has_latency:
        out["outstanding"] = per_step(a, "oio_avg", "oio_max", "outstanding IO", "Outstanding IO", log=False)
        out["response_times"] = per_step(a, "rt_avg_us", "rt_max_us", "response time (µs)", "Response times", log=True)
    return out


def standalone_svg(d: Drawing) -> str:
    """An SVG file of the drawing, on white (the report's page is white; a viewer's may not be)."""
    on_white = Drawing(
        d.width_mm, d.height_mm, (Rect(0, 0, d.width_mm, d.height_mm, "#ffffff"), *d.shapes), d.alt, d.record
    )
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{svg(on_white)}\n'


# every plot an analysis may write (NAME.svg), the last two only for a trace with response times
PLOTS = ("stream_map", "stream_table", "outstanding", "response_times")


def write_all(a: StreamAnalysis, out_dir: str | Path) -> dict[str, Path]:
    """Every plot of the analysis as an SVG file in `out_dir`, by name."""
    d = output_dir(out_dir, "plots directory")
    names = list(PLOTS if a.has_latency else PLOTS[:2])
    for name in names:
        check_file(d / f"{name}.svg", "plot")
    out = {}
    for name, drawing in drawings(a).items():
        # written beside its name, which it takes marked: written in place and marked after, a
        # stop between the two left a plot that the next analysis refused as someone's data
        with output_file(d / f"{name}.svg", "plot") as part:
            part.write_text(standalone_svg(drawing), encoding="utf-8")
        out[name] = d / f"{name}.svg"
    return out
