"""The grid a characterisation matrix phase's cells form (series × queue depth), which the
suites' key figures, the report's pages and the comparison's overlays all read."""

from __future__ import annotations

import re

from ..summary import CellAverage, PhaseSummary

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
