"""The characterisation tests' key figures (with direction and unit) for `iolab compare`, and
the grid a matrix phase's cells form (series × queue depth), which the report's pages and the
comparison's overlays both read."""

from __future__ import annotations

import re
import statistics
from typing import Callable, Sequence

from ..summary import CellAverage, PhaseSummary
from ..units import measurable
from . import KeyMetric

Get = Callable[[list[PhaseSummary]], float | None]
_QD = re.compile(r" QD(\d+)$")


def qd_of(key: str) -> int | None:
    m = _QD.search(key)
    return int(m.group(1)) if m else None


def grid(ph: PhaseSummary) -> tuple[list[str], list[int], dict[tuple[str, int], CellAverage]]:
    """Series labels (in plan order), queue depths (ascending) and the cell at each place."""
    cells = {(c.mix or c.key, qd_of(c.key)): c for c in ph.cells if qd_of(c.key) is not None}
    labels = list(dict.fromkeys(m for m, _ in cells))
    qds = sorted({q for _, q in cells})
    return labels, qds, cells


def _phase(phases: list[PhaseSummary], name: str) -> PhaseSummary | None:
    return next((p for p in phases if p.phase.name == name), None)


def _peak(name: str, attr: str = "iops") -> Get:
    def get(phases: list[PhaseSummary]) -> float | None:
        ph = _phase(phases, name)
        vals = [getattr(c, attr) for c in ph.cells] if ph else []
        return max(vals) if vals else None
    return get


def _at(name: str, series: str, qd: int, attr: str) -> Get:
    def get(phases: list[PhaseSummary]) -> float | None:
        ph = _phase(phases, name)
        c = grid(ph)[2].get((series, qd)) if ph else None
        return None if c is None else getattr(c, attr)
    return get


def matrix_figures(runs: Sequence[list[PhaseSummary]] = ()) -> tuple[KeyMetric, ...]:
    out = []
    for name in ("RND READ", "RND WRITE"):
        out += [KeyMetric(f"{name} peak IOPS", "IOPS", True, _peak(name)),
                KeyMetric(f"{name} 4KiB QD1 average latency", "µs", False, _at(name, "4KiB", 1, "lat_mean_us"))]
    out += [KeyMetric(f"{name} peak MB/s", "MB/s", True, _peak(name, "mbps")) for name in ("SEQ READ", "SEQ WRITE")]
    return tuple(out)


def mixed_figures(runs: Sequence[list[PhaseSummary]] = ()) -> tuple[KeyMetric, ...]:
    return (KeyMetric("peak total IOPS", "IOPS", True, _peak("mixed")),
            KeyMetric("30% W QD1 average latency", "µs", False, _at("mixed", "30% W", 1, "lat_mean_us")))


def entropy_figures(runs: Sequence[list[PhaseSummary]] = ()) -> tuple[KeyMetric, ...]:
    out = []
    for ph in ("write", "70/30"):
        for e in (0, 100):
            out.append(KeyMetric(f"{ph} peak IOPS at {e}% entropy", "IOPS", True, _peak_of_series(ph, f"{e}% entropy")))
    return tuple(out)


def _peak_of_series(name: str, series: str) -> Get:
    def get(phases: list[PhaseSummary]) -> float | None:
        ph = _phase(phases, name)
        vals = [c.iops for (s, _), c in grid(ph)[2].items() if s == series] if ph else []
        return max(vals) if vals else None
    return get


def _rounds(name: str, fn: Callable[[list], float | None]) -> Get:
    def get(phases: list[PhaseSummary]) -> float | None:
        ph = _phase(phases, name)
        return fn(list(ph.rows)) if ph and ph.rows else None
    return get


def qos_figures(runs: Sequence[list[PhaseSummary]] = ()) -> tuple[KeyMetric, ...]:
    out = []
    for op in ("write", "read"):
        name = f"{op} rounds"
        out += [
            KeyMetric(f"{op}: median round IOPS", "IOPS", True, _rounds(name, lambda rs: statistics.median(r.iops for r in rs))),
            KeyMetric(f"{op}: worst round maximum latency", "µs", False,
                      _rounds(name, lambda rs: max((r.lat_max_us for r in rs if r.lat_max_us), default=None))),
            KeyMetric(f"{op}: last round 99.99 %", "µs", False, _rounds(name, lambda rs: rs[-1].p99_99 if measurable(99.99, rs[-1].ios) else None)),
        ]
    return tuple(out)


def consistency_figures(runs: Sequence[list[PhaseSummary]] = ()) -> tuple[KeyMetric, ...]:
    return (KeyMetric("IOPS over the whole period", "IOPS", True, _rounds("consistency", lambda rs: rs[-1].iops)),
            KeyMetric("maximum latency", "µs", False, _rounds("consistency", lambda rs: rs[-1].lat_max_us)))
