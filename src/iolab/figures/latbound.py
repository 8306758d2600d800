"""The latency-bounded scaling test's phases and the bound its sustained cell was held to, as the
run recorded them: read alike by its plan (suites/scale_latbound.py), key figures and pages
(pages/report/latbound.py); here, below the pages, so that declaring the test imports no plot."""

from __future__ import annotations

from iolab.core.cellschema import CellRow
from iolab.core.decide import LatencyBound, sample_of_row
from iolab.core.units import measurable

RAMP = "demand ramp"
SUSTAIN = "sustain"


def recorded_bound(row: CellRow) -> tuple[float, float] | None:
    """The (percentile, µs) bound a sustained cell was held to, as its workload recorded it (None:
    a run made before the bound was recorded there)."""
    bound = dict(tuple(kv) for kv in row.workload.get("extra") or ())
    try:
        return float(bound["bound_percentile"]), float(bound["bound_us"])
    except (KeyError, TypeError, ValueError):
        return None


def held(row: CellRow, bound: tuple[float, float]) -> bool:
    """The cell's percentile measurable from its IOs, and within the bound by the ramp's own rule."""
    return measurable(bound[0], row.ios) and LatencyBound(*bound).met(sample_of_row(row))
