"""The fleet as one system at a latency bound (the scale-out note's figure: a pool's total 70/30
4 KiB IOPS held under 700 µs across many drives at once), from the drives' `latency-bound` runs.

Every drive ran the same demand ramp (`rate_iops` per step) and then sustained its own best
step. The pool's figures add the drives' delivered IOPS and take the latency percentile of the
*merged* histogram: each latency bin's IO count summed over the drives (the bins are the
engine's own, identical for every drive of one engine; `Histogram.merge`), so the pool's 99 % latency is that of
all the pool's IOs together, never an average of the drives' percentiles. A ramp step counts
only when every drive ran it (a drive's ramp stops at its own first broken step); the pool
meets the bound up to its first step whose merged percentile is above it.

Reads the stored runs (store), nothing else."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from iolab.core.results import Histogram
from iolab.store.bulk import histograms
from iolab.store.manifest import manifest_of
from iolab.store.runstore import RunStore

RAMP = "demand ramp"  # the latency-bound test's phases (suites/scale_latbound.py, pages/report/latbound.py)
SUSTAIN = "sustain"
LATBOUND_TEST = "latency-bound"


@dataclass(frozen=True)
class PoolStep:
    demand_per_drive: int
    drives: int
    iops: float  # delivered, summed over the drives
    percentile_us: float | None  # of the merged histogram (None: too few IOs to measure it)
    ios: int
    meets: bool


@dataclass(frozen=True)
class Pool:
    percentile: float
    bound_us: float
    drives: tuple[str, ...]
    steps: tuple[PoolStep, ...]
    best: PoolStep | None  # the highest step below the pool's first broken step
    sustain_iops: float | None  # the drives' sustained IOPS summed
    sustain_percentile_us: float | None  # of the sustain phases' merged histogram
    sustain_p99_99_us: float | None
    sustain_ios: int
    sustain_meets: bool | None


def _phase_hists(store: RunStore, phase: str) -> tuple[list, dict[int, Histogram]]:
    cells = store.cells(phase)
    return cells, histograms(store, [c.id for c in cells])


def pool(runs: Sequence[tuple[str, RunStore]]) -> Pool | None:
    """The pool of these drives' latency-bound runs (None: not latency-bound runs, or none)."""
    runs = [(n, s) for n, s in runs if manifest_of(s).test == LATBOUND_TEST]
    if not runs:
        return None
    values = manifest_of(runs[0][1]).plan.get("values", {})
    pct, bound = float(values.get("percentile", 99.0)), float(values.get("bound", 1000.0))
    ramps = []
    sustain_cells, sustain_hists = [], []
    for _, store in runs:
        cells, hists = _phase_hists(store, RAMP)
        ramps.append({int(c.workload["rate_iops"]): (c, hists.get(c.id)) for c in cells})
        cells, hists = _phase_hists(store, SUSTAIN)
        sustain_cells += cells
        sustain_hists += [hists[c.id] for c in cells if c.id in hists]
    common = sorted(set.intersection(*(set(r) for r in ramps)))
    steps: list[PoolStep] = []
    for demand in common:
        cells = [r[demand] for r in ramps]
        hs = [h for _, h in cells if h is not None]
        merged = Histogram.merge(hs) if len(hs) == len(cells) else None
        p = merged.measured(pct) if merged else None
        steps.append(
            PoolStep(
                demand,
                len(cells),
                sum(c.iops for c, _ in cells),
                p,
                merged.total if merged else 0,
                p is not None and p <= bound,
            )
        )
    best = None
    for s in steps:
        if not s.meets:
            break
        best = s
    sus = Histogram.merge(sustain_hists) if sustain_hists else None
    sp = sus.measured(pct) if sus else None
    every = len(sustain_cells) == len(runs) and len(sustain_hists) == len(runs)  # one sustain cell a drive
    return Pool(
        pct,
        bound,
        tuple(n for n, _ in runs),
        tuple(steps),
        best,
        sum(c.iops for c in sustain_cells) if every else None,
        sp if every else None,
        sus.measured(99.99) if sus and every else None,
        sus.total if sus and every else 0,
        None if sp is None or not every else sp <= bound,
    )
