"""The grid a characterisation matrix phase's cells form (series × queue depth), which the
suites' key figures, the report's pages and the comparison's overlays all read."""

from __future__ import annotations

import re

from iolab.figures.summary import CellAverage, PhaseSummary

_QD = re.compile(r" QD(\d+)$")


def qd_of(key: str) -> int | None:
    m = _QD.search(key)
    return int(m.group(1)) if m else None


def grid(ph: PhaseSummary) -> tuple[list[str], list[int], dict[tuple[str, int], CellAverage]]:
    """Series labels (in plan order), queue depths (ascending) and the cell at each place."""
    cells = {(c.mix or c.key, qd): c for c in ph.cells if (qd := qd_of(c.key)) is not None}
    labels = list(dict.fromkeys(m for m, _ in cells))
    qds = sorted({q for _, q in cells})
    return labels, qds, cells


DIRECTIONS = ("read", "write")
FIGURES = ("iops", "mbps", "lat_mean_us", "lat_max_us")


def direction_figures(ph: PhaseSummary) -> dict[str, dict[str, float | None]]:
    """Per cell key: 'read_iops', 'read_mbps', 'read_lat_mean_us', 'read_lat_max_us' and the
    same for writes, folded over the cell's window rounds as the cell's totals are (means; the
    maximum latency's maximum) from the stored read_/write_ columns. None where the direction
    was not measured: IOPS and MB/s of a direction the workload does not run, latencies of a
    direction without IOs."""
    out = {}
    for c in ph.cells:
        rs = [r for r in ph.rows if r.cell_key == c.key and r.round in c.rounds and not r.partial]
        figs: dict[str, float | None] = {}
        for op in DIRECTIONS:
            ran = any(s.get("op") == op for r in rs for s in r.workload.get("streams", ()))
            did_io = any(r.metric(f"{op}_ios") for r in rs)
            for f in FIGURES:
                vals = [v for r in rs if (v := r.metric(f"{op}_{f}")) is not None]
                shown = vals and (did_io if f.startswith("lat") else ran or did_io)
                figs[f"{op}_{f}"] = (max(vals) if f == "lat_max_us" else sum(vals) / len(vals)) if shown else None
        out[c.key] = figs
    return out
