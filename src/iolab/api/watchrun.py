"""What the run page of `iolab watch` charts for one run, read from its store (read-only open)
and its live.json: each tracking variable round by round with the steady-state band of the
last evaluated window, the per-second IOPS and latency of the last stored cell, the live
reports of the cell under way, and each host's or path's IOPS cell by cell for a split run.
Only stored or reported figures; nothing is derived that the run did not measure, except the
band and fit line, which are the stored steady-state row's own average, range limit and fit."""

from __future__ import annotations

from pathlib import Path

from iolab.core.cellschema import CellRow
from iolab.core.units import measurable
from iolab.engines.merge import breakdown
from iolab.store.manifest import manifest_of
from iolab.store.runstore import RunStore

# per-second rows of the last cell sent to the page: an hour of fio's reports at most
MAX_SERIES = 3600


def run_detail(run_dir: Path, live: dict | None) -> dict:
    store = RunStore.open(run_dir)
    try:
        m = manifest_of(store)
        plan_phases = {p.get("name"): p for p in m.plan.get("phases", ())}
        phases = [_phase(store, ph.name, plan_phases.get(ph.name, {}), ph.stop_reason) for ph in store.phases()]
        cells = store.cells(complete_only=False)
        last = cells[-1] if cells else None
        return {
            "phases": phases,
            "last_cell": _cell(store, last) if last else None,
            "live": live if m.state == "running" else None,
        }
    finally:
        store.close()


def _phase(store: RunStore, name: str, plan: dict, stop_reason: str | None) -> dict:
    cells = [c for c in store.cells(name, complete_only=False) if c.round > 0]
    verdicts = {v.name: v for v in store.steady_rows(name)}
    tracking = []
    for t in plan.get("tracking", ()):
        points = [
            [c.round, getattr(c, t["metric"], None)] for c in cells if c.cell_key == t["cell_key"] and not c.partial
        ]
        v = verdicts.get(t["name"])
        band = (
            None
            if v is None
            else {
                "rounds": [v.rounds[0], v.rounds[-1]],
                "average": v.average,
                # range ≤ limit × average: every value of the window within average ± half the allowed range
                "low": v.average - v.range_allowed / 2,
                "high": v.average + v.range_allowed / 2,
                "fit": [[r, v.slope * r + v.intercept] for r in (v.rounds[0], v.rounds[-1])],
                "range_ok": v.range_ok,
                "slope_ok": v.slope_ok,
            }
        )
        tracking.append(
            {"name": t["name"], "metric": t["metric"], "points": [p for p in points if p[1] is not None], "band": band}
        )
    split = [
        {"label": f"{c.cell_key} (round {c.round})", "parts": {p.name: p.figures.get("iops") for p in parts}}
        for c in cells
        if (parts := breakdown(c.counters))
    ]
    return {
        "name": name,
        "max_rounds": plan.get("max_rounds"),
        "stop_reason": stop_reason,
        "tracking": tracking,
        "split": split,
    }


def p99_fields(c: CellRow) -> dict:
    """The cell's 99 % latency where its IOs measure it (10 beyond it: 1,000 IOs), else none
    and the page's "n/m (346 IOs)": the store keeps every cell's p99, however few its IOs (a
    quick latency cell of 0.1 s completes a few hundred), and each other page says n/m there."""
    if measurable(99.0, c.ios):
        return {"p99_us": c.p99, "p99_note": None}
    return {"p99_us": None, "p99_note": f"n/m ({c.ios:,} IOs)" if c.ios else None}


def _cell(store: RunStore, c: CellRow) -> dict:
    series = store.series(c.id)[-MAX_SERIES:]
    return {
        "key": c.cell_key,
        "phase": c.phase,
        "round": c.round,
        "iops": c.iops,
        "mbps": c.mbps,
        "lat_mean_us": c.lat_mean_us,
        "lat_max_us": c.lat_max_us,
        **p99_fields(c),
        # (seconds, IOPS read + write, mean latency µs, max latency µs)
        "series": [[t, (r or 0) + (w or 0), mean, mx] for t, r, w, _mbps, mean, mx in series],
        "parts": [
            {"name": p.name, "iops": p.figures.get("iops"), "lat_mean_us": p.figures.get("lat_mean_us")}
            for p in breakdown(c.counters)
        ],
    }
