"""The latency distribution plot: IO count per response-time bin with the cumulative curve,
and the tail as the share of IOs slower than a response time, with the percentile marks. A
mark the IOs cannot measure (units.measurable, the rule every table and export uses) is not
drawn, and the plot says which and why."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from iolab.core.results import Histogram
from iolab.core.units import num, scale_for, unmeasured_text
from iolab.pages.report.drawing import drawn_apart
from iolab.pages.report.plot_style import _figure, _log_ticks, _png, color, styled

MARKS = (99.0, 99.9, 99.99, 99.999)


def histogram_unit(hists: Sequence[Histogram]) -> tuple[str, float]:
    """The unit of a latency plot and of its percentile table: the one that suits the
    percentiles and maxima the reader looks up (not the histogram's many low bins)."""
    return scale_for([q for h in hists for q in (*h.percentiles().values(), h.max_us)])


@drawn_apart
def latency_histogram(
    hists: Sequence[tuple[str, Histogram]], title: str, height_mm: float = 150, marks: Sequence[float] = MARKS
) -> bytes:
    """Top: IO count per latency bin with the cumulative-% curve and the 99 … 99.999 % marks.
    Bottom: the tail as '% of IOs slower than x' on a log scale, where the nines are readable.
    Several histograms (drives) overlay; the bars are drawn only for a single one."""
    unit, div = histogram_unit([h for _, h in hists])
    with styled():
        fig = _figure(height_mm)
        top, bottom = fig.subplots(2, 1)
        cum_ax = top.twinx()
        drawn = [p for p in marks if any(h.measured(p) is not None for _, h in hists)]
        for k, (label, h) in enumerate(hists):
            xs = [v / div for v in h.values_us]
            cum = h.cumulative_pct()
            if len(hists) == 1:
                # one line per bin as a single collection: fio histograms have ~1,800 bins
                nz = [(x, c) for x, c in zip(xs, h.counts) if c > 0]
                top.vlines(
                    [x for x, _ in nz], 0.8, [c for _, c in nz], color="#1f77b4", lw=1.4, alpha=0.8, label="IOs per bin"
                )
            cum_ax.plot(
                xs, cum, color=color(k) if len(hists) > 1 else "#d62728", lw=1.2, label=f"cumulative % {label}".strip()
            )
            tail = [max(100.0 - c, 1e-6) for c in cum]
            bottom.step(xs, tail, where="post", color=color(k), lw=1.2, label=label or "IOs slower than x")
            for p in drawn:
                q = h.measured(p)
                if q is None:
                    continue
                q /= div
                if len(hists) == 1:
                    top.axvline(
                        q,
                        color="#555",
                        lw=0.7,
                        ls="--",  # only the first mark gets a legend entry, naming the marks drawn
                        label=" / ".join(f"{m:g}" for m in drawn) + " % marks" if p == drawn[0] else None,
                    )
                bottom.plot([q], [100.0 - p], marker="o", ms=4, color=color(k))
                if len(hists) == 1:
                    bottom.annotate(
                        f"{p:g} % ≤ {num(q)} {unit}",
                        (q, 100.0 - p),
                        xytext=(6, 2),
                        textcoords="offset points",
                        fontsize=6.5,
                    )
        for ax in (top, bottom):
            ax.set_xscale("log")
            _log_ticks(ax, "x")
            ax.set_xlabel(f"response time ({unit}, log scale)")
        if len(hists) == 1:
            top.set_yscale("log")
            _log_ticks(top, "y")
            top.set_ylabel("IOs per bin (log scale)")
        else:  # no bars when overlaid: an empty count axis would read as "no IOs"
            top.yaxis.set_visible(False)
        cum_ax.set_ylabel("cumulative IOs (%)")
        cum_ax.set_ylim(0, 101)
        cum_ax.grid(False)
        top.set_title(title)
        _tail_axis(bottom, hists, marks)
        h1, l1 = top.get_legend_handles_labels()
        h2, l2 = cum_ax.get_legend_handles_labels()
        # right of the plot and of the cumulative axis' label: inside the plot it hides bars
        fig.legend(h1 + h2, l1 + l2, loc="outside right upper", frameon=False)
        if len(hists) > 1:
            bottom.legend(loc="center left", bbox_to_anchor=(1.08, 0.5), frameon=False)
        return _png(fig)


def _tail_axis(bottom: Any, hists: Sequence[tuple[str, Histogram]], marks: Sequence[float]) -> None:
    """The tail plot's percent axis, its nines lines and title, and why a nine is not drawn."""
    from matplotlib.ticker import NullFormatter

    bottom.set_yscale("log")
    bottom.set_ylim(1e-4 / 2, 150)
    bottom.set_yticks(
        [100, 10, 1, 0.1, 0.01, 0.001, 0.0001],
        ["100 %", "10 %", "1 % (99)", "0.1 % (99.9)", "0.01 % (99.99)", "0.001 % (99.999)", "0.0001 %"],
    )
    bottom.yaxis.set_minor_formatter(NullFormatter())
    for p in MARKS:
        bottom.axhline(100.0 - p, color="#999", lw=0.6, ls=":")
    bottom.set_ylabel("IOs slower than x")
    bottom.set_title("tail: share of IOs slower than a response time (percentile marks)")
    why = [f"{label + ': ' if label else ''}{t}" for label, h in hists if (t := unmeasured_text(marks, h.total))]
    if why:  # an empty nines line says why it is empty, under the axis where it hides no data
        bottom.set_xlabel("\n".join([bottom.get_xlabel(), *(textwrap.fill(w, 90) for w in why)]))
