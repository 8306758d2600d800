"""The latency distribution plot, drawn by iolab as vector shapes (vfigure.py): IO count per response-time bin with the cumulative curve,
and the tail as the share of IOs slower than a response time, with the percentile marks. A
mark the IOs cannot measure (units.measurable, the rule every table and export uses) is not
drawn, and the plot says which and why."""

from __future__ import annotations

from collections.abc import Sequence

from iolab.core.results import Histogram
from iolab.core.units import num, scale_for, unmeasured_text
from iolab.pages.report import vfigure
from iolab.pages.report.model import CONTENT_WIDTH_MM
from iolab.pages.report.plot_style import color
from iolab.pages.report.vaxes import LABEL_PT, Axes, Path, PointLabel, Rule, Stems
from iolab.pages.report.vector import Drawing
from iolab.pages.report.vticks import Tick

MARKS = (99.0, 99.9, 99.99, 99.999)


def histogram_unit(hists: Sequence[Histogram]) -> tuple[str, float]:
    """The unit of a latency plot and of its percentile table: the one that suits the
    percentiles and maxima the reader looks up (not the histogram's many low bins)."""
    return scale_for([q for h in hists for q in (*h.percentiles().values(), h.max_us)])


def latency_histogram(
    hists: Sequence[tuple[str, Histogram]], title: str, height_mm: float = 150, marks: Sequence[float] = MARKS
) -> Drawing:
    """Top: IO count per latency bin with the cumulative-% curve and the 99 … 99.999 % marks.
    Bottom: the tail as '% of IOs slower than x' on a log scale, where the nines are readable.
    Several histograms (drives) overlay; the bars are drawn only for a single one."""
    unit, div = histogram_unit([h for _, h in hists])
    single = len(hists) == 1
    xlabel = f"response time ({unit}, log scale)"
    top = Axes(
        title=title,
        xlabel=xlabel,
        ylabel="IOs per bin (log scale)" if single else "",
        xlog=True,
        ylog=single,
        # no bars when overlaid: an empty count axis would read as "no IOs"
        y_visible=single,
        right_label="cumulative IOs (%)",
        right_lim=(0.0, 101.0),
        # right of the plot and of the cumulative axis' label: inside the plot it hides bars
        legend_top=True,
    )
    bottom = _tail_axes(hists, marks, xlabel)
    drawn = [p for p in marks if any(h.measured(p) is not None for _, h in hists)]
    cumulative = []
    for k, (label, h) in enumerate(hists):
        xs = tuple(v / div for v in h.values_us)
        cum = h.cumulative_pct()
        if single:
            top.add(Stems(xs, tuple(float(c) for c in h.counts), 0.8, "#1f77b4", 1.4, 0.8, "IOs per bin"))
        line = color(k) if not single else "#d62728"
        cumulative.append(Path(xs, tuple(cum), line, 1.2, right=True, label=f"cumulative % {label}".strip()))
        tail = tuple(max(100.0 - c, 1e-6) for c in cum)
        bottom.add(Path(xs, tail, color(k), 1.2, step=True, label=label or "IOs slower than x"))
        for p in drawn:
            q = h.measured(p)
            if q is None:
                continue
            q /= div
            if single:  # only the first mark gets a legend entry, naming the marks drawn
                named = " / ".join(f"{m:g}" for m in drawn) + " % marks" if p == drawn[0] else ""
                top.add(Rule(q, True, "#555555", 0.7, "--", named))
                bottom.point_labels.append(PointLabel(q, 100.0 - p, f"{p:g} % ≤ {num(q)} {unit}"))
            bottom.add(Path((q,), (100.0 - p,), color(k), 0.0, marker_pt=4))
    top.add(*cumulative)  # the cumulative axis is drawn over the bars and marks (matplotlib's twin)
    return vfigure.draw([top, bottom], CONTENT_WIDTH_MM, height_mm, title)


TAIL_TICKS = (
    Tick(100, "100 %"),
    Tick(10, "10 %"),
    Tick(1, "1 % (99)"),
    Tick(0.1, "0.1 % (99.9)"),
    Tick(0.01, "0.01 % (99.99)"),
    Tick(0.001, "0.001 % (99.999)"),
    Tick(0.0001, "0.0001 %"),
)


def _tail_axes(hists: Sequence[tuple[str, Histogram]], marks: Sequence[float], xlabel: str) -> Axes:
    """The tail plot's percent axis, its nines lines and title, and why a nine is not drawn."""
    why = [f"{label + ': ' if label else ''}{t}" for label, h in hists if (t := unmeasured_text(marks, h.total))]
    # an empty nines line says why it is empty, under the axis where it hides no data
    lines = [ln for w in why for ln in vfigure.wrap_mm(w, 0.75 * CONTENT_WIDTH_MM, LABEL_PT)]
    ax = Axes(
        title="tail: share of IOs slower than a response time (percentile marks)",
        xlabel="\n".join([xlabel, *lines]),
        ylabel="IOs slower than x",
        xlog=True,
        ylog=True,
        ylim=(1e-4 / 2, 150),
        yticks=list(TAIL_TICKS),
        legend=len(hists) > 1,
    )
    for p in MARKS:
        ax.add(Rule(100.0 - p, False, "#999999", 0.6, ":"))
    return ax
