"""The read and write figures of a characterisation mix (compare/characterise.direction_figures),
on hand-made stored cells: folded over the window as the totals are, and '—' (None) only where
the direction was not measured."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from iolab.core.cellschema import CellRow
from iolab.core.workload import Workload
from iolab.figures.compare.characterise import direction_figures
from iolab.figures.summary import CellAverage, PhaseSummary
from iolab.store.runstore import PhaseRow


def row(i: int, rnd: int, write_pct: int, read: tuple, write: tuple) -> CellRow:
    """read/write: (ios, iops, mbps, mean µs, max µs) of one direction."""
    wl = asdict(Workload.mix("rnd", 100 - write_pct, 4096, queue_depth=4, duration_s=1))
    (ri, rio, rmb, rm, rx), (wi, wio, wmb, wm, wx) = read, write
    return CellRow(
        i, "mixed", rnd, i, "measure", f"{write_pct}% W QD4", f"{write_pct}% W", 4096, wl, 0.0, 1.0, 1.0,
        rio, wio, rio + wio, rmb, wmb, rmb + wmb, ri, wi, 0, 0, 50.0, 900.0, rm, rx, wm, wx,
        None, None, None, None, {}, [], False, None,
    )  # fmt: skip


def phase(rows: list[CellRow]) -> PhaseSummary:
    keys = list(dict.fromkeys(r.cell_key for r in rows))
    cells = tuple(
        CellAverage(k, k.split(" QD")[0], 4096, tuple(r.round for r in rows if r.cell_key == k), 0, 0, 0, 0, 0, 0,
                    None, None, None, None)
        for k in keys
    )  # fmt: skip
    return PhaseSummary(
        PhaseRow("mixed", 1, None, None, None, None, 2, None), (1, 2), (1, 2), None, (), cells, (), (), tuple(rows)
    )


def test_each_direction_is_folded_over_the_window_as_stored():
    f = direction_figures(
        phase(
            [
                row(1, 1, 30, (700, 700.0, 2.8, 40.0, 800.0), (300, 300.0, 1.2, 70.0, 900.0)),
                row(2, 2, 30, (900, 900.0, 3.6, 60.0, 500.0), (100, 100.0, 0.4, 90.0, 2000.0)),
            ]
        )
    )["30% W QD4"]
    assert f == pytest.approx(
        {
            "read_iops": 800.0,
            "read_mbps": 3.2,
            "read_lat_mean_us": 50.0,
            "read_lat_max_us": 800.0,
            "write_iops": 200.0,
            "write_mbps": 0.8,
            "write_lat_mean_us": 80.0,
            "write_lat_max_us": 2000.0,
        }
    )


def test_a_direction_not_run_is_not_measured_and_a_stalled_one_did_no_io():
    idle = (0, 0.0, 0.0, None, None)
    f = direction_figures(
        phase([row(1, 1, 0, (500, 500.0, 2.0, 40.0, 80.0), idle), row(2, 1, 30, (500, 500.0, 2.0, 40.0, 80.0), idle)])
    )
    # 0 % writes: the cell never wrote, so it has no write figure at all
    assert f["0% W QD4"]["write_iops"] is None and f["0% W QD4"]["write_lat_mean_us"] is None
    # 30 % writes that completed none: 0 IOPS were measured, a latency was not
    assert f["30% W QD4"]["write_iops"] == 0.0 and f["30% W QD4"]["write_lat_max_us"] is None
