"""What every report plot shares: the palette, `Series` (the plain series every plot takes)
and the legend's line length. The plots are drawn by iolab as vector shapes (vfigure.py and
the v*.py modules beside it) in the look vaxes.py sets."""

from __future__ import annotations

from dataclasses import dataclass

PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
# the widest a legend line is (mm; ~30 characters of a label at 7 pt), wrapped as the table cells
# are (vtext.wrap_mm): a drive named by its file's path squeezed the plot
LEGEND_WRAP_MM = 40.0


@dataclass(frozen=True)
class Series:
    label: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    partial: tuple[int, ...] = ()  # indices of partial intervals (ended by a budget), drawn marked


PARTIAL_LABEL = "partial interval (ended by the write budget, not the cell time)"


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]
